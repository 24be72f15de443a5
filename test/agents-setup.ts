import type { LightMyRequestResponse } from 'fastify';
import type { Harness, User } from './harness.ts';
import { makeBook } from './payouts-setup.ts';

// Shared by the agent suites: a book (owner, admins, member, viewer, a funded USD account) and
// helpers to issue an agent, move its status and call the agent API with its token.

export type AgentBook = Awaited<ReturnType<typeof makeAgentBook>>;
export type Agent = { id: string; token: string; wallet_address: string };

export const DEFAULT_FENCE = {
  x402_hosts: ['api.example.com'],
  allowed_merchants: ['Acme Supplies'],
  per_request_usd: '50',
  daily_usd: '100',
};

export async function makeAgentBook(h: Harness, opening = '1000') {
  const book = await makeBook(h, opening);
  async function issue(body: Record<string, unknown> = {}, by: User = book.owner): Promise<Agent> {
    const res = await book.post(by, '/agents', {
      name: 'Bookkeeper bot',
      perms: ['payments', 'transactions', 'chain_payments'],
      ...body,
      fence: { ...DEFAULT_FENCE, ...((body.fence as Record<string, unknown> | undefined) ?? {}) },
    });
    if (res.statusCode !== 201) throw new Error(`agent failed: ${res.statusCode} ${res.body}`);
    const out = res.json();
    return { id: out.agent_id, token: out.token, wallet_address: out.wallet_address };
  }
  const setStatus = (agent: Agent, status: string, by: User = book.owner) =>
    h.inject({
      method: 'PATCH',
      url: `/app/api/spaces/${book.spaceId}/agents/${agent.id}`,
      session: by.token,
      payload: { status },
    });
  async function active(body: Record<string, unknown> = {}) {
    const agent = await issue(body);
    const res = await setStatus(agent, 'active');
    if (res.statusCode !== 200) throw new Error(`activate failed: ${res.statusCode} ${res.body}`);
    return agent;
  }
  const call = (
    agent: Agent,
    method: 'GET' | 'POST' | 'PATCH',
    path: string,
    payload?: Record<string, unknown>,
  ): Promise<LightMyRequestResponse> =>
    h.inject({
      method,
      url: path,
      headers: { authorization: `Bearer ${agent.token}` },
      ...(payload ? { payload } : {}),
    });
  const agentPay = (agent: Agent, body: Record<string, unknown> = {}) =>
    call(agent, 'POST', `/agent/spaces/${book.spaceId}/payments`, {
      account_id: book.bank.id,
      amount: '10',
      payee: 'Acme Supplies',
      occurred_on: '2026-05-01',
      ...body,
    });
  const agentTx = (agent: Agent, body: Record<string, unknown> = {}) =>
    call(agent, 'POST', `/agent/spaces/${book.spaceId}/transactions`, {
      account_id: book.bank.id,
      kind: 'expense',
      amount: '12.5',
      occurred_on: '2026-05-02',
      payee: 'Cloud host',
      ...body,
    });
  return { ...book, issue, setStatus, active, call, agentPay, agentTx };
}
