import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import {
  type Address,
  getAbiItem,
  getAddress,
  type Hash,
  parseEventLogs,
  type TransactionReceipt,
} from 'viem';
import { assert } from '../../core/assert.ts';
import type { Clock } from '../../core/clock.ts';
import { utcDateOf } from '../../core/day.ts';
import { type AmountE8, formatAmount } from '../../core/money.ts';
import type { Chain, Clients } from '../../platform/chain/chain.ts';
import type { ConfiguredNetwork, NetworkName } from '../../platform/chain/networks.ts';
import {
  type ChainNode,
  type ChainRead,
  ChainRound,
  type NetworkView,
  onEvidenceOfRemoval,
  readAtHead,
  viewNetwork,
} from '../../platform/chain/outcome.ts';
import { EIP3009_TOKEN_ABI } from '../../platform/chain/token.ts';
import { fromBaseUnits } from '../../platform/chain/units.ts';
import type { Db, Queryable } from '../../platform/db/database.ts';
import { moneyIn } from '../../platform/outbox/events.ts';
import { enqueueEvent } from '../../platform/outbox/outbox.ts';
import { walletAccountForWatch, watchedAgentWallets } from '../agents/index.ts';
import { increase, ledgerAccounts, postEntry, readAmount, reverseEntry } from '../ledger/index.ts';
import {
  activeRequestsForAccount,
  openAmount,
  reverseChainSettlements,
  settlePaymentRequest,
} from '../payment-requests/index.ts';
import { flagInboundTransfer } from '../screening/index.ts';
import { isSettledTransaction, settledNotFollowed } from '../x402/index.ts';
import { allocate, INITIAL_LOOKBACK, nextRange, REORG_WINDOW } from './domain.ts';
import * as store from './store.ts';

// The account watch (spec §1, §2.1, §3): follows the token's Transfer logs to proven addresses
// that have requests able to take money, fills the request asking for exactly the amount sent
// (else those requests oldest first), books what is left as income, undoes a booking whose
// block a reorganisation removed and books it again when its transaction is mined again. Every
// read of the chain ends found, absent or unknown (platform/chain/outcome.ts) and happens before
// any transaction opens; an unknown read changes nothing and is asked again next round. The
// cursor moves in the same transaction as the bookings of its range, so a restart loses and
// doubles nothing. A transfer from a sender on the sanctions list is booked and flagged
// (screening/inbound.ts). The rules are in docs/design/chain-watch.md.

export type WatchDeps = {
  db: Db;
  clock: Clock;
  chain: Chain;
  confirmations: Partial<Record<NetworkName, number>>;
  logger?: Logger | undefined;
};

/** A configured network with the key of the chain behind it (see chainKey). */
type Watched = ConfiguredNetwork & { key: string };
/** What every step of one network's round works with. */
type NetworkRound = { deps: WatchDeps; round: ChainRound; network: Watched; view: NetworkView };
type TransferLog = {
  txHash: Hash;
  logIndex: number;
  blockNumber: bigint;
  blockHash: Hash;
  from: Address;
  to: Address;
  value: bigint;
};

export type WatchReport = { network: string; booked: number; reversed: number; scannedTo: bigint | null }[];

const genesisHashes = new Map<string, string>();

/**
 * What the watch's records are keyed by: the CAIP-2 id and the chain's genesis block. A
 * development node restarted from scratch is another chain under the same id; its blocks must
 * not be read with the old chain's cursor, nor its reorganisation check run on the old rows.
 * Undefined while no node answers the genesis block (the network is skipped this round).
 */
async function chainKey(round: ChainRound, network: ConfiguredNetwork, clients: Clients) {
  const cacheKey = `${network.caip2}|${network.rpcUrl}`;
  let genesis = genesisHashes.get(cacheKey);
  if (genesis === undefined) {
    const read = await round.read(network.name, 'eth_getBlockByNumber', () =>
      clients.publicClient.getBlock({ blockNumber: 0n }).then((block) => block.hash),
    );
    if (read.kind !== 'found') return undefined;
    genesis = read.value;
    genesisHashes.set(cacheKey, genesis);
  }
  return `${network.caip2}/${genesis.slice(0, 18)}`;
}

