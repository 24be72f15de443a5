import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatAmount } from '../src/core/money.ts';
import { openClientCredit } from '../src/features/client-credits/index.ts';
import { checkLedger, readAmount } from '../src/features/ledger/index.ts';
import { mintRequest, parseAmount } from '../src/features/payment-requests/service.ts';
import { describeAuthContract } from './auth-contract.ts';
import { createHarness, type Harness, type Key } from './harness.ts';

describeAuthContract({
  method: 'POST',
  url: '/integration/charges',
  scope: 'payments',
  okStatus: 200,
  setup: async (h, key) => ({
    payload: { client_ref: 'contract', account_id: (await h.makeWallet(key.spaceId)).id, amount: '0.01' },
  }),
});

let h: Harness;
let key: Key;
let owner: { token: string };
let wallet: { id: string };
let usdBank: { id: string };
beforeAll(async () => {
  // These tests send far more than 240 calls a minute on one key; the limit has its own tests.
  h = await createHarness({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
  ({ key, owner } = await h.world({ scopes: ['payments'] }));
  wallet = await h.makeWallet(key.spaceId);
  // Top-ups below one dollar cannot go on chain, so most tests charge against a USD bank account.
  usdBank = await h.makeAccount(key.spaceId, { kind: 'bank', name: 'USD bank', currency: 'USD' });
});
afterAll(() => h.close());

const TEST_CARD = { number: '4242424242424242', exp: '12/34', cvc: '123' };
let refCounter = 0;
const freshRef = () => `client-${Date.now()}-${refCounter++}`;

const chargeAs = (k: Key, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  h.inject({
    method: 'POST',
    url: '/integration/charges',
    key: k.key,
    payload: { account_id: usdBank.id, ...body },
    headers,
  });
const charge = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  chargeAs(key, body, headers);
const payByCard = (token: string) =>
  h.inject({ method: 'POST', url: `/pay/${token}/card`, payload: TEST_CARD });

/**
 * Tops a client's balance up by exactly `amount`: a top-up request of that size, paid by card.
 * Minted through the service rather than a refused charge, because refused charges reuse the
 * client's open top-up request and concurrent top-ups here must each add their own amount.
 */
async function topUp(clientRef: string, amount: string, k: Key = key) {
  const request = await h.db.transaction().execute(async (tx) => {
    const credit = await openClientCredit(tx, k.spaceId, clientRef, h.clock.now());
    return mintRequest(
      tx,
      { clock: h.clock, publicUrl: 'http://localhost:8080' },
      {
        spaceId: k.spaceId,
        keyId: k.id,
        accountId: usdBank.id,
        amount: parseAmount(amount),
        currency: 'USD',
        expiresAt: null,
        memo: `Top-up for ${clientRef}`,
        resource: '',
        topUpFor: { clientCreditId: credit.id },
      },
    );
  });
  const paid = await payByCard(request.token);
  expect(paid.json().status, paid.body).toBe('paid');
}

const balanceOf = async (clientRef: string) =>
  (await charge({ client_ref: clientRef, amount: '10000000000000000' })).json().balance_usd;

describe('POST /integration/charges: the seven rules', () => {
  it('rule 1: a balance that can carry the call pays it: price as sent, remainder at eight decimals, entry id', async () => {
    const ref = freshRef();
    await topUp(ref, '5');
    const res = await charge({ client_ref: ref, amount: '0.250' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      paid: true,
      client_ref: ref,
      charged_usd: '0.250',
      balance_usd: '4.75000000',
      top_up: null,
      balance_url: null,
    });
    expect(body.entry_id).toMatch(/^[0-9a-f-]{36}$/);
    expect((await charge({ client_ref: ref, amount: 0.5 })).json().charged_usd).toBe('0.5');
  });

  it('rule 2: a balance that cannot carry it answers paid false with a top-up request, the balance page and the current balance', async () => {
    const ref = freshRef();
    await topUp(ref, '0.1');
    const body = (await charge({ client_ref: ref, amount: '0.2' })).json();
    expect(body).toMatchObject({
      paid: false,
      client_ref: ref,
      charged_usd: null,
      entry_id: null,
      balance_usd: '0.10000000',
    });
    expect(body.top_up).toMatchObject({ status: 'active', currency: 'USD', amount: '1.00000000' });
    expect(body.top_up.url).toBe(`http://localhost:8080/pay/${body.top_up.token}`);
    expect(body.balance_url).toMatch(/^http:\/\/localhost:8080\/credit\/cr_[0-9A-Za-z]{43}$/);
  });

  it('rule 3: the top-up is top_up_amount when given, else the larger of the price and one dollar', async () => {
    const ref = freshRef();
    expect((await charge({ client_ref: ref, amount: '0.3' })).json().top_up.amount).toBe('1.00000000');
    expect((await charge({ client_ref: ref, amount: '2.5' })).json().top_up.amount).toBe('2.50000000');
    expect((await charge({ client_ref: ref, amount: '0.3', top_up_amount: '25' })).json().top_up.amount).toBe(
      '25.00000000',
    );
  });

  it('mints one top-up request for concurrent refusals of a client that already has a balance', async () => {
    const ref = freshRef();
    const first = (await charge({ client_ref: ref, amount: '0.4' })).json();
    expect((await payByCard(first.top_up.token)).json().status).toBe('paid');
    // The client now exists with 1 USD; each of these needs 2.5 and is refused at once.
    const refusals = await Promise.all(
      Array.from({ length: 6 }, () => charge({ client_ref: ref, amount: '2.5' })),
    );
    for (const refusal of refusals)
      expect(refusal.json()).toMatchObject({ paid: false, balance_usd: '1.00000000' });
    expect(new Set(refusals.map((res) => res.json().top_up.token as string)).size).toBe(1);
  });

  it('reuses the open top-up request of a client while it covers the top-up, instead of minting one per refusal', async () => {
    const ref = freshRef();
    const refusals = await Promise.all(
      Array.from({ length: 5 }, () => charge({ client_ref: ref, amount: '0.4' })),
    );
    const tokens = new Set(refusals.map((res) => res.json().top_up.token as string));
    expect(tokens.size).toBe(1);
    const [token] = [...tokens];
    // A smaller need is covered by the same request; a larger one gets a request of its own.
    expect((await charge({ client_ref: ref, amount: '0.9' })).json().top_up.token).toBe(token);
    const larger = (await charge({ client_ref: ref, amount: '0.3', top_up_amount: '4' })).json().top_up;
    expect(larger).toMatchObject({ amount: '4.00000000' });
    expect(larger.token).not.toBe(token);
    // Another client never shares it.
    expect((await charge({ client_ref: freshRef(), amount: '0.4' })).json().top_up.token).not.toBe(token);
    // A paid request is never reused: with the larger one paid, a need the 1 USD one cannot cover
    // mints a new request, leaving exactly two open.
    expect((await payByCard(larger.token)).json().status).toBe('paid');
    await charge({ client_ref: ref, amount: '4.5' });
    const open = await h.db
      .selectFrom('payment_requests')
      .select(['token', 'amount'])
      .where('space_id', '=', key.spaceId)
      .where('memo', '=', `Top-up for ${ref}`)
      .where('status', '=', 'active')
      .execute();
    expect(open.map((row) => formatAmount(readAmount(row.amount))).sort()).toEqual([
      '1.00000000',
      '4.50000000',
    ]);
  });

  it('rule 4: a balance is never negative: a charge larger than it is refused and books nothing', async () => {
    const ref = freshRef();
    await topUp(ref, '1');
    const body = (await charge({ client_ref: ref, amount: '1.00000001' })).json();
    expect(body.paid).toBe(false);
    expect(await balanceOf(ref)).toBe('1.00000000');
    expect((await charge({ client_ref: ref, amount: '1' })).json()).toMatchObject({
      paid: true,
      balance_usd: '0.00000000',
    });
  });

  it('rule 5: after the top-up settles, the retried charge is paid; the settled top-up is booked as money in', async () => {
    const ref = freshRef();
    const refused = (await charge({ client_ref: ref, amount: '0.4' })).json();
    expect(refused.paid).toBe(false);
    await payByCard(refused.top_up.token);
    expect((await charge({ client_ref: ref, amount: '0.4' })).json()).toMatchObject({
      paid: true,
      balance_usd: '0.60000000',
    });
    const moneyIn = await h.db
      .selectFrom('outbox_events')
      .select('payload')
      .where('space_id', '=', key.spaceId)
      .where('event', '=', 'money.in')
      .execute();
    expect(moneyIn.some((row) => row.payload.amount === '1.00000000')).toBe(true);
  });

  it('rule 6: the client is listed under its client_ref until a contact is named', async () => {
    const ref = freshRef();
    await topUp(ref, '3');
    const list = async () =>
      (
        await h.inject({
          method: 'GET',
          url: `/app/api/spaces/${key.spaceId}/client-credits`,
          session: owner.token,
        })
      ).json().items;
    expect((await list()).find((item: { client_ref: string }) => item.client_ref === ref)).toMatchObject({
      label: ref,
      balance: '3.00000000',
      contact_id: null,
    });
    const contactKey = await h.issueKey(owner as never, key.spaceId, { scopes: ['contacts'] });
    const contact = (
      await h.inject({
        method: 'POST',
        url: '/integration/contacts',
        key: contactKey.key,
        payload: { name: 'Ada Client' },
      })
    ).json();
    const named = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${key.spaceId}/client-credits/${ref}/contact`,
      session: owner.token,
      payload: { contact_id: contact.id },
    });
    expect(named.json()).toMatchObject({ label: 'Ada Client', contact_id: contact.id, client_ref: ref });
  });

  it('rule 7: a retry without Idempotency-Key charges twice; with the same key the first answer returns', async () => {
    const ref = freshRef();
    await topUp(ref, '1');
    await charge({ client_ref: ref, amount: '0.1' });
    await charge({ client_ref: ref, amount: '0.1' });
    expect(await balanceOf(ref)).toBe('0.80000000');
    const idem = { 'idempotency-key': `charge-${ref}` };
    const first = await charge({ client_ref: ref, amount: '0.1' }, idem);
    const second = await charge({ client_ref: ref, amount: '0.1' }, idem);
    expect(second.body).toBe(first.body);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(await balanceOf(ref)).toBe('0.70000000');
  });
});

describe('POST /integration/charges: validation', () => {
  it('checks client_ref 1..120, memo ≤200, resource ≤300, currency ≤8 at their edges', async () => {
    const ok = await charge({
      client_ref: 'c'.repeat(120),
      amount: '0.01',
      memo: 'm'.repeat(200),
      resource: 'r'.repeat(300),
      currency: 'USD',
    });
    expect(ok.statusCode).toBe(200);
    const res = await charge({
      client_ref: 'c'.repeat(121),
      amount: '0.01',
      memo: 'm'.repeat(201),
      resource: 'r'.repeat(301),
      currency: 'C'.repeat(9),
    });
    expect(res.statusCode).toBe(422);
    expect(
      res
        .json()
        .detail.map((item: { loc: string[] }) => item.loc[1])
        .sort(),
    ).toEqual(['client_ref', 'currency', 'memo', 'resource']);
    expect((await charge({ client_ref: '', amount: 1 })).json().detail[0]).toMatchObject({
      loc: ['body', 'client_ref'],
      type: 'string_too_short',
    });
  });

  it('refuses bad amounts and top-up amounts, including over 1e16', async () => {
    for (const amount of ['0', '-1', '1e2', '0.000000001', '10000000000000000.00000001', true]) {
      expect((await charge({ client_ref: 'v', amount })).statusCode, String(amount)).toBe(422);
    }
    expect((await charge({ client_ref: 'v', amount: 1, top_up_amount: '0' })).statusCode).toBe(422);
    expect((await charge({ client_ref: 'v', amount: 1, top_up_amount: null })).statusCode).toBe(200);
  });

  it('refuses a top-up below the one-dollar floor on an account paid on chain, naming top_up_amount', async () => {
    const res = await charge({
      client_ref: 'floor',
      amount: '0.5',
      top_up_amount: '0.5',
      account_id: wallet.id,
    });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({
      error: 'amount_not_accepted',
      details: { field: 'top_up_amount', floor: '1' },
    });
    const fine = await charge({ client_ref: 'floor', amount: '0.5', account_id: wallet.id });
    expect(fine.json().top_up).toMatchObject({ amount: '1.00000000', currency: 'USD' });
  });

  it('keeps prepaid balances in USD: another currency or a non-USD account is refused', async () => {
    expect((await charge({ client_ref: 'v', amount: 1, currency: 'EUR' })).json()).toMatchObject({
      error: 'currency_mismatch',
      details: { field: 'currency' },
    });
    const euros = await h.makeAccount(key.spaceId, { kind: 'bank', currency: 'EUR' });
    expect((await charge({ client_ref: 'v', amount: 1, account_id: euros.id })).json().error).toBe(
      'currency_mismatch',
    );
    const stranger = await h.world({ scopes: ['payments'] });
    const theirs = await h.makeWallet(stranger.key.spaceId);
    expect((await charge({ client_ref: 'v', amount: 1, account_id: theirs.id })).json().error).toBe(
      'account_not_found',
    );
  });

  it('keys balances per space: the same client_ref in another space is another balance', async () => {
    const ref = freshRef();
    await topUp(ref, '2');
    const other = await h.world({ scopes: ['payments'] });
    const otherBank = await h.makeAccount(other.key.spaceId, { currency: 'USD' });
    const res = await h.inject({
      method: 'POST',
      url: '/integration/charges',
      key: other.key.key,
      payload: { client_ref: ref, account_id: otherBank.id, amount: '0.5' },
    });
    expect(res.json()).toMatchObject({ paid: false, balance_usd: '0.00000000' });
  });
});

describe('POST /integration/charges: concurrency', () => {
  it('pays exactly N of 200 concurrent charges when the balance covers exactly N; never negative; the ledger stays sound', async () => {
    const ref = freshRef();
    await topUp(ref, '7.3');
    const answers = await Promise.all(
      Array.from({ length: 200 }, () => charge({ client_ref: ref, amount: '0.1' })),
    );
    expect(answers.every((res) => res.statusCode === 200)).toBe(true);
    const paid = answers.filter((res) => res.json().paid);
    expect(paid).toHaveLength(73);
    const balances = paid.map((res) => res.json().balance_usd).sort();
    expect(new Set(balances).size).toBe(73);
    expect(balances[0]).toBe('0.00000000');
    expect(await balanceOf(ref)).toBe('0.00000000');
    const charges = await h.db
      .selectFrom('charges')
      .innerJoin('client_credits', 'client_credits.id', 'charges.client_credit_id')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('client_credits.client_ref', '=', ref)
      .executeTakeFirstOrThrow();
    expect(Number(charges.count)).toBe(73);
    expect((await checkLedger(h.db, key.spaceId)).sound).toBe(true);
  }, 60_000);

  it('any interleaving of top-ups and charges keeps balance = top-ups − paid charges ≥ 0', async () => {
    const op = fc.oneof(
      fc.integer({ min: 1, max: 300 }).map((cents) => ({ kind: 'top_up' as const, cents })),
      fc.integer({ min: 1, max: 200 }).map((cents) => ({ kind: 'charge' as const, cents })),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(op, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 5 }),
        async (rounds) => {
          const ref = freshRef();
          let toppedUp = 0;
          let charged = 0;
          for (const round of rounds) {
            // Each round runs concurrently; rounds follow each other.
            const results = await Promise.all(
              round.map(async (step) => {
                const amount = (step.cents / 100).toFixed(2);
                if (step.kind === 'top_up') {
                  await topUp(ref, amount);
                  return { ...step, paid: true };
                }
                const res = (await charge({ client_ref: ref, amount })).json();
                expect(Number(res.balance_usd)).toBeGreaterThanOrEqual(0);
                return { ...step, paid: res.paid as boolean };
              }),
            );
            for (const result of results) {
              if (result.kind === 'top_up') toppedUp += result.cents;
              else if (result.paid) charged += result.cents;
            }
          }
          const balance = await balanceOf(ref);
          expect(balance).toBe(((toppedUp - charged) / 100).toFixed(8));
          expect(toppedUp - charged).toBeGreaterThanOrEqual(0);
        },
      ),
      { numRuns: 15 },
    );
    expect((await checkLedger(h.db, key.spaceId)).sound).toBe(true);
  }, 120_000);
});
