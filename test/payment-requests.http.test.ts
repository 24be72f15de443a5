import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY_MS, ManualClock } from '../src/core/clock.ts';
import { checkLedger } from '../src/features/ledger/index.ts';
import { lapseRequests } from '../src/features/payment-requests/index.ts';
import { describeAuthContract } from './auth-contract.ts';
import { createHarness, type Harness, type Key } from './harness.ts';

describeAuthContract({
  method: 'POST',
  url: '/integration/payment-requests',
  scope: 'payments',
  okStatus: 201,
  setup: async (h, key) => ({ payload: { account_id: (await h.makeWallet(key.spaceId)).id, amount: '2.5' } }),
});
describeAuthContract({
  method: 'GET',
  url: '/integration/payment-requests/none',
  scope: 'payments',
  okStatus: 200,
  setup: async (h, key) => {
    const wallet = await h.makeWallet(key.spaceId);
    const minted = await h.inject({
      method: 'POST',
      url: '/integration/payment-requests',
      key: key.key,
      payload: { account_id: wallet.id, amount: 3 },
    });
    return { url: `/integration/payment-requests/${minted.json().token}` };
  },
});

const clock = new ManualClock(new Date());
let h: Harness;
let key: Key;
let owner: { token: string };
let wallet: { id: string };
let bank: { id: string };
beforeAll(async () => {
  h = await createHarness({ clock });
  ({ key, owner } = await h.world({ scopes: ['payments', 'accounts'] }));
  wallet = await h.makeWallet(key.spaceId);
  bank = await h.makeAccount(key.spaceId, { kind: 'bank', name: 'Bank', currency: 'USD' });
});
afterAll(() => h.close());

const mint = (payload: Record<string, unknown>, headers: Record<string, string> = {}, k: Key = key) =>
  h.inject({ method: 'POST', url: '/integration/payment-requests', key: k.key, payload, headers });
const read = (token: string, k: Key = key) =>
  h.inject({ method: 'GET', url: `/integration/payment-requests/${token}`, key: k.key });
const markPaid = (token: string, amount: string, reference: string) =>
  h.inject({
    method: 'POST',
    url: `/app/api/spaces/${key.spaceId}/payment-requests/${token}/mark-paid`,
    session: owner.token,
    payload: { amount, reference },
  });

describe('POST /integration/payment-requests: success', () => {
  it('mints an active request with a payment page url, eight decimals and a one-day deadline', async () => {
    const res = await mint({
      account_id: wallet.id,
      amount: 2.5,
      memo: 'one call',
      resource: 'https://api.example.com/v1/search',
    });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({
      amount: '2.50000000',
      currency: 'USDC',
      status: 'active',
      amount_received: '0.00000000',
      memo: 'one call',
    });
    expect(body.token).toMatch(/^pr_[0-9A-Za-z]{43}$/);
    expect(body.url).toBe(`http://localhost:8080/pay/${body.token}`);
    expect(new Date(body.expires_at).getTime() - new Date(body.created_at).getTime()).toBe(DAY_MS);
    expect(body.resource_id).toMatch(/^[0-9a-f-]{36}$/);
    const again = await mint({
      account_id: wallet.id,
      amount: 3,
      resource: 'https://api.example.com/v1/search',
    });
    expect(again.json().resource_id).toBe(body.resource_id);
    expect((await mint({ account_id: wallet.id, amount: 3 })).json().resource_id).toBeNull();
  });

  it('takes an amount with no upper bound, exactly, on an account without an on-chain rail', async () => {
    const huge = '123456789012345678901234567890.12345678';
    const res = await mint({ account_id: bank.id, amount: huge });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().amount).toBe(huge);
  });

  it('lets a USD price be asked of a USDC account, and keeps the deadline asked for', async () => {
    const expires = new Date(clock.now().getTime() + 3 * 60 * 60 * 1000).toISOString();
    const res = await mint({ account_id: wallet.id, amount: '1', currency: 'usd', expires_at: expires });
    expect(res.json()).toMatchObject({ currency: 'USD', expires_at: expires });
  });
});

