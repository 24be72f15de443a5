import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../core/errors.ts';
import { canWrite } from '../../core/roles.ts';
import { Enum, Text, type TSchema, Type } from '../../platform/http/schema-kit.ts';
import { type TypedApp, typedRoutes } from '../../platform/http/typed.ts';
import type { FormState } from '../../platform/web/components.tsx';
import { formRoute, type Opened, runForm } from '../../platform/web/forms.ts';
import { seeOther, sendPage, shellOf } from '../../platform/web/plumbing.ts';
import * as writes from './app-writes.ts';
import { allows, CLIENT_CONTACT_FIELDS, type ClientField, EINVOICE_FORMATS } from './domain.ts';
import { einvoiceFileInApp } from './einvoice-file.ts';
import { type BookShell, InvoicesPage, invoicePath, type Kind } from './pages.tsx';
import { type InvoiceAction, InvoiceDetailPage } from './pages-detail.tsx';
import {
  draftValues,
  EditInvoicePage,
  type FormChoices,
  LINES_AT_START,
  LINES_IN_FORM_MAX,
  NewInvoicePage,
} from './pages-form.tsx';
import * as reads from './reads.ts';
import {
  EinvoicePageQuery,
  EmptyIn,
  INVOICE_KINDS,
  IntegrationInvoiceCreate,
  InvoiceListQuery,
  InvoicePatch,
  type InvoicePatchBody,
  InvoicePaymentCreate,
  RemindIn,
  SendIn,
  VoidIn,
} from './schemas.ts';
import { type InvoicesDeps, listDeliveries, writeOffInvoice } from './service.ts';

// The Invoices screens under /app/books/{book_id}/invoices: the list, the New form, one
// document and its actions. Every read and write goes through the same functions as the app
// API (reads.ts, app-writes.ts); a write answers 303 back to the page (a reload never repeats
// it) with the result named in ?done=, or the page again with the refusal in place.

const BookParams = Type.Object({ book_id: Type.String({ maxLength: 64 }) });
const InvoiceParams = Type.Object({
  book_id: Type.String({ maxLength: 64 }),
  invoice_id: Type.String({ format: 'uuid' }),
});
const NewQuery = Type.Object({
  kind: Type.Optional(Enum(INVOICE_KINDS)),
  contact_id: Type.Optional(Type.String({ format: 'uuid' })),
  corrects_invoice_id: Type.Optional(Type.String({ format: 'uuid' })),
});

/** The sentences a write that went through leaves on the page it returns to. */
const DONE = {
  created: 'Created. Send it when it is ready.',
  issued: 'Issued. Its total is taken off what the invoice it corrects still asks for.',
  saved: 'Saved. The totals are computed again.',
  sent: 'Sent by email.',
  marked_sent: 'Marked as sent; nothing was delivered.',
  paid: 'Payment recorded.',
  reminded_email: 'Reminder sent by email.',
  reminded_recorded: 'Reminder recorded; no mail went out (no client email or no mail server).',
  written_off: 'What was open is written off; the invoice is paid.',
  voided: 'Voided. Payments already recorded stay booked.',
  accepted: 'Accepted: a draft invoice was made from this quote.',
  declined: 'Declined.',
} as const;
type Done = keyof typeof DONE;
const DetailQuery = Type.Object({ done: Type.Optional(Enum(Object.keys(DONE) as Done[])) });

/** The New form's body: the app API's create body, with the client's name taken from the contact when left blank. */
const InvoiceForm = Type.Object({
  ...IntegrationInvoiceCreate.properties,
  client_name: Type.Optional(Text({ minLength: 1, maxLength: 200 })),
});

/** The client fields left blank that the picked contact fills, with the contact's values. */
function contactDefaults(
  body: { contact_id?: string | null | undefined } & Partial<Record<ClientField, unknown>>,
  choices: FormChoices,
): Partial<Record<ClientField, string>> {
  const contact = choices.contacts.find((candidate) => candidate.id === body.contact_id);
  const filled: Partial<Record<ClientField, string>> = {};
  if (!contact) return filled;
  for (const [field, from] of CLIENT_CONTACT_FIELDS) {
    const value = contact[from];
    // The schema's defaults have already turned absent fields into empty text.
    const blank = body[field] === undefined || body[field] === '';
    if (blank && typeof value === 'string' && value !== '') filled[field] = value;
  }
  return filled;
}

/** The form as it was sent, checked or not: a refused form is shown again as it was typed. */
function sentValues(body: unknown): Record<string, unknown> {
  return typeof body === 'object' && body !== null ? { ...body } : {};
}

/**
 * Blank line rows send nothing, so the lines the person filled arrive with holes between them.
 * This runs before validation, so it reads the body as the form parser left it.
 */
