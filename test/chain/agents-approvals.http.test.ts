import type { Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Body, startX402World, type X402World } from './x402-setup.ts';

// Approving the proposals whose applying asks the chain, on anvil: a hot-wallet transfer and an
// x402 fetch apply once with the person as actor (the agent named), outside the agent's daily
// cap; two approvals at once (real concurrent requests) apply once; a transfer the chain refuses
// goes back to pending with the failure for the owner, and nothing is booked.

let w: X402World;
beforeAll(async () => {
  w = await startX402World();
}, 120_000);
afterAll(() => w?.close());

type Owner = { id: string; token: string; csrf: string };
type AgentWorld = { spaceId: string; token: string; wallet: Address; owner: Owner; agentId: string };

/** An observing agent (every write a proposal) with a funded wallet, x402 allowed to this host. */
async function agent(usdc = 10_000_000n): Promise<AgentWorld> {
  const owner = await w.h.signup('Agent owner');
  const spaceId = await w.h.createSpace(owner);
  const issued = await w.api('POST', `/app/api/spaces/${spaceId}/agents`, owner.token, {
    name: 'Errand bot',
    perms: ['wallet', 'x402'],
    fence: {
      x402_hosts: [],
      allowed_merchants: ['Acme Supplies'],
      per_request_usd: '2',
      daily_usd: '3',
    },
  });
  expect(issued.status).toBe(201);
  const wallet = issued.body.wallet_address as Address;
  if (usdc > 0n) await w.local.fund(wallet, usdc, 0n);
  return { spaceId, token: issued.body.token, wallet, owner, agentId: issued.body.agent_id };
}

const destination = () => privateKeyToAccount(generatePrivateKey()).address;

async function proposeTransfer(a: AgentWorld, amount: string, to: Address) {
  const res = await w.api('POST', '/agent/wallet/transfers', a.token, {
    chain: 'evm',
    asset: 'USDC',
    network: 'local',
    amount,
    destination: to,
    payee: 'Acme Supplies',
  });
  expect(res.body).toMatchObject({ applied: false, result: null });
  return res.body.proposal_id as string;
}

const approve = (a: AgentWorld, proposalId: string) =>
  w.api('POST', `/app/api/spaces/${a.spaceId}/proposals/${proposalId}/approve`, a.owner.token, {});

async function booked(spaceId: string) {
  const events = await w.h.db
    .selectFrom('outbox_events')
    .select(['event', 'payload'])
    .where('space_id', '=', spaceId)
    .where('event', '=', 'money.out')
    .execute();
  const entries = await w.h.db
    .selectFrom('ledger_entries')
    .select(['id', 'cause_id'])
    .where('space_id', '=', spaceId)
    .where('cause_type', '=', 'agent_write')
    .execute();
  return { events, entries };
}

const spendOf = (agentId: string) =>
  w.h.db.selectFrom('agent_spend').select('amount_usd').where('agent_id', '=', agentId).execute();

