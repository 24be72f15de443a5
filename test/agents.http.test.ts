import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY_MS, ManualClock } from '../src/core/clock.ts';
import { sha256Hex } from '../src/platform/crypto.ts';
import { type AgentBook, DEFAULT_FENCE, makeAgentBook } from './agents-setup.ts';
import { createHarness, type Harness } from './harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
});
afterAll(() => h.close());

const books: AgentBook[] = [];
async function book(opening?: string) {
  const made = await makeAgentBook(h, opening);
  books.push(made);
  return made;
}
afterAll(async () => {
  for (const made of books) await made.ledgerSound();
});

describe('issuing agents', () => {
  it('shows the oat_ token once and keeps only its hash; the wallet key never leaves', async () => {
    const b = await book();
    const res = await b.post(b.owner, '/agents', {
      name: 'Expenses bot',
      perms: ['payments'],
      fence: { ...DEFAULT_FENCE, expires_at: '2030-01-01T00:00:00Z' },
    });
    expect(res.statusCode).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const out = res.json();
    expect(out).toMatchObject({
      status: 'observing',
      perms: ['payments'],
      accounts_restricted: false,
      fence: {
        x402_hosts: ['api.example.com'],
        allowed_merchants: ['Acme Supplies'],
        per_request_usd: '50.00000000',
        daily_usd: '100.00000000',
        expires_at: '2030-01-01T00:00:00.000Z',
      },
    });
    expect(out.agent_id).toBe(out.id);
    expect(out.token).toMatch(/^oat_[0-9A-Za-z]{43}$/);
    expect(out.wallet_address).toMatch(/^0x[0-9a-f]{40}$/);
    expect(JSON.stringify(out)).not.toMatch(/sealed|private|v1\./);
    const row = await h.db
      .selectFrom('agents')
      .selectAll()
      .where('id', '=', out.id)
      .executeTakeFirstOrThrow();
    expect(row.token_hash).toBe(sha256Hex(out.token));
    expect(JSON.stringify(row)).not.toContain(out.token);
    expect(row.wallet_key_sealed).toMatch(/^v1\./);
    // A listing never carries the token.
    const list = await b.get(b.owner, '/agents');
    expect(list.statusCode).toBe(200);
    expect(list.body).not.toContain(out.token);
    expect(list.json().items).toHaveLength(1);
  });

  it('is for owners and admins; members and viewers are refused; another book answers 404', async () => {
    const b = await book();
    expect((await b.issue({}, b.admin)).token).toMatch(/^oat_/);
    for (const user of [b.member, b.viewer]) {
      const res = await b.post(user, '/agents', { name: 'x', perms: [], fence: DEFAULT_FENCE });
      expect(res.statusCode).toBe(403);
    }
    const other = await book();
    const res = await other.post(b.owner, '/agents', { name: 'x', perms: [], fence: DEFAULT_FENCE });
    expect(res.statusCode).toBe(404);
    const foreign = await b.post(b.owner, '/agents', {
      name: 'x',
      perms: [],
      account_ids: [other.bank.id],
      fence: DEFAULT_FENCE,
    });
    expect(foreign.json().error).toBe('account_not_found');
  });

  it('refuses bad bodies with 422 in the validation shape', async () => {
    const b = await book();
    const bad = [
      { name: '', perms: [], fence: DEFAULT_FENCE },
      { name: 'x', perms: ['root'], fence: DEFAULT_FENCE },
      { name: 'x', perms: [], fence: { ...DEFAULT_FENCE, daily_usd: '1e3' } },
      { name: 'x', perms: [], fence: { ...DEFAULT_FENCE, per_request_usd: '-1' } },
      { name: 'x', perms: [] },
    ];
    for (const payload of bad) {
      const res = await b.post(b.owner, '/agents', payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(422);
      expect(res.json().detail[0].loc[0]).toBe('body');
    }
  });
});

describe('agent status', () => {
  it('moves observing → active → frozen → observing, and refuses other moves', async () => {
    const b = await book();
    const agent = await b.issue();
    expect((await b.setStatus(agent, 'active')).json().status).toBe('active');
    const back = await b.setStatus(agent, 'observing');
    expect(back.statusCode).toBe(422);
    expect(back.json()).toMatchObject({ error: 'invalid_request', details: { from: 'active' } });
    expect((await b.setStatus(agent, 'frozen')).json().status).toBe('frozen');
    expect((await b.setStatus(agent, 'active')).statusCode).toBe(422);
    expect((await b.setStatus(agent, 'observing')).json().status).toBe('observing');
    expect((await b.setStatus(agent, 'frozen', b.member)).statusCode).toBe(403);
  });

  it('a revoked token answers 401 at once, and a revoked agent cannot move', async () => {
    const b = await book();
    const agent = await b.active();
    expect((await b.call(agent, 'GET', '/agent/me')).statusCode).toBe(200);
    const revoked = await h.inject({
      method: 'DELETE',
      url: `/app/api/spaces/${b.spaceId}/agents/${agent.id}`,
      session: b.owner.token,
    });
    expect(revoked.json().revoked_at).not.toBeNull();
    expect((await b.call(agent, 'GET', '/agent/me')).statusCode).toBe(401);
    expect((await b.agentPay(agent)).statusCode).toBe(401);
    expect((await b.setStatus(agent, 'frozen')).statusCode).toBe(409);
  });
});

describe('GET /agent/me', () => {
  it('answers AgentMeOut with addresses masked to their last four characters', async () => {
    const b = await book();
    const wallet = await h.makeWallet(b.spaceId, `0x${'ab'.repeat(18)}c0de`);
    const agent = await b.issue({ account_ids: [wallet.id] });
    const res = await b.call(agent, 'GET', '/agent/me');
    expect(res.statusCode).toBe(200);
    const me = res.json();
    expect(me).toMatchObject({
      agent_id: agent.id,
      name: 'Bookkeeper bot',
      status: 'observing',
      observing: true,
      owner_name: 'Owner',
      masked: true,
      wallet_address: `…${agent.wallet_address.slice(-4)}`,
    });
    expect(me.spaces).toEqual([
      expect.objectContaining({
        id: b.spaceId,
        base_currency: 'USD',
        perms: ['payments', 'transactions', 'chain_payments'],
        account_ids: [wallet.id],
        accounts_restricted: true,
        accounts: [{ id: wallet.id, name: 'Wallet', kind: 'crypto', currency: 'USDC', address: '…c0de' }],
      }),
    ]);
    expect(res.body).not.toContain('abababab');
  });

  it('refuses a missing, malformed or unknown token with 401', async () => {
    expect((await h.inject({ method: 'GET', url: '/agent/me' })).statusCode).toBe(401);
    for (const token of ['oit_x', `oat_${'A'.repeat(43)}`, 'Bearer']) {
      const res = await h.inject({
        method: 'GET',
        url: '/agent/me',
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.statusCode).toBe(401);
      expect(res.json().error).toBe('unauthorized');
    }
  });

  it('stops an agent whose issuer was demoted to member', async () => {
    const b = await book();
    const agent = await b.issue({}, b.admin);
    expect((await b.call(agent, 'GET', '/agent/me')).statusCode).toBe(200);
    await h.inject({
      method: 'PATCH',
      url: `/app/api/spaces/${b.spaceId}/members/${b.admin.id}`,
      session: b.owner.token,
      payload: { role: 'member' },
    });
    expect((await b.call(agent, 'GET', '/agent/me')).statusCode).toBe(401);
  });
});

// The rule table, one test per cell: status (observing, active, frozen) × fence (inside,
// outside) × perm (held, missing). "Outside" is a payment over per_request_usd.
describe('the rule table (status × fence × perm)', () => {
  const cells = [
    ['observing', 'inside', 'held', 'proposal'],
    ['observing', 'inside', 'missing', 'missing_perm'],
    ['observing', 'outside', 'held', 'proposal'],
    ['observing', 'outside', 'missing', 'missing_perm'],
    ['active', 'inside', 'held', 'applied'],
    ['active', 'inside', 'missing', 'missing_perm'],
    ['active', 'outside', 'held', 'proposal'],
    ['active', 'outside', 'missing', 'missing_perm'],
    ['frozen', 'inside', 'held', 'agent_frozen'],
    ['frozen', 'inside', 'missing', 'agent_frozen'],
    ['frozen', 'outside', 'held', 'agent_frozen'],
    ['frozen', 'outside', 'missing', 'agent_frozen'],
  ] as const;
  for (const [status, fence, perm, expected] of cells) {
    it(`${status} × ${fence} the fence × perm ${perm} → ${expected}`, async () => {
      const b = await book();
      const agent = await b.issue({ perms: perm === 'held' ? ['payments'] : ['transactions'] });
      if (status !== 'observing') await b.setStatus(agent, 'active');
      if (status === 'frozen') await b.setStatus(agent, 'frozen');
      const res = await b.agentPay(agent, { amount: fence === 'inside' ? '10' : '50.01' });
      const payments = (await b.get(b.owner, '/payments')).json().items;
      if (expected === 'applied') {
        expect(res.statusCode).toBe(200);
        expect(res.json()).toMatchObject({ applied: true, message: '', proposal_id: null });
        expect(res.json().result).toMatchObject({ status: 'executed', amount: '10.00000000', rail: 'book' });
        expect(payments).toHaveLength(1);
        expect(await b.balance()).toBe('990.00000000');
      } else if (expected === 'proposal') {
        expect(res.statusCode).toBe(200);
        const out = res.json();
        expect(out).toMatchObject({ applied: false, result: null });
        expect(out.proposal_id).toMatch(/^[0-9a-f-]{36}$/);
        expect(out.message).toMatch(status === 'observing' ? /observing/ : /per_request_usd/);
        expect(payments).toHaveLength(0);
      } else {
        expect(res.statusCode).toBe(403);
        expect(res.json().error).toBe(expected);
        expect(payments).toHaveLength(0);
        const writes = await h.db
          .selectFrom('agent_writes')
          .select('id')
          .where('agent_id', '=', agent.id)
          .execute();
        expect(writes).toHaveLength(0);
      }
    });
  }
});

describe('the fence', () => {
  it('a payee not among allowed_merchants, a non-USD account and an expired fence make proposals', async () => {
    const b = await book();
    const agent = await b.active({ perms: ['payments', 'transactions'] });
    const stranger = (await b.agentPay(agent, { payee: 'Someone else' })).json();
    expect(stranger).toMatchObject({ applied: false });
    expect(stranger.message).toContain('allowed_merchants');
    // Merchants match whatever the case and surrounding spaces.
    expect((await b.agentPay(agent, { payee: '  acme SUPPLIES ' })).json().applied).toBe(true);
    const euros = await h.makeAccount(b.spaceId, {
      kind: 'bank',
      name: 'EUR',
      currency: 'EUR',
      opening_balance: '100',
    });
    const eur = (await b.agentPay(agent, { account_id: euros.id })).json();
    expect(eur).toMatchObject({ applied: false });
    expect(eur.message).toContain('USD');
    const expired = await b.active({
      perms: ['payments', 'transactions'],
      fence: { expires_at: '2020-01-01T00:00:00Z' },
    });
    expect((await b.agentPay(expired)).json().message).toContain('expired');
    expect((await b.agentTx(expired)).json()).toMatchObject({ applied: false });
  });

  it('counts the day: concurrent payments never spend past daily_usd', async () => {
    const b = await book();
    const agent = await b.active({ perms: ['payments'], fence: { per_request_usd: '1', daily_usd: '7' } });
    const answers = await Promise.all(Array.from({ length: 20 }, () => b.agentPay(agent, { amount: '1' })));
    expect(answers.every((res) => res.statusCode === 200)).toBe(true);
    const outs = answers.map((res) => res.json());
    expect(outs.filter((out) => out.applied)).toHaveLength(7);
    const proposals = outs.filter((out) => !out.applied);
    expect(proposals).toHaveLength(13);
    for (const out of proposals) expect(out.message).toContain('daily_usd');
    expect(await b.balance()).toBe('993.00000000');
  });

  it('starts a new day from nothing: yesterday’s spending no longer counts against daily_usd', async () => {
    const clock = new ManualClock(new Date('2026-05-01T23:00:00Z'));
    const timed = await createHarness({ clock, env: { RATE_LIMIT_PER_MINUTE: '100000' } });
    try {
      const b = await makeAgentBook(timed);
      const agent = await b.active({
        perms: ['payments'],
        fence: { per_request_usd: '50', daily_usd: '60' },
      });
      expect((await b.agentPay(agent, { amount: '50' })).json().applied).toBe(true);
      const over = (await b.agentPay(agent, { amount: '20' })).json();
      expect(over).toMatchObject({ applied: false });
      expect(over.message).toContain('daily_usd');
      const row = await timed.db
        .selectFrom('agents')
        .select(['spent_day', 'spent_usd'])
        .where('id', '=', agent.id)
        .executeTakeFirstOrThrow();
      expect(row).toEqual({
        spent_day: Math.floor(clock.now().getTime() / DAY_MS),
        spent_usd: '50.00000000',
      });
      clock.advance(2 * 60 * 60 * 1000);
      expect((await b.agentPay(agent, { amount: '20' })).json().applied).toBe(true);
      expect((await b.agentPay(agent, { amount: '45' })).json().applied).toBe(false);
    } finally {
      await timed.close();
    }
  });

  it('a restricted agent cannot use another account of its space', async () => {
    const b = await book();
    const other = await h.makeAccount(b.spaceId, { kind: 'cash', name: 'Till', currency: 'USD' });
    const agent = await b.active({ account_ids: [other.id] });
    const res = await b.agentPay(agent);
    expect(res.statusCode).toBe(422);
    expect(res.json().error).toBe('account_not_found');
  });
});

describe('agent payments are payments out', () => {
  it('meet the same approval rules and policy rules as a person', async () => {
    const b = await book();
    await b.post(b.owner, '/approval-rules', { min_amount: '20', currency: 'USD', required_approvals: 1 });
    await b.post(b.owner, '/policy-rules', { kind: 'blocked_destination', destination: 'Blocked Ltd' });
    const agent = await b.active({ fence: { allowed_merchants: ['Acme Supplies', 'Blocked Ltd'] } });
    const big = (await b.agentPay(agent, { amount: '25' })).json();
    expect(big).toMatchObject({
      applied: true,
      result: { status: 'awaiting_approval', required_approvals: 1 },
    });
    // The agent's issuer is the payment's maker; another administrator approves it.
    expect(big.result.maker_id).toBe(b.owner.id);
    const approved = await b.post(b.admin, `/payments/${big.result.id}/approve`);
    expect(approved.json().status).toBe('executed');
    const blocked = (await b.agentPay(agent, { payee: 'Blocked Ltd' })).json();
    expect(blocked.result).toMatchObject({ status: 'blocked', blocked_reason: 'policy_blocked_destination' });
  });

  it('refuses an unknown account, a foreign currency and a closed period, proposal or not', async () => {
    const b = await book();
    const agent = await b.issue();
    const other = await book();
    expect((await b.agentPay(agent, { account_id: other.bank.id })).json().error).toBe('account_not_found');
    expect((await b.agentPay(agent, { currency: 'EUR' })).json().error).toBe('currency_mismatch');
    expect(
      (
        await b.call(agent, 'POST', `/agent/spaces/${other.spaceId}/payments`, {
          account_id: other.bank.id,
          amount: '1',
          payee: 'Acme Supplies',
          occurred_on: '2026-05-01',
        })
      ).statusCode,
    ).toBe(404);
    for (const amount of ['0', '-1', '1e3', '1.123456789']) {
      const res = await b.agentPay(agent, { amount });
      expect(res.statusCode).toBe(422);
      expect(res.json().detail[0].loc).toEqual(['body', 'amount']);
    }
  });
});

describe('transactions and corrections', () => {
  it('books a row of origin manual with a category; a patch changes only category, note or payee', async () => {
    const b = await book();
    const software = (await b.post(b.owner, '/categories', { name: 'Software', kind: 'expense' })).json();
    const hosting = (await b.post(b.owner, '/categories', { name: 'Hosting', kind: 'expense' })).json();
    const sales = (await b.post(b.owner, '/categories', { name: 'Sales', kind: 'income' })).json();
    const again = await b.post(b.owner, '/categories', { name: 'Software', kind: 'expense' });
    expect(again.json().id).toBe(software.id);
    // A name that trims to nothing is refused by the schema (it once reached the table's CHECK: 500).
    for (const name of [' ', '\t \n']) {
      const blank = await b.post(b.owner, '/categories', { name, kind: 'expense' });
      expect(blank.statusCode).toBe(422);
      expect(JSON.stringify(blank.json())).toContain('name');
    }
    expect((await b.post(b.owner, '/categories', { name: ' Travel ', kind: 'expense' })).json().name).toBe(
      'Travel',
    );
    const agent = await b.active({ perms: ['transactions'] });
    const res = await b.agentTx(agent, { category_id: software.id, note: 'Editor licence' });
    expect(res.statusCode).toBe(200);
    const row = res.json().result;
    expect(row).toMatchObject({
      kind: 'expense',
      amount: '12.50000000',
      currency: 'USD',
      category_id: software.id,
      origin: 'manual',
      payee: 'Cloud host',
    });
    expect(await b.balance()).toBe('987.50000000');
    const entry = await h.db
      .selectFrom('ledger_entries')
      .selectAll()
      .where('id', '=', row.id)
      .executeTakeFirstOrThrow();
    expect(entry).toMatchObject({ origin: 'manual', kind: 'expense' });
    const outs = await b.events('money.out');
    expect(outs.map((event) => event.payload.transaction_id)).toContain(row.id);
    const wrongKind = await b.agentTx(agent, { category_id: sales.id });
    expect(wrongKind.json()).toMatchObject({ error: 'invalid_request', details: { field: 'category_id' } });
    const patch = (body: Record<string, unknown>) =>
      b.call(agent, 'PATCH', `/agent/spaces/${b.spaceId}/transactions/${row.id}`, body);
    const patched = (await patch({ category_id: hosting.id, payee: 'Cloud host Ltd', amount: '1' })).json();
    expect(patched.result).toMatchObject({
      category_id: hosting.id,
      payee: 'Cloud host Ltd',
      note: 'Editor licence',
    });
    expect(await b.balance()).toBe('987.50000000');
    expect((await patch({ clear_category: true })).json().result.category_id).toBeNull();
    expect((await patch({ category_id: sales.id })).json().error).toBe('invalid_request');
    const unknown = await b.call(agent, 'PATCH', `/agent/spaces/${b.spaceId}/transactions/${b.bank.id}`, {});
    expect(unknown.statusCode).toBe(404);
    expect((await b.agentTx(agent, { kind: 'transfer' })).json()).toMatchObject({
      details: { field: 'kind' },
    });
    expect(
      (await b.agentTx(agent, { kind: 'income', category_id: sales.id, amount: '3' })).json().applied,
    ).toBe(true);
    expect(await b.balance()).toBe('990.50000000');
  });
});

describe('chain payments', () => {
  it('are prepared for a person to sign: a chain payment out waiting in executing', async () => {
    const b = await book();
    const wallet = await h.makeAccount(b.spaceId, {
      kind: 'crypto',
      name: 'Wallet',
      currency: 'USDC',
      network: 'local',
      address: `0x${'1'.repeat(40)}`,
      opening_balance: '100',
    });
    const agent = await b.active({ perms: ['chain_payments'], fence: { allowed_merchants: ['Vendor'] } });
    const body = {
      account_id: wallet.id,
      amount: '2',
      chain: 'local',
      destination: `0x${'2'.repeat(40)}`,
      currency: 'USDC',
      occurred_on: '2026-05-03',
      payee: 'Vendor',
    };
    const res = await b.call(agent, 'POST', `/agent/spaces/${b.spaceId}/chain-payments`, body);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      applied: true,
      result: { rail: 'chain', status: 'executing', amount: '2.00000000' },
    });
    const wrong = await b.call(agent, 'POST', `/agent/spaces/${b.spaceId}/chain-payments`, {
      ...body,
      chain: 'base',
    });
    expect(wrong.json()).toMatchObject({ error: 'invalid_request', details: { field: 'chain' } });
  });
});

