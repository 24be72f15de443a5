import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import {
  loadScreeningList,
  type RefreshDeps,
  refreshDue,
  refreshScreeningList,
  screen,
  screeningStatus,
} from '../src/features/screening/index.ts';
import { createHarness, type Harness } from './harness.ts';
import { freshCommandDatabase } from './support/command-database.ts';
import { holdScreeningList } from './support/turns.ts';

// The list kept current from its URL, served here from a loopback HTTP server: a new list (200)
// replaces the old one with its validators; a 304 changes nothing but the last check; a truncated
// download, a corrupt one and one with fewer than half the entries are refused and the current
// list stays; no answer (a 500, a dropped connection) changes nothing at all.

/** An SDN.XML of `count` entries named `<prefix> <n>` (one name each). */
function sdnList(prefix: string, count: number, published = '11/25/2026') {
  const entries = Array.from(
    { length: count },
    (
      _,
      at,
    ) => `<sdnEntry><uid>${60000 + at}</uid><lastName>${prefix} ${String.fromCharCode(65 + (at % 26))}${at}
  </lastName><sdnType>Entity</sdnType><programList><program>SDGT</program></programList></sdnEntry>`,
  ).join('\n');
  return `<?xml version="1.0"?><sdnList><publshInformation><Publish_Date>${published}</Publish_Date>
  </publshInformation>${entries}</sdnList>`;
}

type Answer = (req: IncomingMessage, res: ServerResponse) => void;
// This file loads its own sanctions list (the database's current one).
holdScreeningList();

let answer: Answer = (_req, res) => res.writeHead(404).end();
const asked: IncomingMessage['headers'][] = [];
const server = createServer((req, res) => {
  asked.push(req.headers);
  answer(req, res);
});

