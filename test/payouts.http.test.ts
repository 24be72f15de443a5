import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './harness.ts';
import { type Book, expectEventBody, makeBook } from './payouts-setup.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
});
afterAll(() => h.close());

const byEvent = (a: { event: string }, b: { event: string }) => a.event.localeCompare(b.event);

const books: Book[] = [];
async function book(opening?: string) {
  const made = await makeBook(h, opening);
  books.push(made);
  return made;
}
afterAll(async () => {
  for (const made of books) await made.ledgerSound();
});

describe('book payments without approval rules', () => {
  it('executes at once: one entry, money.out and payout.executed with exactly the spec fields', async () => {
    const b = await book();
    const res = await b.pay(b.member, { amount: '120.5', note: 'Rent for May', occurred_on: '2026-05-01' });
    expect(res.statusCode).toBe(201);
    const payment = res.json();
    expect(payment).toMatchObject({
      status: 'executed',
      amount: '120.50000000',
      currency: 'USD',
      rail: 'book',
      payee: 'Acme Supplies',
      approvals: 0,
      required_approvals: 0,
      blocked_reason: null,
    });
    expect(payment.transaction_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await b.balance()).toBe('879.50000000');
    // Events of one transaction share a moment; their ids do not order them, so sort by name.
    const events = (await b.events()).filter((e) => e.event !== 'money.in').sort(byEvent);
    expect(events.map((e) => e.event)).toEqual(['money.out', 'payout.executed']);
    expectEventBody(events[0]!.payload, {
      transaction_id: payment.transaction_id,
      account_id: b.bank.id,
      direction: 'out',
      amount: '120.50000000',
      currency: 'USD',
      kind: 'expense',
      origin: 'manual',
      occurred_on: '2026-05-01',
    });
    expectEventBody(events[1]!.payload, {
      payment_id: payment.id,
      amount: '120.50000000',
      currency: 'USD',
      rail: 'book',
      transaction_id: payment.transaction_id,
    });
    const text = JSON.stringify(events);
    expect(text).not.toContain('Acme');
    expect(text).not.toContain('Rent');
  });

  it('refuses a payment that would overdraw a bank account, and writes nothing', async () => {
    const b = await book('10');
    const res = await b.pay(b.owner, { amount: '10.00000001' });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ error: 'insufficient_balance', details: { balance: '10.00000000' } });
    expect(await b.balance()).toBe('10.00000000');
    expect((await b.get(b.owner, '/payments')).json().items).toEqual([]);
  });

  it('lets a card account go below zero', async () => {
    const b = await book();
    const card = await h.makeAccount(b.spaceId, { kind: 'card', name: 'Card', currency: 'USD' });
    const res = await b.pay(b.owner, { account_id: card.id, amount: '25' });
    expect(res.json()).toMatchObject({ status: 'executed' });
    expect(await b.balance(card.id)).toBe('-25.00000000');
  });

  it('refuses bad input with 422 and the spec bodies', async () => {
    const b = await book();
    for (const amount of ['1e3', '--1', '', '0', '-5', '1.123456789', true]) {
      const res = await b.pay(b.owner, { amount });
      expect(res.statusCode, String(amount)).toBe(422);
      expect(res.json().detail[0].loc).toEqual(['body', 'amount']);
    }
    expect((await b.pay(b.owner, { amount: '1', rail: 'pigeon' })).statusCode).toBe(422);
    expect((await b.pay(b.owner, { amount: '1', currency: 'EUR' })).json().error).toBe('currency_mismatch');
    const other = await book();
    expect((await b.pay(b.owner, { amount: '1', account_id: other.bank.id })).json().error).toBe(
      'account_not_found',
    );
    expect((await b.pay(b.owner, { amount: '1', rail: 'chain', destination: '0x12' })).json()).toMatchObject({
      error: 'invalid_request',
      details: { field: 'rail' },
    });
  });

  it('refuses viewers and strangers', async () => {
    const b = await book();
    expect((await b.pay(b.viewer, { amount: '1' })).statusCode).toBe(403);
    const stranger = await h.signup('Stranger');
    expect((await b.pay(stranger, { amount: '1' })).statusCode).toBe(404);
    expect((await b.get(stranger, '/payments')).statusCode).toBe(404);
  });
});

