import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { InvalidJsonError, parseJsonBody } from '../src/platform/http/json-body.ts';
import { createHarness, type Key, type User } from './harness.ts';
import { BOT_TOKEN, startBotApiServer } from './support/bot-api-server.ts';

// Random bodies, parameters and headers on every route of the OpenAPI document never produce a
// 5xx, and every refusal is JSON in one of the two error shapes. Routes are read from
// /openapi.json, so a route added later is fuzzed without touching this file.

const RUNS_PER_ROUTE = Number(process.env.FUZZ_RUNS ?? 100);
const RUNS_LOGOUT = 8;
const ROUTE_TIME_LIMIT_MS = 25_000;
const ROUTE_TEST_TIMEOUT_MS = 45_000;
const ALL_SCOPES = ['payments', 'invoices', 'contacts', 'accounts', 'chats'];
const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

type Schema = { [keyword: string]: unknown };
type Parameter = { name: string; in: string; required?: boolean; schema?: Schema };
type Operation = { method: string; path: string; parameters: Parameter[]; bodySchema: Schema | undefined };
type Credential = 'own' | 'none' | 'garbage' | 'swapped';
type FuzzRequest = {
  url: string;
  payload: string | undefined;
  contentType: string | undefined;
  idempotencyKey: string | undefined;
  credential: Credential;
  garbageAuthorization: string;
};

// ---------------------------------------------------------------------------------------------
// The world the fuzzer acts in: an owner with a space and an all-scopes key; a member and a spare
// key that DELETE and PATCH routes may hit; an outsider whose email can be added as a member.

// The chat bot runs against the tests' Bot API server, so the chat routes do their work (without
// a bot they answer 503 chat_unavailable by design, which this file would count as a 5xx).
const bot = await startBotApiServer();
const h = await createHarness({ env: { TELEGRAM_BOT_TOKEN: BOT_TOKEN, TELEGRAM_API_ROOT: bot.root } });
const { owner, spaceId, key } = await h.world({ scopes: ALL_SCOPES });
const member = await h.signup('Member');
const outsider = await h.signup('Outsider');
await h.addMember(owner, spaceId, member, 'member');
const spareKey = await h.issueKey(owner, spaceId, { name: 'Spare key', scopes: ['accounts'] });
const document = (await h.inject({ method: 'GET', url: '/openapi.json' })).json() as {
  paths: Record<string, Record<string, { parameters?: Parameter[]; requestBody?: unknown }>>;
  components?: { schemas?: Record<string, Schema> };
};

/** Ids a fuzzed request must never aim a write at: they keep the world usable. */
const protectedIds = new Set([owner.id, spaceId, key.id]);
/** Ids seen in successful answers, offered to later path parameters. */
const harvestedIds = new Set<string>();
const knownIds: Record<string, string[]> = { user_id: [member.id], key_id: [spareKey.id] };

afterAll(async () => {
  await h.close();
  await bot.close();
});

function requestSchema(operation: { requestBody?: unknown }): Schema | undefined {
  const body = operation.requestBody as { content?: Record<string, { schema?: Schema }> } | undefined;
  return body?.content?.['application/json']?.schema;
}

function listOperations(): Operation[] {
  // The pay page answers people in HTML (its 404 too); its machine answers are tested in
  // payment-requests.http.test.ts and the x402 tests, so the JSON-shape fuzzing skips it.
  const json = Object.entries(document.paths).filter(([path]) => !path.startsWith('/pay/'));
  return json.flatMap(([path, methods]) =>
    HTTP_METHODS.filter((method) => methods[method] !== undefined).map((method) => {
      const operation = methods[method]!;
      return {
        method: method.toUpperCase(),
        path,
        parameters: operation.parameters ?? [],
        bodySchema: requestSchema(operation),
      };
    }),
  );
}

function resolveRef(schema: Schema | undefined): Schema | undefined {
  const ref = schema?.$ref;
  if (typeof ref !== 'string') return schema;
  const name = ref.split('/').pop() ?? '';
  return document.components?.schemas?.[name] ?? {};
}

// ---------------------------------------------------------------------------------------------
// JSON text, built as text so numbers can be anything the grammar allows (huge, tiny, long).

const NUMBER_EDGES = [
  '0',
  '-0',
  '1',
  '-1',
  '0.1',
  '-0.00000001',
  '0.000000001',
  '1.123456789',
  '1e16',
  '-1e16',
  '1e16',
  '1.5e16',
  '10000000000000000.00000001',
  '12345678901234.12345678',
  '9007199254740993',
  '-9007199254740993',
  '123456789012345678901234567890',
  '1e308',
  '-1e308',
  '1e309',
  '4.9e-324',
  '1e400',
  '-1e-400',
  '1E+2',
  '1e99999999',
  '1e-99999999',
  '0.00000000000000000000000000001',
  '2147483648',
  '-2147483649',
];

