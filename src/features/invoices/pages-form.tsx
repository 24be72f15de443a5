import {
  EmptyState,
  Field,
  Form,
  type FormState,
  hrefWith,
  Notice,
  Select,
} from '../../platform/web/components.tsx';
import { Layout } from '../../platform/web/layout.tsx';
import { bookPath } from '../../platform/web/shell.ts';
import { TAX_KINDS } from './domain.ts';
import { type BookShell, invoicePath, KIND_WORDS, type Kind } from './pages.tsx';
import type { invoiceFormChoices } from './reads.ts';
import type { InvoiceRecord } from './service.ts';

// The New form: an invoice, a quote or a credit note, with its client (typed, or picked from
// Contacts), its lines and dates. It posts the app API's create body; a refusal comes back here
// with the sentence on top and each field's message beside it.

export type FormChoices = Awaited<ReturnType<typeof invoiceFormChoices>>;

/** Blank line rows a new form starts with; "Add a line" adds one more each time. */
export const LINES_AT_START = 3;
/** The form's names nest up to two digits (line_items.99…), and a document takes 200 lines. */
export const LINES_IN_FORM_MAX = 100;

const TAX_WORDS: Record<(typeof TAX_KINDS)[number], string> = {
  standard: 'Standard',
  reduced: 'Reduced',
  zero: 'Zero-rated',
  exempt: 'Exempt',
  reverse_charge: 'Reverse charge',
};

export function LineFields({ index, form }: { index: number; form: FormState }) {
  const name = (field: string) => `line_items.${index}.${field}`;
  return (
    <fieldset class="field">
      <legend>Line {index + 1}</legend>
      <div class="row">
        <Field name={name('description')} label="Description" form={form} maxLength={300} />
        <Field name={name('quantity')} label="Quantity" form={form} placeholder="1" maxLength={32} />
        <Field name={name('unit')} label="Unit" form={form} placeholder="h, pcs" maxLength={16} />
        <Field name={name('unit_price')} label="Unit price" form={form} placeholder="100.00" maxLength={32} />
        <Select
          name={name('tax_kind')}
          label="Tax"
          form={form}
          options={[['', 'None'], ...TAX_KINDS.map((kind) => [kind, TAX_WORDS[kind]] as const)]}
        />
        <Field name={name('tax_rate')} label="Tax rate (%)" form={form} placeholder="20" maxLength={16} />
      </div>
    </fieldset>
  );
}

export function Checkbox(props: { name: string; label: string; form: FormState }) {
  const checked = props.form.values[props.name] === true;
  return (
    <div class="field">
      <label>
        <input type="checkbox" name={props.name} value="true" checked={checked} /> {props.label}
      </label>
    </div>
  );
}

export function ClientFields({
  form,
  choices,
  saveable = true,
}: {
  form: FormState;
  choices: FormChoices;
  saveable?: boolean;
}) {
  return (
    <>
      <h2>Client</h2>
      <Select
        name="contact_id"
        label="Contact"
        form={form}
        hint="Pick a saved contact: the client fields left blank are taken from it."
        options={[
          ['', 'None: type the client below'],
          ...choices.contacts.map(
            (contact) =>
              [contact.id, contact.email ? `${contact.name} <${contact.email}>` : contact.name] as const,
          ),
        ]}
      />
      <div class="row">
        <Field name="client_name" label="Client name" form={form} maxLength={200} />
        <Field name="client_email" label="Client email" type="email" form={form} maxLength={200} />
      </div>
      <div class="row">
        <Field name="client_address" label="Client address" form={form} maxLength={2000} />
        <Field name="client_country" label="Client country" form={form} maxLength={80} />
      </div>
      {saveable && <Checkbox name="save_contact" label="Save this client to Contacts" form={form} />}
    </>
  );
}

function DocumentFields(props: { kind: Kind; form: FormState; choices: FormChoices }) {
  const { kind, form, choices } = props;
  return (
    <>
      <h2>Document</h2>
      <div class="row">
        <Select
          name="account_id"
          label="Account"
          form={form}
          hint="Payments land here; the document takes its currency."
          options={choices.accounts.map(
            (account) => [account.id, `${account.name} (${account.currency})`] as const,
          )}
        />
        <Field
          name="number"
          label="Number"
          form={form}
          maxLength={40}
          hint={`Blank: the next ${KIND_WORDS[kind].one.toLowerCase()} number (Book settings, Numbering).`}
        />
      </div>
      {kind === 'credit_note' && (
        <Select
          name="corrects_invoice_id"
          label="Corrects invoice"
          form={form}
          hint="Its total is taken off what that invoice still asks for."
          options={[
            ['', 'None'],
            ...choices.correctable.map(
              (invoice) =>
                [invoice.id, `${invoice.number}: ${invoice.client_name} (${invoice.currency})`] as const,
            ),
          ]}
        />
      )}
      <div class="row">
        <Field name="issued_on" label="Issued on" type="date" form={form} hint="Blank: today." />
        {kind !== 'credit_note' && (
          <Field
            name="due_on"
            label={kind === 'quote' ? 'Valid until' : 'Due on'}
            type="date"
            form={form}
            required
          />
        )}
      </div>
      <div class="row">
        <Field
          name="seller.name"
          label="Issued by"
          form={form}
          maxLength={200}
          hint="Your name on the document."
        />
        <Field name="notes" label="Notes" form={form} maxLength={4000} />
      </div>
      <Checkbox name="prices_include_tax" label="Prices include tax" form={form} />
    </>
  );
}

