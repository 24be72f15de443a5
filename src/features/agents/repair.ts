import type { Logger } from 'pino';
import { type Address, getAbiItem, getAddress, type Hash, type Hex } from 'viem';
import { defined } from '../../core/assert.ts';
import type { Clock } from '../../core/clock.ts';
import { formatAmount } from '../../core/money.ts';
import type { Chain } from '../../platform/chain/chain.ts';
import type { ConfiguredNetwork } from '../../platform/chain/networks.ts';
import { ChainRound, readAtHead, viewNetwork } from '../../platform/chain/outcome.ts';
import { EIP3009_TOKEN_ABI } from '../../platform/chain/token.ts';
import { fromBaseUnits } from '../../platform/chain/units.ts';
import type { Db, Queryable } from '../../platform/db/database.ts';
import * as store from './store.ts';
import { bookTransfer, type WalletTransferInput } from './wallet.ts';
import { releaseSpend } from './writes.ts';

// The repair of agent writes a process left on their way: a wallet transfer or an x402 payment
// in `sending` (the agent's own write) or `approving` (a person's approval of its proposal),
// whose process died between claiming the write and recording its outcome. Each signed an
// EIP-3009 authorization with the agent's key and recorded its nonce and validBefore before it
// left the process (0130). Past a grace period, the chain is asked at one block:
// - the nonce is used: the money moved; the write is booked once and applied (or approved);
// - unused, and that block is at or past validBefore: it can never be used; the write is
//   released (failed with its reservation given back, or the proposal back to pending);
// - unused and still valid: asked again on the next round;
// - never signed: nothing left the process; released at once.
// - a read that ends unknown (a node that does not answer, or one lagging the best head by more
//   than the network's confirmations): asked again on the next round; nothing changes.
// The chain is read before the write's row lock is taken. Each write is then locked with FOR
// UPDATE SKIP LOCKED and its status checked under that lock, so workers in several processes end
// it once; the live path checks the same lock before it records, so a slow process that comes
// back after the repair changes nothing.

export type RepairDeps = {
  db: Db;
  clock: Clock;
  chain: Chain | undefined;
  logger?: Logger | undefined;
  /** Blocks a node may lag the best head and still be believed (the network's confirmations). */
  confirmations?: Partial<Record<string, number>> | undefined;
};

/** How long a write may stay on its way before the repair looks at it. */
export const REPAIR_GRACE_MS = 10 * 60_000;
const REPAIR_BATCH = 50;
/** How far back the transaction that used a nonce is looked for (its hash goes in the books). */
const USED_LOG_LOOKBACK_BLOCKS = 50_000n;

export type RepairReport = { booked: number; released: number; waiting: number };

type Verdict =
  | { kind: 'used'; network: ConfiguredNetwork; txHash: string | null }
  | { kind: 'release'; reason: string }
  | { kind: 'wait' };

/** One round over the writes on their way past the grace period. Safe in many processes at once. */
export async function repairAgentWrites(deps: RepairDeps): Promise<RepairReport> {
  const report: RepairReport = { booked: 0, released: 0, waiting: 0 };
  const before = new Date(deps.clock.now().getTime() - REPAIR_GRACE_MS);
  const round = new ChainRound('repair-agent-writes', deps.logger);
  try {
    for (const found of await store.writesInFlight(deps.db, before, REPAIR_BATCH)) {
      const outcome = await repairOne(deps, round, found).catch((error: unknown) => {
        deps.logger?.error({ err: error, write: found.id }, 'repairing an agent write failed');
        return undefined;
      });
      if (outcome) report[outcome] += 1;
    }
  } finally {
    round.end();
  }
  return report;
}

/**
 * Asks the chain about one write, then ends it under its row lock; undefined when another worker
 * holds it or it changed since it was read.
 */
async function repairOne(deps: RepairDeps, round: ChainRound, seen: store.WriteRow) {
  const verdict = await askChain(deps, round, seen);
  if (verdict.kind === 'wait') return 'waiting' as const;
  return deps.db.transaction().execute(async (tx) => {
    const write = await store.lockInFlight(tx, seen.id);
    if (!write || write.status !== seen.status || write.signed_nonce !== seen.signed_nonce) return undefined;
    if (verdict.kind === 'release') {
      await release(deps, tx, write, verdict.reason);
      return 'released' as const;
    }
    await book(deps, tx, write, verdict);
    deps.logger?.warn({ write: write.id, tx: verdict.txHash }, 'an agent write left on its way was booked');
    return 'booked' as const;
  });
}

/**
 * What the chain says about the write's authorization, read at one block of one node within the
 * network's confirmations of the best head. Any read that ends unknown is a wait.
 */