describe('approval rules', () => {
  async function ruled(required = 2) {
    const b = await book();
    const rule = await b.post(b.owner, '/approval-rules', {
      min_amount: '100',
      currency: 'USD',
      required_approvals: required,
    });
    expect(rule.statusCode).toBe(201);
    return b;
  }

  it('holds a payment that meets a rule, emits payment.awaiting_approval, executes at the last approval', async () => {
    const b = await ruled(2);
    const small = await b.pay(b.member, { amount: '99.99' });
    expect(small.json().status).toBe('executed');
    const res = await b.pay(b.member, { amount: '100' });
    const payment = res.json();
    expect(payment).toMatchObject({ status: 'awaiting_approval', required_approvals: 2, approvals: 0 });
    const waiting = await b.events('payment.awaiting_approval');
    expect(waiting).toHaveLength(1);
    expectEventBody(waiting[0]!.payload, {
      payment_id: payment.id,
      amount: '100.00000000',
      currency: 'USD',
      required_approvals: 2,
    });
    const first = await b.post(b.admin, `/payments/${payment.id}/approve`);
    expect(first.json()).toMatchObject({
      status: 'awaiting_approval',
      approvals: 1,
      approved_by: [b.admin.id],
    });
    const second = await b.post(b.owner, `/payments/${payment.id}/approve`);
    expect(second.json()).toMatchObject({ status: 'executed', approvals: 2 });
    expect((await b.events('payout.executed')).length).toBe(2);
  });

  it('applies the highest matching rule', async () => {
    const b = await ruled(1);
    await b.post(b.owner, '/approval-rules', { min_amount: '500', currency: 'USD', required_approvals: 3 });
    await b.post(b.owner, '/approval-rules', { min_amount: '500', currency: 'EUR', required_approvals: 5 });
    expect((await b.pay(b.member, { amount: '499' })).json().required_approvals).toBe(1);
    expect((await b.pay(b.member, { amount: '600' })).json().required_approvals).toBe(3);
  });

  it('refuses the maker, a member, a second approval by one person, and approving an executed payment', async () => {
    const b = await ruled(2);
    const payment = (await b.pay(b.admin, { amount: '150' })).json();
    const maker = await b.post(b.admin, `/payments/${payment.id}/approve`);
    expect(maker.statusCode).toBe(403);
    expect(maker.json().error).toBe('maker_cannot_approve');
    const member = await b.post(b.member, `/payments/${payment.id}/approve`);
    expect(member.statusCode).toBe(403);
    expect(member.json().error).toBe('forbidden');
    expect((await b.post(b.owner, `/payments/${payment.id}/approve`)).statusCode).toBe(200);
    const twice = await b.post(b.owner, `/payments/${payment.id}/approve`);
    expect(twice.statusCode).toBe(409);
    expect(twice.json().error).toBe('already_approved');
    expect((await b.post(b.admin2, `/payments/${payment.id}/approve`)).json().status).toBe('executed');
    const late = await b.post(b.member, `/payments/${payment.id}/approve`);
    expect(late.statusCode).toBe(403);
    const after = await h.signup('Late admin');
    await h.addMember(b.owner, b.spaceId, after, 'admin');
    const executed = await b.post(after, `/payments/${payment.id}/approve`);
    expect(executed.statusCode).toBe(422);
    expect(executed.json()).toMatchObject({ error: 'payment_state', details: { status: 'executed' } });
  });

  it('keeps the rule a payment met when rules change afterwards', async () => {
    const b = await ruled(2);
    const payment = (await b.pay(b.member, { amount: '200' })).json();
    const rules = (await b.get(b.owner, '/approval-rules')).json().items;
    expect(
      (
        await h.inject({
          method: 'DELETE',
          url: `/app/api/spaces/${b.spaceId}/approval-rules/${rules[0].id}`,
          session: b.owner.token,
        })
      ).statusCode,
    ).toBe(200);
    await b.post(b.owner, '/approval-rules', { min_amount: '1', currency: 'USD', required_approvals: 1 });
    expect((await b.post(b.owner, `/payments/${payment.id}/approve`)).json().status).toBe(
      'awaiting_approval',
    );
    expect((await b.post(b.admin, `/payments/${payment.id}/approve`)).json().status).toBe('executed');
  });

  it('rejects with a reason, and a rejected payment can be neither approved nor cancelled', async () => {
    const b = await ruled(1);
    const payment = (await b.pay(b.member, { amount: '300' })).json();
    expect((await b.post(b.member, `/payments/${payment.id}/reject`, { reason: 'no' })).statusCode).toBe(403);
    const rejected = await b.post(b.admin, `/payments/${payment.id}/reject`, { reason: 'Duplicate invoice' });
    expect(rejected.json()).toMatchObject({ status: 'rejected', reject_reason: 'Duplicate invoice' });
    expect((await b.post(b.owner, `/payments/${payment.id}/approve`)).json().error).toBe('payment_state');
    expect((await b.post(b.member, `/payments/${payment.id}/cancel`)).json().error).toBe('payment_state');
    expect(await b.balance()).toBe('1000.00000000');
  });

  it('lets the maker cancel before execution, and nobody cancel after', async () => {
    const b = await ruled(1);
    const payment = (await b.pay(b.member, { amount: '300' })).json();
    expect((await b.post(b.member, `/payments/${payment.id}/cancel`)).json().status).toBe('cancelled');
    const executed = (await b.pay(b.member, { amount: '3' })).json();
    expect((await b.post(b.owner, `/payments/${executed.id}/cancel`)).json().error).toBe('payment_state');
  });

  it('fails a payment the account can no longer carry when its last approval arrives', async () => {
    const b = await book();
    await b.post(b.owner, '/approval-rules', { min_amount: '500', currency: 'USD', required_approvals: 1 });
    const big = (await b.pay(b.member, { amount: '900' })).json();
    expect(big.status).toBe('awaiting_approval');
    expect((await b.pay(b.member, { amount: '150' })).json().status).toBe('executed');
    const approved = await b.post(b.owner, `/payments/${big.id}/approve`);
    expect(approved.json()).toMatchObject({
      status: 'failed',
      blocked_reason: 'insufficient_balance',
      transaction_id: null,
    });
    expect(await b.balance()).toBe('850.00000000');
    expect((await b.events('payout.executed')).filter((e) => e.payload.payment_id === big.id)).toEqual([]);
  });

  it('20 concurrent approvals of one payment: executed once, one payout.executed, one entry', async () => {
    const b = await ruled(3);
    const approvers = await Promise.all(Array.from({ length: 20 }, (_, i) => h.signup(`Approver ${i}`)));
    for (const approver of approvers) await h.addMember(b.owner, b.spaceId, approver, 'admin');
    const payment = (await b.pay(b.member, { amount: '400' })).json();
    const answers = await Promise.all(approvers.map((a) => b.post(a, `/payments/${payment.id}/approve`)));
    const ok = answers.filter((res) => res.statusCode === 200);
    expect(ok).toHaveLength(3);
    expect(
      answers.filter((res) => res.statusCode === 422).every((res) => res.json().error === 'payment_state'),
    ).toBe(true);
    expect(ok.filter((res) => res.json().status === 'executed')).toHaveLength(1);
    expect(
      (await b.events('payout.executed')).filter((e) => e.payload.payment_id === payment.id),
    ).toHaveLength(1);
    expect(await b.balance()).toBe('600.00000000');
  });

  it('one person approving 20 times at once counts once', async () => {
    const b = await ruled(2);
    const payment = (await b.pay(b.member, { amount: '100' })).json();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => b.post(b.admin, `/payments/${payment.id}/approve`)),
    );
    expect(answers.filter((res) => res.statusCode === 200)).toHaveLength(1);
    expect(answers.filter((res) => res.statusCode === 409)).toHaveLength(19);
    expect((await b.get(b.owner, `/payments/${payment.id}`)).json()).toMatchObject({
      approvals: 1,
      status: 'awaiting_approval',
    });
  });
});