export function NewInvoicePage(props: {
  shell: BookShell;
  kind: Kind;
  choices: FormChoices;
  form: FormState;
  lines: number;
}) {
  const { shell, kind, choices, form } = props;
  const title = `New ${KIND_WORDS[kind].one.toLowerCase()}`;
  const others = (Object.keys(KIND_WORDS) as Kind[]).filter((other) => other !== kind);
  return (
    <Layout shell={shell} title={title}>
      <p>
        <a href={invoicePath(shell)}>← Invoices</a>
      </p>
      <h1>{title}</h1>
      <p class="muted">
        Or write a{' '}
        {others.map((other, index) => (
          <>
            {index > 0 && ' or a '}
            <a href={hrefWith(invoicePath(shell, 'new'), { kind: other })}>
              {KIND_WORDS[other].one.toLowerCase()}
            </a>
          </>
        ))}
        .
      </p>
      {choices.accounts.length === 0 ? (
        <EmptyState title="No account yet">
          <p>
            A document needs an account for its currency and the payments against it. Add one under{' '}
            <a href={bookPath(shell.book.id, 'accounts')}>Accounts</a> first.
          </p>
        </EmptyState>
      ) : (
        <div class="card">
          <Form action={invoicePath(shell)} csrf={shell.csrfToken} form={form} label={title}>
            <input type="hidden" name="kind" value={kind} />
            <input type="hidden" name="_lines" value={String(props.lines)} />
            <DocumentFields kind={kind} form={form} choices={choices} />
            <ClientFields form={form} choices={choices} />
            <h2>Lines</h2>
            {form.errors.line_items && <Notice kind="error">{form.errors.line_items}</Notice>}
            {Array.from({ length: props.lines }, (_, index) => (
              <LineFields index={index} form={form} />
            ))}
            <p class="actions">
              {props.lines < LINES_IN_FORM_MAX && (
                <button type="submit" name="_more" value="1" class="secondary" formnovalidate>
                  Add a line
                </button>
              )}
              <button type="submit">Create the {KIND_WORDS[kind].one.toLowerCase()}</button>
            </p>
          </Form>
        </div>
      )}
    </Layout>
  );
}

/** The form's values for a draft as it stands: what the edit form shows before anything is typed. */
export function draftValues(invoice: InvoiceRecord): Record<string, unknown> {
  return {
    contact_id: invoice.contact_id ?? '',
    client_name: invoice.client_name,
    client_email: invoice.client_email,
    client_address: invoice.client_address,
    client_country: invoice.client_country,
    issued_on: invoice.issued_on,
    due_on: invoice.due_on,
    notes: invoice.notes,
    prices_include_tax: invoice.prices_include_tax,
    line_items: invoice.line_items.map((line) => ({
      description: line.description,
      quantity: line.quantity,
      unit: line.unit,
      unit_price: line.unit_price,
      tax_kind: line.tax_kind ?? '',
      tax_rate: line.tax_rate,
    })),
  };
}

/** The Edit form of a draft invoice or quote: its client, lines, dates and notes, until it is sent. */
export function EditInvoicePage(props: {
  shell: BookShell;
  invoice: InvoiceRecord;
  choices: FormChoices;
  form: FormState;
  lines: number;
}) {
  const { shell, invoice, choices, form } = props;
  const kind = invoice.kind as Kind;
  const title = `Edit ${KIND_WORDS[kind].one.toLowerCase()} ${invoice.number}`;
  return (
    <Layout shell={shell} title={title}>
      <p>
        <a href={invoicePath(shell, invoice.id)}>← {`${KIND_WORDS[kind].one} ${invoice.number}`}</a>
      </p>
      <h1>{title}</h1>
      <p class="muted">A draft changes until it is sent. The totals are computed again when it is saved.</p>
      <div class="card">
        <Form
          action={invoicePath(shell, invoice.id, 'edit')}
          csrf={shell.csrfToken}
          form={form}
          label={title}
        >
          <input type="hidden" name="_lines" value={String(props.lines)} />
          <h2>Document</h2>
          <div class="row">
            <Field name="issued_on" label="Issued on" type="date" form={form} required />
            <Field
              name="due_on"
              label={kind === 'quote' ? 'Valid until' : 'Due on'}
              type="date"
              form={form}
              required
            />
          </div>
          <Field name="notes" label="Notes" form={form} maxLength={4000} />
          <Checkbox name="prices_include_tax" label="Prices include tax" form={form} />
          <ClientFields form={form} choices={choices} saveable={false} />
          <h2>Lines</h2>
          {form.errors.line_items && <Notice kind="error">{form.errors.line_items}</Notice>}
          {Array.from({ length: props.lines }, (_, index) => (
            <LineFields index={index} form={form} />
          ))}
          <p class="actions">
            {props.lines < LINES_IN_FORM_MAX && (
              <button type="submit" name="_more" value="1" class="secondary" formnovalidate>
                Add a line
              </button>
            )}
            <button type="submit">Save the changes</button>
          </p>
        </Form>
      </div>
    </Layout>
  );
}
