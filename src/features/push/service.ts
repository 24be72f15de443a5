import { randomUUID } from 'node:crypto';
import type { Clock } from '../../core/clock.ts';
import { AppError } from '../../core/errors.ts';
import { asAmount, formatAmount } from '../../core/money.ts';
import { uuidv7 } from '../../platform/crypto.ts';
import type { Db, Queryable } from '../../platform/db/database.ts';
import type { IntegrationCaller } from '../../platform/http/context.ts';
import {
  enqueueEvents,
  eventDocument,
  insertEventDocument,
  type OutboxEvent,
} from '../../platform/outbox/outbox.ts';
import { type PushAccount, resolvePushAccounts } from '../accounts/index.ts';
import {
  decrease,
  type EntryDraft,
  ensureLedgerAccounts,
  increase,
  type LedgerAccountSpec,
  ledgerAccountSpecs,
  postEntries,
  reverseEntries,
} from '../ledger/index.ts';
import { closedThrough, planOf, requireAdministrator, syncedRowsAllowance } from '../spaces/index.ts';
import {
  inClosedPeriod,
  monthOf,
  type PushRow,
  type RowError,
  rowsLeft,
  splitRepeats,
  validateRow,
} from './domain.ts';
import * as store from './store.ts';

export type PushDeps = { db: Db; clock: Clock };

type Booked = { row: PushRow; account: PushAccount; entryId: string };

/** Ledger postings for pushed rows: money in against import income, money out against import expense. */
async function draftsFor(
  tx: Queryable,
  spaceId: string,
  sourceId: string,
  rows: Booked[],
  at: Date,
): Promise<EntryDraft[]> {
  const ref = `import:${sourceId}`;
  // A batch names a handful of ledger accounts however many rows it has: each asked for once.
  const specs = new Map<string, LedgerAccountSpec>();
  for (const { row, account } of rows) {
    const where = { spaceId, currency: account.currency, at };
    if (!specs.has(account.id))
      specs.set(account.id, ledgerAccountSpecs.asset({ ...where, accountId: account.id }));
    const side = row.amount > 0n ? `in:${account.currency}` : `out:${account.currency}`;
    if (!specs.has(side))
      specs.set(
        side,
        row.amount > 0n
          ? ledgerAccountSpecs.otherIncome({ ...where, ref })
          : ledgerAccountSpecs.expense({ ...where, ref }),
      );
  }
  const refs = await ensureLedgerAccounts(tx, [...specs.values()]);
  const byKey = new Map([...specs.keys()].map((key, index) => [key, refs[index]!]));
  return rows.map(({ row, account, entryId }) => {
    const asset = byKey.get(account.id)!;
    const counter = byKey.get(`${row.amount > 0n ? 'in' : 'out'}:${account.currency}`)!;
    const moneyIn = row.amount > 0n;
    const magnitude = asAmount(moneyIn ? row.amount : -row.amount);
    return {
      id: entryId,
      spaceId,
      origin: 'import',
      kind: moneyIn ? 'income' : 'expense',
      occurredOn: row.occurredOn,
      causeType: 'push_row',
      causeId: null,
      counterparty: row.payee,
      memo: row.note,
      postings: moneyIn
        ? [increase(asset, magnitude), increase(counter, magnitude)]
        : [decrease(asset, magnitude), increase(counter, magnitude)],
    };
  });
}

function moneyEvent(
  spaceId: string,
  accountId: string,
  entryId: string,
  draft: EntryDraft,
  at: Date,
  reversed = false,
): OutboxEvent {
  const signed = draft.postings[0]!.amount;
  const increases = reversed ? signed < 0n : signed > 0n;
  return {
    channel: 'book',
    spaceId,
    event: increases ? 'money.in' : 'money.out',
    at,
    fields: {
      transaction_id: entryId,
      account_id: accountId,
      direction: increases ? 'in' : 'out',
      amount: formatAmount(asAmount(signed < 0n ? -signed : signed)),
      currency: draft.postings[0]!.account.currency,
      kind: draft.kind,
      origin: 'import',
      occurred_on: draft.occurredOn,
    },
  };
}

/** Sorts claimed rows into those the month's allowance admits and those beyond it. */
async function applyAllowance(tx: Queryable, spaceId: string, rows: PushRow[], month: string) {
  const used = await store.lockUsage(tx, spaceId, month);
  const left = rowsLeft(syncedRowsAllowance(await planOf(tx, spaceId)), used);
  const inOrder = [...rows].sort((a, b) => a.index - b.index);
  return { admitted: inOrder.slice(0, left), beyond: inOrder.slice(left) };
}

export type PushInput = { rows: unknown[] };

type Sorted = { errors: RowError[]; repeats: number; skippedClosed: number; open: PushRow[] };

