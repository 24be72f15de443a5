import { canAdminister } from '../../core/roles.ts';
import {
  type Column,
  DateTime,
  EmptyState,
  Field,
  Form,
  type FormState,
  hrefWith,
  Money,
  Notice,
  Table,
} from '../../platform/web/components.tsx';
import { Layout } from '../../platform/web/layout.tsx';
import { bookPath, type Shell, type ShellBook } from '../../platform/web/shell.ts';
import type { clientDetail, listClientCredits } from './service.ts';

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
    {
      header: 'Client',
      cell: (credit) => (
        <a href={bookPath(shell.book.id, `clients/${encodeURIComponent(credit.client_ref)}`)}>
          {credit.label}
        </a>
      ),
    },
    { header: 'Reference', cell: (credit) => <code>{credit.client_ref}</code> },
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

type Detail = Awaited<ReturnType<typeof clientDetail>>;

const KIND_WORDS: Record<string, string> = { grant: 'Grant', correction: 'Taken back', refund: 'Refund' };

/** The form owners and admins use to grant, take back or refund credit, with a reason. */
function AdjustForm({
  shell,
  detail,
  form,
}: {
  shell: BookShell;
  detail: Detail;
  form?: FormState | undefined;
}) {
  const refund = form?.values.refund === true;
  return (
    <div class="card">
      <h2>Change the credit</h2>
      <p class="muted">
        A positive amount grants credit; a negative one takes it back. Tick refund when you pay it back to the
        client. The credit never goes below zero.
      </p>
      <Form
        action={bookPath(
          shell.book.id,
          `clients/${encodeURIComponent(detail.credit.client_ref)}/adjustments`,
        )}
        csrf={shell.csrfToken}
        form={form}
        label="Change the credit"
      >
        <Field name="amount" label={`Amount (${detail.credit.currency}, + or −)`} form={form} required />
        <Field name="reason" label="Reason" form={form} required maxLength={500} />
        <div class="field">
          <label>
            <input type="checkbox" name="refund" value="true" checked={refund} /> Refund to the client
          </label>
        </div>
        <button type="submit">Book the change</button>
      </Form>
    </div>
  );
}

/** The client's paid calls and settled top-ups, newest first. */
function CallsAndTopUps({ detail }: { detail: Detail }) {
  const currency = detail.credit.currency;
  return (
    <>
      <Table
        caption="Calls"
        columns={[
          { header: 'When', cell: (row) => <DateTime at={row.created_at} /> },
          { header: 'Endpoint', cell: (row) => row.resource ?? <span class="muted">—</span> },
          { header: 'Memo', cell: (row) => row.memo || <span class="muted">—</span> },
          {
            header: 'Amount',
            numeric: true,
            cell: (row) => <Money amount={row.amount} currency={currency} />,
          },
        ]}
        rows={detail.calls}
        nextHref={null}
        firstHref={null}
        empty={<EmptyState title="No calls yet" />}
      />
      <Table
        caption="Top-ups"
        columns={[
          { header: 'When', cell: (row) => <DateTime at={row.settled_at} /> },
          { header: 'Paid by', cell: (row) => row.rail },
          {
            header: 'Amount',
            numeric: true,
            cell: (row) => <Money amount={row.amount} currency={currency} />,
          },
        ]}
        rows={detail.topUps}
        nextHref={null}
        firstHref={null}
        empty={<EmptyState title="No top-ups yet" />}
      />
    </>
  );
}

export function ClientCreditPage(props: { shell: BookShell; detail: Detail; form?: FormState | undefined }) {
  const { shell, detail } = props;
  const { credit } = detail;
  const currency = credit.currency;
  return (
    <Layout shell={shell} title={credit.label}>
      <p class="muted">
        <a href={bookPath(shell.book.id, 'clients')}>Client credits</a> › {credit.label}
      </p>
      <h1>{credit.label}</h1>
      <dl class="figures">
        <div>
          <dt>Balance</dt>
          <dd>
            <Money amount={detail.balance} currency={currency} />
          </dd>
        </div>
        <div>
          <dt>Calls</dt>
          <dd>{String(detail.calls.length)}</dd>
        </div>
        <div>
          <dt>Top-ups</dt>
          <dd>{String(detail.topUps.length)}</dd>
        </div>
        <div>
          <dt>Balance page</dt>
          <dd>
            <a href={credit.balance_url} target="_blank" rel="noopener">
              Open
            </a>
          </dd>
        </div>
      </dl>
      {canAdminister(shell.book.role) && <AdjustForm shell={shell} detail={detail} form={props.form} />}
      <Table
        caption="Adjustments"
        columns={[
          { header: 'When', cell: (row) => <DateTime at={row.created_at} /> },
          { header: 'What', cell: (row) => KIND_WORDS[row.kind] ?? row.kind },
          {
            header: 'Amount',
            numeric: true,
            cell: (row) => <Money amount={row.amount} currency={currency} />,
          },
          { header: 'Reason', cell: (row) => row.reason },
          { header: 'By', cell: (row) => row.by_name || row.by_email },
          {
            header: 'Entry',
            cell: (row) => <a href={bookPath(shell.book.id, `ledger/${row.entry_id}`)}>Open</a>,
          },
        ]}
        rows={detail.adjustments}
        nextHref={null}
        firstHref={null}
        empty={<EmptyState title="No adjustments yet" />}
      />
      <CallsAndTopUps detail={detail} />
    </Layout>
  );
}
