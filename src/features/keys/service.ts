import { randomUUID } from 'node:crypto';
import { defined } from '../../core/assert.ts';
import type { Clock } from '../../core/clock.ts';
import { PAGE_SIZE, pageOf, readCursor } from '../../core/cursor.ts';
import { AppError } from '../../core/errors.ts';
import { SECRET_PREFIX } from '../../core/ids.ts';
import type { AuthStamps } from '../../platform/auth-stamps.ts';
import { randomSecret, type SecretBox, sha256Hex } from '../../platform/crypto.ts';
import type { Db } from '../../platform/db/database.ts';
import type { Scope } from '../../platform/http/context.ts';
import {
  checkPublicUrl,
  DEVELOPMENT_SWITCH_HINT,
  developmentSwitchWouldAdmit,
  type Resolver,
} from '../../platform/net/public-address.ts';
import { insertNotification } from '../notifications/index.ts';
import { invalidateKeys, requireAdministrator } from '../spaces/index.ts';
import { expiryFor, KEYS_PER_SPACE_MAX, keyStatus, type LifetimeDays, REMINDER_LEAD_MS } from './domain.ts';
import * as store from './store.ts';

export type KeysDeps = {
  db: Db;
  clock: Clock;
  secrets: SecretBox;
  authStamps: AuthStamps;
  resolver: Resolver;
  webhookAllowPrivate: boolean;
  webhookAllowList?: readonly string[] | undefined;
  /** False in development: a refusal the development switch would lift names it. */
  production?: boolean | undefined;
};

export type KeyIssueInput = {
  name: string;
  scopes: Scope[];
  webhook_url?: string | null;
  lifetime_days?: LifetimeDays;
  push_source?: string;
};

const DISPLAY_PREFIX_LENGTH = 12;

type KeyRow = Awaited<ReturnType<typeof store.listKeys>>[number];

function present(row: KeyRow, now: Date) {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes,
    webhook_url: row.webhook_url,
    push_source: row.push_source ?? null,
    issuer_user_id: row.issuer_user_id,
    status: keyStatus({ revokedAt: row.revoked_at, expiresAt: row.expires_at }, now),
    created_at: row.created_at.toISOString(),
    expires_at: row.expires_at ? row.expires_at.toISOString() : null,
    revoked_at: row.revoked_at ? row.revoked_at.toISOString() : null,
    last_used_at: row.last_used_at ? row.last_used_at.toISOString() : null,
  };
}

async function checkWebhookUrl(deps: KeysDeps, url: string | null | undefined): Promise<string | null> {
  if (url === undefined || url === null || url === '') return null;
  const policy = { allowPrivate: deps.webhookAllowPrivate, allowList: deps.webhookAllowList ?? [] };
  const verdict = await checkPublicUrl(url, policy, deps.resolver);
  if (!verdict.ok) {
    const hint =
      deps.production === false && (await developmentSwitchWouldAdmit(url, policy, deps.resolver))
        ? ` ${DEVELOPMENT_SWITCH_HINT}`
        : '';
    throw new AppError(
      'webhook_address_not_public',
      `The webhook address is refused: ${verdict.reason}${hint}`,
      {
        field: 'webhook_url',
      },
    );
  }
  return verdict.url.toString();
}

function checkPushSource(input: KeyIssueInput): void {
  const wantsPush = input.scopes.includes('transactions');
  if (wantsPush && !input.push_source) {
    throw new AppError(
      'invalid_request',
      'A key with the transactions scope needs push_source: the name of the source it files into.',
      {
        field: 'push_source',
      },
    );
  }
  if (!wantsPush && input.push_source !== undefined) {
    throw new AppError('invalid_request', 'push_source is only for keys with the transactions scope.', {
      field: 'push_source',
    });
  }
}