const numberText: fc.Arbitrary<string> = fc.oneof(
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((value) => JSON.stringify(value)),
  fc.constantFrom(...NUMBER_EDGES),
  fc
    .tuple(
      fc.boolean(),
      fc.stringMatching(/^[1-9]\d{0,24}$/),
      fc.stringMatching(/^\d{0,20}$/),
      fc.integer({ min: -30, max: 30 }),
    )
    .map(([negative, whole, fraction, exponent]) => {
      const sign = negative ? '-' : '';
      const decimals = fraction === '' ? '' : `.${fraction}`;
      return exponent === 0 ? `${sign}${whole}${decimals}` : `${sign}${whole}${decimals}e${exponent}`;
    }),
);

const STRING_EDGES = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff',
  'x'.repeat(5000),
  '😀',
  'e\u0301',
  '\u202e',
  '%',
  '%00',
  '{{x}}',
  "'; drop table spaces; --",
  '<script>',
  '__proto__',
  'null',
  'undefined',
  'NaN',
  '-1',
  '1e16',
  '0x10',
  '\n',
  '\t\r',
];

const stringValue: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.constantFrom(...STRING_EDGES),
);

const SPECIAL_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  '',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'id',
  'space_id',
];

function keyText(names: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 2, arbitrary: names.length > 0 ? fc.constantFrom(...names) : fc.string({ maxLength: 10 }) },
    { weight: 1, arbitrary: fc.constantFrom(...SPECIAL_KEYS) },
    { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
  );
}

function objectText(entries: [string, string][]): string {
  return `{${entries.map(([name, value]) => `${JSON.stringify(name)}:${value}`).join(',')}}`;
}

/** Any JSON value, as text: objects with random (and real) keys, arrays, strings, numbers, literals. */
function anyJsonText(names: string[]): fc.Arbitrary<string> {
  const { value } = fc.letrec<{ value: string; leaf: string; array: string; object: string }>((tie) => ({
    value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, tie('leaf'), tie('array'), tie('object')),
    leaf: fc.oneof(
      numberText,
      stringValue.map((text) => JSON.stringify(text)),
      fc.constantFrom('true', 'false', 'null'),
    ),
    array: fc.array(tie('value'), { maxLength: 5 }).map((items) => `[${items.join(',')}]`),
    object: fc.array(fc.tuple(keyText(names), tie('value')), { maxLength: 6 }).map(objectText),
  }));
  return value;
}

function nested(depth: number, open: string, close: string, inner = '0'): string {
  return `${open.repeat(depth)}${inner}${close.repeat(depth)}`;
}

/** Bodies a parser or a recursive walk could choke on. */
const DEEP_VALUES = [
  nested(100_000, '[', ']'),
  nested(50_000, '{"a":', '}'),
  nested(100_000, '[', ']', '12345678901234567890.5'),
  nested(20_000, '{"a":[', ']}', '1e17'),
  nested(5_000, '[', ']'),
  nested(1_000, '{"a":', '}'),
];

/** Very deep values, and depths around any limit a parser might set (up to a few hundred). */
const deepValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...DEEP_VALUES),
  fc
    .tuple(fc.integer({ min: 1, max: 300 }), fc.boolean())
    .map(([depth, arrays]) => (arrays ? nested(depth, '[', ']') : nested(depth, '{"a":', '}'))),
);

const RAW_BODIES = [
  '',
  ' ',
  '{',
  '}',
  '[',
  '{"a":',
  '{"a":1,}',
  "{'a':1}",
  'undefined',
  'NaN',
  'Infinity',
  '-Infinity',
  '[1,2',
  '{"a":1}x',
  '\ufeff{}',
  '{"__proto__":{"polluted":1}}',
  '{"constructor":{"prototype":{"polluted":1}}}',
  '{"a":1,"a":2}',
  '"just a string"',
  '12',
  'null',
  'true',
  '\u0000',
  '{"a":"\\ud800"}',
  '{"a":"\\u0000"}',
  '{"a":1e99999999999}',
  '{"a":--1}',
  '{"a":01}',
  '{"a":.5}',
  '{"a":1.}',
  '{"a":+1}',
  '\\',
  '{"a":"\\x"}',
  'x'.repeat(100),
];

const rawText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...RAW_BODIES),
  fc.string({ maxLength: 60 }),
  fc.string({ unit: 'binary', maxLength: 60 }),
);

// ---------------------------------------------------------------------------------------------
// Valid-ish bodies from the request schema. Two modes: `strict` keeps every value inside its
// schema (so requests reach the services and the database), `loose` keeps the keys but lets any
// value be of the wrong type, length or shape, or carry characters a database may refuse.

type Mode = 'strict' | 'loose';