describe('policy rules', () => {
  it('blocks with each stable reason code and emits payment.blocked', async () => {
    const b = await book();
    await b.post(b.owner, '/policy-rules', { kind: 'max_per_payment', amount: '500' });
    await b.post(b.owner, '/policy-rules', {
      kind: 'blocked_destination',
      destination: 'DE89 3704 0044 0532 0130 00',
    });
    await b.post(b.owner, '/policy-rules', { kind: 'allowed_currencies', currencies: ['usd', 'EUR'] });
    const over = (await b.pay(b.member, { amount: '500.01' })).json();
    expect(over).toMatchObject({ status: 'blocked', blocked_reason: 'policy_max_per_payment' });
    const dest = (await b.pay(b.member, { amount: '5', destination: 'de89370400440532013000' })).json();
    expect(dest).toMatchObject({ status: 'blocked', blocked_reason: 'policy_blocked_destination' });
    const gbp = await h.makeAccount(b.spaceId, {
      kind: 'bank',
      name: 'GBP',
      currency: 'GBP',
      opening_balance: '100',
    });
    const currency = (await b.pay(b.member, { amount: '5', account_id: gbp.id })).json();
    expect(currency).toMatchObject({ status: 'blocked', blocked_reason: 'policy_currency' });
    const blocked = await b.events('payment.blocked');
    expect(blocked.map((e) => e.payload.reason).sort()).toEqual([
      'policy_blocked_destination',
      'policy_currency',
      'policy_max_per_payment',
    ]);
    expectEventBody(blocked.find((e) => e.payload.payment_id === over.id)!.payload, {
      payment_id: over.id,
      amount: '500.01000000',
      currency: 'USD',
      reason: 'policy_max_per_payment',
    });
    const approve = await b.post(b.owner, `/payments/${over.id}/approve`);
    expect(approve.statusCode).toBe(422);
    expect(approve.json().error).toBe('payment_state');
    expect((await b.post(b.owner, `/payments/${over.id}/release`, { reason: 'ok' })).json().error).toBe(
      'payment_state',
    );
    expect(
      (await b.post(b.admin, `/payments/${over.id}/reject`, { reason: 'over limit' })).json().status,
    ).toBe('rejected');
    expect(await b.balance()).toBe('1000.00000000');
  });

  it('refuses rules from members and rules missing their fields', async () => {
    const b = await book();
    expect((await b.post(b.member, '/policy-rules', { kind: 'max_per_day', amount: '5' })).statusCode).toBe(
      403,
    );
    expect((await b.post(b.owner, '/policy-rules', { kind: 'max_per_day' })).json()).toMatchObject({
      error: 'invalid_request',
      details: { field: 'amount' },
    });
    expect((await b.post(b.owner, '/policy-rules', { kind: 'bogus' })).statusCode).toBe(422);
    expect(
      (await b.post(b.owner, '/approval-rules', { min_amount: '5', currency: 'USD', required_approvals: 6 }))
        .statusCode,
    ).toBe(422);
    const listed = (await b.get(b.member, '/policy-rules')).json();
    expect(listed.items).toEqual([]);
  });

  it('max_per_day under 20 concurrent payments is never exceeded', async () => {
    const b = await book();
    await b.post(b.owner, '/policy-rules', { kind: 'max_per_day', amount: '100', currency: 'USD' });
    const answers = await Promise.all(Array.from({ length: 20 }, () => b.pay(b.member, { amount: '15' })));
    const statuses = answers.map((res) => res.json().status);
    expect(statuses.filter((s) => s === 'executed')).toHaveLength(6);
    expect(statuses.filter((s) => s === 'blocked')).toHaveLength(14);
    expect(
      answers
        .filter((res) => res.json().status === 'blocked')
        .every((res) => res.json().blocked_reason === 'policy_max_per_day'),
    ).toBe(true);
    expect(await b.balance()).toBe('910.00000000');
  });

  it('checks max_per_day again at the last approval', async () => {
    const b = await book();
    await b.post(b.owner, '/policy-rules', { kind: 'max_per_day', amount: '100' });
    await b.post(b.owner, '/approval-rules', { min_amount: '50', currency: 'USD', required_approvals: 1 });
    const waiting = (await b.pay(b.member, { amount: '60' })).json();
    expect(waiting.status).toBe('awaiting_approval');
    expect((await b.pay(b.member, { amount: '45' })).json().status).toBe('executed');
    const approved = (await b.post(b.owner, `/payments/${waiting.id}/approve`)).json();
    expect(approved).toMatchObject({ status: 'blocked', blocked_reason: 'policy_max_per_day' });
  });
});

