import { canWrite } from '../../core/roles.ts';
import type { FormState } from '../../platform/web/components.tsx';
import { EditHistory, type RecordedEdit, shownValue } from '../../platform/web/edit-history.tsx';
import { Layout } from '../../platform/web/layout.tsx';
import { bookPath, type Shell, type ShellBook } from '../../platform/web/shell.ts';
import { type AddressKind, ContactForm, type ContactView, KIND_LABELS, requisitesText } from './pages.tsx';

// One contact's page: what the book holds about them, the form that changes it (its own fields
// and its first address), and who changed what and when.

const FIELD_WORDS: Record<string, string> = {
  name: 'Name',
  kind: 'Kind',
  email: 'Email',
  phone: 'Phone',
  address: 'Postal address',
  country: 'Country',
  reg_number: 'Registration number',
  tax_id: 'Tax ID',
  note: 'Note',
  tags: 'Tags',
  addresses: 'Addresses',
};

/** An address list reads as each address's label and what it holds, "; " between them. */
function shownContactValue(field: string, value: unknown): string {
  if (field !== 'addresses' || !Array.isArray(value)) return shownValue(field, value);
  if (value.length === 0) return '(none)';
  return value
    .map((address: Record<string, unknown>) => {
      const requisites = address.requisites as Record<string, unknown> | null;
      const what = requisites
        ? `${KIND_LABELS[requisites.scheme as AddressKind] ?? 'Bank'} ${shownValue('', requisites)}`
        : shownValue('', { address: address.address, network: address.network });
      return address.label ? `${String(address.label)}: ${what}` : what;
    })
    .join('; ');
}

function Held({ contact }: { contact: ContactView }) {
  const rows: [string, string][] = [
    ['Kind', contact.kind === 'company' ? 'Company' : contact.kind === 'person' ? 'Person' : contact.kind],
    ['Email', contact.email],
    ['Phone', contact.phone],
    ['Country', contact.country],
    ['Tax ID', contact.tax_id],
    ['Registration number', contact.reg_number],
    ['Postal address', contact.address],
    ['Requisites', requisitesText(contact)],
    ['Tags', contact.tags.join(', ')],
  ];
  return (
    <dl class="facts">
      {rows.map(([term, value]) => (
        <>
          <dt>{term}</dt>
          <dd>{value || <span class="muted">—</span>}</dd>
        </>
      ))}
    </dl>
  );
}

export function ContactPage(props: {
  shell: Shell & { book: ShellBook };
  contact: ContactView;
  form: FormState;
  kind: AddressKind;
  edits: RecordedEdit[];
}) {
  const { shell, contact } = props;
  const path = bookPath(shell.book.id, `contacts/${contact.id}`);
  return (
    <Layout shell={shell} title={contact.name}>
      <p class="muted">
        <a href={bookPath(shell.book.id, 'contacts')}>Contacts</a> › {contact.name}
      </p>
      <h1>{contact.name}</h1>
      <Held contact={contact} />
      {canWrite(shell.book.role) && (
        <div class="card" id="edit-contact">
          <h2>Edit</h2>
          <p class="muted">
            Invoices already made keep the buyer as it was when they were made; a change here reaches the next
            ones.
          </p>
          <ContactForm
            shell={shell}
            form={props.form}
            kind={props.kind}
            path={path}
            anchor="edit-contact"
            label="Edit the contact"
            submit="Save the contact"
            full
          />
        </div>
      )}
      <h2>Changes</h2>
      <EditHistory edits={props.edits} words={FIELD_WORDS} shown={shownContactValue} />
    </Layout>
  );
}