const URL_HINTS: Hints = [
  ['https://hooks.example.com/tollbook', 'https://mixed.example.com/'],
  [
    'https://internal.example.com/x',
    'http://hooks.example.com/',
    'https://localhost/',
    'https://127.0.0.1/',
    'https://[::1]/',
    'https://nowhere.invalid/',
    'https://user:pass@hooks.example.com/',
    'ftp://hooks.example.com/',
    'https://hooks.example.com:0/',
    'not a url',
    'https://',
  ],
];
/** Values worth trying for a field, by name: [plausible, odd]. */
type Hints = [string[], string[]];
const NAME_HINTS: [RegExp, Hints][] = [
  [/url/, URL_HINTS],
  [
    /email/,
    [
      [member.email, outsider.email, 'nobody@example.com'],
      ['a@b', 'ÄÖ@example.com', '@example.com', 'a@b@c'],
    ],
  ],
  [
    /currency/,
    [
      ['USD', 'EUR', 'usdc', 'USDC'],
      ['XXX', 'US', 'EURO', '€'],
    ],
  ],
  [
    /network/,
    [
      ['base', 'ethereum', 'polygon', 'base-sepolia', 'local'],
      ['solana', 'BASE'],
    ],
  ],
  [/chain/, [['evm'], ['solana', 'bitcoin', 'EVM']]],
  [
    /address/,
    [['0x1111111111111111111111111111111111111111'], ['0x11', '0xZZ11111111111111111111111111111111111111']],
  ],
  [
    /iban/,
    [
      ['DE89370400440532013000', 'de89 3704 0044 0532 0130 00', 'GB82WEST12345698765432'],
      ['DE00000000000000000000', 'XX'],
    ],
  ],
  [
    /bic/,
    [
      ['DEUTDEFF', 'DEUTDEFF500'],
      ['DEUTDE', 'deutdeff'],
    ],
  ],
  [
    /color/,
    [
      ['#1a7f5a', '#FFF'],
      ['red', '#12345678'],
    ],
  ],
  [
    /country/,
    [
      ['DE', 'US', 'GB'],
      ['ZZ', 'de', 'DEU'],
    ],
  ],
  [/routing/, [['021000021'], ['123', '000000000']]],
  [/sort_code/, [['12-34-56', '123456'], ['12345']]],
  [
    /account_number/,
    [
      ['12345678', '31926819'],
      ['0', '1234567890123456789'],
    ],
  ],
  [/phone/, [['+49 30 1234567'], ['12', '+']]],
];

function hintsFor(name: string, mode: Mode): string[] {
  return NAME_HINTS.filter(([pattern]) => pattern.test(name)).flatMap(([, [plausible, odd]]) =>
    mode === 'strict' ? plausible : [...plausible, ...odd],
  );
}

const FORMATS: Record<string, [fc.Arbitrary<string>, string[]]> = {
  uuid: [
    fc.uuid(),
    ['00000000-0000-0000-0000-000000000000', 'not-a-uuid', '{00000000-0000-0000-0000-000000000000}'],
  ],
  email: [fc.emailAddress(), ['a@b', '@', 'a@b.c'.repeat(60)]],
  date: [
    fc.constantFrom('2026-01-31', '1970-01-01', '2024-02-29'),
    ['2026-02-30', '0000-01-01', '2026-1-1', '2026-13-01'],
  ],
  'date-time': [
    fc
      .date({
        min: new Date('1970-01-01T00:00:00Z'),
        max: new Date('9999-12-31T00:00:00Z'),
        noInvalidDate: true,
      })
      .map((date) => date.toISOString()),
    ['2026-01-31T25:00:00Z', '2026-01-31 00:00', '+010000-01-01T00:00:00.000Z'],
  ],
  uri: [fc.webUrl(), URL_HINTS[1]],
};

function formatted(format: unknown, mode: Mode): fc.Arbitrary<string> | undefined {
  const known = typeof format === 'string' ? FORMATS[format] : undefined;
  if (!known) return undefined;
  return mode === 'strict' ? known[0] : fc.oneof(known[0], fc.constantFrom(...known[1]));
}

function patterned(pattern: unknown): fc.Arbitrary<string> | undefined {
  if (typeof pattern !== 'string') return undefined;
  try {
    return fc.stringMatching(new RegExp(pattern));
  } catch {
    return undefined;
  }
}

/**
 * Characters a database or a log line may refuse or mangle: NUL, a lone surrogate, direction
 * marks, combining marks and 4-byte emoji (alone and joined).
 */
const TAINTS = [
  '\u0000',
  '\ud800',
  '\udc00',
  '\u202e',
  '\u200f',
  '\u0085',
  '\ufeff',
  '\n',
  '\u001b',
  'e\u0301',
  '\u0301',
  '😀',
  '\ud83d\ude00\u200d\ud83d\udd25',
];

function tainted(text: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.tuple(text, fc.constantFrom(...TAINTS), fc.nat()).map(([base, taint, at]) => {
    const index = at % (base.length + 1);
    return `${base.slice(0, index)}${taint}${base.slice(index)}`;
  });
}