describe('listing', () => {
  it('pages newest first by cursor and filters by status', async () => {
    const b = await book();
    await b.post(b.owner, '/approval-rules', { min_amount: '10', currency: 'USD', required_approvals: 1 });
    const made = [];
    for (let i = 0; i < 5; i++)
      made.push((await b.pay(b.member, { amount: i % 2 === 0 ? '1' : '20' })).json());
    const first = (await b.get(b.owner, '/payments?limit=2')).json();
    expect(first.items.map((p: { id: string }) => p.id)).toEqual([made[4].id, made[3].id]);
    expect(first.has_more).toBe(true);
    const rest = (await b.get(b.owner, `/payments?limit=10&starting_after=${made[3].id}`)).json();
    expect(rest.items.map((p: { id: string }) => p.id)).toEqual([made[2].id, made[1].id, made[0].id]);
    expect(rest.has_more).toBe(false);
    const waiting = (await b.get(b.owner, '/payments?status=awaiting_approval')).json();
    expect(waiting.items.map((p: { id: string }) => p.id)).toEqual([made[3].id, made[1].id]);
    expect((await b.get(b.owner, '/payments?status=nope')).statusCode).toBe(422);
    expect((await b.get(b.owner, '/payments?limit=0')).statusCode).toBe(422);
    expect((await b.get(b.viewer, `/payments/${made[0].id}`)).json().id).toBe(made[0].id);
  });
});

