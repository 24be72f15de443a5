import { once } from 'node:events';
import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Body, startX402World, type X402World } from './x402-setup.ts';

// An agent pays x402 URLs from its hot wallet with the official x402 client, on anvil: a pay
// URL of another book on the same server, end to end; a host outside the fence is a proposal
// and nothing is paid; 20 concurrent fetches against a day that fits 7 pay exactly 7.

let w: X402World;
beforeAll(async () => {
  w = await startX402World();
}, 120_000);
afterAll(() => w?.close());

type AgentWorld = {
  spaceId: string;
  agentId: string;
  token: string;
  wallet: `0x${string}`;
  owner: { token: string };
};

async function agent(fence: Record<string, unknown> = {}, usdc = 10_000_000n): Promise<AgentWorld> {
  const owner = await w.h.signup('Agent owner');
  const spaceId = await w.h.createSpace(owner);
  const host = new URL(w.base).host;
  const issued = await w.api('POST', `/app/api/spaces/${spaceId}/agents`, owner.token, {
    name: 'Research bot',
    perms: ['x402'],
    fence: { x402_hosts: [host], allowed_merchants: [], per_request_usd: '2', daily_usd: '20', ...fence },
  });
  expect(issued.status).toBe(201);
  await w.api('PATCH', `/app/api/spaces/${spaceId}/agents/${issued.body.agent_id}`, owner.token, {
    status: 'active',
  });
  const wallet = issued.body.wallet_address as `0x${string}`;
  if (usdc > 0n) await w.local.fund(wallet, usdc, 0n);
  return { spaceId, agentId: issued.body.agent_id, token: issued.body.token, wallet, owner };
}

const fetchPaid = (a: AgentWorld, url: string) => w.api('POST', '/agent/x402', a.token, { url });

