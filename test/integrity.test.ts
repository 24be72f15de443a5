import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseRule, renderBrokenRule, renderError } from '../src/platform/http/errors.ts';
import { createHarness, type Harness, type Key } from './harness.ts';
import { bareEntryRow } from './ledger-rows.ts';

// The baseline's composite foreign keys prove "same space": a row of one space can never name a
// row of another, whatever the code above the database does. A refused rule reaches a client as
// a 409 (a unique key two writes raced for) or as a 500 that names the rule, never as the raw
// PostgreSQL message.

let h: Harness;
type World = { key: Key; bankId: string; ref: string };
let a: World;
let b: World;

const TEST_CARD = { number: '4242424242424242', exp: '12/34', cvc: '123' };

async function fundedWorld(): Promise<World> {
  const { key } = await h.world({ scopes: ['payments'] });
  const bank = await h.makeAccount(key.spaceId, { kind: 'bank', name: 'USD bank', currency: 'USD' });
  const ref = `integrity-${randomUUID()}`;
  const charge = (amount: string) =>
    h.inject({
      method: 'POST',
      url: '/integration/charges',
      key: key.key,
      payload: { account_id: bank.id, client_ref: ref, amount, top_up_amount: '5' },
    });
  const refused = await charge('1');
  expect(refused.json().paid).toBe(false);
  const paid = await h.inject({
    method: 'POST',
    url: `/pay/${refused.json().top_up.token}/card`,
    payload: TEST_CARD,
  });
  expect(paid.json().status, paid.body).toBe('paid');
  expect((await charge('1')).json().paid).toBe(true);
  return { key, bankId: bank.id, ref };
}

