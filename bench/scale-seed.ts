// The scale bench's seeding: plain SQL that the bench owns, `INSERT … SELECT generate_series`
// in batches, grown step by step in one book. Every row keeps the schema's rules as the service
// would write them: entries balance (the posting trigger checks each batch), the asset account's
// cached balance is set to the sum of its postings, open asks on the crypto account are distinct
// (the unique index on open asks), tokens are unique, and foreign keys stay within the book.
// Counts other than postings are proportional to the postings: per million postings, 100,000
// payment requests (10,000 of them open on the crypto account), 100,000 invoices, 1,000,000
// webhook deliveries, 10,000 client credits and 1,000 small books beside the big one.

import type pg from 'pg';

/** Rows per million ledger postings of the big book. */
export const PER_MILLION = {
  paymentRequests: 100_000,
  openOnCrypto: 10_000,
  invoices: 100_000,
  webhookDeliveries: 1_000_000,
  clientCredits: 10_000,
  smallBooks: 1_000,
} as const;

type Kind = keyof typeof PER_MILLION | 'postings';

/** What the seed works in: the big book, its accounts and its key. */
export type SeedBook = {
  spaceId: string;
  keyId: string;
  bankAccountId: string;
  cryptoAccountId: string;
};

/** Rows of each kind the bench has written so far, so a step adds only the difference. */
export type Seeded = Record<Kind, number>;

export function nothingSeeded(): Seeded {
  return {
    postings: 0,
    paymentRequests: 0,
    openOnCrypto: 0,
    invoices: 0,
    webhookDeliveries: 0,
    clientCredits: 0,
    smallBooks: 0,
  };
}

const BATCH = 100_000;

/** Runs `insert(from, to)` over [from, to) in batches of at most `batch` rows (1-based series). */
async function inBatches(
  from: number,
  to: number,
  batch: number,
  insert: (a: number, b: number) => Promise<void>,
) {
  for (let start = from; start < to; start += batch) {
    await insert(start + 1, Math.min(to, start + batch));
  }
}

/** The ledger account of one kind and ref in the book: the seed posts to accounts the book has. */
async function ledgerAccount(db: pg.Pool, spaceId: string, kind: string, ref: string): Promise<string> {
  const found = await db.query<{ id: string }>(
    `SELECT id FROM ledger_accounts WHERE space_id = $1 AND kind = $2 AND ref = $3 AND currency = 'USD'`,
    [spaceId, kind, ref],
  );
  const id = found.rows[0]?.id;
  if (!id) throw new Error(`the book has no ${kind} ledger account "${ref}" in USD to seed postings on`);
  return id;
}

/**
 * Entries of two postings each (the bank account's asset debited, general income credited), one
 * statement per batch; then the asset's cached balance is set to the sum of its postings.
 */
async function seedPostings(db: pg.Pool, book: SeedBook, from: number, to: number) {
  const asset = await ledgerAccount(db, book.spaceId, 'asset', book.bankAccountId);
  const income = await ledgerAccount(db, book.spaceId, 'income', 'general');
  await inBatches(from / 2, to / 2, BATCH, async (a, b) => {
    await db.query(
      `WITH entry AS (
         INSERT INTO ledger_entries (id, space_id, origin, kind, occurred_on, cause_type, counterparty, memo, created_at)
         SELECT gen_random_uuid(), $1, 'manual', 'income', (now() - (g % 730) * interval '1 day')::date,
                'transfer', 'Scale client ' || (g % 997), 'Scale entry ' || g,
                now() - (g % 730) * interval '1 day' - (g % 86400) * interval '1 second'
         FROM generate_series($2::bigint, $3::bigint) AS g
         RETURNING id, occurred_on, (get_byte(uuid_send(id), 0) + 1)::numeric AS amount)
       INSERT INTO ledger_postings (id, space_id, entry_id, ledger_account_id, currency, amount, occurred_on)
       SELECT gen_random_uuid(), $1, entry.id, side.account, 'USD', side.sign * entry.amount, entry.occurred_on
       FROM entry CROSS JOIN (VALUES ($4::uuid, 1), ($5::uuid, -1)) AS side (account, sign)`,
      [book.spaceId, a, b, asset, income],
    );
  });
  await db.query(
    `UPDATE ledger_accounts SET balance = (SELECT COALESCE(SUM(amount), 0) FROM ledger_postings
       WHERE space_id = $1 AND ledger_account_id = $2) WHERE space_id = $1 AND id = $2`,
    [book.spaceId, asset],
  );
  await resumIncomeDays(db, book.spaceId, income);
}

