import type { Queryable } from '../../platform/db/database.ts';

// Event subscriptions on the Home screen: the ones whose receiver is failing or that were
// paused after failing. A book holds at most its plan's allowance of subscriptions.

export type FailingSubscription = { id: string; url: string; paused: boolean; failingSince: Date | null };

export async function failingSubscriptions(db: Queryable, spaceId: string): Promise<FailingSubscription[]> {
  const rows = await db
    .selectFrom('webhook_subscriptions')
    .select(['id', 'url', 'status', 'failing_since'])
    .where('space_id', '=', spaceId)
    .where((eb) => eb.or([eb('failing_since', 'is not', null), eb('status', '=', 'paused')]))
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    url: row.url,
    paused: row.status === 'paused',
    failingSince: row.failing_since,
  }));
}