function compactLines(request: { body: unknown }, _reply: unknown, done: () => void) {
  const { body } = request;
  if (typeof body === 'object' && body !== null && 'line_items' in body && Array.isArray(body.line_items)) {
    body.line_items = body.line_items.filter((line) => line !== undefined && line !== null);
  }
  done();
}

/** As many line rows as the form showed (its _lines field) or as lines were filled, one more on "Add a line". */
function linesShown(form: FormState, more: boolean) {
  const filled = Array.isArray(form.values.line_items) ? form.values.line_items.length : 0;
  const shownText = typeof form.values._lines === 'string' ? form.values._lines : '';
  const shown = /^\d{1,3}$/.test(shownText) ? Number(shownText) : 0;
  return Math.min(LINES_IN_FORM_MAX, Math.max(LINES_AT_START, filled, shown) + (more ? 1 : 0));
}

/**
 * A credit note written from an invoice's page starts as that invoice: its account, client and
 * lines, to be cut down to what is credited.
 */
async function correctedValues(deps: InvoicesDeps, shell: BookShell, invoiceId: string) {
  const invoice = await reads.readInvoice(deps, shell.user.id, shell.book.id, invoiceId);
  if (invoice.kind !== 'invoice') return {};
  const { issued_on: _issued, due_on: _due, notes: _notes, ...values } = draftValues(invoice);
  return { ...values, account_id: invoice.account_id ?? '' };
}

async function renderNew(
  deps: InvoicesDeps,
  request: FastifyRequest,
  kind: Kind,
  form: FormState,
  options: { more?: boolean; choices?: FormChoices } = {},
) {
  const shell = shellOf(request);
  if (!canWrite(shell.book.role))
    throw new AppError('forbidden', 'A viewer can look but not change anything in this book.');
  const choices = options.choices ?? (await reads.invoiceFormChoices(deps, shell.user.id, shell.book.id));
  return NewInvoicePage({ shell, kind, choices, form, lines: linesShown(form, options.more ?? false) });
}

function registerNewForm(scope: TypedApp, deps: InvoicesDeps) {
  scope.get(
    '/app/books/:book_id/invoices/new',
    { schema: { hide: true, params: BookParams, querystring: NewQuery } },
    async (request, reply) => {
      const { query } = request;
      const shell = shellOf(request);
      const choices = await reads.invoiceFormChoices(deps, shell.user.id, shell.book.id);
      const corrected =
        query.kind === 'credit_note' && query.corrects_invoice_id !== undefined
          ? await correctedValues(deps, shell, query.corrects_invoice_id)
          : {};
      const values = { ...corrected, ...query, ...contactDefaults(query, choices) };
      const form = { values, errors: {} };
      return sendPage(reply, await renderNew(deps, request, query.kind ?? 'invoice', form, { choices }));
    },
  );
  scope.post(
    '/app/books/:book_id/invoices',
    {
      ...formRoute(
        { params: BookParams, body: InvoiceForm },
        { form: { booleans: ['prices_include_tax', 'save_contact'] } },
      ),
      preValidation: compactLines,
    },
    async (request, reply) => {
      const shell = shellOf(request);
      const sent = sentValues(request.body);
      // A kind the schema refused is still re-rendered as a form of a kind that exists.
      const kind = INVOICE_KINDS.find((known) => known === sent.kind) ?? 'invoice';
      if (sent._more !== undefined) {
        return sendPage(
          reply,
          await renderNew(deps, request, kind, { values: sent, errors: {} }, { more: true }),
        );
      }
      const choices = await reads.invoiceFormChoices(deps, shell.user.id, shell.book.id);
      const outcome = await runForm(request, ({ body: form }) => {
        const body = { ...form, ...contactDefaults(form, choices) };
        const clientName = body.client_name;
        if (!clientName)
          throw new AppError('invalid_request', 'Name the client, or pick a contact.', {
            field: 'client_name',
          });
        return writes.createInvoiceInApp(deps, shell.user.id, shell.book.id, {
          ...body,
          client_name: clientName,
        });
      });
      if (outcome.ok) {
        const done = outcome.value.kind === 'credit_note' ? 'issued' : 'created';
        return seeOther(reply, `${invoicePath(shell, outcome.value.id)}?done=${done}`);
      }
      const page = await renderNew(deps, request, kind, outcome.form, { choices });
      return sendPage(reply, page, outcome.status);
    },
  );
}

async function renderDetail(
  deps: InvoicesDeps,
  shell: BookShell,
  id: string,
  extra: { done?: Done | undefined; refused?: { action: InvoiceAction; form: FormState } },
) {
  const invoice = await reads.readInvoice(deps, shell.user.id, shell.book.id, id);
  const deliveries = await listDeliveries(deps, shell.user.id, shell.book.id, id);
  return InvoiceDetailPage({
    shell,
    invoice,
    links: await reads.documentLinks(deps.db, shell.book.id, invoice),
    deliveries: deliveries.items,
    done: extra.done ? DONE[extra.done] : undefined,
    refused: extra.refused,
  });
}