/** One round over every configured network. Safe to run in many processes at once. */
export async function watchOnce(deps: WatchDeps): Promise<WatchReport> {
  const report: WatchReport = [];
  const round = new ChainRound('chain-watch', deps.logger);
  try {
    for (const configured of deps.chain.networks.list()) {
      const clients = deps.chain.clients(configured.name);
      if (!clients) continue;
      const line = { network: configured.caip2, booked: 0, reversed: 0, scannedTo: null as bigint | null };
      report.push(line);
      const key = await chainKey(round, configured, clients);
      if (key === undefined) continue;
      const lagMax = BigInt(deps.confirmations[configured.name] ?? 0);
      const view = await viewNetwork(round, configured.name, clients.nodes, lagMax);
      if (view.kind !== 'found') continue;
      const at: NetworkRound = { deps, round, network: { ...configured, key }, view: view.value };
      line.reversed = await checkReorganisations(at);
      line.booked += await bookMinedAgain(at);
      await followX402Settlements(at);
      const scan = await scanNetwork(at);
      line.booked += scan.booked;
      line.scannedTo = scan.scannedTo;
    }
  } finally {
    round.end();
  }
  return report;
}

/**
 * Reads the next range of blocks up to the safe head from a node at or past its end, then books
 * it under the cursor's lock. Nothing moves when a read ends unknown, or when another process
 * moved the cursor meanwhile.
 */
async function scanNetwork(at: NetworkRound) {
  const { deps, round, network, view } = at;
  const none = { booked: 0, scannedTo: null };
  const now = deps.clock.now();
  const start = view.best > INITIAL_LOOKBACK ? view.best - INITIAL_LOOKBACK : 0n;
  const next = await store.cursorAt(deps.db, network.key, start, now);
  const range = nextRange(next, view.best - view.lagMax);
  if (!range) return none;
  const watched = await store.watchedAccounts(deps.db, network.name, now);
  const byAddress = new Map(watched.map((account) => [account.address.toLowerCase(), account]));
  // Agents' hot wallets are proven by their making: followed even with no request open.
  const wallets = await watchedAgentWallets(deps.db);
  const addresses = [...new Set([...byAddress.keys(), ...wallets.keys()])];
  let logs: TransferLog[] = [];
  if (addresses.length > 0) {
    const read = await readAtHead(round, view, 'eth_getLogs', range.to, (client) =>
      readTransfers(client, network, addresses, range),
    );
    if (read.outcome.kind !== 'found') return none;
    logs = read.outcome.value;
  }
  const sentByUs = await gasWalletTransactions(at, logs);
  if (sentByUs === undefined) return none;
  return deps.db.transaction().execute(async (tx) => {
    if ((await store.lockCursor(tx, network.key)) !== next) return none;
    let booked = 0;
    for (const log of logs) {
      const to = log.to.toLowerCase();
      const wallet = byAddress.has(to) ? undefined : wallets.get(to);
      const account =
        byAddress.get(to) ?? (wallet && (await walletAccountForWatch(tx, deps.clock, wallet, network)));
      if (account && (await bookTransfer(tx, deps, network, account, log, sentByUs))) booked += 1;
    }
    await store.advanceCursor(tx, network.key, range.to + 1n, now);
    return { booked, scannedTo: range.to };
  });
}

/**
 * Which of the logs' transactions the gas wallet sent: x402 settlements, booked by that path,
 * even when the watch reads the block before the settlement's own booking committed. Undefined
 * when a sender could not be read (the range waits for the next round).
 */
