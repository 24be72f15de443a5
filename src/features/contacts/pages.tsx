import type { JSX } from 'preact';
import { groupedIban } from '../../core/bank-transfer.ts';
import { canWrite } from '../../core/roles.ts';
import { networkLabel } from '../../platform/chain/networks.ts';
import {
  type Column,
  EmptyState,
  Field,
  Form,
  type FormState,
  hrefWith,
  Select,
  Table,
} from '../../platform/web/components.tsx';
import { Layout } from '../../platform/web/layout.tsx';
import { bookPath, type Shell, type ShellBook } from '../../platform/web/shell.ts';
import type { presentContact } from './service.ts';

// Contacts: the book's address book, and a new contact with one address: bank requisites in any
// of the four schemes (sepa, swift, uk, us_ach) or a crypto wallet, the fields of the kind chosen.

export type ContactView = ReturnType<typeof presentContact> & { created_at?: string };

export function requisitesText(contact: ContactView): string {
  const parts: string[] = [];
  for (const address of contact.addresses) {
    const requisites = address.requisites as Record<string, unknown> | null;
    if (requisites) {
      // An IBAN reads in groups of four, as on the pay page and the PDF.
      const account =
        typeof requisites.iban === 'string'
          ? groupedIban(requisites.iban)
          : String(requisites.account_number ?? '');
      parts.push(`${String(requisites.scheme).toUpperCase()} ${account}`);
    } else if (address.address)
      parts.push(`${address.address}${address.network ? ` (${networkLabel(address.network)})` : ''}`);
  }
  return parts.join(' · ');
}

/** What the new contact's first address is: none, a bank account in one scheme, or a wallet. */
export const ADDRESS_KINDS = ['none', 'sepa', 'swift', 'uk', 'us_ach', 'crypto'] as const;
export type AddressKind = (typeof ADDRESS_KINDS)[number];

export const KIND_LABELS: Record<AddressKind, string> = {
  none: 'None',
  sepa: 'SEPA (IBAN)',
  swift: 'SWIFT',
  uk: 'UK (sort code)',
  us_ach: 'US ACH',
  crypto: 'Crypto address',
};

const AT = 'addresses.0';
const REQ = `${AT}.requisites`;

/** US ACH: account and routing numbers, the holder, checking or savings. */
function AchFields({ form, holder }: { form: FormState; holder: JSX.Element }) {
  return (
    <div class="row">
      <Field
        name={`${REQ}.account_number`}
        label="Account number"
        form={form}
        required
        hint="4 to 17 digits."
      />
      <Field
        name={`${REQ}.routing_number`}
        label="Routing number"
        form={form}
        required
        hint="9 digits (ABA)."
      />
      {holder}
      <Select
        name={`${REQ}.account_type`}
        label="Account type"
        options={[
          ['checking', 'Checking'],
          ['savings', 'Savings'],
        ]}
        form={form}
      />
    </div>
  );
}

/** The fields of one bank scheme, named as the app API's body nests them. */
function SchemeFields({ kind, form }: { kind: Exclude<AddressKind, 'none' | 'crypto'>; form: FormState }) {
  const holder = <Field name={`${REQ}.holder`} label="Account holder" form={form} required maxLength={200} />;
  switch (kind) {
    case 'sepa':
      return (
        <div class="row">
          <Field name={`${REQ}.iban`} label="IBAN" form={form} required hint="Spaces are fine." />
          <Field name={`${REQ}.bic`} label="BIC (optional)" form={form} hint="8 or 11 characters." />
          {holder}
        </div>
      );
    case 'swift':
      return (
        <>
          <div class="row">
            <Field name={`${REQ}.account_number`} label="Account number or IBAN" form={form} required />
            <Field
              name={`${REQ}.swift_bic`}
              label="SWIFT/BIC"
              form={form}
              required
              hint="8 or 11 characters."
            />
            {holder}
          </div>
          <div class="row">
            <Field name={`${REQ}.bank_name`} label="Bank name (optional)" form={form} maxLength={200} />
            <Field name={`${REQ}.bank_address`} label="Bank address (optional)" form={form} />
          </div>
        </>
      );
    case 'uk':
      return (
        <div class="row">
          <Field
            name={`${REQ}.account_number`}
            label="Account number"
            form={form}
            required
            hint="8 digits."
          />
          <Field
            name={`${REQ}.sort_code`}
            label="Sort code"
            form={form}
            required
            hint="12-34-56 or 123456."
          />
          {holder}
        </div>
      );
    case 'us_ach':
      return <AchFields form={form} holder={holder} />;
  }
}

