import { sql } from 'kysely';
import type { Queryable } from '../../platform/db/database.ts';
import type { Rider } from '../../platform/db/rider.ts';

export type ChargeRow = {
  id: string;
  space_id: string;
  client_credit_id: string;
  account_id: string;
  key_id: string | null;
  amount: string;
  currency: string;
  memo: string;
  resource_id: string | null;
  created_at: Date;
};

/** The charge's row, written in its ledger entry's own statement (and only if the entry is). */
export function chargeRider(row: ChargeRow): Rider {
  return (entry) => sql`
    INSERT INTO charges (id, space_id, client_credit_id, account_id, key_id, amount, currency, memo,
      resource_id, entry_id, created_at)
    SELECT ${row.id}::uuid, ${row.space_id}::uuid, ${row.client_credit_id}::uuid, ${row.account_id}::uuid,
      ${row.key_id}::uuid, ${row.amount}::numeric, ${row.currency}::text, ${row.memo}::text,
      ${row.resource_id}::uuid, ${entry}.id, ${row.created_at}::timestamptz
    FROM ${entry}`;
}

/** The account the client's last call was charged to, or its last top-up asked on, if any. */
export async function lastTopUpAccount(db: Queryable, spaceId: string, clientCreditId: string) {
  const result = await sql<{ account_id: string }>`
    SELECT account_id FROM (
      (SELECT account_id, created_at FROM charges
        WHERE space_id = ${spaceId} AND client_credit_id = ${clientCreditId}
        ORDER BY created_at DESC LIMIT 1)
      UNION ALL
      (SELECT account_id, created_at FROM payment_requests
        WHERE space_id = ${spaceId} AND client_credit_id = ${clientCreditId}
        ORDER BY created_at DESC LIMIT 1)
    ) AS used ORDER BY created_at DESC LIMIT 1`.execute(db);
  return result.rows[0]?.account_id;
}
