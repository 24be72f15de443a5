import { expect } from 'vitest';
import { formatAmount } from '../src/core/money.ts';
import { checkLedger, naturalBalanceOf } from '../src/features/ledger/index.ts';
import type { Harness, User } from './harness.ts';

// Shared by the money-out suites: a book with an owner, a second admin, a member, a funded
// account, and readers for payments, events and the ledger.

export type Book = Awaited<ReturnType<typeof makeBook>>;

export async function makeBook(h: Harness, opening = '1000') {
  const owner = await h.signup('Owner');
  const spaceId = await h.createSpace(owner);
  const admin = await h.signup('Admin');
  const admin2 = await h.signup('Admin two');
  const member = await h.signup('Member');
  const viewer = await h.signup('Viewer');
  await h.addMember(owner, spaceId, admin, 'admin');
  await h.addMember(owner, spaceId, admin2, 'admin');
  await h.addMember(owner, spaceId, member, 'member');
  await h.addMember(owner, spaceId, viewer, 'viewer');
  const bank = await h.makeAccount(spaceId, {
    kind: 'bank',
    name: 'Operating',
    currency: 'USD',
    opening_balance: opening,
  });
  const post = (user: User, path: string, payload: Record<string, unknown> = {}) =>
    h.inject({ method: 'POST', url: `/app/api/spaces/${spaceId}${path}`, session: user.token, payload });
  const get = (user: User, path: string) =>
    h.inject({ method: 'GET', url: `/app/api/spaces/${spaceId}${path}`, session: user.token });
  const pay = (user: User, payload: Record<string, unknown>) =>
    post(user, '/payments', { account_id: bank.id, rail: 'book', payee: 'Acme Supplies', ...payload });
  const events = async (name?: string) => {
    let query = h.db
      .selectFrom('outbox_events')
      .select(['event', 'payload'])
      .where('space_id', '=', spaceId)
      .orderBy('id');
    if (name) query = query.where('event', '=', name);
    return (await query.execute()).map((row) => ({
      event: row.event,
      payload: (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload) as Record<
        string,
        unknown
      >,
    }));
  };
  const balance = async (accountId = bank.id) => {
    const row = await h.db
      .selectFrom('accounts')
      .select('ledger_account_id')
      .where('id', '=', accountId)
      .executeTakeFirstOrThrow();
    return row.ledger_account_id === null
      ? '0.00000000'
      : formatAmount(await naturalBalanceOf(h.db, row.ledger_account_id));
  };
  const ledgerSound = async () => {
    const report = await checkLedger(h.db, spaceId);
    expect(report, JSON.stringify(report)).toMatchObject({ sound: true });
  };
  return {
    owner,
    admin,
    admin2,
    member,
    viewer,
    spaceId,
    bank,
    post,
    get,
    pay,
    events,
    balance,
    ledgerSound,
  };
}

/** Checks a book event's body field by field: exactly these keys, amounts eight places, no names. */
export function expectEventBody(payload: Record<string, unknown>, fields: Record<string, unknown>) {
  expect(Object.keys(payload).sort()).toEqual(Object.keys(fields).sort());
  expect(payload).toEqual(fields);
  if ('amount' in payload) expect(payload.amount).toMatch(/^\d+\.\d{8}$/);
}