describe('proposals', () => {
  it('approving applies with the person as actor and the agent named; rejecting records a reason', async () => {
    const b = await book();
    const agent = await b.issue();
    const first = (await b.agentPay(agent, { amount: '30' })).json();
    const second = (await b.agentPay(agent, { amount: '40' })).json();
    const list = (await b.get(b.viewer, '/proposals')).json().items;
    expect(list.map((p: { id: string }) => p.id).sort()).toEqual(
      [first.proposal_id, second.proposal_id].sort(),
    );
    expect(list[0]).toMatchObject({
      agent_id: agent.id,
      agent_name: 'Bookkeeper bot',
      kind: 'payment',
      status: 'pending',
    });
    expect((await b.post(b.member, `/proposals/${first.proposal_id}/approve`)).statusCode).toBe(403);
    const approved = await b.post(b.admin, `/proposals/${first.proposal_id}/approve`);
    expect(approved.statusCode).toBe(200);
    expect(approved.json()).toMatchObject({ status: 'approved', decided_by: b.admin.id, agent_id: agent.id });
    expect(approved.json().result).toMatchObject({
      status: 'executed',
      maker_id: b.admin.id,
      amount: '30.00000000',
    });
    expect(await b.balance()).toBe('970.00000000');
    const again = await b.post(b.owner, `/proposals/${first.proposal_id}/approve`);
    expect(again.json()).toMatchObject({ error: 'proposal_state', details: { status: 'approved' } });
    expect((await b.post(b.owner, `/proposals/${second.proposal_id}/reject`, {})).statusCode).toBe(422);
    const rejected = await b.post(b.owner, `/proposals/${second.proposal_id}/reject`, {
      reason: 'Not this month',
    });
    expect(rejected.json()).toMatchObject({
      status: 'rejected',
      reject_reason: 'Not this month',
      decided_by: b.owner.id,
    });
    expect(await b.balance()).toBe('970.00000000');
    const other = await book();
    expect(
      (await other.post(b.owner, `/proposals/${second.proposal_id}/reject`, { reason: 'x' })).statusCode,
    ).toBe(404);
  });

  it('two people approving at once apply the proposal once', async () => {
    const b = await book();
    const agent = await b.issue();
    const proposal = (await b.agentPay(agent, { amount: '5' })).json();
    const answers = await Promise.all([
      b.post(b.owner, `/proposals/${proposal.proposal_id}/approve`),
      b.post(b.admin, `/proposals/${proposal.proposal_id}/approve`),
    ]);
    expect(answers.map((res) => res.statusCode).sort()).toEqual([200, 422]);
    expect(await b.balance()).toBe('995.00000000');
  });

  it('a grant change is always a proposal, and approving it widens the fence', async () => {
    const b = await book();
    const agent = await b.active();
    const res = await b.call(agent, 'POST', '/agent/grant-changes', {
      allowed_merchants: ['Acme Supplies', 'Paper Co'],
      daily_amount_cap_usd: '250',
      reason: 'Stationery',
    });
    expect(res.json()).toMatchObject({ applied: false });
    expect((await b.call(agent, 'POST', '/agent/grant-changes', { reason: 'nothing' })).statusCode).toBe(422);
    expect((await b.agentPay(agent, { payee: 'Paper Co' })).json().applied).toBe(false);
    await b.post(b.owner, `/proposals/${res.json().proposal_id}/approve`);
    expect((await b.agentPay(agent, { payee: 'Paper Co' })).json().applied).toBe(true);
    const me = (await b.call(agent, 'GET', '/agent/me')).json();
    expect(me.fence).toMatchObject({
      daily_usd: '250.00000000',
      allowed_merchants: ['Acme Supplies', 'Paper Co'],
    });
  });
});

