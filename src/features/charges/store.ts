import type { Queryable } from '../../platform/db/database.ts';

export async function insertCharge(
  db: Queryable,
  row: {
    id: string;
    space_id: string;
    client_credit_id: string;
    account_id: string;
    key_id: string | null;
    amount: string;
    currency: string;
    memo: string;
    resource_id: string | null;
    entry_id: string;
    created_at: Date;
  },
) {
  await db.insertInto('charges').values(row).execute();
}
