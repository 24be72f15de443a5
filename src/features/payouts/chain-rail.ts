import type { Logger } from 'pino';
import { encodeFunctionData, erc20Abi, type Hash, parseEventLogs, type TransactionReceipt } from 'viem';
import { defined } from '../../core/assert.ts';
import { utcDateOf } from '../../core/day.ts';
import { AppError } from '../../core/errors.ts';
import type { Chain } from '../../platform/chain/chain.ts';
import type { ConfiguredNetwork, NetworkName } from '../../platform/chain/networks.ts';
import {
  type ChainRead,
  ChainRound,
  onEvidenceOfRemoval,
  type ReadAtHead,
  readAtHead,
  viewNetwork,
} from '../../platform/chain/outcome.ts';
import { toBaseUnits } from '../../platform/chain/units.ts';
import { type AccountRow, requireAccount } from '../accounts/index.ts';
import { reverseEntry } from '../ledger/index.ts';
import * as suspects from './chain-suspects.ts';
import { waitsForRail } from './domain.ts';
import { execute, move } from './execution.ts';
import { onLockedPayout, type PayoutsDeps } from './service.ts';
import * as store from './store.ts';

// The chain rail: a person signs the transfer in a browser wallet. We answer the unsigned
// ERC-20 transfer; a reported transaction is read back from the chain and must carry exactly
// that transfer (the token, from the account's proven address, to the destination, for the
// amount) before the payment is executed, once the network's confirmations are reached. The
// chain is read before the payment's row lock is taken, and the state is checked again under
// it; a read that ends unknown changes nothing (docs/design/payouts.md "The chain rail").

export type ChainRailDeps = PayoutsDeps & {
  chain: Chain | undefined;
  confirmations: Partial<Record<NetworkName, number>>;
  logger?: Logger | undefined;
};

function refuse(field: string, detail: string): never {
  throw new AppError('invalid_request', detail, { field });
}

function railOf(deps: ChainRailDeps, row: store.PayoutRow, account: AccountRow) {
  if (row.rail !== 'chain') refuse('rail', 'Only a chain payment has an on-chain transfer.');
  const network = account.network ? deps.chain?.networks.byName(account.network as NetworkName) : undefined;
  if (!network) refuse('account_id', `The network ${account.network} is not configured on this server.`);
  if (!account.address_proven) {
    refuse('account_id', 'Prove control of the account’s address first: the transfer must come from it.');
  }
  const units = toBaseUnits(store.amountOf(row), network.token.decimals);
  if (!units.ok) {
    throw new AppError('amount_not_accepted', `The token has ${network.token.decimals} decimals.`, {
      field: 'amount',
    });
  }
  return { network, from: account.address_proven, units: units.value };
}

function unsigned(network: ConfiguredNetwork, from: string, destination: string, units: bigint) {
  return {
    chain_id: network.chainId,
    network: network.caip2,
    from,
    to: network.token.address,
    value: '0x0',
    data: encodeFunctionData({
      abi: erc20Abi,
      functionName: 'transfer',
      args: [destination as `0x${string}`, units],
    }),
  };
}

/** The transfer for the person's wallet to sign and send (an executing chain payment). */
export function chainTransaction(deps: ChainRailDeps, userId: string, spaceId: string, payoutId: string) {
  return onLockedPayout(deps, { userId, spaceId, payoutId }, async ({ row, account }) => {
    const rail = railOf(deps, row, account);
    if (!waitsForRail(row.status)) {
      throw new AppError('payment_state', `A payment that is ${row.status} has no transfer to sign.`, {
        status: row.status,
      });
    }
    return unsigned(rail.network, rail.from, row.destination, rail.units);
  });
}

type Rail = ReturnType<typeof railOf>;

/** Whether a mined receipt carries exactly the payment's transfer (token, from, to, amount). */
function carriesPayment(receipt: TransactionReceipt, rail: Rail, row: store.PayoutRow): boolean {
  if (receipt.status !== 'success') return false;
  const transfers = parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs: receipt.logs });
  return transfers.some(
    (log) =>
      log.address.toLowerCase() === rail.network.token.address.toLowerCase() &&
      log.args.from.toLowerCase() === rail.from.toLowerCase() &&
      log.args.to.toLowerCase() === row.destination &&
      log.args.value === rail.units,
  );
}

