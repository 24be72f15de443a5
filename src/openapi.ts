import type { BookChannelEvent } from './core/events.ts';
import type { DocumentExtras, OperationExample } from './platform/http/openapi.ts';

// What the OpenAPI document says beyond the routes' own schemas: the feature tags, the webhooks
// of both channels (spec §6) and one example per operation. The examples are values the tests
// send (test/charges.http.test.ts, test/payment-requests.http.test.ts, …) and answers the server
// gave them; Redocly's lint checks each one against its schema.

type Json = Record<string, unknown>;

export const TAGS: DocumentExtras['tags'] = [
  { name: 'Ping', description: 'Check an integration key.' },
  {
    name: 'Payment requests',
    description: 'Ask for a payment in USDC, paid on its own page by a person or a machine.',
  },
  { name: 'Charges', description: 'Charge calls to a client’s prepaid balance; top it up when it runs out.' },
  {
    name: 'Invoices',
    description: 'Mirror the seller’s invoices and quotes, send them and record their payments.',
  },
  { name: 'Contacts', description: 'The people and companies a space deals with.' },
  {
    name: 'Accounts',
    description: 'Where a space’s money is: bank, card, cash, crypto and platform accounts.',
  },
  { name: 'Push', description: 'Rows booked from other systems in batches.' },
  { name: 'Pay page', description: 'The public page of a payment request, for people and x402 machines.' },
  {
    name: 'x402 facilitator',
    description: 'Verify and settle x402 payments for an existing x402 middleware.',
  },
  { name: 'Users', description: 'Sign up, log in and sessions of the web app.' },
  { name: 'Spaces', description: 'Spaces (sets of books), their members and closed periods.' },
  { name: 'Keys', description: 'Integration keys (oit_) and their webhook addresses.' },
  { name: 'Client credits', description: 'Prepaid balances per client_ref.' },
  { name: 'Endpoints', description: 'The resources paid calls are filed under.' },
  { name: 'Sites', description: 'Origins proven to be the seller’s, where pay pages may be framed.' },
  { name: 'Webhooks', description: 'Book webhook subscriptions and their delivery journal.' },
  { name: 'Notifications', description: 'Notices the server raised for a space.' },
  { name: 'Development', description: 'Rails for a local chain; refused in production.' },
  {
    name: 'Money out',
    description: 'Outgoing payments, their approval and policy rules, transfers and sanctions screening.',
  },
  {
    name: 'Chat',
    description:
      'Client chat groups connected through the Telegram bot: link codes, questions, files, answers.',
  },
  { name: 'Ledger', description: 'The books’ entries with their postings, and income per endpoint per day.' },
  {
    name: 'Agents',
    description:
      'Agents (oat_ tokens) act inside a fence their owner drew; writes outside it wait as proposals a person approves.',
  },
];

const signatureHeaders = (withVersion: boolean) => [
  {
    name: 'X-Service-Signature',
    in: 'header',
    required: true,
    description:
      'sha256= and the hex HMAC-SHA256 of the raw body bytes under the secret. Verify on the raw bytes, in constant time.',
    schema: { type: 'string', pattern: '^sha256=[0-9a-f]{64}$' },
  },
  {
    name: 'X-Service-Event',
    in: 'header',
    required: true,
    description: 'The event name, equal to the body’s event field.',
    schema: { type: 'string' },
  },
  {
    name: 'X-Service-Event-Id',
    in: 'header',
    required: true,
    description: 'The same on every attempt of one delivery: use it to drop repeats.',
    schema: { type: 'string', format: 'uuid' },
  },
  {
    name: 'X-Service-Delivery-Attempt',
    in: 'header',
    required: true,
    description: withVersion ? 'From 1 to 8.' : 'From 1 to 3.',
    schema: { type: 'integer', minimum: 1 },
  },
  {
    name: 'webhook-id',
    in: 'header',
    required: true,
    description: 'Standard Webhooks: the event id, equal to X-Service-Event-Id.',
    schema: { type: 'string', format: 'uuid' },
  },
  {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    description: 'Standard Webhooks: the send time in Unix seconds.',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description:
      'Standard Webhooks: v1, and the base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<raw body>" under the secret (the bytes of the base64 after whsec_). For 24 hours after a rotation, two signatures separated by a space: under the new secret and the replaced one.',
    schema: { type: 'string', pattern: '^v1,[A-Za-z0-9+/=]+( v1,[A-Za-z0-9+/=]+)*$' },
  },
];

