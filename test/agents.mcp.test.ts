import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentPaymentIn } from '../src/features/agents/schemas.ts';
import { type AgentBook, makeAgentBook } from './agents-setup.ts';
import { createHarness, type Harness } from './harness.ts';

// MCP with the official SDK's client: over stdio (`tollbook mcp` as a child process) and over
// streamable HTTP (POST /agent/mcp), the tools are listed with the routes' own input schemas
// and a payment outside the fence comes back as a proposal.

let h: Harness;
let base: string;
beforeAll(async () => {
  h = await createHarness({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
});
afterAll(() => h.close());

const TOOL_NAMES = [
  'book_transaction',
  'correct_transaction',
  'create_payment',
  'declare_card_intent',
  'prepare_chain_payment',
  'request_grant_change',
  'wallet_balances',
  'wallet_transfer',
  'whoami',
  'x402_fetch',
];

async function listAndPropose(client: Client, b: AgentBook) {
  const { tools } = await client.listTools();
  expect(tools.map((tool) => tool.name).sort()).toEqual(TOOL_NAMES);
  const payment = tools.find((tool) => tool.name === 'create_payment')!;
  // The tool's input schema is the route's body schema, with the space id added.
  expect(payment.inputSchema.properties).toMatchObject(AgentPaymentIn.properties as Record<string, unknown>);
  expect(payment.inputSchema.required).toEqual(AgentPaymentIn.required);
  const result = await client.callTool({
    name: 'create_payment',
    arguments: { account_id: b.bank.id, amount: '75', payee: 'Acme Supplies', occurred_on: '2026-05-01' },
  });
  expect(result.isError).toBe(false);
  const out = JSON.parse((result.content as { text: string }[])[0]!.text);
  expect(out).toMatchObject({ applied: false, result: null });
  expect(out.message).toContain('per_request_usd');
  const proposals = (await b.get(b.owner, '/proposals')).json().items;
  expect(proposals.map((p: { id: string }) => p.id)).toContain(out.proposal_id);
  const refused = await client.callTool({ name: 'create_payment', arguments: { amount: 'x' } });
  expect(refused.isError).toBe(true);
  return out;
}

describe('MCP', () => {
  it('over streamable HTTP: lists the tools and makes a payment proposal', async () => {
    const b = await makeAgentBook(h);
    const agent = await b.active();
    const client = new Client({ name: 'test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/agent/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${agent.token}` } },
    });
    await client.connect(transport);
    try {
      await listAndPropose(client, b);
    } finally {
      await client.close();
    }
    const anonymous = await fetch(`${base}/agent/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(anonymous.status).toBe(401);
  });

  it('over stdio (`tollbook mcp` with TOLLBOOK_AGENT_TOKEN): lists the tools and makes a payment proposal', async () => {
    const b = await makeAgentBook(h);
    const agent = await b.active();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', 'src/cli.ts', 'mcp'],
      env: {
        ...(process.env as Record<string, string>),
        TOLLBOOK_AGENT_TOKEN: agent.token,
        TOLLBOOK_URL: base,
      },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const out = await listAndPropose(client, b);
      const me = await client.callTool({ name: 'whoami', arguments: {} });
      expect(JSON.parse((me.content as { text: string }[])[0]!.text)).toMatchObject({
        status: 'active',
        masked: true,
      });
      expect(out.proposal_id).toMatch(/^[0-9a-f-]{36}$/);
    } finally {
      await client.close();
    }
  }, 60_000);
});
