import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './harness.ts';

// Traces end to end: a real `tollbook serve` process started with the telemetry entry point and
// OTEL_EXPORTER_OTLP_ENDPOINT sends its spans to an OTLP/HTTP receiver on loopback. A charge
// shows as a server span with SQL spans under it, and the request's log lines carry its trace id.
// The pg instrumentation needs the pg driver, so this runs in the DATABASE_URL pass only.

const postgres = process.env.DATABASE_URL !== undefined && process.env.DATABASE_URL !== '';

type OtlpValue = { stringValue?: string; intValue?: string | number };
type OtlpSpan = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: OtlpValue }[];
};
type Received = { service: string | undefined; span: OtlpSpan };

const SERVER_KIND = 2;
const CLIENT_KIND = 3;

let receiver: Server;
const received: Received[] = [];
let h: Harness;
let child: ChildProcess | undefined;
let logs = '';
let origin = '';

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** An OTLP/HTTP trace receiver speaking JSON (OTEL_EXPORTER_OTLP_PROTOCOL=http/json). */
async function startReceiver(): Promise<number> {
  receiver = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          resourceSpans?: {
            resource?: { attributes?: { key: string; value: OtlpValue }[] };
            scopeSpans?: { spans?: OtlpSpan[] }[];
          }[];
        };
        for (const resource of body.resourceSpans ?? []) {
          const service = resource.resource?.attributes?.find((attribute) => attribute.key === 'service.name')
            ?.value.stringValue;
          for (const scope of resource.scopeSpans ?? []) {
            for (const span of scope.spans ?? []) received.push({ service, span });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  return (receiver.address() as AddressInfo).port;
}

async function startServerProcess(receiverPort: number): Promise<string> {
  const port = await freePort();
  child = spawn(process.execPath, ['--import', 'tsx', '--import', './src/telemetry.ts', 'src/main.ts'], {
    env: {
      ...process.env,
      NODE_ENV: 'test',
      HOST: '127.0.0.1',
      PORT: String(port),
      RUN_WORKERS: '0',
      DEMO: '0',
      CHAIN: '0',
      LOG_LEVEL: 'info',
      MASTER_KEY: randomBytes(32).toString('hex'),
      DATA_DIR: mkdtempSync(join(tmpdir(), 'tollbook-otel-')),
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiverPort}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'tollbook-otel-test',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (chunk: Buffer) => {
    logs += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    logs += chunk.toString('utf8');
  });
  const base = `http://127.0.0.1:${port}`;
  for (let attempt = 0; attempt < 960; attempt++) {
    try {
      if ((await fetch(`${base}/livez`)).ok) return base;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`the traced server did not start:\n${logs}`);
}

/** Polls the received spans until `found` answers something, for at most `boundMs`. */
async function waitFor<T>(found: () => T | undefined, boundMs = 30_000): Promise<T> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const value = found();
    if (value !== undefined) return value;
    if (Date.now() > deadline) {
      const seen = received.map(({ span }) => `${span.kind}:${span.name}`).join(', ');
      throw new Error(`not seen within ${boundMs} ms; spans: ${seen}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const attribute = (span: OtlpSpan, key: string) =>
  span.attributes?.find((each) => each.key === key)?.value.stringValue;

beforeAll(async () => {
  if (!postgres) return;
  const receiverPort = await startReceiver();
  h = await createHarness();
  origin = await startServerProcess(receiverPort);
}, 300_000);
afterAll(async () => {
  child?.kill('SIGTERM');
  await h?.close();
  if (receiver) await new Promise((resolve) => receiver.close(resolve));
});

// The pg instrumentation needs the pg driver: the embedded PGlite passes skip this.
describe.skipIf(!postgres)('OpenTelemetry traces over OTLP/HTTP', () => {
  it('sends a charge as a server span with the SQL it ran beneath it, and logs its trace id', async () => {
    const { key } = await h.world({ scopes: ['payments'] });
    const account = await h.makeAccount(key.spaceId, { kind: 'bank', name: 'USD bank', currency: 'USD' });
    const res = await fetch(`${origin}/integration/charges`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ client_ref: 'traced', account_id: account.id, amount: '1' }),
    });
    expect(res.status).toBeLessThan(500);

    const server = await waitFor(() =>
      received.find(
        ({ span }) =>
          span.kind === SERVER_KIND &&
          (attribute(span, 'http.route') === '/integration/charges' ||
            attribute(span, 'url.path') === '/integration/charges' ||
            attribute(span, 'http.target') === '/integration/charges'),
      ),
    );
    expect(server.service).toBe('tollbook-otel-test');
    const traceId = server.span.traceId;
    const inTrace = () => received.filter(({ span }) => span.traceId === traceId).map(({ span }) => span);
    const sql = await waitFor(() => {
      const spans = inTrace().filter(
        (span) =>
          span.kind === CLIENT_KIND &&
          (attribute(span, 'db.system') === 'postgresql' ||
            attribute(span, 'db.system.name') === 'postgresql'),
      );
      return spans.length > 0 ? spans : undefined;
    });
    // Each SQL span descends from the request's server span.
    const byId = new Map(inTrace().map((span) => [span.spanId, span]));
    for (const span of sql) {
      let parent = span.parentSpanId ? byId.get(span.parentSpanId) : undefined;
      let depth = 0;
      while (parent !== undefined && parent.spanId !== server.span.spanId && depth < 50) {
        parent = parent.parentSpanId ? byId.get(parent.parentSpanId) : undefined;
        depth += 1;
      }
      expect(parent?.spanId, `SQL span ${span.name} under the server span`).toBe(server.span.spanId);
    }

    const line = await waitFor(() =>
      logs
        .split('\n')
        .filter((text) => text.startsWith('{'))
        .map((text) => JSON.parse(text) as { reqId?: string; trace_id?: string; msg?: string })
        .find((entry) => entry.trace_id === traceId && entry.reqId !== undefined),
    );
    expect(line.reqId).toMatch(/.+/);
  }, 120_000);
});
