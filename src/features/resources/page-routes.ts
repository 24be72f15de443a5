import type { FastifyInstance } from 'fastify';
import { AppError } from '../../core/errors.ts';
import { DateOnly, Type } from '../../platform/http/schema-kit.ts';
import { typedRoutes } from '../../platform/http/typed.ts';
import { hrefWith } from '../../platform/web/components.tsx';
import { formRoute, runForm } from '../../platform/web/forms.ts';
import { seeOther, sendPage, shellOf } from '../../platform/web/plumbing.ts';
import { bookPath } from '../../platform/web/shell.ts';
import { downloadReceipt } from '../receipts/index.ts';
import type { HttpMethod } from './domain.ts';
import { EndpointsPage, IncomePage, IncomePaymentsPage } from './pages.tsx';
import { CardListQuery } from './routes.ts';
import * as service from './service.ts';

// Page routes of Endpoints and Income: the same service calls as the app API.

const BookParams = Type.Object({ book_id: Type.String({ maxLength: 64 }) });
const CardParams = Type.Object({
  book_id: Type.String({ maxLength: 64 }),
  resource_id: Type.String({ format: 'uuid' }),
});
const ReceiptParams = Type.Object({
  book_id: Type.String({ maxLength: 64 }),
  receipt_id: Type.String({ format: 'uuid' }),
});
const FindableForm = Type.Object({ findable: Type.Boolean() });
// An empty field arrives absent: an absent description or JSON field clears it.
const JsonText = Type.Optional(Type.String({ maxLength: 20000 }));
const BazaarForm = Type.Object({
  description: Type.Optional(Type.String({ maxLength: 1000 })),
  http_method: Type.Optional(Type.String({ pattern: '^(GET|HEAD|DELETE|POST|PUT|PATCH)$' })),
  input_schema: JsonText,
  input_example: JsonText,
  output_schema: JsonText,
  output_example: JsonText,
});

const LABELS: Record<string, string> = {
  input_schema: 'The input schema',
  input_example: 'The input example',
  output_schema: 'The output schema',
  output_example: 'The output example',
};

/** A JSON object typed in a form field: null when empty, refused (naming the field) otherwise. */
function jsonObjectOf(field: string, text: string | undefined): Record<string, unknown> | null {
  if (text === undefined || text.trim() === '') return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new AppError('invalid_request', `${LABELS[field] ?? field} must be a JSON object.`, { field });
  return value as Record<string, unknown>;
}
const Cursor = Type.Optional(Type.String({ minLength: 1, maxLength: 400 }));
const IncomeQuery = Type.Object({
  ref: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  cursor: Cursor,
});
const PaymentsQuery = Type.Object({
  ref: Type.String({ minLength: 1, maxLength: 200 }),
  day: DateOnly(),
  currency: Type.String({ pattern: '^[A-Z]{3,5}$' }),
  cursor: Cursor,
});

export function registerResourcePages(server: FastifyInstance, deps: service.ResourcesDeps) {
  const scope = typedRoutes(server);
  const endpoints = '/app/books/:book_id/endpoints';
  scope.get(
    endpoints,
    { schema: { hide: true, params: BookParams, querystring: CardListQuery } },
    async (request, reply) => {
      const shell = shellOf(request);
      const query = request.query;
      const page = await service.listEndpoints(deps, shell.user.id, shell.book.id, query);
      return sendPage(reply, EndpointsPage({ shell, page, cursor: query.cursor }));
    },
  );
  scope.post(
    `${endpoints}/:resource_id/findable`,
    formRoute({ params: CardParams, body: FindableForm }, { form: { booleans: ['findable'] } }),
    async (request, reply) => {
      const shell = shellOf(request);
      const { resource_id } = request.params;
      const outcome = await runForm(request, ({ body }) =>
        service.updateEndpoint(deps, shell.user.id, shell.book.id, resource_id, { findable: body.findable }),
      );
      if (outcome.ok) return seeOther(reply, bookPath(shell.book.id, 'endpoints'));
      const page = await service.listEndpoints(deps, shell.user.id, shell.book.id);
      const answer = EndpointsPage({ shell, page, cursor: undefined, form: outcome.form });
      return sendPage(reply, answer, outcome.status);
    },
  );
  scope.post(
    `${endpoints}/:resource_id/bazaar`,
    formRoute({ params: CardParams, body: BazaarForm }),
    async (request, reply) => {
      const shell = shellOf(request);
      const { resource_id } = request.params;
      const outcome = await runForm(request, ({ body }) =>
        service.updateEndpoint(deps, shell.user.id, shell.book.id, resource_id, {
          description: (body.description ?? '').trim(),
          http_method: (body.http_method || null) as HttpMethod | null,
          input_schema: jsonObjectOf('input_schema', body.input_schema),
          input_example: jsonObjectOf('input_example', body.input_example),
          output_schema: jsonObjectOf('output_schema', body.output_schema),
          output_example: jsonObjectOf('output_example', body.output_example),
        }),
      );
      if (outcome.ok)
        return seeOther(reply, `${bookPath(shell.book.id, 'endpoints')}#endpoint-${resource_id}`);
      const page = await service.listEndpoints(deps, shell.user.id, shell.book.id);
      const answer = EndpointsPage({
        shell,
        page,
        cursor: undefined,
        form: outcome.form,
        bazaarOf: resource_id,
      });
      return sendPage(reply, answer, outcome.status);
    },
  );
  registerIncomePages(scope, deps);
}

function registerIncomePages(server: FastifyInstance, deps: service.ResourcesDeps) {
  const scope = typedRoutes(server);
  const income = '/app/books/:book_id/income';
  scope.get(
    income,
    { schema: { hide: true, params: BookParams, querystring: IncomeQuery } },
    async (request, reply) => {
      const shell = shellOf(request);
      const query = request.query;
      const page = await service.listIncome(deps, shell.user.id, shell.book.id, query);
      const base = bookPath(shell.book.id, 'income');
      return sendPage(
        reply,
        IncomePage({
          shell,
          rows: page.items,
          nextHref: page.next_cursor ? hrefWith(base, { ref: query.ref, cursor: page.next_cursor }) : null,
          firstHref: query.cursor ? hrefWith(base, { ref: query.ref }) : null,
          filter: { ref: query.ref, label: page.items[0]?.label },
        }),
      );
    },
  );
  scope.get(
    `${income}/payments`,
    { schema: { hide: true, params: BookParams, querystring: PaymentsQuery } },
    async (request, reply) => {
      const shell = shellOf(request);
      const { cursor, ...row } = request.query;
      const page = await service.listIncomePayments(deps, shell.user.id, shell.book.id, row, { cursor });
      const next = page.next_cursor
        ? hrefWith(bookPath(shell.book.id, 'income/payments'), { ...row, cursor: page.next_cursor })
        : null;
      return sendPage(reply, IncomePaymentsPage({ shell, row, payments: page.items, nextHref: next }));
    },
  );
  // A payment's signed x402 receipt, as the JSON file the payer got (the offer-receipt form).
  scope.get(
    `${income}/receipts/:receipt_id`,
    { schema: { hide: true, params: ReceiptParams } },
    async (request, reply) => {
      const shell = shellOf(request);
      const found = await downloadReceipt(deps, shell.user.id, shell.book.id, request.params.receipt_id);
      const name = found.reference.replace(/[^A-Za-z0-9]+/g, '-');
      reply.header('content-disposition', `attachment; filename="x402-receipt-${name}.json"`);
      reply.type('application/json');
      return found.receipt;
    },
  );
}
