import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { createHarness, type Harness, type Key, type User } from './harness.ts';

// What the edge refuses before any route sees a body: keys given twice, half a surrogate pair,
// bodies in another charset or compressed; and what it no longer logs as our error.

let h: Harness;
let key: Key;
let owner: User;
let bank: { id: string };
beforeAll(async () => {
  h = await createHarness({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
  ({ key, owner } = await h.world());
  bank = await h.makeAccount(key.spaceId, { kind: 'bank', name: 'USD bank', currency: 'USD' });
});
afterAll(() => h.close());

const post = (url: string, payload: string, headers: Record<string, string> = {}) =>
  h.inject({
    method: 'POST',
    url,
    key: key.key,
    payload,
    headers: { 'content-type': 'application/json', ...headers },
  });

function firstItem(res: { json(): unknown }) {
  return (res.json() as { detail: { loc: unknown[]; type: string }[] }).detail[0];
}

describe('duplicate keys', () => {
  it('refuses {"amount":"0.01","amount":"1000000"} with 422 json_duplicate_key, and charges nothing', async () => {
    const ref = `dup-${Date.now()}`;
    const body = `{"client_ref":"${ref}","account_id":"${bank.id}","amount":"0.01","amount":"1000000"}`;
    const res = await post('/integration/charges', body);
    expect(res.statusCode, res.body).toBe(422);
    expect(firstItem(res)).toMatchObject({ loc: ['body', 'amount'], type: 'json_duplicate_key' });
    // The same body with a long digit run elsewhere takes the same path and gets the same answer.
    const long = body.replace('"client_ref"', `"memo_pad":${'1'.repeat(5000)},"client_ref"`);
    expect(firstItem(await post('/integration/charges', long))).toMatchObject({ type: 'json_duplicate_key' });
  });

  it('refuses a duplicate on the public login and signup routes too', async () => {
    for (const url of ['/app/api/login', '/app/api/signup']) {
      const res = await h.inject({
        method: 'POST',
        url,
        payload: `{"email":"${owner.email}","password":"x","password":"${owner.password}","name":"n"}`,
        headers: { 'content-type': 'application/json' },
      });
      expect(res.statusCode, url).toBe(422);
      expect(firstItem(res)).toMatchObject({ loc: ['body', 'password'], type: 'json_duplicate_key' });
    }
  });
});

describe('half a surrogate pair', () => {
  it('refuses one in an invoice line description with 422 string_unicode (it was a 500)', async () => {
    const body = JSON.stringify({
      account_id: bank.id,
      client_name: 'Acme',
      due_on: '2026-12-31',
      line_items: [
        {
          description: 'Consulting \ud800',
          unit_price: '100',
          quantity: '1',
          tax_kind: 'standard',
          tax_rate: '20',
        },
      ],
    });
    const res = await post('/integration/invoices', body);
    expect(res.statusCode, res.body).toBe(422);
    expect(firstItem(res)).toMatchObject({
      loc: ['body', 'line_items', 0, 'description'],
      type: 'string_unicode',
    });
  });

  it('refuses one in a pushed account_key, and later batches naming a real key still book', async () => {
    const row = (externalId: string, accountKey: string) => ({
      external_id: externalId,
      account_key: accountKey,
      currency: 'EUR',
      occurred_on: '2026-01-02',
      amount: '1',
    });
    const pusher = await h.issueKey(owner, key.spaceId, { scopes: ['transactions'], push_source: 'erp' });
    const push = (rows: unknown[]) =>
      h.inject({ method: 'POST', url: '/integration/transactions', key: pusher.key, payload: { rows } });
    const refused = await push([row('s-1', 'Main\udc00')]);
    expect(refused.statusCode).toBe(422);
    expect(firstItem(refused)).toMatchObject({
      loc: ['body', 'rows', 0, 'account_key'],
      type: 'string_unicode',
    });
    const booked = await push([row('s-2', 'Main 😀')]);
    expect(booked.statusCode, booked.body).toBe(200);
    expect(booked.json()).toMatchObject({ booked: 1, rejected: 0, accounts_created: ['Main 😀'] });
    const again = await push([row('s-3', 'Main 😀')]);
    expect(again.json()).toMatchObject({ booked: 1, rejected: 0, accounts_created: [] });
  });

  it('keeps client_refs that differ by a combining mark or an emoji apart, and refuses lone halves', async () => {
    const stamp = Date.now();
    const refs = [
      `c${stamp}-é`,
      `c${stamp}-e\u0301`,
      `c${stamp}-😀`,
      `c${stamp}-😁`,
      `c${stamp}-\u202eab`,
      `c${stamp}-ba`,
    ];
    for (const [index, ref] of refs.entries()) {
      // Each ref asks for a top-up of a different size: a shared balance would show the same one.
      const res = await post(
        '/integration/charges',
        JSON.stringify({
          client_ref: ref,
          account_id: bank.id,
          amount: '1000',
          top_up_amount: String(index + 1),
        }),
      );
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({
        paid: false,
        client_ref: ref,
        top_up: { amount: `${index + 1}.00000000` },
      });
    }
    const listed = await h.inject({
      method: 'GET',
      url: `/app/api/spaces/${key.spaceId}/client-credits`,
      session: owner.token,
    });
    const seen = JSON.stringify(listed.json());
    for (const lone of ['\ud800', '\udc00']) {
      const res = await post(
        '/integration/charges',
        JSON.stringify({ client_ref: `c${stamp}-${lone}`, account_id: bank.id, amount: '1' }),
      );
      expect(res.statusCode).toBe(422);
      expect(firstItem(res)).toMatchObject({ loc: ['body', 'client_ref'], type: 'string_unicode' });
    }
    expect(listed.statusCode).toBe(200);
    expect(seen).not.toContain('\\ud800');
  });
});

describe('bodies we cannot read as sent', () => {
  const valid = () => JSON.stringify({ client_ref: 'cs', account_id: bank.id, amount: '1' });

  it('refuses a charset other than UTF-8 with 415, and reads utf-8 however it is spelled', async () => {
    for (const contentType of [
      'application/json; charset=latin1',
      'application/json; charset=ISO-8859-1',
      'application/json;charset="utf-16"',
      'application/json; charset=utf-16le',
    ]) {
      const res = await post('/integration/charges', valid(), { 'content-type': contentType });
      expect(res.statusCode, contentType).toBe(415);
      expect(res.json()).toMatchObject({ error: 'unsupported_media_type' });
    }
    for (const contentType of [
      'application/json; charset=utf-8',
      'application/json; charset="UTF-8"',
      'application/json',
    ]) {
      const res = await post('/integration/charges', valid(), { 'content-type': contentType });
      expect(res.statusCode, contentType).toBe(200);
    }
  });

  it('refuses any Content-Encoding with 415, before reading the body', async () => {
    for (const encoding of ['gzip', 'deflate', 'br', 'gzip, identity']) {
      const res = await post('/integration/charges', valid(), { 'content-encoding': encoding });
      expect(res.statusCode, encoding).toBe(415);
      expect(res.json()).toMatchObject({ error: 'unsupported_media_type' });
    }
    expect((await post('/integration/charges', valid(), { 'content-encoding': 'identity' })).statusCode).toBe(
      200,
    );
  });

  it('asks for the key before judging the media type', async () => {
    const res = await h.inject({
      method: 'POST',
      url: '/integration/charges',
      payload: valid(),
      headers: { 'content-type': 'application/json; charset=latin1' },
    });
    expect(res.statusCode).toBe(401);
  });
});

describe('a client that aborts its upload', () => {
  it('is logged at info without a stack, and never as an unhandled error', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _encoding, callback) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        callback();
      },
    });
    const app = await buildApp({ ...h.deps, logger: pino({ level: 'info' }, sink) });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as AddressInfo;
    await new Promise<void>((resolve) => {
      const req = httpRequest({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/app/api/login',
        headers: { 'content-type': 'application/json', 'content-length': '100000' },
      });
      req.on('error', () => resolve());
      req.write('{"email":"a@example.com","password":"');
      setTimeout(() => req.destroy(), 100);
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await app.close();
    const aborted = lines.filter((line) => line.msg === 'client aborted the request');
    expect(aborted).toHaveLength(1);
    expect(aborted[0]).toMatchObject({ level: 30 });
    expect(JSON.stringify(aborted[0])).not.toContain('stack');
    expect(lines.filter((line) => Number(line.level) >= 50)).toEqual([]);
  });
});