/** Issues a key; the key and the webhook secret appear in this answer only. */
export async function issueKey(deps: KeysDeps, actorId: string, spaceId: string, input: KeyIssueInput) {
  await requireAdministrator(deps.db, spaceId, actorId);
  checkPushSource(input);
  const webhookUrl = await checkWebhookUrl(deps, input.webhook_url);
  const key = randomSecret(SECRET_PREFIX.integrationKey);
  const webhookSecret = randomSecret('whsec_');
  const now = deps.clock.now();
  const id = randomUUID();
  await deps.db.transaction().execute(async (tx) => {
    await store.lockSpace(tx, spaceId);
    if ((await store.countLiveKeys(tx, spaceId, now)) >= KEYS_PER_SPACE_MAX) {
      throw new AppError(
        'key_limit_reached',
        `A space holds at most ${KEYS_PER_SPACE_MAX} live keys; revoke one first.`,
        {
          limit: KEYS_PER_SPACE_MAX,
        },
      );
    }
    const pushSourceId = input.push_source
      ? await store.findOrCreatePushSource(tx, {
          id: randomUUID(),
          spaceId,
          name: input.push_source,
          at: now,
        })
      : null;
    await store.insertKey(tx, {
      id,
      spaceId,
      issuerUserId: actorId,
      name: input.name,
      keyHash: sha256Hex(key),
      prefix: key.slice(0, DISPLAY_PREFIX_LENGTH),
      scopes: input.scopes,
      webhookUrl,
      webhookSecretSealed: deps.secrets.seal(webhookSecret),
      pushSourceId,
      at: now,
      expiresAt: expiryFor(input.scopes, input.lifetime_days, now),
    });
  });
  const row = await store.findKey(deps.db, spaceId, id);
  return { ...present(defined(row, 'the key just made'), now), key, webhook_secret: webhookSecret };
}

/** The space's keys, newest first, 50 a page (app API and page). */
export async function listKeys(
  deps: KeysDeps,
  actorId: string,
  spaceId: string,
  query: { cursor?: string | undefined } = {},
) {
  await requireAdministrator(deps.db, spaceId, actorId);
  const before = readCursor(query.cursor);
  const now = deps.clock.now();
  const rows = await store.listKeys(deps.db, spaceId, { before, limit: PAGE_SIZE + 1 });
  const page = pageOf(rows, (row) => ({ at: row.created_at, id: row.id }));
  return { items: page.items.map((row) => present(row, now)), next_cursor: page.next_cursor };
}

/** Revokes a key; every process refuses it from its next call on. */
export async function revokeKey(deps: KeysDeps, actorId: string, spaceId: string, keyId: string) {
  await requireAdministrator(deps.db, spaceId, actorId);
  const now = deps.clock.now();
  const publish = await deps.db.transaction().execute(async (tx) => {
    const row = await store.findKey(tx, spaceId, keyId);
    if (!row) throw new AppError('not_found', 'No such key in this space.');
    await store.markRevoked(tx, spaceId, keyId, now);
    return invalidateKeys(deps, tx, spaceId);
  });
  await publish();
  return present(defined(await store.findKey(deps.db, spaceId, keyId), 'the key just revoked'), now);
}

/** Job: tells each issuer, a week ahead, that a key of theirs is about to end. */
export async function remindExpiringKeys(
  deps: Pick<KeysDeps, 'db' | 'clock'>,
  batchSize = 100,
): Promise<number> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (tx) => {
    const due = await store.claimKeysToRemind(tx, now, REMINDER_LEAD_MS, batchSize);
    for (const key of due) {
      await insertNotification(tx, {
        spaceId: key.space_id,
        userId: key.issuer_user_id,
        kind: 'key_expiring',
        subjectId: key.id,
        payload: {
          key_id: key.id,
          name: key.name,
          prefix: key.prefix,
          expires_at: defined(key.expires_at, 'the end of a key due a reminder').toISOString(),
        },
        at: now,
      });
      await store.markReminded(tx, key.id, now);
    }
    return due.length;
  });
}
