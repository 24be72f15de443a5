import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadScreeningList, normalizeName, parseSdnXml } from '../src/features/screening/index.ts';
import { createHarness, type Harness } from './harness.ts';
import { type Book, expectEventBody, makeBook } from './payouts-setup.ts';
import { freshCommandDatabase } from './support/command-database.ts';
import { holdScreeningList } from './support/turns.ts';

// This file loads its own sanctions list (the database's current one).
holdScreeningList();

const FIXTURE = 'test/fixtures/sdn-sample.xml';
const METRICS_TOKEN = 'screening-metrics-token-0123456789';
const xml = readFileSync(FIXTURE, 'utf8');
const SANCTIONED_ETH = '0x7F367cC41522cE07553e823bf3be79A889DEbe1B';

describe('reading SDN.XML', () => {
  it('reads names, a.k.a.s and digital currency addresses, and the publication date', () => {
    const parsed = parseSdnXml(xml);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.list.publishedOn).toBe('2026-11-20');
    expect(parsed.list.sdnCount).toBe(5);
    const values = parsed.list.entries.map((entry) => `${entry.kind}:${entry.value}`);
    expect(values).toEqual(
      expect.arrayContaining([
        'name:jose angel nunez ocana',
        'name:el tesorero',
        'address:0x7f367cc41522ce07553e823bf3be79a889debe1b',
        'address:bc1qnorthwind0mixer0fixture0address0xyz',
        'address:0x1da5821544e25c636c1417ba96ade4cf6d2f9b5a',
        'address:TXfixtureTronAddressForScreening01',
        'name:blue harbor shipping trading',
        'name:zoe muller ludenscheidt',
      ]),
    );
    // A passport number is not a digital currency address.
    expect(values.some((value) => value.includes('x1234567'))).toBe(false);
  });

  it('refuses a file that is not the SDN list', () => {
    expect(parseSdnXml('<notSdn/>')).toMatchObject({ ok: false });
    expect(parseSdnXml('<sdnList><sdnEntry>')).toMatchObject({ ok: false });
  });

  it('normalises case, accents and spacing, nothing more (word order is the index’s)', () => {
    expect(normalizeName('  NÚÑEZ,   José ')).toBe(normalizeName('nunez jose'));
    expect(normalizeName('Jose Nunes')).not.toBe(normalizeName('Jose Nunez'));
  });
});

describe('tollbook screening load', () => {
  const run = (args: string[], env: Record<string, string>) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        ['bin/tollbook.mjs', ...args],
        { env: { ...process.env, ...env } },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
    });

  it('loads the file into the database the server reads, and refuses a missing file', async () => {
    const database = await freshCommandDatabase();
    const env = {
      DATA_DIR: mkdtempSync(join(tmpdir(), 'tollbook-screening-')),
      DATABASE_URL: database.url,
      LOG_LEVEL: 'silent',
    };
    try {
      const loaded = await run(['screening', 'load', FIXTURE], env);
      expect(loaded.stderr).toBe('');
      expect(loaded.code).toBe(0);
      expect(loaded.stdout).toContain('published 2026-11-20: 5 SDN entries');
      const missing = await run(['screening', 'load', 'no-such-file.xml'], env);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('Cannot read no-such-file.xml');
    } finally {
      await database.drop();
    }
  }, 120_000);
});

