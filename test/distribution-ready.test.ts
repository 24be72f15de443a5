import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './harness.ts';

// The schema stays ready to shard by space_id (docs/design/scale.md): a per-book table (one
// with a space_id column) keys its rows by space_id in its primary key or a unique key, and its
// foreign keys to other per-book tables carry space_id (co-location). Tables without space_id
// are global and listed here as reference tables. Tables that break a rule today are listed
// with the reason; the list only shrinks.

/** Global tables: replicated to every node (spaces is the distribution's own table, keyed by id). */
const REFERENCE_TABLES = [
  'attempt_throttles',
  'chain_cursors',
  'gas_wallet_balances',
  'password_resets',
  'rate_buckets',
  'schema_migrations',
  'screening_entries',
  'screening_lists',
  'sessions',
  'spaces',
  'stripe_events',
  'telegram_updates',
  'users',
  'x402_broadcasts',
  'x402_pending_transactions',
];

const KEY_TODO = 'keyed by id alone; a UNIQUE (space_id, …) key is a migration not yet written';
/** Per-book tables without a key that includes space_id, with the reason. */
const UNKEYED_ALLOWED: Record<string, string> = Object.fromEntries(
  [
    'agent_accounts',
    'agent_book_rows',
    'agent_spend',
    'card_checkouts',
    'card_intent_matches',
    'charges',
    'chat_link_codes',
    'contact_addresses',
    'idempotency_records',
    'integration_keys',
    'invoice_deliveries',
    'invoice_payments',
    'ledger_postings',
    'outbox_event_groups',
    'outbox_events',
    'payout_approvals',
    'payout_status_changes',
    'policy_rules',
    'push_rejections',
    'push_rows',
    'webhook_deliveries',
    'webhook_subscriptions',
  ].map((table) => [table, KEY_TODO]),
);
UNKEYED_ALLOWED.mail_outbox =
  'also carries mail of no book (space_id null); a book-keyed split is a migration not yet written';

const BY_KEY_ID = 'integration_keys is found by its hash across books; its key has no space_id yet';
const BY_ID = 'references its target by id alone; a (space_id, id) reference is a migration not yet written';
/** Foreign keys between per-book tables that lack space_id, with the reason. */
const FOREIGN_KEYS_ALLOWED: Record<string, string> = {
  card_checkouts_settlement_id_fkey: BY_ID,
  card_checkouts_payment_request_id_fkey: BY_ID,
  charges_key_id_fkey: BY_KEY_ID,
  chat_link_codes_key_id_fkey: BY_KEY_ID,
  contact_chats_key_id_fkey: BY_KEY_ID,
  invoices_key_id_fkey: BY_KEY_ID,
  outbox_event_groups_key_id_fkey: BY_KEY_ID,
  outbox_events_key_id_fkey: BY_KEY_ID,
  payment_requests_key_id_fkey: BY_KEY_ID,
  push_batches_key_id_fkey: BY_KEY_ID,
  webhook_deliveries_key_id_fkey: BY_KEY_ID,
  payouts_approval_rule_id_fkey: BY_ID,
  payouts_account_id_fkey: BY_ID,
  payouts_transaction_id_fkey: BY_ID,
  payouts_contact_id_fkey: BY_ID,
  webhook_deliveries_subscription_id_fkey: BY_ID,
  webhook_deliveries_event_id_fkey: BY_ID,
  webhook_delivery_attempts_delivery_id_fkey: BY_ID,
  webhook_test_sends_subscription_id_fkey: BY_ID,
  chain_transfers_rebooks_fkey: BY_ID,
  invoice_deliveries_mail_id_fkey: 'mail_outbox is keyed by id alone (see mail_outbox above)',
};

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
}, 300_000);
afterAll(() => h.close());

async function tables() {
  const result = await sql<{ name: string; per_book: boolean; keyed: boolean }>`
    SELECT c.relname AS name,
      EXISTS (SELECT 1 FROM pg_attribute a
              WHERE a.attrelid = c.oid AND a.attname = 'space_id' AND NOT a.attisdropped) AS per_book,
      EXISTS (SELECT 1 FROM pg_index i, unnest(i.indkey) AS k(attnum), pg_attribute a
              WHERE i.indrelid = c.oid AND i.indisunique AND i.indpred IS NULL
                AND a.attrelid = c.oid AND a.attnum = k.attnum AND a.attname = 'space_id') AS keyed
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
    ORDER BY 1`.execute(h.db);
  return result.rows;
}

async function uncolocatedForeignKeys() {
  const result = await sql<{ name: string }>`
    SELECT con.conname AS name
    FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = current_schema() AND con.contype = 'f'
      AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = con.conrelid AND a.attname = 'space_id')
      AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = con.confrelid AND a.attname = 'space_id')
      AND NOT EXISTS (SELECT 1 FROM unnest(con.conkey) AS k(attnum), pg_attribute a
                      WHERE a.attrelid = con.conrelid AND a.attnum = k.attnum AND a.attname = 'space_id')
    ORDER BY 1`.execute(h.db);
  return result.rows.map((row) => row.name);
}

describe('the schema is ready to distribute by space_id', () => {
  it('lists every table without space_id as a reference table, and no per-book table there', async () => {
    const global = (await tables()).filter((table) => !table.per_book).map((table) => table.name);
    expect(global).toEqual([...REFERENCE_TABLES].sort());
  });

  it('keys every per-book table by space_id, except the listed ones (and each listed one still needs it)', async () => {
    const perBook = (await tables()).filter((table) => table.per_book);
    const unkeyed = perBook.filter((table) => !table.keyed).map((table) => table.name);
    expect(unkeyed).toEqual(Object.keys(UNKEYED_ALLOWED).sort());
  });

  it('carries space_id in every foreign key between per-book tables, except the listed ones', async () => {
    expect(await uncolocatedForeignKeys()).toEqual(Object.keys(FOREIGN_KEYS_ALLOWED).sort());
  });
});