describe('a frozen agent', () => {
  it('is answered 403 agent_frozen on every write, and writes nothing', async () => {
    const b = await book();
    const agent = await b.active({ perms: ['payments', 'transactions', 'chain_payments'] });
    const row = (await b.agentTx(agent)).json().result;
    await b.setStatus(agent, 'frozen');
    const writes = [
      b.agentPay(agent),
      b.agentTx(agent),
      b.call(agent, 'PATCH', `/agent/spaces/${b.spaceId}/transactions/${row.id}`, { note: 'x' }),
      b.call(agent, 'POST', `/agent/spaces/${b.spaceId}/chain-payments`, {
        account_id: b.bank.id,
        amount: '1',
        chain: 'local',
        destination: `0x${'2'.repeat(40)}`,
        currency: 'USD',
        occurred_on: '2026-05-03',
        payee: 'Acme Supplies',
      }),
      b.call(agent, 'POST', '/agent/grant-changes', { daily_amount_cap_usd: '1000' }),
    ];
    for (const res of await Promise.all(writes)) {
      expect(res.statusCode).toBe(403);
      expect(res.json().error).toBe('agent_frozen');
    }
    const count = await h.db
      .selectFrom('agent_writes')
      .select('id')
      .where('agent_id', '=', agent.id)
      .execute();
    expect(count).toHaveLength(1);
    expect((await b.call(agent, 'GET', '/agent/me')).json().status).toBe('frozen');
  });
});

