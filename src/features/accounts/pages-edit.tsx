import {
  DateTime,
  EmptyState,
  Field,
  Form,
  type FormState,
  Select,
  Table,
} from '../../platform/web/components.tsx';
import { Layout } from '../../platform/web/layout.tsx';
import { bookPath, type Shell, type ShellBook } from '../../platform/web/shell.ts';

// One account's page: its name, colour and details, and for a bank account the requisites
// payers see on the pay page (IBAN and BIC, or account number with sort code or routing number).

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

/** The fields of the account-number schemes (UK, US, SWIFT). */
function NumberFields({ held, form }: { held: Requisites | { scheme: string }; form: FormState }) {
  const value = (name: string) => (held as Record<string, string | null>)[name] ?? '';
  return (
    <>
      <div class="row">
        <Field
          name="requisites.account_number"
          label="Account number"
          form={form}
          value={value('account_number')}
          maxLength={34}
          hint="UK, US or SWIFT."
        />
        <Field
          name="requisites.sort_code"
          label="Sort code"
          form={form}
          value={value('sort_code')}
          maxLength={8}
          hint="UK: 12-34-56."
        />
        <Field
          name="requisites.routing_number"
          label="Routing number"
          form={form}
          value={value('routing_number')}
          maxLength={9}
          hint="US: 9 digits."
        />
      </div>
      <div class="row">
        <Select
          name="requisites.account_type"
          label="Account type (US)"
          options={[
            ['', '—'],
            ['checking', 'Checking'],
            ['savings', 'Savings'],
          ]}
          form={form}
          value={value('account_type')}
        />
        <Field
          name="requisites.swift_bic"
          label="SWIFT/BIC"
          form={form}
          value={value('swift_bic')}
          maxLength={11}
          hint="SWIFT."
        />
        <Field
          name="requisites.bank_name"
          label="Bank name"
          form={form}
          value={value('bank_name')}
          maxLength={140}
          hint="SWIFT, optional."
        />
      </div>
    </>
  );
}

function RequisitesFields({ account, form }: { account: EditableAccount; form: FormState }) {
  const held = account.requisites ?? { scheme: '' };
  const value = (name: string) => held[name] ?? '';
  return (
    <div id="requisites">
      <h2>Bank details</h2>
      <p class="muted">What payers see on the pay page and what the bank file of a payment out names.</p>
      <div class="row">
        <Select name="requisites.scheme" label="Scheme" options={SCHEMES} form={form} value={held.scheme} />
        <Field
          name="requisites.holder"
          label="Account holder"
          form={form}
          value={value('holder')}
          maxLength={140}
        />
      </div>
      <div class="row">
        <Field
          name="requisites.iban"
          label="IBAN"
          form={form}
          value={value('iban')}
          maxLength={42}
          hint="SEPA. Spaces are fine."
        />
        <Field
          name="requisites.bic"
          label="BIC"
          form={form}
          value={value('bic')}
          maxLength={11}
          hint="SEPA, optional."
        />
      </div>
      <NumberFields held={held} form={form} />
    </div>
  );
}

export type AccountEdit = {
  id: string;
  at: string;
  by: string;
  changed: Record<string, { from: unknown; to: unknown }>;
};

const FIELD_WORDS: Record<string, string> = {
  name: 'Name',
  color: 'Colour',
  details: 'Details',
  requisites: 'Bank details',
};

/** A value as a person reads it in the history: text as it is, bank details field by field. */
function shown(value: unknown): string {
  if (value === null || value === undefined || value === '') return '(none)';
  if (typeof value === 'object')
    return Object.entries(value as Record<string, unknown>)
      .filter(([name, inner]) => name !== 'scheme' && inner !== null && inner !== '')
      .map(([, inner]) => String(inner))
      .join(' · ');
  return String(value);
}

/** Who changed what and when, newest first. */
export function EditHistory({ edits }: { edits: AccountEdit[] }) {
  return (
    <Table
      caption="Changes"
      columns={[
        { header: 'When', cell: (edit) => <DateTime at={edit.at} /> },
        { header: 'Who', cell: (edit) => edit.by },
        {
          header: 'What changed',
          cell: (edit) => (
            <ul class="plain">
              {Object.entries(edit.changed).map(([field, change]) => (
                <li>
                  {FIELD_WORDS[field] ?? field}: {shown(change.from)} → {shown(change.to)}
                </li>
              ))}
            </ul>
          ),
        },
      ]}
      rows={edits}
      nextHref={null}
      firstHref={null}
      empty={<EmptyState title="No changes yet" />}
    />
  );
}

export function AccountEditPage(props: {
  shell: Shell & { book: ShellBook };
  account: EditableAccount;
  form: FormState;
  edits: AccountEdit[];
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
          {account.kind === 'bank' && <RequisitesFields account={account} form={form} />}
          <button type="submit">Save the account</button>
        </Form>
      </div>
      <h2>Changes</h2>
      <EditHistory edits={props.edits} />
    </Layout>
  );
}
