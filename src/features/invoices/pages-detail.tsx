import type { ComponentChildren } from 'preact';
import { formatAmount, formatAmountTrimmed } from '../../core/money.ts';
import { canAdminister, canWrite } from '../../core/roles.ts';
import {
  ActionButton,
  type Column,
  DateTime,
  EMPTY_FORM,
  type FormState,
  Money,
  Notice,
  Table,
} from '../../platform/web/components.tsx';
import { Layout } from '../../platform/web/layout.tsx';
import { bookPath } from '../../platform/web/shell.ts';
import { allows, openAmountOf } from './domain.ts';
import { type BookShell, DoneNotice, invoicePath, kindWord, StatusPill } from './pages.tsx';
import type { DocumentLink, DocumentLinks } from './reads.ts';
import type { InvoiceRecord, listDeliveries } from './service.ts';

// One invoice, quote or credit note: its lines, totals, payments and deliveries, its public
// page and PDF, and the actions its status allows. Each action is its own small form; a refused
// one is shown again with its sentence and field messages in place.

type Delivery = Awaited<ReturnType<typeof listDeliveries>>['items'][number];
type Payment = InvoiceRecord['payments'][number];
/** A line as createInvoice stored it (jsonb written from the computed totals). */
type Line = InvoiceRecord['line_items'][number];

export type InvoiceAction =
  | 'edit'
  | 'send'
  | 'payments'
  | 'remind'
  | 'write-off'
  | 'void'
  | 'accept'
  | 'decline';

const VIA_WORDS: Record<string, string> = {
  manual: 'Recorded by hand',
  settlement: 'Paid on its page',
  card: 'Card',
  write_off: 'Written off',
};

/** A labelled input whose id names its action, so two forms on one page never share an id. */
function ActionField(props: {
  action: InvoiceAction;
  name: string;
  label: string;
  form: FormState;
  type?: 'text' | 'email' | 'date';
  required?: boolean;
  placeholder?: string;
  maxLength?: number;
}) {
  const id = `${props.action}-${props.name}`;
  const error = props.form.errors[props.name];
  const value = props.form.values[props.name];
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <input
        id={id}
        name={props.name}
        type={(props.type ?? 'text') as 'text'}
        value={typeof value === 'string' ? value : undefined}
        required={props.required}
        placeholder={props.placeholder}
        maxLength={props.maxLength}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
      />
      {error && (
        <span class="error" id={`${id}-error`}>
          {error}
        </span>
      )}
    </div>
  );
}

/** One action's form: posts with the CSRF token; a refusal's sentence shows on top of it. */
function ActionForm(props: {
  shell: BookShell;
  invoice: InvoiceRecord;
  action: InvoiceAction;
  title: string;
  form: FormState;
  confirm?: string;
  children: ComponentChildren;
}) {
  return (
    <section class="card" aria-label={props.title} data-action={props.action}>
      <h3>{props.title}</h3>
      <form
        method="post"
        action={invoicePath(props.shell, props.invoice.id, props.action)}
        hx-confirm={props.confirm}
      >
        <input type="hidden" name="_csrf" value={props.shell.csrfToken} />
        {props.form.sentence && <Notice kind="error">{props.form.sentence}</Notice>}
        {props.children}
      </form>
    </section>
  );
}

type ActionProps = { shell: BookShell; invoice: InvoiceRecord; formOf: (action: InvoiceAction) => FormState };

function SendAction({ shell, invoice, formOf }: ActionProps) {
  const form = formOf('send');
  // A credit note is issued when it is made: it is sent by mail (as often as asked), never
  // "marked sent".
  const creditNote = invoice.kind === 'credit_note';
  const again = !creditNote && invoice.status !== 'draft' && invoice.status !== 'quote_draft';
  const title = creditNote ? 'Send by email' : again ? 'Send again' : 'Send';
  const chosen = form.values.via;
  return (
    <ActionForm shell={shell} invoice={invoice} action="send" title={title} form={form}>
      {creditNote ? (
        <input type="hidden" name="via" value="email" />
      ) : (
        <div class="field">
          <label for="send-via">How</label>
          <select id="send-via" name="via">
            <option value="email" selected={chosen !== 'none'}>
              By email, with the PDF
            </option>
            <option value="none" selected={chosen === 'none'}>
              Mark as sent, deliver nothing
            </option>
          </select>
        </div>
      )}
      <ActionField
        action="send"
        name="to"
        label="To"
        type="email"
        form={form}
        placeholder={invoice.client_email || 'client@example.com'}
      />
      <ActionField action="send" name="message" label="Message" form={form} maxLength={2000} />
      <button type="submit">{title}</button>
    </ActionForm>
  );
}