function stringFor(schema: Schema, name: string, mode: Mode): fc.Arbitrary<string> {
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : 60;
  const shaped = formatted(schema.format, mode) ?? patterned(schema.pattern);
  const hints = hintsFor(name, mode);
  const plain = fc.string({ minLength: Math.max(min, 1), maxLength: Math.max(Math.min(max, 40), min, 1) });
  const candidates = [shaped, hints.length > 0 ? fc.constantFrom(...hints) : undefined].filter(
    (option) => option !== undefined,
  );
  const likely = candidates.length > 0 ? fc.oneof(...candidates) : plain;
  if (mode === 'strict') return likely;
  const edges = [min - 1, min, max, max + 1]
    .filter((length) => length >= 0)
    .map((length) => 'é'.repeat(length));
  return fc.oneof(
    { weight: 6, arbitrary: likely },
    { weight: 2, arbitrary: plain },
    { weight: 1, arbitrary: fc.constantFrom(...edges) },
    { weight: 1, arbitrary: tainted(likely) },
  );
}

const plainAmount: fc.Arbitrary<string> = fc
  .tuple(fc.integer({ min: 0, max: 10 ** 9 }), fc.stringMatching(/^\d{0,8}$/), fc.boolean())
  .map(([whole, fraction, quoted]) => {
    const text = fraction === '' ? String(whole + 1) : `${whole}.${fraction}`;
    return quoted ? JSON.stringify(text) : text;
  });

function amountText(mode: Mode): fc.Arbitrary<string> {
  if (mode === 'strict')
    return fc.oneof(
      { weight: 8, arbitrary: plainAmount },
      { weight: 1, arbitrary: fc.constantFrom('"10000000000000000"', '1e16', '"0.00000001"', '1e-8') },
    );
  return fc.oneof(
    plainAmount,
    numberText,
    numberText.map((text) => JSON.stringify(text)),
    fc.constantFrom(
      '" 1"',
      '"1,5"',
      '"0x10"',
      '"Infinity"',
      '"NaN"',
      '"-"',
      '"."',
      '""',
      '"+1"',
      '"1_000"',
      '"١٢"',
      '"12.50"',
    ),
  );
}

function integerText(schema: Schema, mode: Mode): fc.Arbitrary<string> {
  const min = typeof schema.minimum === 'number' ? schema.minimum : -1000;
  const max = typeof schema.maximum === 'number' ? schema.maximum : 1000;
  if (mode === 'strict') return fc.integer({ min, max }).map(String);
  return fc.oneof(
    fc.integer({ min: min - 2, max: max + 2 }).map(String),
    fc.constantFrom(`${min}.5`, '1e3', '-0', String(2 ** 53 + 1)),
  );
}

function typesOf(schema: Schema): string[] {
  if (Array.isArray(schema.type)) return schema.type as string[];
  if (typeof schema.type === 'string') return [schema.type];
  if (schema.properties) return ['object'];
  return [];
}

function conformingText(
  raw: Schema | undefined,
  name: string,
  depth: number,
  mode: Mode,
): fc.Arbitrary<string> {
  const schema = resolveRef(raw) ?? {};
  if (Array.isArray(schema.enum))
    return fc.constantFrom(...(schema.enum as unknown[]).map((value) => JSON.stringify(value)));
  const branches = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (Array.isArray(branches) && branches.length > 0) {
    return fc.oneof(...branches.map((branch) => conformingText(branch, name, depth, mode)));
  }
  const typed = typesOf(schema).map((type) => typedText(schema, type, name, depth, mode));
  return typed.length > 0 ? fc.oneof(...typed) : anyJsonText([name]);
}

function typedText(
  schema: Schema,
  type: string,
  name: string,
  depth: number,
  mode: Mode,
): fc.Arbitrary<string> {
  if (schema['x-amount'] !== undefined && type !== 'null') return amountText(mode);
  switch (type) {
    case 'string':
      return stringFor(schema, name, mode).map((text) => JSON.stringify(text));
    case 'integer':
      return integerText(schema, mode);
    case 'number':
      return mode === 'strict' ? fc.integer({ min: 0, max: 1000 }).map(String) : numberText;
    case 'boolean':
      return fc.constantFrom('true', 'false');
    case 'null':
      return fc.constant('null');
    case 'array':
      return arrayText(schema, name, depth, mode);
    case 'object':
      return depth > 4 ? fc.constant('{}') : schemaObjectText(schema, depth + 1, mode);
    default:
      return anyJsonText([name]);
  }
}

