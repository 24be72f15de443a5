import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { asAmount } from '../src/core/money.ts';
import { checkLedger } from '../src/features/ledger/index.ts';
import {
  findRequestByToken,
  type RequestRow,
  type SettleInput,
  settlePaymentRequest,
} from '../src/features/payment-requests/index.ts';
import { createHarness, type Harness, type Key } from './harness.ts';
import { StatementCounter } from './statement-counter.ts';

// A settlement of a request its caller has just read (the x402 page's) is one statement with no
// transaction: the request moves from the state that was read to the next one, and only then the
// balance, the entry with its postings, the settlement row and the events are written, so each
// of them exists exactly when the others do. When the request changed meanwhile, or the rail
// reference was settled already, that statement writes nothing and the settlement is made (or
// answered as it was) under the request's row lock.

let h: Harness;
let key: Key;
let walletId: string;
beforeAll(async () => {
  h = await createHarness({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
  ({ key } = await h.world({ scopes: ['payments'] }));
  walletId = (await h.makeWallet(key.spaceId)).id;
});
afterAll(() => h.close());

async function mintRead(amount: string): Promise<RequestRow> {
  const minted = await h.inject({
    method: 'POST',
    url: '/integration/payment-requests',
    key: key.key,
    payload: { account_id: walletId, amount },
  });
  expect(minted.statusCode, minted.body).toBe(201);
  return (await findRequestByToken(h.db, minted.json().token))!;
}

const input = (request: RequestRow, amount: bigint, reference: string, seen?: RequestRow): SettleInput => ({
  spaceId: request.space_id,
  requestId: request.id,
  amount: asAmount(amount),
  rail: 'x402',
  reference,
  payer: '0xpayer',
  at: new Date(),
  committed: true,
  seen,
});

async function settleCounted(settle: SettleInput) {
  const counter = new StatementCounter();
  const db = h.db.withPlugin(counter);
  const opened = vi.spyOn(db, 'transaction');
  const outcome = await settlePaymentRequest(db, settle);
  return { outcome, statements: counter.statements, transactions: opened.mock.calls.length };
}

/** The space's settlements, settlement entries and settlement events, counted. */
async function written() {
  const count = async (table: 'settlements' | 'ledger_entries' | 'outbox_events', extra = '') => {
    let query = h.db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('space_id', '=', key.spaceId);
    if (table === 'ledger_entries') query = query.where('cause_type' as never, '=', 'settlement' as never);
    if (table === 'outbox_events') query = query.where('event' as never, '=', extra as never);
    return Number((await query.executeTakeFirstOrThrow()).n);
  };
  return {
    settlements: await count('settlements'),
    entries: await count('ledger_entries'),
    events: await count('outbox_events', 'money.in'),
  };
}

/** Every settlement row names an entry of its space, and every settlement entry has its row. */
async function expectPaired() {
  const orphans = await h.db
    .selectFrom('ledger_entries as e')
    .leftJoin('settlements as s', (join) => join.onRef('s.entry_id', '=', 'e.id'))
    .select('e.id')
    .where('e.space_id', '=', key.spaceId)
    .where('e.cause_type', '=', 'settlement')
    .where('s.id', 'is', null)
    .execute();
  expect(orphans).toEqual([]);
  const counts = await written();
  expect(counts.entries).toBe(counts.settlements);
  expect((await checkLedger(h.db, key.spaceId)).sound).toBe(true);
}

describe('a settlement of a request as it was read', () => {
  it('is one statement and no transaction: receipt, balance, entry, settlement row and events together', async () => {
    // The first settlement of the space creates its ledger accounts; the second finds them kept.
    const first = await mintRead('2');
    expect((await settlePaymentRequest(h.db, input(first, 2n * 10n ** 8n, 'warm', first))).ok).toBe(true);
    const request = await mintRead('3');
    const before = await written();
    const settled = await settleCounted(input(request, 3n * 10n ** 8n, `one-${request.id}`, request));
    expect(settled.outcome).toMatchObject({ ok: true, replayed: false });
    expect(settled.statements).toEqual(['RawNode']);
    expect(settled.transactions).toBe(0);
    const after = await written();
    expect(after).toEqual({
      settlements: before.settlements + 1,
      entries: before.entries + 1,
      events: before.events + 1,
    });
    const stored = await findRequestByToken(h.db, request.token);
    expect(stored).toMatchObject({ status: 'paid', amount_received: '3.00000000' });
    expect(stored!.paid_at).not.toBeNull();
    await expectPaired();
  });

  it('writes nothing when the request changed since it was read, and settles under the lock instead', async () => {
    const request = await mintRead('5');
    // Another rail settles part of it after our read.
    const other = await settlePaymentRequest(h.db, input(request, 2n * 10n ** 8n, `card-${request.id}`));
    expect(other.ok).toBe(true);
    const before = await written();
    const stale = await settleCounted(input(request, 3n * 10n ** 8n, `stale-${request.id}`, request));
    expect(stale.outcome).toMatchObject({ ok: true, replayed: false });
    // The guarded statement wrote nothing; the locked path then ran in a transaction.
    expect(stale.statements[0]).toBe('RawNode');
    expect(stale.transactions).toBe(1);
    expect(await written()).toEqual({
      settlements: before.settlements + 1,
      entries: before.entries + 1,
      events: before.events + 1,
    });
    // Both amounts count: 2 + 3 of 5, so the request is paid.
    expect(await findRequestByToken(h.db, request.token)).toMatchObject({
      status: 'paid',
      amount_received: '5.00000000',
    });
    await expectPaired();
  });

  it('answers a reference settled already as it was, with no second entry, even on another request', async () => {
    const paid = await mintRead('1');
    const reference = `twin-${paid.id}`;
    expect((await settlePaymentRequest(h.db, input(paid, 10n ** 8n, reference, paid))).ok).toBe(true);
    const other = await mintRead('1');
    const before = await written();
    // The other request is unchanged since read, so only the settlement's unique reference
    // refuses the statement: nothing of it is written, and the locked path replays the first.
    const twin = await settleCounted(input(other, 10n ** 8n, reference, other));
    expect(twin.outcome).toMatchObject({ ok: true, replayed: true });
    expect(twin.outcome.ok && twin.outcome.request.id).toBe(paid.id);
    expect(await written()).toEqual(before);
    expect(await findRequestByToken(h.db, other.token)).toMatchObject({
      status: 'active',
      amount_received: '0',
    });
    await expectPaired();
  });

  it("settles a client's top-up (two tracked balances) as read, in a transaction of its own", async () => {
    const bank = await h.makeAccount(key.spaceId, { kind: 'bank', name: 'USD bank', currency: 'USD' });
    const refused = await h.inject({
      method: 'POST',
      url: '/integration/charges',
      key: key.key,
      payload: { client_ref: `top-up-${bank.id}`, account_id: bank.id, amount: '2' },
    });
    expect(refused.json().paid, refused.body).toBe(false);
    const topUp = (await findRequestByToken(h.db, refused.json().top_up.token))!;
    expect(topUp.purpose).toBe('top_up');
    const before = await written();
    const settled = await settleCounted({
      ...input(topUp, 2n * 10n ** 8n, `top-${topUp.id}`, topUp),
      rail: 'card',
    });
    expect(settled.outcome).toMatchObject({ ok: true, replayed: false });
    expect(settled.transactions).toBe(1);
    expect(await written()).toMatchObject({
      settlements: before.settlements + 1,
      entries: before.entries + 1,
    });
    expect(await findRequestByToken(h.db, topUp.token)).toMatchObject({ status: 'paid' });
    const paid = await h.inject({
      method: 'POST',
      url: '/integration/charges',
      key: key.key,
      payload: { client_ref: `top-up-${bank.id}`, account_id: bank.id, amount: '2' },
    });
    expect(paid.json(), paid.body).toMatchObject({ paid: true, balance_usd: '0.00000000' });
    await expectPaired();
  });

  it('settles concurrently read requests once each, whatever the interleaving', async () => {
    const request = await mintRead('4');
    const before = await written();
    // Four rails each read the request, then settle 1 with their own reference at once.
    const outcomes = await Promise.all(
      [0, 1, 2, 3].map((index) =>
        settlePaymentRequest(h.db, input(request, 10n ** 8n, `race-${index}-${request.id}`, request)),
      ),
    );
    expect(outcomes.every((outcome) => outcome.ok && !outcome.replayed)).toBe(true);
    expect((await written()).settlements).toBe(before.settlements + 4);
    expect(await findRequestByToken(h.db, request.token)).toMatchObject({
      status: 'paid',
      amount_received: '4.00000000',
    });
    await expectPaired();
  });
});
