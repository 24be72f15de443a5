import { randomBytes } from 'node:crypto';
import { createSIWxPayload, encodeSIWxHeader } from '@x402/extensions/sign-in-with-x';
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openClientCredit } from '../src/features/client-credits/index.ts';
import { checkLedger } from '../src/features/ledger/index.ts';
import { mintRequest, parseAmount } from '../src/features/payment-requests/service.ts';
import { describeAuthContract } from './auth-contract.ts';
import { createHarness, type Harness, type Key } from './harness.ts';

// POST /integration/x402/credit-calls: a seller's x402 middleware charges a signed-in payer's
// call to the credit the payer's address keys. The sign-ins are made with the extension's own
// client helpers, as an x402 client makes them from a 402's challenge.

const RESOURCE = 'http://127.0.0.1:4021/report';

/** A SIGN-IN-WITH-X header signed by `signer` for `resource`, with any challenge field replaced. */
async function signIn(signer: PrivateKeyAccount, resource = RESOURCE, change: Record<string, string> = {}) {
  const uri = new URL(resource);
  const info = {
    domain: uri.host,
    uri: resource,
    version: '1',
    nonce: randomBytes(16).toString('hex'),
    issuedAt: new Date().toISOString(),
    chainId: 'eip155:31337',
    type: 'eip191' as const,
    ...change,
  };
  return encodeSIWxHeader(await createSIWxPayload(info, signer, `${uri.origin}/`));
}

describeAuthContract({
  method: 'POST',
  url: '/integration/x402/credit-calls',
  scope: 'payments',
  okStatus: 200,
  freshFields: async () => ({ sign_in: await signIn(privateKeyToAccount(generatePrivateKey())) }),
  setup: async (h, key) => ({
    payload: {
      resource: RESOURCE,
      account_id: (await h.makeAccount(key.spaceId, { kind: 'bank', name: 'USD', currency: 'USD' })).id,
      amount: '0.01',
    },
  }),
});