describe('transfers between the book’s own accounts', () => {
  it('writes one entry with money.out and money.in, origin internal, kind transfer', async () => {
    const b = await book();
    const savings = await h.makeAccount(b.spaceId, { kind: 'bank', name: 'Savings', currency: 'USD' });
    const res = await b.post(b.admin, '/transfers', {
      from_account_id: b.bank.id,
      to_account_id: savings.id,
      amount: '250.25',
      occurred_on: '2026-06-01',
      note: 'Move to savings',
    });
    expect(res.statusCode).toBe(201);
    const moved = res.json();
    expect(await b.balance()).toBe('749.75000000');
    expect(await b.balance(savings.id)).toBe('250.25000000');
    const events = (await b.events())
      .filter((e) => e.payload.transaction_id === moved.transaction_id)
      .sort(byEvent);
    expect(events.map((e) => e.event)).toEqual(['money.in', 'money.out']);
    const common = {
      transaction_id: moved.transaction_id,
      amount: '250.25000000',
      currency: 'USD',
      kind: 'transfer',
      origin: 'internal',
      occurred_on: '2026-06-01',
    };
    expectEventBody(events[1]!.payload, { ...common, account_id: b.bank.id, direction: 'out' });
    expectEventBody(events[0]!.payload, { ...common, account_id: savings.id, direction: 'in' });
    const entries = await h.db
      .selectFrom('ledger_entries')
      .select(['id', 'origin', 'kind'])
      .where('space_id', '=', b.spaceId)
      .where('cause_type', '=', 'transfer')
      .execute();
    expect(entries).toEqual([{ id: moved.transaction_id, origin: 'internal', kind: 'transfer' }]);
  });

  it('needs both amounts across currencies, and balances each currency', async () => {
    const b = await book();
    const eur = await h.makeAccount(b.spaceId, { kind: 'bank', name: 'EUR', currency: 'EUR' });
    const missing = await b.post(b.owner, '/transfers', {
      from_account_id: b.bank.id,
      to_account_id: eur.id,
      amount: '100',
    });
    expect(missing.json()).toMatchObject({ error: 'currency_mismatch', details: { field: 'to_amount' } });
    const res = await b.post(b.owner, '/transfers', {
      from_account_id: b.bank.id,
      to_account_id: eur.id,
      amount: '100',
      to_amount: '92.5',
    });
    expect(res.json()).toMatchObject({
      amount: '100.00000000',
      currency: 'USD',
      to_amount: '92.50000000',
      to_currency: 'EUR',
    });
    expect(await b.balance(eur.id)).toBe('92.50000000');
  });

  it('refuses an overdraft, the same account, and members', async () => {
    const b = await book('10');
    const other = await h.makeAccount(b.spaceId, { kind: 'bank', name: 'Other', currency: 'USD' });
    const over = await b.post(b.owner, '/transfers', {
      from_account_id: b.bank.id,
      to_account_id: other.id,
      amount: '10.01',
    });
    expect(over.json().error).toBe('insufficient_balance');
    const same = await b.post(b.owner, '/transfers', {
      from_account_id: b.bank.id,
      to_account_id: b.bank.id,
      amount: '1',
    });
    expect(same.json()).toMatchObject({ error: 'invalid_request', details: { field: 'to_account_id' } });
    expect(
      (
        await b.post(b.member, '/transfers', {
          from_account_id: b.bank.id,
          to_account_id: other.id,
          amount: '1',
        })
      ).statusCode,
    ).toBe(403);
    const concurrent = await Promise.all(
      Array.from({ length: 20 }, () =>
        b.post(b.owner, '/transfers', { from_account_id: b.bank.id, to_account_id: other.id, amount: '1' }),
      ),
    );
    expect(concurrent.filter((res) => res.statusCode === 201)).toHaveLength(10);
    expect(await b.balance()).toBe('0.00000000');
  });
});