describe('approving a hot-wallet transfer proposal', () => {
  it('sends once through the gas wallet, books money.out, names the agent, and spends no cap', async () => {
    const a = await agent();
    const to = destination();
    // Over the day's cap of 3: a person may still approve it.
    const proposalId = await proposeTransfer(a, '2.5', to);
    const nonce = await w.gasNonce();
    const res = await approve(a, proposalId);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      id: proposalId,
      kind: 'wallet_transfer',
      status: 'approved',
      agent_id: a.agentId,
      agent_name: 'Errand bot',
      decided_by: a.owner.id,
      result: { amount: '2.50000000', asset: 'USDC', network: 'local', destination: to },
    });
    expect(res.body.result.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await w.usdcOf(to)).toBe(2_500_000n);
    expect(await w.usdcOf(a.wallet)).toBe(7_500_000n);
    expect(await w.gasNonce()).toBe(nonce + 1);
    const { events, entries } = await booked(a.spaceId);
    expect(entries).toEqual([{ id: res.body.result.transaction_id, cause_id: proposalId }]);
    expect(events).toHaveLength(1);
    expect(events[0]!.payload).toMatchObject({ amount: '2.50000000', currency: 'USDC', origin: 'rail' });
    expect(await spendOf(a.agentId)).toEqual([]);
    const again = await approve(a, proposalId);
    expect(again.body).toMatchObject({ error: 'proposal_state', details: { status: 'approved' } });
    expect(await w.usdcOf(to)).toBe(2_500_000n);
  });

  it('two approvals at once (concurrent requests) apply it once', async () => {
    const a = await agent();
    const admin = await w.h.signup('Second admin');
    await w.api('POST', `/app/api/spaces/${a.spaceId}/members`, a.owner.token, {
      email: admin.email,
      role: 'admin',
    });
    const to = destination();
    const proposalId = await proposeTransfer(a, '1', to);
    const nonce = await w.gasNonce();
    const answers = await Promise.all([
      approve(a, proposalId),
      w.api('POST', `/app/api/spaces/${a.spaceId}/proposals/${proposalId}/approve`, admin.token, {}),
    ]);
    expect(answers.map((res) => res.status).sort()).toEqual([200, 422]);
    const refused = answers.find((res) => res.status === 422)!;
    expect(refused.body.error).toBe('proposal_state');
    expect(await w.usdcOf(to)).toBe(1_000_000n);
    expect(await w.gasNonce()).toBe(nonce + 1);
    expect((await booked(a.spaceId)).entries).toHaveLength(1);
  });

  it('a transfer the chain refuses goes back to pending with the failure; nothing is booked', async () => {
    const a = await agent(0n);
    const to = destination();
    const proposalId = await proposeTransfer(a, '1', to);
    const res = await approve(a, proposalId);
    expect(res.status).toBe(502);
    expect(res.body).toMatchObject({ error: 'transfer_failed', details: { failed_by: a.owner.id } });
    const pending = await w.api('GET', `/app/api/spaces/${a.spaceId}/proposals`, a.owner.token);
    const row = pending.body.items.find((item: Body) => item.id === proposalId);
    expect(row).toMatchObject({ status: 'pending', decided_by: null, result: { error: 'transfer_failed' } });
    expect(await booked(a.spaceId)).toEqual({ events: [], entries: [] });
    expect(await w.usdcOf(to)).toBe(0n);
    // The owner sees the failure on the Agents screen, and may fund the wallet and approve again.
    const page = await fetch(`${w.base}/app/books/${a.spaceId}/agents`, {
      headers: { cookie: `tb_session=${a.owner.token}` },
    });
    expect(await page.text()).toContain('Approving failed');
    await w.local.fund(a.wallet, 5_000_000n, 0n);
    const retried = await approve(a, proposalId);
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    expect(retried.body.status).toBe('approved');
    expect(await w.usdcOf(to)).toBe(1_000_000n);
  });

  it('the Agents screen’s Approve button applies it and answers a refusal in place', async () => {
    const a = await agent();
    const to = destination();
    const proposalId = await proposeTransfer(a, '1', to);
    const post = (id: string) =>
      fetch(`${w.base}/app/books/${a.spaceId}/agents/proposals/${id}/approve`, {
        method: 'POST',
        redirect: 'manual',
        headers: {
          cookie: `tb_session=${a.owner.token}`,
          'content-type': 'application/x-www-form-urlencoded',
          'x-csrf-token': a.owner.csrf,
        },
        body: '',
      });
    const done = await post(proposalId);
    expect(done.status).toBe(303);
    expect(await w.usdcOf(to)).toBe(1_000_000n);
    const twice = await post(proposalId);
    expect(twice.status).toBe(422);
    expect(await twice.text()).toContain('only a pending one can be decided');
  });
});

describe('approving an x402 proposal', () => {
  it('pays the URL once from the agent wallet, at most the agent’s per-request amount', async () => {
    const a = await agent();
    const seller = await w.seller();
    const request = await w.mint(seller.key.key, '1.5', { account_id: seller.account.id });
    // Observing: a proposal, nothing fetched.
    const proposed = await w.api('POST', '/agent/x402', a.token, { url: request.url });
    expect(proposed.body).toMatchObject({ applied: false });
    expect(await w.usdcOf(a.wallet)).toBe(10_000_000n);
    const res = await approve(a, proposed.body.proposal_id);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      kind: 'x402',
      status: 'approved',
      decided_by: a.owner.id,
      result: { status: 200, paid: { amount: '1.50000000', asset: 'USDC', network: 'local' } },
    });
    expect(JSON.parse(res.body.result.body)).toMatchObject({ id: request.id, status: 'paid' });
    expect(await w.usdcOf(seller.address)).toBe(1_500_000n);
    expect(await w.usdcOf(a.wallet)).toBe(8_500_000n);
    expect(await spendOf(a.agentId)).toEqual([]);
    const again = await approve(a, proposed.body.proposal_id);
    expect(again.body.error).toBe('proposal_state');
    expect(await w.usdcOf(seller.address)).toBe(1_500_000n);
    // Booked once, in the statement that approved it: money.out on the agent wallet's account.
    const entries = await w.h.db
      .selectFrom('ledger_entries')
      .select('memo')
      .where('cause_type', '=', 'agent_write')
      .where('cause_id', '=', proposed.body.proposal_id)
      .execute();
    expect(entries).toEqual([{ memo: res.body.result.paid.tx_hash }]);
  });

  it('refuses to pay more than the approved amount: back to pending, nothing paid', async () => {
    const a = await agent();
    const seller = await w.seller();
    const request = await w.mint(seller.key.key, '2.5', { account_id: seller.account.id });
    const proposed = await w.api('POST', '/agent/x402', a.token, { url: request.url });
    const res = await approve(a, proposed.body.proposal_id);
    expect(res.status).toBe(502);
    expect(res.body.detail).toContain('more than the 2.00000000 approved');
    const list = await w.api('GET', `/app/api/spaces/${a.spaceId}/proposals`, a.owner.token);
    expect(list.body.items[0]).toMatchObject({ id: proposed.body.proposal_id, status: 'pending' });
    expect(await w.usdcOf(a.wallet)).toBe(10_000_000n);
    expect(await w.usdcOf(seller.address)).toBe(0n);
  });
});
