import { type Selectable, sql } from 'kysely';
import type { Queryable } from '../../platform/db/database.ts';
import type { Rider } from '../../platform/db/rider.ts';
import type { AccountsTable, PaymentRequestsTable, X402SettlementsTable } from '../../platform/db/schema.ts';

export type SettlementClaim = {
  id: string;
  space_id: string;
  payment_request_id: string | null;
  via: X402SettlementsTable['via'];
  network: string;
  asset: string;
  payer: string;
  pay_to: string;
  nonce: string;
  amount_base: string;
  resource_url: string | null;
  signature_hash: string;
  payment_id: string | null;
  status: X402SettlementsTable['status'];
  tx_hash: string | null;
  error_reason: string | null;
  lease_until: Date;
  created_at: Date;
  settled_at: Date | null;
};

/** The account a page payment pays into: what its quote needs. */
export type Payee = Pick<
  Selectable<AccountsTable>,
  'id' | 'kind' | 'currency' | 'network' | 'address' | 'address_proven'
>;

/**
 * A payment request by its page token, with the account it pays into (one statement: a page's
 * quote and its payment each start here).
 */
export async function findRequestAndPayee(
  db: Queryable,
  token: string,
): Promise<{ request: Selectable<PaymentRequestsTable>; payee: Payee } | undefined> {
  const row = await db
    .selectFrom('payment_requests as r')
    .innerJoin('accounts as a', (join) =>
      join.onRef('a.space_id', '=', 'r.space_id').onRef('a.id', '=', 'r.account_id'),
    )
    .selectAll('r')
    .select([
      'a.kind as payee_kind',
      'a.currency as payee_currency',
      'a.network as payee_network',
      'a.address as payee_address',
      'a.address_proven as payee_address_proven',
    ])
    .where('r.token', '=', token)
    .executeTakeFirst();
  if (!row) return undefined;
  const { payee_kind, payee_currency, payee_network, payee_address, payee_address_proven, ...request } = row;
  const payee: Payee = {
    id: request.account_id,
    kind: payee_kind,
    currency: payee_currency,
    network: payee_network,
    address: payee_address,
    address_proven: payee_address_proven,
  };
  return { request, payee };
}

/**
 * Claims an authorization (and, for a page payment, its request) before anything goes on chain.
 * Answers false when a live claim exists for either: the unique indexes decide, so concurrent
 * claims in several processes settle exactly one.
 */
