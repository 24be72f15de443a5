import { randomUUID } from 'node:crypto';
import type { Clock } from '../../core/clock.ts';
import type { Db, Queryable } from '../../platform/db/database.ts';
import type { ScrapeGauge } from '../../platform/metrics.ts';
import { type ScreeningSubject, subjectValues } from './domain.ts';
import { parseSdnXml } from './sdn-xml.ts';
import * as store from './store.ts';

// The operator's sanctions list and the check every payment out passes before it leaves.

export type LoadOutcome =
  | { ok: true; listId: string; publishedOn: string; entries: number; sdnEntries: number }
  | { ok: false; problem: string };

/** Loads SDN.XML text as the new current list, in one transaction (the old list serves until then). */
export async function loadScreeningList(
  deps: { db: Db; clock: Clock },
  xml: string,
  source: string,
): Promise<LoadOutcome> {
  const parsed = parseSdnXml(xml);
  if (!parsed.ok) return parsed;
  const listId = randomUUID();
  await deps.db.transaction().execute(async (tx) => {
    await store.insertList(tx, {
      id: listId,
      source,
      publishedOn: parsed.list.publishedOn,
      entries: parsed.list.entries,
      at: deps.clock.now(),
    });
    await store.makeCurrent(tx, listId);
  });
  // This process screens against the new list at once; others within REFRESH_MS.
  index = undefined;
  return {
    ok: true,
    listId,
    publishedOn: parsed.list.publishedOn,
    entries: parsed.list.entries.length,
    sdnEntries: parsed.list.sdnCount,
  };
}

export type ScreeningListStatus = {
  loaded: boolean;
  published_on: string | null;
  entries: number;
  loaded_at: string | null;
  source: string | null;
};

export async function screeningStatus(db: Queryable): Promise<ScreeningListStatus> {
  const list = await store.currentList(db);
  return {
    loaded: list !== undefined,
    published_on: list?.published_on ?? null,
    entries: list?.entries ?? 0,
    loaded_at: list?.loaded_at.toISOString() ?? null,
    source: list?.source ?? null,
  };
}

export type ScreeningHit = { kind: 'name' | 'address'; sdnUid: string };

/**
 * The current list held in this process as two maps, so a screen costs a lookup, not a query.
 * The database stays the source of truth: the list's id is re-read at most every REFRESH_MS, so
 * a list loaded by `tollbook screening load` reaches every server process within that time.
 */
type ScreeningIndex = {
  listId: string | null;
  names: Map<string, string>;
  addresses: Map<string, string>;
  checkedAt: number;
};

const REFRESH_MS = 5_000;
let index: ScreeningIndex | undefined;

async function currentIndex(db: Queryable): Promise<ScreeningIndex> {
  const now = Date.now();
  if (index && now - index.checkedAt < REFRESH_MS) return index;
  const list = await store.currentList(db);
  const listId = list?.id ?? null;
  if (index && index.listId === listId) {
    index.checkedAt = now;
    return index;
  }
  const fresh: ScreeningIndex = { listId, names: new Map(), addresses: new Map(), checkedAt: now };
  for (const entry of listId === null ? [] : await store.entriesOf(db, listId)) {
    (entry.kind === 'name' ? fresh.names : fresh.addresses).set(entry.value, entry.sdn_uid);
  }
  index = fresh;
  return fresh;
}

/** The current list's entry a payment's address or names match, or undefined when clear. */
export async function screen(db: Queryable, subject: ScreeningSubject): Promise<ScreeningHit | undefined> {
  const { names, addresses } = subjectValues(subject);
  const current = await currentIndex(db);
  for (const address of addresses) {
    const sdnUid = current.addresses.get(address);
    if (sdnUid !== undefined) return { kind: 'address', sdnUid };
  }
  for (const name of names) {
    const sdnUid = current.names.get(name);
    if (sdnUid !== undefined) return { kind: 'name', sdnUid };
  }
  return undefined;
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