const text = { type: 'string' };
const uuid = { type: 'string', format: 'uuid' };
const nullable = (schema: Json) => ({ ...schema, type: [schema.type, 'null'] });
const decimal = { type: 'string', pattern: '^[0-9]+(\\.[0-9]+)?$', description: 'A decimal string.' };

/** The key channel: the address set on an integration key (spec §6.1). */
const KEY_EVENTS: Record<string, { fires: string; data: Record<string, Json> }> = {
  'payment_request.paid': {
    fires: 'A request the server minted (including a charge’s top-up) settled.',
    data: {
      payment_request_id: uuid,
      token: text,
      resource_id: nullable(uuid),
      amount: decimal,
      asset: text,
      network: text,
      tx_hash: nullable(text),
      payer: nullable(text),
      settled_at: { type: 'string', format: 'date-time' },
      memo: text,
    },
  },
  'invoice.paid': {
    fires: 'A mirrored invoice is settled in full by any road.',
    data: {
      invoice_id: uuid,
      number: text,
      currency: text,
      total: decimal,
      total_paid: decimal,
      via: { type: 'string', enum: ['manual', 'settlement', 'card', 'write_off'] },
    },
  },
  'invoice.claimed_paid': {
    fires: 'The client pressed “I paid” in their chat; nothing is booked until someone confirms.',
    data: { invoice_id: uuid, contact_id: uuid, client: text, number: text, total: decimal, currency: text },
  },
  'invoice.deferral_requested': {
    fires: 'The client asked for more time.',
    data: {
      invoice_id: uuid,
      contact_id: uuid,
      days: { type: 'integer' },
      due: { type: 'string', format: 'date' },
      client: text,
      number: text,
      total: decimal,
      currency: text,
    },
  },
  'client.question': {
    fires: 'The client wrote to the bot.',
    data: { contact_id: uuid, client: text, text },
  },
  'client.file': {
    fires: 'The client dropped a file, filed under their contact.',
    data: { contact_id: uuid, client: text, name: text },
  },
};

const movement = {
  transaction_id: uuid,
  account_id: uuid,
  amount: decimal,
  currency: text,
  kind: { type: 'string', enum: ['income', 'expense', 'transfer'] },
  origin: { type: 'string', enum: ['rail', 'manual', 'import', 'internal'] },
  occurred_on: { type: 'string', format: 'date' },
};

/** The book channel: subscriptions added in the app (spec §6.2). */
const BOOK_EVENTS: Record<BookChannelEvent, { fires: string; fields: Record<string, Json> }> = {
  'money.in': {
    fires: 'A row landed that increases an account.',
    fields: { ...movement, direction: { type: 'string', const: 'in' } },
  },
  'money.out': {
    fires: 'A row landed that decreases an account.',
    fields: { ...movement, direction: { type: 'string', const: 'out' } },
  },
  'invoice.paid': {
    fires: 'An invoice the space issued is settled in full; once per invoice.',
    fields: { invoice_id: uuid, number: text, amount: decimal, currency: text },
  },
  'payout.executed': {
    fires: 'A payment left on a rail and the rail confirmed.',
    fields: { payment_id: uuid, amount: decimal, currency: text, rail: text, transaction_id: uuid },
  },
  'payment.awaiting_approval': {
    fires: 'A payment met an approval rule and waits for signatures.',
    fields: { payment_id: uuid, amount: decimal, currency: text, required_approvals: { type: 'integer' } },
  },
  'payment.blocked': {
    fires: 'A payment was refused before leaving (a policy rule or a screening hold).',
    fields: { payment_id: uuid, amount: decimal, currency: text, reason: text },
  },
};

function camel(event: string): string {
  return event
    .split(/[._]/)
    .map((part, index) => (index === 0 ? part : part.charAt(0).toUpperCase() + part.slice(1)))
    .join('');
}

function pascal(event: string): string {
  const name = camel(event);
  return name.charAt(0).toUpperCase() + name.slice(1);
}

