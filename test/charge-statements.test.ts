import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { systemClock } from '../src/core/clock.ts';
import { asAmount } from '../src/core/money.ts';
import { charge } from '../src/features/charges/service.ts';
import { checkLedger } from '../src/features/ledger/index.ts';
import { createHarness, type Harness, type Key } from './harness.ts';
import { StatementCounter } from './statement-counter.ts';

// A charge costs the database one statement: once its client, ledger accounts, endpoint and
// account are known to the process, a paid charge is one statement that moves the balance and
// files the entry with its postings and the charge row, sent without BEGIN or COMMIT (the route
// calls the service on the database handle when there is no Idempotency-Key). A refused charge
// is the move that refused (writing nothing), then the top-up request in a transaction of its own.

let h: Harness;
let key: Key;
let bankId: string;
const TEST_CARD = { number: '4242424242424242', exp: '12/34', cvc: '123' };

beforeAll(async () => {
  h = await createHarness({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
  ({ key } = await h.world({ scopes: ['payments'] }));
  bankId = (await h.makeAccount(key.spaceId, { kind: 'bank', name: 'USD bank', currency: 'USD' })).id;
});
afterAll(() => h.close());

const caller = () => ({
  keyId: key.id,
  spaceId: key.spaceId,
  issuerUserId: key.id,
  scopes: ['payments' as const],
  pushSourceId: null,
});

async function chargeCounted(ref: string, price: bigint, resource?: string) {
  const counter = new StatementCounter();
  const db = h.db.withPlugin(counter);
  const opened = vi.spyOn(db, 'transaction');
  const answer = await charge(
    db,
    { clock: systemClock, publicUrl: 'http://127.0.0.1' },
    caller(),
    { client_ref: ref, account_id: bankId, amount: '1', resource },
    { price: asAmount(price), topUp: asAmount(5n * 10n ** 8n) },
  );
  return { answer, statements: counter.statements, transactions: opened.mock.calls.length };
}

describe('the statements of a charge', () => {
  it('pays a known client in one statement (move, entry, postings, charge row) and no transaction', async () => {
    const ref = `statements-${Date.now()}`;
    const first = await chargeCounted(ref, 10n ** 8n, 'https://api.example/a');
    expect(first.answer.paid).toBe(false);
    const paid = await h.inject({
      method: 'POST',
      url: `/pay/${(first.answer.top_up as { token: string }).token}/card`,
      payload: TEST_CARD,
    });
    expect(paid.json().status, paid.body).toBe('paid');
    // Warms what a charge keeps: this one reads what the first could not keep (it wrote it).
    expect((await chargeCounted(ref, 10n ** 8n, 'https://api.example/a')).answer.paid).toBe(true);
    const warm = await chargeCounted(ref, 10n ** 8n, 'https://api.example/a');
    expect(warm.answer).toMatchObject({ paid: true, balance_usd: '3.00000000' });
    expect(warm.statements).toEqual(['RawNode']);
    expect(warm.transactions).toBe(0);
    const row = await h.db
      .selectFrom('charges')
      .select(['amount', 'client_credit_id', 'resource_id', 'key_id'])
      .where('entry_id', '=', String(warm.answer.entry_id))
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ amount: '1.00000000', key_id: key.id });
    expect(row.resource_id).not.toBeNull();
    // A refused charge: the move that refused (nothing written), then the top-up request, in a
    // transaction of its own.
    const refused = await chargeCounted(ref, 4n * 10n ** 8n, 'https://api.example/a');
    expect(refused.answer).toMatchObject({ paid: false, balance_usd: '3.00000000', entry_id: null });
    expect(refused.statements[0]).toBe('RawNode');
    expect(refused.transactions).toBe(1);
    const entries = await h.db
      .selectFrom('ledger_entries')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('space_id', '=', key.spaceId)
      .where('cause_type', '=', 'charge')
      .executeTakeFirstOrThrow();
    expect(Number(entries.n)).toBe(2);
    const charges = await h.db
      .selectFrom('charges')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('space_id', '=', key.spaceId)
      .executeTakeFirstOrThrow();
    expect(Number(charges.n)).toBe(2);
    expect((await checkLedger(h.db, key.spaceId)).sound).toBe(true);
  });
});
