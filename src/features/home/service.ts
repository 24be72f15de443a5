import type { Clock } from '../../core/clock.ts';
import { utcDateOf } from '../../core/day.ts';
import { canAdminister, canWrite } from '../../core/roles.ts';
import type { Db } from '../../platform/db/database.ts';
import type { Member } from '../../platform/http/member.ts';
import { listAccountsInApp } from '../accounts/index.ts';
import { listProposals } from '../agents/index.ts';
import { laggingNetworks } from '../chain-watch/index.ts';
import { lowGasWallets } from '../gas-wallets/index.ts';
import { hasAnyDocument, overdueTotals } from '../invoices/index.ts';
import { hasAnyKey } from '../keys/index.ts';
import { incomeByDay } from '../ledger/index.ts';
import { hasAnyRequest, openRequestTotals } from '../payment-requests/index.ts';
import { awaitingApprovalBy } from '../payouts/index.ts';
import { hasSecondMember, sellerProfileOf } from '../spaces/index.ts';
import { failingSubscriptions } from '../webhooks/index.ts';
import { type Checklist, checklistOf, seriesOf, WINDOWS, windowStart } from './domain.ts';
import * as store from './store.ts';

// Home: the first screen of a book. Every figure is asked of the feature that owns it (its
// summary read, or the same service its screen calls), each bounded by an index range of the
// book; nothing here reads another feature's table.

export type HomeDeps = { db: Db; clock: Clock };

/** How long the chain watch may stand still before Home warns. */
export const WATCH_LAG_MS = 10 * 60_000;

/** How many proposals and accounts Home lists before it links to their screen. */
const SHOWN = 5;

export async function readHome(deps: HomeDeps, member: Member) {
  const spaceId = member.spaceId;
  const now = deps.clock.now();
  const today = utcDateOf(now);
  const longest = WINDOWS[WINDOWS.length - 1] ?? 30;
  const accountsRead = listAccountsInApp(deps, member, {});
  const [income, accounts, open, overdue, approvals, proposals, failing, lagging, lowGas, checklist] =
    await Promise.all([
      incomeByDay(deps.db, spaceId, windowStart(today, longest)),
      accountsRead,
      openRequestTotals(deps.db, spaceId, now),
      overdueTotals(deps.db, spaceId, today),
      awaitingApprovalBy(deps, member),
      listProposals(deps, member.userId, spaceId, 'pending'),
      canAdminister(member.role) ? failingSubscriptions(deps.db, spaceId) : Promise.resolve([]),
      laggingNetworks(deps.db, now, WATCH_LAG_MS),
      // The stored balance of the gas wallet's lanes (the periodic check writes it; never the chain).
      canAdminister(member.role) ? lowGasWallets(deps.db) : Promise.resolve([]),
      checklistFor(
        deps,
        member,
        // Never rejects on its own: a failed read of the accounts fails Home through `accountsRead`.
        accountsRead.then(
          (page) => page.items.length > 0,
          () => false,
        ),
      ),
    ]);
  return {
    today,
    moneyIn: seriesOf(income, today),
    accounts: { items: accounts.items, more: accounts.next_cursor !== null },
    openRequests: open,
    overdueInvoices: overdue,
    approvals,
    proposals: { count: proposals.length, items: proposals.slice(0, SHOWN) },
    failing,
    lagging,
    lowGas,
    checklist,
  };
}

export type Home = Awaited<ReturnType<typeof readHome>>;

/** The first-steps checklist, or null when this person hid it, every step is done, or they only read. */
async function checklistFor(
  deps: HomeDeps,
  member: Member,
  hasAccount: Promise<boolean>,
): Promise<Checklist | null> {
  if (!canWrite(member.role)) return null;
  const spaceId = member.spaceId;
  if (await store.isChecklistDismissed(deps.db, spaceId, member.userId)) return null;
  const [profile, account, key, request, document, second] = await Promise.all([
    sellerProfileOf(deps.db, spaceId),
    hasAccount,
    hasAnyKey(deps.db, spaceId),
    hasAnyRequest(deps.db, spaceId),
    hasAnyDocument(deps.db, spaceId),
    hasSecondMember(deps.db, spaceId),
  ]);
  const checklist = checklistOf({
    profile: profile.legal_name !== '',
    account,
    key,
    requestOrInvoice: request || document,
    member: second,
  });
  return checklist.allDone ? null : checklist;
}

/** Hides the checklist on this book for this person, for good. */
export async function dismissChecklist(deps: HomeDeps, member: Member): Promise<void> {
  await store.dismissChecklist(deps.db, member.spaceId, member.userId, deps.clock.now());
}
