import { type RawBuilder, type Selectable, sql } from 'kysely';
import type { Queryable } from '../../platform/db/database.ts';
import { CommittedRows, readBeforeAnyWrite } from '../../platform/db/lasting.ts';
import type {
  AgentBookRowsTable,
  AgentStatus,
  AgentsTable,
  AgentWriteKind,
  AgentWriteStatus,
  AgentWritesTable,
  CardIntentsTable,
  CategoriesTable,
  Role,
} from '../../platform/db/schema.ts';

// Kysely queries for the agents' own tables.

export type AgentRow = Selectable<AgentsTable>;
export type WriteRow = Selectable<AgentWritesTable>;
export type CategoryRow = Selectable<CategoriesTable>;
export type BookRow = Selectable<AgentBookRowsTable>;

export async function insertAgent(db: Queryable, row: AgentRow, accountIds: readonly string[]) {
  await db.insertInto('agents').values(row).execute();
  if (accountIds.length === 0) return;
  await db
    .insertInto('agent_accounts')
    .values(
      accountIds.map((accountId) => ({ space_id: row.space_id, agent_id: row.id, account_id: accountId })),
    )
    .execute();
}

/** The accounts of the space among `ids` (to refuse an unknown one before inserting). */
export async function existingAccountIds(db: Queryable, spaceId: string, ids: readonly string[]) {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('accounts')
    .select('id')
    .where('space_id', '=', spaceId)
    .where('id', 'in', [...ids])
    .execute();
  return rows.map((row) => row.id);
}

