import { isIP, type LookupFunction } from 'node:net';
import { Pool } from 'undici';
import { type AddressPolicy, checkPublicUrl, type Resolver } from './public-address.ts';

// Outbound requests to addresses that people typed in (webhooks; site proofs). Every send checks the URL again:
// the name is resolved through the injected resolver, every address must pass the policy, and
// the connection goes to those checked addresses only (the socket's own lookup is replaced), so a
// DNS answer that changes between check and connect cannot reach an internal host. TLS still
// names the host (SNI and certificate check) and the Host header is the URL's. Redirects are
// never followed; the answer's body is read up to a limit; the whole exchange has one deadline.

export const SEND_TIMEOUT_MS = 10_000;
export const RESPONSE_BYTES_MAX = 64 * 1024;
const CLIENTS_MAX = 256;
// Enough parallel connections to one receiver that a slow answer does not stall the others.
const CONNECTIONS_PER_TARGET = 32;

export type SafePostOptions = {
  policy: AddressPolicy;
  resolver: Resolver;
  timeoutMs?: number;
  responseBytesMax?: number;
  /** Extra TLS settings (tests pass their own certificate authority). */
  tls?: { ca?: string | Buffer };
};

export type PostResult =
  /** The address was refused before anything was sent. */
  | { kind: 'refused'; reason: string }
  /** The receiver answered (any status); `body` holds at most responseBytesMax bytes. */
  | { kind: 'answered'; status: number; body: Buffer; durationMs: number }
  /** Nothing usable came back: timeout, refused connection, reset, TLS failure. */
  | { kind: 'failed'; error: string; durationMs: number };

/** A socket lookup that answers only `hostname`, and only with the addresses already checked. */
export function pinnedLookup(hostname: string, addresses: readonly string[]): LookupFunction {
  const answers = addresses.map((address) => ({ address, family: isIP(address) }));
  return (name, options, callback) => {
    const first = answers[0];
    if (name !== hostname || first === undefined) {
      callback(Object.assign(new Error(`refusing to resolve ${name}`), { code: 'ENOTFOUND' }), '', 0);
      return;
    }
    if (options?.all) callback(null, answers);
    else callback(null, first.address, first.family);
  };
}

function describeError(error: unknown, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `no answer within ${timeoutMs / 1000} s`;
  const code = (error as { code?: unknown })?.code;
  const message = error instanceof Error ? error.message : String(error);
  const text = typeof code === 'string' ? `${code}: ${message}` : message;
  return text.slice(0, 300);
}

async function readLimited(body: AsyncIterable<Buffer>, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  // Leaving the loop early destroys the stream, so a huge answer costs at most `limit` bytes.
  for await (const chunk of body) {
    const room = limit - size;
    chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
    size += Math.min(chunk.length, room);
    if (size >= limit) break;
  }
  return Buffer.concat(chunks);
}

/**
 * Sends POSTs under one address policy. Keeps a keep-alive connection pool per (origin, checked
 * addresses), so a pooled socket is only ever reused for the same checked addresses.
 */
export class SafeSender {
  private readonly clients = new Map<string, Pool>();
  private readonly timeoutMs: number;
  private readonly responseBytesMax: number;

  constructor(private readonly options: SafePostOptions) {
    this.timeoutMs = options.timeoutMs ?? SEND_TIMEOUT_MS;
    this.responseBytesMax = options.responseBytesMax ?? RESPONSE_BYTES_MAX;
  }

  post(rawUrl: string, body: Buffer, headers: Record<string, string>): Promise<PostResult> {
    return this.send('POST', rawUrl, body, headers);
  }

  /** A GET under the same rules (no redirects, limited body, one deadline). */
  get(rawUrl: string, headers: Record<string, string> = {}): Promise<PostResult> {
    return this.send('GET', rawUrl, undefined, headers);
  }

  private async send(
    method: 'GET' | 'POST',
    rawUrl: string,
    body: Buffer | undefined,
    headers: Record<string, string>,
  ): Promise<PostResult> {
    const verdict = await checkPublicUrl(rawUrl, this.options.policy, this.options.resolver);
    if (!verdict.ok) return { kind: 'refused', reason: verdict.reason };
    const { url, addresses } = verdict;
    const started = performance.now();
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.timeoutMs);
    try {
      const client = this.clientFor(url, addresses);
      const res = await client.request({
        method,
        path: `${url.pathname}${url.search}`,
        headers: body === undefined ? headers : { ...headers, 'content-length': String(body.length) },
        body,
        signal: controller.signal,
      });
      const answer = await readLimited(res.body, this.responseBytesMax);
      return {
        kind: 'answered',
        status: res.statusCode,
        body: answer,
        durationMs: performance.now() - started,
      };
    } catch (error) {
      return {
        kind: 'failed',
        error: describeError(error, timedOut, this.timeoutMs),
        durationMs: performance.now() - started,
      };
    } finally {
      clearTimeout(timer);
    }
  }

  private clientFor(url: URL, addresses: string[]): Pool {
    const poolKey = `${url.origin}|${addresses.join(',')}`;
    const found = this.clients.get(poolKey);
    if (found) {
      // Most recently used last, so the oldest is the one evicted.
      this.clients.delete(poolKey);
      this.clients.set(poolKey, found);
      return found;
    }
    const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const client = new Pool(url.origin, {
      connections: CONNECTIONS_PER_TARGET,
      connect: { lookup: pinnedLookup(hostname, addresses), ...this.options.tls },
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
      connectTimeout: this.timeoutMs,
      keepAliveTimeout: 4_000,
    });
    this.clients.set(poolKey, client);
    if (this.clients.size > CLIENTS_MAX) {
      const [oldestKey, oldest] = this.clients.entries().next().value as [string, Pool];
      this.clients.delete(oldestKey);
      void oldest.close().catch(() => {});
    }
    return client;
  }

  async close(): Promise<void> {
    const all = [...this.clients.values()];
    this.clients.clear();
    await Promise.all(all.map((client) => client.destroy().catch(() => {})));
  }
}
