import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { canonicalJson } from '../../core/canonical-json.ts';
import type { Clock } from '../../core/clock.ts';
import { AppError } from '../../core/errors.ts';
import { sha256Hex } from '../crypto.ts';
import type { Db, Queryable, Tx } from '../db/database.ts';
import { renderError } from './errors.ts';
import { requireCaller } from './typed.ts';

// runWrite is the one road for a write: it opens the transaction, and with an Idempotency-Key
// it claims the key first and stores the answer in the same transaction as the write, so a
// write and its remembered answer commit together or not at all.

const RETENTION_MS = 24 * 60 * 60 * 1000;
/** How long a claim blocks a retry before a crashed first attempt may be taken over. */
const CLAIM_LEASE_MS = 60 * 1000;
const IDEMPOTENCY_KEY_SHAPE = /^[\x21-\x7e]{1,255}$/;
const JSON_TYPE = 'application/json; charset=utf-8';

export type WriteDeps = { db: Db; clock: Clock };

type Claim = { kind: 'owned'; ownerToken: string } | { kind: 'replay'; status: number; body: string };

function routeName(request: FastifyRequest): string {
  return `${request.method} ${request.routeOptions.url ?? request.url}`;
}

function requestHash(request: FastifyRequest): string {
  return sha256Hex(`${routeName(request)}\n${canonicalJson(request.body ?? null)}`);
}

async function claim(deps: WriteDeps, request: FastifyRequest, idempotencyKey: string): Promise<Claim> {
  const caller = request.integration;
  if (!caller) throw new Error('Idempotency-Key needs an integration caller.');
  const now = deps.clock.now();
  const ownerToken = randomUUID();
  const hash = requestHash(request);
  const route = routeName(request);
  const claimed = await deps.db
    .insertInto('idempotency_records')
    .values({
      space_id: caller.spaceId,
      key_id: caller.keyId,
      route,
      idempotency_key: idempotencyKey,
      request_hash: hash,
      state: 'running',
      owner_token: ownerToken,
      locked_until: new Date(now.getTime() + CLAIM_LEASE_MS),
      created_at: now,
      expires_at: new Date(now.getTime() + RETENTION_MS),
    })
    .onConflict((conflict) =>
      conflict
        .columns(['key_id', 'route', 'idempotency_key'])
        .doUpdateSet((eb) => ({
          request_hash: eb.ref('excluded.request_hash'),
          state: 'running',
          owner_token: eb.ref('excluded.owner_token'),
          locked_until: eb.ref('excluded.locked_until'),
          response_status: null,
          response_body: null,
          created_at: eb.ref('excluded.created_at'),
          expires_at: eb.ref('excluded.expires_at'),
        }))
        // Re-claim only a record past its retention, or a lapsed claim for the same body.
        .where((eb) =>
          eb.or([
            eb('idempotency_records.expires_at', '<=', now),
            eb.and([
              eb('idempotency_records.state', '=', 'running'),
              eb('idempotency_records.locked_until', '<=', now),
              eb('idempotency_records.request_hash', '=', hash),
            ]),
          ]),
        ),
    )
    .returning('owner_token')
    .executeTakeFirst();
  if (claimed?.owner_token === ownerToken) return { kind: 'owned', ownerToken };

  const existing = await deps.db
    .selectFrom('idempotency_records')
    .select(['request_hash', 'state', 'response_status', 'response_body'])
    .where('key_id', '=', caller.keyId)
    .where('route', '=', route)
    .where('idempotency_key', '=', idempotencyKey)
    .executeTakeFirst();
  if (!existing) return claim(deps, request, idempotencyKey);
  if (existing.request_hash !== hash) {
    throw new AppError(
      'idempotency_key_reused',
      'This Idempotency-Key was already used with a different body; use a new key for a new request.',
    );
  }
  if (existing.state === 'running') {
    throw new AppError(
      'idempotency_in_progress',
      'A request with this Idempotency-Key is still being processed; retry shortly.',
    );
  }
  return { kind: 'replay', status: existing.response_status ?? 200, body: existing.response_body ?? '' };
}