describe('POST /integration/payment-requests: refusals', () => {
  const refusedAmount = async (amount: unknown, type: string) => {
    const res = await mint({ account_id: bank.id, amount });
    expect(res.statusCode, JSON.stringify(amount)).toBe(422);
    expect(res.json().detail).toContainEqual(expect.objectContaining({ loc: ['body', 'amount'], type }));
  };

  it.each(['1e3', '--1', '.', '+', '+.', '1.2.3', '', ' 1', 'NaN', 'Infinity', '0x10'])(
    'refuses the amount %j as not a decimal',
    async (amount) => {
      await refusedAmount(amount, 'decimal_parsing');
    },
  );
  it.each([
    ['0.123456789', 'decimal_max_places'],
    ['0', 'greater_than'],
    [0, 'greater_than'],
    ['-1', 'greater_than'],
    [-0.5, 'greater_than'],
    [true, 'decimal_type'],
    [null, 'decimal_type'],
    [[1], 'decimal_type'],
  ])('refuses the amount %j (%s)', async (amount, type) => {
    await refusedAmount(amount, type);
  });

  it('checks memo, resource and currency lengths at their edges', async () => {
    expect(
      (await mint({ account_id: bank.id, amount: 1, memo: 'm'.repeat(2000), resource: 'r'.repeat(500) }))
        .statusCode,
    ).toBe(201);
    const res = await mint({
      account_id: bank.id,
      amount: 1,
      memo: 'm'.repeat(2001),
      resource: 'r'.repeat(501),
      currency: 'C'.repeat(13),
    });
    expect(res.statusCode).toBe(422);
    const locs = res.json().detail.map((item: { loc: string[] }) => item.loc[1]);
    expect(locs).toEqual(expect.arrayContaining(['memo', 'resource', 'currency']));
  });

  it('refuses a missing or foreign account with 422 account_not_found', async () => {
    const other = await h.world({ scopes: ['payments'] });
    const foreign = await h.makeWallet(other.key.spaceId);
    const res = await mint({ account_id: foreign.id, amount: 2 });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ error: 'account_not_found', details: { account_id: foreign.id } });
    expect((await mint({ amount: 2 })).json().detail[0]).toMatchObject({
      loc: ['body', 'account_id'],
      type: 'missing',
    });
    expect((await mint({ account_id: 'nope', amount: 2 })).json().detail[0]).toMatchObject({
      type: 'uuid_parsing',
    });
  });

  it('refuses below the one-dollar on-chain floor, naming it and the charges route', async () => {
    const res = await mint({ account_id: wallet.id, amount: '0.99' });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({
      error: 'amount_not_accepted',
      details: { floor: '1', alternative: '/integration/charges' },
    });
    expect(res.json().detail).toContain('/integration/charges');
    expect((await mint({ account_id: wallet.id, amount: '1.00' })).statusCode).toBe(201);
    expect((await mint({ account_id: bank.id, amount: '0.01' })).statusCode).toBe(201);
  });

  it('refuses amounts finer than USDC moves, and currencies the account cannot hold', async () => {
    expect((await mint({ account_id: wallet.id, amount: '1.0000001' })).json().error).toBe(
      'amount_not_accepted',
    );
    expect((await mint({ account_id: wallet.id, amount: '1.000001' })).statusCode).toBe(201);
    expect((await mint({ account_id: wallet.id, amount: 5, currency: 'EUR' })).json().error).toBe(
      'currency_mismatch',
    );
  });

  it('refuses a deadline in the past or beyond a year', async () => {
    const past = await mint({
      account_id: wallet.id,
      amount: 2,
      expires_at: new Date(clock.now().getTime() - 1000).toISOString(),
    });
    expect(past.json()).toMatchObject({ error: 'invalid_request', details: { field: 'expires_at' } });
    const far = await mint({
      account_id: wallet.id,
      amount: 2,
      expires_at: new Date(clock.now().getTime() + 400 * DAY_MS).toISOString(),
    });
    expect(far.statusCode).toBe(422);
    const noOffset = await mint({ account_id: wallet.id, amount: 2, expires_at: '2026-12-01T00:00:00' });
    expect(noOffset.json().detail[0]).toMatchObject({
      loc: ['body', 'expires_at'],
      type: 'datetime_parsing',
    });
  });

  it('answers 404 while the payments switch is off, and mints again when it is on', async () => {
    const world = await h.world({ scopes: ['payments'] });
    const account = await h.makeWallet(world.key.spaceId);
    const toggle = (payments_enabled: boolean) =>
      h.inject({
        method: 'PATCH',
        url: `/app/api/spaces/${world.spaceId}`,
        session: world.owner.token,
        payload: { payments_enabled },
      });
    const minted = (await mint({ account_id: account.id, amount: 2 }, {}, world.key)).json();
    await toggle(false);
    expect((await mint({ account_id: account.id, amount: 2 }, {}, world.key)).statusCode).toBe(404);
    expect((await read(minted.token, world.key)).statusCode).toBe(404);
    // A request minted earlier stays payable while the switch is off.
    const card = await h.inject({
      method: 'POST',
      url: `/pay/${minted.token}/card`,
      payload: { number: '4242424242424242', exp: '12/34', cvc: '123' },
    });
    expect(card.json().status).toBe('paid');
    expect((await h.inject({ method: 'GET', url: '/integration/ping', key: world.key.key })).statusCode).toBe(
      200,
    );
    await toggle(true);
    expect((await read(minted.token, world.key)).json().status).toBe('paid');
  });
});