function arrayText(schema: Schema, name: string, depth: number, mode: Mode): fc.Arbitrary<string> {
  const minItems = typeof schema.minItems === 'number' ? schema.minItems : 0;
  const maxItems = typeof schema.maxItems === 'number' ? schema.maxItems : 6;
  const item = valueText(schema.items as Schema | undefined, name, depth + 1, mode);
  if (mode === 'loose')
    return fc.array(item, { maxLength: Math.min(maxItems + 1, 8) }).map((items) => `[${items.join(',')}]`);
  const unique = schema.uniqueItems === true;
  return fc
    .array(item, { minLength: minItems, maxLength: Math.max(minItems, Math.min(maxItems, 4)) })
    .map((items) => `[${(unique ? [...new Set(items)] : items).join(',')}]`);
}

/** In `loose` mode, any JSON value sometimes stands in for a conforming one. */
function valueText(
  schema: Schema | undefined,
  name: string,
  depth: number,
  mode: Mode,
): fc.Arbitrary<string> {
  const conforming = conformingText(schema, name, depth, mode);
  if (mode === 'strict') return conforming;
  return fc.oneof({ weight: 15, arbitrary: conforming }, { weight: 1, arbitrary: anyJsonText([name]) });
}

/** The schema's properties, merged with one `allOf` if/then branch (e.g. one requisites scheme). */
function mergedShape(
  schema: Schema,
  branch: number,
): { properties: Record<string, Schema>; required: string[] } {
  const properties = { ...((schema.properties as Record<string, Schema> | undefined) ?? {}) };
  const required = [...((schema.required as string[] | undefined) ?? [])];
  const chosen = ((schema.allOf as Schema[] | undefined) ?? [])[branch];
  const condition = chosen?.if as Schema | undefined;
  const consequence = chosen?.then as Schema | undefined;
  for (const source of [condition, consequence]) {
    Object.assign(properties, (source?.properties as Record<string, Schema> | undefined) ?? {});
    required.push(...((source?.required as string[] | undefined) ?? []));
  }
  return { properties, required };
}

function schemaObjectText(schema: Schema, depth: number, mode: Mode): fc.Arbitrary<string> {
  const branchCount = ((schema.allOf as unknown[] | undefined) ?? []).length;
  const lowest = mode === 'strict' && branchCount > 0 ? 0 : -1;
  return fc.integer({ min: lowest, max: branchCount - 1 }).chain((branch) => {
    const { properties, required } = mergedShape(schema, branch);
    const names = Object.keys(properties);
    const entries = names.map((name) => {
      const entry = valueText(properties[name], name, depth, mode).map((text): [string, string] => [
        name,
        text,
      ]);
      // Required keys: always there when strict, missing one time in twenty when loose.
      if (!required.includes(name)) return fc.option(entry, { freq: 2 });
      return mode === 'strict' ? entry : fc.option(entry, { freq: 20 });
    });
    const extras = fc.array(fc.tuple(keyText(names), anyJsonText(names)), { maxLength: 2 });
    const extra =
      mode === 'strict'
        ? fc.constant([])
        : fc.oneof({ weight: 4, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: extras });
    return fc
      .tuple(fc.tuple(...entries), extra)
      .map(([present, more]) =>
        objectText([...present.filter((entry) => entry !== null), ...(more as [string, string][])]),
      );
  });
}

type Mutation = 'none' | 'truncate' | 'wrap' | 'double' | 'deep';
const mutation = fc.oneof(
  { weight: 8, arbitrary: fc.constant<Mutation>('none') },
  { weight: 2, arbitrary: fc.constant<Mutation>('deep') },
  { weight: 1, arbitrary: fc.constantFrom<Mutation>('truncate', 'wrap', 'double') },
);

function mutate(text: string, kind: Mutation, cut: number, deep: string): string {
  switch (kind) {
    case 'truncate':
      return text.slice(0, cut % Math.max(1, text.length));
    case 'wrap':
      return `[${text}]`;
    case 'double':
      return `${text}${text}`;
    case 'deep':
      // An unknown field passes validation untouched, so its depth reaches everything after it.
      return text.startsWith('{') && text.length > 2 ? `{"deep":${deep},${text.slice(1)}` : text;
    case 'none':
      return text;
  }
}

/** A valid-ish object, sometimes broken on the way out: truncated, wrapped, doubled, or made deep. */
function validishBody(schema: Schema): fc.Arbitrary<string> {
  const object = fc
    .constantFrom<Mode>('strict', 'loose')
    .chain((mode) => schemaObjectText(resolveRef(schema) ?? {}, 0, mode));
  return fc
    .tuple(object, mutation, fc.nat(), deepValue)
    .map(([text, kind, cut, deep]) => mutate(text, kind, cut, deep));
}

function bodyArbitrary(operation: Operation): fc.Arbitrary<string | undefined> {
  const names = Object.keys((resolveRef(operation.bodySchema)?.properties as object | undefined) ?? {});
  const options: fc.WeightedArbitrary<string | undefined>[] = [
    { weight: 3, arbitrary: anyJsonText(names) },
    { weight: 1, arbitrary: rawText },
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: deepValue },
  ];
  if (operation.bodySchema) options.push({ weight: 12, arbitrary: validishBody(operation.bodySchema) });
  return fc.oneof(...options);
}

