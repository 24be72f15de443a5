import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { CLIENT_TYPES_PATH, clientTypes } from '../scripts/client-generate.ts';
import { listOperations } from '../src/platform/http/openapi.ts';
import { createHarness } from './harness.ts';

// The rules of docs/design/platform.md "The OpenAPI document": every operation of /openapi.json has a stable
// operationId, a summary, a description, feature tags and its refusals; Redocly's recommended
// rules pass with no error and no warning; the typed client's checked-in types are the ones the
// live document generates. A route added without routeDoc() fails here.

type Json = Record<string, unknown>;

const h = await createHarness({ env: { PUBLIC_URL: 'https://books.tollbook.dev' } });
afterAll(() => h.close());
const document = (await h.inject({ method: 'GET', url: '/openapi.json' })).json() as Json;
const operations = listOperations(document);
const components = document.components as { responses: Json; schemas: Json };

function responsesOf(operation: Json): Json {
  return operation.responses as Json;
}

function resolveResponse(response: unknown): Json {
  const ref = (response as { $ref?: string }).$ref;
  if (ref === undefined) return response as Json;
  return components.responses[ref.split('/').pop()!] as Json;
}

describe('the OpenAPI document', () => {
  it('lists the API (the rules below are not passing vacuously)', () => {
    expect(operations.length).toBeGreaterThan(60);
    expect(Object.keys(document.webhooks as Json).length).toBe(12);
  });

  it('gives every operation a unique camelCase operationId, a summary, a description and defined tags', () => {
    const tagNames = new Set((document.tags as { name: string }[]).map((tag) => tag.name));
    const ids = new Set<string>();
    const problems: string[] = [];
    for (const { method, path, operation } of operations) {
      const where = `${method.toUpperCase()} ${path}`;
      const id = operation.operationId;
      if (typeof id !== 'string' || !/^[a-z][A-Za-z0-9]+$/.test(id)) problems.push(`${where}: operationId`);
      else if (ids.has(id)) problems.push(`${where}: operationId ${id} used twice`);
      else ids.add(id);
      if (typeof operation.summary !== 'string' || operation.summary.length < 5)
        problems.push(`${where}: summary`);
      if (typeof operation.description !== 'string' || operation.description.length < 20)
        problems.push(`${where}: description`);
      const tags = operation.tags as string[] | undefined;
      if (!tags || tags.length === 0 || tags.some((tag) => !tagNames.has(tag)))
        problems.push(`${where}: tags`);
      if (operation['x-errors'] !== undefined) problems.push(`${where}: x-errors left in the document`);
    }
    expect(problems).toEqual([]);
  });

  it('documents the refusals: at least one 4xx everywhere; the key door’s 401, 403 and 429 on /integration', () => {
    const problems: string[] = [];
    for (const { method, path, operation } of operations) {
      const statuses = Object.keys(responsesOf(operation));
      if (!statuses.some((status) => status.startsWith('4'))) problems.push(`${method} ${path}: no 4xx`);
      if (path.startsWith('/integration/')) {
        for (const status of ['401', '403', '422', '429']) {
          if (!statuses.includes(status)) problems.push(`${method} ${path}: no ${status}`);
        }
      }
      if (operation.requestBody !== undefined && !statuses.includes('422'))
        problems.push(`${method} ${path}: takes a body but documents no 422`);
    }
    expect(problems).toEqual([]);
  });

  it('documents 502 and 503 wherever a route answers them: a write that asks a peer, and every description that names them', () => {
    const problems: string[] = [];
    for (const { method, path, operation } of operations) {
      const statuses = Object.keys(responsesOf(operation));
      for (const status of ['502', '503']) {
        if (new RegExp(`\\b${status}\\b`).test(String(operation.description)) && !statuses.includes(status))
          problems.push(`${method} ${path}: names ${status} but does not document it`);
      }
    }
    expect(problems).toEqual([]);
    const peers = [
      'approveProposal',
      'agentWalletTransfer',
      'agentX402Fetch',
      'answerChat',
      'sendInvoice',
      'remindInvoice',
      'sendSpaceInvoice',
      'remindSpaceInvoice',
    ];
    for (const id of peers) {
      const found = operations.find(({ operation }) => operation.operationId === id);
      expect(found, id).toBeDefined();
      const gateway = resolveResponse(responsesOf(found!.operation)['502']);
      expect(JSON.stringify(gateway), id).toContain('#/components/schemas/ErrorBody');
    }
  });

  it('answers 422 in both error shapes and 429 with Retry-After, as shared responses', () => {
    const charge = operations.find(({ operation }) => operation.operationId === 'createCharge')!.operation;
    const unprocessable = resolveResponse(responsesOf(charge)['422']);
    expect(JSON.stringify(unprocessable)).toContain('#/components/schemas/HTTPValidationError');
    expect(JSON.stringify(unprocessable)).toContain('#/components/schemas/ErrorBody');
    const limited = resolveResponse(responsesOf(charge)['429']);
    expect(Object.keys(limited.headers as Json)).toContain('Retry-After');
  });

  it('names the spec’s shapes as components, so generated clients get those type names', () => {
    const names = Object.keys(components.schemas);
    for (const name of [
      'PaymentRequestCreate',
      'PaymentRequestOut',
      'ChargeCreate',
      'ChargeOut',
      'IntegrationInvoiceCreate',
      'InvoiceOut',
      'InvoicePaymentCreate',
      'ContactCreate',
      'ContactOut',
      'AccountCreate',
      'PushIn',
      'PushOut',
      'PingOut',
      'HTTPValidationError',
      'ErrorBody',
      'PaymentRequired',
    ]) {
      expect(names, name).toContain(name);
    }
    const charge = operations.find(({ operation }) => operation.operationId === 'createCharge')!.operation;
    expect(JSON.stringify(charge.requestBody)).toContain('#/components/schemas/ChargeCreate');
  });

  it('documents the pay page’s machine answers: 402 with PAYMENT-REQUIRED, 200 with PAYMENT-RESPONSE, and the card post', () => {
    const paths = document.paths as Record<string, Record<string, Json>>;
    const page = paths['/pay/{token}']!.get!;
    const answers = responsesOf(page) as Record<string, Json>;
    expect(Object.keys(answers['402']!.headers as Json)).toEqual(['PAYMENT-REQUIRED']);
    expect(Object.keys(answers['200']!.headers as Json)).toEqual(['PAYMENT-RESPONSE']);
    expect(paths['/pay/{token}/card']!.post!.operationId).toBe('payByCard');
  });

  it('documents both webhook channels with their signature headers', () => {
    const webhooks = document.webhooks as Record<string, { post: Json }>;
    const key = webhooks['key.payment_request.paid']!.post;
    const book = webhooks['book.money.in']!.post;
    for (const hook of [key, book]) {
      const headers = (hook.parameters as { name: string }[]).map((parameter) => parameter.name);
      expect(headers).toEqual(expect.arrayContaining(['X-Service-Signature', 'X-Service-Event-Id']));
    }
  });

  it('passes Redocly’s recommended rules with no error and no warning', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tollbook-openapi-'));
    try {
      const file = join(dir, 'openapi.json');
      writeFileSync(file, JSON.stringify(document));
      const redocly = join(process.cwd(), 'node_modules', '.bin', 'redocly');
      const { stdout } = await promisify(execFile)(
        redocly,
        ['lint', file, '--extends=recommended', '--format=json', '--max-problems=1000'],
        { env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } },
      ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
      const report = JSON.parse(stdout.slice(stdout.indexOf('{'))) as {
        problems: { ruleId: string; message: string; location: { pointer?: string }[] }[];
      };
      const problems = report.problems.map(
        (problem) => `${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer}`,
      );
      expect(problems).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('matches the typed client’s checked-in types (run npm run client:generate after changing a route)', async () => {
    expect(readFileSync(CLIENT_TYPES_PATH, 'utf8')).toBe(await clientTypes(document));
  });
});