describe('POST /integration/payment-requests: idempotency', () => {
  it('returns the first answer for a repeated Idempotency-Key, and mints once', async () => {
    const idem = { 'idempotency-key': `pr-${Math.random()}` };
    const first = await mint({ account_id: wallet.id, amount: 4, memo: 'idem' }, idem);
    const second = await mint({ account_id: wallet.id, amount: 4, memo: 'idem' }, idem);
    expect(second.body).toBe(first.body);
    expect(second.headers['idempotent-replayed']).toBe('true');
    const rows = await h.db
      .selectFrom('payment_requests')
      .select('id')
      .where('space_id', '=', key.spaceId)
      .where('memo', '=', 'idem')
      .execute();
    expect(rows).toHaveLength(1);
  });
});

describe('GET /integration/payment-requests/{token}', () => {
  it('reads its own space only: another space gets 404, as does an unknown token', async () => {
    const minted = (await mint({ account_id: wallet.id, amount: 2 })).json();
    expect((await read(minted.token)).json()).toEqual(minted);
    const stranger = await h.world({ scopes: ['payments'] });
    const res = await read(minted.token, stranger.key);
    expect(res.statusCode).toBe(404);
    expect(res.json().error).toBe('not_found');
    expect((await read('pr_unknown')).statusCode).toBe(404);
  });
});