/** Judges every row and sets aside repeats within the batch and rows in the closed books. */
async function sortRows(tx: Queryable, spaceId: string, input: PushInput): Promise<Sorted> {
  const errors: RowError[] = [];
  const valid: PushRow[] = [];
  input.rows.forEach((raw, index) => {
    const result = validateRow(raw, index);
    if (result.ok) valid.push(result.row);
    else errors.push(result.error);
  });
  const { first, repeats } = splitRepeats(valid);
  const closed = await closedThrough(tx, spaceId);
  const open = first.filter((row) => !inClosedPeriod(row, closed));
  return { errors, repeats: repeats.length, skippedClosed: first.length - open.length, open };
}

/**
 * Claims the rows' external_ids for this batch, in external_id order so two batches with the
 * same rows lock them in the same order; answers the rows no earlier batch filed.
 */
async function claimRows(
  tx: Queryable,
  claim: { spaceId: string; sourceId: string; batchId: string },
  rows: PushRow[],
) {
  const sorted = [...rows].sort((a, b) =>
    a.externalId < b.externalId ? -1 : a.externalId > b.externalId ? 1 : 0,
  );
  const entryIds = new Map(sorted.map((row) => [row.externalId, uuidv7()]));
  const claimed = await store.claimExternalIds(
    tx,
    sorted.map((row) => ({
      ...claim,
      pushSourceId: claim.sourceId,
      externalId: row.externalId,
      entryId: entryIds.get(row.externalId)!,
    })),
  );
  return { fresh: sorted.filter((row) => claimed.has(row.externalId)), entryIds };
}

/** Keeps the rows the allowance admits and whose account holds their currency; frees the others' ids. */
async function admitRows(
  tx: Queryable,
  deps: PushDeps,
  batch: {
    spaceId: string;
    sourceId: string;
    month: string;
    errors: RowError[];
    entryIds: Map<string, string>;
  },
  fresh: PushRow[],
) {
  const { admitted, beyond } = await applyAllowance(tx, batch.spaceId, fresh, batch.month);
  for (const row of beyond) {
    batch.errors.push({
      index: row.index,
      external_id: row.externalId,
      error: 'allowance_exceeded',
      detail: "The month's allowance of synced rows is used up.",
    });
  }
  const wanted = admitted.map((row) => ({ key: row.accountKey, currency: row.currency }));
  const accounts = await resolvePushAccounts(tx, deps.clock, batch.spaceId, batch.sourceId, wanted);
  const booked: Booked[] = [];
  const refused: PushRow[] = [...beyond];
  for (const row of admitted) {
    const account = accounts.get(row.accountKey)!;
    if (account.currency === row.currency) {
      booked.push({ row, account, entryId: batch.entryIds.get(row.externalId)! });
      continue;
    }
    refused.push(row);
    const detail = `The account ${row.accountKey} holds ${account.currency}, not ${row.currency}.`;
    batch.errors.push({ index: row.index, external_id: row.externalId, error: 'currency_mismatch', detail });
  }
  await store.releaseExternalIds(
    tx,
    batch.sourceId,
    refused.map((row) => row.externalId),
  );
  return { booked, accounts };
}

/**
 * Files one call's rows as one batch. Every row is judged alone; the good ones book with origin
 * import, each external_id once per source (also against a concurrent batch), nothing dated in
 * the closed books, nothing beyond the month's allowance.
 */
export async function pushRows(tx: Queryable, deps: PushDeps, caller: IntegrationCaller, input: PushInput) {
  const sourceId = caller.pushSourceId;
  if (sourceId === null) {
    throw new AppError(
      'forbidden',
      'This key is bound to no push source; issue a transactions key with push_source.',
    );
  }
  const at = deps.clock.now();
  const batchId = randomUUID();
  const spaceId = caller.spaceId;
  const sorted = await sortRows(tx, spaceId, input);
  await store.insertBatch(tx, {
    id: batchId,
    spaceId,
    pushSourceId: sourceId,
    keyId: caller.keyId,
    rowsTotal: input.rows.length,
    at,
  });
  const { fresh, entryIds } = await claimRows(tx, { spaceId, sourceId, batchId }, sorted.open);
  const month = monthOf(at);
  const { booked, accounts } = await admitRows(
    tx,
    deps,
    { spaceId, sourceId, month, errors: sorted.errors, entryIds },
    fresh,
  );
  const counts = {
    duplicates: sorted.repeats + sorted.open.length - fresh.length,
    skippedClosed: sorted.skippedClosed,
  };
  return finishBatch(tx, {
    caller,
    sourceId,
    batchId,
    at,
    month,
    booked,
    accounts,
    errors: sorted.errors,
    counts,
  });
}