/**
 * The pre-summed income days of one income account, summed again from all its postings (as the
 * asset's cached balance is above), in one statement that also drops the account's arrivals:
 * the seed files postings by SQL of its own, so it fills in what the app's posting statements
 * would have (see src/features/ledger/income-days.ts). Run with the server idle.
 */
async function resumIncomeDays(db: pg.Pool, spaceId: string, income: string) {
  await db.query(
    `WITH settled AS (DELETE FROM ledger_income_arrivals WHERE space_id = $1 AND ledger_account_id = $2)
     INSERT INTO ledger_income_days (space_id, day, ledger_account_id, currency, amount, entries)
     SELECT space_id, occurred_on, ledger_account_id, currency, SUM(amount), COUNT(DISTINCT entry_id)
     FROM ledger_postings WHERE space_id = $1 AND ledger_account_id = $2
     GROUP BY space_id, occurred_on, ledger_account_id, currency
     ON CONFLICT (space_id, day, ledger_account_id, currency) DO UPDATE
       SET amount = excluded.amount, entries = excluded.entries`,
    [spaceId, income],
  );
}

/** Closed sale requests on the bank account: nine in ten paid, the rest cancelled. */
async function seedClosedRequests(db: pg.Pool, book: SeedBook, from: number, to: number) {
  await inBatches(from, to, BATCH, async (a, b) => {
    await db.query(
      `INSERT INTO payment_requests (id, space_id, token, account_id, purpose, amount, currency, amount_received,
         status, memo, expires_at, created_at, paid_at, cancelled_at, amount_due)
       SELECT gen_random_uuid(), $1, 'prs_' || md5($1::uuid::text || g), $2, 'sale', amount, 'USD',
              CASE WHEN g % 10 = 0 THEN 0 ELSE amount END, CASE WHEN g % 10 = 0 THEN 'cancelled' ELSE 'paid' END,
              'Scale request ' || g, at + interval '7 days', at,
              CASE WHEN g % 10 = 0 THEN NULL ELSE at + interval '5 minutes' END,
              CASE WHEN g % 10 = 0 THEN at + interval '7 days' END, amount
       FROM (SELECT g, ((g % 97) + 1.25)::numeric AS amount,
                    now() - (g % 730) * interval '1 day' - (g % 86400) * interval '1 second' AS at
             FROM generate_series($3::bigint, $4::bigint) AS g) AS s`,
      [book.spaceId, book.bankAccountId, a, b],
    );
  });
}

/**
 * Open requests on the crypto account, each asking a distinct amount (100.00, 100.01, ...), as
 * minted asks are: the crowd a new mint on that account must step around. Each is added to its
 * book's open sums as a mint's arrival would be once settled (nothing received yet, so it waits
 * for what it asks).
 */
async function seedOpenRequests(db: pg.Pool, book: SeedBook, from: number, to: number) {
  await inBatches(from, to, BATCH, async (a, b) => {
    await db.query(
      `WITH made AS (
       INSERT INTO payment_requests (id, space_id, token, account_id, purpose, amount, currency, status, memo,
         expires_at, created_at, amount_due, unique_ask)
       SELECT gen_random_uuid(), $1, 'pro_' || md5($1::uuid::text || g), $2, 'sale', amount, 'USDC', 'active',
              'Scale open request ' || g, now() + interval '30 days', now() - (g % 86400) * interval '1 second',
              amount, true
       FROM (SELECT g, (100 + g * 0.01)::numeric AS amount FROM generate_series($3::bigint, $4::bigint) AS g) AS s
       RETURNING space_id, currency, amount_due)
       INSERT INTO payment_request_open_totals (space_id, currency, requests, open)
       SELECT space_id, currency, COUNT(*), SUM(amount_due) FROM made GROUP BY space_id, currency
       ON CONFLICT (space_id, currency) DO UPDATE
         SET requests = payment_request_open_totals.requests + excluded.requests,
             open = payment_request_open_totals.open + excluded.open`,
      [book.spaceId, book.cryptoAccountId, a, b],
    );
  });
}

