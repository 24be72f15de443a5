import { type Address, getAddress } from 'viem';

// The networks Tollbook can quote and settle on. A public network is configured only when its
// RPC URL is set; the local development chain is configured when the server started (or was
// pointed at) an anvil node. The token's EIP-712 name and version and its decimals are never
// written here: they are read from the contract when the network is configured.

/** The account `network` names of DECISIONS "Chains and addresses". */
export type NetworkName =
  | 'base'
  | 'ethereum'
  | 'polygon'
  | 'base-sepolia'
  | 'ethereum-sepolia'
  | 'polygon-amoy'
  | 'local';

/** CAIP-2 chain id, as x402 spells networks. */
export type Caip2 = `eip155:${number}`;

export type NetworkDefinition = {
  name: NetworkName;
  caip2: Caip2;
  chainId: number;
  /** Circle's USDC on that chain; undefined for the local chain, where we deploy our own. */
  usdc: Address | undefined;
  /** The environment variable that configures the network's RPC URL. */
  rpcUrlVariable: string | undefined;
  testnet: boolean;
};

function network(
  name: NetworkName,
  chainId: number,
  usdc: string | undefined,
  rpcUrlVariable: string | undefined,
  testnet: boolean,
): NetworkDefinition {
  return {
    name,
    caip2: `eip155:${chainId}`,
    chainId,
    usdc: usdc === undefined ? undefined : getAddress(usdc),
    rpcUrlVariable,
    testnet,
  };
}

export const LOCAL_CHAIN_ID = 31337;

export const NETWORKS: readonly NetworkDefinition[] = [
  network('base', 8453, '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', 'BASE_RPC_URL', false),
  network('ethereum', 1, '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', 'ETHEREUM_RPC_URL', false),
  network('polygon', 137, '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359', 'POLYGON_RPC_URL', false),
  network('base-sepolia', 84532, '0x036CbD53842c5426634e7929541eC2318f3dCF7e', 'BASE_SEPOLIA_RPC_URL', true),
  network(
    'ethereum-sepolia',
    11155111,
    '0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238',
    'ETHEREUM_SEPOLIA_RPC_URL',
    true,
  ),
  network('polygon-amoy', 80002, '0x41E94Eb019C0762f9Bfcf9Fb1E58725BfB0e7582', 'POLYGON_AMOY_RPC_URL', true),
  network('local', LOCAL_CHAIN_ID, undefined, undefined, true),
];

export function networkDefinition(name: NetworkName): NetworkDefinition {
  const found = NETWORKS.find((candidate) => candidate.name === name);
  if (!found) throw new RangeError(`Unknown network ${name}.`);
  return found;
}

/** What the token contract itself says about it. */
export type TokenInfo = {
  address: Address;
  /** EIP-712 domain name (e.g. "USD Coin" on mainnet, "USDC" on some testnets). */
  name: string;
  /** EIP-712 domain version. */
  version: string;
  decimals: number;
  symbol: string;
};

export type ConfiguredNetwork = NetworkDefinition & { rpcUrl: string; token: TokenInfo };

/** The networks this server can use, looked up by account name or CAIP-2 id. */
export class NetworkRegistry {
  readonly #byName = new Map<NetworkName, ConfiguredNetwork>();

  add(configured: ConfiguredNetwork): void {
    this.#byName.set(configured.name, configured);
  }

  byName(name: NetworkName): ConfiguredNetwork | undefined {
    return this.#byName.get(name);
  }

  byCaip2(caip2: string): ConfiguredNetwork | undefined {
    return [...this.#byName.values()].find((configured) => configured.caip2 === caip2);
  }

  list(): ConfiguredNetwork[] {
    return [...this.#byName.values()];
  }
}
