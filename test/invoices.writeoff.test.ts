import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkLedger } from '../src/features/ledger/index.ts';
import { createHarness, type Harness } from './harness.ts';

// Writing off what is open on an invoice, from the owner's app.

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

describe('POST /app/api/spaces/{id}/invoices/{invoice_id}/write-off', () => {
  it('closes a partly paid invoice with a write_off payment, books nothing, and fires invoice.paid once', async () => {
    const { key, owner, spaceId } = await h.world({ scopes: ['invoices'] });
    const account = await h.makeAccount(spaceId);
    const invoice = (
      await h.inject({
        method: 'POST',
        url: '/integration/invoices',
        key: key.key,
        payload: {
          account_id: account.id,
          client_name: 'Acme',
          due_on: '2027-01-31',
          line_items: [{ description: 'Work', unit_price: '100' }],
        },
      })
    ).json();
    await h.inject({
      method: 'POST',
      url: `/integration/invoices/${invoice.id}/send`,
      key: key.key,
      payload: { via: 'none' },
    });
    await h.inject({
      method: 'POST',
      url: `/integration/invoices/${invoice.id}/payments`,
      key: key.key,
      payload: { amount: '30' },
    });
    const url = `/app/api/spaces/${spaceId}/invoices/${invoice.id}/write-off`;
    const viewer = await h.signup('Viewer');
    await h.addMember(owner, spaceId, viewer, 'viewer');
    expect((await h.inject({ method: 'POST', url, session: viewer.token, payload: {} })).statusCode).toBe(
      403,
    );
    const res = await h.inject({
      method: 'POST',
      url,
      session: owner.token,
      payload: { reason: 'Client went bust' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ status: 'paid', paid_amount: '100.00000000' });
    expect(res.json().payments.at(-1)).toMatchObject({
      via: 'write_off',
      amount: '70.00000000',
      note: 'Client went bust',
      entry_id: null,
    });
    const events = await h.db
      .selectFrom('outbox_events')
      .select(['channel', 'payload'])
      .where('space_id', '=', spaceId)
      .where('event', '=', 'invoice.paid')
      .execute();
    expect(events).toHaveLength(2);
    const again = await h.inject({ method: 'POST', url, session: owner.token, payload: {} });
    expect(again.statusCode).toBe(422);
    expect(again.json()).toMatchObject({ error: 'invoice_state' });
    const ledger = await checkLedger(h.db, spaceId);
    expect(ledger.sound).toBe(true);
  });
});
