import { type RawBuilder, sql } from 'kysely';
import { untilShort } from '../../platform/db/batches.ts';
import type { Queryable } from '../../platform/db/database.ts';

// Income per day, pre-summed (migrations/0400_income_days.sql). Every statement that files
// postings adds its income postings to ledger_income_arrivals (store.ts, `incomeArrivalsStep`;
// plain inserts, so a busy income account makes no hot row); `settleIncomeDays` moves arrivals
// into ledger_income_days in one statement, deleting them and adding them to their day at once. Every read here sums both
// tables in one statement, so it sees each income posting exactly once, settled or not, and
// agrees with a plain sum over the postings (test/income-days.test.ts checks it).

/** How many arrivals one settling statement moves. */
export const SETTLE_BATCH = 5_000;

/**
 * Moves up to `batch` arrivals (any books) into their days, in one statement; answers how many
 * it moved. Safe in several processes at once: each claims its rows with SKIP LOCKED.
 */
export async function settleIncomeDays(db: Queryable, batch = SETTLE_BATCH): Promise<number> {
  const result = await sql<{ moved: string }>`
    WITH claimed AS (
      SELECT space_id, entry_id, ledger_account_id, currency FROM ledger_income_arrivals
      LIMIT ${batch} FOR UPDATE SKIP LOCKED
    ), moved AS (
      DELETE FROM ledger_income_arrivals x USING claimed c
      WHERE x.space_id = c.space_id AND x.entry_id = c.entry_id
        AND x.ledger_account_id = c.ledger_account_id AND x.currency = c.currency
      RETURNING x.space_id, x.day, x.ledger_account_id, x.currency, x.amount
    ), added AS (
      INSERT INTO ledger_income_days (space_id, day, ledger_account_id, currency, amount, entries)
      SELECT space_id, day, ledger_account_id, currency, SUM(amount), COUNT(*) FROM moved
      GROUP BY space_id, day, ledger_account_id, currency
      ON CONFLICT (space_id, day, ledger_account_id, currency) DO UPDATE
        SET amount = ledger_income_days.amount + excluded.amount,
          entries = ledger_income_days.entries + excluded.entries
    )
    SELECT COUNT(*)::text AS moved FROM moved`.execute(db);
  return Number(result.rows[0]?.moved ?? 0);
}

/** Settles every arrival there is, batch after batch, until a batch comes back short. */
export function settleAllIncomeDays(db: Queryable, batch = SETTLE_BATCH): Promise<number> {
  return untilShort(batch, (size) => settleIncomeDays(db, size));
}

/** Both tables' rows of one book from a day on (and up to a day), as one set (the caller groups them). */
function incomeRowsFrom(spaceId: string, fromDay: RawBuilder<unknown>, toDay?: string) {
  const upTo = toDay === undefined ? sql`` : sql`AND day <= ${toDay}::date`;
  return sql`(
    SELECT day, ledger_account_id, currency, amount, entries FROM ledger_income_days
    WHERE space_id = ${spaceId} AND day >= ${fromDay} ${upTo}
    UNION ALL
    SELECT day, ledger_account_id, currency, amount, 1 FROM ledger_income_arrivals
    WHERE space_id = ${spaceId} AND day >= ${fromDay} ${upTo}
  )`;
}

/** Income per day and currency on and after `fromDay`, summed over the book's income accounts, signed. */
export async function incomeTotalsFrom(db: Queryable, spaceId: string, fromDay: string) {
  const result = await sql<{ day: string; currency: string; signed: string }>`
    SELECT f.day::text AS day, f.currency, SUM(f.amount)::text AS signed
    FROM ${incomeRowsFrom(spaceId, sql`${fromDay}::date`)} f
    GROUP BY f.day, f.currency
    ORDER BY f.day, f.currency`.execute(db);
  return result.rows;
}

export type IncomeDayRow = { ref: string; currency: string; day: string; signed: string; entries: string };

/**
 * The Income screen's rows: per income account (by its ref), currency and day, the sum of its
 * postings and how many entries made it. Ordered by day, then ref, then currency, all
 * descending; `after` is the key of the last row of the previous page. The page is read within
 * its days: the `limit + 1` newest settled rows on days before the key's day end on some day D,
 * and each is a row past the key, so the page's rows all lie between D and the key's day. That
 * bound walks the days' index backwards and stops, whatever the book's age. The accounts are
 * read by kind (income, the only kind with days), through the (space, kind, ref) key, so a book
 * with many client credits does not make the page read all its accounts.
 */
export async function incomeDayRows(
  db: Queryable,
  spaceId: string,
  filter: { ref?: string | undefined; after?: [string, string, string] | undefined; limit: number },
) {
  const after = filter.after;
  const ofRef = (column: string) =>
    filter.ref === undefined
      ? sql``
      : sql`AND ${sql.ref(column)} IN (SELECT id FROM ledger_accounts
          WHERE space_id = ${spaceId} AND kind = 'income' AND ref = ${filter.ref})`;
  const result = await sql<IncomeDayRow>`
    WITH bound AS (
      SELECT d.day FROM ledger_income_days d
      WHERE d.space_id = ${spaceId} ${after ? sql`AND d.day < ${after[0]}::date` : sql``} ${ofRef('d.ledger_account_id')}
      ORDER BY d.day DESC LIMIT 1 OFFSET ${filter.limit}
    )
    SELECT a.ref, f.currency, f.day::text AS day, SUM(f.amount)::text AS signed, SUM(f.entries)::text AS entries
    FROM ${incomeRowsFrom(spaceId, sql`COALESCE((SELECT day FROM bound), '-infinity'::date)`, after?.[0])} f
    JOIN ledger_accounts a ON a.id = f.ledger_account_id
    WHERE a.space_id = ${spaceId} AND a.kind = 'income' ${ofRef('a.id')}
      ${after ? sql`AND (f.day, a.ref, f.currency) < (${after[0]}::date, ${after[1]}, ${after[2]})` : sql``}
    GROUP BY a.ref, f.currency, f.day
    ORDER BY f.day DESC, a.ref DESC, f.currency DESC
    LIMIT ${filter.limit + 1}`.execute(db);
  return result.rows;
}

/**
 * The income days as kept (settled and arriving, summed per book, day, income account and
 * currency), for `tollbook ledger check` to hold against its own sums of the postings. One
 * statement, so a settling run cannot tear it; a row per income day, never per posting.
 */
export async function keptIncomeDays(db: Queryable, spaceId: string | undefined) {
  const inSpace = spaceId === undefined ? sql`true` : sql`space_id = ${spaceId}`;
  const result = await sql<{
    space_id: string;
    day: string;
    ledger_account_id: string;
    currency: string;
    amount: string;
    entries: string;
  }>`
    SELECT space_id, day::text AS day, ledger_account_id, currency, SUM(amount)::text AS amount,
      SUM(entries)::text AS entries
    FROM (
      SELECT space_id, day, ledger_account_id, currency, amount, entries FROM ledger_income_days WHERE ${inSpace}
      UNION ALL
      SELECT space_id, day, ledger_account_id, currency, amount, 1 FROM ledger_income_arrivals WHERE ${inSpace}
    ) both_tables
    GROUP BY space_id, day, ledger_account_id, currency`.execute(db);
  return result.rows;
}
