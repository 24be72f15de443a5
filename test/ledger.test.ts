import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asAmount } from '../src/core/money.ts';
import {
  checkLedger,
  decrease,
  type EntryDraft,
  increase,
  ledgerAccounts,
  naturalBalanceOf,
  postEntries,
  postEntry,
  reverseEntry,
} from '../src/features/ledger/index.ts';
import { createHarness, type Harness } from './harness.ts';
import { bareEntryRow } from './ledger-rows.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

describe('ledger', () => {
  it('reverses an entry with a new entry of opposite postings, once; the balance returns and the ledger stays sound', async () => {
    const { spaceId } = await h.world();
    const account = await h.makeAccount(spaceId, { currency: 'EUR' });
    const at = new Date();
    const where = { spaceId, currency: 'EUR', at };
    const asset = await ledgerAccounts.asset(h.db, { ...where, accountId: account.id });
    const income = await ledgerAccounts.income(h.db, { ...where, resourceId: null });
    const posted = await h.db.transaction().execute((tx) =>
      postEntry(
        tx,
        {
          spaceId,
          origin: 'rail',
          kind: 'income',
          occurredOn: '2026-05-01',
          causeType: 'test',
          causeId: randomUUID(),
          postings: [increase(asset, asAmount(700n)), increase(income, asAmount(700n))],
        },
        at,
      ),
    );
    if (!posted.ok) throw new Error('posting failed');
    expect(await naturalBalanceOf(h.db, asset.id)).toBe(700n);
    const reversed = await h.db
      .transaction()
      .execute((tx) => reverseEntry(tx, spaceId, posted.entryId, at, '2026-05-02', 'undo'));
    expect(reversed.ok).toBe(true);
    expect(await naturalBalanceOf(h.db, asset.id)).toBe(0n);
    const original = await h.db
      .selectFrom('ledger_entries')
      .selectAll()
      .where('id', '=', posted.entryId)
      .executeTakeFirstOrThrow();
    expect(original.reverses_entry_id).toBeNull();
    await expect(
      h.db.transaction().execute((tx) => reverseEntry(tx, spaceId, posted.entryId, at, '2026-05-02')),
    ).rejects.toThrow();
    expect((await checkLedger(h.db, spaceId)).sound).toBe(true);
  });

  it('files many entries of several spaces, accounts and currencies at once exactly as drafted', async () => {
    const at = new Date('2026-06-01T10:00:00.123Z');
    const spaces = [await h.world(), await h.world()];
    const drafts: EntryDraft[] = [];
    const expected: { space: string; entry: number; account: string; currency: string; amount: string }[] =
      [];
    for (const [index, { spaceId }] of spaces.entries()) {
      for (const currency of ['EUR', 'USDC']) {
        const account = await h.makeAccount(spaceId, { currency });
        const where = { spaceId, currency, at };
        const asset = await ledgerAccounts.asset(h.db, { ...where, accountId: account.id });
        const income = await ledgerAccounts.income(h.db, { ...where, resourceId: null });
        const expense = await ledgerAccounts.expense(h.db, { ...where, ref: 'test' });
        const amount = asAmount(BigInt(index + 1) * 123_456_789n);
        const moneyIn: boolean = drafts.length % 2 === 0;
        drafts.push({
          spaceId,
          origin: 'import',
          kind: moneyIn ? 'income' : 'expense',
          occurredOn: `2026-05-0${drafts.length + 1}`,
          causeType: 'test',
          causeId: null,
          counterparty: `Payee "${index}" \\ ${currency}`,
          memo: `note ${drafts.length}`,
          postings: moneyIn
            ? [increase(asset, amount), increase(income, amount)]
            : [decrease(asset, amount), increase(expense, amount)],
        });
        const signed = moneyIn ? '1.23456789' : '-1.23456789';
        const counter = moneyIn ? income : expense;
        const scaled = (text: string) => (index === 0 ? text : text.replace('1.23456789', '2.46913578'));
        expected.push(
          { space: spaceId, entry: drafts.length - 1, account: asset.id, currency, amount: scaled(signed) },
          {
            space: spaceId,
            entry: drafts.length - 1,
            account: counter.id,
            currency,
            amount: scaled(moneyIn ? '-1.23456789' : '1.23456789'),
          },
        );
      }
    }
    const ids = await h.db.transaction().execute((tx) => postEntries(tx, drafts, at));
    const entries = await h.db.selectFrom('ledger_entries').selectAll().where('id', 'in', ids).execute();
    for (const [index, id] of ids.entries()) {
      const entry = entries.find((row) => row.id === id)!;
      const draft = drafts[index]!;
      expect(entry).toMatchObject({
        space_id: draft.spaceId,
        origin: 'import',
        kind: draft.kind,
        cause_type: 'test',
        cause_id: null,
        counterparty: draft.counterparty,
        memo: draft.memo,
        reverses_entry_id: null,
      });
      expect(new Date(entry.created_at).toISOString()).toBe(at.toISOString());
    }
    const postings = await h.db
      .selectFrom('ledger_postings')
      .select(['space_id', 'entry_id', 'ledger_account_id', 'currency', 'amount', 'occurred_on'])
      .where('entry_id', 'in', ids)
      .execute();
    expect(postings).toHaveLength(expected.length);
    for (const want of expected) {
      const found = postings.filter(
        (row) => row.entry_id === ids[want.entry] && row.ledger_account_id === want.account,
      );
      expect(found).toHaveLength(1);
      expect(found[0]).toEqual({
        space_id: want.space,
        entry_id: ids[want.entry],
        ledger_account_id: want.account,
        currency: want.currency,
        amount: want.amount,
        occurred_on: drafts[want.entry]!.occurredOn,
      });
    }
    for (const { spaceId } of spaces) expect((await checkLedger(h.db, spaceId)).sound).toBe(true);
  });

  it('refuses to edit a posting or an entry: the ledger is append-only', async () => {
    const { spaceId } = await h.world();
    await h.makeAccount(spaceId, { currency: 'EUR', opening_balance: '5' });
    const entry = await h.db
      .selectFrom('ledger_entries')
      .select('id')
      .where('space_id', '=', spaceId)
      .executeTakeFirstOrThrow();
    await expect(
      h.db.updateTable('ledger_entries').set({ memo: 'changed' }).where('id', '=', entry.id).execute(),
    ).rejects.toThrow(/append-only/);
    await expect(
      h.db.updateTable('ledger_postings').set({ amount: '1' }).where('entry_id', '=', entry.id).execute(),
    ).rejects.toThrow(/append-only/);
    await expect(
      h.db.deleteFrom('ledger_postings').where('entry_id', '=', entry.id).execute(),
    ).rejects.toThrow(/append-only/);
    await expect(h.db.deleteFrom('ledger_entries').where('id', '=', entry.id).execute()).rejects.toThrow(
      /append-only/,
    );
    await expect(
      h.db.deleteFrom('ledger_accounts').where('space_id', '=', spaceId).execute(),
    ).rejects.toThrow(/append-only/);
  });

  it('refuses, in the database itself, postings that do not balance', async () => {
    const { spaceId } = await h.world();
    const account = await h.makeAccount(spaceId, { currency: 'EUR' });
    const asset = await ledgerAccounts.asset(h.db, {
      spaceId,
      currency: 'EUR',
      at: new Date(),
      accountId: account.id,
    });
    const entryId = randomUUID();
    const insert = h.db.transaction().execute(async (tx) => {
      await tx
        .insertInto('ledger_entries')
        .values(bareEntryRow({ id: entryId, spaceId, day: '2026-05-01', at: new Date() }))
        .execute();
      await tx
        .insertInto('ledger_postings')
        .values({
          id: randomUUID(),
          space_id: spaceId,
          entry_id: entryId,
          ledger_account_id: asset.id,
          currency: 'EUR',
          amount: '3',
          occurred_on: '2026-05-01',
        })
        .execute();
    });
    await expect(insert).rejects.toThrow(/does not balance/);
  });

  it('refuses, in the database itself, postings whose entry or account is missing or belongs elsewhere', async () => {
    const { spaceId } = await h.world();
    const other = await h.world();
    const at = new Date();
    const account = await h.makeAccount(spaceId, { currency: 'EUR' });
    const asset = await ledgerAccounts.asset(h.db, { spaceId, currency: 'EUR', at, accountId: account.id });
    const income = await ledgerAccounts.income(h.db, { spaceId, currency: 'EUR', at, resourceId: null });
    const foreignIncome = await ledgerAccounts.income(h.db, {
      spaceId: other.spaceId,
      currency: 'EUR',
      at,
      resourceId: null,
    });
    const usdIncome = await ledgerAccounts.income(h.db, { spaceId, currency: 'USD', at, resourceId: null });
    const entry = (space: string) =>
      bareEntryRow({ id: randomUUID(), spaceId: space, kind: 'income', day: '2026-05-01', at });
    const posting = (entryId: string, ledgerAccountId: string, amount: string) => ({
      id: randomUUID(),
      space_id: spaceId,
      entry_id: entryId,
      ledger_account_id: ledgerAccountId,
      currency: 'EUR',
      amount,
      occurred_on: '2026-05-01',
    });
    const attempt = (entrySpace: string | null, counter: string) =>
      h.db.transaction().execute(async (tx) => {
        const row = entry(entrySpace ?? spaceId);
        if (entrySpace !== null) await tx.insertInto('ledger_entries').values(row).execute();
        await tx
          .insertInto('ledger_postings')
          .values([posting(row.id, asset.id, '4'), posting(row.id, counter, '-4')])
          .execute();
      });
    // Composite foreign keys: (space_id, entry_id) and (space_id, ledger_account_id, currency).
    await expect(attempt(null, income.id)).rejects.toThrow(/ledger_postings_entry_id_fkey/);
    await expect(attempt(other.spaceId, income.id)).rejects.toThrow(/ledger_postings_entry_id_fkey/);
    await expect(attempt(spaceId, foreignIncome.id)).rejects.toThrow(
      /ledger_postings_ledger_account_id_fkey/,
    );
    await expect(attempt(spaceId, usdIncome.id)).rejects.toThrow(/ledger_postings_ledger_account_id_fkey/);
    await expect(attempt(spaceId, randomUUID())).rejects.toThrow(/ledger_postings_ledger_account_id_fkey/);
    await attempt(spaceId, income.id);
    const filed = await h.db
      .selectFrom('ledger_postings')
      .select('amount')
      .where('ledger_account_id', '=', asset.id)
      .execute();
    expect(filed.map((row) => Number(row.amount))).toEqual([4]);
  });

  it('refuses entries and events naming a space that does not exist, a reversal of another space, and deleting a space', async () => {
    const { spaceId } = await h.world();
    const other = await h.world();
    const at = new Date();
    const entry = (space: string, reverses: string | null = null) =>
      bareEntryRow({ id: randomUUID(), spaceId: space, kind: 'income', day: '2026-05-01', at, reverses });
    await expect(h.db.insertInto('ledger_entries').values(entry(randomUUID())).execute()).rejects.toThrow(
      /ledger_entries_space_id_fkey/,
    );
    const theirs = entry(other.spaceId);
    await h.db.insertInto('ledger_entries').values(theirs).execute();
    await expect(
      h.db.insertInto('ledger_entries').values(entry(spaceId, theirs.id)).execute(),
    ).rejects.toThrow(/ledger_entries_reverses_entry_id_fkey/);
    await h.db.insertInto('ledger_entries').values(entry(other.spaceId, theirs.id)).execute();
    const event = (space: string) => ({
      id: randomUUID(),
      space_id: space,
      channel: 'book' as const,
      key_id: null,
      event: 'money.in',
      payload: '{}',
      occurred_at: at,
      created_at: at,
    });
    await expect(h.db.insertInto('outbox_events').values(event(randomUUID())).execute()).rejects.toThrow(
      /outbox_events_space_id_fkey/,
    );
    // Nothing cascades from a space: every row that names it refuses its deletion.
    await expect(h.db.deleteFrom('spaces').where('id', '=', spaceId).execute()).rejects.toThrow(
      /violates foreign key constraint/,
    );
    expect(await h.db.selectFrom('spaces').select('id').where('id', '=', spaceId).execute()).toHaveLength(1);
  });
});