async function seedInvoices(db: pg.Pool, book: SeedBook, from: number, to: number) {
  await inBatches(from, to, BATCH, async (a, b) => {
    // The sent (still owed) invoices' due days, pre-summed as the invoices store keeps them.
    await db.query(
      `WITH made AS (
       INSERT INTO invoices (id, space_id, account_id, kind, status, number, token, currency, issued_on, due_on,
         client_name, client_email, line_items, tax_breakdown, subtotal, tax_total, total, paid_amount,
         last_paid_on, sent_at, created_at, updated_at)
       SELECT gen_random_uuid(), $1, $2, 'invoice', CASE WHEN g % 5 = 0 THEN 'sent' ELSE 'paid' END,
              'SC-' || lpad(g::text, 8, '0'), 'ivs_' || md5($1::uuid::text || g), 'USD', at::date, (at + interval '30 days')::date,
              'Scale client ' || (g % 997), 'client' || (g % 997) || '@example.com',
              jsonb_build_array(jsonb_build_object('description', 'Services', 'quantity', '1',
                'unit_price', total::text, 'amount', total::text)),
              '[]'::jsonb, total, 0, total, CASE WHEN g % 5 = 0 THEN 0 ELSE total END,
              CASE WHEN g % 5 = 0 THEN NULL ELSE (at + interval '3 days')::date END, at, at, at
       FROM (SELECT g, ((g % 500) * 10 + 99)::numeric AS total,
                    now() - (g % 730) * interval '1 day' - (g % 86400) * interval '1 second' AS at
             FROM generate_series($3::bigint, $4::bigint) AS g) AS s
       RETURNING space_id, currency, due_on, status, total, paid_amount, credited_amount)
       INSERT INTO invoice_owed_days (space_id, currency, due_on, invoices, owed)
       SELECT space_id, currency, due_on, COUNT(*), SUM(total - credited_amount - paid_amount)
       FROM made WHERE status = 'sent'
       GROUP BY space_id, currency, due_on
       ON CONFLICT (space_id, currency, due_on) DO UPDATE
         SET invoices = invoice_owed_days.invoices + excluded.invoices,
             owed = invoice_owed_days.owed + excluded.owed`,
      [book.spaceId, book.bankAccountId, a, b],
    );
  });
}

/** The webhook journal: dispatched key events of the last 23 days, each delivered once. */
async function seedJournal(db: pg.Pool, book: SeedBook, from: number, to: number) {
  await inBatches(from, to, BATCH, async (a, b) => {
    await db.query(
      `WITH event AS (
         INSERT INTO outbox_events (id, space_id, channel, key_id, event, payload, occurred_at, created_at, dispatched_at)
         SELECT gen_random_uuid(), $1, 'key', $2, 'payment_request.paid', json_build_object('seq', g), at, at, at
         FROM (SELECT g, now() - (g % 2000000) * interval '1 second' AS at
               FROM generate_series($3::bigint, $4::bigint) AS g) AS s
         RETURNING id, created_at)
       INSERT INTO webhook_deliveries (id, space_id, event_id, event, target_kind, key_id, status, attempts,
         attempts_max, next_attempt_at, last_status_code, last_attempt_at, created_at, updated_at, delivered_at)
       SELECT gen_random_uuid(), $1, event.id, 'payment_request.paid', 'key', $2, 'delivered', 1, 8,
              event.created_at, 200, event.created_at, event.created_at, event.created_at, event.created_at
       FROM event`,
      [book.spaceId, book.keyId, a, b],
    );
  });
}

/** Client credits with their (empty, guarded) ledger accounts, as a first charge makes them. */
async function seedClientCredits(db: pg.Pool, book: SeedBook, from: number, to: number) {
  await inBatches(from, to, BATCH, async (a, b) => {
    await db.query(
      `WITH account AS (
         INSERT INTO ledger_accounts (id, space_id, kind, ref, currency, normal_side, tracks_balance, no_overdraft,
           balance, created_at)
         SELECT gen_random_uuid(), $1, 'client_credit', 'scale-client-' || g, 'USD', 'credit', true, true, 0, now()
         FROM generate_series($2::bigint, $3::bigint) AS g
         RETURNING id, ref)
       INSERT INTO client_credits (id, space_id, client_ref, currency, ledger_account_id, page_token, created_at)
       SELECT gen_random_uuid(), $1, account.ref, 'USD', account.id, 'ccs_' || md5(account.id::text), now()
       FROM account`,
      [book.spaceId, a, b],
    );
  });
}

