import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { type Address, getAddress, type Hash, parseEventLogs } from 'viem';
import { assert } from '../../core/assert.ts';
import type { Clock } from '../../core/clock.ts';
import { type AmountE8, formatAmount } from '../../core/money.ts';
import type { Chain } from '../../platform/chain/chain.ts';
import type { ConfiguredNetwork, NetworkName } from '../../platform/chain/networks.ts';
import { EIP3009_TOKEN_ABI } from '../../platform/chain/token.ts';
import { fromBaseUnits } from '../../platform/chain/units.ts';
import type { Db, Queryable } from '../../platform/db/database.ts';
import { moneyIn } from '../../platform/outbox/events.ts';
import { enqueueEvent } from '../../platform/outbox/outbox.ts';
import { walletAccountForWatch, watchedAgentWallets } from '../agents/index.ts';
import { increase, ledgerAccounts, postEntry, reverseEntry } from '../ledger/index.ts';
import {
  activeRequestsForAccount,
  openAmount,
  reverseChainSettlements,
  settlePaymentRequest,
} from '../payment-requests/index.ts';
import { isSettledTransaction, settledNotFollowed } from '../x402/index.ts';
import { allocate, INITIAL_LOOKBACK, nextRange, REORG_WINDOW } from './domain.ts';
import * as store from './store.ts';

// The account watch (spec §1, §2.1, §3): follows the token's Transfer logs to proven addresses
// that have requests able to take money, fills the request asking for exactly the amount sent
// (else those requests oldest first), books what is left
// as income, and undoes a booking whose block a reorganisation removed. Every read of the chain
// is bounded; the cursor moves in the same transaction as the bookings of its range, so a
// restart loses and doubles nothing.

export type WatchDeps = {
  db: Db;
  clock: Clock;
  chain: Chain;
  confirmations: Partial<Record<NetworkName, number>>;
  logger?: Logger | undefined;
};

type Clients = NonNullable<ReturnType<Chain['clients']>>;
/** A configured network with the key of the chain behind it (see chainKey). */
type Watched = ConfiguredNetwork & { key: string };
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

const genesisHashes = new Map<string, Promise<string>>();

/**
 * What the watch's records are keyed by: the CAIP-2 id and the chain's genesis block. A
 * development node restarted from scratch is another chain under the same id; its blocks must
 * not be read with the old chain's cursor, nor its reorganisation check run on the old rows.
 */
async function chainKey(network: ConfiguredNetwork, clients: Clients): Promise<string> {
  const cacheKey = `${network.caip2}|${network.rpcUrl}`;
  let genesis = genesisHashes.get(cacheKey);
  if (!genesis) {
    genesis = clients.publicClient.getBlock({ blockNumber: 0n }).then((block) => block.hash!);
    genesis.catch(() => genesisHashes.delete(cacheKey));
    genesisHashes.set(cacheKey, genesis);
  }
  return `${network.caip2}/${(await genesis).slice(0, 18)}`;
}

/** One round over every configured network. Safe to run in many processes at once. */
export async function watchOnce(deps: WatchDeps): Promise<WatchReport> {
  const report: WatchReport = [];
  for (const configured of deps.chain.networks.list()) {
    const clients = deps.chain.clients(configured.name);
    if (!clients) continue;
    const network = { ...configured, key: await chainKey(configured, clients) };
    const reversed = await checkReorganisations(deps, network, clients);
    await followX402Settlements(deps, network, clients);
    const scan = await scanNetwork(deps, network, clients);
    report.push({ network: network.caip2, booked: scan.booked, reversed, scannedTo: scan.scannedTo });
  }
  return report;
}

async function scanNetwork(deps: WatchDeps, network: Watched, clients: Clients) {
  const head = await clients.publicClient.getBlockNumber({ cacheTime: 0 });
  const safeHead = head - BigInt(deps.confirmations[network.name] ?? 0);
  return deps.db.transaction().execute(async (tx) => {
    const now = deps.clock.now();
    const start = head > INITIAL_LOOKBACK ? head - INITIAL_LOOKBACK : 0n;
    const next = await store.lockCursor(tx, network.key, start, now);
    if (next === undefined) return { booked: 0, scannedTo: null };
    const range = nextRange(next, safeHead);
    if (!range) return { booked: 0, scannedTo: null };
    const watched = await store.watchedAccounts(tx, network.name, now);
    const byAddress = new Map(watched.map((account) => [account.address.toLowerCase(), account]));
    // Agents' hot wallets are proven by their making: followed even with no request open.
    const wallets = await watchedAgentWallets(tx);
    const addresses = [...new Set([...byAddress.keys(), ...wallets.keys()])];
    const logs = addresses.length === 0 ? [] : await readTransfers(clients, network, addresses, range);
    let booked = 0;
    // Transactions the gas wallet sent are x402 settlements: booked by that path, even when the
    // watch reads the block before the settlement's own booking committed.
    const ours = async (hash: Hash) => {
      const sent = await clients.publicClient.getTransaction({ hash });
      return (
        deps.chain.gasWallet !== undefined && sent.from.toLowerCase() === deps.chain.gasWallet.toLowerCase()
      );
    };
    for (const log of logs) {
      const to = log.to.toLowerCase();
      const wallet = byAddress.has(to) ? undefined : wallets.get(to);
      const account =
        byAddress.get(to) ?? (wallet && (await walletAccountForWatch(tx, deps.clock, wallet, network)));
      if (account && (await bookTransfer(tx, deps, network, account, log, ours))) booked += 1;
    }
    await store.advanceCursor(tx, network.key, range.to + 1n, now);
    return { booked, scannedTo: range.to };
  });
}