function PaymentAction({ shell, invoice, formOf }: ActionProps) {
  const form = formOf('payments');
  return (
    <ActionForm shell={shell} invoice={invoice} action="payments" title="Record a payment" form={form}>
      <div class="row">
        <ActionField
          action="payments"
          name="amount"
          label={`Amount (${invoice.currency})`}
          form={form}
          required
          placeholder={formatAmountTrimmed(openAmountOf(invoice))}
        />
        <ActionField action="payments" name="occurred_on" label="Received on" type="date" form={form} />
      </div>
      <ActionField action="payments" name="note" label="Note" form={form} maxLength={500} />
      <button type="submit">Record the payment</button>
    </ActionForm>
  );
}

function RemindAction({ shell, invoice, formOf }: ActionProps) {
  const form = formOf('remind');
  return (
    <ActionForm shell={shell} invoice={invoice} action="remind" title="Remind the client" form={form}>
      <ActionField action="remind" name="message" label="Message" form={form} maxLength={2000} />
      <button type="submit" class="secondary">
        Send a reminder
      </button>
    </ActionForm>
  );
}

function CloseActions({ shell, invoice, formOf, actions }: ActionProps & { actions: Set<InvoiceAction> }) {
  return (
    <>
      {actions.has('write-off') && (
        <ActionForm
          shell={shell}
          invoice={invoice}
          action="write-off"
          title="Write off what is open"
          form={formOf('write-off')}
          confirm={`Write off what is open on ${invoice.number}?`}
        >
          <ActionField
            action="write-off"
            name="reason"
            label="Reason"
            form={formOf('write-off')}
            maxLength={500}
          />
          <button type="submit" class="danger">
            Write off
          </button>
        </ActionForm>
      )}
      {actions.has('void') && (
        <ActionForm
          shell={shell}
          invoice={invoice}
          action="void"
          title={`Void this ${kindWord(invoice.kind).toLowerCase()}`}
          form={formOf('void')}
          confirm={`Void ${invoice.number}? This cannot be undone.`}
        >
          <ActionField action="void" name="reason" label="Reason" form={formOf('void')} maxLength={500} />
          <button type="submit" class="danger">
            Void
          </button>
        </ActionForm>
      )}
    </>
  );
}

/** The actions the page offers the viewer for this document in its status (the domain's moves). */
function offered(shell: BookShell, invoice: InvoiceRecord): Set<InvoiceAction> {
  const actions = new Set<InvoiceAction>();
  if (!canWrite(shell.book.role)) return actions;
  const status = invoice.status;
  if (allows('revise', status)) actions.add('edit');
  if (allows('accept', status)) actions.add('accept').add('decline');
  if (allows('send', status)) actions.add('send');
  if (allows('pay', status)) actions.add('payments');
  if (allows('remind', status)) actions.add('remind');
  if (allows('pay', status) && canAdminister(shell.book.role)) actions.add('write-off');
  if (allows('void', status)) actions.add('void');
  return actions;
}

function Actions(props: ActionProps & { actions: Set<InvoiceAction> }) {
  const { shell, invoice, formOf, actions } = props;
  if (actions.size === 0) return null;
  const decision = formOf('accept').sentence ?? formOf('decline').sentence;
  return (
    <>
      <h2>Actions</h2>
      <div class="cards">
        {actions.has('accept') && (
          <section class="card" aria-label="Decide the quote">
            <h3>The client’s answer</h3>
            {decision && <Notice kind="error">{decision}</Notice>}
            <p class="actions">
              <ActionButton
                action={invoicePath(shell, invoice.id, 'accept')}
                csrf={shell.csrfToken}
                label="Accept"
              />
              <ActionButton
                action={invoicePath(shell, invoice.id, 'decline')}
                csrf={shell.csrfToken}
                label="Decline"
              />
            </p>
          </section>
        )}
        {actions.has('edit') && (
          <section class="card" aria-label="Change the draft" data-action="edit">
            <h3>Change the draft</h3>
            <p class="muted">Client, lines, dates and notes change until it is sent.</p>
            <p class="actions">
              <a class="button secondary" href={invoicePath(shell, invoice.id, 'edit')}>
                Edit
              </a>
            </p>
          </section>
        )}
        {actions.has('send') && <SendAction {...props} />}
        {actions.has('payments') && <PaymentAction {...props} />}
        {actions.has('remind') && <RemindAction {...props} />}
        <CloseActions {...props} />
      </div>
    </>
  );
}

