import {
  type Column,
  DateTime,
  EmptyState,
  Field,
  Filters,
  Form,
  type FormState,
  hrefWith,
  Money,
  Pill,
  Table,
} from '../../platform/web/components.tsx';
import { Layout } from '../../platform/web/layout.tsx';
import { bookPath, canAdminister, type Shell, type ShellBook } from '../../platform/web/shell.ts';
import type { PaymentRequestRecord } from './service.ts';

// Payment requests: by status, with the amount received, the pay page and, for owners and
// admins, marking a bank transfer paid by hand.

const STATUSES = ['active', 'paid', 'cancelled'] as const;
type Status = (typeof STATUSES)[number];

function tone(status: string) {
  return status === 'paid' ? 'ok' : status === 'active' ? 'warn' : 'bad';
}

function MarkPaid(props: {
  shell: Shell & { book: ShellBook };
  row: PaymentRequestRecord;
  form?: FormState | undefined;
}) {
  const { shell, row } = props;
  const form = props.form;
  return (
    <details open={form !== undefined}>
      <summary>Mark paid</summary>
      <Form
        action={bookPath(shell.book.id, `payment-requests/${row.token}/mark-paid`)}
        csrf={shell.csrfToken}
        form={form}
        label={`Mark ${row.memo || row.token} paid`}
      >
        <Field name="amount" label={`Amount received (${row.currency})`} form={form} required />
        <Field name="reference" label="Bank reference" form={form} required maxLength={200} />
        <Field name="payer" label="Payer (optional)" form={form} maxLength={200} />
        <button type="submit" class="small">
          Record the payment
        </button>
      </Form>
    </details>
  );
}

export function PaymentRequestsPage(props: {
  shell: Shell & { book: ShellBook };
  page: { items: PaymentRequestRecord[]; next_cursor: string | null };
  status: Status | undefined;
  cursor: string | undefined;
  /** A refused mark-paid: which request, and what was wrong. */
  refused?: { token: string; form: FormState };
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
        row.status === 'active' ? (
          <MarkPaid
            shell={shell}
            row={row}
            form={props.refused?.token === row.token ? props.refused.form : undefined}
          />
        ) : null,
    });
  }
  return (
    <Layout shell={shell} title="Payment requests">
      <h1>Payment requests</h1>
      {props.refused?.form.sentence && (
        <div class="notice error" role="alert">
          {props.refused.form.sentence}
        </div>
      )}
      <Filters
        label="Status"
        options={[
          { href: path, label: 'All', current: status === undefined },
          ...STATUSES.map((option) => ({
            href: hrefWith(path, { status: option }),
            label: option,
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