export async function listAgents(db: Queryable, spaceId: string) {
  return db
    .selectFrom('agents')
    .selectAll()
    .where('space_id', '=', spaceId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

export async function findAgent(db: Queryable, spaceId: string, agentId: string) {
  return db
    .selectFrom('agents')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('id', '=', agentId)
    .executeTakeFirst();
}

/** Takes the agent's row lock: its writes that spend are counted one at a time. */
export async function lockAgent(db: Queryable, agentId: string) {
  return db.selectFrom('agents').selectAll().where('id', '=', agentId).forUpdate().executeTakeFirstOrThrow();
}

/**
 * The door's lookup of a token hash: the agent with its issuer's role and name, its space, and
 * the accounts a restricted agent may touch.
 */
export function agentByTokenHash(db: Queryable, tokenHash: string) {
  return db
    .selectFrom('agents')
    .innerJoin('spaces', 'spaces.id', 'agents.space_id')
    .innerJoin('users', 'users.id', 'agents.issuer_user_id')
    .leftJoin('members', (join) =>
      join
        .onRef('members.space_id', '=', 'agents.space_id')
        .onRef('members.user_id', '=', 'agents.issuer_user_id'),
    )
    .selectAll('agents')
    .select((eb) => [
      'members.role as issuer_role',
      'users.name as issuer_name',
      'spaces.name as space_name',
      'spaces.base_currency as base_currency',
      eb
        .selectFrom('agent_accounts')
        .select(sql<string[]>`array_agg(account_id::text ORDER BY account_id)`.as('ids'))
        .whereRef('agent_accounts.agent_id', '=', 'agents.id')
        .as('account_ids'),
    ])
    .where('agents.token_hash', '=', tokenHash)
    .executeTakeFirst();
}

export type AgentPrincipal = AgentRow & {
  issuer_role: Role | null;
  issuer_name: string;
  space_name: string;
  base_currency: string;
};

export async function accountIdsOf(db: Queryable, agentIds: readonly string[]) {
  const map = new Map<string, string[]>();
  if (agentIds.length === 0) return map;
  const rows = await db
    .selectFrom('agent_accounts')
    .select(['agent_id', 'account_id'])
    .where('agent_id', 'in', [...agentIds])
    .orderBy('account_id')
    .execute();
  for (const row of rows) map.set(row.agent_id, [...(map.get(row.agent_id) ?? []), row.account_id]);
  return map;
}

export async function setStatus(db: Queryable, agentId: string, status: AgentStatus, at: Date) {
  await db.updateTable('agents').set({ status, updated_at: at }).where('id', '=', agentId).execute();
}

export async function markRevoked(db: Queryable, agentId: string, at: Date) {
  await db
    .updateTable('agents')
    .set({ revoked_at: at, updated_at: at })
    .where('id', '=', agentId)
    .where('revoked_at', 'is', null)
    .execute();
}

export async function spaceAccounts(db: Queryable, spaceId: string) {
  return db
    .selectFrom('accounts')
    .select(['id', 'name', 'kind', 'currency', 'address'])
    .where('space_id', '=', spaceId)
    .orderBy('created_at')
    .execute();
}

// ---- Writes and proposals ----

export type NewWrite = {
  id: string;
  spaceId: string;
  agentId: string;
  kind: AgentWriteKind;
  input: Record<string, unknown>;
  message: string;
  status: 'applied' | 'pending' | 'sending';
  result: Record<string, unknown> | null;
  at: Date;
  idempotency?: { key: string; hash: string } | undefined;
};

export async function insertWrite(db: Queryable, write: NewWrite) {
  await db
    .insertInto('agent_writes')
    .values({
      id: write.id,
      space_id: write.spaceId,
      agent_id: write.agentId,
      kind: write.kind,
      input: JSON.stringify(write.input),
      message: write.message,
      status: write.status,
      result: write.result === null ? null : JSON.stringify(write.result),
      created_at: write.at,
      idempotency_key: write.idempotency?.key ?? null,
      request_hash: write.idempotency?.hash ?? null,
    })
    .execute();
}

export async function findWriteByIdempotencyKey(db: Queryable, agentId: string, key: string) {
  return db
    .selectFrom('agent_writes')
    .selectAll()
    .where('agent_id', '=', agentId)
    .where('idempotency_key', '=', key)
    .executeTakeFirst();
}

/** Ends a wallet transfer that was on its way: applied with its result, or failed. */
export async function finishSending(
  db: Queryable,
  writeId: string,
  outcome: { status: 'applied' | 'failed'; result: Record<string, unknown> },
) {
  await db
    .updateTable('agent_writes')
    .set({ status: outcome.status, result: JSON.stringify(outcome.result) })
    .where('id', '=', writeId)
    .where('status', '=', 'sending')
    .execute();
}

export async function walletOf(db: Queryable, agentId: string) {
  return db
    .selectFrom('agents')
    .select(['wallet_address', 'wallet_key_sealed', 'space_id', 'name'])
    .where('id', '=', agentId)
    .executeTakeFirstOrThrow();
}

/** The book account of an agent's wallet on one network, if it was made already. */
export async function findWalletAccount(db: Queryable, spaceId: string, address: string, network: string) {
  return db
    .selectFrom('accounts')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('address', '=', address)
    .where('network', '=', network)
    .where('kind', '=', 'crypto')
    .executeTakeFirst();
}

export async function lockWrite(db: Queryable, spaceId: string, writeId: string) {
  return db
    .selectFrom('agent_writes')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('id', '=', writeId)
    .forUpdate()
    .executeTakeFirst();
}

export async function findWrite(db: Queryable, spaceId: string, writeId: string) {
  return db
    .selectFrom('agent_writes')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('id', '=', writeId)
    .executeTakeFirst();
}

/** A person claims a pending proposal to apply it: approving, with who and since when. */
export async function claimWrite(db: Queryable, writeId: string, by: string, at: Date) {
  await db
    .updateTable('agent_writes')
    .set({ status: 'approving', decided_by: by, decided_at: at })
    .where('id', '=', writeId)
    .where('status', '=', 'pending')
    .execute();
}

/**
 * Ends a claimed approval: approved with its result, or back to pending with the failure in
 * `result` (the owner reads it, and may approve again or reject).
 */
export async function endApproval(
  db: Queryable,
  writeId: string,
  outcome: { status: 'approved' | 'pending'; result: Record<string, unknown> },
) {
  const back = outcome.status === 'pending';
  await db
    .updateTable('agent_writes')
    .set({
      status: outcome.status,
      result: JSON.stringify(outcome.result),
      // A proposal back to pending signs afresh when approved again (its old authorization
      // was refused, never sent, or expired unused).
      ...(back
        ? {
            decided_by: null,
            decided_at: null,
            signed_network: null,
            signed_nonce: null,
            signed_value: null,
            signed_valid_before: null,
          }
        : {}),
    })
    .where('id', '=', writeId)
    .where('status', '=', 'approving')
    .execute();
}

export async function decideWrite(
  db: Queryable,
  writeId: string,
  decision: {
    status: Exclude<AgentWriteStatus, 'applied' | 'pending'>;
    by: string | null;
    at: Date;
    result?: Record<string, unknown>;
    rejectReason?: string;
  },
) {
  await db
    .updateTable('agent_writes')
    .set({
      status: decision.status,
      decided_by: decision.by,
      decided_at: decision.at,
      ...(decision.result ? { result: JSON.stringify(decision.result) } : {}),
      ...(decision.rejectReason === undefined ? {} : { reject_reason: decision.rejectReason }),
    })
    .where('id', '=', writeId)
    .execute();
}

export async function listWrites(
  db: Queryable,
  spaceId: string,
  filter: { status?: AgentWriteStatus | undefined; limit: number },
) {
  let query = db
    .selectFrom('agent_writes')
    .innerJoin('agents', 'agents.id', 'agent_writes.agent_id')
    .selectAll('agent_writes')
    .select('agents.name as agent_name')
    .where('agent_writes.space_id', '=', spaceId)
    .orderBy('agent_writes.created_at', 'desc')
    .orderBy('agent_writes.id', 'desc')
    .limit(filter.limit);
  if (filter.status) query = query.where('agent_writes.status', '=', filter.status);
  return query.execute();
}

export async function findWriteWithAgent(db: Queryable, spaceId: string, writeId: string) {
  return db
    .selectFrom('agent_writes')
    .innerJoin('agents', 'agents.id', 'agent_writes.agent_id')
    .selectAll('agent_writes')
    .select('agents.name as agent_name')
    .where('agent_writes.space_id', '=', spaceId)
    .where('agent_writes.id', '=', writeId)
    .executeTakeFirstOrThrow();
}

/** Pending proposals created before `before`, locked and skipped by other workers. */
export async function claimLapsing(db: Queryable, before: Date, limit: number) {
  return db
    .selectFrom('agent_writes')
    .select(['id', 'space_id'])
    .where('status', '=', 'pending')
    .where('created_at', '<', before)
    .orderBy('created_at')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
}

// ---- Spending against the daily cap ----
// The day's total lives on the agent's row (`spent_day`, `spent_usd`); each spend's own row in
// agent_spend says which write spent what. The total is worked out by the domain (agents/
// domain.ts) from the row its caller read under the agent's lock; these statements only write it.

export type Spend = {
  id: string;
  spaceId: string;
  agentId: string;
  writeId: string;
  amountUsd: string;
  at: Date;
};

/** The agent's day total as the domain worked it out: the UTC day number and the amount. */
export type StoredDayTotal = { day: number; spentUsd: string };

/** Records a spend and sets the agent's day total in one statement, so they never disagree. */
export async function addSpend(db: Queryable, spend: Spend, total: StoredDayTotal) {
  await sql`
    WITH bumped AS (
      UPDATE agents
      SET spent_usd = ${total.spentUsd}::numeric, spent_day = ${total.day}
      WHERE id = ${spend.agentId}
      RETURNING id
    )
    INSERT INTO agent_spend (id, space_id, agent_id, write_id, amount_usd, spent_at)
    SELECT ${spend.id}, ${spend.spaceId}, id, ${spend.writeId}, ${spend.amountUsd}::numeric, ${spend.at}
    FROM bumped`.execute(db);
}

/** Removes a write's spend; answers what it was, or undefined when the write had none. */
export async function deleteSpend(db: Queryable, writeId: string) {
  return db
    .deleteFrom('agent_spend')
    .where('write_id', '=', writeId)
    .returning(['agent_id', 'amount_usd', 'spent_at'])
    .executeTakeFirst();
}

/** Sets the agent's day total (the caller holds its row lock). */
export async function setDayTotal(db: Queryable, agentId: string, total: StoredDayTotal) {
  await db
    .updateTable('agents')
    .set({ spent_day: total.day, spent_usd: total.spentUsd })
    .where('id', '=', agentId)
    .execute();
}

// ---- Categories and book rows ----

export async function insertCategory(db: Queryable, row: CategoryRow) {
  return db
    .insertInto('categories')
    .values(row)
    .onConflict((conflict) => conflict.columns(['space_id', 'kind', 'name']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

export async function findCategoryByName(db: Queryable, spaceId: string, kind: string, name: string) {
  return db
    .selectFrom('categories')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('kind', '=', kind as CategoryRow['kind'])
    .where('name', '=', name)
    .executeTakeFirstOrThrow();
}

export async function listCategories(db: Queryable, spaceId: string) {
  return db
    .selectFrom('categories')
    .selectAll()
    .where('space_id', '=', spaceId)
    .orderBy('kind')
    .orderBy('name')
    .execute();
}

export async function findCategory(db: Queryable, spaceId: string, categoryId: string) {
  return db
    .selectFrom('categories')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('id', '=', categoryId)
    .executeTakeFirst();
}

export async function insertBookRow(db: Queryable, row: BookRow) {
  await db.insertInto('agent_book_rows').values(row).execute();
}

export async function lockBookRow(db: Queryable, spaceId: string, entryId: string) {
  return db
    .selectFrom('agent_book_rows')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('entry_id', '=', entryId)
    .forUpdate()
    .executeTakeFirst();
}

export async function updateBookRow(
  db: Queryable,
  entryId: string,
  changes: Partial<Pick<BookRow, 'category_id' | 'note' | 'payee'>> & { updated_at: Date },
) {
  await db.updateTable('agent_book_rows').set(changes).where('entry_id', '=', entryId).execute();
}

export async function updateFence(
  db: Queryable,
  agentId: string,
  changes: Partial<Pick<AgentRow, 'allowed_merchants' | 'x402_hosts' | 'daily_usd' | 'fence_expires_at'>>,
  at: Date,
) {
  await db
    .updateTable('agents')
    .set({ ...changes, updated_at: at })
    .where('id', '=', agentId)
    .execute();
}

// ---- Card intents ----

export type CardIntentRow = Selectable<CardIntentsTable>;

export async function insertCardIntent(db: Queryable, row: CardIntentRow) {
  await db.insertInto('card_intents').values(row).execute();
}

/** The oldest open, unexpired intent for a merchant (any case), locked for matching. */
export async function lockOpenIntent(db: Queryable, spaceId: string, merchant: string, now: Date) {
  return db
    .selectFrom('card_intents')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('status', '=', 'open')
    .where((eb) => eb(eb.fn('lower', ['merchant']), '=', merchant.trim().toLowerCase()))
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .orderBy('created_at')
    .limit(1)
    .forUpdate()
    .executeTakeFirst();
}

export async function recordMatch(
  db: Queryable,
  match: {
    spaceId: string;
    intent: CardIntentRow;
    entryId: string;
    amount: string;
    within: boolean;
    at: Date;
  },
) {
  await db
    .insertInto('card_intent_matches')
    .values({
      space_id: match.spaceId,
      intent_id: match.intent.id,
      entry_id: match.entryId,
      amount: match.amount,
      within_ceiling: match.within,
      created_at: match.at,
    })
    .execute();
  if (match.intent.kind === 'one_off') {
    await db
      .updateTable('card_intents')
      .set({ status: 'matched' })
      .where('id', '=', match.intent.id)
      .execute();
  }
}

export async function listCardIntents(db: Queryable, spaceId: string) {
  const intents = await db
    .selectFrom('card_intents')
    .selectAll()
    .where('space_id', '=', spaceId)
    .orderBy('created_at', 'desc')
    .limit(100)
    .execute();
  const matches =
    intents.length === 0
      ? []
      : await db
          .selectFrom('card_intent_matches')
          .select(['intent_id', 'entry_id'])
          .where(
            'intent_id',
            'in',
            intents.map((intent) => intent.id),
          )
          .execute();
  return intents.map((intent) => ({
    ...intent,
    matched_entry_ids: matches
      .filter((match) => match.intent_id === intent.id)
      .map((match) => match.entry_id),
  }));
}

// ---- Repair of writes left on their way (issue 19, 0130) ----
// A write in sending or approving signed an EIP-3009 authorization (or was about to). The
// functions below record that authorization before it leaves the process, find the writes a
// dead process left behind, and end one under its row lock, once.

export type SignedAuthorization = { network: string; nonce: string; value: bigint; validBefore: Date };

/**
 * Records the authorization a write in flight signed. False when the write is no longer in
 * flight or already signed one (the repair released it meanwhile): the authorization must then
 * not leave the process.
 */
export async function recordSigned(db: Queryable, writeId: string, signed: SignedAuthorization) {
  const result = await db
    .updateTable('agent_writes')
    .set({
      signed_network: signed.network,
      signed_nonce: signed.nonce.toLowerCase(),
      signed_value: signed.value.toString(),
      signed_valid_before: signed.validBefore,
    })
    .where('id', '=', writeId)
    .where('status', 'in', ['sending', 'approving'])
    .where('signed_nonce', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Writes in flight since before `before` (claimed then, for an approval): the repair's candidates. */
export async function writesInFlight(db: Queryable, before: Date, limit: number) {
  return db
    .selectFrom('agent_writes')
    .selectAll()
    .where('status', 'in', ['sending', 'approving'])
    .where('kind', 'in', ['wallet_transfer', 'x402'])
    .where('in_flight_before_repair', '=', false)
    .where((eb) => eb(eb.fn.coalesce('decided_at', 'created_at'), '<', before))
    .orderBy('created_at')
    .limit(limit)
    .execute();
}

/** The write, locked, if it is still in flight and no other worker holds it. */
export async function lockInFlight(db: Queryable, writeId: string) {
  return db
    .selectFrom('agent_writes')
    .selectAll()
    .where('id', '=', writeId)
    .where('status', 'in', ['sending', 'approving'])
    .forUpdate()
    .skipLocked()
    .executeTakeFirst();
}

/** The write, locked, as the live path reads it before recording the outcome it saw. */
export async function lockWriteById(db: Queryable, writeId: string) {
  return db
    .selectFrom('agent_writes')
    .selectAll()
    .where('id', '=', writeId)
    .forUpdate()
    .executeTakeFirstOrThrow();
}

export type AgentWallet = { id: string; space_id: string; name: string; wallet_address: string };

/** Every agent's wallet (revoked ones too: money may still arrive at their addresses). */
export async function agentWallets(db: Queryable) {
  return db.selectFrom('agents').select(['id', 'space_id', 'name', 'wallet_address']).execute();
}

/** Takes the row lock of the agent whose wallet is `address`, so one wallet account is made per network. */
export async function lockAgentByWallet(db: Queryable, spaceId: string, address: string) {
  await db
    .selectFrom('agents')
    .select('id')
    .where('space_id', '=', spaceId)
    .where('wallet_address', '=', address.toLowerCase())
    .forUpdate()
    .execute();
}

/** Keeps what a write on its way answered (the repair adds what was paid to it). */
export async function noteAnswer(db: Queryable, writeId: string, result: Record<string, unknown>) {
  await db
    .updateTable('agent_writes')
    .set({ result: JSON.stringify(result) })
    .where('id', '=', writeId)
    .where('status', '=', 'sending')
    .execute();
}

/**
 * A paid x402 write applied, as the condition its money.out entry is posted under (see
 * EntryCondition in the ledger): only while it is still on its way, so the repair job and the
 * live path end it, and book it, once.
 */
export function appliedIfSending(writeId: string, result: Record<string, unknown>): RawBuilder<unknown> {
  return sql`
    UPDATE agent_writes SET status = 'applied', result = ${JSON.stringify(result)}::jsonb
    WHERE id = ${writeId}::uuid AND status = 'sending'
    RETURNING id`;
}

/** An approved x402 proposal whose payment settled, as its entry's condition (see appliedIfSending). */
export function approvedIfApproving(writeId: string, result: Record<string, unknown>): RawBuilder<unknown> {
  return sql`
    UPDATE agent_writes SET status = 'approved', result = ${JSON.stringify(result)}::jsonb
    WHERE id = ${writeId}::uuid AND status = 'approving'
    RETURNING id`;
}

/** The book account of an agent's wallet on one network, as a booking needs it (see walletAccountOf). */
export type WalletAccountRef = { id: string; currency: string };

const lastingWalletAccounts = new CommittedRows<WalletAccountRef>();

/**
 * The proven book account of an agent's wallet on a network, read once per process: an account's
 * id, currency, address and network never change and accounts are never deleted, so a proven
 * wallet account read back from a committed transaction is kept (see platform/db/lasting.ts).
 * Undefined when there is none yet, or it is not proven: the caller makes it.
 */
export async function provenWalletAccount(
  db: Queryable,
  spaceId: string,
  address: string,
  network: string,
): Promise<WalletAccountRef | undefined> {
  const key = `${spaceId}|${network}|${address}`;
  const known = lastingWalletAccounts.get(key);
  if (known) return known;
  const row = await db
    .selectFrom('accounts')
    .select(['id', 'currency', readBeforeAnyWrite.as('lasting')])
    .where('space_id', '=', spaceId)
    .where('address', '=', address)
    .where('network', '=', network)
    .where('kind', '=', 'crypto')
    .where('address_proven', '=', address)
    .executeTakeFirst();
  if (!row) return undefined;
  const ref = { id: row.id, currency: row.currency };
  lastingWalletAccounts.keep(key, ref, row.lasting);
  return ref;
}
