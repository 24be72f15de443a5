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
import { bookPath, canWrite, type Shell, type ShellBook } from '../../platform/web/shell.ts';
import type { presentContact } from './service.ts';

// Contacts: the book's address book, and a new contact with its requisites (SEPA here; the API
// also takes swift, uk and us_ach).

type ContactView = ReturnType<typeof presentContact> & { created_at?: string };

function requisitesText(contact: ContactView): string {
  const parts: string[] = [];
  for (const address of contact.addresses) {
    const requisites = address.requisites as Record<string, unknown> | null;
    if (requisites) {
      const account = requisites.iban ?? requisites.account_number ?? '';
      parts.push(`${String(requisites.scheme).toUpperCase()} ${String(account)}`);
    } else if (address.address)
      parts.push(`${address.address}${address.network ? ` (${address.network})` : ''}`);
  }
  return parts.join(' · ');
}

function CreateForm({ shell, form }: { shell: Shell & { book: ShellBook }; form: FormState }) {
  return (
    <div class="card">
      <h2>New contact</h2>
      <Form
        action={bookPath(shell.book.id, 'contacts')}
        csrf={shell.csrfToken}
        form={form}
        label="New contact"
      >
        <div class="row">
          <Field name="name" label="Name" form={form} required maxLength={200} />
          <Select
            name="kind"
            label="Kind"
            options={[
              ['person', 'Person'],
              ['company', 'Company'],
            ]}
            form={form}
          />
          <Field name="email" label="Email" type="email" form={form} />
        </div>
        <div class="row">
          <Field name="country" label="Country" form={form} hint="Two letters, e.g. DE." />
          <Field name="tax_id" label="Tax id" form={form} />
        </div>
        <h3>Bank requisites (SEPA)</h3>
        <div class="row">
          <Select
            name="addresses.0.requisites.scheme"
            label="Scheme"
            options={[
              ['', 'None'],
              ['sepa', 'SEPA'],
            ]}
            form={form}
          />
          <Field name="addresses.0.requisites.iban" label="IBAN" form={form} />
          <Field name="addresses.0.requisites.bic" label="BIC" form={form} />
          <Field name="addresses.0.requisites.holder" label="Account holder" form={form} />
        </div>
        <button type="submit">Add the contact</button>
      </Form>
    </div>
  );
}

export function ContactsPage(props: {
  shell: Shell & { book: ShellBook };
  page: { items: ContactView[]; next_cursor: string | null };
  cursor: string | undefined;
  form: FormState;
}) {
  const { shell, page, form } = props;
  const path = bookPath(shell.book.id, 'contacts');
  const columns: Column<ContactView>[] = [
    { header: 'Name', cell: (contact) => contact.name },
    { header: 'Kind', cell: (contact) => contact.kind },
    { header: 'Email', cell: (contact) => contact.email || <span class="muted">—</span> },
    { header: 'Country', cell: (contact) => contact.country || <span class="muted">—</span> },
    { header: 'Requisites', cell: (contact) => requisitesText(contact) || <span class="muted">—</span> },
    { header: 'Tax id', cell: (contact) => contact.tax_id || <span class="muted">—</span> },
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
      {canWrite(shell.book.role) && <CreateForm shell={shell} form={form} />}
    </Layout>
  );
}
