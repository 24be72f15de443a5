import { randomUUID } from 'node:crypto';
import { type AmountE8, formatAmount } from '../../core/money.ts';
import type { Queryable } from '../../platform/db/database.ts';
import type { Rider } from '../../platform/db/rider.ts';
import { readAmount } from '../ledger/index.ts';
import { type OpenShare, type OpenSource, openChange, openShareOf } from './domain.ts';
import * as store from './store.ts';

// A book's open payment requests, pre-summed per currency (migrations/0440_open_request_sums.sql).
// Every service write that changes a request's share (the mint, a lapsed ask a mint takes over,
// receipts, reversals, cancels and the lapse job) files its change here, in the same
// transaction, or as a rider of the settlement's entry; the settle-open-request-sums task moves
// the changes into the totals. The read sums both tables and takes off the active requests
// already past their deadline, in one statement, so it agrees with a count of the book's open
// requests whenever it runs (test/open-request-sums.test.ts holds it to that).

/** One write to a request: the request before it (null for a new one) and after it. */
export type RequestWrite = { before: store.OpenRow | null; after: store.OpenRow };

function sourceOf(row: store.OpenRow): OpenSource {
  return { status: row.status, due: readAmount(row.amount_due), received: readAmount(row.amount_received) };
}

function arrivalOf({ before, after }: RequestWrite): store.OpenArrival | null {
  const change = openChange(before && sourceOf(before), sourceOf(after));
  if (change === null) return null;
  return {
    id: randomUUID(),
    space_id: after.space_id,
    payment_request_id: after.id,
    currency: after.currency,
    requests: change.requests,
    open: formatAmount(change.open as AmountE8),
  };
}

/** Files what the writes did to the open sums, in the caller's transaction. */
export function fileOpenChanges(db: Queryable, writes: RequestWrite[]): Promise<void> {
  return store.insertOpenArrivals(
    db,
    writes.flatMap((write) => arrivalOf(write) ?? []),
  );
}

/** Files what a lapse did: each request it answers was active, and is cancelled now. */
export function fileLapses(db: Queryable, lapsed: store.OpenRow[]): Promise<void> {
  return fileOpenChanges(
    db,
    lapsed.map((after) => ({ before: { ...after, status: 'active' as const }, after })),
  );
}

/**
 * A receipt's change to the open sums as riders of the settlement's ledger entry, filed exactly
 * when the entry is (and so when the receipt it carries is): one, or none when the receipt
 * leaves the sums as they were.
 */
export function openChangeRiders(write: RequestWrite): Rider[] {
  const arrival = arrivalOf(write);
  return arrival === null ? [] : [store.openArrivalRider(arrival)];
}

export type OpenTotal = { currency: string; count: number; open: bigint };

/** A book's active requests not yet lapsed, per currency: how many, and what they still wait for. */
export async function openRequestTotals(db: Queryable, spaceId: string, now: Date): Promise<OpenTotal[]> {
  const totals = new Map<string, OpenShare>();
  for (const row of await store.openSumRows(db, spaceId, now)) {
    const total = totals.get(row.currency) ?? { requests: 0, open: 0n };
    if (row.requests !== null) {
      total.requests += Number(row.requests);
      total.open += readAmount(row.open);
    } else {
      // Active but past its deadline: lapsed for readers, still counted by the sums until the
      // lapse job cancels it.
      const lapsed = openShareOf({
        status: 'active',
        due: readAmount(row.amount_due),
        received: readAmount(row.amount_received),
      });
      total.requests -= lapsed.requests;
      total.open -= lapsed.open;
    }
    totals.set(row.currency, total);
  }
  return [...totals.entries()]
    .filter(([, total]) => total.requests > 0)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([currency, total]) => ({ currency, count: total.requests, open: total.open }));
}

export { settleAllOpenSums } from './store.ts';