async function askChain(deps: RepairDeps, round: ChainRound, write: store.WriteRow): Promise<Verdict> {
  if (write.signed_nonce === null || write.signed_valid_before === null) {
    return {
      kind: 'release',
      reason: 'The process stopped before the payment was signed; nothing was sent.',
    };
  }
  const network = deps.chain?.networks.list().find((candidate) => candidate.name === write.signed_network);
  const clients = network && deps.chain?.clients(network.name);
  if (!network || !clients) return { kind: 'wait' };
  const agent = await store.findAgent(deps.db, write.space_id, write.agent_id);
  if (!agent) return { kind: 'wait' };
  const wallet = getAddress(agent.wallet_address) as Address;
  const nonce = write.signed_nonce as Hex;
  const lagMax = BigInt(deps.confirmations?.[network.name] ?? 0);
  const view = await viewNetwork(round, network.name, clients.nodes, lagMax);
  if (view.kind !== 'found') return { kind: 'wait' };
  // The block and the nonce's state are read from one node, at that block.
  const state = await readAtHead(round, view.value, 'eth_call', 0n, async (client) => {
    const block = await client.getBlock({ blockTag: 'latest' });
    const used = await client.readContract({
      address: network.token.address,
      abi: EIP3009_TOKEN_ABI,
      functionName: 'authorizationState',
      args: [wallet, nonce],
      blockNumber: block.number,
    });
    return { block, used, client };
  });
  if (state.outcome.kind !== 'found') return { kind: 'wait' };
  const { block, used, client } = state.outcome.value;
  if (used) {
    const from = block.number > USED_LOG_LOOKBACK_BLOCKS ? block.number - USED_LOG_LOOKBACK_BLOCKS : 0n;
    const logs = await round.read(network.name, 'eth_getLogs', () =>
      client.getLogs({
        address: network.token.address,
        event: getAbiItem({ abi: EIP3009_TOKEN_ABI, name: 'AuthorizationUsed' }),
        args: { authorizer: wallet, nonce },
        fromBlock: from,
        toBlock: block.number,
      }),
    );
    if (logs.kind !== 'found') return { kind: 'wait' };
    const first = (logs.value as { transactionHash: Hash | null }[])[0];
    return { kind: 'used', network, txHash: first?.transactionHash ?? null };
  }
  // No block at or after validBefore can include it: the token refuses it there.
  if (block.timestamp * 1000n >= BigInt(write.signed_valid_before.getTime())) {
    return {
      kind: 'release',
      reason: 'The signed payment expired unused on chain (its nonce was never used); nothing was spent.',
    };
  }
  return { kind: 'wait' };
}

/** The authorization was used: the write is booked and applied (or its proposal approved). */
async function book(
  deps: RepairDeps,
  tx: Queryable,
  write: store.WriteRow,
  verdict: Extract<Verdict, { kind: 'used' }>,
) {
  const { network, txHash } = verdict;
  // A write the chain says was used was signed, so it has its signed value.
  const signedValue = BigInt(defined(write.signed_value, "a used write's signed value"));
  const converted = fromBaseUnits(signedValue, network.token.decimals);
  if (!converted.ok) throw new Error(`The signed amount ${write.signed_value} cannot be booked exactly.`);
  const paid = {
    amount: formatAmount(converted.value),
    asset: network.token.symbol,
    network: network.name,
    tx_hash: txHash,
  };
  let result: Record<string, unknown>;
  if (write.kind === 'wallet_transfer') {
    const input = write.input as WalletTransferInput;
    const agent = defined(await store.findAgent(tx, write.space_id, write.agent_id), "a write's agent");
    const to = getAddress(input.destination);
    const resolved = { network, caip2: network.caip2, baseUnits: signedValue, amount: converted.value, to };
    const proof = {
      writeId: write.id,
      txHash: txHash ?? `nonce ${write.signed_nonce}`,
      payee: input.payee ?? '',
    };
    const booked = await bookTransfer(tx, deps, agent, resolved, proof);
    const { tx_hash: _hash, ...transfer } = paid;
    result = {
      ...transfer,
      destination: to,
      tx_hash: txHash,
      transaction_id: booked.transactionId,
      account_id: booked.accountId,
      repaired: true,
    };
  } else {
    // The x402 payment is booked as a transfer is (money.out on the wallet's account), under
    // the write's lock and in the transaction that applies it.
    const agent = defined(await store.findAgent(tx, write.space_id, write.agent_id), "a write's agent");
    const proof = {
      writeId: write.id,
      txHash: txHash ?? `nonce ${write.signed_nonce}`,
      payee: hostOf((write.input as { url?: string }).url),
    };
    const booked = await bookTransfer(tx, deps, agent, { network, amount: converted.value }, proof);
    result = {
      ...(write.result ?? {}),
      paid,
      transaction_id: booked.transactionId,
      account_id: booked.accountId,
      repaired: true,
    };
  }
  if (write.status === 'sending') await store.finishSending(tx, write.id, { status: 'applied', result });
  else await store.endApproval(tx, write.id, { status: 'approved', result });
}

function hostOf(url: string | undefined) {
  try {
    return url ? new URL(url).host : '';
  } catch {
    return '';
  }
}

/** Nothing moved: failed with the reservation given back, or the proposal back to pending. */
async function release(deps: RepairDeps, tx: Queryable, write: store.WriteRow, reason: string) {
  const result = {
    ...(write.result ?? {}),
    error: 'transfer_failed',
    detail: reason,
    repaired: true,
    failed_at: deps.clock.now().toISOString(),
  };
  if (write.status === 'sending') {
    await store.finishSending(tx, write.id, { status: 'failed', result });
    await releaseSpend(tx, write.id);
    return;
  }
  await store.endApproval(tx, write.id, { status: 'pending', result });
}
