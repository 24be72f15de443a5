import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../core/errors.ts';
import { Enum, type Static, Text, type TSchema, Type } from '../../platform/http/schema-kit.ts';
import type { FormState } from '../../platform/web/components.tsx';
import { runForm, seeOther, sendPage, shellOf } from '../../platform/web/plumbing.ts';
import { canWrite } from '../../platform/web/shell.ts';
import * as writes from './app-writes.ts';
import { type InvoicesDeps, listDeliveries, writeOffInvoice } from './index.ts';
import { type BookShell, InvoicesPage, invoicePath, type Kind } from './pages.tsx';
import { type InvoiceAction, InvoiceDetailPage } from './pages-detail.tsx';
import { type FormChoices, LINES_AT_START, LINES_IN_FORM_MAX, NewInvoicePage } from './pages-form.tsx';
import * as reads from './reads.ts';
import {
  EmptyIn,
  INVOICE_KINDS,
  IntegrationInvoiceCreate,
  type InvoiceCreateBody,
  InvoiceListQuery,
  InvoicePaymentCreate,
  RemindIn,
  SendIn,
  VoidIn,
} from './schemas.ts';

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
type InvoiceFormBody = Static<typeof InvoiceForm> & { _more?: string };

const CONTACT_FIELDS = [
  ['client_name', 'name'],
  ['client_email', 'email'],
  ['client_address', 'address'],
  ['client_country', 'country'],
  ['client_phone', 'phone'],
  ['client_reg_number', 'reg_number'],
  ['client_tax_id', 'tax_id'],
] as const;

/** Client fields left blank take the picked contact's values. */
function fillFromContact(body: Record<string, unknown>, choices: FormChoices) {
  const contact = choices.contacts.find((candidate) => candidate.id === body.contact_id);
  if (!contact) return body;
  const filled = { ...body };
  for (const [field, from] of CONTACT_FIELDS) {
    const value = contact[from];
    // The schema's defaults have already turned absent fields into empty text.
    const blank = filled[field] === undefined || filled[field] === '';
    if (blank && typeof value === 'string' && value !== '') filled[field] = value;
  }
  return filled;
}