async function gasWalletTransactions(at: NetworkRound, logs: TransferLog[]) {
  const ours = new Set<string>();
  const lanes = new Set(at.deps.chain.gasWallets.map((address) => address.toLowerCase()));
  if (lanes.size === 0) return ours;
  const asked = new Set<string>();
  for (const log of logs) {
    if (asked.has(log.txHash)) continue;
    asked.add(log.txHash);
    if (await store.transferExists(at.deps.db, at.network.key, log.txHash, log.logIndex)) continue;
    const read = await readAtHead(at.round, at.view, 'eth_getTransactionByHash', log.blockNumber, (client) =>
      client.getTransaction({ hash: log.txHash }),
    );
    // A transaction whose log was just read and that a current node does not know is a doubt.
    if (read.outcome.kind === 'absent') {
      at.round.unknown(at.network.name, 'eth_getTransactionByHash', 'a logged transaction was not found');
      return undefined;
    }
    if (read.outcome.kind === 'unknown') return undefined;
    if (lanes.has(read.outcome.value.from.toLowerCase())) ours.add(log.txHash);
  }
  return ours;
}

async function readTransfers(
  client: ChainNode['client'],
  network: ConfiguredNetwork,
  addresses: string[],
  range: { from: bigint; to: bigint },
): Promise<TransferLog[]> {
  const raw = await client.getLogs({
    address: network.token.address,
    event: getAbiItem({ abi: EIP3009_TOKEN_ABI, name: 'Transfer' }),
    args: { to: addresses.map((address) => getAddress(address)) },
    fromBlock: range.from,
    toBlock: range.to,
  });
  const parsed = parseEventLogs({ abi: EIP3009_TOKEN_ABI, eventName: 'Transfer', logs: raw });
  return parsed
    .flatMap((log) => {
      const { transactionHash: txHash, logIndex, blockNumber, blockHash } = log;
      // A pending log has no block yet: it is read again once mined.
      if (txHash === null || logIndex === null || blockNumber === null || blockHash === null) return [];
      return [
        {
          txHash,
          logIndex,
          blockNumber,
          blockHash,
          from: log.args.from,
          to: log.args.to,
          value: log.args.value,
        },
      ];
    })
    .sort((a, b) =>
      a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : Number(a.blockNumber - b.blockNumber),
    );
}

/** Books one transfer into the watched account, once. Answers whether it booked anything. */
async function bookTransfer(
  tx: Queryable,
  deps: WatchDeps,
  network: Watched,
  account: store.WatchedAccount,
  log: TransferLog,
  sentByUs: ReadonlySet<string>,
): Promise<boolean> {
  if (await store.transferExists(tx, network.key, log.txHash, log.logIndex)) return false;
  const converted = fromBaseUnits(log.value, network.token.decimals);
  if (!converted.ok || converted.value === 0n) {
    deps.logger?.warn(
      { tx: log.txHash, value: String(log.value) },
      'a transfer finer than 10^-8 was not booked',
    );
    return false;
  }
  const at = deps.clock.now();
  const transfer = newTransfer(account, network, log, converted.value, at);
  // An x402 settlement Tollbook made is booked already; it is only followed, for reorganisations.
  if (await isSettledTransaction(tx, network.caip2, log.txHash)) {
    await store.insertTransfer(tx, { ...transfer, source: 'x402' });
    return false;
  }
  if (sentByUs.has(log.txHash)) return false;
  await settleAndRecord(tx, network, account, transfer, converted.value, at);
  return true;
}

/**
 * Fills the account's open requests with a transfer's amount (the exact match first, else oldest
 * first), books what is left as income, and records the transfer as booked.
 */
