import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type User } from './harness.ts';
import { makeBook } from './payouts-setup.ts';

// Home, the book's root: money in, balances, open requests, overdue invoices, payments out
// waiting for the viewer's approval, agent proposals, failing subscriptions and a lagging chain
// watch, each linked to its screen; and the first-steps checklist that ticks itself.

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

const cookie = (token: string) => ({ cookie: `tb_session=${token}` });

async function home(user: User, spaceId: string) {
  const res = await h.inject({ method: 'GET', url: `/app/books/${spaceId}`, headers: cookie(user.token) });
  expect(res.statusCode, res.body).toBe(200);
  return res.body.replace(/\s+/g, ' ');
}

/** The text of one Home section (from its heading to the next section). */
function section(body: string, id: string): string {
  const start = body.indexOf(`aria-labelledby="${id}"`);
  expect(start, `no section ${id}`).toBeGreaterThan(-1);
  const end = body.indexOf('</section>', start);
  return body
    .slice(start, end)
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ');
}

describe('Home', () => {
  it('is where /app, the switcher and a new book land', async () => {
    const owner = await h.signup('Owner');
    const created = await h.inject({
      method: 'POST',
      url: '/app/books',
      headers: { ...cookie(owner.token), 'content-type': 'application/x-www-form-urlencoded' },
      payload: `_csrf=${owner.csrf}&name=Lemonade&base_currency=USD&plan=free`,
    });
    expect(created.statusCode, created.body).toBe(303);
    const bookUrl = created.headers.location as string;
    expect(bookUrl).toMatch(/^\/app\/books\/[0-9a-f-]{36}$/);
    const spaceId = bookUrl.split('/').at(-1) as string;
    const root = await h.inject({ method: 'GET', url: '/app', headers: cookie(owner.token) });
    expect(root.headers.location).toBe(bookUrl);
    const switched = await h.inject({
      method: 'GET',
      url: `/app/switch?book=${spaceId}`,
      headers: cookie(owner.token),
    });
    expect(switched.headers.location).toBe(bookUrl);
    const body = await home(owner, spaceId);
    expect(body).toContain('<h1>Lemonade</h1>');
    expect(body).toMatch(/<a href="\/app\/books\/[^"]+" aria-current="page">Home<\/a>/);
    expect(section(body, 'money-in')).toContain('Nothing received in the last 30 days');
  });

  it('shows money in per window and currency, balances, open requests and overdue invoices, with their totals', async () => {
    const world = await h.world();
    const bank = await h.makeAccount(world.spaceId, {
      name: 'Operating',
      currency: 'USD',
      opening_balance: '10',
    });
    const mint = async (amount: string) => {
      const res = await h.inject({
        method: 'POST',
        url: '/integration/payment-requests',
        key: world.key.key,
        payload: { account_id: bank.id, amount, memo: 'Lemons' },
      });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().token as string;
    };
    const paid = await mint('12.5');
    await mint('3');
    await mint('4.25');
    const marked = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${world.spaceId}/payment-requests/${paid}/mark-paid`,
      session: world.owner.token,
      payload: { amount: '12.5', reference: 'bank ref' },
    });
    expect(marked.statusCode, marked.body).toBe(200);
    const invoice = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${world.spaceId}/invoices`,
      session: world.owner.token,
      payload: {
        account_id: bank.id,
        client_name: 'Late Ltd',
        issued_on: '2020-01-01',
        due_on: '2020-01-31',
        line_items: [{ description: 'Design', unit_price: '100', quantity: '2' }],
      },
    });
    expect(invoice.statusCode, invoice.body).toBe(201);
    const sent = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${world.spaceId}/invoices/${invoice.json().id}/send`,
      session: world.owner.token,
      payload: { via: 'none' },
    });
    expect(sent.statusCode, sent.body).toBe(200);

    const body = await home(world.owner, world.spaceId);
    const moneyIn = section(body, 'money-in');
    expect(moneyIn).toContain('Today 12.50 USD');
    expect(moneyIn).toContain('Last 7 days 12.50 USD');
    expect(moneyIn).toContain('Last 30 days 12.50 USD');
    // The chart is drawn on the server, one bar a day, and read out as a table.
    expect(body).toMatch(/<svg class="chart wide"[^>]*aria-hidden="true"/);
    expect(body.match(/<rect /g)?.length).toBe(30);
    expect(body).toContain('<caption>Money in per day in USD</caption>');
    expect(section(body, 'balances')).toContain('Operating 22.50 USD');
    expect(section(body, 'open-requests')).toContain('2 requests 7.25 USD');
    expect(body).toContain(`href="/app/books/${world.spaceId}/payment-requests?status=active"`);
    expect(section(body, 'overdue')).toContain('1 invoice 200.00 USD');
  });

  it('lists payments out waiting for this person’s approval, by the payouts rule', async () => {
    const b = await makeBook(h);
    const rule = await b.post(b.owner, '/approval-rules', {
      min_amount: '100',
      currency: 'USD',
      required_approvals: 2,
    });
    expect(rule.statusCode, rule.body).toBe(201);
    const payment = await b.pay(b.member, { amount: '150', payee: 'Lemon Farm' });
    expect(payment.json().status).toBe('awaiting_approval');
    const link = `/app/books/${b.spaceId}/payments-out/${payment.json().id}`;
    // An owner may approve; the member who made it may not; an admin who approved already may not.
    expect(section(await home(b.owner, b.spaceId), 'approvals')).toContain('Lemon Farm 150.00 USD');
    expect(await home(b.owner, b.spaceId)).toContain(`href="${link}"`);
    expect(section(await home(b.member, b.spaceId), 'approvals')).toContain('No payment out waits for you.');
    const approved = await b.post(b.admin, `/payments/${payment.json().id}/approve`);
    expect(approved.statusCode, approved.body).toBe(200);
    expect(section(await home(b.admin, b.spaceId), 'approvals')).toContain('No payment out waits for you.');
    expect(section(await home(b.admin2, b.spaceId), 'approvals')).toContain('Lemon Farm');
  });

  it('warns of a failing subscription (to admins) and a chain watch that stopped', async () => {
    const world = await h.world();
    const viewer = await h.signup('Viewer');
    await h.addMember(world.owner, world.spaceId, viewer, 'viewer');
    const created = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${world.spaceId}/subscriptions`,
      session: world.owner.token,
      payload: { url: 'https://hooks.example.com/tollbook', events: [] },
    });
    expect(created.statusCode, created.body).toBe(201);
    const failingSince = new Date(h.clock.now().getTime() - 3_600_000);
    await h.db
      .updateTable('webhook_subscriptions')
      .set({ failing_since: failingSince, last_failure_at: failingSince })
      .where('id', '=', created.json().id)
      .execute();
    const network = `home-test-${world.spaceId.slice(0, 8)}`;
    await h.db
      .insertInto('chain_cursors')
      .values({ network, next_block: 1, updated_at: new Date(h.clock.now().getTime() - 3_600_000) })
      .execute();
    try {
      const body = await home(world.owner, world.spaceId);
      expect(body).toContain(
        `Failing: <a href="/app/books/${world.spaceId}/subscriptions/${created.json().id}">https://hooks.example.com/tollbook</a>`,
      );
      expect(body).toContain(`The chain watch for ${network} has not moved since`);
      const seen = await home(viewer, world.spaceId);
      expect(seen).not.toContain('hooks.example.com');
      expect(seen).not.toContain('First steps');
    } finally {
      await h.db.deleteFrom('chain_cursors').where('network', '=', network).execute();
    }
  });
});

