import { formatAmount } from '../../core/money.ts';
import { canWrite } from '../../core/roles.ts';
import {
  type Column,
  DateTime,
  EmptyState,
  Filters,
  hrefWith,
  Money,
  Notice,
  Pill,
  Table,
} from '../../platform/web/components.tsx';
import { Layout } from '../../platform/web/layout.tsx';
import { bookPath, type Shell, type ShellBook } from '../../platform/web/shell.ts';
import { openAmountOf } from './domain.ts';
import type { INVOICE_KINDS, VISIBLE_STATUSES } from './schemas.ts';
import type { InvoiceRecord } from './service.ts';

// The Invoices screen (the list of invoices, quotes and credit notes) and the words every
// invoice page shares. The New form is in pages-form.tsx, the detail page in pages-detail.tsx.

export type BookShell = Shell & { book: ShellBook };
export type Kind = (typeof INVOICE_KINDS)[number];
export type VisibleStatus = (typeof VISIBLE_STATUSES)[number];

export const KIND_WORDS: Record<Kind, { one: string; many: string }> = {
  invoice: { one: 'Invoice', many: 'Invoices' },
  quote: { one: 'Quote', many: 'Quotes' },
  credit_note: { one: 'Credit note', many: 'Credit notes' },
};

export const STATUS_WORDS: Record<VisibleStatus, string> = {
  draft: 'Draft',
  sent: 'Sent',
  partial: 'Partly paid',
  paid: 'Paid',
  issued: 'Issued',
  void: 'Void',
  quote_draft: 'Draft',
  quote_sent: 'Sent',
  quote_accepted: 'Accepted',
  quote_declined: 'Declined',
  quote_expired: 'Expired',
};

/** The statuses each kind can show, in the order a document moves through them. */
const STATUSES_OF: Record<Kind, readonly VisibleStatus[]> = {
  invoice: ['draft', 'sent', 'partial', 'paid', 'void'],
  quote: ['quote_draft', 'quote_sent', 'quote_accepted', 'quote_declined', 'quote_expired', 'void'],
  credit_note: ['issued', 'void'],
};

const TONES: Partial<Record<VisibleStatus, 'ok' | 'warn' | 'bad'>> = {
  paid: 'ok',
  quote_accepted: 'ok',
  issued: 'ok',
  sent: 'warn',
  partial: 'warn',
  quote_sent: 'warn',
  void: 'bad',
  quote_declined: 'bad',
  quote_expired: 'bad',
};

export function StatusPill({ status }: { status: string }) {
  const known = status as VisibleStatus;
  return <Pill tone={TONES[known]}>{STATUS_WORDS[known] ?? status}</Pill>;
}

export function kindWord(kind: string): string {
  return KIND_WORDS[kind as Kind]?.one ?? kind;
}

export function invoicePath(shell: BookShell, id = '', action = ''): string {
  return bookPath(shell.book.id, ['invoices', id, action].filter(Boolean).join('/'));
}

function KindAndStatusFilters(props: {
  shell: BookShell;
  kind?: Kind | undefined;
  status?: string | undefined;
}) {
  const path = invoicePath(props.shell);
  const { kind, status } = props;
  const statuses = kind ? STATUSES_OF[kind] : [];
  return (
    <>
      <Filters
        label="Kind"
        options={[
          { href: path, label: 'All', current: kind === undefined },
          ...(Object.keys(KIND_WORDS) as Kind[]).map((option) => ({
            href: hrefWith(path, { kind: option }),
            label: KIND_WORDS[option].many,
            current: kind === option,
          })),
        ]}
      />
      {kind && (
        <Filters
          label="Status"
          options={[
            { href: hrefWith(path, { kind }), label: 'All', current: status === undefined },
            ...statuses.map((option) => ({
              href: hrefWith(path, { kind, status: option }),
              label: STATUS_WORDS[option],
              current: status === option,
            })),
          ]}
        />
      )}
    </>
  );
}