async function readTransfers(
  clients: Clients,
  network: ConfiguredNetwork,
  addresses: string[],
  range: { from: bigint; to: bigint },
): Promise<TransferLog[]> {
  const raw = await clients.publicClient.getLogs({
    address: network.token.address,
    event: EIP3009_TOKEN_ABI.find((item) => item.type === 'event' && item.name === 'Transfer') as never,
    args: { to: addresses.map((address) => getAddress(address)) } as never,
    fromBlock: range.from,
    toBlock: range.to,
  });
  const parsed = parseEventLogs({ abi: EIP3009_TOKEN_ABI, eventName: 'Transfer', logs: raw });
  return parsed
    .filter((log) => log.blockHash !== null && log.transactionHash !== null && log.logIndex !== null)
    .map((log) => ({
      txHash: log.transactionHash!,
      logIndex: log.logIndex!,
      blockNumber: log.blockNumber!,
      blockHash: log.blockHash!,
      from: log.args.from,
      to: log.args.to,
      value: log.args.value,
    }))
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
  ours: (hash: Hash) => Promise<boolean>,
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
  if (await ours(log.txHash)) return false;
  const requests = await activeRequestsForAccount(tx, account.space_id, account.id, at);
  const plan = allocate(
    converted.value,
    requests.map((request) => ({ id: request.id, open: openAmount(request) })),
  );
  for (const allocation of plan.allocations) {
    const outcome = await settlePaymentRequest(tx, {
      spaceId: account.space_id,
      requestId: allocation.requestId,
      amount: allocation.amount,
      rail: 'chain',
      reference: `${transferReference(network, log)}:${allocation.requestId}`,
      payer: log.from,
      at,
      committed: true,
      matchedBy: allocation.matchedBy,
    });
    assert(outcome.ok, 'A committed settlement is never refused.');
  }
  const remainderEntryId =
    plan.remainder > 0n ? await bookRemainder(tx, account, transfer, plan.remainder, at) : null;
  await store.insertTransfer(tx, { ...transfer, remainder_entry_id: remainderEntryId });
  return true;
}

function transferReference(network: ConfiguredNetwork, log: { txHash: string; logIndex: number }) {
  return `${network.caip2}:${log.txHash}:${log.logIndex}`;
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
  const occurredOn = at.toISOString().slice(0, 10);
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

/**
 * Re-reads the blocks of recent bookings. A transfer whose block is gone from the canonical
 * chain, and whose transaction is not mined elsewhere, is undone: its settlements and remainder
 * are reversed by new postings and the requests' received amounts shrink.
 */
async function checkReorganisations(deps: WatchDeps, network: Watched, clients: Clients) {
  const head = await clients.publicClient.getBlockNumber({ cacheTime: 0 });
  const from = head > REORG_WINDOW ? head - REORG_WINDOW : 0n;
  const rows = await store.recentBooked(deps.db, network.key, from);
  const canonical = new Map<string, string | undefined>();
  let reversed = 0;
  for (const row of rows) {
    if (!canonical.has(row.block_number)) {
      const block =
        BigInt(row.block_number) > head
          ? null
          : await clients.publicClient.getBlock({ blockNumber: BigInt(row.block_number) }).catch(() => null);
      canonical.set(row.block_number, block?.hash ?? undefined);
    }
    if (canonical.get(row.block_number) === row.block_hash) continue;
    const receipt = await clients.publicClient
      .getTransactionReceipt({ hash: row.tx_hash as Hash })
      .catch(() => null);
    if (
      receipt &&
      receipt.status === 'success' &&
      receipt.logs.some((log) => log.logIndex === row.log_index)
    ) {
      await store.moveTransfer(deps.db, row.id, receipt.blockNumber, receipt.blockHash);
      continue;
    }
    if (await undoTransfer(deps, network, row)) reversed += 1;
  }
  return reversed;
}

async function undoTransfer(deps: WatchDeps, network: ConfiguredNetwork, row: store.TransferRow) {
  const at = deps.clock.now();
  return deps.db.transaction().execute(async (tx) => {
    if (!(await store.markReversed(tx, row.id, at))) return false;
    const reference =
      row.source === 'x402'
        ? `${network.caip2}:${row.tx_hash}`
        : transferReference(network, { txHash: row.tx_hash, logIndex: row.log_index });
    await reverseChainSettlements(tx, {
      spaceId: row.space_id,
      rail: row.source === 'x402' ? 'x402' : 'chain',
      reference,
      at,
    });
    if (row.remainder_entry_id) {
      const memo = `Chain reorganisation: transfer ${row.tx_hash} is no longer on the chain`;
      const undone = await reverseEntry(
        tx,
        row.space_id,
        row.remainder_entry_id,
        at,
        at.toISOString().slice(0, 10),
        memo,
      );
      assert(undone.ok, 'Reversing income lowers no guarded balance.');
    }
    deps.logger?.warn(
      { network: network.caip2, tx: row.tx_hash, amount: row.amount },
      'a booked transfer was reorganised away and undone',
    );
    return true;
  });
}

/** Records the block of recent x402 settlements, so a reorganisation can undo them too. */
async function followX402Settlements(deps: WatchDeps, network: Watched, clients: Clients) {
  // An hour covers the reorganisation window of every supported chain many times over.
  const since = new Date(deps.clock.now().getTime() - 60 * 60 * 1000);
  for (const settled of await settledNotFollowed(deps.db, network.caip2, network.key, since, 20)) {
    const receipt = await clients.publicClient
      .getTransactionReceipt({ hash: settled.tx_hash as Hash })
      .catch(() => null);
    if (!receipt) continue;
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