describe('lifecycle', () => {
  it('lapses at its deadline: shown cancelled at once, stored cancelled by the job, and no longer payable', async () => {
    const minted = (await mint({ account_id: wallet.id, amount: 2 })).json();
    clock.advance(DAY_MS);
    try {
      expect((await read(minted.token)).json().status).toBe('cancelled');
      await lapseRequests({ db: h.db, clock });
      const row = await h.db
        .selectFrom('payment_requests')
        .select(['status', 'cancelled_at'])
        .where('token', '=', minted.token)
        .executeTakeFirstOrThrow();
      expect(row.status).toBe('cancelled');
      const card = await h.inject({
        method: 'POST',
        url: `/pay/${minted.token}/card`,
        payload: { number: '4242424242424242', exp: '12/34', cvc: '123' },
      });
      expect(card.statusCode).toBe(409);
      expect(card.json()).toMatchObject({ error: 'request_not_payable', details: { status: 'cancelled' } });
    } finally {
      clock.advance(-DAY_MS);
    }
  });

  it('sums partial payments in amount_received and is paid when they reach the amount; one reference books once', async () => {
    const minted = (await mint({ account_id: bank.id, amount: '2.5' })).json();
    const first = await markPaid(minted.token, '1', 'wire-1');
    expect(first.json()).toMatchObject({ status: 'active', amount_received: '1.00000000' });
    expect((await markPaid(minted.token, '1', 'wire-1')).json().amount_received).toBe('1.00000000');
    const second = await markPaid(minted.token, '1.5', 'wire-2');
    expect(second.json()).toMatchObject({ status: 'paid', amount_received: '2.50000000' });
    expect((await read(minted.token)).json()).toMatchObject({
      status: 'paid',
      amount_received: '2.50000000',
    });
    expect((await markPaid(minted.token, '1', 'wire-3')).statusCode).toBe(409);
    const settlements = await h.db
      .selectFrom('settlements')
      .select('reference')
      .where('space_id', '=', key.spaceId)
      .where('reference', 'like', 'wire-%')
      .execute();
    expect(settlements.map((row) => row.reference).sort()).toEqual(['wire-1', 'wire-2']);
  });

  it('files every payment for a resource as one income row per day that grows, each payment listed with its payer', async () => {
    const resource = `https://api.example.com/v1/daily-${Math.random()}`;
    for (const [amount, payer] of [
      ['2', '0xaaa'],
      ['3', '0xbbb'],
    ]) {
      const minted = (await mint({ account_id: bank.id, amount, resource })).json();
      await h.inject({
        method: 'POST',
        url: `/app/api/spaces/${key.spaceId}/payment-requests/${minted.token}/mark-paid`,
        session: owner.token,
        payload: { amount, reference: `ref-${payer}-${resource}`, payer },
      });
    }
    const resourceId = (await mint({ account_id: bank.id, amount: 1, resource })).json().resource_id;
    const income = await h.db
      .selectFrom('ledger_accounts')
      .select('id')
      .where('space_id', '=', key.spaceId)
      .where('kind', '=', 'income')
      .where('ref', '=', resourceId)
      .executeTakeFirstOrThrow();
    const rows = await h.db
      .selectFrom('ledger_postings')
      .select([
        'occurred_on',
        (eb) => eb.fn.sum<string>('amount').as('total'),
        (eb) => eb.fn.countAll<string>().as('payments'),
      ])
      .where('ledger_account_id', '=', income.id)
      .groupBy('occurred_on')
      .execute();
    expect(rows).toHaveLength(1);
    expect(Number(rows[0]!.payments)).toBe(2);
    expect(rows[0]!.total).toMatch(/^-5(\.0+)?$/);
    const payers = await h.db
      .selectFrom('ledger_postings')
      .innerJoin('ledger_entries', 'ledger_entries.id', 'ledger_postings.entry_id')
      .select('ledger_entries.counterparty')
      .where('ledger_postings.ledger_account_id', '=', income.id)
      .execute();
    expect(payers.map((row) => row.counterparty).sort()).toEqual(['0xaaa', '0xbbb']);
  });

  it('writes money.in on the book channel for every settlement, and pushes no key event for a card or bank payment', async () => {
    const minted = (await mint({ account_id: wallet.id, amount: '2', currency: 'USD' })).json();
    // The space's earlier events, so this payment's own are told apart (rows have no order).
    const spaceEvents = () =>
      h.db.selectFrom('outbox_events').selectAll().where('space_id', '=', key.spaceId).execute();
    const before = new Set((await spaceEvents()).map((event) => event.id));
    await h.inject({
      method: 'POST',
      url: `/pay/${minted.token}/card`,
      payload: { number: '4242424242424242', exp: '12/34', cvc: '123' },
    });
    const events = (await spaceEvents()).filter((event) => !before.has(event.id));
    const moneyIn = events.filter((event) => event.event === 'money.in');
    expect(moneyIn).toHaveLength(1);
    const latest = moneyIn[0]!;
    expect(latest.channel).toBe('book');
    expect(latest.payload).toMatchObject({
      account_id: wallet.id,
      direction: 'in',
      amount: '2.00000000',
      currency: 'USDC',
      kind: 'income',
      origin: 'rail',
    });
    expect(events.some((event) => event.event === 'payment_request.paid')).toBe(false);
    expect((await checkLedger(h.db, key.spaceId)).sound).toBe(true);
  });
});

describe('development rails in production', () => {
  it('refuses the test card (404) and offers no card rail on the page when NODE_ENV=production', async () => {
    const prod = await createHarness({ env: { NODE_ENV: 'production', MASTER_KEY: 'c'.repeat(64) } });
    try {
      const world = await prod.world({ scopes: ['payments'] });
      const account = await prod.makeWallet(world.key.spaceId);
      const minted = (
        await prod.inject({
          method: 'POST',
          url: '/integration/payment-requests',
          key: world.key.key,
          payload: { account_id: account.id, amount: 2 },
        })
      ).json();
      const card = await prod.inject({
        method: 'POST',
        url: `/pay/${minted.token}/card`,
        payload: { number: '4242424242424242', exp: '12/34', cvc: '123' },
      });
      expect(card.statusCode).toBe(404);
      expect(
        (
          await prod.inject({
            method: 'GET',
            url: `/integration/payment-requests/${minted.token}`,
            key: world.key.key,
          })
        ).json().status,
      ).toBe('active');
      const page = await prod.inject({ method: 'GET', url: `/pay/${minted.token}` });
      expect(page.body).not.toContain('id="rail-card"');
      expect(page.body).toContain('id="rail-stablecoin"');
    } finally {
      await prod.close();
    }
  });
});