/**
 * The receipt of a transaction, from a node within the network's confirmations of the best head
 * (a lagging node's "no receipt" is not believed), with that node's head.
 */
async function readReceipt(
  deps: ChainRailDeps,
  round: ChainRound,
  rail: Rail,
  txHash: Hash,
): Promise<ReadAtHead<TransactionReceipt>> {
  const { name } = rail.network;
  const nodes = defined(
    defined(deps.chain, 'the chain').clients(name),
    `the ${name} network's clients`,
  ).nodes;
  const view = await viewNetwork(round, name, nodes, BigInt(deps.confirmations[name] ?? 1));
  if (view.kind !== 'found') return { outcome: view, head: 0n };
  return readAtHead(round, view.value, 'eth_getTransactionReceipt', 0n, (client) =>
    client.getTransactionReceipt({ hash: txHash }),
  );
}

/** What the chain says of a payment's transaction: carried with its confirmations, or not carried. */
type Sighting = { kind: 'carried'; confirmations: bigint; head: bigint } | { kind: 'missing'; head: bigint };

function sightingOf(
  read: ReadAtHead<TransactionReceipt>,
  rail: Rail,
  row: store.PayoutRow,
): ChainRead<Sighting> {
  const { outcome, head } = read;
  if (outcome.kind === 'unknown') return outcome;
  if (outcome.kind === 'found' && carriesPayment(outcome.value, rail, row)) {
    const confirmations = head - outcome.value.blockNumber + 1n;
    return { kind: 'found', value: { kind: 'carried', confirmations, head } };
  }
  return { kind: 'found', value: { kind: 'missing', head } };
}

/** Confirmations of the transaction that carries the payment's transfer; refuses any other. */
async function confirmationsOf(deps: ChainRailDeps, rail: Rail, row: store.PayoutRow, txHash: Hash) {
  const round = new ChainRound('chain-payout-report', deps.logger);
  const read = await readReceipt(deps, round, rail, txHash);
  round.end();
  if (read.outcome.kind === 'unknown') {
    throw new AppError(
      'transfer_failed',
      'The network’s nodes could not be asked about this transaction just now; nothing was recorded. Report it again in a moment.',
    );
  }
  if (read.outcome.kind === 'absent') {
    refuse('tx_hash', 'No mined transaction with this hash on the account’s network.');
  }
  if (read.outcome.value.status !== 'success') refuse('tx_hash', 'The transaction failed on chain.');
  if (!carriesPayment(read.outcome.value, rail, row)) {
    refuse('tx_hash', 'The transaction does not carry this payment’s transfer from the account’s address.');
  }
  // The answering node's head, read fresh: a block mined a moment ago counts.
  return read.head - read.outcome.value.blockNumber + 1n;
}

/**
 * A person reports the transaction they sent. It is recorded on the payment; once it has the
 * network's confirmations (reported again, or seen later) the payment is executed.
 */
export async function reportChainTx(
  deps: ChainRailDeps,
  userId: string,
  spaceId: string,
  payoutId: string,
  txHash: string,
) {
  const first = await store.findPayout(deps.db, spaceId, payoutId);
  if (!first) throw new AppError('not_found', 'No payment with this id in this space.');
  const hash = txHash.toLowerCase() as Hash;
  // The chain is read outside the transaction; the payment's state is checked again under its lock.
  const { account } = await onLockedPayout(deps, { userId, spaceId, payoutId }, async (locked) => locked);
  const rail = railOf(deps, first, account);
  const confirmations = await confirmationsOf(deps, rail, first, hash);
  const needed = BigInt(deps.confirmations[rail.network.name] ?? 1);
  return onLockedPayout(deps, { userId, spaceId, payoutId }, async ({ tx, row, account: locked }) => {
    if (row.status === 'executed' && row.tx_hash === hash) return row;
    if (!waitsForRail(row.status)) {
      throw new AppError('payment_state', `A payment that is ${row.status} takes no transaction.`, {
        status: row.status,
      });
    }
    if (row.tx_hash !== null && row.tx_hash !== hash) {
      throw new AppError('conflict', 'Another transaction was already reported for this payment.');
    }
    if (confirmations < needed) {
      await store.updatePayout(tx, spaceId, row.id, { tx_hash: hash, updated_at: deps.clock.now() });
      row.tx_hash = hash;
      return row;
    }
    if (!(await execute({ tx, deps, account: locked }, row, { txHash: hash }))) {
      throw new AppError('insufficient_balance', 'The account’s book balance does not carry this payment.');
    }
    return row;
  });
}

