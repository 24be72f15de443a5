import type { Logger } from 'pino';
import {
  type Account,
  type Address,
  createPublicClient,
  createWalletClient,
  defineChain,
  fallback,
  formatEther,
  type Hash,
  type Hex,
  http,
  type PublicClient,
  parseEther,
  type Transport,
  type Chain as ViemChain,
  type WalletClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createNonceManager, jsonRpc } from 'viem/nonce';
import { assert, defined } from '../../core/assert.ts';
import { refuseInsideTransaction } from '../db/transaction-guard.ts';
import { type AnvilNode, startAnvil, waitForRpc } from './anvil.ts';
import {
  type ConfiguredNetwork,
  GAS_LOW_WEI,
  LOCAL_CHAIN_ID,
  NETWORKS,
  type NetworkDefinition,
  type NetworkName,
  NetworkRegistry,
} from './networks.ts';

export { GAS_LOW_WEI } from './networks.ts';

import type { ChainNode } from './outcome.ts';
import { deployTestUsdc, installLocalMulticall, readTokenInfo, TEST_USDC_ABI } from './token.ts';

// Chain I/O for the server: one viem public client per configured network, the gas wallet that
// pays for settlement transactions, and the development chain with its token and faucet.

/**
 * Anvil's first development account (from its well-known test mnemonic). Everybody knows this
 * key: it is used only on the local chain, and only when GAS_WALLET_KEY is not set.
 */
export const ANVIL_DEV_KEY: Hex = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';

/**
 * The local chain's four gas wallet lanes when no key is given: anvil's development accounts 0,
 * 7, 8 and 9 (its well-known test mnemonic), which every fresh anvil funds. Account 0 comes first:
 * it deploys and mints the test token. Accounts 1–6 are left to demos and tests.
 */
export const LOCAL_LANE_KEYS: readonly Hex[] = [
  ANVIL_DEV_KEY,
  '0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356',
  '0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97',
  '0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6',
];

/** What the faucet sends for gas with each call. */
export const FAUCET_GAS_WEI = parseEther('1');

export type ChainOptions = {
  /** Start (or, with localRpcUrl, connect to) the development chain. */
  local: boolean;
  /** CHAIN_RPC_URL: a running development node to reuse instead of starting anvil. */
  localRpcUrl?: string | undefined;
  /** GAS_WALLET_KEYS (one lane each); the local chain falls back to LOCAL_LANE_KEYS. */
  gasWalletKeys?: readonly Hex[] | undefined;
  /** RPC URLs per public network (one or more nodes); a network without any is not configured. */
  rpcUrls?: Partial<Record<NetworkName, readonly string[]>>;
  logger: Logger;
  startTimeoutMs?: number;
  /** How long one request to a node may take before it ends unknown (15 s unless set). */
  requestTimeoutMs?: number;
};

export type GasWallet = WalletClient<Transport, ViemChain, Account>;

export type Clients = {
  /** Every node of the network behind viem's fallback transport, ranked when there are several. */
  publicClient: PublicClient<Transport, ViemChain>;
  /** The first lane's wallet (the local chain's minter), when the network has a gas wallet. */
  walletClient: GasWallet | undefined;
  /** One wallet per gas wallet lane, in configured order (empty without a gas wallet). */
  lanes: GasWallet[];
  /** Each node on its own, in configured order: for reads whose absence is believed. */
  nodes: ChainNode[];
};

export type FaucetResult = { mintTxHash: Hash; gasTxHash: Hash };

export type LocalChain = {
  network: ConfiguredNetwork;
  rpcUrl: string;
  /** The anvil process we started; undefined when CHAIN_RPC_URL pointed at a running node. */
  anvil: AnvilNode | undefined;
  publicClient: PublicClient<Transport, ViemChain>;
  walletClient: WalletClient<Transport, ViemChain, Account>;
  /** Mints `usdcBaseUnits` of the test token to `to` and sends it `gasWei` for gas. */
  fund(to: Address, usdcBaseUnits: bigint, gasWei?: bigint): Promise<FaucetResult>;
};