/** A wallet to pay the contact at: its address and the network it lives on. */
function CryptoFields({ form }: { form: FormState }) {
  return (
    <div class="row">
      <Field name={`${AT}.address`} label="Wallet address" form={form} required maxLength={256} />
      <Field
        name={`${AT}.network`}
        label="Network"
        form={form}
        maxLength={24}
        hint="For example base or ethereum."
      />
      <Field
        name={`${AT}.chain`}
        label="Chain (optional)"
        form={form}
        maxLength={24}
        hint="For example evm."
      />
    </div>
  );
}

/** Links that choose the address's kind; each keeps the page and shows that kind's fields. */
function KindPicker({ path, kind, anchor }: { path: string; kind: AddressKind; anchor: string }) {
  return (
    <nav class="filters" aria-label="Requisites">
      <span class="muted">Requisites:</span>
      {ADDRESS_KINDS.map((option) => (
        <a
          href={`${hrefWith(path, { scheme: option === 'none' ? undefined : option })}#${anchor}`}
          aria-current={option === kind ? 'true' : undefined}
        >
          {KIND_LABELS[option]}
        </a>
      ))}
    </nav>
  );
}

/** Repeated tag inputs: the tags held (or posted), then empty ones to add more. */
function TagFields({ form }: { form: FormState }) {
  const held = form.values.tags;
  const tags = Array.isArray(held) ? held.filter((tag): tag is string => typeof tag === 'string') : [];
  const shown = [...tags, '', ''].slice(0, Math.max(tags.length + 1, 3));
  const error = Object.entries(form.errors).find(
    ([name]) => name === 'tags' || name.startsWith('tags.'),
  )?.[1];
  return (
    <fieldset class="field">
      <legend>Tags</legend>
      <div class="row">
        {shown.map((tag, index) => (
          <input
            id={`field-tags-${index}`}
            type="text"
            name="tags"
            value={tag}
            maxLength={40}
            aria-label={`Tag ${index + 1}`}
            aria-invalid={error ? 'true' : undefined}
          />
        ))}
      </div>
      <span class="hint">Up to 20, each up to 40 characters. Empty boxes are ignored.</span>
      {error && <span class="error">{error}</span>}
    </fieldset>
  );
}

/** The contact's own fields, shared by the new-contact form and a contact's edit form. */
function OwnFields({ form, full }: { form: FormState; full: boolean }) {
  return (
    <>
      <div class="row">
        <Field name="name" label="Name" form={form} required maxLength={120} />
        <Select
          name="kind"
          label="Kind"
          options={[
            ['person', 'Person'],
            ['company', 'Company'],
          ]}
          form={form}
        />
        <Field name="email" label="Email" type="email" form={form} maxLength={200} />
      </div>
      <div class="row">
        <Field name="country" label="Country" form={form} hint="Two letters, e.g. DE." maxLength={80} />
        <Field name="tax_id" label="Tax ID" form={form} maxLength={64} />
        {full && <Field name="reg_number" label="Registration number" form={form} maxLength={64} />}
        {full && <Field name="phone" label="Phone" form={form} maxLength={40} />}
      </div>
      {full && (
        <>
          <Field name="address" label="Postal address" form={form} maxLength={2000} />
          <Field name="note" label="Note" form={form} maxLength={2000} hint="For your book only." />
          <TagFields form={form} />
        </>
      )}
    </>
  );
}

