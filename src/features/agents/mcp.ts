import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { type TSchema, Type } from '../../platform/http/schema-kit.ts';
import {
  AgentChainPaymentIn,
  AgentGrantChangeIn,
  AgentPaymentIn,
  AgentTxIn,
  AgentTxPatch,
  AgentWalletTransferIn,
  AgentX402In,
  CardIntentOpenIn,
} from './schemas.ts';

// The agent API as Model Context Protocol tools, with the official SDK. Each tool is one agent
// route: its input schema is the route's own TypeBox body schema (plus the path's ids), and a
// call goes through that route (over HTTP for `tollbook mcp`, in process for POST /agent/mcp),
// so the same validation, door and rule table answer it.

export type AgentCall = (
  method: 'GET' | 'POST' | 'PATCH',
  path: string,
  body: Record<string, unknown> | undefined,
) => Promise<{ status: number; body: unknown }>;

type Tool = {
  name: string;
  description: string;
  method: 'GET' | 'POST' | 'PATCH';
  path: string;
  body: TSchema | null;
  /** Path parameters, taken out of the arguments (space_id defaults to the agent's own space). */
  params: readonly ('space_id' | 'id')[];
};

const SPACE = ['space_id'] as const;

export const MCP_TOOLS: readonly Tool[] = [
  {
    name: 'whoami',
    description: 'The agent, its status, fence and space (masked).',
    method: 'GET',
    path: '/agent/me',
    body: null,
    params: [],
  },
  {
    name: 'wallet_balances',
    description: 'The agent hot wallet and its balances.',
    method: 'GET',
    path: '/agent/wallet',
    body: null,
    params: [],
  },
  {
    name: 'create_payment',
    description: 'Pay a payee from an account (a payment out): applied inside the fence, else a proposal.',
    method: 'POST',
    path: '/agent/spaces/{space_id}/payments',
    body: AgentPaymentIn,
    params: SPACE,
  },
  {
    name: 'book_transaction',
    description: 'Book an income or expense row on an account.',
    method: 'POST',
    path: '/agent/spaces/{space_id}/transactions',
    body: AgentTxIn,
    params: SPACE,
  },
  {
    name: 'correct_transaction',
    description: 'Change the category, note or payee of a row an agent booked.',
    method: 'PATCH',
    path: '/agent/spaces/{space_id}/transactions/{id}',
    body: AgentTxPatch,
    params: ['space_id', 'id'],
  },
  {
    name: 'prepare_chain_payment',
    description: 'Put forward an on-chain payment for a person to sign.',
    method: 'POST',
    path: '/agent/spaces/{space_id}/chain-payments',
    body: AgentChainPaymentIn,
    params: SPACE,
  },
  {
    name: 'wallet_transfer',
    description: 'Send a token from the agent hot wallet.',
    method: 'POST',
    path: '/agent/wallet/transfers',
    body: AgentWalletTransferIn,
    params: [],
  },
  {
    name: 'x402_fetch',
    description: 'Fetch a URL, paying its x402 quote from the hot wallet within the fence.',
    method: 'POST',
    path: '/agent/x402',
    body: AgentX402In,
    params: [],
  },
  {
    name: 'declare_card_intent',
    description: 'Declare a card payment (merchant, purpose, USD ceiling) before the card pays.',
    method: 'POST',
    path: '/agent/card-intents',
    body: CardIntentOpenIn,
    params: [],
  },
  {
    name: 'request_grant_change',
    description: 'Ask the owner for a different fence (always a proposal).',
    method: 'POST',
    path: '/agent/grant-changes',
    body: AgentGrantChangeIn,
    params: [],
  },
];

const PATH_PARAMS = {
  space_id: Type.String({ format: 'uuid', description: 'The space; defaults to the agent’s own.' }),
  id: Type.String({ format: 'uuid', description: 'The booked row to correct.' }),
};

/** The tool's JSON Schema: the route's body schema, with its path ids added as properties. */
export function inputSchemaOf(tool: Tool): Record<string, unknown> {
  const body = (tool.body ?? Type.Object({})) as unknown as {
    properties?: Record<string, unknown>;
    required?: string[];
  };
  const properties = { ...(body.properties ?? {}) };
  for (const param of tool.params) properties[param] = PATH_PARAMS[param];
  const required = [...(body.required ?? []), ...tool.params.filter((param) => param === 'id')];
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}) };
}

async function runTool(
  call: AgentCall,
  spaceOf: () => Promise<string>,
  tool: Tool,
  args: Record<string, unknown>,
) {
  const body: Record<string, unknown> = { ...args };
  let path = tool.path;
  for (const param of tool.params) {
    const given = body[param];
    delete body[param];
    const value = typeof given === 'string' ? given : param === 'space_id' ? await spaceOf() : '';
    path = path.replace(`{${param}}`, encodeURIComponent(value));
  }
  const answer = await call(tool.method, path, tool.method === 'GET' ? undefined : body);
  return {
    content: [{ type: 'text' as const, text: JSON.stringify(answer.body) }],
    structuredContent: answer.body as Record<string, unknown>,
    isError: answer.status >= 400,
  };
}

/** An MCP server whose tools call the agent API through `call`. */
export function createAgentMcpServer(call: AgentCall): Server {
  const server = new Server({ name: 'tollbook-agent', version: '1.0.0' }, { capabilities: { tools: {} } });
  let spaceId: Promise<string> | undefined;
  const spaceOf = () => {
    spaceId ??= call('GET', '/agent/me', undefined).then((me) => {
      const spaces = (me.body as { spaces?: { id: string }[] }).spaces ?? [];
      return spaces[0]?.id ?? '';
    });
    return spaceId;
  };
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: MCP_TOOLS.map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: inputSchemaOf(tool) as { type: 'object' },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = MCP_TOOLS.find((candidate) => candidate.name === request.params.name);
    if (!tool) {
      return {
        content: [{ type: 'text' as const, text: `No tool named ${request.params.name}.` }],
        isError: true,
      };
    }
    return runTool(call, spaceOf, tool, (request.params.arguments ?? {}) as Record<string, unknown>);
  });
  return server;
}

/** `tollbook mcp`: the tools over stdio, calling a Tollbook server with the agent's token. */
export function httpAgentCall(baseUrl: string, token: string): AgentCall {
  return async (method, path, body) => {
    const res = await fetch(new URL(path, baseUrl), {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Not JSON (a proxy's error page): the text is the answer.
    }
    return { status: res.status, body: parsed };
  };
}

/** Serves the tools over stdio until the client closes it. */
export async function runAgentMcpStdio(baseUrl: string, token: string): Promise<void> {
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  const server = createAgentMcpServer(httpAgentCall(baseUrl, token));
  await server.connect(new StdioServerTransport());
}