const deliveryAnswers = {
  '2XX': { description: 'Delivered: any 2xx within ten seconds.' },
  '4XX': { description: 'Not delivered: the attempt is retried on the channel’s schedule.' },
};

function webhook(operation: Json): Json {
  return { post: { ...operation, security: [{ webhookSignature: [] }], responses: deliveryAnswers } };
}

function keyWebhooks(): Json {
  return Object.fromEntries(
    Object.entries(KEY_EVENTS).map(([event, { fires, data }]) => [
      `key.${event}`,
      webhook({
        operationId: `keyWebhook${pascal(event)}`,
        summary: `${event} (key channel)`,
        description: `${fires} Sent to the webhook address of the integration key: three attempts (at once, after 5 s, after 30 s), signed with the key’s webhook secret. Amounts in data are decimal strings without trailing zeros.`,
        tags: ['Keys'],
        parameters: signatureHeaders(false),
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                title: `KeyEvent${pascal(event)}`,
                type: 'object',
                required: ['event', 'space_id', 'at', 'data'],
                properties: {
                  event: { type: 'string', const: event },
                  space_id: uuid,
                  at: { type: 'string', format: 'date-time' },
                  data: { type: 'object', properties: data },
                },
              },
            },
          },
        },
      }),
    ]),
  );
}

function bookWebhooks(): Json {
  return Object.fromEntries(
    Object.entries(BOOK_EVENTS).map(([event, { fires, fields }]) => [
      `book.${event}`,
      webhook({
        operationId: `bookWebhook${pascal(event)}`,
        summary: `${event} (book subscription)`,
        description: `${fires} Sent to each subscription of the space that chose this event (or no events): at least once, eight attempts over about a day, signed with the subscription’s secret. Amounts carry eight decimals.`,
        tags: ['Webhooks'],
        parameters: signatureHeaders(true),
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                title: `BookEvent${pascal(event)}`,
                type: 'object',
                required: ['event', 'version', 'at', ...Object.keys(fields)],
                properties: {
                  event: { type: 'string', const: event },
                  version: { type: 'integer', const: 1 },
                  at: { type: 'string', format: 'date-time' },
                  ...fields,
                },
              },
            },
          },
        },
      }),
    ]),
  );
}

export const WEBHOOKS: Json = { ...keyWebhooks(), ...bookWebhooks() };

const SPACE_ID = '0b9a3f52-55c4-4f0e-9d8c-3c1f9e0d7a21';
const ACCOUNT_ID = '5f2e8c1a-3b7d-4e9f-a6c2-1d8b4e7f0a93';
const REQUEST_ID = '9c4d2e7b-1a5f-4c8e-b3d6-7e2a9f1c5b80';
const NOW = '2026-11-24T12:00:00.000Z';

const paymentRequest = {
  id: REQUEST_ID,
  token: 'pr_8fK2mQ7xWd3LbN5vR1tY',
  url: 'https://tollbook.example.org/pay/pr_8fK2mQ7xWd3LbN5vR1tY',
  amount: '2.50000000',
  amount_due: '2.50000000',
  currency: 'USDC',
  status: 'active',
  created_at: NOW,
  amount_received: null,
  expires_at: null,
  memo: '',
  resource_id: null,
};

const SAVINGS_ID = '7a3d9e2f-1c4b-4d8a-b6e5-2f9c0a7d1e48';

const outgoingPayment = {
  id: '6c1e9a4f-2d7b-4e3c-8a5f-9b0d2e7c4a16',
  status: 'executed',
  account_id: ACCOUNT_ID,
  amount: '120.50000000',
  currency: 'USD',
  rail: 'book',
  payee: 'Acme Supplies',
  destination: '',
  contact_id: null,
  note: 'Rent for May',
  occurred_on: '2026-05-01',
  maker_id: '1f4a7c2e-8b3d-4c6a-9e5f-0d2b7a9c3e51',
  approvals: 0,
  approved_by: [],
  required_approvals: 0,
  blocked_reason: null,
  release_reason: null,
  reject_reason: null,
  reference: null,
  transaction_id: '8d2f6b1a-5c9e-4a7d-b3f0-1e6c4a8d2b97',
  tx_hash: null,
  created_at: NOW,
  approved_at: NOW,
  executed_at: NOW,
};

