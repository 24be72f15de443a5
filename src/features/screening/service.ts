import { randomUUID } from 'node:crypto';
import type { Clock } from '../../core/clock.ts';
import type { Db, Queryable } from '../../platform/db/database.ts';
import type { ScrapeGauge } from '../../platform/metrics.ts';
import { type ScreeningSubject, subjectValues } from './domain.ts';
import { NameIndex } from './near.ts';
import { parseSdnXml } from './sdn-xml.ts';
import * as store from './store.ts';

// The operator's sanctions list and the check every payment out passes before it leaves.

export type LoadOutcome =
  | { ok: true; listId: string; publishedOn: string; entries: number; sdnEntries: number }
  | { ok: false; problem: string };

/** A new list replaces the current one only when it holds at least this share of its entries. */
export const KEEP_SHARE = 0.5;

/**
 * Loads SDN.XML text as the new current list, in one transaction (the old list serves until
 * then). A list that does not parse, or holds fewer than half the current list's entries (a
 * truncated download), is refused and the current list stays, unless `force` (an operator's
 * deliberate load of a smaller list).
 */
export async function loadScreeningList(
  deps: { db: Db; clock: Clock },
  xml: string,
  source: string,
  options: { force?: boolean; validators?: store.ListValidators } = {},
): Promise<LoadOutcome> {
  const parsed = parseSdnXml(xml);
  if (!parsed.ok) {
    const current = await store.currentList(deps.db);
    if (current) await store.noteCheck(deps.db, current.id, deps.clock.now(), `refused: ${parsed.problem}`);
    return parsed;
  }
  const listId = randomUUID();
  const size = parsed.list.entries.length;
  const refused = await deps.db.transaction().execute(async (tx) => {
    const current = await store.lockCurrentList(tx);
    if (current && !options.force && size < current.entries * KEEP_SHARE) {
      await store.noteCheck(tx, current.id, deps.clock.now(), 'refused: too few entries');
      return `The new list holds ${size} entries, fewer than half the current list's ${current.entries}: the current list stays.`;
    }
    await store.insertList(tx, {
      id: listId,
      source,
      publishedOn: parsed.list.publishedOn,
      entries: parsed.list.entries,
      at: deps.clock.now(),
      validators: options.validators ?? { etag: null, lastModified: null },
    });
    await store.makeCurrent(tx, listId);
    return undefined;
  });
  if (refused !== undefined) return { ok: false, problem: refused };
  // This process screens against the new list at once; others within REFRESH_MS.
  index = undefined;
  return {
    ok: true,
    listId,
    publishedOn: parsed.list.publishedOn,
    entries: size,
    sdnEntries: parsed.list.sdnCount,
  };
}

/** A list published longer ago than this is shown with a warning. */
export const STALE_DAYS = 7;

export type ScreeningListStatus = {
  loaded: boolean;
  published_on: string | null;
  entries: number;
  loaded_at: string | null;
  source: string | null;
  checked_at: string | null;
  check_outcome: string | null;
  /** Published more than STALE_DAYS days ago (or undated): the page warns. */
  stale: boolean;
};

export async function screeningStatus(db: Queryable, now = new Date()): Promise<ScreeningListStatus> {
  const list = await store.currentList(db);
  const published = list ? Date.parse(list.published_on) : Number.NaN;
  const stale =
    list !== undefined && (Number.isNaN(published) || now.getTime() - published > STALE_DAYS * 86_400_000);
  return {
    loaded: list !== undefined,
    published_on: list?.published_on ?? null,
    entries: list?.entries ?? 0,
    loaded_at: list?.loaded_at.toISOString() ?? null,
    source: list?.source ?? null,
    checked_at: list?.checked_at?.toISOString() ?? null,
    check_outcome: list?.check_outcome ?? null,
    stale,
  };
}

/** A list entry a payment (or a payer) matched: how, which entry as listed, and how closely. */
export type ScreeningHit = {
  kind: 'name' | 'address';
  sdnUid: string;
  listed: string;
  programs: string;
  /** 1 for an exact (normalised) match; the name score for a near one. */
  score: number;
  /** The payment's own name or address that matched. */
  matched: string;
  /** Where the list that matched came from (its URL or file, as loaded). */
  source: string;
};

/** A hit as the index finds it, before the list's source is added. */
export type IndexHit = Omit<ScreeningHit, 'source'>;

type Listed = { sdnUid: string; listed: string; programs: string };

/**
 * The current list held in this process: addresses in a map, names in a NameIndex (near.ts), so
 * a screen costs a lookup and a few scored candidates, not a query. The database stays the source
 * of truth: the list's id is re-read at most every REFRESH_MS, so a list loaded by `tollbook
 * screening load` or the scheduled refresh reaches every server process within that time.
 */
type ScreeningIndex = {
  listId: string | null;
  source: string;
  names: NameIndex<Listed>;
  addresses: Map<string, Listed>;
  checkedAt: number;
};