describe('payments screened against the list', () => {
  let h: Harness;
  let b: Book;
  let wallet: { id: string };
  beforeAll(async () => {
    h = await createHarness({ env: { METRICS_TOKEN } });
    const loaded = await loadScreeningList({ db: h.db, clock: h.clock }, xml, FIXTURE);
    expect(loaded).toMatchObject({ ok: true, entries: 11 });
    b = await makeBook(h);
    wallet = await h.makeAccount(b.spaceId, {
      kind: 'crypto',
      name: 'Wallet',
      currency: 'USDC',
      network: 'local',
      address: `0x${'1'.repeat(40)}`,
      opening_balance: '500',
    });
  });
  afterAll(async () => {
    await b.ledgerSound();
    await h.close();
  });

  const chainPay = (destination: string, payee = 'Vendor') =>
    b.post(b.member, '/payments', { account_id: wallet.id, rail: 'chain', amount: '10', payee, destination });

  it('holds a chain payment to a listed address, exactly and checksum-cased, and emits payment.blocked', async () => {
    const exact = (await chainPay(SANCTIONED_ETH.toLowerCase())).json();
    expect(exact).toMatchObject({ status: 'blocked', blocked_reason: 'screening_hold' });
    const checksummed = (await chainPay(SANCTIONED_ETH)).json();
    expect(checksummed).toMatchObject({ status: 'blocked', blocked_reason: 'screening_hold' });
    const event = (await b.events('payment.blocked')).find((e) => e.payload.payment_id === exact.id)!;
    expectEventBody(event.payload, {
      payment_id: exact.id,
      amount: '10.00000000',
      currency: 'USDC',
      reason: 'screening_hold',
    });
    expect(JSON.stringify(event.payload)).not.toContain('0x7f36');
  });

  it('holds a payee named with accents dropped and words swapped, or by an a.k.a.', async () => {
    for (const payee of [
      'Nunez Ocana, Jose Angel',
      'JOSÉ ÁNGEL NÚÑEZ OCAÑA',
      'el  tesorero',
      'Blue Harbor Shipping & Trading Co',
    ]) {
      const res = await b.pay(b.member, { amount: '1', payee });
      expect(res.json(), payee).toMatchObject({ status: 'blocked', blocked_reason: 'screening_hold' });
    }
  });

  it('holds a near match, and lets a genuinely different name and an address one digit off through', async () => {
    for (const payee of ['Jose Angel Nunez Ocanas', 'Jose Nunez', 'Iv\u0430n Pet\u200brov LLC']) {
      const res = await b.pay(b.member, { amount: '1', payee });
      expect(res.json(), payee).toMatchObject({ status: 'blocked', blocked_reason: 'screening_hold' });
    }
    expect((await b.pay(b.member, { amount: '1', payee: 'Ivan Petrovich Sidorov' })).json().status).toBe(
      'executed',
    );
    const near = `${SANCTIONED_ETH.slice(0, -1)}C`;
    expect((await chainPay(near)).json().status).toBe('executing');
  });

  it('blocks a destination named by a policy rule whatever invisible characters it is written with', async () => {
    const rule = await b.post(b.owner, '/policy-rules', {
      kind: 'blocked_destination',
      destination: 'Acme Trading',
    });
    expect(rule.statusCode).toBe(201);
    const paid = (await b.pay(b.member, { amount: '1', payee: 'Acme\u00ad Tr\u0430ding' })).json();
    expect(paid).toMatchObject({ status: 'blocked', blocked_reason: 'policy_blocked_destination' });
    const invisible = await b.post(b.owner, '/policy-rules', {
      kind: 'blocked_destination',
      destination: '0x7F36\u200b7cC41522cE07553e823bf3be79A889DEbe1B',
    });
    expect(invisible.statusCode).toBe(422);
    expect(invisible.json()).toMatchObject({ error: 'invalid_request', details: { field: 'destination' } });
    const removed = await h.inject({
      method: 'DELETE',
      url: `/app/api/spaces/${b.spaceId}/policy-rules/${rule.json().id}`,
      session: b.owner.token,
    });
    expect(removed.statusCode).toBe(200);
  });

  it('an owner releases a hold with a recorded reason and the payment goes on; others cannot', async () => {
    const held = (await b.pay(b.member, { amount: '2', payee: 'Zoe Muller Ludenscheidt' })).json();
    expect(held.status).toBe('blocked');
    const byAdmin = await b.post(b.admin, `/payments/${held.id}/release`, { reason: 'Different person' });
    expect(byAdmin.statusCode).toBe(403);
    expect((await b.post(b.owner, `/payments/${held.id}/release`, {})).statusCode).toBe(422);
    const released = await b.post(b.owner, `/payments/${held.id}/release`, {
      reason: 'Different person: date of birth differs',
    });
    expect(released.json()).toMatchObject({
      status: 'executed',
      release_reason: 'Different person: date of birth differs',
      blocked_reason: null,
    });
    const again = await b.post(b.owner, `/payments/${held.id}/release`, { reason: 'x' });
    expect(again.json().error).toBe('payment_state');
  });

  it('only an owner rejects a hold', async () => {
    const held = (await b.pay(b.member, { amount: '2', payee: 'Ivan Petrov' })).json();
    expect((await b.post(b.admin, `/payments/${held.id}/reject`, { reason: 'no' })).statusCode).toBe(403);
    expect(
      (await b.post(b.owner, `/payments/${held.id}/reject`, { reason: 'Listed person' })).json().status,
    ).toBe('rejected');
  });

  it('answers the list’s state only to members of the book: another person gets 404', async () => {
    const stranger = await h.signup('Stranger');
    const res = await h.inject({
      method: 'GET',
      url: `/app/api/spaces/${b.spaceId}/screening`,
      session: stranger.token,
    });
    expect(res.statusCode).toBe(404);
  });

  it('shows the list’s date and size in the app and in /metrics', async () => {
    const status = (await b.get(b.viewer, '/screening')).json();
    expect(status).toMatchObject({ loaded: true, published_on: '2026-11-20', entries: 11, source: FIXTURE });
    expect(status).toMatchObject({ check_outcome: 'loaded' });
    expect(typeof status.stale).toBe('boolean');
    const metrics = (
      await h.inject({
        method: 'GET',
        url: '/metrics',
        headers: { authorization: `Bearer ${METRICS_TOKEN}` },
      })
    ).body;
    expect(metrics).toMatch(/^tollbook_screening_list_entries 11$/m);
    expect(metrics).toContain(`tollbook_screening_list_published_seconds ${Date.UTC(2026, 10, 20) / 1000}`);
  });
});