async function finishRecord(
  tx: Db | Tx,
  request: FastifyRequest,
  key: string,
  ownerToken: string,
  status: number,
  body: string,
) {
  const result = await tx
    .updateTable('idempotency_records')
    .set({ state: 'done', response_status: status, response_body: body })
    .where('key_id', '=', requireCaller(request, 'integration').keyId)
    .where('route', '=', routeName(request))
    .where('idempotency_key', '=', key)
    .where('owner_token', '=', ownerToken)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Frees a claim whose write failed, so a retry redoes it at once. Only a claim still `running`:
 * when the connection was cut during COMMIT the write may have committed with its answer
 * (`done`), and that answer must stay for the retry to replay rather than write again.
 */
async function releaseRecord(deps: WriteDeps, request: FastifyRequest, key: string, ownerToken: string) {
  await deps.db
    .deleteFrom('idempotency_records')
    .where('state', '=', 'running')
    .where('key_id', '=', requireCaller(request, 'integration').keyId)
    .where('route', '=', routeName(request))
    .where('idempotency_key', '=', key)
    .where('owner_token', '=', ownerToken)
    .execute();
}

function readIdempotencyKey(request: FastifyRequest): string | undefined {
  const raw = request.headers['idempotency-key'];
  if (raw === undefined) return undefined;
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value === undefined || !IDEMPOTENCY_KEY_SHAPE.test(value)) {
    throw new AppError(
      'invalid_request',
      'Idempotency-Key must be 1 to 255 printable ASCII characters without spaces.',
      {
        header: 'Idempotency-Key',
      },
    );
  }
  return value;
}

/**
 * runWrite for a use case that is atomic on its own: one statement on its common path, and a
 * transaction of its own wherever it needs more (see `inTransaction`). Without an
 * Idempotency-Key it runs on the database handle, which saves the BEGIN and COMMIT round trips;
 * with one, it runs inside runWrite's transaction, so the write and its remembered answer still
 * commit together.
 */
export async function runAtomicWrite<T>(
  deps: WriteDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  execute: (db: Queryable) => Promise<T>,
): Promise<void> {
  const idempotencyKey = request.routeOptions.config.idempotent ? readIdempotencyKey(request) : undefined;
  if (idempotencyKey !== undefined) return runWrite(deps, request, reply, status, execute);
  const result = await execute(deps.db);
  reply.code(status).send(result);
}

/**
 * Runs `execute` in one transaction and sends its result with `status`, serialized by the
 * route's response schema. With an Idempotency-Key (on routes marked idempotent) a retry gets
 * the first answer byte for byte, with `Idempotent-Replayed: true`.
 */
export async function runWrite<T>(
  deps: WriteDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  execute: (tx: Tx) => Promise<T>,
): Promise<void> {
  const idempotencyKey = request.routeOptions.config.idempotent ? readIdempotencyKey(request) : undefined;
  if (idempotencyKey === undefined) {
    const result = await deps.db.transaction().execute(execute);
    reply.code(status).send(result);
    return;
  }
  const claimed = await claim(deps, request, idempotencyKey);
  if (claimed.kind === 'replay') {
    reply.code(claimed.status).header('idempotent-replayed', 'true').type(JSON_TYPE).send(claimed.body);
    return;
  }
  try {
    const text = await deps.db.transaction().execute(async (tx) => {
      const result = await execute(tx);
      const serialized = String(reply.code(status).serialize(result));
      // Another process took over a lapsed claim: this attempt must not commit its write.
      if (!(await finishRecord(tx, request, idempotencyKey, claimed.ownerToken, status, serialized))) {
        throw new AppError(
          'idempotency_in_progress',
          'This Idempotency-Key was taken over by a later retry.',
        );
      }
      return serialized;
    });
    reply.code(status).type(JSON_TYPE).send(text);
  } catch (error) {
    const rendered = renderError(error);
    if (rendered && rendered.status < 500 && rendered.status !== 429 && rendered.status !== 409) {
      await finishRecord(
        deps.db,
        request,
        idempotencyKey,
        claimed.ownerToken,
        rendered.status,
        JSON.stringify(rendered.body),
      );
    } else {
      await releaseRecord(deps, request, idempotencyKey, claimed.ownerToken);
    }
    throw error;
  }
}

/** Drops records past their 24-hour retention; run by the housekeeping job. */
export async function pruneIdempotencyRecords(db: Db, clock: Clock): Promise<number> {
  const result = await db
    .deleteFrom('idempotency_records')
    .where('expires_at', '<', clock.now())
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