// ---------------------------------------------------------------------------------------------
// Parameters, query strings and headers.

const GARBAGE_SEGMENTS = [
  '0',
  '-1',
  'null',
  'undefined',
  '%25',
  '%zz',
  '..',
  '%2e%2e',
  'a'.repeat(3000),
  '%C3%A4',
  '%00',
  '%F0%9F%98%80',
  '00000000-0000-0000-0000-000000000000',
  'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF',
  '%7B00000000-0000-0000-0000-000000000000%7D',
  '1%20OR%201=1',
  'me',
  'spaces',
];

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** encodeURIComponent, which throws on a lone surrogate: those become U+FFFD first. */
function encodeSegment(text: string): string {
  return encodeURIComponent(text.replace(LONE_SURROGATE, '\ufffd'));
}

const garbageSegment: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...GARBAGE_SEGMENTS),
  fc.string({ minLength: 1, maxLength: 40 }).map(encodeSegment),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }).map(encodeSegment),
);

function idPool(name: string, isDelete: boolean): string[] {
  const pool = [...(knownIds[name] ?? []), ...harvestedIds];
  return isDelete ? pool.filter((id) => !protectedIds.has(id)) : pool;
}

function pathParamArbitrary(operation: Operation, name: string, isLast: boolean): fc.Arbitrary<string> {
  const isSpace = name === 'id' && operation.path.startsWith('/app/api/spaces/{id}');
  // A DELETE aimed at the space itself (if one is ever added) must not remove the fuzzer's world.
  const spaceAllowed = isSpace && !(operation.method === 'DELETE' && isLast);
  const pool = () => {
    const ids = idPool(name, operation.method === 'DELETE');
    return ids.length > 0 ? fc.constantFrom(...ids) : fc.uuid();
  };
  return fc.oneof(
    { weight: spaceAllowed ? 12 : 0, arbitrary: fc.constant(spaceId) },
    { weight: isSpace ? 0 : 3, arbitrary: fc.constant(null).chain(pool) },
    { weight: 2, arbitrary: fc.uuid() },
    { weight: 2, arbitrary: garbageSegment },
  );
}

function pathArbitrary(operation: Operation): fc.Arbitrary<string> {
  const names = [...operation.path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!);
  if (names.length === 0) return fc.constant(operation.path);
  const parts = names.map((name, index) => pathParamArbitrary(operation, name, index === names.length - 1));
  return fc.tuple(...parts).map((values) => {
    let path = operation.path;
    names.forEach((name, index) => {
      path = path.replace(`{${name}}`, values[index]!);
    });
    return path;
  });
}

function queryArbitrary(operation: Operation): fc.Arbitrary<string> {
  const params = operation.parameters.filter((parameter) => parameter.in === 'query');
  const value = (parameter: Parameter) =>
    fc.oneof(
      stringFor(parameter.schema ?? {}, parameter.name, 'strict'),
      stringFor(parameter.schema ?? {}, parameter.name, 'loose'),
      fc.constantFrom('', '-1', '0', '501', '1e2', '%zz', '99999999999999999999'),
      fc.string({ maxLength: 20 }),
    );
  const pairs = params.map((parameter) =>
    fc
      .option(fc.array(value(parameter), { minLength: 1, maxLength: 2 }), { freq: 2 })
      .map((values) =>
        (values ?? []).map((text) => `${parameter.name}=${text === '%zz' ? text : encodeSegment(text)}`),
      ),
  );
  const extra = fc
    .option(fc.tuple(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 })), { freq: 5 })
    .map((pair) => (pair ? [`${encodeSegment(pair[0])}=${encodeSegment(pair[1])}`] : []));
  return fc.tuple(extra, ...pairs).map((lists) => {
    const all = lists.flat();
    return all.length > 0 ? `?${all.join('&')}` : '';
  });
}

const contentType = fc.oneof(
  { weight: 12, arbitrary: fc.constant('application/json') },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'application/json; charset=latin1',
      'application/json;;',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/jsonx',
    ),
  },
);

const idempotencyKey = fc.option(
  fc.oneof(
    fc.constantFrom('fuzz-1', 'fuzz-2'),
    fc.string({ unit: 'grapheme-ascii', maxLength: 20 }),
    fc.constant('k'.repeat(300)),
  ),
  { freq: 3 },
);

const credential: fc.Arbitrary<Credential> = fc.oneof(
  { weight: 16, arbitrary: fc.constant<Credential>('own') },
  { weight: 1, arbitrary: fc.constantFrom<Credential>('none', 'garbage', 'swapped') },
);

