import { once } from 'node:events';
import { createServer } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadScreeningList } from '../../src/features/screening/index.ts';
import { holdScreeningList } from '../support/turns.ts';
import { type Body, startX402World, type X402World } from './x402-setup.ts';

// Screening on the x402 roads, on anvil: an agent's fetch whose quote pays a listed address is
// refused before anything is signed or reserved; an approval whose host switched its pay-to since
// the proposal is refused; a listed payer is refused by the pay page and by /x402/settle, with
// nothing on chain.

// This file loads its own sanctions list (the database's current one).
holdScreeningList();

let w: X402World;
beforeAll(async () => {
  w = await startX402World();
}, 400_000);
afterAll(() => w?.close());

/** An SDN.XML naming these addresses (one entry each), loaded as the current list. */
async function listAddresses(addresses: string[]) {
  const entries = addresses
    .map(
      (address, at) => `<sdnEntry><uid>${77000 + at}</uid><lastName>LISTED HOLDER ${at}</lastName>
  <sdnType>Entity</sdnType><programList><program>CYBER2</program></programList>
  <idList><id><uid>${78000 + at}</uid><idType>Digital Currency Address - USDC</idType>
  <idNumber>${address}</idNumber></id></idList></sdnEntry>`,
    )
    .join('\n');
  const xml = `<?xml version="1.0"?><sdnList><publshInformation><Publish_Date>11/20/2026</Publish_Date>
  </publshInformation>${entries}</sdnList>`;
  const loaded = await loadScreeningList({ db: w.h.db, clock: w.h.clock }, xml, 'test', { force: true });
  expect(loaded.ok).toBe(true);
}

type AgentWorld = {
  spaceId: string;
  agentId: string;
  token: string;
  wallet: `0x${string}`;
  owner: { token: string };
};

async function agent(hosts: string[], fence: Record<string, unknown> = {}): Promise<AgentWorld> {
  const owner = await w.h.signup('Agent owner');
  const spaceId = await w.h.createSpace(owner);
  const issued = await w.api('POST', `/app/api/spaces/${spaceId}/agents`, owner.token, {
    name: 'Research bot',
    perms: ['x402'],
    fence: { x402_hosts: hosts, allowed_merchants: [], per_request_usd: '2', daily_usd: '20', ...fence },
  });
  expect(issued.status).toBe(201);
  await w.api('PATCH', `/app/api/spaces/${spaceId}/agents/${issued.body.agent_id}`, owner.token, {
    status: 'active',
  });
  const wallet = issued.body.wallet_address as `0x${string}`;
  await w.local.fund(wallet, 10_000_000n, 0n);
  return { spaceId, agentId: issued.body.agent_id, token: issued.body.token, wallet, owner };
}

async function nothingSignedOrSpent(agentId: string) {
  const writes = await w.h.db
    .selectFrom('agent_writes')
    .select(['status', 'signed_nonce'])
    .where('agent_id', '=', agentId)
    .execute();
  expect(writes.filter((write) => write.signed_nonce !== null)).toEqual([]);
  const spent = await w.h.db.selectFrom('agent_spend').select('id').where('agent_id', '=', agentId).execute();
  expect(spent).toEqual([]);
}

describe('an agent paying a listed pay-to', () => {
  it('is refused before anything is signed or reserved, with the reason', async () => {
    const seller = await w.seller();
    await listAddresses([seller.address]);
    const buyer = await agent([new URL(w.base).host]);
    const request = await w.mint(seller.key.key, '1', { account_id: seller.account.id });
    const res = await w.api('POST', '/agent/x402', buyer.token, { url: request.url });
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body).toMatchObject({
      error: 'invalid_request',
      details: { field: 'url', pay_to: seller.address.toLowerCase() },
    });
    expect(res.body.detail).toContain('sanctions list');
    expect(await w.usdcOf(buyer.wallet)).toBe(10_000_000n);
    expect(await w.usdcOf(seller.address)).toBe(0n);
    await nothingSignedOrSpent(buyer.agentId);
  });
});

