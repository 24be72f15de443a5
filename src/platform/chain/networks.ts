import { type Address, getAddress } from 'viem';

// The networks Tollbook can quote and settle on. A public network is configured only when its
// RPC URL is set; the local development chain is configured when the server started (or was
// pointed at) an anvil node. When a network is configured the token's EIP-712 name, version and
// decimals are read from the contract; PUBLIC_NETWORK_FACTS below says what they are, with the
// public source of each fact, so an operator can check them and the reads can be compared.

const CIRCLE_USDC_ADDRESSES = 'https://developers.circle.com/stablecoins/usdc-contract-addresses';
const X402_EVM_DEFAULT_ASSETS = '@x402/evm 2.27.0 DEFAULT_ASSETS (the x402 reference network table)';
const CONFIRMATIONS_RULE =
  "Tollbook's default (<NAME>_CONFIRMATIONS overrides it): a reorg margin, well short of L1 finality; Circle's own thresholds are at https://developers.circle.com/wallets/blockchain-confirmations";

/** The public facts of one network and its USDC, each with where it is published. */
export type NetworkFacts = {
  label: string;
  chainId: number;
  usdc: Address;
  /** The EIP-712 domain USDC's EIP-3009 transferWithAuthorization is signed under. */
  eip712: { name: string; version: string };
  decimals: number;
  defaultConfirmations: number;
  sources: { chainId: string; usdc: string; eip712: string; confirmations: string };
};

function facts(input: Omit<NetworkFacts, 'usdc' | 'decimals'> & { usdc: string }): NetworkFacts {
  // getAddress throws on a mistyped checksum, so a wrong letter fails at start-up and in tests.
  return { ...input, usdc: getAddress(input.usdc), decimals: 6 };
}

/** Base, Base Sepolia, Ethereum, Arbitrum One, Optimism and Polygon PoS, with their sources. */
export const PUBLIC_NETWORK_FACTS = {
  base: facts({
    label: 'Base',
    chainId: 8453,
    usdc: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    eip712: { name: 'USD Coin', version: '2' },
    defaultConfirmations: 10,
    sources: {
      chainId: 'https://docs.base.org/docs/network-information/',
      usdc: CIRCLE_USDC_ADDRESSES,
      eip712: X402_EVM_DEFAULT_ASSETS,
      confirmations: CONFIRMATIONS_RULE,
    },
  }),
  'base-sepolia': facts({
    label: 'Base Sepolia',
    chainId: 84532,
    usdc: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
    eip712: { name: 'USDC', version: '2' },
    defaultConfirmations: 5,
    sources: {
      chainId: 'https://docs.base.org/docs/network-information/',
      usdc: CIRCLE_USDC_ADDRESSES,
      eip712: X402_EVM_DEFAULT_ASSETS,
      confirmations: CONFIRMATIONS_RULE,
    },
  }),
  ethereum: facts({
    label: 'Ethereum',
    chainId: 1,
    usdc: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
    eip712: { name: 'USD Coin', version: '2' },
    defaultConfirmations: 12,
    sources: {
      chainId: 'https://eips.ethereum.org/EIPS/eip-155',
      usdc: CIRCLE_USDC_ADDRESSES,
      eip712: X402_EVM_DEFAULT_ASSETS,
      confirmations: CONFIRMATIONS_RULE,
    },
  }),
  'arbitrum-one': facts({
    label: 'Arbitrum One',
    chainId: 42161,
    usdc: '0xaf88d065e77c8cC2239327C5EDb3A432268e5831',
    eip712: { name: 'USD Coin', version: '2' },
    defaultConfirmations: 10,
    sources: {
      chainId: 'https://docs.arbitrum.io/arbitrum-essentials/reference',
      usdc: CIRCLE_USDC_ADDRESSES,
      eip712: X402_EVM_DEFAULT_ASSETS,
      confirmations: CONFIRMATIONS_RULE,
    },
  }),
  optimism: facts({
    label: 'Optimism (OP Mainnet)',
    chainId: 10,
    usdc: '0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85',
    eip712: { name: 'USD Coin', version: '2' },
    defaultConfirmations: 10,
    sources: {
      chainId: 'https://docs.optimism.io (OP Mainnet, chain id 10; viem/chains optimism.id)',
      usdc: CIRCLE_USDC_ADDRESSES,
      // x402's table has no OP Mainnet entry; the contract's name() and version() answer these.
      eip712:
        'name() and version() of the contract, https://optimistic.etherscan.io/token/0x0b2c639c533813f4aa9d7837caf62653d097ff85#readProxyContract',
      confirmations: CONFIRMATIONS_RULE,
    },
  }),
  polygon: facts({
    label: 'Polygon PoS',
    chainId: 137,
    usdc: '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359',
    eip712: { name: 'USD Coin', version: '2' },
    defaultConfirmations: 64,
    sources: {
      chainId: 'https://docs.polygon.technology/pos/ (Polygon PoS mainnet, chain id 137)',
      usdc: CIRCLE_USDC_ADDRESSES,
      eip712: X402_EVM_DEFAULT_ASSETS,
      confirmations: CONFIRMATIONS_RULE,
    },
  }),
} as const satisfies Record<string, NetworkFacts>;

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
  /** The network's name for people ("Base Sepolia"): what every page and message calls it. */
  label: string;
  /** The native coin gas is paid in ("ETH", "POL"), as wallets and explorers write it. */
  nativeUnit: string;
  caip2: Caip2;
  chainId: number;
  /** Circle's USDC on that chain; undefined for the local chain, where we deploy our own. */
  usdc: Address | undefined;
  /** The environment variable that configures the network's RPC URL. */
  rpcUrlVariable: string | undefined;
  testnet: boolean;
  /** Blocks a transfer must be under before the account watch books it, unless configured. */
  defaultConfirmations: number;
};