const COLUMNS = (shell: BookShell): Column<InvoiceRecord>[] => [
  { header: 'Created', cell: (row) => <DateTime at={row.created_at} /> },
  {
    header: 'Number',
    cell: (row) => <a href={invoicePath(shell, row.id)}>{row.number}</a>,
  },
  { header: 'Kind', cell: (row) => kindWord(row.kind) },
  { header: 'Client', cell: (row) => row.client_name },
  {
    header: 'Due',
    cell: (row) => (row.kind === 'credit_note' ? <span class="muted">—</span> : <DateTime at={row.due_on} />),
  },
  { header: 'Total', numeric: true, cell: (row) => <Money amount={row.total} currency={row.currency} /> },
  {
    header: 'Open',
    numeric: true,
    cell: (row) =>
      row.kind === 'invoice' && row.status !== 'void' ? (
        <Money amount={formatAmount(openAmountOf(row))} currency={row.currency} />
      ) : (
        <span class="muted">—</span>
      ),
  },
  { header: 'Status', cell: (row) => <StatusPill status={row.status} /> },
];

function NewLinks({ shell }: { shell: BookShell }) {
  if (!canWrite(shell.book.role)) return null;
  return (
    <p class="actions">
      <a class="button" href={hrefWith(invoicePath(shell, 'new'), { kind: 'invoice' })}>
        New invoice
      </a>
      <a class="button secondary" href={hrefWith(invoicePath(shell, 'new'), { kind: 'quote' })}>
        New quote
      </a>
      <a class="button secondary" href={hrefWith(invoicePath(shell, 'new'), { kind: 'credit_note' })}>
        New credit note
      </a>
    </p>
  );
}

function EmptyInvoices(props: { shell: BookShell; kind?: Kind | undefined; status?: string | undefined }) {
  const { shell, kind, status } = props;
  const what = kind ? KIND_WORDS[kind].many.toLowerCase() : 'invoices, quotes or credit notes';
  const filtered = status ? `No ${STATUS_WORDS[status as VisibleStatus]?.toLowerCase()} ${what}` : null;
  return (
    <EmptyState title={filtered ?? `No ${what} yet`}>
      {canWrite(shell.book.role) ? (
        <p>
          Press <strong>New {kind ? KIND_WORDS[kind].one.toLowerCase() : 'invoice'}</strong> above to write
          one, or mirror the ones your own system issues with <code>POST /integration/invoices</code> and a
          key from <a href={bookPath(shell.book.id, 'keys')}>Keys</a>.
        </p>
      ) : (
        <p>The owner or a member of this book writes them; you can read them here once they exist.</p>
      )}
    </EmptyState>
  );
}

export function InvoicesPage(props: {
  shell: BookShell;
  page: { items: InvoiceRecord[]; next_cursor: string | null };
  kind?: Kind | undefined;
  status?: VisibleStatus | undefined;
  cursor?: string | undefined;
}) {
  const { shell, page, kind, status } = props;
  const path = invoicePath(shell);
  return (
    <Layout shell={shell} title="Invoices">
      <h1>Invoices</h1>
      <NewLinks shell={shell} />
      <KindAndStatusFilters shell={shell} kind={kind} status={status} />
      <Table
        caption="Invoices, quotes and credit notes"
        columns={COLUMNS(shell)}
        rows={page.items}
        nextHref={page.next_cursor ? hrefWith(path, { kind, status, cursor: page.next_cursor }) : null}
        firstHref={props.cursor ? hrefWith(path, { kind, status }) : null}
        empty={<EmptyInvoices shell={shell} kind={kind} status={status} />}
      />
    </Layout>
  );
}

/** A sentence after a write that went through (the address's ?done=), shown at the top of the page. */
export function DoneNotice({ sentence }: { sentence: string | undefined }) {
  return sentence ? <Notice kind="ok">{sentence}</Notice> : null;
}