/** An action's options: its form body is checked by its schema, refusals shown in place. */
const actionOptions = <Body extends TSchema>(body: Body) => formRoute({ params: InvoiceParams, body });

/**
 * What an action of the detail page answers: the write (run only once the schemas' checks held,
 * answering the sentence the page shows after it), then back to the document, or the document
 * with the refusal in place.
 */
async function answerAction<R extends FastifyRequest>(
  deps: InvoicesDeps,
  request: R,
  reply: FastifyReply,
  action: { name: InvoiceAction; invoiceId: string },
  run: (shell: BookShell, body: Opened<R>['body']) => Promise<Done>,
) {
  const shell = shellOf(request);
  const { name, invoiceId } = action;
  const outcome = await runForm(request, ({ body }) => run(shell, body));
  if (outcome.ok) return seeOther(reply, `${invoicePath(shell, invoiceId)}?done=${outcome.value}`);
  const page = await renderDetail(deps, shell, invoiceId, { refused: { action: name, form: outcome.form } });
  return sendPage(reply, page, outcome.status);
}

function registerActions(scope: TypedApp, deps: InvoicesDeps, path: string) {
  const on = (name: InvoiceAction, invoiceId: string) => ({ name, invoiceId });
  scope.post(`${path}/send`, actionOptions(SendIn), (request, reply) =>
    answerAction(deps, request, reply, on('send', request.params.invoice_id), async (shell, body) => {
      await writes.sendInvoiceInApp(deps, shell.user.id, shell.book.id, request.params.invoice_id, body);
      return body.via === 'none' ? 'marked_sent' : 'sent';
    }),
  );
  scope.post(`${path}/payments`, actionOptions(InvoicePaymentCreate), (request, reply) =>
    answerAction(deps, request, reply, on('payments', request.params.invoice_id), async (shell, body) => {
      const { invoice_id } = request.params;
      await writes.recordPaymentInApp(deps, shell.user.id, shell.book.id, invoice_id, body);
      return 'paid';
    }),
  );
  scope.post(`${path}/remind`, actionOptions(RemindIn), (request, reply) =>
    answerAction(deps, request, reply, on('remind', request.params.invoice_id), async (shell, body) => {
      const { invoice_id } = request.params;
      const message = body.message ?? '';
      const result = await writes.remindInvoiceInApp(deps, shell.user.id, shell.book.id, invoice_id, message);
      return result.via.includes('email') ? 'reminded_email' : 'reminded_recorded';
    }),
  );
  scope.post(`${path}/write-off`, actionOptions(VoidIn), (request, reply) =>
    answerAction(deps, request, reply, on('write-off', request.params.invoice_id), async (shell, body) => {
      const { invoice_id } = request.params;
      await writeOffInvoice(deps, shell.user.id, shell.book.id, invoice_id, body.reason ?? '');
      return 'written_off';
    }),
  );
  scope.post(`${path}/void`, actionOptions(VoidIn), (request, reply) =>
    answerAction(deps, request, reply, on('void', request.params.invoice_id), async (shell, body) => {
      const { invoice_id } = request.params;
      await writes.voidInvoiceInApp(deps, shell.user.id, shell.book.id, invoice_id, body.reason ?? '');
      return 'voided';
    }),
  );
  for (const [decision, done] of [
    ['accept', 'accepted'],
    ['decline', 'declined'],
  ] as const) {
    scope.post(`${path}/${decision}`, actionOptions(EmptyIn), (request, reply) =>
      answerAction(deps, request, reply, on(decision, request.params.invoice_id), async (shell) => {
        await writes.decideQuoteInApp(
          deps,
          shell.user.id,
          shell.book.id,
          request.params.invoice_id,
          decision,
        );
        return done;
      }),
    );
  }
}

/** The edit form's body: the draft's changes, with the lines the form always sends. */
const EditForm = Type.Object({
  ...InvoicePatch.properties,
  line_items: IntegrationInvoiceCreate.properties.line_items,
});

/**
 * The edit form sends every field; a blank one arrives as "not given" and means empty here, so
 * clearing a field in the form clears it on the draft. No contact picked means none.
 */
function wholeDraft(body: InvoicePatchBody): InvoicePatchBody {
  return { client_email: '', client_address: '', client_country: '', notes: '', contact_id: null, ...body };
}

