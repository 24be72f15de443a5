import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkLedger } from '../src/features/ledger/index.ts';
import { filingTermsQuery } from '../src/features/spaces/index.ts';
import { expandEventGroups } from '../src/platform/outbox/outbox.ts';
import { describeAuthContract } from './auth-contract.ts';
import { createHarness, type Harness, type Key, type User } from './harness.ts';
import { untilBlockedBehind } from './support/lock-waits.ts';

describeAuthContract({
  method: 'POST',
  url: '/integration/transactions',
  scope: 'transactions',
  okStatus: 200,
  payload: () => ({
    rows: [
      {
        external_id: `c-${Math.random()}`,
        account_key: 'k',
        currency: 'EUR',
        occurred_on: '2026-01-02',
        amount: '1',
      },
    ],
  }),
});

const onPostgres = process.env.DATABASE_URL !== undefined;
let h: Harness;
beforeAll(async () => {
  h = await createHarness({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
});
afterAll(() => h.close());

type World = { owner: User; spaceId: string; key: Key };
const pushWorld = (extra: Record<string, unknown> = {}): Promise<World> =>
  h.world({ scopes: ['transactions'], push_source: 'erp', ...extra }) as Promise<World>;
const row = (externalId: string, extra: Record<string, unknown> = {}) => ({
  external_id: externalId,
  account_key: 'bank-eur',
  currency: 'EUR',
  occurred_on: '2026-03-15',
  amount: '10.25',
  payee: 'Client',
  note: 'pushed',
  ...extra,
});
/**
 * The space's events as the webhooks fan-out sees them: a batch's events travel as one group,
 * which the fan-out turns into events first, as here.
 */
async function bookEvents(world: World) {
  await expandEventGroups(h.db, { limit: 10, spaceIds: [world.spaceId] });
  return h.db
    .selectFrom('outbox_events')
    .select(['event', 'payload'])
    .where('space_id', '=', world.spaceId)
    .execute();
}
const push = (world: World, rows: unknown[], headers: Record<string, string> = {}) =>
  h.inject({
    method: 'POST',
    url: '/integration/transactions',
    key: world.key.key,
    payload: { rows },
    headers,
  });
const undo = (world: World, batchId: string) =>
  h.inject({
    method: 'POST',
    url: `/app/api/spaces/${world.spaceId}/push-batches/${batchId}/undo`,
    session: world.owner.token,
  });
const balanceOf = async (world: World, key = 'bank-eur') => {
  const row = await h.db
    .selectFrom('accounts')
    .innerJoin('ledger_accounts', 'ledger_accounts.id', 'accounts.ledger_account_id')
    .select('ledger_accounts.balance')
    .where('accounts.space_id', '=', world.spaceId)
    .where('accounts.push_account_key', '=', key)
    .executeTakeFirst();
  return row ? Number(row.balance) : null;
};

describe('POST /integration/transactions', () => {
  it('books good rows with origin import, creates unknown accounts, and emits money.in and money.out', async () => {
    const world = await pushWorld();
    const res = await push(world, [row('a'), row('b', { amount: '-4.25', payee: 'Shop' })]);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      booked: 2,
      duplicates: 0,
      skipped_closed: 0,
      rejected: 0,
      accounts_created: ['bank-eur'],
      errors: [],
    });
    expect(await balanceOf(world)).toBe(6);
    const entries = await h.db
      .selectFrom('ledger_entries')
      .select(['origin', 'kind'])
      .where('space_id', '=', world.spaceId)
      .execute();
    expect(entries).toHaveLength(2);
    expect(entries.every((entry) => entry.origin === 'import')).toBe(true);
    expect(entries.map((entry) => entry.kind).sort()).toEqual(['expense', 'income']);
    const events = await bookEvents(world);
    expect(events.map((event) => event.event).sort()).toEqual(['money.in', 'money.out']);
    const out = events.find((event) => event.event === 'money.out')!;
    expect(out.payload).toMatchObject({
      direction: 'out',
      amount: '4.25000000',
      currency: 'EUR',
      kind: 'expense',
      origin: 'import',
      occurred_on: '2026-03-15',
    });
    expect(JSON.stringify(events)).not.toContain('Shop');
    expect((await checkLedger(h.db, world.spaceId)).sound).toBe(true);
  });

  it('books a steady sync (every account known, every id new) and a mixed batch (a repeat, another currency, a new account) by the same rules', async () => {
    const world = await pushWorld();
    await push(world, [row('s-0'), row('s-usd', { account_key: 'bank-usd', currency: 'USD', amount: '1' })]);
    const steady = await push(world, [
      row('s-1', { amount: '-1.5' }),
      row('s-2', { amount: '2' }),
      row('s-3', { account_key: 'bank-usd', currency: 'USD', amount: '3' }),
    ]);
    expect(steady.json()).toMatchObject({
      booked: 3,
      duplicates: 0,
      rejected: 0,
      accounts_created: [],
      errors: [],
    });
    expect(await balanceOf(world)).toBe(10.75);
    expect(await balanceOf(world, 'bank-usd')).toBe(4);
    // A repeat, a row in another currency and a new account all turn the batch the long way.
    const mixed = await push(world, [
      row('s-1'),
      row('s-4', { currency: 'USD' }),
      row('s-5', { account_key: 'bank-new' }),
      row('s-6', { amount: '1' }),
    ]);
    expect(mixed.json()).toMatchObject({
      booked: 2,
      duplicates: 1,
      rejected: 1,
      accounts_created: ['bank-new'],
    });
    expect(mixed.json().errors).toMatchObject([{ external_id: 's-4', error: 'currency_mismatch' }]);
    expect(await balanceOf(world)).toBe(11.75);
    const entries = await h.db
      .selectFrom('ledger_entries')
      .select(['origin'])
      .where('space_id', '=', world.spaceId)
      .execute();
    expect(entries).toHaveLength(7);
    expect(entries.every((entry) => entry.origin === 'import')).toBe(true);
    const events = await bookEvents(world);
    expect(events).toHaveLength(7);
    expect((await checkLedger(h.db, world.spaceId)).sound).toBe(true);
  });

  it('rejects each bad row with its reason and still books the good ones', async () => {
    const world = await pushWorld();
    const rows = [
      row('ok-1'),
      'not an object',
      row('', {}),
      row('bad-date', { occurred_on: '2026-02-30' }),
      row('bad-amount', { amount: '1e3' }),
      row('zero', { amount: 0 }),
      row('precise', { amount: '0.000000001' }),
      row('long-payee', { payee: 'p'.repeat(201) }),
      row('wrong-currency', { currency: 'USD' }),
      row('ok-2'),
    ];
    const body = (await push(world, rows)).json();
    expect(body).toMatchObject({ booked: 2, rejected: 8 });
    expect(body.errors.map((error: { index: number; error: string }) => [error.index, error.error])).toEqual([
      [1, 'invalid_row'],
      [2, 'invalid_row'],
      [3, 'invalid_row'],
      [4, 'invalid_row'],
      [5, 'invalid_row'],
      [6, 'invalid_row'],
      [7, 'invalid_row'],
      [8, 'currency_mismatch'],
    ]);
    expect(body.errors[1]).toMatchObject({
      index: 2,
      external_id: null,
      detail: 'external_id must be 1 to 128 characters.',
    });
  });

  it('takes 500 rows in one call and refuses 501 whole', async () => {
    const world = await pushWorld();
    const many = Array.from({ length: 500 }, (_, index) => row(`bulk-${index}`, { amount: '1' }));
    const res = await push(world, many);
    expect(res.json()).toMatchObject({ booked: 500, rejected: 0 });
    expect(await balanceOf(world)).toBe(500);
    const tooMany = await push(world, [...many, row('one-more')]);
    expect(tooMany.statusCode).toBe(422);
    expect(tooMany.json().detail[0]).toMatchObject({ loc: ['body', 'rows'], type: 'too_long' });
    expect(await balanceOf(world)).toBe(500);
  }, 60_000);

  it('refuses a batch whose text holds a lone UTF-16 surrogate (422 string_unicode), filing nothing', async () => {
    const world = await pushWorld();
    const res = await push(world, [row('lone-1', { payee: 'Caf\ud800 bar', note: 'end \udfff' })]);
    expect(res.statusCode).toBe(422);
    expect(res.json().detail[0]).toMatchObject({ loc: ['body', 'rows', 0, 'payee'], type: 'string_unicode' });
    expect(await balanceOf(world)).toBeNull();
    // Whole characters are filed exactly as sent.
    const whole = await push(world, [
      row('whole-1', { payee: 'Caf\u00e9 \ud83d\ude00', note: 'e\u0301 \u202e' }),
    ]);
    expect(whole.json()).toMatchObject({ booked: 1, rejected: 0 });
    const entry = await h.db
      .selectFrom('ledger_entries')
      .select(['counterparty', 'memo'])
      .where('space_id', '=', world.spaceId)
      .where('origin', '=', 'import')
      .executeTakeFirstOrThrow();
    expect(entry).toEqual({ counterparty: 'Caf\u00e9 \ud83d\ude00', memo: 'e\u0301 \u202e' });
  });

  it('keeps every pushed row inside its batch and on its entry: the database refuses a row naming another source or an entry its space lacks, and deleting a batch', async () => {
    const world = await pushWorld();
    const res = await push(world, [row('scope-1')]);
    const batchId = res.json().batch_id as string;
    const claimed = await h.db
      .selectFrom('push_rows')
      .selectAll()
      .where('batch_id', '=', batchId)
      .executeTakeFirstOrThrow();
    const stranger = await pushWorld({ push_source: 'crm' });
    const strangerSource = await h.db
      .selectFrom('integration_keys')
      .select('push_source_id')
      .where('id', '=', stranger.key.id)
      .executeTakeFirstOrThrow();
    await expect(
      h.db
        .insertInto('push_rows')
        .values({ ...claimed, external_id: 'scope-2', push_source_id: strangerSource.push_source_id! })
        .execute(),
    ).rejects.toThrow(/push_rows_batch_id_fkey/);
    // Its entry is filed already, in its own space: neither an unknown entry nor another space's.
    await expect(
      h.db
        .insertInto('push_rows')
        .values({ ...claimed, external_id: 'scope-3', entry_id: randomUUID() })
        .execute(),
    ).rejects.toThrow(/push_rows_entry_id_fkey/);
    await push(stranger, [row('theirs-1')]);
    const theirs = await h.db
      .selectFrom('push_rows')
      .select('entry_id')
      .where('space_id', '=', stranger.spaceId)
      .executeTakeFirstOrThrow();
    await expect(
      h.db
        .insertInto('push_rows')
        .values({ ...claimed, external_id: 'scope-4', entry_id: theirs.entry_id })
        .execute(),
    ).rejects.toThrow(/push_rows_entry_id_fkey/);
    await expect(h.db.deleteFrom('push_batches').where('id', '=', batchId).execute()).rejects.toThrow(
      /push_rows_batch_id_fkey/,
    );
  });

  it('adds nothing for an external_id filed before, across batches and within one batch', async () => {
    const world = await pushWorld();
    expect((await push(world, [row('d-1'), row('d-2')])).json().booked).toBe(2);
    const again = (await push(world, [row('d-1'), row('d-3'), row('d-3')])).json();
    expect(again).toMatchObject({ booked: 1, duplicates: 2 });
    expect(await balanceOf(world)).toBe(30.75);
  });

  it('books the rows once when two identical batches race', async () => {
    const world = await pushWorld();
    const rows = Array.from({ length: 40 }, (_, index) => row(`race-${index}`, { amount: '2' }));
    const [first, second] = await Promise.all([push(world, rows), push(world, [...rows].reverse())]);
    const booked = first.json().booked + second.json().booked;
    const duplicates = first.json().duplicates + second.json().duplicates;
    expect(booked).toBe(40);
    expect(duplicates).toBe(40);
    expect(await balanceOf(world)).toBe(80);
    expect((await checkLedger(h.db, world.spaceId)).sound).toBe(true);
  });

  it('skips rows dated on or before the closing date and books the day after', async () => {
    const world = await pushWorld();
    const close = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${world.spaceId}/close-period`,
      session: world.owner.token,
      payload: { through: '2026-03-31' },
    });
    expect(close.statusCode).toBe(200);
    const body = (
      await push(world, [
        row('before', { occurred_on: '2026-03-30' }),
        row('on', { occurred_on: '2026-03-31' }),
        row('after', { occurred_on: '2026-04-01' }),
      ])
    ).json();
    expect(body).toMatchObject({ booked: 1, skipped_closed: 2, rejected: 0 });
    const reopen = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${world.spaceId}/close-period`,
      session: world.owner.token,
      payload: { through: '2026-03-01' },
    });
    expect(reopen.json().error).toBe('period_closed');
  });

  // Concurrency needs a second connection: PostgreSQL only (PGlite runs one statement at a time).
  it.runIf(onPostgres)('makes closing the books wait for a batch being filed', async () => {
    const world = await pushWorld();
    let closedAt = 0;
    let committedAt = 0;
    await h.db.transaction().execute(async (tx) => {
      // What a batch does when it opens: read the space's filing terms inside its transaction.
      await filingTermsQuery(tx, world.spaceId).execute();
      void h
        .inject({
          method: 'POST',
          url: `/app/api/spaces/${world.spaceId}/close-period`,
          session: world.owner.token,
          payload: { through: '2026-03-31' },
        })
        .then(() => {
          closedAt = performance.now();
        });
      // The closing is blocked on the filing terms this transaction read, and so not done.
      await untilBlockedBehind(tx);
      expect(closedAt).toBe(0);
      committedAt = performance.now();
    });
    await expect.poll(() => closedAt, { timeout: 5000 }).toBeGreaterThan(committedAt);
  });

  it.runIf(onPostgres)('files a batch that waited for the books to close by the new date', async () => {
    const world = await pushWorld();
    const closing = await h.db.transaction().execute(async (tx) => {
      // A closing in flight holds the space's row; the batch waits for it, then reads its date.
      await tx
        .updateTable('spaces')
        .set({ closed_through: '2026-03-31' })
        .where('id', '=', world.spaceId)
        .execute();
      const pending = push(world, [
        row('closed-day', { occurred_on: '2026-03-31' }),
        row('open-day', { occurred_on: '2026-04-01' }),
      ]);
      await untilBlockedBehind(tx);
      // Wrapped, so the transaction commits without waiting for the batch.
      return { pending };
    });
    expect((await closing.pending).json()).toMatchObject({ booked: 1, skipped_closed: 1 });
  });

  it('never moves the closing date backwards, also when closings race', async () => {
    const world = await pushWorld();
    const close = (through: string) =>
      h.inject({
        method: 'POST',
        url: `/app/api/spaces/${world.spaceId}/close-period`,
        session: world.owner.token,
        payload: { through },
      });
    const answers = await Promise.all(['2026-03-31', '2026-01-31', '2026-02-28', '2026-01-15'].map(close));
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual(expect.arrayContaining([200]));
    const space = await h.db
      .selectFrom('spaces')
      .select('closed_through')
      .where('id', '=', world.spaceId)
      .executeTakeFirstOrThrow();
    expect(space.closed_through).toBe('2026-03-31');
    for (const answer of answers) {
      if (answer.statusCode !== 200) expect(answer.json()).toMatchObject({ error: 'period_closed' });
    }
  });

  it('counts rows against the monthly allowance: at the edge one books and the next is rejected', async () => {
    const world = await pushWorld();
    await h.inject({
      method: 'PATCH',
      url: `/app/api/spaces/${world.spaceId}`,
      session: world.owner.token,
      payload: { plan: 'free' },
    });
    const batch = (start: number, count: number) =>
      Array.from({ length: count }, (_, index) => row(`allow-${start + index}`, { amount: '1' }));
    expect((await push(world, batch(0, 500))).json().booked).toBe(500);
    expect((await push(world, batch(500, 499))).json().booked).toBe(499);
    const edge = (await push(world, batch(999, 2))).json();
    expect(edge).toMatchObject({ booked: 1, rejected: 1 });
    expect(edge.errors[0]).toMatchObject({
      index: 1,
      external_id: 'allow-1000',
      error: 'allowance_exceeded',
    });
    // A row refused for the allowance is not filed: its external_id stays free.
    expect((await push(world, batch(1000, 1))).json().errors[0].error).toBe('allowance_exceeded');
  }, 60_000);

  it('replays the first answer for a repeated Idempotency-Key', async () => {
    const world = await pushWorld();
    const idem = { 'idempotency-key': `push-${Math.random()}` };
    const first = await push(world, [row('i-1')], idem);
    const second = await push(world, [row('i-1')], idem);
    expect(second.body).toBe(first.body);
    expect(second.headers['idempotent-replayed']).toBe('true');
  });
});