export async function insertClaim(db: Queryable, row: SettlementClaim): Promise<boolean> {
  const result = await db
    .insertInto('x402_settlements')
    .values(row)
    .onConflict((conflict) => conflict.doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

/** The live claim of an authorization, if any. */
export function findLiveByAuthorization(
  db: Queryable,
  where: { network: string; asset: string; payer: string; nonce: string },
) {
  return db
    .selectFrom('x402_settlements')
    .selectAll()
    .where('network', '=', where.network)
    .where('asset', '=', where.asset)
    .where('payer', '=', where.payer)
    .where('nonce', '=', where.nonce)
    .where('status', '<>', 'failed')
    .executeTakeFirst();
}

/** The live claim holding a payer's `payment-identifier` id at a pay-to address, if any. */
export function findLiveByPaymentId(db: Queryable, payTo: string, paymentId: string) {
  return db
    .selectFrom('x402_settlements')
    .selectAll()
    .where('pay_to', '=', payTo)
    .where('payment_id', '=', paymentId)
    .where('status', '<>', 'failed')
    .executeTakeFirst();
}

/** The live page claim on a request, if any. */
export function findLiveByRequest(db: Queryable, requestId: string) {
  return db
    .selectFrom('x402_settlements')
    .selectAll()
    .where('payment_request_id', '=', requestId)
    .where('via', '=', 'page')
    .where('status', '<>', 'failed')
    .executeTakeFirst();
}

/** Takes over a pending claim whose lease ran out (its process died or gave up); false if another did. */
export async function takeOverClaim(
  db: Queryable,
  id: string,
  now: Date,
  leaseUntil: Date,
): Promise<boolean> {
  const result = await db
    .updateTable('x402_settlements')
    .set({ lease_until: leaseUntil })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .where('lease_until', '<=', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function markFailed(db: Queryable, id: string, reason: string, txHash: string | null) {
  await db
    .updateTable('x402_settlements')
    .set({ status: 'failed', error_reason: reason.slice(0, 500), tx_hash: txHash })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .execute();
}

/** A broadcast whose receipt is late: the claim stays pending, with its hash, until a retry. */
export async function markBroadcast(db: Queryable, id: string, txHash: string, leaseUntil: Date) {
  await db
    .updateTable('x402_settlements')
    .set({ tx_hash: txHash, lease_until: leaseUntil })
    .where('id', '=', id)
    .execute();
}

type Settled = { txHash: string; at: Date; paymentRequestId: string };

/** The claim marked settled in its booking's entry statement (see Rider): settled exactly when booked. */
export function claimSettledRider(id: string, update: Settled): Rider {
  return (entry) => sql`
    UPDATE x402_settlements SET status = 'settled', tx_hash = ${update.txHash}::text,
      settled_at = ${update.at}::timestamptz, payment_request_id = ${update.paymentRequestId}::uuid
    FROM ${entry}
    WHERE x402_settlements.id = ${id}::uuid`;
}

export async function markSettled(db: Queryable, id: string, update: Settled) {
  await db
    .updateTable('x402_settlements')
    .set({
      status: 'settled',
      tx_hash: update.txHash,
      settled_at: update.at,
      payment_request_id: update.paymentRequestId,
    })
    .where('id', '=', id)
    .execute();
}

export async function findPendingTransaction(db: Queryable, signatureHash: string) {
  const row = await db
    .selectFrom('x402_pending_transactions')
    .select('tx_hash')
    .where('signature_hash', '=', signatureHash)
    .executeTakeFirst();
  return row?.tx_hash;
}

export async function savePendingTransaction(db: Queryable, signatureHash: string, txHash: string, at: Date) {
  await sql`INSERT INTO x402_pending_transactions (signature_hash, tx_hash, created_at)
    VALUES (${signatureHash}, ${txHash}, ${at})
    ON CONFLICT (signature_hash) DO UPDATE SET tx_hash = EXCLUDED.tx_hash`.execute(db);
}

export async function deletePendingTransaction(db: Queryable, signatureHash: string) {
  await db.deleteFrom('x402_pending_transactions').where('signature_hash', '=', signatureHash).execute();
}

export type SettledTransfer = {
  space_id: string;
  account_id: string;
  tx_hash: string;
  payer: string;
  pay_to: string;
  amount_base: string;
};

/**
 * Settlements on `network` since `since` that the account watch does not follow yet, newest
 * first (one whose receipt cannot be found, say from a development chain since restarted, must
 * not hold back newer ones): the watch records their block so a reorganisation that drops the
 * transfer undoes the booking.
 */
export async function settledNotFollowed(
  db: Queryable,
  network: string,
  chainKey: string,
  since: Date,
  limit: number,
) {
  const result = await sql<SettledTransfer>`
    SELECT s.space_id, p.account_id, s.tx_hash, s.payer, s.pay_to, s.amount_base::text AS amount_base
    FROM x402_settlements s
    JOIN payment_requests p ON p.id = s.payment_request_id
    WHERE s.network = ${network} AND s.status = 'settled' AND s.settled_at >= ${since}
      AND NOT EXISTS (SELECT 1 FROM chain_transfers t WHERE t.network = ${chainKey} AND t.tx_hash = s.tx_hash)
    ORDER BY s.settled_at DESC
    LIMIT ${limit}`.execute(db);
  return result.rows;
}

/** Whether a transaction is an x402 settlement Tollbook made (the watch must not book it again). */
export async function isSettledTransaction(db: Queryable, network: string, txHash: string) {
  const row = await db
    .selectFrom('x402_settlements')
    .select('id')
    .where('network', '=', network)
    .where('tx_hash', '=', txHash)
    .where('status', '=', 'settled')
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Accepts a sign-in's nonce for a book: true when this call inserted it, false when the book
 * accepted it before (a replay). The primary key decides, so two concurrent replays cannot both win.
 */
export async function acceptSignInNonce(
  db: Queryable,
  row: { space_id: string; nonce: string; client_ref: string; accepted_at: Date; expires_at: Date },
): Promise<boolean> {
  const inserted = await db
    .insertInto('x402_sign_in_nonces')
    .values(row)
    .onConflict((conflict) => conflict.columns(['space_id', 'nonce']).doNothing())
    .executeTakeFirst();
  return Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1;
}

export type BroadcastRow = {
  tx_hash: string;
  first_hash: string;
  network: string;
  lane: string;
  nonce: string;
  to_address: string;
  data: string;
  gas: string;
  max_fee_per_gas: string;
  max_priority_fee_per_gas: string;
  created_at: Date;
};

/** Records a signed settlement transaction before its broadcast (a replacement names its first). */
export async function recordBroadcast(db: Queryable, row: BroadcastRow) {
  await db.insertInto('x402_broadcasts').values(row).execute();
}

/** Every transaction signed for the settlement first broadcast as `firstHash`, oldest first. */
export async function broadcastsOf(db: Queryable, firstHash: string): Promise<BroadcastRow[]> {
  const rows = await db
    .selectFrom('x402_broadcasts')
    .selectAll()
    .where('first_hash', '=', firstHash.toLowerCase())
    .orderBy('created_at')
    .orderBy('max_fee_per_gas')
    .execute();
  return rows.map((row) => ({ ...row, nonce: String(row.nonce) }));
}

/** Claims broadcast but not yet settled or failed whose lease ran out: the follower's work. */
export function pendingBroadcastClaims(db: Queryable, now: Date, limit: number) {
  return db
    .selectFrom('x402_settlements')
    .selectAll()
    .where('status', '=', 'pending')
    .where('tx_hash', 'is not', null)
    .where('lease_until', '<=', now)
    .orderBy('created_at')
    .limit(limit)
    .execute();
}
