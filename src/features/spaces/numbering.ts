import type { Queryable } from '../../platform/db/database.ts';
import type { Static } from '../../platform/http/schema-kit.ts';
import { DEFAULT_PREFIXES, DOCUMENT_KINDS, type DocumentKind, documentNumber } from './domain.ts';
import type { NumberingOut, NumberingPatch } from './schemas.ts';
import { requireAdministering, requireMember, type SpacesDeps } from './service.ts';
import * as store from './store.ts';

// How a book numbers its documents: invoices, quotes and credit notes each with a prefix and a
// counter. Members read it, owners and admins set it; features/invoices takes numbers from it.

async function numberingOf(db: Queryable, spaceId: string): Promise<Static<typeof NumberingOut>> {
  const rows = await store.listNumbering(db, spaceId);
  const entry = (kind: DocumentKind) => {
    const row = rows.find((found) => found.kind === kind);
    const prefix = row?.prefix ?? DEFAULT_PREFIXES[kind];
    const nextNumber = (row?.last_value ?? 0) + 1;
    return { prefix, next_number: nextNumber, next: documentNumber(prefix, nextNumber) };
  };
  return { invoice: entry('invoice'), quote: entry('quote'), credit_note: entry('credit_note') };
}

/** GET …/numbering: any member. */
export async function getNumbering(deps: SpacesDeps, userId: string, spaceId: string) {
  await requireMember(deps.db, spaceId, userId);
  return numberingOf(deps.db, spaceId);
}

/**
 * PATCH …/numbering (owners and admins): a kind's prefix and the number its next document gets.
 * A generated number a live document already holds is skipped when it comes up, never reused.
 */
export async function updateNumbering(
  deps: SpacesDeps,
  userId: string,
  spaceId: string,
  patch: Static<typeof NumberingPatch>,
) {
  requireAdministering(await requireMember(deps.db, spaceId, userId));
  await deps.db.transaction().execute(async (tx) => {
    const current = await numberingOf(tx, spaceId);
    for (const kind of DOCUMENT_KINDS) {
      const change = patch[kind];
      if (change === undefined) continue;
      await store.setNumbering(tx, spaceId, kind, {
        prefix: change.prefix ?? current[kind].prefix,
        last_value: (change.next_number ?? current[kind].next_number) - 1,
      });
    }
  });
  return numberingOf(deps.db, spaceId);
}

/**
 * Inside the transaction that makes a document: the kind's next number, written out. The row
 * stays locked until that transaction ends (see store.takeNumber).
 */
export async function takeDocumentNumber(
  tx: Queryable,
  spaceId: string,
  kind: DocumentKind,
): Promise<string> {
  const taken = await store.takeNumber(tx, spaceId, kind, DEFAULT_PREFIXES[kind]);
  return documentNumber(taken.prefix, taken.last_value);
}