/** Small books beside the big one: a book, its cash and income accounts, one balanced entry. */
async function seedSmallBooks(db: pg.Pool, from: number, to: number) {
  await inBatches(from, to, 10_000, async (a, b) => {
    await db.query(
      `WITH book AS (
         INSERT INTO spaces (id, name, base_currency, plan, public_handle, created_at)
         SELECT gen_random_uuid(), 'Small book ' || g, 'USD', 'free', 'scale-small-' || g, now()
         FROM generate_series($1::bigint, $2::bigint) AS g
         RETURNING id),
       account AS (
         INSERT INTO ledger_accounts (id, space_id, kind, ref, currency, normal_side, tracks_balance, balance, created_at)
         SELECT gen_random_uuid(), book.id, side.kind, side.ref, 'USD', side.normal, false, 0, now()
         FROM book CROSS JOIN (VALUES ('asset', 'cash', 'debit'), ('income', 'general', 'credit')) AS side (kind, ref, normal)
         RETURNING id, space_id, normal_side),
       entry AS (
         INSERT INTO ledger_entries (id, space_id, origin, kind, occurred_on, cause_type, created_at)
         SELECT gen_random_uuid(), book.id, 'manual', 'income', current_date, 'transfer', now() FROM book
         RETURNING id, space_id, occurred_on),
       posting AS (
         INSERT INTO ledger_postings (id, space_id, entry_id, ledger_account_id, currency, amount, occurred_on)
         SELECT gen_random_uuid(), entry.space_id, entry.id, account.id, 'USD',
                CASE account.normal_side WHEN 'debit' THEN 10 ELSE -10 END, entry.occurred_on
         FROM entry JOIN account ON account.space_id = entry.space_id)
       -- The income posting's day, pre-summed (src/features/ledger/income-days.ts).
       INSERT INTO ledger_income_days (space_id, day, ledger_account_id, currency, amount, entries)
       SELECT entry.space_id, entry.occurred_on, account.id, 'USD', -10, 1
       FROM entry JOIN account ON account.space_id = entry.space_id AND account.normal_side = 'credit'`,
      [a, b],
    );
  });
}

/** The counts a step of `postings` asks for: postings as given, the rest in proportion. */
export function wanted(postings: number): Seeded {
  const share = (perMillion: number) => Math.round((perMillion * postings) / 1_000_000);
  return {
    postings: postings - (postings % 2),
    paymentRequests: share(PER_MILLION.paymentRequests),
    openOnCrypto: share(PER_MILLION.openOnCrypto),
    invoices: share(PER_MILLION.invoices),
    webhookDeliveries: share(PER_MILLION.webhookDeliveries),
    clientCredits: share(PER_MILLION.clientCredits),
    smallBooks: share(PER_MILLION.smallBooks),
  };
}

/**
 * Grows the book to the step's counts (only what is missing is written); returns the counts now
 * seeded and the seconds each kind took. Closed requests are the requests that are not open.
 */
export async function seedStep(db: pg.Pool, book: SeedBook, done: Seeded, want: Seeded) {
  const seconds: Partial<Record<Kind, number>> = {};
  const timed = async (
    kind: Kind,
    write: (from: number, to: number) => Promise<void>,
    from: number,
    to: number,
  ) => {
    const started = performance.now();
    if (to > from) await write(from, to);
    seconds[kind] = (performance.now() - started) / 1000;
  };
  const closedFrom = done.paymentRequests - done.openOnCrypto;
  const closedTo = want.paymentRequests - want.openOnCrypto;
  await timed('postings', (a, b) => seedPostings(db, book, a, b), done.postings, want.postings);
  await timed('paymentRequests', (a, b) => seedClosedRequests(db, book, a, b), closedFrom, closedTo);
  await timed(
    'openOnCrypto',
    (a, b) => seedOpenRequests(db, book, a, b),
    done.openOnCrypto,
    want.openOnCrypto,
  );
  await timed('invoices', (a, b) => seedInvoices(db, book, a, b), done.invoices, want.invoices);
  await timed(
    'webhookDeliveries',
    (a, b) => seedJournal(db, book, a, b),
    done.webhookDeliveries,
    want.webhookDeliveries,
  );
  await timed(
    'clientCredits',
    (a, b) => seedClientCredits(db, book, a, b),
    done.clientCredits,
    want.clientCredits,
  );
  await timed('smallBooks', (a, b) => seedSmallBooks(db, a, b), done.smallBooks, want.smallBooks);
  const now: Seeded = { ...done };
  for (const kind of Object.keys(now) as Kind[]) now[kind] = Math.max(done[kind], want[kind]);
  return { seeded: now, seconds };
}