/** One example per operation id: the request a test sends and the answer it reads back. */
export const EXAMPLES: Record<string, OperationExample> = {
  ping: { response: { status: 200, body: { space_id: SPACE_ID, scopes: ['payments', 'invoices'] } } },
  createPaymentRequest: {
    request: { account_id: ACCOUNT_ID, amount: '2.5' },
    response: { status: 201, body: paymentRequest },
  },
  getPaymentRequest: { response: { status: 200, body: paymentRequest } },
  createCharge: {
    request: { client_ref: 'contract', account_id: ACCOUNT_ID, amount: '0.01' },
    response: {
      status: 200,
      body: {
        paid: true,
        client_ref: 'contract',
        balance_usd: '4.99000000',
        charged_usd: '0.01',
        entry_id: '2d7f4a9c-6b1e-4f3a-8c5d-0e9b7a2f6c14',
        top_up: null,
        balance_url: null,
      },
    },
  },
  createContact: { request: { name: 'Ada Client', email: 'ada@example.org' } },
  createAccount: { request: { kind: 'bank', name: 'Operating bank', currency: 'USD' } },
  createSpaceContact: { request: { name: 'Ada Client', email: 'ada@example.org' } },
  createSpaceAccount: { request: { kind: 'bank', name: 'Operating bank', currency: 'USD' } },
  pushTransactions: {
    request: {
      rows: [
        {
          external_id: 'stripe-ch_1',
          account_key: 'stripe',
          currency: 'USD',
          occurred_on: '2026-03-02',
          amount: '12.5',
          payee: 'Acme',
          note: 'March subscription',
        },
      ],
    },
  },
  sendInvoice: { request: { via: 'none' } },
  closePeriod: { request: { through: '2026-03-31' } },
  signUp: { request: { email: 'ada@example.org', password: 'correct horse battery staple', name: 'Ada' } },
  logIn: { request: { email: 'ada@example.org', password: 'correct horse battery staple' } },
  createSpace: { request: { name: 'Test space', base_currency: 'USD', plan: 'pro' } },
  requestPasswordReset: {
    request: { email: 'ada@example.org' },
    response: {
      status: 202,
      body: {
        detail:
          'If an account uses this address, a link to set a new password is on its way; it works for 30 minutes.',
      },
    },
  },
  createPayment: {
    request: {
      account_id: ACCOUNT_ID,
      rail: 'book',
      payee: 'Acme Supplies',
      amount: '120.5',
      note: 'Rent for May',
      occurred_on: '2026-05-01',
    },
    response: { status: 201, body: outgoingPayment },
  },
  rejectPayment: { request: { reason: 'Duplicate invoice' } },
  createApprovalRule: { request: { min_amount: '500', currency: 'USD', required_approvals: 3 } },
  createPolicyRule: { request: { kind: 'max_per_day', amount: '100', currency: 'USD' } },
  createTransfer: {
    request: {
      from_account_id: ACCOUNT_ID,
      to_account_id: SAVINGS_ID,
      amount: '250.25',
      occurred_on: '2026-06-01',
      note: 'Move to savings',
    },
    response: {
      status: 201,
      body: {
        transaction_id: '3e8b1c6d-4f2a-4b9e-9d7c-5a1f0e2b8c63',
        from_account_id: ACCOUNT_ID,
        to_account_id: SAVINGS_ID,
        amount: '250.25000000',
        currency: 'USD',
        to_amount: '250.25000000',
        to_currency: 'USD',
        occurred_on: '2026-06-01',
        note: 'Move to savings',
      },
    },
  },
};

const tokenParameter = {
  name: 'token',
  in: 'path',
  required: true,
  description: 'The payment request’s token (pr_…), from its url.',
  schema: { type: 'string', minLength: 1, maxLength: 100 },
};

