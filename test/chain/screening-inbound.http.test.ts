import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type WatchDeps, watchOnce } from '../../src/features/chain-watch/index.ts';
import { loadScreeningList } from '../../src/features/screening/index.ts';
import { holdScreeningList } from '../support/turns.ts';
import { fundedPayer, sendTokenTransfer, startWatchedWorld, type X402World } from './x402-setup.ts';

// Money in from a listed sender, on anvil: a direct transfer to a watched account is booked (the
// money is there) and flagged: on the Screening page with the entry it matched and the transfer,
// in the owners' notifications, on its Income row; no new event, and no address in any event.

// This file loads its own sanctions list (the database's current one).
holdScreeningList();

let w: X402World;
let deps: WatchDeps;
let close: (() => Promise<void>) | undefined;
beforeAll(async () => {
  ({ w, deps, close } = await startWatchedWorld());
}, 600_000);
afterAll(() => close?.());

/** An SDN.XML listing `address` under a name, loaded as the current list. */
async function listSender(address: string, name: string) {
  const xml = `<?xml version="1.0"?><sdnList><publshInformation><Publish_Date>11/20/2026</Publish_Date>
  </publshInformation><sdnEntry><uid>91001</uid><lastName>${name}</lastName><sdnType>Entity</sdnType>
  <programList><program>CYBER2</program></programList><idList><id><uid>91002</uid>
  <idType>Digital Currency Address - USDC</idType><idNumber>${address}</idNumber></id></idList></sdnEntry></sdnList>`;
  const loaded = await loadScreeningList({ db: w.h.db, clock: w.h.clock }, xml, 'inbound-test.xml', {
    force: true,
  });
  expect(loaded.ok).toBe(true);
}

const page = (token: string, spaceId: string, path: string) =>
  w.h.inject({
    method: 'GET',
    url: `/app/books/${spaceId}/${path}`,
    headers: { cookie: `tb_session=${token}` },
  });

describe('a direct transfer from a listed sender', () => {
  it('is booked and flagged: Screening page, owners notified, Income row marked, no address in events', async () => {
    const s = await w.seller();
    // The watch follows an address with a request open; the transfer pays it and leaves income.
    const request = await w.mint(s.key.key, '1', { account_id: s.account.id });
    const payer = await fundedPayer(w, 10_000_000n);
    await listSender(payer.address, 'GARANTEX EUROPE OU');
    const txHash = await sendTokenTransfer(w, payer, s.address, 2_500_000n);
    await watchOnce(deps);

    // Booked: the account holds the money.
    const accounts = await w.api('GET', '/integration/accounts', s.key.key);
    const account = accounts.body.items.find((item: { id: string }) => item.id === s.account.id);
    expect(account.balance).toBe('2.50000000');
    const paid = await w.api('GET', `/integration/payment-requests/${request.token}`, s.key.key);
    expect(paid.body).toMatchObject({ status: 'paid' });

    // Flagged, with the entry it matched.
    const flag = await w.h.db
      .selectFrom('inbound_screening_flags')
      .selectAll()
      .where('space_id', '=', s.spaceId)
      .executeTakeFirstOrThrow();
    expect(flag).toMatchObject({
      sdn_uid: '91001',
      listed: 'GARANTEX EUROPE OU',
      programs: 'CYBER2',
      matched: payer.address.toLowerCase(),
      list_source: 'inbound-test.xml',
    });

    const screening = await page(s.owner.token, s.spaceId, 'payments-out/screening');
    expect(screening.statusCode).toBe(200);
    expect(screening.body).toContain('GARANTEX EUROPE OU');
    expect(screening.body).toContain(txHash);
    expect(screening.body).toContain('inbound-test.xml');

    const notes = await w.h.inject({
      method: 'GET',
      url: `/app/api/spaces/${s.spaceId}/notifications`,
      session: s.owner.token,
    });
    const note = notes.json().items.find((item: { kind: string }) => item.kind === 'listed_sender_transfer');
    expect(note?.payload).toMatchObject({
      listed: 'GARANTEX EUROPE OU',
      programs: 'CYBER2',
      amount: '2.50000000',
      transaction: txHash,
    });
    expect(JSON.stringify(note).toLowerCase()).not.toContain(payer.address.toLowerCase());

    // Both entries the transfer made (the request's settlement, the income left) are marked.
    const rows = await w.h.inject({
      method: 'GET',
      url: `/app/api/spaces/${s.spaceId}/income`,
      session: s.owner.token,
    });
    type Row = { ref: string; day: string; currency: string; listed_senders: number };
    const incomeRows: Row[] = rows.json().items;
    expect(incomeRows.reduce((sum, row) => sum + row.listed_senders, 0)).toBe(2);
    const row = incomeRows[0]!;
    const payments = await w.h.inject({
      method: 'GET',
      url: `/app/api/spaces/${s.spaceId}/income/payments?ref=${row.ref}&day=${row.day}&currency=${row.currency}`,
      session: s.owner.token,
    });
    expect(payments.json().items.length).toBeGreaterThan(0);
    for (const payment of payments.json().items) {
      expect(payment.listed_sender).toEqual({ listed: 'GARANTEX EUROPE OU', programs: 'CYBER2' });
    }
    const income = await page(s.owner.token, s.spaceId, 'income');
    expect(income.body).toContain('data-field="listed-senders"');
    const incomePayments = await page(
      s.owner.token,
      s.spaceId,
      `income/payments?ref=${row.ref}&day=${row.day}&currency=${row.currency}`,
    );
    expect(incomePayments.body).toContain('Listed sender');

    // The events are the ones any transfer makes, and none names the sender.
    const events = await w.h.db
      .selectFrom('outbox_events')
      .select(['event', 'payload'])
      .where('space_id', '=', s.spaceId)
      .execute();
    const names = new Set(events.map((event) => event.event));
    expect(
      [...names].every((name) => ['money.in', 'payment_request.paid'].includes(name)),
      [...names].join(),
    ).toBe(true);
    expect(JSON.stringify(events).toLowerCase()).not.toContain(payer.address.toLowerCase());
  });

  it('books a transfer from a sender not on the list without a flag', async () => {
    const s = await w.seller();
    await w.mint(s.key.key, '5', { account_id: s.account.id });
    const payer = await fundedPayer(w, 10_000_000n);
    await sendTokenTransfer(w, payer, s.address, 1_000_000n);
    await watchOnce(deps);
    const booked = await w.h.db
      .selectFrom('chain_transfers')
      .select('id')
      .where('space_id', '=', s.spaceId)
      .execute();
    expect(booked).toHaveLength(1);
    const flags = await w.h.db
      .selectFrom('inbound_screening_flags')
      .select('transfer_id')
      .where('space_id', '=', s.spaceId)
      .execute();
    expect(flags).toEqual([]);
  });
});
