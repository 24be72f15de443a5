import { randomUUID } from 'node:crypto';
import type { Clock } from '../../core/clock.ts';
import { PAGE_SIZE, pageOf, readCursor } from '../../core/cursor.ts';
import { AppError } from '../../core/errors.ts';
import { randomSecret } from '../../platform/crypto.ts';
import type { Db, Queryable } from '../../platform/db/database.ts';
import type { SafeSender } from '../../platform/net/safe-post.ts';
import { requireAdministrator, requireRole } from '../spaces/index.ts';
import { fileProves, normalizeOrigin, WELL_KNOWN_PATH } from './domain.ts';
import * as store from './store.ts';

// Proof that a space controls a site (spec §1: a payment request may be framed only there): the
// space registers an origin, publishes the token at {origin}/.well-known/tollbook-site.txt, and
// asks Tollbook to fetch it through the SSRF-safe client.

export type SitesDeps = { db: Db; clock: Clock; sender: SafeSender; allowHttp: boolean };

function present(row: store.SiteRow) {
  return {
    id: row.id,
    origin: row.origin,
    token: row.token,
    well_known_url: `${row.origin}${WELL_KNOWN_PATH}`,
    verified: row.verified_at !== null,
    verified_at: row.verified_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  };
}

export async function addSite(deps: SitesDeps, userId: string, spaceId: string, rawOrigin: string) {
  await requireAdministrator(deps.db, spaceId, userId);
  const verdict = normalizeOrigin(rawOrigin, deps.allowHttp);
  if (!verdict.ok) throw new AppError('invalid_request', verdict.reason, { field: 'origin' });
  const row: store.SiteRow = {
    id: randomUUID(),
    space_id: spaceId,
    origin: verdict.origin,
    token: randomSecret('tollbook-site-'),
    verified_at: null,
    created_at: deps.clock.now(),
  };
  const found = await store.insertOrFind(deps.db, row);
  return { created: found.created, site: present(found.row) };
}

/** A space's sites, the newest first, 50 a page (app API and page). */
export async function listSites(
  deps: SitesDeps,
  userId: string,
  spaceId: string,
  query: { cursor?: string | undefined } = {},
) {
  await requireRole(deps.db, spaceId, userId);
  const before = readCursor(query.cursor);
  const rows = await store.listSites(deps.db, spaceId, { before, limit: PAGE_SIZE + 1 });
  const page = pageOf(rows, (row) => ({ at: row.created_at, id: row.id }));
  return { items: page.items.map(present), next_cursor: page.next_cursor };
}

async function siteOr404(deps: SitesDeps, spaceId: string, siteId: string) {
  const site = await store.findSite(deps.db, spaceId, siteId);
  if (!site) throw new AppError('not_found', 'No such site in this space.');
  return site;
}

/** Fetches the well-known file (no redirects, 64 KiB, 10 s) and marks the site proven if it holds the token. */
export async function verifySite(deps: SitesDeps, userId: string, spaceId: string, siteId: string) {
  await requireAdministrator(deps.db, spaceId, userId);
  const site = await siteOr404(deps, spaceId, siteId);
  const url = `${site.origin}${WELL_KNOWN_PATH}`;
  const answer = await deps.sender.get(url, { accept: 'text/plain' });
  const problem =
    answer.kind === 'refused'
      ? answer.reason
      : answer.kind === 'failed'
        ? `Fetching ${url} failed: ${answer.error}.`
        : answer.status !== 200
          ? `${url} answered ${answer.status}, not 200.`
          : !fileProves(answer.body.toString('utf8'), site.token)
            ? `${url} does not contain the token on a line of its own.`
            : undefined;
  if (problem) throw new AppError('site_not_verified', problem, { url });
  const at = deps.clock.now();
  await store.markVerified(deps.db, site.id, at);
  return present({ ...site, verified_at: at });
}

export async function removeSite(deps: SitesDeps, userId: string, spaceId: string, siteId: string) {
  await requireAdministrator(deps.db, spaceId, userId);
  if (!(await store.deleteSite(deps.db, spaceId, siteId)))
    throw new AppError('not_found', 'No such site in this space.');
}

/** The origins a space's payment pages may be framed on. */
export function framingOrigins(db: Queryable, spaceId: string): Promise<string[]> {
  return store.verifiedOrigins(db, spaceId);
}