beforeAll(async () => {
  h = await createHarness({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
  a = await fundedWorld();
  b = await fundedWorld();
});
afterAll(() => h.close());

const chargeOf = (world: World) =>
  h.db.selectFrom('charges').selectAll().where('space_id', '=', world.key.spaceId).executeTakeFirstOrThrow();
const settlementOf = (world: World) =>
  h.db
    .selectFrom('settlements')
    .selectAll()
    .where('space_id', '=', world.key.spaceId)
    .executeTakeFirstOrThrow();

async function refusal(write: Promise<unknown>): Promise<unknown> {
  try {
    await write;
  } catch (error) {
    return error;
  }
  throw new Error('the write was accepted');
}

describe('references across spaces', () => {
  it('refuses a charge row naming another space’s client credit, entry, account or endpoint, and writes nothing', async () => {
    const ours = await chargeOf(a);
    const theirs = await chargeOf(b);
    const resource = await h.db
      .insertInto('resources')
      .values({
        id: randomUUID(),
        space_id: b.key.spaceId,
        address: `https://b.example/${randomUUID()}`,
        created_at: new Date(),
        updated_at: new Date(),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const before = await h.db
      .selectFrom('charges')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('space_id', '=', a.key.spaceId)
      .executeTakeFirstOrThrow();
    const copy = (change: Record<string, unknown>) =>
      h.db
        .insertInto('charges')
        .values({ ...ours, id: randomUUID(), ...change })
        .execute();
    const cases: [Record<string, unknown>, string][] = [
      [{ client_credit_id: theirs.client_credit_id }, 'charges_client_credit_id_fkey'],
      [{ entry_id: theirs.entry_id }, 'charges_entry_id_fkey'],
      [{ account_id: theirs.account_id }, 'charges_account_id_fkey'],
      [{ resource_id: resource.id }, 'charges_resource_id_fkey'],
      // No plain key to spaces (migration 0100): moving the row to another space, or to none,
      // breaks every composite key; the client credit's is checked first.
      [{ space_id: b.key.spaceId }, 'charges_client_credit_id_fkey'],
      [{ space_id: randomUUID() }, 'charges_client_credit_id_fkey'],
    ];
    for (const [change, rule] of cases) {
      const error = await refusal(copy(change));
      expect(databaseRule(error), rule).toEqual({ sqlState: '23503', name: rule });
    }
    const after = await h.db
      .selectFrom('charges')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('space_id', '=', a.key.spaceId)
      .executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
    // The same row naming its own space's rows is taken.
    await copy({});
  });

  it('refuses a settlement naming another space’s payment request or entry', async () => {
    const ours = await settlementOf(a);
    const theirs = await settlementOf(b);
    const copy = (change: Record<string, unknown>) =>
      h.db
        .insertInto('settlements')
        .values({ ...ours, id: randomUUID(), reference: randomUUID(), ...change })
        .execute();
    expect(databaseRule(await refusal(copy({ payment_request_id: theirs.payment_request_id })))).toEqual({
      sqlState: '23503',
      name: 'settlements_payment_request_id_fkey',
    });
    expect(databaseRule(await refusal(copy({ entry_id: theirs.entry_id })))).toEqual({
      sqlState: '23503',
      name: 'settlements_entry_id_fkey',
    });
  });

  it('refuses a client credit kept in another space’s ledger account, or in one of another currency', async () => {
    const theirs = await h.db
      .selectFrom('client_credits')
      .selectAll()
      .where('space_id', '=', b.key.spaceId)
      .executeTakeFirstOrThrow();
    const ours = await h.db
      .selectFrom('client_credits')
      .selectAll()
      .where('space_id', '=', a.key.spaceId)
      .executeTakeFirstOrThrow();
    const copy = (change: Record<string, unknown>) =>
      h.db
        .insertInto('client_credits')
        .values({ ...ours, id: randomUUID(), client_ref: randomUUID(), page_token: randomUUID(), ...change })
        .execute();
    expect(databaseRule(await refusal(copy({ ledger_account_id: theirs.ledger_account_id })))?.name).toBe(
      'client_credits_ledger_account_id_fkey',
    );
    expect(databaseRule(await refusal(copy({ currency: 'EUR' })))?.name).toBe(
      'client_credits_ledger_account_id_fkey',
    );
  });
});

describe('how a refused rule is answered', () => {
  it('answers a refused reference with a 500 that names the rule and nothing of the data', async () => {
    const ours = await chargeOf(a);
    const theirs = await chargeOf(b);
    const error = await refusal(
      h.db
        .insertInto('charges')
        .values({ ...ours, id: randomUUID(), client_credit_id: theirs.client_credit_id })
        .execute(),
    );
    // Not an expected refusal: the error handler treats it as a bug.
    expect(renderError(error)).toBeNull();
    const rendered = renderBrokenRule(databaseRule(error)!, 'req-1');
    expect(rendered.status).toBe(500);
    expect(rendered.body).toEqual({
      error: 'internal',
      detail: expect.stringContaining('rule charges_client_credit_id_fkey'),
    });
    expect(JSON.stringify(rendered.body)).not.toContain(theirs.client_credit_id);
    expect(JSON.stringify(rendered.body)).not.toMatch(/violates|insert or update/);
  });

  it('answers a unique key two writes raced for with 409 conflict, which the caller may retry', async () => {
    const ours = await settlementOf(a);
    const error = await refusal(
      h.db
        .insertInto('settlements')
        .values({ ...ours, id: randomUUID() })
        .execute(),
    );
    expect(databaseRule(error)).toEqual({
      sqlState: '23505',
      name: 'settlements_space_id_rail_reference_key',
    });
    expect(renderError(error)).toEqual({
      status: 409,
      body: { error: 'conflict', detail: expect.stringContaining('retry') },
    });
  });

  it('names the balance rule when an entry does not balance', async () => {
    const ours = await chargeOf(a);
    const error = await refusal(
      h.db.transaction().execute(async (tx) => {
        const posting = await tx
          .selectFrom('ledger_postings')
          .selectAll()
          .where('entry_id', '=', ours.entry_id)
          .executeTakeFirstOrThrow();
        const entryId = randomUUID();
        await tx
          .insertInto('ledger_entries')
          .values(
            bareEntryRow({ id: entryId, spaceId: a.key.spaceId, day: posting.occurred_on, at: new Date() }),
          )
          .execute();
        await tx
          .insertInto('ledger_postings')
          .values({ ...posting, id: randomUUID(), entry_id: entryId })
          .execute();
      }),
    );
    expect(databaseRule(error)).toEqual({ sqlState: '23514', name: 'ledger_postings_balance' });
  });
});
