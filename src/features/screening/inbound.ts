import type { Queryable } from '../../platform/db/database.ts';
import { insertNotification } from '../notifications/index.ts';
import { listOwnerIds } from '../spaces/index.ts';
import { payerListed } from './service.ts';
import * as store from './store.ts';

// Money that arrives from a listed sender by a direct transfer is on the chain already: it is
// booked like any other, and flagged here for the owners to decide what to do with it (the
// x402 roads refuse a listed payer before anything settles; see x402/).

/** How many flagged transfers the Screening page shows. */
export const FLAGGED_SHOWN = 50;

export type InboundTransfer = {
  spaceId: string;
  transferId: string;
  /** The sender's address. */
  payer: string;
  /** The ledger entries the transfer made (settlements and income). */
  entryIds: string[];
  amount: string;
  currency: string;
  txHash: string;
  at: Date;
};

/**
 * Screens a booked transfer's sender; when listed, records the flag with the entry it matched and
 * notifies the space's owners, in the caller's transaction. Answers whether it flagged. The
 * notification names the listed entry, the amount and the transaction, not the address.
 */
export async function flagInboundTransfer(tx: Queryable, transfer: InboundTransfer): Promise<boolean> {
  const hit = await payerListed(tx, transfer.payer);
  if (hit === undefined) return false;
  const recorded = await store.insertInboundFlag(tx, {
    spaceId: transfer.spaceId,
    transferId: transfer.transferId,
    sdnUid: hit.sdnUid,
    listed: hit.listed,
    programs: hit.programs,
    matched: hit.matched,
    source: hit.source,
    at: transfer.at,
    entryIds: transfer.entryIds,
  });
  if (!recorded) return false;
  for (const userId of await listOwnerIds(tx, transfer.spaceId)) {
    await insertNotification(tx, {
      spaceId: transfer.spaceId,
      userId,
      kind: 'listed_sender_transfer',
      subjectId: transfer.transferId,
      payload: {
        listed: hit.listed,
        programs: hit.programs,
        amount: transfer.amount,
        currency: transfer.currency,
        transaction: transfer.txHash,
      },
      at: transfer.at,
    });
  }
  return true;
}

export type InboundFlag = Awaited<ReturnType<typeof store.inboundFlagsOf>>[number];

/** The space's transfers in from listed senders, newest first (the Screening page). */
export function inboundFlags(db: Queryable, spaceId: string): Promise<InboundFlag[]> {
  return store.inboundFlagsOf(db, spaceId, FLAGGED_SHOWN);
}

export type FlaggedEntry = { transfer_id: string; sdn_uid: string; listed: string; programs: string };

/** The flag on each of these ledger entries a transfer from a listed sender made, by entry id. */
export async function flaggedEntries(
  db: Queryable,
  spaceId: string,
  entryIds: string[],
): Promise<Map<string, FlaggedEntry>> {
  const rows = await store.flaggedEntriesOf(db, spaceId, entryIds);
  return new Map(rows.map(({ entry_id, ...flag }) => [entry_id, flag]));
}

/**
 * How many payments from listed senders each income row holds, keyed `ref|day|currency`, for
 * rows of these days.
 */
export async function flaggedIncomeRows(db: Queryable, spaceId: string, days: string[]) {
  const rows = await store.flaggedIncomeRowsOf(db, spaceId, [...new Set(days)]);
  return new Map(rows.map((row) => [`${row.ref}|${row.day}|${row.currency}`, Number(row.flagged)]));
}