async function settleAndRecord(
  tx: Queryable,
  network: Watched,
  account: store.WatchedAccount,
  transfer: store.TransferRow,
  amount: AmountE8,
  at: Date,
) {
  const requests = await activeRequestsForAccount(tx, account.space_id, account.id, at);
  const plan = allocate(
    amount,
    requests.map((request) => ({ id: request.id, open: openAmount(request) })),
  );
  const entryIds: string[] = [];
  for (const allocation of plan.allocations) {
    const outcome = await settlePaymentRequest(tx, {
      spaceId: account.space_id,
      requestId: allocation.requestId,
      amount: allocation.amount,
      rail: 'chain',
      reference: `${transferReference(network, transfer)}:${allocation.requestId}`,
      payer: transfer.payer,
      at,
      committed: true,
      matchedBy: allocation.matchedBy,
    });
    assert(outcome.ok, 'A committed settlement is never refused.');
    entryIds.push(outcome.settlement.entry_id);
  }
  const remainderEntryId =
    plan.remainder > 0n ? await bookRemainder(tx, account, transfer, plan.remainder, at) : null;
  if (remainderEntryId !== null) entryIds.push(remainderEntryId);
  await store.insertTransfer(tx, { ...transfer, remainder_entry_id: remainderEntryId });
  // Booked all the same (the money is there); a listed sender is flagged for the owners.
  await flagInboundTransfer(tx, {
    spaceId: account.space_id,
    transferId: transfer.id,
    payer: transfer.payer,
    entryIds,
    amount: transfer.amount,
    currency: account.currency,
    txHash: transfer.tx_hash,
    at,
  });
}

/**
 * The settlements' reference prefix of a transfer the watch booked: network, transaction and log.
 * A booking made again after a reorganisation adds its own row id, so its settlements are new
 * rows beside the reversed ones.
 */
function transferReference(
  network: ConfiguredNetwork,
  row: Pick<store.TransferRow, 'id' | 'tx_hash' | 'log_index' | 'rebooks'>,
) {
  const base = `${network.caip2}:${row.tx_hash}:${row.log_index}`;
  return row.rebooks === null ? base : `${base}:${row.id}`;
}

function newTransfer(
  account: store.WatchedAccount,
  network: Watched,
  log: TransferLog,
  amount: AmountE8,
  at: Date,
): store.TransferRow {
  return {
    id: randomUUID(),
    space_id: account.space_id,
    account_id: account.id,
    network: network.key,
    tx_hash: log.txHash,
    log_index: log.logIndex,
    block_number: log.blockNumber.toString(),
    block_hash: log.blockHash,
    payer: log.from,
    amount: formatAmount(amount),
    source: 'watch',
    remainder_entry_id: null,
    status: 'booked',
    created_at: at,
    reversed_at: null,
    suspect_since_block: null,
    rebooks: null,
  };
}

/** Money that no request asked for: income of the account, with no endpoint. */
async function bookRemainder(
  tx: Queryable,
  account: store.WatchedAccount,
  transfer: store.TransferRow,
  amount: AmountE8,
  at: Date,
): Promise<string> {
  const where = { spaceId: account.space_id, currency: account.currency, at };
  const asset = await ledgerAccounts.asset(tx, { ...where, accountId: account.id });
  const income = await ledgerAccounts.income(tx, { ...where, resourceId: null });
  const occurredOn = utcDateOf(at);
  const posted = await postEntry(
    tx,
    {
      spaceId: account.space_id,
      origin: 'rail',
      kind: 'income',
      occurredOn,
      causeType: 'chain_transfer',
      causeId: transfer.id,
      counterparty: transfer.payer,
      memo: `Transfer ${transfer.tx_hash} with no open payment request`,
      postings: [increase(asset, amount), increase(income, amount)],
    },
    at,
  );
  assert(posted.ok, 'Income only adds to balances.');
  await enqueueEvent(
    tx,
    moneyIn(
      { spaceId: account.space_id, at },
      {
        transaction_id: posted.entryId,
        account_id: account.id,
        amount,
        currency: account.currency,
        kind: 'income',
        origin: 'rail',
        occurred_on: occurredOn,
      },
    ),
  );
  return posted.entryId;
}