describe('an agent paying a listed pay-to through MCP', () => {
  it('gets a clear refusal from the x402_fetch tool; nothing is signed or reserved', async () => {
    const seller = await w.seller();
    await listAddresses([seller.address]);
    const buyer = await agent([new URL(w.base).host]);
    const request = await w.mint(seller.key.key, '1', { account_id: seller.account.id });
    const client = new Client({ name: 'screening-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${w.base}/agent/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${buyer.token}` } },
    });
    await client.connect(transport);
    try {
      const result = await client.callTool({ name: 'x402_fetch', arguments: { url: request.url } });
      expect(result.isError).toBe(true);
      const text = (result.content as { text: string }[]).map((part) => part.text).join('\n');
      expect(text).toContain('an address on the sanctions list');
      expect(text).toContain('nothing was signed or spent');
    } finally {
      await client.close();
    }
    expect(await w.usdcOf(seller.address)).toBe(0n);
    expect(await w.usdcOf(buyer.wallet)).toBe(10_000_000n);
    await nothingSignedOrSpent(buyer.agentId);
  });
});

describe('approving an x402 proposal', () => {
  it('refuses when the host now asks to pay another address than the proposal recorded; nothing is signed', async () => {
    const first = await w.seller();
    const second = await w.seller();
    await listAddresses([]);
    const firstRequest = await w.mint(first.key.key, '1', { account_id: first.account.id });
    const secondRequest = await w.mint(second.key.key, '1', { account_id: second.account.id });
    // A host whose quote comes from the first seller's pay page, then from the second's.
    let target = firstRequest.url;
    const host = createServer(async (req, res) => {
      if (req.headers['payment-signature'] || req.headers['x-payment']) {
        res.writeHead(500).end('a payment was sent');
        return;
      }
      const upstream = await fetch(target, { headers: { accept: 'application/json' } });
      const headers: Record<string, string> = {};
      upstream.headers.forEach((value, name) => {
        if (!['content-length', 'transfer-encoding', 'connection'].includes(name)) headers[name] = value;
      });
      res.writeHead(upstream.status, headers).end(Buffer.from(await upstream.arrayBuffer()));
    });
    host.listen(0, '127.0.0.1');
    await once(host, 'listening');
    const port = (host.address() as { port: number }).port;
    try {
      // Over per_request_usd: a proposal that records the quote it saw.
      const buyer = await agent([`127.0.0.1:${port}`], { per_request_usd: '0.5' });
      const url = `http://127.0.0.1:${port}/report`;
      const proposed = await w.api('POST', '/agent/x402', buyer.token, { url });
      expect(proposed.body, JSON.stringify(proposed.body)).toMatchObject({ applied: false });
      const write = await w.h.db
        .selectFrom('agent_writes')
        .select('input')
        .where('id', '=', proposed.body.proposal_id)
        .executeTakeFirstOrThrow();
      expect(write.input).toMatchObject({
        url,
        quoted: '1.00000000',
        asset: 'USDC',
        network: 'local',
        pay_to: first.address.toLowerCase(),
      });
      // The Agents page shows what the proposal was made for.
      const page = await w.h.inject({
        method: 'GET',
        url: `/app/books/${buyer.spaceId}/agents`,
        headers: { cookie: `tb_session=${buyer.owner.token}` },
      });
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain(first.address.toLowerCase());
      target = secondRequest.url;
      const approved = await w.api(
        'POST',
        `/app/api/spaces/${buyer.spaceId}/proposals/${proposed.body.proposal_id}/approve`,
        buyer.owner.token,
        {},
      );
      expect(approved.status, JSON.stringify(approved.body)).toBe(422);
      expect(approved.body.detail).toContain(
        `the host now asks to pay ${second.address.toLowerCase()}; the proposal was for ${first.address.toLowerCase()}`.replace(
          /^t/,
          'T',
        ),
      );
      expect(await w.usdcOf(second.address)).toBe(0n);
      expect(await w.usdcOf(first.address)).toBe(0n);
      expect(await w.usdcOf(buyer.wallet)).toBe(10_000_000n);
      await nothingSignedOrSpent(buyer.agentId);
      const after = await w.h.db
        .selectFrom('agent_writes')
        .select('status')
        .where('id', '=', proposed.body.proposal_id)
        .executeTakeFirstOrThrow();
      expect(after.status).toBe('pending');
    } finally {
      host.close();
    }
  });
});