export type GasBalance = { network: NetworkName; caip2: string; address: Address; wei: bigint };

/** A gas wallet lane is low below GAS_LOW_WEI: the metric, the owners' alarm, Home and doctor say so. */
export function isGasLow(wei: bigint, lowWei: bigint): boolean {
  return wei < lowWei;
}

export type Chain = {
  networks: NetworkRegistry;
  local: LocalChain | undefined;
  /** The first lane's address on every network it serves (the same keys serve all of them). */
  gasWallet: Address | undefined;
  /** Every lane's address, in configured order. */
  gasWallets: Address[];
  clients(name: NetworkName): Clients | undefined;
  /** Each lane's native balance per configured network, for metrics and warnings. */
  gasBalances(): Promise<GasBalance[]>;
  close(): Promise<void>;
};

function viemChain(definition: NetworkDefinition, rpcUrl: string): ViemChain {
  const coin = definition.name.startsWith('polygon') ? 'POL' : 'ETH';
  return defineChain({
    id: definition.chainId,
    name: definition.name,
    nativeCurrency: { name: coin, symbol: coin, decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
}

const REQUEST_TIMEOUT_MS = 15_000;
/** How often the fallback transport re-ranks several nodes (latency and stability). */
const RANK_INTERVAL_MS = 10_000;

/**
 * A transport that refuses to reach a node from a database transaction's work: a node that takes
 * its time would hold the transaction's locks, and what it answered would be acted on in a
 * transaction that may still fail. Every client of every network is made over such a transport,
 * so a read or write made while a transaction is open fails the first test that takes the path.
 */
function outsideTransactions<T extends Transport>(transport: T): T {
  const guarded = ((options: Parameters<T>[0]) => {
    const made = transport(options);
    const request: typeof made.request = (args, requestOptions) => {
      refuseInsideTransaction('a chain node');
      return made.request(args, requestOptions);
    };
    return { ...made, request };
  }) as T;
  return guarded;
}

/**
 * The clients of one network over one or more nodes. Several nodes sit behind viem's fallback
 * transport, ranked by an eth_blockNumber ping (any node answers it, unlike net_listening); each
 * node also gets a client of its own, so a read that may end `absent` is asked of a node whose
 * head is known (outcome.ts readAtHead).
 */
export function connectClients(
  definition: NetworkDefinition,
  rpcUrls: readonly string[],
  keys: readonly Hex[],
  requestTimeoutMs = REQUEST_TIMEOUT_MS,
): Clients {
  const [first] = rpcUrls;
  if (first === undefined) throw new RangeError(`No RPC URL for ${definition.name}.`);
  const chain = viemChain(definition, first);
  const transportTo = (url: string) => http(url, { timeout: requestTimeoutMs, retryCount: 1 });
  const transport = outsideTransactions(
    rpcUrls.length === 1
      ? transportTo(first)
      : fallback(rpcUrls.map(transportTo), {
          rank: {
            interval: RANK_INTERVAL_MS,
            ping: ({ transport: node }) => node.request({ method: 'eth_blockNumber' }),
          },
        }),
  );
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 100 });
  const nodes = rpcUrls.map((url, index) => ({
    label: `${definition.name} node ${index + 1}`,
    client: createPublicClient({
      chain,
      transport: outsideTransactions(http(url, { timeout: requestTimeoutMs, retryCount: 0 })),
      pollingInterval: 100,
    }),
  }));
  // Settlements send through each lane's planned sender, which asks the node for the nonce under
  // the lane's lock. The nonce manager here serves the wallet's own direct sends (the local
  // chain's faucet and deployment), one per client: viem's shared one is keyed by address and
  // chain id, which every local anvil shares.
  const lanes = keys.map((key) =>
    createWalletClient({
      chain,
      transport,
      account: privateKeyToAccount(key, { nonceManager: createNonceManager({ source: jsonRpc() }) }),
    }),
  );
  return { publicClient, walletClient: lanes[0], lanes, nodes };
}

async function checkChainId(definition: NetworkDefinition, rpcUrl: string, timeoutMs: number): Promise<void> {
  const reported = await waitForRpc(rpcUrl, timeoutMs);
  if (reported !== definition.chainId) {
    throw new Error(
      `The RPC URL for ${definition.name} answers chain id ${reported}, not ${definition.chainId}.`,
    );
  }
}

async function startLocal(options: ChainOptions, timeoutMs: number) {
  const definition = defined(
    NETWORKS.find((candidate) => candidate.chainId === LOCAL_CHAIN_ID),
    'the local network',
  );
  const anvil = options.localRpcUrl
    ? undefined
    : await startAnvil({ chainId: LOCAL_CHAIN_ID, startTimeoutMs: timeoutMs });
  try {
    const rpcUrl = options.localRpcUrl ?? defined(anvil, 'the started anvil').rpcUrl;
    if (options.localRpcUrl) await checkChainId(definition, rpcUrl, timeoutMs);
    const keys = options.gasWalletKeys?.length ? options.gasWalletKeys : LOCAL_LANE_KEYS;
    const { publicClient, walletClient, lanes, nodes } = connectClients(
      definition,
      [rpcUrl],
      keys,
      options.requestTimeoutMs,
    );
    // The local chain always has a gas wallet key (the development key when none is given).
    const wallet = defined(walletClient, 'the local gas wallet');
    const address = await deployTestUsdc({ publicClient, walletClient: wallet });
    if (!(await installLocalMulticall(publicClient))) {
      options.logger.warn(
        { rpcUrl },
        'No multicall contract on the development node: x402 refusals will be less precise',
      );
    }
    const token = await readTokenInfo(publicClient, address);
    const network: ConfiguredNetwork = { ...definition, rpcUrl, token };
    return { network, rpcUrl, anvil, publicClient, walletClient: wallet, lanes, nodes };
  } catch (error) {
    await anvil?.stop();
    throw error;
  }
}

/**
 * The development faucet. Its sends go out one at a time, in the order asked: each takes the gas
 * wallet's next nonce only once the node has accepted the one before, so concurrent calls never
 * race for a nonce (the wallet's nonce manager counts locally, and a call that starts while
 * another's send is still in flight could otherwise be handed a nonce already taken, leaving a
 * transaction the node never mines). Receipts are awaited outside the queue.
 */
function localFaucet(local: Omit<LocalChain, 'fund'>): LocalChain['fund'] {
  let lastSend: Promise<unknown> = Promise.resolve();
  const inTurn = <T>(send: () => Promise<T>): Promise<T> => {
    const turn = lastSend.then(send, send);
    // The queue waits for this send to end either way; its answer or error goes to its caller.
    lastSend = turn.then(
      () => undefined,
      () => undefined,
    );
    return turn;
  };
  return async (to, usdcBaseUnits, gasWei = FAUCET_GAS_WEI) => {
    const { walletClient, publicClient, network } = local;
    const mintTxHash = await inTurn(() =>
      walletClient.writeContract({
        address: network.token.address,
        abi: TEST_USDC_ABI,
        functionName: 'mint',
        args: [to, usdcBaseUnits],
      }),
    );
    const gasTxHash = await inTurn(() => walletClient.sendTransaction({ to, value: gasWei }));
    const receipts = await Promise.all(
      [mintTxHash, gasTxHash].map((hash) => publicClient.waitForTransactionReceipt({ hash })),
    );
    if (receipts.some((receipt) => receipt.status !== 'success')) {
      throw new Error(`A faucet transaction failed (${mintTxHash}, ${gasTxHash}).`);
    }
    return { mintTxHash, gasTxHash };
  };
}

async function configurePublic(
  definition: NetworkDefinition,
  rpcUrls: readonly string[],
  keys: readonly Hex[],
  options: { startTimeoutMs: number; requestTimeoutMs: number | undefined },
): Promise<{ network: ConfiguredNetwork; clients: Clients }> {
  // Every node must serve this network: a URL pointing at another chain is a configuration error.
  for (const rpcUrl of rpcUrls) await checkChainId(definition, rpcUrl, options.startTimeoutMs);
  const clients = connectClients(definition, rpcUrls, keys, options.requestTimeoutMs);
  const [rpcUrl] = rpcUrls;
  const usdc = definition.usdc;
  assert(usdc !== undefined && rpcUrl !== undefined, 'A public network has a USDC address and an RPC URL.');
  const token = await readTokenInfo(clients.publicClient, usdc);
  return { network: { ...definition, rpcUrl, token }, clients };
}

/** Connects every configured network (and starts the local chain when asked). */
export async function createChain(options: ChainOptions): Promise<Chain> {
  const timeoutMs = options.startTimeoutMs ?? 30_000;
  const networks = new NetworkRegistry();
  const clientsByName = new Map<NetworkName, Clients>();
  let local: LocalChain | undefined;
  try {
    if (options.local) {
      const started = await startLocal(options, timeoutMs);
      local = { ...started, fund: localFaucet(started) };
      networks.add(started.network);
      clientsByName.set('local', started);
    }
    for (const definition of NETWORKS) {
      const rpcUrls = options.rpcUrls?.[definition.name];
      if (definition.name === 'local' || rpcUrls === undefined || rpcUrls.length === 0) continue;
      const configured = await configurePublic(definition, rpcUrls, options.gasWalletKeys ?? [], {
        startTimeoutMs: timeoutMs,
        requestTimeoutMs: options.requestTimeoutMs,
      });
      networks.add(configured.network);
      clientsByName.set(definition.name, configured.clients);
    }
  } catch (error) {
    await local?.anvil?.stop();
    throw error;
  }
  const keys = options.gasWalletKeys?.length ? options.gasWalletKeys : local ? LOCAL_LANE_KEYS : [];
  const gasWallets = keys.map((key) => privateKeyToAccount(key).address);
  const chain: Chain = {
    networks,
    local,
    gasWallet: gasWallets[0],
    gasWallets,
    clients: (name) => clientsByName.get(name),
    gasBalances: () => readGasBalances(networks, clientsByName),
    close: async () => {
      await local?.anvil?.stop();
    },
  };
  await warnOnLowGas(chain, options.logger);
  return chain;
}

async function readGasBalances(networks: NetworkRegistry, clientsByName: Map<NetworkName, Clients>) {
  const balances: GasBalance[] = [];
  for (const configured of networks.list()) {
    const clients = clientsByName.get(configured.name);
    if (!clients) continue;
    for (const lane of clients.lanes) {
      const address = lane.account.address;
      const wei = await clients.publicClient.getBalance({ address });
      balances.push({ network: configured.name, caip2: configured.caip2, address, wei });
    }
  }
  return balances;
}

/** Logs a warning per network whose gas wallet is below GAS_LOW_WEI (or that has no gas wallet). */
export async function warnOnLowGas(chain: Chain, logger: Logger): Promise<void> {
  for (const configured of chain.networks.list()) {
    if (!chain.clients(configured.name)?.walletClient) {
      logger.warn(
        { network: configured.caip2 },
        'No gas wallet (GAS_WALLET_KEYS) for this network: payments on it cannot be settled',
      );
    }
  }
  for (const balance of await chain.gasBalances()) {
    if (balance.wei < GAS_LOW_WEI) {
      logger.warn(
        { network: balance.caip2, gasWallet: balance.address, balance: formatEther(balance.wei) },
        'A gas wallet lane is low: its settlement transactions may fail',
      );
    }
  }
}
