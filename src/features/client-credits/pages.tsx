import { canAdminister } from '../../core/roles.ts';
import {
  type Column,
  DateTime,
  EmptyState,
  type FormState,
  hrefWith,
  Money,
  Notice,
  Table,
} from '../../platform/web/components.tsx';
import { Layout } from '../../platform/web/layout.tsx';
import { bookPath, type Shell, type ShellBook } from '../../platform/web/shell.ts';
import type { listClientCredits } from './service.ts';

// Client credits: every client_ref with its prepaid balance, last call and top-ups; name a
// contact for it; the client's public balance page. Keys live under this screen.

type Credit = Awaited<ReturnType<typeof listClientCredits>>['items'][number];
type ContactOption = { id: string; name: string };
type BookShell = Shell & { book: ShellBook };

function NameContact({
  shell,
  credit,
  contacts,
}: {
  shell: BookShell;
  credit: Credit;
  contacts: ContactOption[];
}) {
  if (contacts.length === 0) return <span class="muted">Add a contact first</span>;
  const id = `contact-${credit.id}`;
  return (
    <form
      method="post"
      action={bookPath(shell.book.id, `clients/${encodeURIComponent(credit.client_ref)}/contact`)}
      class="actions"
    >
      <input type="hidden" name="_csrf" value={shell.csrfToken} />
      <label class="skip" for={id}>
        Contact for {credit.client_ref}
      </label>
      <select id={id} name="contact_id">
        {contacts.map((contact) => (
          <option value={contact.id} selected={contact.id === credit.contact_id}>
            {contact.name}
          </option>
        ))}
      </select>
      <button type="submit" class="small secondary">
        Name
      </button>
    </form>
  );
}

export function ClientCreditsPage(props: {
  shell: BookShell;
  page: { items: Credit[]; next_cursor: string | null };
  cursor: string | undefined;
  contacts: ContactOption[];
  form?: FormState | undefined;
}) {
  const { shell, page } = props;
  const path = bookPath(shell.book.id, 'clients');
  const columns: Column<Credit>[] = [
    { header: 'Client', cell: (credit) => credit.label },
    { header: 'Client', cell: (credit) => <code>{credit.client_ref}</code> },
    {
      header: 'Balance',
      numeric: true,
      cell: (credit) => <Money amount={credit.balance} currency={credit.currency} />,
    },
    { header: 'Last call', cell: (credit) => <DateTime at={credit.last_call_at} /> },
    { header: 'Top-ups', numeric: true, cell: (credit) => String(credit.top_ups) },
    {
      header: 'Balance page',
      cell: (credit) => (
        <a href={credit.balance_url} target="_blank" rel="noopener">
          Open
        </a>
      ),
    },
  ];
  if (canAdminister(shell.book.role)) {
    columns.push({
      header: 'Contact',
      cell: (credit) => <NameContact shell={shell} credit={credit} contacts={props.contacts} />,
    });
  }
  return (
    <Layout shell={shell} title="Client credits">
      <h1>Client credits</h1>
      <p>
        <a href={bookPath(shell.book.id, 'keys')}>Keys →</a>
      </p>
      {props.form?.sentence && <Notice kind="error">{props.form.sentence}</Notice>}
      <Table
        caption="Client credits"
        columns={columns}
        rows={page.items}
        nextHref={page.next_cursor ? hrefWith(path, { cursor: page.next_cursor }) : null}
        firstHref={props.cursor ? path : null}
        empty={
          <EmptyState title="No client credits yet">
            <p>A client appears here when your server first charges or tops up its credit with a key.</p>
          </EmptyState>
        }
      />
    </Layout>
  );
}
