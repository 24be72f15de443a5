import { randomUUID } from 'node:crypto';
import { defined } from '../../core/assert.ts';
import type { Clock } from '../../core/clock.ts';
import { decodeCursor, PAGE_SIZE, pageOf } from '../../core/cursor.ts';
import { AppError } from '../../core/errors.ts';
import { asAmount } from '../../core/money.ts';
import { uuidv7 } from '../../platform/crypto.ts';
import type { Db, Queryable } from '../../platform/db/database.ts';
import type { IntegrationCaller } from '../../platform/http/context.ts';
import { type MoneyMove, moneyIn, moneyOut } from '../../platform/outbox/events.ts';
import {
  eventGroup,
  eventGroupInsert,
  insertEventGroup,
  type OutboxEvent,
} from '../../platform/outbox/outbox.ts';
import { type PushAccount, resolvePushAccounts } from '../accounts/index.ts';
import {
  decrease,
  type EntryDraft,
  ensureLedgerAccounts,
  fileEntries,
  increase,
  type LedgerAccountRef,
  type LedgerAccountSpec,
  ledgerAccountSpecs,
  type PreparedEntries,
  prepareEntries,
  reverseEntries,
} from '../ledger/index.ts';
import {
  closedThrough,
  filingTermsQuery,
  inClosedPeriod,
  requireAdministrator,
  syncedRowsAllowance,
} from '../spaces/index.ts';
import { monthOf, type PushRow, type RowError, rowsLeft, splitRepeats, validateRow } from './domain.ts';
import * as store from './store.ts';

export type PushDeps = { db: Db; clock: Clock };

type Booked = { row: PushRow; account: PushAccount; entryId: string };

type LedgerRefs = Map<string, LedgerAccountRef>;
const counterKey = (row: PushRow, account: PushAccount) =>
  `${row.amount > 0n ? 'in' : 'out'}:${account.currency}`;

/** The ledger accounts the rows post to: a batch names a handful, each asked for once. */
async function ledgerRefsFor(
  tx: Queryable,
  spaceId: string,
  sourceId: string,
  rows: Booked[],
  at: Date,
): Promise<LedgerRefs> {
  const ref = `import:${sourceId}`;
  const specs = new Map<string, LedgerAccountSpec>();
  for (const { row, account } of rows) {
    const where = { spaceId, currency: account.currency, at };
    if (!specs.has(account.id))
      specs.set(account.id, ledgerAccountSpecs.asset({ ...where, accountId: account.id }));
    const side = counterKey(row, account);
    if (!specs.has(side))
      specs.set(
        side,
        row.amount > 0n
          ? ledgerAccountSpecs.otherIncome({ ...where, ref })
          : ledgerAccountSpecs.expense({ ...where, ref }),
      );
  }
  const refs = await ensureLedgerAccounts(tx, [...specs.values()]);
  return new Map(
    [...specs.keys()].map((key, index) => [key, defined(refs[index], 'a ledger account asked for')]),
  );
}

