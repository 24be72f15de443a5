import { readFile } from 'node:fs/promises';
import type { Clock } from '../../core/clock.ts';
import type { Db } from '../../platform/db/database.ts';
import type { Resolver } from '../../platform/net/public-address.ts';
import { AddressRefused, createSafeFetch } from '../../platform/net/safe-fetch.ts';
import { loadScreeningList } from './service.ts';
import * as store from './store.ts';

// Keeping the list current: the list's URL is asked on a schedule with the validators of the
// download the current list came from (If-None-Match, If-Modified-Since). The ask ends three
// ways: an answer (a new list, loaded under the rules of loadScreeningList; or "not modified"),
// a definite no (the source refuses, or answers something that is not a list), or unknown (no
// answer, a broken connection, a server error): unknown changes nothing and is asked again at
// the next turn.

/** The largest list read (OFAC's SDN.XML is about 30 MB); a longer body is refused. */
export const LIST_BYTES_MAX = 256 * 1024 * 1024;
/** How long one download may take, from the request to the body's last byte. */
export const LIST_TIMEOUT_MS = 5 * 60_000;

export type RefreshDeps = {
  db: Db;
  clock: Clock;
  resolver: Resolver;
  /** Private addresses (loopback, RFC 1918) are reached only in development (WEBHOOK_ALLOW_PRIVATE). */
  allowPrivate: boolean;
};

export type RefreshOutcome =
  | { kind: 'loaded'; publishedOn: string; entries: number; sdnEntries: number }
  | { kind: 'not_modified' }
  | { kind: 'refused'; problem: string }
  | { kind: 'unknown'; problem: string };

type Download =
  | { kind: 'body'; xml: string; validators: store.ListValidators }
  | { kind: 'not_modified' }
  | { kind: 'refused'; problem: string }
  | { kind: 'unknown'; problem: string };

/** One conditional GET of the list: the body, not modified, a definite no, or unknown. */
async function download(deps: RefreshDeps, url: string, validators: store.ListValidators): Promise<Download> {
  const fetchList = createSafeFetch({
    policy: { allowPrivate: deps.allowPrivate },
    resolver: deps.resolver,
    timeoutMs: LIST_TIMEOUT_MS,
    responseBytesMax: LIST_BYTES_MAX + 1,
  });
  const headers: Record<string, string> = { accept: 'application/xml, text/xml' };
  if (validators.etag) headers['if-none-match'] = validators.etag;
  if (validators.lastModified) headers['if-modified-since'] = validators.lastModified;
  let response: Response;
  let body: Uint8Array;
  try {
    response = await fetchList(url, { headers });
    body = new Uint8Array(await response.arrayBuffer());
  } catch (error) {
    if (error instanceof AddressRefused) return { kind: 'refused', problem: error.message };
    return { kind: 'unknown', problem: `no answer from the list's source: ${(error as Error).message}` };
  }
  if (response.status === 304) return { kind: 'not_modified' };
  if (response.status >= 500 || response.status === 429 || response.status === 408) {
    return { kind: 'unknown', problem: `the list's source answered HTTP ${response.status}` };
  }
  if (response.status !== 200) {
    return { kind: 'refused', problem: `the list's source answered HTTP ${response.status}` };
  }
  if (body.byteLength > LIST_BYTES_MAX) {
    return { kind: 'refused', problem: `the list is larger than ${LIST_BYTES_MAX} bytes` };
  }
  return {
    kind: 'body',
    xml: new TextDecoder().decode(body),
    validators: { etag: response.headers.get('etag'), lastModified: response.headers.get('last-modified') },
  };
}

/**
 * Asks the list's URL for a newer list and loads it. The validators are sent only when the
 * current list came from this URL (a list loaded from a file is not what the URL answered).
 * Not modified and every refusal are noted on the current list as its last check; unknown is
 * only answered.
 */
export async function refreshScreeningList(deps: RefreshDeps, url: string): Promise<RefreshOutcome> {
  const current = await store.currentList(deps.db);
  const sameSource = current !== undefined && current.source === url;
  const validators = {
    etag: sameSource ? current.etag : null,
    lastModified: sameSource ? current.last_modified : null,
  };
  const got = await download(deps, url, validators);
  if (got.kind === 'unknown') return got;
  const note = (outcome: string) =>
    current ? store.noteCheck(deps.db, current.id, deps.clock.now(), outcome) : Promise.resolve();
  if (got.kind === 'not_modified') {
    await note('not modified');
    return got;
  }
  if (got.kind === 'refused') {
    await note(`refused: ${got.problem}`);
    return got;
  }
  const loaded = await loadScreeningList(deps, got.xml, url, { validators: got.validators });
  // A refused load notes the check on the current list itself.
  if (!loaded.ok) return { kind: 'refused', problem: loaded.problem };
  return {
    kind: 'loaded',
    publishedOn: loaded.publishedOn,
    entries: loaded.entries,
    sdnEntries: loaded.sdnEntries,
  };
}

/**
 * Whether the scheduled refresh should ask the source now: no list yet, a list loaded from
 * elsewhere, or its last check (or load) `refreshHours` ago or more.
 */
export async function refreshDue(db: Db, url: string, now: Date, refreshHours: number): Promise<boolean> {
  const current = await store.currentList(db);
  if (current === undefined || current.source !== url) return true;
  const last = current.checked_at ?? current.loaded_at;
  return now.getTime() - last.getTime() >= refreshHours * 3_600_000;
}

/**
 * `tollbook screening load`: a URL (http or https) is fetched as the schedule does, anything else
 * read as a file. Answers the outcome; the caller words it.
 */
export async function loadFromSource(deps: RefreshDeps, source: string): Promise<RefreshOutcome> {
  if (/^https?:\/\//i.test(source)) return refreshScreeningList(deps, source);
  let xml: string;
  try {
    xml = await readFile(source, 'utf8');
  } catch (error) {
    return { kind: 'refused', problem: `Cannot read ${source}: ${(error as Error).message}` };
  }
  const loaded = await loadScreeningList(deps, xml, source);
  if (!loaded.ok) return { kind: 'refused', problem: loaded.problem };
  return {
    kind: 'loaded',
    publishedOn: loaded.publishedOn,
    entries: loaded.entries,
    sdnEntries: loaded.sdnEntries,
  };
}