describe('lapsing', () => {
  it('a proposal nobody decided within seven days lapses', async () => {
    const clock = new ManualClock(new Date());
    const timed = await createHarness({ clock, env: { RATE_LIMIT_PER_MINUTE: '100000' } });
    try {
      const b = await makeAgentBook(timed);
      const agent = await b.issue();
      const proposal = (await b.agentPay(agent)).json();
      const { lapseProposals } = await import('../src/features/agents/index.ts');
      clock.advance(7 * DAY_MS - 60_000);
      await lapseProposals({ db: timed.db, clock });
      expect((await b.get(b.owner, '/proposals')).json().items).toHaveLength(1);
      clock.advance(120_000);
      expect(await lapseProposals({ db: timed.db, clock })).toBeGreaterThanOrEqual(1);
      expect((await b.get(b.owner, '/proposals')).json().items).toHaveLength(0);
      const lapsed = (await b.get(b.owner, '/proposals?status=lapsed')).json().items;
      expect(lapsed).toEqual([
        expect.objectContaining({ id: proposal.proposal_id, status: 'lapsed', decided_by: null }),
      ]);
      expect((await b.post(b.owner, `/proposals/${proposal.proposal_id}/approve`)).json().error).toBe(
        'proposal_state',
      );
    } finally {
      await timed.close();
    }
  });
});