/** The first address's fields for the kind chosen: a bank scheme's, a wallet's, or none. */
function AddressFields({ form, kind }: { form: FormState; kind: AddressKind }) {
  if (kind === 'none') return null;
  return (
    <>
      <h3>{kind === 'crypto' ? 'Crypto address' : `Bank requisites: ${KIND_LABELS[kind]}`}</h3>
      <Field
        name={`${AT}.label`}
        label="Label (optional)"
        form={form}
        maxLength={80}
        hint="Main account, say."
      />
      {kind === 'crypto' ? (
        <CryptoFields form={form} />
      ) : (
        <>
          <input type="hidden" name={`${REQ}.scheme`} value={kind} />
          <SchemeFields kind={kind} form={form} />
        </>
      )}
    </>
  );
}

/**
 * A contact's form: its own fields and its first address. `path` is the page the kind links
 * ask again (with ?scheme=); `action` where the form posts.
 */
export function ContactForm(props: {
  shell: Shell & { book: ShellBook };
  form: FormState;
  kind: AddressKind;
  path: string;
  anchor: string;
  label: string;
  submit: string;
  full: boolean;
}) {
  const { shell, form, kind } = props;
  return (
    <>
      <KindPicker path={props.path} kind={kind} anchor={props.anchor} />
      <Form action={props.path} csrf={shell.csrfToken} form={form} label={props.label}>
        <OwnFields form={form} full={props.full} />
        <AddressFields form={form} kind={kind} />
        <button type="submit">{props.submit}</button>
      </Form>
    </>
  );
}

function CreateForm(props: { shell: Shell & { book: ShellBook }; form: FormState; kind: AddressKind }) {
  const path = bookPath(props.shell.book.id, 'contacts');
  return (
    <div class="card" id="new-contact">
      <h2>New contact</h2>
      <ContactForm
        {...props}
        path={path}
        anchor="new-contact"
        label="New contact"
        submit="Add the contact"
        full={false}
      />
    </div>
  );
}

export function ContactsPage(props: {
  shell: Shell & { book: ShellBook };
  page: { items: ContactView[]; next_cursor: string | null };
  cursor: string | undefined;
  form: FormState;
  /** Which kind of address the new-contact form asks for. */
  kind: AddressKind;
}) {
  const { shell, page, form } = props;
  const path = bookPath(shell.book.id, 'contacts');
  const columns: Column<ContactView>[] = [
    {
      header: 'Name',
      cell: (contact) => <a href={bookPath(shell.book.id, `contacts/${contact.id}`)}>{contact.name}</a>,
    },
    { header: 'Kind', cell: (contact) => contact.kind },
    { header: 'Email', cell: (contact) => contact.email || <span class="muted">—</span> },
    { header: 'Country', cell: (contact) => contact.country || <span class="muted">—</span> },
    { header: 'Requisites', cell: (contact) => requisitesText(contact) || <span class="muted">—</span> },
    { header: 'Tax ID', cell: (contact) => contact.tax_id || <span class="muted">—</span> },
  ];
  return (
    <Layout shell={shell} title="Contacts">
      <h1>Contacts</h1>
      <Table
        caption="Contacts"
        columns={columns}
        rows={page.items}
        nextHref={page.next_cursor ? hrefWith(path, { cursor: page.next_cursor }) : null}
        firstHref={props.cursor ? path : null}
        empty={
          <EmptyState title="No contacts yet">
            <p>Add the people and companies you bill or pay; a client credit can then be named after one.</p>
          </EmptyState>
        }
      />
      {canWrite(shell.book.role) && <CreateForm shell={shell} form={form} kind={props.kind} />}
    </Layout>
  );
}