const REFRESH_MS = 5_000;
let index: ScreeningIndex | undefined;

/** The lowest name score that holds a payment (SCREENING_MIN_SCORE); set once at start-up. */
export const DEFAULT_MIN_SCORE = 0.92;
let minScore = DEFAULT_MIN_SCORE;

export function configureScreening(settings: { minScore: number }) {
  minScore = settings.minScore;
}

/** Builds the in-process index of a list's entries (also used by the benchmark). */
export function buildIndex(
  entries: readonly { kind: string; value: string; sdn_uid: string; listed: string; programs: string }[],
) {
  const names = new NameIndex<Listed>();
  const addresses = new Map<string, Listed>();
  for (const entry of entries) {
    const listed = { sdnUid: entry.sdn_uid, listed: entry.listed || entry.value, programs: entry.programs };
    if (entry.kind === 'address') addresses.set(entry.value, listed);
    else names.add(entry.value.split(' '), listed);
  }
  return { names, addresses };
}

async function currentIndex(db: Queryable): Promise<ScreeningIndex> {
  const now = Date.now();
  if (index && now - index.checkedAt < REFRESH_MS) return index;
  const list = await store.currentList(db);
  const listId = list?.id ?? null;
  if (index && index.listId === listId) {
    index.checkedAt = now;
    return index;
  }
  const built = buildIndex(listId === null ? [] : await store.entriesOf(db, listId));
  const fresh: ScreeningIndex = { listId, source: list?.source ?? '', ...built, checkedAt: now };
  index = fresh;
  return fresh;
}

/** The subject against an index: an address hit first, then the best name at or above the score. */
export function matchSubject(
  current: Pick<ScreeningIndex, 'names' | 'addresses'>,
  subject: ScreeningSubject,
  threshold: number,
): IndexHit | undefined {
  const { names, addresses } = subjectValues(subject);
  for (const address of addresses) {
    const listed = current.addresses.get(address);
    if (listed !== undefined) return { kind: 'address', ...listed, score: 1, matched: address };
  }
  let best: IndexHit | undefined;
  for (const words of names) {
    const hit = current.names.best(words, threshold);
    if (hit && (best === undefined || hit.score > best.score)) {
      best = { kind: 'name', ...hit.entry, score: hit.score, matched: words.join(' ') };
    }
  }
  return best;
}

/** The current list's entry a payment's address or names match (exactly or near), or undefined. */
export async function screen(db: Queryable, subject: ScreeningSubject): Promise<ScreeningHit | undefined> {
  const current = await currentIndex(db);
  const hit = matchSubject(current, subject, minScore);
  return hit && { ...hit, source: current.source };
}

/** What an x402 payer on the sanctions list is answered (the address itself is not echoed). */
export const SANCTIONED_PAYER = "The payer's address is on the sanctions list; nothing was settled.";

/**
 * Whether a paying address (an x402 authorization's `from`, an incoming transfer's sender) is on
 * the current list. Money from it is refused before settling, or, once on chain, flagged.
 */
export async function payerListed(db: Queryable, from: string): Promise<ScreeningHit | undefined> {
  return screen(db, { address: from, names: [] });
}

/** Records the entry that held a payment, for its page (the owner reads it before releasing). */
export async function recordHold(
  db: Queryable,
  hold: { spaceId: string; payoutId: string; hit: ScreeningHit; at: Date },
) {
  await store.recordMatch(db, {
    spaceId: hold.spaceId,
    payoutId: hold.payoutId,
    kind: hold.hit.kind,
    sdnUid: hold.hit.sdnUid,
    listed: hold.hit.listed,
    programs: hold.hit.programs,
    score: (Math.floor(hold.hit.score * 1000) / 1000).toFixed(3),
    matched: hold.hit.matched,
    source: hold.hit.source,
    at: hold.at,
  });
}

export type HoldMatch = Awaited<ReturnType<typeof store.matchesOf>>[number];

/** The entries that held these payments (one per payment held at least once). */
export async function holdMatches(db: Queryable, spaceId: string, payoutIds: string[]): Promise<HoldMatch[]> {
  return store.matchesOf(db, spaceId, payoutIds);
}

/**
 * The list's size and its publication date as gauges operators scrape (read from the database
 * at scrape time: one indexed read each). A list without a date, or no list, reads 0.
 */
export function screeningGauges(db: Queryable): ScrapeGauge[] {
  return [
    {
      name: 'tollbook_screening_list_entries',
      help: 'Names and addresses in the current sanctions list (0 when none is loaded).',
      read: async () => (await screeningStatus(db)).entries,
    },
    {
      name: 'tollbook_screening_list_published_seconds',
      help: 'Publication date of the current sanctions list, as Unix time (0 when none or undated).',
      read: async () => {
        const publishedOn = (await screeningStatus(db)).published_on;
        const published = publishedOn ? Date.parse(publishedOn) : Number.NaN;
        return Number.isNaN(published) ? 0 : Math.floor(published / 1000);
      },
    },
  ];
}