const garbageAuthorization = fc.oneof(
  fc.constantFrom(
    'Bearer',
    'Bearer ',
    'Basic YTpi',
    'bearer x',
    `Bearer oit_${'A'.repeat(43)}`,
    `Bearer ${'x'.repeat(5000)}`,
  ),
  fc
    .string({ unit: 'grapheme-ascii', maxLength: 60 })
    .map((text) => `Bearer ${text.replace(/[^\x20-\x7e]/g, '')}`),
);

function requestArbitrary(operation: Operation): fc.Arbitrary<FuzzRequest> {
  const printable = (request: FuzzRequest): FuzzRequest =>
    Object.assign(request, {
      [fc.toStringMethod]: () =>
        JSON.stringify({
          ...request,
          url: shorten(request.url, 300),
          payload: shorten(request.payload, 300),
        }),
    });
  return fc
    .record({
      url: fc
        .tuple(pathArbitrary(operation), queryArbitrary(operation))
        .map(([path, query]) => `${path}${query}`),
      payload: bodyArbitrary(operation),
      contentType,
      idempotencyKey: idempotencyKey.map((value) => value ?? undefined),
      credential,
      garbageAuthorization,
    })
    .map(printable);
}

// ---------------------------------------------------------------------------------------------
// Sending and judging.

type Caller = { key?: string; session?: string };

function authorization(request: FuzzRequest, caller: Caller): Record<string, string> {
  switch (request.credential) {
    case 'own':
      return {};
    case 'none':
      return {};
    case 'garbage':
      return { authorization: request.garbageAuthorization };
    case 'swapped':
      return { authorization: `Bearer ${caller.key ? owner.token : key.key}` };
  }
}

async function send(
  operation: Operation,
  request: FuzzRequest,
  caller: Caller,
): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = authorization(request, caller);
  if (request.payload !== undefined && request.contentType) headers['content-type'] = request.contentType;
  if (request.idempotencyKey !== undefined) headers['idempotency-key'] = request.idempotencyKey;
  const own = request.credential === 'own' ? caller : {};
  return h.inject({
    method: operation.method as 'GET',
    url: request.url,
    ...own,
    headers,
    ...(request.payload === undefined ? {} : { payload: request.payload }),
  });
}