/** A host whose quote is the current target's pay page (the target changes between calls). */
async function quotingHost(firstTarget: string) {
  let target = firstTarget;
  const host = createServer(async (req, res) => {
    if (req.headers['payment-signature'] || req.headers['x-payment']) {
      res.writeHead(500).end('a payment was sent');
      return;
    }
    const upstream = await fetch(target, { headers: { accept: 'application/json' } });
    const headers: Record<string, string> = {};
    upstream.headers.forEach((value, name) => {
      if (!['content-length', 'transfer-encoding', 'connection'].includes(name)) headers[name] = value;
    });
    res.writeHead(upstream.status, headers).end(Buffer.from(await upstream.arrayBuffer()));
  });
  host.listen(0, '127.0.0.1');
  await once(host, 'listening');
  const port = (host.address() as { port: number }).port;
  return {
    hostPort: `127.0.0.1:${port}`,
    url: `http://127.0.0.1:${port}/report`,
    quoteFrom: (next: string) => {
      target = next;
    },
    close: () => host.close(),
  };
}

describe('approving an x402 proposal whose price changed', () => {
  it('refuses a lower amount as well as a higher one: the owner approved that payment; nothing is signed', async () => {
    const seller = await w.seller();
    await listAddresses([]);
    const proposedAt = await w.mint(seller.key.key, '2', { account_id: seller.account.id });
    const cheaper = await w.mint(seller.key.key, '1.5', { account_id: seller.account.id });
    const host = await quotingHost(proposedAt.url);
    try {
      const buyer = await agent([host.hostPort], { per_request_usd: '0.5' });
      const proposed = await w.api('POST', '/agent/x402', buyer.token, { url: host.url });
      expect(proposed.body, JSON.stringify(proposed.body)).toMatchObject({ applied: false });
      host.quoteFrom(cheaper.url);
      const approved = await w.api(
        'POST',
        `/app/api/spaces/${buyer.spaceId}/proposals/${proposed.body.proposal_id}/approve`,
        buyer.owner.token,
        {},
      );
      expect(approved.status, JSON.stringify(approved.body)).toBe(422);
      expect(approved.body).toMatchObject({ details: { field: 'amount' } });
      expect(approved.body.detail).toContain(
        'The host now asks 1.50000000; the proposal was for 2.00000000.',
      );
      expect(await w.usdcOf(seller.address)).toBe(0n);
      expect(await w.usdcOf(buyer.wallet)).toBe(10_000_000n);
      await nothingSignedOrSpent(buyer.agentId);
    } finally {
      host.close();
    }
  });
});

describe('a listed payer', () => {
  it('is refused by the pay page and by /x402/settle, and nothing goes on chain', async () => {
    const seller = await w.seller();
    const payer = await w.payer(10_000_000n);
    await listAddresses([payer.address]);
    const nonceBefore = await w.gasNonce();
    const request = await w.mint(seller.key.key, '2', { account_id: seller.account.id });
    const res = await w.payingFetch(payer)(request.url, { headers: { accept: 'application/json' } });
    expect(res.status).toBe(402);
    const body = (await res.json()) as Body;
    expect(body.error).toContain('payer_sanctioned');
    const requirement = {
      scheme: 'exact',
      network: w.local.network.caip2,
      asset: w.token.address,
      amount: '2000000',
      payTo: seller.address,
      maxTimeoutSeconds: 120,
      extra: { name: w.token.name, version: w.token.version },
    };
    const payload = await w.authorize(payer, requirement);
    const envelope = { x402Version: 2, paymentPayload: payload, paymentRequirements: requirement };
    const settled = await fetch(`${w.base}/x402/settle`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(envelope),
    });
    expect(await settled.json()).toMatchObject({ success: false, errorReason: 'payer_sanctioned' });
    expect(await w.gasNonce()).toBe(nonceBefore);
    expect(await w.usdcOf(payer.address)).toBe(10_000_000n);
    expect(await w.usdcOf(seller.address)).toBe(0n);
    await listAddresses([]);
  });
});