describe('POST /agent/x402', () => {
  it('pays a pay URL of another book on the same server, and that book’s request is paid with the tx hash', async () => {
    const buyer = await agent();
    const seller = await w.seller();
    const request = await w.mint(seller.key.key, '1.5', { account_id: seller.account.id });
    const res = await fetchPaid(buyer, request.url);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const result = res.body.result as Body;
    expect(res.body).toMatchObject({ applied: true, proposal_id: null });
    expect(result).toMatchObject({
      status: 200,
      paid: { amount: '1.50000000', asset: 'USDC', network: 'local' },
    });
    expect(result.content_type).toContain('application/json');
    expect(JSON.parse(result.body)).toMatchObject({ id: request.id, status: 'paid' });
    expect(result.paid.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await w.usdcOf(seller.address)).toBe(1_500_000n);
    expect(await w.usdcOf(buyer.wallet)).toBe(8_500_000n);
    const read = await w.api('GET', `/integration/payment-requests/${request.token}`, seller.key.key);
    expect(read.body).toMatchObject({ status: 'paid', amount_received: '1.50000000' });
    const settlement = await w.h.db
      .selectFrom('x402_settlements')
      .select(['tx_hash', 'status', 'payer'])
      .where('payment_request_id', '=', request.id)
      .executeTakeFirstOrThrow();
    expect(settlement).toEqual({ tx_hash: result.paid.tx_hash, status: 'settled', payer: buyer.wallet });
    const booked = await w.h.db
      .selectFrom('settlements')
      .select(['rail', 'reference'])
      .where('payment_request_id', '=', request.id)
      .executeTakeFirstOrThrow();
    expect(booked.rail).toBe('x402');
    // The buyer's book: money.out on its agent wallet's account, once, naming the write and the tx.
    const write = await w.h.db
      .selectFrom('agent_writes')
      .select(['id', 'status'])
      .where('agent_id', '=', buyer.agentId)
      .executeTakeFirstOrThrow();
    expect(write.status).toBe('applied');
    const entries = await w.h.db
      .selectFrom('ledger_entries')
      .select(['memo', 'kind', 'origin'])
      .where('cause_type', '=', 'agent_write')
      .where('cause_id', '=', write.id)
      .execute();
    expect(entries).toEqual([{ memo: result.paid.tx_hash, kind: 'expense', origin: 'rail' }]);
    const outs = await w.h.db
      .selectFrom('outbox_events')
      .select('payload')
      .where('space_id', '=', buyer.spaceId)
      .where('event', '=', 'money.out')
      .execute();
    expect(outs.map((row) => (row.payload as Body).amount)).toEqual(['1.50000000']);
    // A free answer: nothing paid, the answer relayed.
    const free = await fetchPaid(buyer, `${w.base}/livez`);
    expect(free.body).toMatchObject({ applied: true, result: { status: 200, paid: null } });
  });

  it('makes a proposal for a host outside the fence, and pays nothing', async () => {
    const buyer = await agent({ x402_hosts: ['api.example.com'] });
    const seller = await w.seller();
    const request = await w.mint(seller.key.key, '1', { account_id: seller.account.id });
    const res = await fetchPaid(buyer, request.url);
    expect(res.body).toMatchObject({ applied: false, result: null });
    expect(res.body.message).toContain('x402_hosts');
    expect(await w.usdcOf(buyer.wallet)).toBe(10_000_000n);
    const over = await agent({ per_request_usd: '0.5' });
    const big = await fetchPaid(over, request.url);
    expect(big.body).toMatchObject({ applied: false });
    expect(big.body.message).toContain('per_request_usd');
    expect(await w.usdcOf(over.wallet)).toBe(10_000_000n);
    const refused = await fetchPaid(buyer, 'ftp://example.com/file');
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ error: 'webhook_address_not_public', details: { field: 'url' } });
  });

  it('20 concurrent fetches against a day that fits 7: exactly 7 paid, 13 proposals', async () => {
    const buyer = await agent({ per_request_usd: '1', daily_usd: '7' });
    const seller = await w.seller();
    const requests = await Promise.all(
      Array.from({ length: 20 }, () => w.mint(seller.key.key, '1', { account_id: seller.account.id })),
    );
    const answers = await Promise.all(requests.map((request) => fetchPaid(buyer, request.url)));
    const paid = answers.filter((res) => res.body.applied === true);
    const proposals = answers.filter((res) => res.body.applied === false);
    expect(paid).toHaveLength(7);
    expect(proposals).toHaveLength(13);
    for (const res of paid) expect(res.body.result.paid).toMatchObject({ amount: '1.00000000' });
    for (const res of proposals) expect(res.body.message).toContain('daily_usd');
    expect(await w.usdcOf(seller.address)).toBe(7_000_000n);
    expect(await w.usdcOf(buyer.wallet)).toBe(3_000_000n);
  });

  it('an agent frozen while its fetch is under way: 403 agent_frozen, nothing signed is sent, nothing paid', async () => {
    const buyer = await agent();
    const seller = await w.seller();
    const request = await w.mint(seller.key.key, '1', { account_id: seller.account.id });
    // A relay in front of the pay URL: before it passes on the first answer (the 402 quote), the
    // owner freezes the agent, so the door and the gate saw it active and the reservation does not.
    let relayed = 0;
    const relay = createServer(async (req, res) => {
      relayed += 1;
      if (req.headers['payment-signature'] || req.headers['x-payment']) {
        res.writeHead(500).end('a payment was sent');
        return;
      }
      const frozen = await w.api(
        'PATCH',
        `/app/api/spaces/${buyer.spaceId}/agents/${buyer.agentId}`,
        buyer.owner.token,
        {
          status: 'frozen',
        },
      );
      expect(frozen.status).toBe(200);
      const upstream = await fetch(request.url, { headers: { accept: 'application/json' } });
      const headers: Record<string, string> = {};
      upstream.headers.forEach((value, name) => {
        if (name !== 'content-length' && name !== 'transfer-encoding' && name !== 'connection')
          headers[name] = value;
      });
      res.writeHead(upstream.status, headers).end(Buffer.from(await upstream.arrayBuffer()));
    });
    relay.listen(0, '127.0.0.1');
    await once(relay, 'listening');
    const port = (relay.address() as { port: number }).port;
    try {
      const widened = await w.h.db
        .updateTable('agents')
        .set({ x402_hosts: [new URL(w.base).host, `127.0.0.1:${port}`] })
        .where('id', '=', buyer.agentId)
        .execute();
      expect(widened).toHaveLength(1);
      const res = await fetchPaid(buyer, `http://127.0.0.1:${port}/pay`);
      expect(res.status, JSON.stringify(res.body)).toBe(403);
      expect(res.body).toMatchObject({ error: 'agent_frozen' });
      expect(relayed).toBe(1);
      expect(await w.usdcOf(buyer.wallet)).toBe(10_000_000n);
      expect(await w.usdcOf(seller.address)).toBe(0n);
      const spent = await w.h.db
        .selectFrom('agent_spend')
        .select('id')
        .where('agent_id', '=', buyer.agentId)
        .execute();
      expect(spent).toEqual([]);
    } finally {
      relay.close();
    }
  });
});