function isErrorShape(body: unknown): boolean {
  if (body === null || typeof body !== 'object') return false;
  const record = body as Record<string, unknown>;
  if (typeof record.error === 'string' && typeof record.detail === 'string') return true;
  return Array.isArray(record.detail) && record.error === undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function shorten(text: string | undefined, length = 600): string {
  if (text === undefined) return '<no body>';
  if (text.length <= length) return text;
  return `${text.slice(0, length / 2)} … ${text.slice(-length / 2)} (${text.length} characters in all)`;
}

function report(
  operation: Operation,
  request: FuzzRequest,
  res: LightMyRequestResponse,
  problem: string,
): string {
  return [
    problem,
    `${operation.method} ${shorten(request.url, 300)}`,
    `credential: ${request.credential}; content-type: ${request.contentType}; idempotency-key: ${request.idempotencyKey ?? '-'}`,
    `body: ${shorten(request.payload)}`,
    `answer: ${res.statusCode} ${res.headers['content-type'] ?? ''} ${shorten(res.body)}`,
  ].join('\n');
}

const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Remembers ids from successful answers, so later path parameters can name real rows. */
function harvest(value: unknown, field = ''): void {
  if (harvestedIds.size >= 200 || value === null || typeof value !== 'object') {
    if (
      typeof value === 'string' &&
      (field === 'id' || field.endsWith('_id')) &&
      UUID_SHAPE.test(value) &&
      !protectedIds.has(value)
    ) {
      harvestedIds.add(value);
    }
    return;
  }
  for (const [name, inner] of Object.entries(value)) harvest(inner, Array.isArray(value) ? field : name);
}

/** 4xx answers outside the two error shapes, one example per route, status and error. */
const shapeProblems = new Map<string, string>();
/** Answers per route and status, printed with FUZZ_VERBOSE=1 to see how deep the fuzzing reaches. */
const statusCounts = new Map<string, Map<number, number>>();

function count(operation: Operation, status: number): void {
  const route = `${operation.method} ${operation.path}`;
  const counts = statusCounts.get(route) ?? new Map<number, number>();
  counts.set(status, (counts.get(status) ?? 0) + 1);
  statusCounts.set(route, counts);
}

function checkShape(
  operation: Operation,
  request: FuzzRequest,
  res: LightMyRequestResponse,
  body: unknown,
): void {
  if (res.statusCode < 400 || isErrorShape(body)) return;
  const code =
    (body as { code?: unknown; error?: unknown } | undefined)?.code ?? (body as { error?: unknown })?.error;
  const signature = `${operation.method} ${operation.path} ${res.statusCode} ${String(code)}`;
  if (!shapeProblems.has(signature)) {
    shapeProblems.set(
      signature,
      report(operation, request, res, 'a 4xx answer that is not {error, detail} nor {detail: [...]}'),
    );
  }
}

/** True when the body, read as JSON, holds half a UTF-16 surrogate pair in any string or key. */
function holdsLoneSurrogate(payload: string | undefined): boolean {
  if (payload === undefined) return false;
  try {
    parseJsonBody(payload);
  } catch (error) {
    return error instanceof InvalidJsonError && error.type === 'string_unicode';
  }
  return false;
}

/** Routes whose first 5xx was already printed (fast-check then prints the shrunk one). */
const printedFailures = new Set<string>();

async function judge(operation: Operation, request: FuzzRequest, caller: Caller): Promise<void> {
  const res = await send(operation, request, caller);
  count(operation, res.statusCode);
  if (res.statusCode >= 500) {
    const message = report(operation, request, res, `5xx answer (request id ${res.headers['x-request-id']})`);
    const route = `${operation.method} ${operation.path}`;
    if (!printedFailures.has(route)) console.error(`first failure, before shrinking:\n${message}`);
    printedFailures.add(route);
    throw new Error(message);
  }
  const body = parseJson(res.body);
  checkShape(operation, request, res, body);
  // A GET's body is never read; every other method's body is, before its handler runs.
  if (operation.method !== 'GET' && res.statusCode < 300 && holdsLoneSurrogate(request.payload)) {
    throw new Error(report(operation, request, res, 'a body holding half a surrogate pair was accepted'));
  }
  if (res.statusCode < 300 && request.credential === 'own') harvest(body);
}

async function callerFor(operation: Operation): Promise<Caller> {
  if (operation.path.startsWith('/integration')) {
    // A fresh space and key per route: the 240-per-minute key limit then never hides a route.
    const space = await h.createSpace(owner);
    const routeKey: Key = await h.issueKey(owner, space, { scopes: ALL_SCOPES });
    protectedIds.add(space).add(routeKey.id);
    return { key: routeKey.key };
  }
  return { session: owner.token };
}

async function fuzz(operation: Operation, caller: () => Promise<Caller>, numRuns: number): Promise<void> {
  const property = fc.asyncProperty(requestArbitrary(operation), async (request) =>
    judge(operation, request, await caller()),
  );
  await fc.assert(property, { numRuns, interruptAfterTimeLimit: ROUTE_TIME_LIMIT_MS, seed: seedFromEnv() });
}

function seedFromEnv(): number | undefined {
  const seed = process.env.FUZZ_SEED;
  return seed === undefined ? undefined : Number(seed);
}

// ---------------------------------------------------------------------------------------------

const operations = listOperations();
const isLogout = (operation: Operation) =>
  operation.method === 'POST' && operation.path === '/app/api/logout';

describe('HTTP fuzzing from the OpenAPI document', () => {
  it('finds the routes to fuzz in /openapi.json', () => {
    const names = operations.map((operation) => `${operation.method} ${operation.path}`);
    expect(names).toContain('GET /integration/ping');
    expect(names.some((name) => name.startsWith('POST /app/api/'))).toBe(true);
    expect(operations.filter((operation) => operation.bodySchema).length).toBeGreaterThan(3);
  });

  for (const operation of operations.filter((candidate) => !isLogout(candidate))) {
    it(
      `never answers 5xx to random bodies, parameters and headers on ${operation.method} ${operation.path}`,
      async () => {
        const caller = await callerFor(operation);
        await fuzz(operation, async () => caller, RUNS_PER_ROUTE);
      },
      ROUTE_TEST_TIMEOUT_MS,
    );
  }

  const logout = operations.find(isLogout);
  if (logout) {
    it(
      'never answers 5xx on POST /app/api/logout (each run logs a separate person in afresh)',
      async () => {
        const leaver: User = await h.signup('Leaver');
        const freshSession = async (): Promise<Caller> => {
          const res = await h.inject({
            method: 'POST',
            url: '/app/api/login',
            payload: { email: leaver.email, password: leaver.password },
          });
          return { session: res.json().session_token };
        };
        await fuzz(logout, freshSession, RUNS_LOGOUT);
      },
      ROUTE_TEST_TIMEOUT_MS,
    );
  }

  it('answers every refusal (4xx) as JSON in the {error, detail} or {detail: [...]} shape', () => {
    if (process.env.FUZZ_VERBOSE) {
      for (const [route, counts] of statusCounts) console.info(route, Object.fromEntries(counts));
    }
    const problems = [...shapeProblems.values()];
    expect(problems, `refusals outside the error shapes:\n\n${problems.join('\n\n')}`).toEqual([]);
  });

  it('kept the fuzzing meaningful: the owner’s session and membership survived it', async () => {
    const me = await h.inject({ method: 'GET', url: '/app/api/me', session: owner.token });
    expect(me.statusCode, me.body).toBe(200);
    const space = await h.inject({ method: 'GET', url: `/app/api/spaces/${spaceId}`, session: owner.token });
    expect(space.statusCode, space.body).toBe(200);
  });
});