/** The token Transfer in a successful receipt that pays `amount` to `address`, if there is one. */
function transferIn(
  receipt: TransactionReceipt,
  network: ConfiguredNetwork,
  address: string,
  amount: string,
): TransferLog | undefined {
  if (receipt.status !== 'success') return undefined;
  const logs = parseEventLogs({ abi: EIP3009_TOKEN_ABI, eventName: 'Transfer', logs: receipt.logs });
  const log = logs.find((candidate) => {
    if (candidate.address.toLowerCase() !== network.token.address.toLowerCase()) return false;
    if (candidate.args.to.toLowerCase() !== address.toLowerCase()) return false;
    const converted = fromBaseUnits(candidate.args.value, network.token.decimals);
    return converted.ok && converted.value === readAmount(amount);
  });
  if (!log || log.logIndex === null) return undefined;
  return {
    txHash: receipt.transactionHash,
    logIndex: log.logIndex,
    blockNumber: receipt.blockNumber,
    blockHash: receipt.blockHash,
    from: log.args.from,
    to: log.args.to,
    value: log.args.value,
  };
}

/**
 * Re-reads the blocks of recent bookings. A transfer whose block was replaced and whose
 * transaction has no receipt carrying it is undone only on evidence seen twice (see
 * onEvidenceOfRemoval); a transfer mined in another block is moved there. Any read that ends
 * unknown leaves the transfer as it is.
 */
async function checkReorganisations(at: NetworkRound) {
  const { deps, round, network, view } = at;
  const from = view.best > REORG_WINDOW ? view.best - REORG_WINDOW : 0n;
  const rows = await store.recentBooked(deps.db, network.key, from);
  const canonical = new Map<string, ChainRead<string>>();
  let reversed = 0;
  for (const row of rows) {
    const blockNumber = BigInt(row.block_number);
    let hash = canonical.get(row.block_number);
    if (hash === undefined) {
      hash = await blockHashAt(at, blockNumber);
      canonical.set(row.block_number, hash);
    }
    if (hash.kind !== 'found') continue;
    if (hash.value === row.block_hash) {
      if (row.suspect_since_block !== null) await store.clearSuspect(deps.db, row.id);
      continue;
    }
    const receipt = await readAtHead(round, view, 'eth_getTransactionReceipt', blockNumber, (client) =>
      client.getTransactionReceipt({ hash: row.tx_hash as Hash }),
    );
    if (receipt.outcome.kind === 'unknown') continue;
    const moved =
      receipt.outcome.kind === 'found'
        ? transferIn(receipt.outcome.value, network, row.address, row.amount)
        : undefined;
    if (moved) {
      await store.moveTransfer(deps.db, row.id, moved.blockNumber, moved.blockHash);
      continue;
    }
    const suspect = row.suspect_since_block === null ? null : BigInt(row.suspect_since_block);
    const verdict = onEvidenceOfRemoval(suspect, receipt.head);
    if (verdict === 'mark') await store.markSuspect(deps.db, row.id, receipt.head);
    if (verdict === 'undo' && (await undoTransfer(deps, network, row))) reversed += 1;
  }
  return reversed;
}

/** The hash of the canonical block at a height, from a current node at or past it. */
async function blockHashAt(at: NetworkRound, blockNumber: bigint): Promise<ChainRead<string>> {
  const read = await readAtHead(at.round, at.view, 'eth_getBlockByNumber', blockNumber, (client) =>
    client.getBlock({ blockNumber }).then((block) => block.hash),
  );
  // A node whose head is past the height and that has no block there is not telling the truth.
  if (read.outcome.kind === 'absent') {
    return at.round.unknown(
      at.network.name,
      'eth_getBlockByNumber',
      `no block ${blockNumber} below the head`,
    );
  }
  return read.outcome;
}