/** Blank line rows send nothing, so the lines the person filled arrive with holes between them. */
function compactLines(request: FastifyRequest, _reply: FastifyReply, done: () => void) {
  const body = request.body as { line_items?: unknown } | undefined;
  if (body && Array.isArray(body.line_items)) {
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

function registerNewForm(scope: FastifyInstance, deps: InvoicesDeps) {
  scope.get(
    '/app/books/:book_id/invoices/new',
    { schema: { hide: true, params: BookParams, querystring: NewQuery } },
    async (request, reply) => {
      const query = request.query as Static<typeof NewQuery>;
      const shell = shellOf(request);
      const choices = await reads.invoiceFormChoices(deps, shell.user.id, shell.book.id);
      const form = { values: fillFromContact({ ...query }, choices), errors: {} };
      return sendPage(reply, await renderNew(deps, request, query.kind ?? 'invoice', form, { choices }));
    },
  );
  scope.post(
    '/app/books/:book_id/invoices',
    {
      schema: { hide: true, params: BookParams, body: InvoiceForm },
      attachValidation: true,
      preValidation: compactLines,
      config: { form: { booleans: ['prices_include_tax', 'save_contact'] } },
    },
    async (request, reply) => {
      const shell = shellOf(request);
      const sent = (request.body ?? {}) as InvoiceFormBody;
      // A kind the schema refused is still re-rendered as a form of a kind that exists.
      const kind = INVOICE_KINDS.find((known) => known === sent.kind) ?? 'invoice';
      if (sent._more !== undefined) {
        return sendPage(
          reply,
          await renderNew(deps, request, kind, { values: sent, errors: {} }, { more: true }),
        );
      }
      const choices = await reads.invoiceFormChoices(deps, shell.user.id, shell.book.id);
      const body = fillFromContact(sent, choices) as InvoiceCreateBody;
      const outcome = await runForm(request, () => {
        if (!body.client_name)
          throw new AppError('invalid_request', 'Name the client, or pick a contact.', {
            field: 'client_name',
          });
        return writes.createInvoiceInApp(deps, shell.user.id, shell.book.id, body);
      });
      if (outcome.ok) return seeOther(reply, `${invoicePath(shell, outcome.value.id)}?done=created`);
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
    deliveries: deliveries.items,
    done: extra.done ? DONE[extra.done] : undefined,
    refused: extra.refused,
  });
}

type PageAction = {
  body: TSchema;
  /** Runs the write for the signed-in person and answers which sentence the page shows after it. */
  run: (deps: InvoicesDeps, shell: BookShell, id: string, body: never) => Promise<Done>;
};

const ACTIONS: Record<InvoiceAction, PageAction> = {
  send: {
    body: SendIn,
    run: async (deps, shell, id, body: Static<typeof SendIn>) => {
      await writes.sendInvoiceInApp(deps, shell.user.id, shell.book.id, id, body);
      return body.via === 'none' ? 'marked_sent' : 'sent';
    },
  },
  payments: {
    body: InvoicePaymentCreate,
    run: async (deps, shell, id, body: Static<typeof InvoicePaymentCreate>) => {
      await writes.recordPaymentInApp(deps, shell.user.id, shell.book.id, id, body);
      return 'paid';
    },
  },
  remind: {
    body: RemindIn,
    run: async (deps, shell, id, body: Static<typeof RemindIn>) => {
      const result = await writes.remindInvoiceInApp(
        deps,
        shell.user.id,
        shell.book.id,
        id,
        body.message ?? '',
      );
      return result.via.includes('email') ? 'reminded_email' : 'reminded_recorded';
    },
  },
  'write-off': {
    body: VoidIn,
    run: async (deps, shell, id, body: Static<typeof VoidIn>) => {
      await writeOffInvoice(deps, shell.user.id, shell.book.id, id, body.reason ?? '');
      return 'written_off';
    },
  },
  void: {
    body: VoidIn,
    run: async (deps, shell, id, body: Static<typeof VoidIn>) => {
      await writes.voidInvoiceInApp(deps, shell.user.id, shell.book.id, id, body.reason ?? '');
      return 'voided';
    },
  },
  accept: {
    body: EmptyIn,
    run: async (deps, shell, id) => {
      await writes.decideQuoteInApp(deps, shell.user.id, shell.book.id, id, 'accept');
      return 'accepted';
    },
  },
  decline: {
    body: EmptyIn,
    run: async (deps, shell, id) => {
      await writes.decideQuoteInApp(deps, shell.user.id, shell.book.id, id, 'decline');
      return 'declined';
    },
  },
};

function registerDocument(scope: FastifyInstance, deps: InvoicesDeps) {
  const path = '/app/books/:book_id/invoices/:invoice_id';
  scope.get(
    path,
    { schema: { hide: true, params: InvoiceParams, querystring: DetailQuery } },
    async (request, reply) => {
      const { invoice_id } = request.params as Static<typeof InvoiceParams>;
      const { done } = request.query as Static<typeof DetailQuery>;
      return sendPage(reply, await renderDetail(deps, shellOf(request), invoice_id, { done }));
    },
  );
  scope.get(`${path}/pdf`, { schema: { hide: true, params: InvoiceParams } }, async (request, reply) => {
    const shell = shellOf(request);
    const { invoice_id } = request.params as Static<typeof InvoiceParams>;
    const file = await reads.invoicePdfFile(deps, shell.user.id, shell.book.id, invoice_id);
    return reply
      .type('application/pdf')
      .header('content-disposition', `attachment; filename="${file.filename}"`)
      .send(file.body);
  });
  for (const [action, spec] of Object.entries(ACTIONS) as [InvoiceAction, PageAction][]) {
    scope.post(
      `${path}/${action}`,
      { schema: { hide: true, params: InvoiceParams, body: spec.body }, attachValidation: true },
      async (request, reply) => {
        const shell = shellOf(request);
        const { invoice_id } = request.params as Static<typeof InvoiceParams>;
        const body = (request.body ?? {}) as never;
        const outcome = await runForm(request, () => spec.run(deps, shell, invoice_id, body));
        if (outcome.ok) return seeOther(reply, `${invoicePath(shell, invoice_id)}?done=${outcome.value}`);
        const page = await renderDetail(deps, shell, invoice_id, { refused: { action, form: outcome.form } });
        return sendPage(reply, page, outcome.status);
      },
    );
  }
}

/** The Invoices screens of a book (see platform/web/README.md). */
export function registerInvoicePages(scope: FastifyInstance, deps: InvoicesDeps) {
  scope.get(
    '/app/books/:book_id/invoices',
    { schema: { hide: true, params: BookParams, querystring: InvoiceListQuery } },
    async (request, reply) => {
      const shell = shellOf(request);
      const query = request.query as Static<typeof InvoiceListQuery>;
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
