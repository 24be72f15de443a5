import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type User } from './harness.ts';

// Every edit of an account is recorded (who, when, each changed field before and after) in the
// same transaction as the edit, and shown on the account's page; an edit that changes nothing
// records nothing.

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
});
afterAll(() => h.close());

const cookie = (token: string) => ({ cookie: `tb_session=${token}` });

async function book() {
  const owner = await h.signup('Olga Owner');
  const spaceId = await h.createSpace(owner);
  const account = await h.makeAccount(spaceId, { kind: 'bank', name: 'Main bank (EUR)', currency: 'EUR' });
  return { owner, spaceId, accountId: account.id };
}

const patch = (user: User, spaceId: string, accountId: string, payload: Record<string, unknown>) =>
  h.inject({
    method: 'PATCH',
    url: `/app/api/spaces/${spaceId}/accounts/${accountId}`,
    session: user.token,
    payload,
  });

const editsOf = (accountId: string) =>
  h.db
    .selectFrom('account_edits')
    .select(['user_id', 'changed', 'created_at'])
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .execute();

describe('account edits are recorded', () => {
  it('records who changed which fields, from what to what; an edit that changes nothing records nothing', async () => {
    const b = await book();
    const member = await h.signup('Mia Member');
    await h.addMember(b.owner, b.spaceId, member, 'member');
    const renamed = await patch(b.owner, b.spaceId, b.accountId, { name: 'Sparkasse', details: 'Main' });
    expect(renamed.statusCode, renamed.body).toBe(200);
    const requisites = {
      scheme: 'sepa',
      iban: 'DE89370400440532013000',
      bic: 'COBADEFFXXX',
      holder: 'Nordlicht',
    };
    expect((await patch(member, b.spaceId, b.accountId, { requisites })).statusCode).toBe(200);
    expect((await patch(b.owner, b.spaceId, b.accountId, { name: 'Sparkasse', requisites })).statusCode).toBe(
      200,
    );
    const edits = await editsOf(b.accountId);
    expect(edits).toHaveLength(2);
    expect(edits[0]).toMatchObject({
      user_id: b.owner.id,
      changed: { name: { from: 'Main bank (EUR)', to: 'Sparkasse' }, details: { from: '', to: 'Main' } },
    });
    expect(edits[1]?.user_id).toBe(member.id);
    expect(edits[1]?.changed).toEqual({
      requisites: { from: null, to: expect.objectContaining(requisites) },
    });
  });

  it('records nothing for a refused edit (bad IBAN) or a viewer', async () => {
    const b = await book();
    const viewer = await h.signup('Vic Viewer');
    await h.addMember(b.owner, b.spaceId, viewer, 'viewer');
    const bad = await patch(b.owner, b.spaceId, b.accountId, {
      requisites: { scheme: 'sepa', iban: 'DE00370400440532013000', holder: 'X' },
    });
    expect(bad.statusCode).toBe(422);
    expect((await patch(viewer, b.spaceId, b.accountId, { name: 'Nope' })).statusCode).toBe(403);
    expect(await editsOf(b.accountId)).toHaveLength(0);
  });

  it('shows the changes on the account page, and the page form records its edit', async () => {
    const b = await book();
    const page = `/app/books/${b.spaceId}/accounts/${b.accountId}`;
    const empty = await h.inject({ method: 'GET', url: page, headers: cookie(b.owner.token) });
    expect(empty.body).toContain('No changes yet');
    const posted = await h.inject({
      method: 'POST',
      url: page,
      headers: { ...cookie(b.owner.token), 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ _csrf: b.owner.csrf, name: 'Operating <b>EUR</b>' }).toString(),
    });
    expect(posted.statusCode, posted.body).toBe(303);
    const shown = await h.inject({ method: 'GET', url: page, headers: cookie(b.owner.token) });
    expect(shown.body).toContain('Name: Main bank (EUR) → Operating &lt;b>EUR&lt;/b>');
    expect(shown.body).toContain('Olga Owner');
    expect(await editsOf(b.accountId)).toHaveLength(1);
    // Bank details in the history: the IBAN in groups of four, as the pay page writes it.
    const requisites = { scheme: 'sepa', iban: 'DE89370400440532013000', holder: 'Nordlicht' };
    expect((await patch(b.owner, b.spaceId, b.accountId, { requisites })).statusCode).toBe(200);
    const history = await h.inject({ method: 'GET', url: page, headers: cookie(b.owner.token) });
    expect(history.body).toContain('Bank details: (none) → DE89 3704 0044 0532 0130 00 · Nordlicht');
  });
});
