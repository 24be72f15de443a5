import { canAdminister } from '../../core/roles.ts';
import {
  ActionButton,
  type Column,
  DateTime,
  EmptyState,
  Field,
  Filters,
  Form,
  type FormState,
  hrefWith,
  Money,
  Notice,
  Pill,
  statusWords,
  Table,
} from '../../platform/web/components.tsx';
import { Layout } from '../../platform/web/layout.tsx';
import { bookPath, type Shell, type ShellBook } from '../../platform/web/shell.ts';
import type { PaymentRequestRecord } from './service.ts';

// Payment requests: by status, with the amount received, the pay page and, for owners and
// admins, marking a bank transfer paid by hand.

const STATUSES = ['active', 'paid', 'cancelled'] as const;
type Status = (typeof STATUSES)[number];

function tone(status: string) {
  return status === 'paid' ? 'ok' : status === 'active' ? 'warn' : 'bad';
}

/** The form that records a bank transfer against one request, on its own page. */
export function MarkPaidPage(props: {
  shell: Shell & { book: ShellBook };
  request: PaymentRequestRecord;
  form?: FormState | undefined;
  /** A refused cancel's sentence. */
  notice?: string | undefined;
}) {
  const { shell, request: row, form } = props;
  const list = bookPath(shell.book.id, 'payment-requests');
  return (
    <Layout shell={shell} title="Payment request">
      <p class="muted">
        <a href={list}>Payment requests</a> › {row.memo || 'Request'}
      </p>
      <h1>Payment request: {row.memo || row.token}</h1>
      <dl class="figures">
        <div>
          <dt>Amount</dt>
          <dd>
            <Money amount={row.amount} currency={row.currency} />
          </dd>
        </div>
        <div>
          <dt>Received so far</dt>
          <dd>
            <Money amount={row.amount_received} currency={row.currency} />
          </dd>
        </div>
        <div>
          <dt>Status</dt>
          <dd>
            <Pill tone={tone(row.status)}>{row.status}</Pill>
          </dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>
            <DateTime at={row.created_at} />
          </dd>
        </div>
      </dl>
      {props.notice && <Notice kind="error">{props.notice}</Notice>}
      {!canAdminister(shell.book.role) ? (
        <div class="notice warn" role="status">
          Only owners and admins record payments by hand.
        </div>
      ) : row.status === 'active' ? (
        <div class="card">
          <p class="muted">Record a bank transfer you received for this request; it is booked at once.</p>
          <Form
            action={bookPath(shell.book.id, `payment-requests/${row.token}/mark-paid`)}
            csrf={shell.csrfToken}
            form={form}
            label={`Mark ${row.memo || row.token} paid`}
          >
            <Field name="amount" label={`Amount received (${row.currency})`} form={form} required />
            <Field name="reference" label="Bank reference" form={form} required maxLength={200} />
            <Field name="payer" label="Payer (optional)" form={form} maxLength={200} />
            <button type="submit">Record the payment</button>
          </Form>
          <h2>Cancel this request</h2>
          <p class="muted">It lapses now: the pay page stops taking payments.</p>
          <ActionButton
            action={bookPath(shell.book.id, `payment-requests/${row.token}/cancel`)}
            csrf={shell.csrfToken}
            label="Cancel the request"
            tone="danger"
            confirm="Cancel this payment request? The payer can no longer pay it."
          />
        </div>
      ) : (
        <div class="notice warn" role="status">
          This payment request is {row.status}; it takes no more payments.
        </div>
      )}
    </Layout>
  );
}

export function PaymentRequestsPage(props: {
  shell: Shell & { book: ShellBook };
  page: { items: PaymentRequestRecord[]; next_cursor: string | null };
  status: Status | undefined;
  cursor: string | undefined;
}) {
  const { shell, page, status } = props;
  const path = bookPath(shell.book.id, 'payment-requests');
  const admin = canAdminister(shell.book.role);
  const columns: Column<PaymentRequestRecord>[] = [
    { header: 'Created', cell: (row) => <DateTime at={row.created_at} /> },
    { header: 'Memo', cell: (row) => row.memo || <span class="muted">—</span> },
    { header: 'Amount', numeric: true, cell: (row) => <Money amount={row.amount} currency={row.currency} /> },
    {
      header: 'Received',
      numeric: true,
      cell: (row) => <Money amount={row.amount_received} currency={row.currency} />,
    },
    { header: 'Status', cell: (row) => <Pill tone={tone(row.status)}>{row.status}</Pill> },
    {
      header: 'Pay page',
      cell: (row) => (
        <a href={row.url} target="_blank" rel="noopener">
          Open
        </a>
      ),
    },
  ];
  if (admin) {
    columns.push({
      header: '',
      cell: (row) =>
        // A link, not a form per row: the page stays small (each row's form weighed on every load).
        row.status === 'active' ? (
          <a href={bookPath(shell.book.id, `payment-requests/${row.token}/mark-paid`)}>Mark paid or cancel</a>
        ) : null,
    });
  }
  return (
    <Layout shell={shell} title="Payment requests">
      <h1>Payment requests</h1>
      <Filters
        label="Status"
        options={[
          { href: path, label: 'All', current: status === undefined },
          ...STATUSES.map((option) => ({
            href: hrefWith(path, { status: option }),
            label: statusWords(option),
            current: status === option,
          })),
        ]}
      />
      <Table
        caption="Payment requests"
        columns={columns}
        rows={page.items}
        nextHref={page.next_cursor ? hrefWith(path, { status, cursor: page.next_cursor }) : null}
        firstHref={props.cursor ? hrefWith(path, { status }) : null}
        empty={
          <EmptyState title={status ? `No ${status} payment requests` : 'No payment requests yet'}>
            <p>
              Your server mints them with a key: <code>POST /integration/payment-requests</code>. Issue one
              under <a href={bookPath(shell.book.id, 'keys')}>Keys</a>.
            </p>
          </EmptyState>
        }
      />
    </Layout>
  );
}