let h: Harness;
let key: Key;
let usdBank: { id: string };
beforeAll(async () => {
  h = await createHarness({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
  ({ key } = await h.world({ scopes: ['payments'] }));
  usdBank = await h.makeAccount(key.spaceId, { kind: 'bank', name: 'USD bank', currency: 'USD' });
});
afterAll(() => h.close());

const creditCall = (payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
  h.inject({
    method: 'POST',
    url: '/integration/x402/credit-calls',
    key: key.key,
    payload: { resource: RESOURCE, account_id: usdBank.id, amount: '0.10', ...payload },
    headers,
  });

/** Tops the credit of `signer`'s address up by `amount` USD: a top-up request paid by card. */
async function fund(signer: PrivateKeyAccount, amount: string) {
  const request = await h.db.transaction().execute(async (tx) => {
    const credit = await openClientCredit(
      tx,
      key.spaceId,
      `evm:${signer.address.toLowerCase()}`,
      h.clock.now(),
    );
    return mintRequest(
      tx,
      { clock: h.clock, publicUrl: 'http://127.0.0.1:8080' },
      {
        spaceId: key.spaceId,
        keyId: key.id,
        accountId: usdBank.id,
        amount: parseAmount(amount),
        currency: 'USD',
        expiresAt: null,
        memo: 'Top-up',
        resource: '',
        topUpFor: { clientCreditId: credit.id },
      },
    );
  });
  const paid = await h.inject({
    method: 'POST',
    url: `/pay/${request.token}/card`,
    payload: { number: '4242424242424242', exp: '12/34', cvc: '123' },
  });
  expect(paid.json().status, paid.body).toBe('paid');
}

describe('POST /integration/x402/credit-calls', () => {
  it("charges the call to the credit of the signer's address, keyed evm: and the address in lowercase", async () => {
    const payer = privateKeyToAccount(generatePrivateKey());
    await fund(payer, '1');
    const res = await creditCall({ sign_in: await signIn(payer) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      paid: true,
      client_ref: `evm:${payer.address.toLowerCase()}`,
      balance_usd: '0.90000000',
      charged_usd: '0.10',
      top_up: null,
    });
    const charges = await h.db
      .selectFrom('charges')
      .selectAll()
      .where('entry_id', '=', res.json().entry_id)
      .execute();
    expect(charges).toHaveLength(1);
    expect((await checkLedger(h.db, key.spaceId)).sound).toBe(true);
  });

  it('answers paid false with the balance and no top-up request when the credit cannot carry the call', async () => {
    const payer = privateKeyToAccount(generatePrivateKey());
    const res = await creditCall({ sign_in: await signIn(payer) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      paid: false,
      balance_usd: '0.00000000',
      top_up: null,
      entry_id: null,
    });
    const requests = await h.db
      .selectFrom('payment_requests')
      .select('id')
      .where('space_id', '=', key.spaceId)
      .where('memo', 'like', `%${payer.address.toLowerCase()}%`)
      .execute();
    expect(requests).toEqual([]);
  });

  it('refuses a replayed sign-in with 409 and charges nothing for it', async () => {
    const payer = privateKeyToAccount(generatePrivateKey());
    await fund(payer, '1');
    const header = await signIn(payer);
    expect((await creditCall({ sign_in: header })).json().paid).toBe(true);
    const replay = await creditCall({ sign_in: header });
    expect(replay.statusCode).toBe(409);
    expect(replay.json()).toMatchObject({ error: 'conflict', details: { reason: 'invalid_siwx_nonce' } });
    const again = await creditCall({ sign_in: await signIn(payer) });
    expect(again.json().balance_usd).toBe('0.80000000');
  });

  it('lets exactly one of concurrent calls with the same sign-in through', async () => {
    const payer = privateKeyToAccount(generatePrivateKey());
    await fund(payer, '1');
    const header = await signIn(payer);
    const answers = await Promise.all(Array.from({ length: 6 }, () => creditCall({ sign_in: header })));
    expect(answers.map((res) => res.statusCode).sort()).toEqual([200, 409, 409, 409, 409, 409]);
    const last = await creditCall({ sign_in: await signIn(payer) });
    expect(last.json().balance_usd).toBe('0.80000000');
  });

  it('answers a retry under the same Idempotency-Key with the first result, charging once', async () => {
    const payer = privateKeyToAccount(generatePrivateKey());
    await fund(payer, '1');
    const body = { sign_in: await signIn(payer) };
    const first = await creditCall(body, { 'idempotency-key': `credit-${payer.address}` });
    const retry = await creditCall(body, { 'idempotency-key': `credit-${payer.address}` });
    expect(retry.statusCode).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.json()).toEqual(first.json());
    const charges = await h.db
      .selectFrom('charges')
      .select('id')
      .where('entry_id', '=', first.json().entry_id)
      .execute();
    expect(charges).toHaveLength(1);
  });

  const refusals: [string, (payer: PrivateKeyAccount) => Promise<string>, string][] = [
    ['not base64 JSON', async () => 'not a sign-in', 'invalid_siwx_header'],
    [
      'bound to another origin',
      (payer) => signIn(payer, 'http://127.0.0.1:9999/report'),
      'invalid_siwx_domain_mismatch',
    ],
    [
      'issued more than five minutes ago',
      (payer) => signIn(payer, RESOURCE, { issuedAt: new Date(Date.now() - 6 * 60_000).toISOString() }),
      'invalid_siwx_issued_at_too_old',
    ],
    [
      'past its expiration time',
      (payer) => signIn(payer, RESOURCE, { expirationTime: new Date(Date.now() - 1000).toISOString() }),
      'invalid_siwx_expired',
    ],
  ];
  for (const [name, make, reason] of refusals) {
    it(`refuses a sign-in ${name} with 422 invalid_request (${reason}), charging nothing`, async () => {
      const payer = privateKeyToAccount(generatePrivateKey());
      await fund(payer, '1');
      const res = await creditCall({ sign_in: await make(payer) });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json()).toMatchObject({ error: 'invalid_request', details: { field: 'sign_in', reason } });
      const after = await creditCall({ sign_in: await signIn(payer) });
      expect(after.json().balance_usd).toBe('0.90000000');
    });
  }

  it('refuses a signature that is not the named address, with the extension reason', async () => {
    const payer = privateKeyToAccount(generatePrivateKey());
    const other = privateKeyToAccount(generatePrivateKey());
    const signed = JSON.parse(Buffer.from(await signIn(payer), 'base64').toString()) as Record<
      string,
      unknown
    >;
    const forged = Buffer.from(JSON.stringify({ ...signed, address: other.address })).toString('base64');
    const res = await creditCall({ sign_in: forged });
    expect(res.statusCode).toBe(422);
    expect(res.json().details.reason).toBe('invalid_siwx_signature');
  });

  it("answers a malformed body with 422 and the spec's error body", async () => {
    const res = await creditCall({ sign_in: '', resource: 'not a url' });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toEqual(expect.any(Array));
    const relative = await creditCall({ sign_in: 'x', resource: '/report' });
    expect(relative.statusCode).toBe(422);
    expect(relative.json()).toMatchObject({ error: 'invalid_request', details: { field: 'resource' } });
  });
});
