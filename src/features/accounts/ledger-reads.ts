import { AppError } from '../../core/errors.ts';
import type { Db } from '../../platform/db/database.ts';
import {
  entryWithPostings,
  ledgerAccountIdsOf,
  listEntriesWithPostings,
  type PageInput,
} from '../ledger/index.ts';
import { requireRole } from '../spaces/index.ts';
import * as store from './store.ts';

// The Ledger screen's reads (any member): entries with their postings, filtered by one of the
// book's accounts and by the day they occurred. The ledger itself knows no spaces' roles.

export type LedgerReadsDeps = { db: Db };

export async function listLedgerEntries(
  deps: LedgerReadsDeps,
  userId: string,
  spaceId: string,
  filter: PageInput & { accountId?: string | undefined; from?: string | undefined; to?: string | undefined },
) {
  await requireRole(deps.db, spaceId, userId);
  if (filter.from !== undefined && filter.to !== undefined && filter.from > filter.to)
    throw new AppError('invalid_request', 'from must not be after to.', { field: 'from' });
  let ledgerAccountIds: string[] | undefined;
  if (filter.accountId !== undefined) {
    if (!(await store.findAccount(deps.db, spaceId, filter.accountId)))
      throw new AppError('account_not_found', 'No account with this id in this space.', {
        account_id: filter.accountId,
      });
    ledgerAccountIds = await ledgerAccountIdsOf(deps.db, spaceId, 'asset', filter.accountId);
  }
  return listEntriesWithPostings(deps.db, spaceId, { ...filter, ledgerAccountIds });
}

export async function readLedgerEntry(
  deps: LedgerReadsDeps,
  userId: string,
  spaceId: string,
  entryId: string,
) {
  await requireRole(deps.db, spaceId, userId);
  const entry = await entryWithPostings(deps.db, spaceId, entryId);
  if (!entry) throw new AppError('not_found', 'No ledger entry with this id in this space.');
  return entry;
}
