import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type User } from './harness.ts';

// Invoices, quotes and credit notes each count apart (INV-, QUO-, CN- unless the book sets
// another prefix), without gaps or repeats under concurrent creation; mirrored numbers stay.

let h: Harness;
let base: string;
beforeAll(async () => {
  h = await createHarness({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
});
afterAll(() => h.close());

type Book = { owner: User; spaceId: string; accountId: string };

async function book(): Promise<Book> {
  const owner = await h.signup('Owner');
  const spaceId = await h.createSpace(owner);
  const account = await h.makeAccount(spaceId, { kind: 'bank', name: 'Bank', currency: 'EUR' });
  return { owner, spaceId, accountId: account.id };
}

/** A real HTTP request on the loopback port, so creations overlap as they would in production. */
async function create(b: Book, kind: string, extra: Record<string, unknown> = {}) {
  const res = await fetch(`${base}/app/api/spaces/${b.spaceId}/invoices`, {
    method: 'POST',
    headers: { authorization: `Bearer ${b.owner.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      kind,
      account_id: b.accountId,
      client_name: 'Acme GmbH',
      due_on: '2099-06-30',
      line_items: [{ description: 'Work', unit_price: '10' }],
      ...extra,
    }),
  });
  const body = (await res.json()) as { number: string; kind: string };
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body;
}

const sequence = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, index) => `${prefix}${String(index + 1).padStart(6, '0')}`);

describe('numbering per kind', () => {
  it('gives 20 concurrent creations of each kind the numbers 1 to 20 of their own prefix, no gap, no repeat', async () => {
    const b = await book();
    const kinds = ['invoice', 'quote', 'credit_note'] as const;
    const made = await Promise.all(
      kinds.flatMap((kind) => Array.from({ length: 20 }, () => create(b, kind))),
    );
    const numbersOf = (kind: string) =>
      made
        .filter((doc) => doc.kind === kind)
        .map((doc) => doc.number)
        .sort();
    expect(numbersOf('invoice')).toEqual(sequence('INV-', 20));
    expect(numbersOf('quote')).toEqual(sequence('QUO-', 20));
    expect(numbersOf('credit_note')).toEqual(sequence('CN-', 20));
  });

  it('gives a refused creation’s number to the next one', async () => {
    const b = await book();
    expect((await create(b, 'invoice')).number).toBe('INV-000001');
    const refused = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${b.spaceId}/invoices`,
      session: b.owner.token,
      payload: {
        account_id: b.accountId,
        client_name: 'Acme GmbH',
        due_on: '2099-06-30',
        line_items: [{ description: 'Work', unit_price: '10' }],
        contact_id: '00000000-0000-4000-8000-000000000001',
      },
    });
    expect(refused.statusCode).toBe(422);
    expect((await create(b, 'invoice')).number).toBe('INV-000002');
  });

  it('takes the prefix and next number the book sets, keeps mirrored numbers as sent, and skips a number typed by hand', async () => {
    const b = await book();
    const set = await h.inject({
      method: 'PATCH',
      url: `/app/api/spaces/${b.spaceId}/numbering`,
      session: b.owner.token,
      payload: { invoice: { prefix: '2026/', next_number: 100 }, quote: { prefix: 'Q-' } },
    });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json()).toEqual({
      invoice: { prefix: '2026/', next_number: 100, next: '2026/000100' },
      quote: { prefix: 'Q-', next_number: 1, next: 'Q-000001' },
      credit_note: { prefix: 'CN-', next_number: 1, next: 'CN-000001' },
    });
    expect((await create(b, 'invoice', { number: '2026/000101' })).number).toBe('2026/000101');
    expect((await create(b, 'invoice')).number).toBe('2026/000100');
    expect((await create(b, 'invoice')).number).toBe('2026/000102');
    expect((await create(b, 'quote')).number).toBe('Q-000001');
    const key = await h.issueKey(b.owner, b.spaceId, { scopes: ['invoices'] });
    const mirrored = await h.inject({
      method: 'POST',
      url: '/integration/invoices',
      key: key.key,
      payload: {
        account_id: b.accountId,
        client_name: 'Acme GmbH',
        due_on: '2099-06-30',
        number: 'RE 2026-17',
        line_items: [{ description: 'Work', unit_price: '10' }],
      },
    });
    expect(mirrored.json().number).toBe('RE 2026-17');
    const read = await h.inject({
      method: 'GET',
      url: `/app/api/spaces/${b.spaceId}/numbering`,
      session: b.owner.token,
    });
    expect(read.json().invoice).toEqual({ prefix: '2026/', next_number: 103, next: '2026/000103' });
  });

  it('refuses a prefix outside letters, digits and / . _ -, and a member changing it', async () => {
    const b = await book();
    const bad = await h.inject({
      method: 'PATCH',
      url: `/app/api/spaces/${b.spaceId}/numbering`,
      session: b.owner.token,
      payload: { invoice: { prefix: 'INV <1>' } },
    });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail[0].loc).toEqual(['body', 'invoice', 'prefix']);
    const member = await h.signup('Member');
    await h.addMember(b.owner, b.spaceId, member, 'member');
    const refused = await h.inject({
      method: 'PATCH',
      url: `/app/api/spaces/${b.spaceId}/numbering`,
      session: member.token,
      payload: { invoice: { prefix: 'X-' } },
    });
    expect(refused.statusCode).toBe(403);
  });
});
