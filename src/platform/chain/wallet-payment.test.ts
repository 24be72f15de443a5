import { decodeFunctionData, parseAbi } from 'viem';
import { describe, expect, it } from 'vitest';
import { asAmount } from '../../core/money.ts';
import { type ConfiguredNetwork, networkDefinition } from './networks.ts';
import { walletPayment } from './wallet-payment.ts';

const TOKEN = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
const RECIPIENT = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';

function configured(name: 'local' | 'base', decimals = 6): ConfiguredNetwork {
  return {
    ...networkDefinition(name),
    rpcUrl: 'http://127.0.0.1:8545/secret-key',
    token: { address: TOKEN, name: 'USDC', version: '2', decimals, symbol: 'USDC' },
  };
}

describe('walletPayment', () => {
  it('builds the EIP-681 transfer URI and the transfer call for the exact amount in base units', () => {
    const payment = walletPayment(configured('local'), RECIPIENT, asAmount(250_000_000n))!;
    expect(payment.uri).toBe(
      `ethereum:${TOKEN}@31337/transfer?address=0x70997970C51812dc3A010C7d01b50e0d17dc79C8&uint256=2500000`,
    );
    expect(payment.chainIdHex).toBe('0x7a69');
    expect(payment.localRpcUrl).toBe('http://127.0.0.1:8545/secret-key');
    const call = decodeFunctionData({
      abi: parseAbi(['function transfer(address to, uint256 value) returns (bool)']),
      data: payment.data,
    });
    expect(call.args).toEqual(['0x70997970C51812dc3A010C7d01b50e0d17dc79C8', 2_500_000n]);
  });

  it('never shows a public network’s RPC URL, which may carry a provider key', () => {
    const payment = walletPayment(configured('base'), RECIPIENT, asAmount(100_000_000n))!;
    expect(payment.uri).toContain('@8453/transfer?');
    expect(payment.localRpcUrl).toBeUndefined();
  });

  it('offers nothing for an amount the token cannot carry exactly, or for nothing at all', () => {
    expect(walletPayment(configured('local'), RECIPIENT, asAmount(1n))).toBeUndefined();
    expect(walletPayment(configured('local'), RECIPIENT, asAmount(0n))).toBeUndefined();
    expect(walletPayment(configured('local', 18), RECIPIENT, asAmount(1n))?.baseUnits).toBe(10n ** 10n);
  });
});