async function undoTransfer(deps: WatchDeps, network: Watched, row: store.TransferRow) {
  const at = deps.clock.now();
  return deps.db.transaction().execute(async (tx) => {
    if (!(await store.markReversed(tx, row.id, at))) return false;
    const reference =
      row.source === 'x402' ? `${network.caip2}:${row.tx_hash}` : transferReference(network, row);
    await reverseChainSettlements(tx, {
      spaceId: row.space_id,
      rail: row.source === 'x402' ? 'x402' : 'chain',
      reference,
      at,
    });
    if (row.remainder_entry_id) {
      const memo = `Chain reorganisation: transfer ${row.tx_hash} is no longer on the chain`;
      const undone = await reverseEntry(tx, row.space_id, row.remainder_entry_id, at, utcDateOf(at), memo);
      assert(undone.ok, 'Reversing income lowers no guarded balance.');
    }
    deps.logger?.warn(
      { network: network.caip2, tx: row.tx_hash, amount: row.amount },
      'a booked transfer was reorganised away and undone',
    );
    return true;
  });
}

/**
 * A transfer the watch booked and a reorganisation reversed is booked again, once, when a current
 * node shows its transaction mined again (at or below the safe head) with the same transfer in it.
 */
async function bookMinedAgain(at: NetworkRound) {
  const { deps, round, network, view } = at;
  const from = view.best > REORG_WINDOW ? view.best - REORG_WINDOW : 0n;
  let booked = 0;
  for (const row of await store.reversedNotRebooked(deps.db, network.key, from)) {
    const receipt = await readAtHead(
      round,
      view,
      'eth_getTransactionReceipt',
      BigInt(row.block_number),
      (client) => client.getTransactionReceipt({ hash: row.tx_hash as Hash }),
    );
    if (receipt.outcome.kind !== 'found') continue;
    const log = transferIn(receipt.outcome.value, network, row.address, row.amount);
    if (!log || log.blockNumber > view.best - view.lagMax) continue;
    const account = {
      id: row.account_id,
      space_id: row.space_id,
      address: row.address,
      currency: row.currency,
    };
    const done = await deps.db.transaction().execute(async (tx) => {
      if (!(await store.lockReversedNotRebooked(tx, row.id))) return false;
      const now = deps.clock.now();
      const transfer = {
        ...newTransfer(account, network, log, readAmount(row.amount), now),
        rebooks: row.id,
      };
      await settleAndRecord(tx, network, account, transfer, readAmount(row.amount), now);
      return true;
    });
    if (done) {
      booked += 1;
      deps.logger?.warn(
        { network: network.caip2, tx: row.tx_hash },
        'a reversed transfer was mined again and booked',
      );
    }
  }
  return booked;
}

/** Records the block of recent x402 settlements, so a reorganisation can undo them too. */
async function followX402Settlements(at: NetworkRound) {
  const { deps, round, network, view } = at;
  // An hour covers the reorganisation window of every supported chain many times over.
  const since = new Date(deps.clock.now().getTime() - 60 * 60 * 1000);
  for (const settled of await settledNotFollowed(deps.db, network.caip2, network.key, since, 20)) {
    const read = await readAtHead(round, view, 'eth_getTransactionReceipt', 0n, (client) =>
      client.getTransactionReceipt({ hash: settled.tx_hash as Hash }),
    );
    // Absent: not mined on a current node yet (or dropped, which the settlement path owns).
    if (read.outcome.kind !== 'found') continue;
    const receipt = read.outcome.value;
    const log = parseEventLogs({ abi: EIP3009_TOKEN_ABI, eventName: 'Transfer', logs: receipt.logs }).find(
      (item) => item.args.to.toLowerCase() === settled.pay_to.toLowerCase(),
    );
    if (!log || log.logIndex === null) continue;
    const converted = fromBaseUnits(log.args.value, network.token.decimals);
    if (!converted.ok) continue;
    const account = {
      id: settled.account_id,
      space_id: settled.space_id,
      address: settled.pay_to,
      currency: '',
    };
    const transfer = newTransfer(
      account,
      network,
      {
        txHash: receipt.transactionHash,
        logIndex: log.logIndex,
        blockNumber: receipt.blockNumber,
        blockHash: receipt.blockHash,
        from: log.args.from,
        to: log.args.to,
        value: log.args.value,
      },
      converted.value,
      deps.clock.now(),
    );
    await store.insertTransfer(deps.db, { ...transfer, source: 'x402' });
  }
}