const paymentRequired = {
  title: 'PaymentRequired',
  type: 'object',
  description: 'The x402 quote: what the payer may sign to pay the request (x402 version 2).',
  required: ['x402Version', 'resource', 'accepts'],
  properties: {
    x402Version: { type: 'integer', const: 2 },
    error: { type: 'string' },
    resource: {
      type: 'object',
      properties: { url: text, description: text, mimeType: text },
    },
    accepts: {
      type: 'array',
      description: 'One entry per network and token the request can be paid with; empty when none fits.',
      items: {
        type: 'object',
        properties: {
          scheme: { type: 'string', const: 'exact' },
          network: { type: 'string', description: 'CAIP-2, e.g. eip155:8453.' },
          amount: { type: 'string', description: 'Base units of the token.' },
          asset: text,
          payTo: text,
          maxTimeoutSeconds: { type: 'integer' },
          extra: { type: 'object' },
        },
      },
    },
  },
};

const encodedHeader = (what: string) => ({
  description: `${what}, as base64 of its JSON.`,
  schema: { type: 'string' },
});

/**
 * The pay page (GET /pay/{token}) answers people with HTML and machines with x402; the card post
 * is the page's own form. They are documented here rather than through route schemas because a
 * response schema would make Fastify reshape the HTML and x402 answers.
 */
export const PAY_PAGE_PATHS: Json = {
  '/pay/{token}': {
    get: {
      operationId: 'getPayPage',
      summary: 'Open a payment request’s page, or pay it with x402',
      description:
        'A person gets the HTML page. A machine (Accept: application/json, or a PAYMENT-SIGNATURE header) gets x402: ' +
        'without a payment, 402 with the quote in the body and in PAYMENT-REQUIRED; with a valid PAYMENT-SIGNATURE the ' +
        'transfer is settled on chain and the answer is 200 with the paid request and PAYMENT-RESPONSE. A request that is ' +
        'already paid answers 200 with its record; an expired or cancelled one 409. An authorization is settled once; a replay is refused.',
      tags: ['Pay page'],
      security: [],
      parameters: [
        tokenParameter,
        {
          name: 'PAYMENT-SIGNATURE',
          in: 'header',
          required: false,
          description: 'An x402 payment payload (base64 of its JSON), signed by the payer.',
          schema: { type: 'string' },
        },
      ],
      responses: {
        '200': {
          description: 'Paid: the request’s record (to a machine) or the page (to a person).',
          headers: { 'PAYMENT-RESPONSE': encodedHeader('The settlement (transaction hash, network, payer)') },
          content: {
            'application/json': { schema: { $ref: '#/components/schemas/PaymentRequestOut' } },
            'text/html': { schema: { type: 'string' } },
          },
        },
        '402': {
          description: 'Payment required: the x402 quote.',
          headers: { 'PAYMENT-REQUIRED': encodedHeader('The same quote as the body') },
          content: { 'application/json': { schema: paymentRequired } },
        },
        '404': { $ref: '#/components/responses/NotFound' },
        '409': { $ref: '#/components/responses/Conflict' },
        '422': { $ref: '#/components/responses/UnprocessableEntity' },
      },
    },
  },
  '/pay/{token}/card': {
    post: {
      operationId: 'payByCard',
      summary: 'Pay a payment request by card',
      description:
        'The page’s card form: settles the whole open amount by card. Development and test only (the test card 4242 4242 4242 4242 pays, 4000 0000 0000 0002 is declined); refused when no card rail is configured.',
      tags: ['Pay page'],
      security: [],
      parameters: [tokenParameter],
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              title: 'CardIn',
              type: 'object',
              required: ['number', 'exp', 'cvc'],
              properties: {
                number: { type: 'string', minLength: 1, maxLength: 30 },
                exp: { type: 'string', minLength: 1, maxLength: 7, description: 'MM/YY' },
                cvc: { type: 'string', minLength: 1, maxLength: 4 },
              },
            },
            example: { number: '4242424242424242', exp: '12/34', cvc: '123' },
          },
        },
      },
      responses: {
        '200': {
          description: 'Paid.',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/PaymentRequestOut' } } },
        },
        '402': {
          description: 'The card was declined; nothing was booked.',
          content: {
            'application/json': {
              schema: { $ref: '#/components/schemas/ErrorBody' },
              example: { error: 'card_declined', detail: 'The card was declined.' },
            },
          },
        },
        '404': { $ref: '#/components/responses/NotFound' },
        '409': { $ref: '#/components/responses/Conflict' },
        '422': { $ref: '#/components/responses/UnprocessableEntity' },
      },
    },
  },
};
