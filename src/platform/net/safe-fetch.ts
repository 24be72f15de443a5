import { Agent, request } from 'undici';
import { type AddressPolicy, checkPublicUrl, type Resolver } from './public-address.ts';
import { pinnedLookup, RESPONSE_BYTES_MAX, SEND_TIMEOUT_MS } from './safe-post.ts';

// A `fetch` for addresses someone else chose (an agent's x402 fetch): each request checks its
// URL under the webhook policy, connects only to the addresses it checked (DNS answers that
// change between check and connect reach nothing else), never follows a redirect (a 3xx is the
// answer), reads at most RESPONSE_BYTES_MAX bytes of body and has one deadline. It answers the
// platform's own Response, so the official x402 fetch wrapper can run over it.

export class AddressRefused extends Error {}

export type SafeFetchOptions = {
  policy: AddressPolicy;
  resolver: Resolver;
  timeoutMs?: number;
  /** The most body read (default RESPONSE_BYTES_MAX); a longer body is cut there. */
  responseBytesMax?: number;
};

async function readLimited(body: AsyncIterable<Buffer>, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const room = limit - size;
    chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
    size += Math.min(chunk.length, room);
    if (size >= limit) break;
  }
  return Buffer.concat(chunks);
}

const DISPATCHERS_MAX = 256;
// Keep-alive connections per (origin, checked addresses): a pooled socket is only ever reused for
// the very addresses this request checked, so pooling never bypasses the address policy.
const dispatchers = new Map<string, Agent>();

function dispatcherFor(url: URL, addresses: readonly string[]): Agent {
  const key = `${url.origin}|${addresses.join(',')}`;
  const found = dispatchers.get(key);
  if (found) return found;
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const agent = new Agent({
    connect: { lookup: pinnedLookup(hostname, addresses) },
    keepAliveTimeout: 4_000,
  });
  dispatchers.set(key, agent);
  if (dispatchers.size > DISPATCHERS_MAX) {
    const [oldestKey, oldest] = dispatchers.entries().next().value as [string, Agent];
    dispatchers.delete(oldestKey);
    void oldest.close().catch(() => {});
  }
  return agent;
}

/** GET and HEAD only: the agent fetches what a URL answers, it never posts a body. */
export function createSafeFetch(options: SafeFetchOptions) {
  const timeoutMs = options.timeoutMs ?? SEND_TIMEOUT_MS;
  return async (input: Request | string | URL, init?: RequestInit): Promise<Response> => {
    // A Request with nothing to add is read as it is (building a copy of it costs ~40 µs).
    const asked = input instanceof Request && init === undefined ? input : new Request(input, init);
    const verdict = await checkPublicUrl(asked.url, options.policy, options.resolver);
    if (!verdict.ok) throw new AddressRefused(verdict.reason);
    const { url, addresses } = verdict;
    const dispatcher = dispatcherFor(url, addresses);
    const headers: Record<string, string> = {};
    asked.headers.forEach((value, name) => {
      headers[name] = value;
    });
    const answer = await request(url, {
      method: asked.method === 'HEAD' ? 'HEAD' : 'GET',
      headers,
      dispatcher,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = await readLimited(answer.body, options.responseBytesMax ?? RESPONSE_BYTES_MAX);
    const out = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value === undefined) continue;
      for (const one of Array.isArray(value) ? value : [value]) out.append(name, one);
    }
    const empty = answer.statusCode === 204 || answer.statusCode === 304 || asked.method === 'HEAD';
    const response = new Response(empty ? null : new Uint8Array(body), {
      status: answer.statusCode,
      headers: out,
    });
    Object.defineProperty(response, 'url', { value: url.toString() });
    return response;
  };
}