const LINE_COLUMNS = (currency: string): Column<Line>[] => [
  { header: 'Description', cell: (line) => line.description },
  {
    header: 'Quantity',
    numeric: true,
    cell: (line) => `${line.quantity}${line.unit ? ` ${line.unit}` : ''}`,
  },
  {
    header: 'Unit price',
    numeric: true,
    cell: (line) => <Money amount={line.unit_price} currency={currency} />,
  },
  {
    header: 'Tax',
    cell: (line) => (line.tax_kind ? `${line.tax_kind.replace('_', ' ')} ${line.tax_rate || '0'}%` : '—'),
  },
  { header: 'Amount', numeric: true, cell: (line) => <Money amount={line.amount} currency={currency} /> },
];

function Totals({ invoice }: { invoice: InvoiceRecord }) {
  const money = (amount: string) => <Money amount={amount} currency={invoice.currency} />;
  const credited = /[1-9]/.test(invoice.credited_amount);
  return (
    <dl class="figures" aria-label="Totals">
      <div>
        <dt>Subtotal</dt>
        <dd>{money(invoice.subtotal)}</dd>
      </div>
      <div>
        <dt>Tax</dt>
        <dd>{money(invoice.tax_total)}</dd>
      </div>
      <div>
        <dt>Total</dt>
        <dd data-field="total">{money(invoice.total)}</dd>
      </div>
      {credited && (
        <div>
          <dt>Credited</dt>
          <dd data-field="credited">{money(invoice.credited_amount)}</dd>
        </div>
      )}
      {invoice.kind === 'invoice' && (
        <>
          <div>
            <dt>Paid</dt>
            <dd data-field="paid">{money(invoice.paid_amount)}</dd>
          </div>
          <div>
            <dt>Open</dt>
            <dd data-field="open">
              {money(invoice.status === 'void' ? '0' : formatAmount(openAmountOf(invoice)))}
            </dd>
          </div>
        </>
      )}
    </dl>
  );
}

/** The documents this one names, each by its number: what it corrects, what it became or came from. */
function LinkFacts({
  shell,
  invoice,
  links,
}: {
  shell: BookShell;
  invoice: InvoiceRecord;
  links: DocumentLinks;
}) {
  const rows: [string, string, DocumentLink][] = [];
  if (links.corrects) rows.push(['Corrects', 'corrects', links.corrects]);
  if (links.invoice) rows.push(['Became', 'became', links.invoice]);
  if (links.quote) rows.push(['From quote', 'from-quote', links.quote]);
  return (
    <>
      {rows.map(([label, field, link]) => (
        <div>
          <dt>{label}</dt>
          <dd data-field={field}>
            <a href={invoicePath(shell, link.id)}>{link.number}</a>
          </dd>
        </div>
      ))}
      {invoice.quote_decided_at && (
        <div>
          <dt>{invoice.status === 'quote_declined' ? 'Declined' : 'Accepted'}</dt>
          <dd data-field="decided">
            <DateTime at={invoice.quote_decided_at} />
            {invoice.quote_decided_by ? ` by ${invoice.quote_decided_by}` : ' (recorded in the app)'}
          </dd>
        </div>
      )}
    </>
  );
}

function Facts({
  shell,
  invoice,
  links,
}: {
  shell: BookShell;
  invoice: InvoiceRecord;
  links: DocumentLinks;
}) {
  return (
    <dl class="figures">
      <div>
        <dt>Client</dt>
        <dd>
          {invoice.client_name}
          {invoice.client_email && <span class="muted"> {invoice.client_email}</span>}
        </dd>
      </div>
      <div>
        <dt>Issued</dt>
        <dd>
          <DateTime at={invoice.issued_on} />
        </dd>
      </div>
      {invoice.kind !== 'credit_note' && (
        <div>
          <dt>{invoice.kind === 'quote' ? 'Valid until' : 'Due'}</dt>
          <dd>
            <DateTime at={invoice.due_on} />
          </dd>
        </div>
      )}
      <div>
        <dt>Created</dt>
        <dd>
          <DateTime at={invoice.created_at} />
        </dd>
      </div>
      <LinkFacts shell={shell} invoice={invoice} links={links} />
    </dl>
  );
}

/** The e-invoice formats the Download menu offers beside the PDF (invoices and credit notes). */
const EINVOICE_LINKS = [
  ['facturx', 'Factur-X (PDF with CII)'],
  ['ubl', 'UBL (Peppol BIS)'],
  ['cii', 'CII (XML)'],
] as const;

/**
 * The document's files: its PDF and, for invoices and credit notes, its EN 16931 e-invoices. The
 * links are plain page loads (not boosted): a file arrives as an attachment, and a refusal (the
 * seller profile lacks what EN 16931 needs) shows as a page that names what is missing.
 */