/** Ledger entries for pushed rows: money in against import income, money out against import expense. */
function draftsWith(refs: LedgerRefs, spaceId: string, rows: Booked[]): EntryDraft[] {
  return rows.map(({ row, account, entryId }) => {
    const asset = defined(refs.get(account.id), "a pushed row's asset ledger account");
    const counter = defined(refs.get(counterKey(row, account)), "a pushed row's counter ledger account");
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

/** A batch's filing, checked and spelled: what finishBatch writes. */
type Filing = { booked: Booked[]; drafts: EntryDraft[]; prepared: PreparedEntries };

async function filingOf(
  tx: Queryable,
  spaceId: string,
  sourceId: string,
  booked: Booked[],
  at: Date,
): Promise<Filing> {
  const drafts = draftsWith(await ledgerRefsFor(tx, spaceId, sourceId, booked, at), spaceId, booked);
  return { booked, drafts, prepared: prepareEntries(drafts, at) };
}

/** money.in or money.out for a row's entry (or, `reversed`, for the entry undoing it). */
function moneyEvent(
  spaceId: string,
  accountId: string,
  entryId: string,
  draft: EntryDraft,
  at: Date,
  reversed = false,
): OutboxEvent {
  const first = defined(draft.postings[0], "an entry's first posting");
  const signed = first.amount;
  const move: MoneyMove = {
    transaction_id: entryId,
    account_id: accountId,
    amount: asAmount(signed < 0n ? -signed : signed),
    currency: first.account.currency,
    kind: draft.kind,
    origin: 'import',
    occurred_on: draft.occurredOn,
  };
  const increases = reversed ? signed < 0n : signed > 0n;
  return increases ? moneyIn({ spaceId, at }, move) : moneyOut({ spaceId, at }, move);
}

/** Sorts claimed rows into those the month's allowance admits and those beyond it. */
function applyAllowance(rows: PushRow[], left: number) {
  const inOrder = [...rows].sort((a, b) => a.index - b.index);
  return { admitted: inOrder.slice(0, left), beyond: inOrder.slice(left) };
}

export type PushInput = { rows: unknown[] };

type Judged = { errors: RowError[]; repeats: number; first: PushRow[] };
type Sorted = { errors: RowError[]; repeats: number; skippedClosed: number; open: PushRow[] };

/** Judges every row and sets aside repeats within the batch (pure). */
function judgeRows(input: PushInput): Judged {
  const errors: RowError[] = [];
  const valid: PushRow[] = [];
  input.rows.forEach((raw, index) => {
    const result = validateRow(raw, index);
    if (result.ok) valid.push(result.row);
    else errors.push(result.error);
  });
  const { first, repeats } = splitRepeats(valid);
  return { errors, repeats: repeats.length, first };
}

/** Sets aside the rows dated inside the closed books. */
function sortRows(judged: Judged, closed: string | null): Sorted {
  const open = judged.first.filter((row) => !inClosedPeriod(row.occurredOn, closed));
  const skippedClosed = judged.first.length - open.length;
  return { errors: judged.errors, repeats: judged.repeats, skippedClosed, open };
}

/** Keeps the rows the allowance admits and whose account holds their currency. */
async function admitRows(
  tx: Queryable,
  deps: PushDeps,
  batch: { spaceId: string; sourceId: string; left: number; errors: RowError[] },
  fresh: PushRow[],
) {
  const { admitted, beyond } = applyAllowance(fresh, batch.left);
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
  for (const row of admitted) {
    const account = defined(accounts.get(row.accountKey), "a pushed row's account");
    if (account.currency === row.currency) {
      booked.push({ row, account, entryId: uuidv7() });
      continue;
    }
    const detail = `The account ${row.accountKey} holds ${account.currency}, not ${row.currency}.`;
    batch.errors.push({ index: row.index, external_id: row.externalId, error: 'currency_mismatch', detail });
  }
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
  const month = monthOf(at);
  const judged = judgeRows(input);
  // One statement opens the batch: the source's and the month's locks, the batch's row, and the
  // space's plan and closed date.
  const batchRow = { id: batchId, spaceId, pushSourceId: sourceId, keyId: caller.keyId, at, month };
  const opened = await store.openBatch(
    tx,
    { ...batchRow, rowsTotal: input.rows.length },
    filingTermsQuery(tx, spaceId),
  );
  if (opened === undefined) throw new AppError('not_found', 'No such space.');
  const sorted = sortRows(judged, opened.closed_through);
  const left = rowsLeft(syncedRowsAllowance(opened.plan), opened.rows_booked);
  // After the source's lock, what it filed before is known before anything is written.
  const filed = await store.filedExternalIds(
    tx,
    sourceId,
    sorted.open.map((row) => row.externalId),
  );
  const fresh = sorted.open.filter((row) => !filed.has(row.externalId));
  const { booked, accounts } = await admitRows(
    tx,
    deps,
    { spaceId, sourceId, left, errors: sorted.errors },
    fresh,
  );
  return finishBatch(tx, {
    caller,
    sourceId,
    batchId,
    at,
    month,
    errors: sorted.errors,
    counts: { duplicates: sorted.repeats + filed.size, skippedClosed: sorted.skippedClosed },
    filing: await filingOf(tx, spaceId, sourceId, booked, at),
    accounts,
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
    filing: Filing;
    accounts: Map<string, PushAccount>;
    errors: RowError[];
    counts: { duplicates: number; skippedClosed: number };
  },
) {
  const { caller, at } = batch;
  const { booked, drafts } = batch.filing;
  await fileEntries(tx, batch.filing.prepared);
  const pushRows = store.pushRowsDocument(
    booked.map(({ row, entryId }) => ({ externalId: row.externalId, entryId })),
  );
  const events = eventGroup(
    booked.map(({ account, entryId }, index) =>
      moneyEvent(caller.spaceId, account.id, entryId, defined(drafts[index], "a booked row's entry"), at),
    ),
  );
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
  const record = {
    id: batch.batchId,
    pushSourceId: batch.sourceId,
    spaceId: caller.spaceId,
    month: batch.month,
  };
  const errors = [...batch.errors].sort((a, b) => a.index - b.index);
  await store.recordBatch(
    tx,
    { ...record, counts: result },
    pushRows,
    events && eventGroupInsert(tx, events),
    store.rejectionsDocument(errors),
  );
  return { batch_id: batch.batchId, ...result, errors };
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
    // Share-locked as a batch's filing terms: a closing in flight is waited for and its date
    // read, and a closing that comes later waits for this undo to commit.
    const closed = await closedThrough(tx, spaceId);
    const locked = rows.filter((row) => inClosedPeriod(row.occurred_on, closed));
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
    await insertEventGroup(
      tx,
      eventGroup(
        reversed.map((item, index) =>
          moneyEvent(
            spaceId,
            defined(accountIds[index], "a reversal's account"),
            item.entryId,
            item.draft,
            at,
          ),
        ),
      ),
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
          defined(
            draft.postings.find(
              (posting) => posting.account.normalSide === 'debit' && posting.account.tracksBalance,
            ),
            "a reversal's asset posting",
          ).account.id,
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
  return drafts.map((draft) => {
    const asset = defined(
      draft.postings.find((posting) => posting.account.tracksBalance),
      "a reversal's asset posting",
    );
    return defined(byLedger.get(asset.account.id), "the account of a reversal's asset posting");
  });
}

type BatchRow = Awaited<ReturnType<typeof store.listBatches>>[number];

function presentBatch(row: BatchRow) {
  return {
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
  };
}

/** A book's pushed batches (of one source when named), newest first, 50 a page (app API and page). */
export async function listBatches(
  deps: PushDeps,
  userId: string,
  spaceId: string,
  query: { push_source?: string | undefined; cursor?: string | undefined },
) {
  await requireAdministrator(deps.db, spaceId, userId);
  const before = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  if (query.cursor !== undefined && before === undefined) {
    throw new AppError('invalid_request', 'The cursor is not one this list gave out.', { field: 'cursor' });
  }
  const rows = await store.listBatches(deps.db, spaceId, {
    sourceName: query.push_source,
    before,
    limit: PAGE_SIZE + 1,
  });
  const page = pageOf(rows, (row) => ({ at: row.created_at, id: row.id }));
  return { items: page.items.map(presentBatch), next_cursor: page.next_cursor };
}

/** One batch with the rows it refused and why (at most the 500 a batch holds). */
export async function batchRejections(deps: PushDeps, userId: string, spaceId: string, batchId: string) {
  await requireAdministrator(deps.db, spaceId, userId);
  const batch = await store.findBatch(deps.db, spaceId, batchId);
  if (!batch) throw new AppError('not_found', 'No such batch in this space.');
  const rows = await store.batchRejections(deps.db, spaceId, batchId);
  return {
    batch: presentBatch(batch),
    items: rows.map((row) => ({
      index: row.row_index,
      external_id: row.external_id,
      error: row.error,
      detail: row.detail,
    })),
  };
}