async function finishBatch(
  tx: Queryable,
  batch: {
    caller: IntegrationCaller;
    sourceId: string;
    batchId: string;
    at: Date;
    month: string;
    booked: Booked[];
    accounts: Map<string, PushAccount>;
    errors: RowError[];
    counts: { duplicates: number; skippedClosed: number };
  },
) {
  const { caller, booked, at } = batch;
  const drafts = await draftsFor(tx, caller.spaceId, batch.sourceId, booked, at);
  // The events' document is written while the database files the postings.
  let events = '[]';
  await postEntries(tx, drafts, at, () => {
    events = eventDocument(
      drafts.map((draft, index) =>
        moneyEvent(caller.spaceId, booked[index]!.account.id, draft.id!, draft, at),
      ),
    );
  });
  await insertEventDocument(tx, events);
  const usedKeys = new Set(booked.map((item) => item.account.key));
  const created = [...batch.accounts.values()]
    .filter((account) => account.created && usedKeys.has(account.key))
    .map((account) => account.key);
  const result = {
    booked: booked.length,
    duplicates: batch.counts.duplicates,
    skipped_closed: batch.counts.skippedClosed,
    rejected: batch.errors.length,
    accounts_created: created,
  };
  await store.recordBatch(tx, {
    id: batch.batchId,
    spaceId: caller.spaceId,
    month: batch.month,
    counts: result,
  });
  return { batch_id: batch.batchId, ...result, errors: [...batch.errors].sort((a, b) => a.index - b.index) };
}

/** Undoes a batch whole: its entries are reversed by new entries and its external_ids freed. */
export async function undoBatch(deps: PushDeps, userId: string, spaceId: string, batchId: string) {
  await requireAdministrator(deps.db, spaceId, userId);
  return deps.db.transaction().execute(async (tx) => {
    const batch = await store.lockBatch(tx, spaceId, batchId);
    if (!batch) throw new AppError('not_found', 'No such batch in this space.');
    if (batch.status === 'undone')
      throw new AppError('conflict', 'This batch was undone already.', {
        undone_at: batch.undone_at?.toISOString(),
      });
    const rows = await store.batchRows(tx, batchId);
    const closed = await closedThrough(tx, spaceId);
    const locked = rows.filter((row) => closed !== null && row.occurred_on <= closed);
    if (locked.length > 0) {
      throw new AppError(
        'period_closed',
        `${locked.length} rows of this batch fall in the books closed through ${closed}.`,
        { closed_through: closed },
      );
    }
    const at = deps.clock.now();
    const reversed = await reverseEntries(
      tx,
      spaceId,
      rows.map((row) => row.entry_id),
      at,
      `Undo of push batch ${batchId}`,
    );
    const accountIds = await accountIdsOfEntries(
      tx,
      reversed.map((item) => item.draft),
    );
    await enqueueEvents(
      tx,
      reversed.map((item, index) => moneyEvent(spaceId, accountIds[index]!, item.entryId, item.draft, at)),
    );
    await store.releaseExternalIds(
      tx,
      batch.push_source_id,
      rows.map((row) => row.external_id),
    );
    await store.markUndone(tx, batchId, at);
    return { batch_id: batchId, status: 'undone', reversed: rows.length, undone_at: at.toISOString() };
  });
}

/** The user account behind each reversal's asset posting (asset ledger accounts are keyed by account id). */
async function accountIdsOfEntries(tx: Queryable, drafts: EntryDraft[]): Promise<string[]> {
  const ids = [
    ...new Set(
      drafts.map(
        (draft) =>
          draft.postings.find(
            (posting) => posting.account.normalSide === 'debit' && posting.account.tracksBalance,
          )!.account.id,
      ),
    ),
  ];
  const rows =
    ids.length === 0
      ? []
      : await tx
          .selectFrom('accounts')
          .select(['id', 'ledger_account_id'])
          .where('ledger_account_id', 'in', ids)
          .execute();
  const byLedger = new Map(rows.map((row) => [row.ledger_account_id, row.id]));
  return drafts.map(
    (draft) => byLedger.get(draft.postings.find((posting) => posting.account.tracksBalance)!.account.id)!,
  );
}

export async function listBatches(
  deps: PushDeps,
  userId: string,
  spaceId: string,
  source: string | undefined,
) {
  await requireAdministrator(deps.db, spaceId, userId);
  const rows = await store.listBatches(deps.db, spaceId, source);
  return rows.map((row) => ({
    id: row.id,
    push_source: row.push_source,
    status: row.status,
    rows_total: row.rows_total,
    booked: row.booked,
    duplicates: row.duplicates,
    skipped_closed: row.skipped_closed,
    rejected: row.rejected,
    accounts_created: row.accounts_created,
    created_at: row.created_at.toISOString(),
    undone_at: row.undone_at ? row.undone_at.toISOString() : null,
  }));
}