describe('push batches in the app', () => {
  it('undoes a batch whole: entries reversed by new entries, external_ids freed, then re-pushed; a second undo is refused', async () => {
    const world = await pushWorld();
    const first = (await push(world, [row('u-1'), row('u-2', { amount: '-3' })])).json();
    expect(await balanceOf(world)).toBe(7.25);
    const undone = await undo(world, first.batch_id);
    expect(undone.json()).toMatchObject({ status: 'undone', reversed: 2 });
    expect(await balanceOf(world)).toBe(0);
    const reversals = await h.db
      .selectFrom('ledger_entries')
      .select('reverses_entry_id')
      .where('space_id', '=', world.spaceId)
      .where('cause_type', '=', 'reversal')
      .execute();
    expect(reversals).toHaveLength(2);
    // The undo tells the book channel: each reversal moves money the other way, origin import.
    const events = await bookEvents(world);
    const moves = events.map((event) => {
      const payload = event.payload as Record<string, unknown>;
      return `${event.event} ${payload.direction} ${payload.amount} ${payload.kind} ${payload.origin}`;
    });
    expect(moves.sort()).toEqual([
      'money.in in 10.25000000 income import',
      'money.in in 3.00000000 expense import',
      'money.out out 10.25000000 income import',
      'money.out out 3.00000000 expense import',
    ]);
    expect((await undo(world, first.batch_id)).statusCode).toBe(409);
    expect((await push(world, [row('u-1'), row('u-2', { amount: '-3' })])).json().booked).toBe(2);
    expect(await balanceOf(world)).toBe(7.25);
    const list = (
      await h.inject({
        method: 'GET',
        url: `/app/api/spaces/${world.spaceId}/push-batches?push_source=erp`,
        session: world.owner.token,
      })
    ).json();
    expect(list.items.map((item: { status: string }) => item.status)).toEqual(['booked', 'undone']);
    expect((await checkLedger(h.db, world.spaceId)).sound).toBe(true);
  });

  it('refuses to undo a batch whose rows lie in closed books', async () => {
    const world = await pushWorld();
    const batch = (await push(world, [row('c-1', { occurred_on: '2026-03-10' })])).json();
    await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${world.spaceId}/close-period`,
      session: world.owner.token,
      payload: { through: '2026-03-31' },
    });
    const res = await undo(world, batch.batch_id);
    expect(res.statusCode).toBe(422);
    expect(res.json().error).toBe('period_closed');
  });

  const closeBooks = (world: World, through: string) =>
    h.inject({
      method: 'POST',
      url: `/app/api/spaces/${world.spaceId}/close-period`,
      session: world.owner.token,
      payload: { through },
    });
  const reversalsIn = (world: World) =>
    h.db
      .selectFrom('ledger_entries')
      .select(['occurred_on'])
      .where('space_id', '=', world.spaceId)
      .where('cause_type', '=', 'reversal')
      .execute();

  // Races need a second connection: PostgreSQL only (PGlite runs one statement at a time).
  it.runIf(onPostgres)(
    'refuses an undo that waited for a closing in flight, and files no reversal',
    async () => {
      const world = await pushWorld();
      const batch = (await push(world, [row('w-1')])).json();
      const held = await h.db.transaction().execute(async (tx) => {
        // What a closing does: update the space's row, which the undo must wait for.
        await tx
          .updateTable('spaces')
          .set({ closed_through: '2026-03-31' })
          .where('id', '=', world.spaceId)
          .execute();
        const answer = undo(world, batch.batch_id);
        await untilBlockedBehind(tx);
        // Wrapped, so the transaction commits without waiting for the undo.
        return { answer };
      });
      const res = await held.answer;
      expect(res.statusCode).toBe(422);
      expect(res.json()).toMatchObject({ error: 'period_closed', details: { closed_through: '2026-03-31' } });
      expect(await reversalsIn(world)).toHaveLength(0);
    },
  );

  it.runIf(onPostgres)('makes a closing wait for an undo being filed', async () => {
    const world = await pushWorld();
    const batch = (await push(world, [row('w-2')])).json();
    let closedAt = 0;
    const held = await h.db.transaction().execute(async (tx) => {
      // The undo passes its closed-books check, then waits here for the balances it moves.
      await tx
        .selectFrom('ledger_accounts')
        .select('id')
        .where('space_id', '=', world.spaceId)
        .forUpdate()
        .execute();
      const undone = undo(world, batch.batch_id);
      await untilBlockedBehind(tx);
      const closing = closeBooks(world, '2026-03-31').then((answer) => {
        closedAt = performance.now();
        return answer;
      });
      // The closing waits for the undo, which waits for this transaction.
      await untilBlockedBehind(tx, 2);
      expect(closedAt).toBe(0);
      return { undone, closing };
    });
    expect((await held.undone).statusCode).toBe(200);
    expect((await held.closing).statusCode).toBe(200);
    // The reversal was filed before the books closed over its day, never after.
    expect(await reversalsIn(world)).toEqual([{ occurred_on: '2026-03-15' }]);
    expect((await checkLedger(h.db, world.spaceId)).sound).toBe(true);
  });

  it.runIf(onPostgres)('files nothing inside closed books when undos and closings race', async () => {
    const rounds = await Promise.all(
      Array.from({ length: 8 }, async (_, index) => {
        const world = await pushWorld();
        const batch = (await push(world, [row(`r-${index}`)])).json();
        const undoing = () => undo(world, batch.batch_id);
        const closing = () => closeBooks(world, '2026-03-31');
        // Half the rounds send the undo first, half the closing.
        const [undone, closed] =
          index % 2 === 0
            ? await Promise.all([undoing(), closing()])
            : (await Promise.all([closing(), undoing()])).reverse();
        return { world, undone: undone!, closed: closed! };
      }),
    );
    for (const { world, undone, closed } of rounds) {
      expect(closed.statusCode).toBe(200);
      const reversals = await reversalsIn(world);
      if (undone.statusCode === 200) expect(reversals).toHaveLength(1);
      else {
        expect(undone.json()).toMatchObject({ error: 'period_closed' });
        expect(reversals).toHaveLength(0);
      }
    }
  });

  it('lets only owners and admins undo, and hides other spaces', async () => {
    const world = await pushWorld();
    const batch = (await push(world, [row('m-1')])).json();
    const stranger = await h.signup();
    const res = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${world.spaceId}/push-batches/${batch.batch_id}/undo`,
      session: stranger.token,
    });
    expect(res.statusCode).toBe(404);
  });
});