let h: Harness;
let url: string;
let deps: RefreshDeps;
beforeAll(async () => {
  h = await createHarness();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/SDN.XML`;
  // The resolver is never asked: the URL names its address.
  deps = { db: h.db, clock: h.clock, resolver: async () => [], allowPrivate: true };
  // A small list from a file stands first, so the URL's first answer replaces it.
  const first = await loadScreeningList({ db: h.db, clock: h.clock }, sdnList('FILE LIST', 4), 'file.xml', {
    force: true,
  });
  expect(first.ok).toBe(true);
}, 120_000);
afterAll(async () => {
  server.close();
  await h.close();
});

const serve = (status: number, body: string, headers: Record<string, string> = {}) => {
  answer = (_req, res) => res.writeHead(status, { 'content-type': 'application/xml', ...headers }).end(body);
};

describe('the scheduled refresh of the list', () => {
  it('loads a new list (200) with its validators, then asks conditionally and keeps it on a 304', async () => {
    serve(200, sdnList('REFRESHED ENTITY', 20), {
      etag: '"v1"',
      'last-modified': 'Wed, 25 Nov 2026 10:00:00 GMT',
    });
    expect(await refreshDue(h.db, url, h.clock.now(), 24)).toBe(true);
    expect(await refreshScreeningList(deps, url)).toMatchObject({ kind: 'loaded', entries: 20 });
    const loaded = await screeningStatus(h.db);
    expect(loaded).toMatchObject({
      source: url,
      entries: 20,
      published_on: '2026-11-25',
      check_outcome: 'loaded',
    });
    expect(await screen(h.db, { names: ['Refreshed Entity C2'] })).toMatchObject({
      listed: 'REFRESHED ENTITY C2',
    });
    // Just checked: not due again for SCREENING_REFRESH_HOURS.
    expect(await refreshDue(h.db, url, h.clock.now(), 24)).toBe(false);
    expect(await refreshDue(h.db, url, new Date(h.clock.now().getTime() + 25 * 3_600_000), 24)).toBe(true);

    asked.length = 0;
    answer = (req, res) => {
      if (req.headers['if-none-match'] === '"v1"') res.writeHead(304).end();
      else res.writeHead(200).end(sdnList('WRONG', 30));
    };
    expect(await refreshScreeningList(deps, url)).toEqual({ kind: 'not_modified' });
    expect(asked[0]).toMatchObject({
      'if-none-match': '"v1"',
      'if-modified-since': 'Wed, 25 Nov 2026 10:00:00 GMT',
    });
    const after = await screeningStatus(h.db);
    expect(after).toMatchObject({ loaded_at: loaded.loaded_at, entries: 20, check_outcome: 'not modified' });
  });

  it('refuses a truncated download, a corrupt one and one with fewer than half the entries; the list stays', async () => {
    const before = await screeningStatus(h.db);
    expect(before.entries).toBe(20);
    const whole = sdnList('TRUNCATED ENTITY', 40);
    serve(200, whole.slice(0, Math.floor(whole.length / 2)));
    expect(await refreshScreeningList(deps, url)).toMatchObject({ kind: 'refused' });
    expect(await screeningStatus(h.db)).toMatchObject({ loaded_at: before.loaded_at, entries: 20 });
    expect((await screeningStatus(h.db)).check_outcome).toMatch(/^refused: The file is not well-formed XML/);

    serve(200, '<html><body>Service unavailable</body></html>');
    expect(await refreshScreeningList(deps, url)).toMatchObject({ kind: 'refused' });
    expect((await screeningStatus(h.db)).check_outcome).toMatch(/^refused: The file has no sdnList element/);

    serve(200, sdnList('SHORT LIST', 9));
    expect(await refreshScreeningList(deps, url)).toMatchObject({
      kind: 'refused',
      problem: expect.stringContaining('fewer than half'),
    });
    expect(await screeningStatus(h.db)).toMatchObject({
      loaded_at: before.loaded_at,
      entries: 20,
      check_outcome: 'refused: too few entries',
    });
    expect(await screen(h.db, { names: ['Short List A0'] })).toBeUndefined();

    serve(404, 'gone');
    expect(await refreshScreeningList(deps, url)).toMatchObject({
      kind: 'refused',
      problem: expect.stringContaining('404'),
    });
    expect(await screeningStatus(h.db)).toMatchObject({ loaded_at: before.loaded_at, entries: 20 });
  });

  it('changes nothing when there is no answer: a server error, a connection dropped mid-body', async () => {
    const before = await screeningStatus(h.db);
    serve(503, 'busy');
    expect(await refreshScreeningList(deps, url)).toMatchObject({ kind: 'unknown' });
    expect(await screeningStatus(h.db)).toEqual(before);

    const body = sdnList('DROPPED ENTITY', 40);
    answer = (_req, res) => {
      res.writeHead(200, { 'content-length': String(Buffer.byteLength(body)) });
      res.write(body.slice(0, 500), () => res.destroy());
    };
    expect(await refreshScreeningList(deps, url)).toMatchObject({ kind: 'unknown' });
    expect(await screeningStatus(h.db)).toEqual(before);
  });

  it('reaches a private address only in development (WEBHOOK_ALLOW_PRIVATE): otherwise a definite no', async () => {
    const before = await screeningStatus(h.db);
    serve(200, sdnList('PRIVATE ENTITY', 30));
    const outcome = await refreshScreeningList({ ...deps, allowPrivate: false }, url);
    expect(outcome).toMatchObject({ kind: 'refused' });
    expect(await screeningStatus(h.db)).toMatchObject({ loaded_at: before.loaded_at, entries: 20 });
  });

  it('takes a newer list that holds at least half as many entries', async () => {
    serve(200, sdnList('NEWER ENTITY', 12, '11/26/2026'), { etag: '"v2"' });
    expect(await refreshScreeningList(deps, url)).toMatchObject({ kind: 'loaded', entries: 12 });
    expect(await screeningStatus(h.db)).toMatchObject({ entries: 12, published_on: '2026-11-26' });
    expect(await screen(h.db, { names: ['Refreshed Entity C2'] })).toBeUndefined();
    expect(await screen(h.db, { names: ['NEWER ENTITY B1'] })).toMatchObject({ source: url });
  });
});

describe('tollbook screening load URL', () => {
  it('loads the list a URL answers, and refuses one that does not parse', async () => {
    serve(200, sdnList('CLI ENTITY', 6));
    const database = await freshCommandDatabase();
    onTestFinished(() => database.drop());
    const env = {
      ...process.env,
      DATA_DIR: mkdtempSync(join(tmpdir(), 'tollbook-screening-url-')),
      DATABASE_URL: database.url,
      LOG_LEVEL: 'silent',
      WEBHOOK_ALLOW_PRIVATE: '1',
    };
    const run = (args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile(process.execPath, ['bin/tollbook.mjs', ...args], { env }, (error, stdout, stderr) =>
          resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
        );
      });
    const loaded = await run(['screening', 'load', url]);
    expect(loaded.stderr).toBe('');
    expect(loaded.stdout).toContain('published 2026-11-25: 6 SDN entries');
    serve(200, 'not xml at all <');
    const refused = await run(['screening', 'load', url]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('not');
  }, 120_000);
});
