import { sql } from 'kysely';
import type { Cursor } from '../../core/cursor.ts';
import type { Queryable } from '../../platform/db/database.ts';
import { olderThan } from '../../platform/db/paging.ts';
import type { Role } from '../../platform/db/schema.ts';
import type { Principal } from './domain.ts';

export type NewKey = {
  id: string;
  spaceId: string;
  issuerUserId: string;
  name: string;
  keyHash: string;
  prefix: string;
  scopes: Principal['scopes'];
  webhookUrl: string | null;
  webhookSecretSealed: string;
  pushSourceId: string | null;
  at: Date;
  expiresAt: Date | null;
};

export async function insertKey(db: Queryable, key: NewKey) {
  await db
    .insertInto('integration_keys')
    .values({
      id: key.id,
      space_id: key.spaceId,
      issuer_user_id: key.issuerUserId,
      name: key.name,
      key_hash: key.keyHash,
      prefix: key.prefix,
      scopes: key.scopes,
      webhook_url: key.webhookUrl,
      webhook_secret_sealed: key.webhookSecretSealed,
      push_source_id: key.pushSourceId,
      created_at: key.at,
      expires_at: key.expiresAt,
    })
    .execute();
}

/** Serialises issuance per space, so the ten-key limit holds under concurrent requests. */
export async function lockSpace(db: Queryable, spaceId: string) {
  await db.selectFrom('spaces').select('id').where('id', '=', spaceId).forUpdate().executeTakeFirstOrThrow();
}

export async function countLiveKeys(db: Queryable, spaceId: string, now: Date): Promise<number> {
  const row = await db
    .selectFrom('integration_keys')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('space_id', '=', spaceId)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function findOrCreatePushSource(
  db: Queryable,
  source: { id: string; spaceId: string; name: string; at: Date },
) {
  await db
    .insertInto('push_sources')
    .values({ id: source.id, space_id: source.spaceId, name: source.name, created_at: source.at })
    .onConflict((conflict) => conflict.columns(['space_id', 'name']).doNothing())
    .execute();
  const row = await db
    .selectFrom('push_sources')
    .select('id')
    .where('space_id', '=', source.spaceId)
    .where('name', '=', source.name)
    .executeTakeFirstOrThrow();
  return row.id;
}

const KEY_LIST_COLUMNS = [
  'integration_keys.id',
  'integration_keys.name',
  'integration_keys.prefix',
  'integration_keys.scopes',
  'integration_keys.webhook_url',
  'integration_keys.issuer_user_id',
  'integration_keys.created_at',
  'integration_keys.expires_at',
  'integration_keys.revoked_at',
  'integration_keys.last_used_at',
  'push_sources.name as push_source',
] as const;

/** A space's keys, revoked and expired ones too, newest first, `limit` older than `before`. */
export function listKeys(
  db: Queryable,
  spaceId: string,
  page: { before: Cursor | undefined; limit: number },
) {
  return db
    .selectFrom('integration_keys')
    .leftJoin('push_sources', 'push_sources.id', 'integration_keys.push_source_id')
    .select(KEY_LIST_COLUMNS)
    .where('integration_keys.space_id', '=', spaceId)
    .where(olderThan('integration_keys.created_at', 'integration_keys.id', page.before))
    .orderBy('integration_keys.created_at', 'desc')
    .orderBy('integration_keys.id', 'desc')
    .limit(page.limit)
    .execute();
}

export function findKey(db: Queryable, spaceId: string, keyId: string) {
  return db
    .selectFrom('integration_keys')
    .leftJoin('push_sources', 'push_sources.id', 'integration_keys.push_source_id')
    .select(KEY_LIST_COLUMNS)
    .where('integration_keys.space_id', '=', spaceId)
    .where('integration_keys.id', '=', keyId)
    .executeTakeFirst();
}

export async function markRevoked(db: Queryable, spaceId: string, keyId: string, at: Date) {
  await db
    .updateTable('integration_keys')
    .set({ revoked_at: at })
    .where('space_id', '=', spaceId)
    .where('id', '=', keyId)
    .where('revoked_at', 'is', null)
    .execute();
}

type PrincipalRow = {
  key_hash: string;
  id: string;
  space_id: string;
  issuer_user_id: string;
  scopes: string[];
  push_source_id: string | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  role: Role | null;
  integration_enabled: boolean;
  payments_enabled: boolean;
  auth_version: number;
};

/** The live principal for each hash, read in one statement for a whole batch of calls. */
export async function findPrincipals(db: Queryable, hashes: string[]): Promise<Map<string, Principal>> {
  const result = await sql<PrincipalRow>`
    SELECT k.key_hash, k.id, k.space_id, k.issuer_user_id, k.scopes, k.push_source_id, k.expires_at,
           k.revoked_at, m.role, s.integration_enabled, s.payments_enabled, s.auth_version
    FROM integration_keys k
    JOIN spaces s ON s.id = k.space_id
    LEFT JOIN members m ON m.space_id = k.space_id AND m.user_id = k.issuer_user_id
    WHERE k.key_hash = ANY(${hashes}::text[])`.execute(db);
  return new Map(
    result.rows.map((row) => [
      row.key_hash,
      {
        keyId: row.id,
        spaceId: row.space_id,
        issuerUserId: row.issuer_user_id,
        scopes: row.scopes as Principal['scopes'],
        pushSourceId: row.push_source_id,
        expiresAt: row.expires_at,
        revokedAt: row.revoked_at,
        issuerRole: row.role,
        integrationEnabled: row.integration_enabled,
        paymentsEnabled: row.payments_enabled,
        authVersion: row.auth_version,
      },
    ]),
  );
}

/** Keys ending within `lead` whose issuer has not been told yet, claimed for one worker. */
export function claimKeysToRemind(db: Queryable, now: Date, leadMs: number, limit: number) {
  return db
    .selectFrom('integration_keys')
    .select(['id', 'space_id', 'issuer_user_id', 'name', 'prefix', 'expires_at'])
    .where('revoked_at', 'is', null)
    .where('expiry_reminded_at', 'is', null)
    .where('expires_at', 'is not', null)
    .where('expires_at', '>', now)
    .where('expires_at', '<=', new Date(now.getTime() + leadMs))
    .orderBy('expires_at')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
}

export async function markReminded(db: Queryable, keyId: string, at: Date) {
  await db.updateTable('integration_keys').set({ expiry_reminded_at: at }).where('id', '=', keyId).execute();
}

/** Records a key's use; only ever moves the time forward. */
export async function markUsed(db: Queryable, keyId: string, at: Date) {
  await db
    .updateTable('integration_keys')
    .set({ last_used_at: at })
    .where('id', '=', keyId)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at)]))
    .execute();
}