/** How long an executed chain payment is re-checked against reorganisations. */
const REORG_WATCH_MS = 24 * 60 * 60 * 1000;
const FOLLOW_BATCH = 100;

type Followed = { executed: number; reversed: number };

/** Undoes a payment whose transaction a reorganisation removed: reversal entry, back to executing. */
async function undoExecution(
  deps: ChainRailDeps,
  row: store.PayoutRow,
  tx: Parameters<typeof reverseEntry>[0],
) {
  const at = deps.clock.now();
  const reversed = await reverseEntry(
    tx,
    row.space_id,
    defined(row.transaction_id, "an executed payment's entry"),
    at,
    utcDateOf(at),
    'chain reorganisation',
  );
  if (!reversed.ok) throw new Error(`Reversing payment ${row.id} was refused: ${reversed.code}`);
  await move({ tx, deps }, row, { status: 'executing', transaction_id: null, executed_at: null });
  await suspects.clearSuspect(tx, row.id);
}

/**
 * The worker's side of the chain rail: a reported transaction that reached its confirmations
 * executes its payment; an executed payment whose transaction is no longer on the chain (a
 * reorganisation) is reversed, on evidence seen on two rounds a block apart, and waits in
 * `executing` until the transaction is seen again. A read that ends unknown changes nothing.
 */
export async function followChainPayouts(deps: ChainRailDeps): Promise<Followed> {
  const done: Followed = { executed: 0, reversed: 0 };
  if (!deps.chain) return done;
  const since = new Date(deps.clock.now().getTime() - REORG_WATCH_MS);
  const round = new ChainRound('chain-payouts', deps.logger);
  try {
    for (const found of await store.chainPayoutsToFollow(deps.db, since, FOLLOW_BATCH)) {
      const outcome = await followOne(deps, round, found);
      if (outcome) done[outcome]++;
    }
  } finally {
    round.end();
  }
  return done;
}

/** Reads one payment's transaction, then applies what it says under the payment's lock. */
async function followOne(deps: ChainRailDeps, round: ChainRound, found: { id: string; space_id: string }) {
  const seen = await store.findPayout(deps.db, found.space_id, found.id);
  if (!seen || seen.tx_hash === null) return undefined;
  const rail = railOf(deps, seen, await requireAccount(deps.db, seen.space_id, seen.account_id));
  const sighting = sightingOf(await readReceipt(deps, round, rail, seen.tx_hash as Hash), rail, seen);
  if (sighting.kind !== 'found') return undefined;
  const needed = BigInt(deps.confirmations[rail.network.name] ?? 1);
  const ids = { userId: null, spaceId: found.space_id, payoutId: found.id };
  return onLockedPayout(deps, ids, async ({ tx, row, account }) => {
    // Changed since the read (another worker, a person): the next round reads it afresh.
    if (row.status !== seen.status || row.tx_hash !== seen.tx_hash) return undefined;
    const said = sighting.value;
    if (row.status === 'executing') {
      if (said.kind !== 'carried' || said.confirmations < needed) return undefined;
      const txHash = defined(row.tx_hash, "a followed payment's transaction");
      const executed = await execute({ tx, deps, account }, row, { txHash });
      return executed ? ('executed' as const) : undefined;
    }
    if (row.status !== 'executed') return undefined;
    if (said.kind === 'carried') {
      await suspects.clearSuspect(tx, row.id);
      return undefined;
    }
    const verdict = onEvidenceOfRemoval(await suspects.suspectSince(tx, row.id), said.head);
    if (verdict === 'mark') await suspects.markSuspect(tx, row.space_id, row.id, said.head);
    if (verdict !== 'undo') return undefined;
    await undoExecution(deps, row, tx);
    return 'reversed' as const;
  });
}
