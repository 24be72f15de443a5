import type { Db } from '../../platform/db/database.ts';
import type { Member } from '../../platform/http/member.ts';
import { actionRefusal } from './domain.ts';
import { actionSubject } from './service.ts';
import * as store from './store.ts';

// Payments out on the Home screen: those waiting for this person's approval. Who may approve is
// the domain's rule (actionRefusal), the same the Approve button and the service refuse by; the
// newest `limit` waiting payments are asked (payouts_status_idx), so the read stays bounded.

export type AwaitingMe = { id: string; amount: string; currency: string; payee: string; createdAt: Date };

export async function awaitingApprovalBy(
  deps: { db: Db },
  member: Member,
  limit = 50,
): Promise<{ items: AwaitingMe[]; more: boolean }> {
  const rows = await store.listPayouts(deps.db, {
    spaceId: member.spaceId,
    status: 'awaiting_approval',
    after: undefined,
    limit: limit + 1,
  });
  const shown = rows.slice(0, limit);
  const approvals = await store.approvalsOf(
    deps.db,
    member.spaceId,
    shown.map((row) => row.id),
  );
  const actor = { userId: member.userId, role: member.role };
  const items = shown
    .filter((row) => {
      const by = approvals
        .filter((approval) => approval.payout_id === row.id)
        .map((approval) => approval.user_id);
      return actionRefusal('approve', actionSubject(row, by), actor) === undefined;
    })
    .map((row) => ({
      id: row.id,
      amount: row.amount,
      currency: row.currency,
      payee: row.payee,
      createdAt: row.created_at,
    }));
  return { items, more: rows.length > limit };
}