async function renderEdit(
  deps: InvoicesDeps,
  shell: BookShell,
  invoiceId: string,
  form: FormState | undefined,
  more = false,
) {
  if (!canWrite(shell.book.role))
    throw new AppError('forbidden', 'A viewer can look but not change anything in this book.');
  const invoice = await reads.readInvoice(deps, shell.user.id, shell.book.id, invoiceId);
  const choices = await reads.invoiceFormChoices(deps, shell.user.id, shell.book.id);
  const shown = form ?? { values: draftValues(invoice), errors: {} };
  return {
    invoice,
    page: EditInvoicePage({ shell, invoice, choices, form: shown, lines: linesShown(shown, more) }),
  };
}

function registerEdit(scope: TypedApp, deps: InvoicesDeps, path: string) {
  scope.get(`${path}/edit`, { schema: { hide: true, params: InvoiceParams } }, async (request, reply) => {
    const shell = shellOf(request);
    const { invoice, page } = await renderEdit(deps, shell, request.params.invoice_id, undefined);
    // A sent document has no edit form: its page says what can still be done.
    if (!allows('revise', invoice.status)) return seeOther(reply, invoicePath(shell, invoice.id));
    return sendPage(reply, page);
  });
  scope.post(
    `${path}/edit`,
    {
      ...formRoute({ params: InvoiceParams, body: EditForm }, { form: { booleans: ['prices_include_tax'] } }),
      preValidation: compactLines,
    },
    async (request, reply) => {
      const shell = shellOf(request);
      const { invoice_id } = request.params;
      const sent = sentValues(request.body);
      if (sent._more !== undefined) {
        const { page } = await renderEdit(deps, shell, invoice_id, { values: sent, errors: {} }, true);
        return sendPage(reply, page);
      }
      const choices = await reads.invoiceFormChoices(deps, shell.user.id, shell.book.id);
      const outcome = await runForm(request, ({ body }) => {
        const draft = { ...wholeDraft(body), ...contactDefaults(body, choices) };
        if (!draft.client_name)
          throw new AppError('invalid_request', 'Name the client, or pick a contact.', {
            field: 'client_name',
          });
        return writes.reviseInvoiceInApp(deps, shell.user.id, shell.book.id, invoice_id, draft);
      });
      if (outcome.ok) return seeOther(reply, `${invoicePath(shell, invoice_id)}?done=saved`);
      const { page } = await renderEdit(deps, shell, invoice_id, outcome.form);
      return sendPage(reply, page, outcome.status);
    },
  );
}

function registerDocument(scope: TypedApp, deps: InvoicesDeps) {
  const path = '/app/books/:book_id/invoices/:invoice_id';
  scope.get(
    path,
    { schema: { hide: true, params: InvoiceParams, querystring: DetailQuery } },
    async (request, reply) => {
      const page = await renderDetail(deps, shellOf(request), request.params.invoice_id, {
        done: request.query.done,
      });
      return sendPage(reply, page);
    },
  );
  scope.get(`${path}/pdf`, { schema: { hide: true, params: InvoiceParams } }, async (request, reply) => {
    const shell = shellOf(request);
    const file = await reads.invoicePdfFile(deps, shell.user.id, shell.book.id, request.params.invoice_id);
    return reply
      .type('application/pdf')
      .header('content-disposition', `attachment; filename="${file.filename}"`)
      .send(file.body);
  });
  scope.get(
    `${path}/einvoice`,
    { schema: { hide: true, params: InvoiceParams, querystring: EinvoicePageQuery } },
    async (request, reply) => {
      const shell = shellOf(request);
      const { invoice_id } = request.params;
      const format = EINVOICE_FORMATS.find((known) => known === request.query.format);
      // A link without a known format leads back to the invoice, whose menu names them.
      if (format === undefined) return seeOther(reply, invoicePath(shell, invoice_id));
      const file = await einvoiceFileInApp(deps, shell.user.id, shell.book.id, invoice_id, format);
      return reply
        .type(file.contentType)
        .header('content-disposition', `attachment; filename="${file.filename}"`)
        .send(file.body);
    },
  );
  registerActions(scope, deps, path);
  registerEdit(scope, deps, path);
}

/** The Invoices screens of a book (see platform/web/README.md). */
export function registerInvoicePages(server: FastifyInstance, deps: InvoicesDeps) {
  const scope = typedRoutes(server);
  scope.get(
    '/app/books/:book_id/invoices',
    { schema: { hide: true, params: BookParams, querystring: InvoiceListQuery } },
    async (request, reply) => {
      const shell = shellOf(request);
      const { query } = request;
      const page = await reads.listInvoices(deps, shell.user.id, shell.book.id, query);
      return sendPage(
        reply,
        InvoicesPage({ shell, page, kind: query.kind, status: query.status, cursor: query.cursor }),
      );
    },
  );
  registerNewForm(scope, deps);
  registerDocument(scope, deps);
}