function DownloadMenu({ shell, invoice }: { shell: BookShell; invoice: InvoiceRecord }) {
  const einvoice = invoicePath(shell, invoice.id, 'einvoice');
  return (
    <details class="menu">
      <summary>Download</summary>
      <ul hx-boost="false">
        <li>
          <a href={invoicePath(shell, invoice.id, 'pdf')} download>
            PDF
          </a>
        </li>
        {invoice.kind !== 'quote' &&
          EINVOICE_LINKS.map(([format, label]) => (
            <li key={format}>
              <a href={`${einvoice}?format=${format}`}>{label}</a>
            </li>
          ))}
      </ul>
    </details>
  );
}

function Links({ shell, invoice }: { shell: BookShell; invoice: InvoiceRecord }) {
  const status = invoice.status;
  return (
    <p class="actions">
      {invoice.kind === 'invoice' && (
        <a href={invoice.url} target="_blank" rel="noopener">
          Public page
        </a>
      )}
      <DownloadMenu shell={shell} invoice={invoice} />
      {invoice.kind === 'invoice' && canWrite(shell.book.role) && allows('pay', status) && (
        <a href={`${invoicePath(shell, 'new')}?kind=credit_note&corrects_invoice_id=${invoice.id}`}>
          Create credit note
        </a>
      )}
    </p>
  );
}

const PAYMENT_COLUMNS = (shell: BookShell, currency: string): Column<Payment>[] => [
  { header: 'Received on', cell: (payment) => payment.occurred_on },
  {
    header: 'Amount',
    numeric: true,
    cell: (payment) => <Money amount={payment.amount} currency={currency} />,
  },
  { header: 'How', cell: (payment) => VIA_WORDS[payment.via] ?? payment.via },
  { header: 'Note', cell: (payment) => payment.note || <span class="muted">—</span> },
  {
    header: 'Ledger',
    cell: (payment) =>
      payment.entry_id ? (
        <a href={bookPath(shell.book.id, `ledger/${payment.entry_id}`)}>Entry</a>
      ) : (
        <span class="muted">—</span>
      ),
  },
];

const DELIVERY_COLUMNS: Column<Delivery>[] = [
  { header: 'When', cell: (delivery) => <DateTime at={delivery.created_at} /> },
  { header: 'What', cell: (delivery) => (delivery.purpose === 'send' ? 'Sent' : 'Reminder') },
  {
    header: 'How',
    cell: (delivery) => {
      const roads = delivery.via.filter((via) => via !== 'none');
      return roads.length > 0 ? roads.join(', ') : 'recorded, not delivered';
    },
  },
  { header: 'To', cell: (delivery) => delivery.recipient || <span class="muted">—</span> },
];

export function InvoiceDetailPage(props: {
  shell: BookShell;
  invoice: InvoiceRecord;
  links: DocumentLinks;
  deliveries: Delivery[];
  done?: string | undefined;
  refused?: { action: InvoiceAction; form: FormState } | undefined;
}) {
  const { shell, invoice, refused } = props;
  const formOf = (action: InvoiceAction) => (refused?.action === action ? refused.form : EMPTY_FORM);
  const actions = offered(shell, invoice);
  // A refused action whose form this status or role does not show: its sentence goes on top.
  const stray = refused && !actions.has(refused.action) ? refused.form.sentence : undefined;
  const title = `${kindWord(invoice.kind)} ${invoice.number}`;
  return (
    <Layout shell={shell} title={title}>
      <p>
        <a href={invoicePath(shell)}>← Invoices</a>
      </p>
      <h1>
        {title} <StatusPill status={invoice.status} />
      </h1>
      <DoneNotice sentence={props.done} />
      {stray && <Notice kind="error">{stray}</Notice>}
      <Facts shell={shell} invoice={invoice} links={props.links} />
      <Links shell={shell} invoice={invoice} />
      <h2>Lines</h2>
      <Table
        caption="Lines"
        columns={LINE_COLUMNS(invoice.currency)}
        rows={invoice.line_items}
        empty={null}
      />
      <Totals invoice={invoice} />
      {invoice.notes && <p class="muted">{invoice.notes}</p>}
      {invoice.status === 'void' && invoice.void_reason && <p>Voided: {invoice.void_reason}</p>}
      <h2>Payments</h2>
      <Table
        caption="Payments"
        columns={PAYMENT_COLUMNS(shell, invoice.currency)}
        rows={invoice.payments}
        empty={<p class="muted">No payment recorded.</p>}
      />
      <h2>Sent and reminded</h2>
      <Table
        caption="Deliveries"
        columns={DELIVERY_COLUMNS}
        rows={props.deliveries}
        empty={<p class="muted">Not sent yet.</p>}
      />
      <Actions shell={shell} invoice={invoice} formOf={formOf} actions={actions} />
    </Layout>
  );
}
