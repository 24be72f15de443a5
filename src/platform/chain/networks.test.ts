import { readFileSync } from 'node:fs';
import { DEFAULT_ASSETS } from '@x402/evm';
import { getAddress } from 'viem';
import { arbitrum, base, baseSepolia, mainnet, optimism, polygon } from 'viem/chains';
import { describe, expect, it } from 'vitest';
import { NETWORKS, PUBLIC_NETWORK_FACTS } from './networks.ts';

// The network table checked against itself, against viem's chain list and x402's asset table,
// and the local test token against the same EIP-712 domain shape.

const FACTS = Object.entries(PUBLIC_NETWORK_FACTS);

describe('the public network table', () => {
  it('holds the six networks, each address in its EIP-55 checksummed form', () => {
    expect(FACTS.map(([, facts]) => facts.label)).toEqual([
      'Base',
      'Base Sepolia',
      'Ethereum',
      'Arbitrum One',
      'Optimism (OP Mainnet)',
      'Polygon PoS',
    ]);
    for (const [, facts] of FACTS) expect(getAddress(facts.usdc)).toBe(facts.usdc);
    for (const network of NETWORKS) {
      if (network.usdc !== undefined) expect(getAddress(network.usdc)).toBe(network.usdc);
    }
  });

  it('has unique chain ids and unique USDC contracts, in the table and among account networks', () => {
    const ids = FACTS.map(([, facts]) => facts.chainId);
    expect(new Set(ids).size).toBe(ids.length);
    const contracts = FACTS.map(([, facts]) => facts.usdc.toLowerCase());
    expect(new Set(contracts).size).toBe(contracts.length);
    const networkIds = NETWORKS.map((network) => network.chainId);
    expect(new Set(networkIds).size).toBe(networkIds.length);
  });

  it('agrees with viem’s chain definitions on every chain id', () => {
    expect(PUBLIC_NETWORK_FACTS.base.chainId).toBe(base.id);
    expect(PUBLIC_NETWORK_FACTS['base-sepolia'].chainId).toBe(baseSepolia.id);
    expect(PUBLIC_NETWORK_FACTS.ethereum.chainId).toBe(mainnet.id);
    expect(PUBLIC_NETWORK_FACTS['arbitrum-one'].chainId).toBe(arbitrum.id);
    expect(PUBLIC_NETWORK_FACTS.optimism.chainId).toBe(optimism.id);
    expect(PUBLIC_NETWORK_FACTS.polygon.chainId).toBe(polygon.id);
  });

  it('agrees with x402’s asset table on USDC, its EIP-712 name and version and decimals', () => {
    const assets = DEFAULT_ASSETS as Record<
      string,
      { asset: string; name: string; version: string; decimals: number; symbol: string }[]
    >;
    let compared = 0;
    for (const [, facts] of FACTS) {
      const usdc = assets[`eip155:${facts.chainId}`]?.find((asset) => asset.symbol === 'USDC');
      if (usdc === undefined) continue;
      compared += 1;
      expect(getAddress(usdc.asset)).toBe(facts.usdc);
      expect({ name: usdc.name, version: usdc.version }).toEqual(facts.eip712);
      expect(usdc.decimals).toBe(facts.decimals);
    }
    // Optimism is the one network x402 does not list; its source is the contract itself.
    expect(compared).toBe(FACTS.length - 1);
    expect(PUBLIC_NETWORK_FACTS.optimism.sources.eip712).toContain('optimistic.etherscan.io');
  });

  it('gives every fact a source, and 6 decimals and a confirmation depth to every network', () => {
    for (const [, facts] of FACTS) {
      for (const source of Object.values(facts.sources)) expect(source.length).toBeGreaterThan(10);
      expect(facts.sources.usdc).toBe('https://developers.circle.com/stablecoins/usdc-contract-addresses');
      expect(facts.decimals).toBe(6);
      expect(facts.defaultConfirmations).toBeGreaterThan(0);
    }
  });

  it('is where the account networks take their contract, chain id and confirmations from', () => {
    for (const network of NETWORKS) {
      const facts = Object.values(PUBLIC_NETWORK_FACTS).find((each) => each.chainId === network.chainId);
      if (facts === undefined) continue;
      expect(network.usdc).toBe(facts.usdc);
      expect(network.defaultConfirmations).toBe(facts.defaultConfirmations);
    }
    expect(NETWORKS.find((network) => network.name === 'local')?.defaultConfirmations).toBe(0);
  });
});

describe('the local chain’s test token', () => {
  const source = readFileSync(new URL('../../../contracts/TestUSDC.sol', import.meta.url), 'utf8');
  const built = JSON.parse(
    readFileSync(new URL('../../../contracts/build/TestUSDC.json', import.meta.url), 'utf8'),
  ) as { abi: { type: string; name?: string }[] };

  it('signs EIP-3009 under the same domain shape as Circle’s USDC: name, version "2", chain id, contract', () => {
    expect(source).toContain(
      'keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)")',
    );
    expect(source).toMatch(/string public constant version = "2";/);
    expect(source).toMatch(/uint8 public constant decimals = 6;/);
    const functions = new Set(built.abi.filter((item) => item.type === 'function').map((item) => item.name));
    for (const name of [
      'name',
      'version',
      'decimals',
      'DOMAIN_SEPARATOR',
      'eip712Domain',
      'transferWithAuthorization',
    ]) {
      expect(functions.has(name), name).toBe(true);
    }
  });
});