describe('the first-steps checklist', () => {
  it('ticks each step from the book’s data and hides for good when dismissed', async () => {
    const owner = await h.signup('Owner');
    const spaceId = await h.createSpace(owner);
    const steps = async () => {
      const body = await home(owner, spaceId);
      if (!body.includes('First steps')) return null;
      return Object.fromEntries(
        [...body.matchAll(/<li (?:class="done" )?data-step="(\w+)"/g)].map((match) => [
          match[1],
          match[0].includes('class="done"'),
        ]),
      );
    };
    expect(await steps()).toEqual({
      profile: false,
      account: false,
      key: false,
      request: false,
      member: false,
    });
    const account = await h.makeAccount(spaceId, { name: 'Operating', currency: 'USD' });
    const key = await h.issueKey(owner, spaceId);
    const profile = await h.inject({
      method: 'PATCH',
      url: `/app/api/spaces/${spaceId}/profile`,
      session: owner.token,
      payload: { legal_name: 'Lemonade Stand LLC' },
    });
    expect(profile.statusCode, profile.body).toBe(200);
    expect(await steps()).toEqual({ profile: true, account: true, key: true, request: false, member: false });
    const minted = await h.inject({
      method: 'POST',
      url: '/integration/payment-requests',
      key: key.key,
      payload: { account_id: account.id, amount: '1' },
    });
    expect(minted.statusCode, minted.body).toBe(201);
    const admin = await h.signup('Admin');
    await h.addMember(owner, spaceId, admin, 'admin');
    // Every step done: the list has nothing left to say.
    expect(await steps()).toBeNull();

    const other = await h.signup('Another owner');
    const otherBook = await h.createSpace(other);
    expect(await home(other, otherBook)).toContain('First steps');
    const dismissed = await h.inject({
      method: 'POST',
      url: `/app/books/${otherBook}/home/checklist/dismiss`,
      headers: { ...cookie(other.token), 'content-type': 'application/x-www-form-urlencoded' },
      payload: `_csrf=${other.csrf}`,
    });
    expect(dismissed.statusCode, dismissed.body).toBe(303);
    expect(dismissed.headers.location).toBe(`/app/books/${otherBook}`);
    expect(await home(other, otherBook)).not.toContain('First steps');
    // Hidden for that person on that book only.
    const colleague = await h.signup('Colleague');
    await h.addMember(other, otherBook, colleague, 'member');
    expect(await home(colleague, otherBook)).toContain('First steps');
  });
});