function network(
  name: NetworkName,
  chain: { label: string; chainId: number; usdc: string | undefined; defaultConfirmations: number },
  nativeUnit: string,
  rpcUrlVariable: string | undefined,
  testnet: boolean,
): NetworkDefinition {
  return {
    name,
    label: chain.label,
    nativeUnit,
    caip2: `eip155:${chain.chainId}`,
    chainId: chain.chainId,
    usdc: chain.usdc === undefined ? undefined : getAddress(chain.usdc),
    rpcUrlVariable,
    testnet,
    defaultConfirmations: chain.defaultConfirmations,
  };
}

export const LOCAL_CHAIN_ID = 31337;
export const LOCAL_CHAIN_LABEL = 'Tollbook development chain';

/**
 * The account networks. Arbitrum One and Optimism are in the facts table but not (yet) here: the
 * spec's account network names do not include them. The two testnets outside the table take
 * their USDC from the same Circle page.
 */
export const NETWORKS: readonly NetworkDefinition[] = [
  network('base', PUBLIC_NETWORK_FACTS.base, 'ETH', 'BASE_RPC_URL', false),
  network('ethereum', PUBLIC_NETWORK_FACTS.ethereum, 'ETH', 'ETHEREUM_RPC_URL', false),
  // Polygon's native coin is POL since September 2024 (it was MATIC).
  network('polygon', PUBLIC_NETWORK_FACTS.polygon, 'POL', 'POLYGON_RPC_URL', false),
  network('base-sepolia', PUBLIC_NETWORK_FACTS['base-sepolia'], 'ETH', 'BASE_SEPOLIA_RPC_URL', true),
  network(
    'ethereum-sepolia',
    {
      label: 'Ethereum Sepolia',
      chainId: 11155111,
      usdc: '0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238',
      defaultConfirmations: 5,
    },
    'ETH',
    'ETHEREUM_SEPOLIA_RPC_URL',
    true,
  ),
  network(
    'polygon-amoy',
    {
      label: 'Polygon Amoy',
      chainId: 80002,
      usdc: '0x41E94Eb019C0762f9Bfcf9Fb1E58725BfB0e7582',
      defaultConfirmations: 10,
    },
    'POL',
    'POLYGON_AMOY_RPC_URL',
    true,
  ),
  // The local chain mines on demand, so nothing waits for depth there. Its name is the one the
  // pay page's wallet button adds it under.
  network(
    'local',
    { label: LOCAL_CHAIN_LABEL, chainId: LOCAL_CHAIN_ID, usdc: undefined, defaultConfirmations: 0 },
    'ETH',
    undefined,
    true,
  ),
];

/**
 * A network as people read it, from its account name ("base-sepolia") or its CAIP-2 id
 * ("eip155:84532"): its label and native coin. A network not in the table keeps the text it
 * came as, and no unit is claimed for it.
 */
export function networkForPeople(nameOrCaip2: string): { label: string; nativeUnit: string | null } {
  const found = NETWORKS.find(
    (candidate) => candidate.name === nameOrCaip2 || candidate.caip2 === nameOrCaip2,
  );
  return found
    ? { label: found.label, nativeUnit: found.nativeUnit }
    : { label: nameOrCaip2, nativeUnit: null };
}

/** The network's name for people (`networkForPeople`), as pages, mails and notifications write it. */
export function networkLabel(nameOrCaip2: string): string {
  return networkForPeople(nameOrCaip2).label;
}

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

/** Below this a gas wallet lane is reported as low unless GAS_LOW_WEI says otherwise (0.01 of the native coin). */
export const GAS_LOW_WEI = 10n ** 16n;
