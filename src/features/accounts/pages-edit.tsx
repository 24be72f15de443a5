import { Field, Form, type FormState, Select, typedValue } from '../../platform/web/components.tsx';
import { EditHistory, type RecordedEdit } from '../../platform/web/edit-history.tsx';
import { Layout } from '../../platform/web/layout.tsx';
import { bookPath, type Shell, type ShellBook } from '../../platform/web/shell.ts';

// One account's page: its name, colour and details, and for a bank account the requisites
// payers see on the pay page: the scheme, then that scheme's fields only (SEPA: holder, IBAN,
// BIC; UK: holder, account number, sort code; US: holder, account and routing number, type;
// SWIFT: holder, account number, SWIFT/BIC, bank).

type Requisites = Record<string, string | null> & { scheme: string };

export type EditableAccount = {
  id: string;
  kind: string;
  name: string;
  currency: string;
  color: string | null;
  details: string;
  requisites: Requisites | null;
};

const SCHEMES = [
  ['', 'No bank details yet'],
  ['sepa', 'SEPA: IBAN and BIC'],
  ['uk', 'UK: account number and sort code'],
  ['us_ach', 'US: account and routing number (ACH)'],
  ['swift', 'SWIFT: account number and SWIFT/BIC'],
] as const;

type FieldSpec = { name: string; label: string; maxLength: number; hint?: string };

const HOLDER: FieldSpec = { name: 'holder', label: 'Account holder', maxLength: 140 };
const ACCOUNT_NUMBER: FieldSpec = { name: 'account_number', label: 'Account number', maxLength: 34 };

/** Each scheme's fields, in the order a payer reads them; the form shows the chosen scheme's only. */
const SCHEME_FIELDS: Record<string, readonly FieldSpec[]> = {
  sepa: [
    HOLDER,
    { name: 'iban', label: 'IBAN', maxLength: 42, hint: 'Spaces are fine.' },
    { name: 'bic', label: 'BIC', maxLength: 11, hint: 'Optional.' },
  ],
  uk: [
    HOLDER,
    { ...ACCOUNT_NUMBER, hint: '8 digits.' },
    { name: 'sort_code', label: 'Sort code', maxLength: 8, hint: '12-34-56.' },
  ],
  us_ach: [
    HOLDER,
    ACCOUNT_NUMBER,
    { name: 'routing_number', label: 'Routing number', maxLength: 9, hint: '9 digits.' },
  ],
  swift: [
    HOLDER,
    ACCOUNT_NUMBER,
    { name: 'swift_bic', label: 'SWIFT/BIC', maxLength: 11 },
    { name: 'bank_name', label: 'Bank name', maxLength: 140, hint: 'Optional.' },
  ],
};

/**
 * The chosen scheme's fields. The scheme's select asks the server for this block again when it
 * changes (htmx, `hx-select`); without script the form posts the scheme with the fields shown,
 * and a refusal comes back with the chosen scheme's fields.
 */
function SchemeFields({ scheme, held, form }: { scheme: string; held: Requisites; form: FormState }) {
  const fields = SCHEME_FIELDS[scheme] ?? [];
  // A value is kept across schemes only where the field means the same (the holder, the number).
  const value = (name: string) => held[name] ?? '';
  return (
    <div id="scheme-fields" data-scheme={scheme}>
      {fields.length > 0 && (
        <div class="row">
          {fields.map((field) => (
            <Field
              name={`requisites.${field.name}`}
              label={field.label}
              form={form}
              value={value(field.name)}
              maxLength={field.maxLength}
              hint={field.hint}
            />
          ))}
        </div>
      )}
      {scheme === 'us_ach' && (
        <Select
          name="requisites.account_type"
          label="Account type"
          options={[
            ['checking', 'Checking'],
            ['savings', 'Savings'],
          ]}
          form={form}
          value={value('account_type') || 'checking'}
        />
      )}
    </div>
  );
}

function RequisitesFields(props: {
  book: string;
  account: EditableAccount;
  scheme: string | undefined;
  form: FormState;
}) {
  const { account, form } = props;
  const held: Requisites = account.requisites ?? { scheme: '' };
  const chosen = typedValue(form, 'requisites.scheme') ?? props.scheme ?? held.scheme;
  const scheme = SCHEMES.some(([value]) => value === chosen) ? chosen : '';
  const id = 'field-requisites.scheme';
  return (
    <div id="requisites">
      <h2>Bank details</h2>
      <p class="muted">What payers see on the pay page and what the bank file of a payment out names.</p>
      <div class="field">
        <label for={id}>Scheme</label>
        <select
          id={id}
          name="requisites.scheme"
          hx-get={bookPath(props.book, `accounts/${account.id}`)}
          hx-trigger="change"
          hx-target="#scheme-fields"
          hx-select="#scheme-fields"
          hx-swap="outerHTML"
          hx-push-url="false"
        >
          {SCHEMES.map(([value, label]) => (
            <option value={value} selected={value === scheme}>
              {label}
            </option>
          ))}
        </select>
        {form.errors['requisites.scheme'] && <span class="error">{form.errors['requisites.scheme']}</span>}
      </div>
      <SchemeFields scheme={scheme} held={held} form={form} />
    </div>
  );
}

const FIELD_WORDS: Record<string, string> = {
  name: 'Name',
  color: 'Colour',
  details: 'Details',
  requisites: 'Bank details',
};

export function AccountEditPage(props: {
  shell: Shell & { book: ShellBook };
  account: EditableAccount;
  form: FormState;
  /** The scheme asked for (the scheme's select, before the form is saved). */
  scheme?: string | undefined;
  edits: RecordedEdit[];
}) {
  const { shell, account, form } = props;
  return (
    <Layout shell={shell} title={account.name}>
      <p class="muted">
        <a href={bookPath(shell.book.id, 'accounts')}>Accounts</a> › {account.name}
      </p>
      <h1>
        {account.name}{' '}
        <span class="muted">
          ({account.kind}, {account.currency})
        </span>
      </h1>
      <div class="card">
        <Form
          action={bookPath(shell.book.id, `accounts/${account.id}`)}
          csrf={shell.csrfToken}
          form={form}
          label="Account"
        >
          <div class="row">
            <Field
              name="name"
              label="Name"
              form={form}
              value={account.name}
              required
              maxLength={120}
              hint="Yours only: payers see your trading name, never this."
            />
            <Field
              name="color"
              label="Colour"
              form={form}
              value={account.color ?? ''}
              maxLength={9}
              placeholder="#1a7f5a"
            />
          </div>
          <Field name="details" label="Notes" form={form} value={account.details} maxLength={2000} />
          {account.kind === 'bank' && (
            <RequisitesFields book={shell.book.id} account={account} scheme={props.scheme} form={form} />
          )}
          <button type="submit">Save the account</button>
        </Form>
      </div>
      <h2>Changes</h2>
      <EditHistory edits={props.edits} words={FIELD_WORDS} />
    </Layout>
  );
}