describe('the Agents screen on the server', () => {
  it('sends a visitor without a session to log in, and answers another book 404', async () => {
    const b = await book();
    const anonymous = await h.inject({ method: 'GET', url: `/app/books/${b.spaceId}/agents` });
    expect(anonymous.statusCode).toBe(303);
    expect(anonymous.headers.location).toMatch(/^\/app\/login/);
    const other = await book();
    const res = await h.inject({
      method: 'GET',
      url: `/app/books/${other.spaceId}/agents`,
      headers: { cookie: `tb_session=${b.owner.token}` },
    });
    expect(res.statusCode).toBe(404);
  });

  it('refuses a viewer’s write even when posted by hand', async () => {
    const b = await book();
    const agent = await b.issue();
    const res = await h.inject({
      method: 'POST',
      url: `/app/books/${b.spaceId}/agents/${agent.id}/status`,
      headers: {
        cookie: `tb_session=${b.viewer.token}`,
        'content-type': 'application/x-www-form-urlencoded',
        'x-csrf-token': b.viewer.csrf,
      },
      payload: 'status=active',
    });
    expect(res.statusCode).toBe(403);
    const list = (await b.get(b.owner, '/agents')).json().items;
    expect(list[0].status).toBe('observing');
  });
});

describe('card intents', () => {
  it('are recorded, listed, matched to a later expense row within the ceiling, and notify over it', async () => {
    const b = await book();
    const agent = await b.active({
      perms: ['cards', 'transactions'],
      fence: { allowed_merchants: ['Cloud host', 'Acme Supplies'] },
    });
    const open = (body: Record<string, unknown>) => b.call(agent, 'POST', '/agent/card-intents', body);
    const first = await open({ merchant: 'Cloud host', purpose: 'Servers for May', ceiling_usd: '20.00' });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ applied: true, result: { status: 'open' } });
    const intentId = first.json().result.intent_id;
    const second = (await open({ merchant: 'Cloud host', purpose: 'Backups', ceiling_usd: 5 })).json();
    const outside = (await open({ merchant: 'Casino', purpose: 'x', ceiling_usd: '1' })).json();
    expect(outside).toMatchObject({ applied: false });
    expect(outside.message).toContain('allowed_merchants');
    for (const ceiling_usd of ['1.234', 0, 100001, '-1']) {
      expect((await open({ merchant: 'Cloud host', purpose: 'x', ceiling_usd })).statusCode).toBe(422);
    }
    // A merchant stored trimmed must keep two characters (the table's CHECK); less is a 422, not a 500.
    for (const merchant of ['  ', ' a ', 'b\t']) {
      expect((await open({ merchant, purpose: 'x', ceiling_usd: '1' })).statusCode).toBe(422);
    }
    // The first open intent of the merchant takes the first row, within its ceiling.
    const row = (await b.agentTx(agent, { payee: 'cloud HOST', amount: '12.5' })).json().result;
    // The second row goes to the next open intent and is over its ceiling of 5.
    const over = (await b.agentTx(agent, { payee: 'Cloud host', amount: '9' })).json().result;
    const intents = (await b.get(b.viewer, '/card-intents')).json().items;
    const byId = Object.fromEntries(intents.map((intent: { id: string }) => [intent.id, intent]));
    expect(byId[intentId]).toMatchObject({
      status: 'matched',
      ceiling_usd: '20.00000000',
      matched_entry_ids: [row.id],
    });
    expect(byId[second.result.intent_id]).toMatchObject({ status: 'matched', matched_entry_ids: [over.id] });
    const notices = await h.db
      .selectFrom('notifications')
      .select(['kind', 'subject_id', 'user_id'])
      .where('space_id', '=', b.spaceId)
      .where('kind', '=', 'card_intent_over_ceiling')
      .execute();
    expect(notices).toEqual([{ kind: 'card_intent_over_ceiling', subject_id: over.id, user_id: b.owner.id }]);
    const noPerm = await b.active({ perms: ['transactions'] });
    expect(
      (
        await b.call(noPerm, 'POST', '/agent/card-intents', {
          merchant: 'Cloud host',
          purpose: 'x',
          ceiling_usd: 1,
        })
      ).json().error,
    ).toBe('missing_perm');
  });
});
