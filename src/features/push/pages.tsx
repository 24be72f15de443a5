import { canAdminister } from '../../core/roles.ts';
import {
  ActionButton,
  type Column,
  DateTime,
  EmptyState,
  Field,
  Form,
  type FormState,
  hrefWith,
  Notice,
  Pill,
  Table,
} from '../../platform/web/components.tsx';
import { Layout } from '../../platform/web/layout.tsx';
import { bookPath, type Shell, type ShellBook } from '../../platform/web/shell.ts';

// The Push sources screen: each batch pushed by another system with what became of its rows,
// Undo per batch, and closing the books through a date (owners and admins).

type BookShell = Shell & { book: ShellBook };

export type BatchView = {
  id: string;
  push_source: string;
  status: string;
  rows_total: number;
  booked: number;
  duplicates: number;
  skipped_closed: number;
  rejected: number;
  created_at: string;
  undone_at: string | null;
};

export type RejectionView = { index: number; external_id: string | null; error: string; detail: string };

/** The batch opened on the screen, with the rows it refused. */
export type OpenBatch = { batch: BatchView; items: RejectionView[] };

/** What the list shows: one page of batches, the filter and the batch opened below it. */
export type BatchList = {
  page: { items: BatchView[]; next_cursor: string | null };
  cursor: string | undefined;
  source: string | undefined;
  open: OpenBatch | undefined;
};

export type PushPageProps = {
  shell: BookShell;
  batches: BatchList | null;
  /** What the last write did, shown in place. */
  done?: string | undefined;
  undoForm?: FormState | undefined;
  closeForm?: FormState | undefined;
};

const ERROR_WORDS: Record<string, string> = {
  invalid_row: 'Invalid row',
  currency_mismatch: 'Currency mismatch',
  allowance_exceeded: 'Allowance used up',
};

/** The Rejected count; when there are some, a link that opens the batch's reasons below. */
function rejectedCell(shell: BookShell, list: BatchList, batch: BatchView) {
  if (batch.rejected === 0) return 0;
  const { source, cursor } = list;
  const href = `${hrefWith(bookPath(shell.book.id, 'push'), { push_source: source, cursor, open: batch.id })}#rejections`;
  return (
    <a href={href} aria-label={`${batch.rejected} rejected: see why`}>
      {batch.rejected} — why?
    </a>
  );
}

function batchColumns(shell: BookShell, list: BatchList): Column<BatchView>[] {
  return [
    { header: 'Pushed', cell: (batch) => <DateTime at={batch.created_at} /> },
    { header: 'Source', cell: (batch) => batch.push_source },
    { header: 'Rows', numeric: true, cell: (batch) => batch.rows_total },
    { header: 'Booked', numeric: true, cell: (batch) => batch.booked },
    { header: 'Duplicates', numeric: true, cell: (batch) => batch.duplicates },
    { header: 'Skipped (closed)', numeric: true, cell: (batch) => batch.skipped_closed },
    { header: 'Rejected', numeric: true, cell: (batch) => rejectedCell(shell, list, batch) },
    {
      header: 'Status',
      cell: (batch) =>
        batch.status === 'undone' ? (
          <span>
            <Pill tone="warn">Undone</Pill> <DateTime at={batch.undone_at} />
          </span>
        ) : (
          <Pill tone="ok">Booked</Pill>
        ),
    },
    {
      header: '',
      cell: (batch) =>
        batch.status === 'undone' ? null : (
          <ActionButton
            action={bookPath(shell.book.id, `push/${batch.id}/undo`)}
            csrf={shell.csrfToken}
            label="Undo"
            tone="danger"
            confirm="Undo this batch? Every row it booked is reversed (rows in closed books stay)."
          />
        ),
    },
  ];
}

const rejectionColumns: Column<RejectionView>[] = [
  { header: 'Row', numeric: true, cell: (row) => row.index },
  { header: 'external_id', cell: (row) => row.external_id ?? <span class="muted">—</span> },
  { header: 'Error', cell: (row) => <Pill tone="bad">{ERROR_WORDS[row.error] ?? row.error}</Pill> },
  { header: 'Reason', cell: (row) => row.detail },
];

/** The opened batch's refused rows, each with its index, external_id and reason. */
function RejectedRows({ open, closeHref }: { open: OpenBatch; closeHref: string }) {
  const { batch, items } = open;
  return (
    <section class="card" id="rejections" aria-label="Rejected rows">
      <h2>
        Rejected rows of the batch pushed <DateTime at={batch.created_at} />
      </h2>
      <p class="muted">
        {batch.rejected} of {batch.rows_total} rows from {batch.push_source} were refused; the other rows were
        judged on their own. Row numbers count from 0, as in the pushed array. <a href={closeHref}>Close</a>
      </p>
      <Table
        caption="Rejected rows"
        columns={rejectionColumns}
        rows={items}
        empty={
          <EmptyState title="No reasons kept for this batch">
            <p>It was pushed before Tollbook kept the reasons; the push answer's errors[] held them.</p>
          </EmptyState>
        }
      />
    </section>
  );
}

/** Filter by source: a GET form, so the page and its pager keep the filter. */
function SourceFilter({ shell, source }: { shell: BookShell; source: string | undefined }) {
  return (
    <form method="get" action={bookPath(shell.book.id, 'push')} class="filters" aria-label="Filter batches">
      <label for="push-source-filter">Source</label>
      <input
        id="push-source-filter"
        name="push_source"
        value={source}
        maxLength={80}
        placeholder="All sources"
      />
      <button type="submit" class="small secondary">
        Filter
      </button>
    </form>
  );
}

function BatchTable({ shell, list }: { shell: BookShell; list: BatchList }) {
  const path = bookPath(shell.book.id, 'push');
  const { source, cursor, page } = list;
  return (
    <>
      <SourceFilter shell={shell} source={source} />
      <Table
        caption="Pushed batches"
        columns={batchColumns(shell, list)}
        rows={page.items}
        nextHref={page.next_cursor ? hrefWith(path, { push_source: source, cursor: page.next_cursor }) : null}
        firstHref={cursor ? hrefWith(path, { push_source: source }) : null}
        empty={
          source ? (
            <EmptyState title={`No batches from ${source}`}>
              <p>
                Clear the filter to see every source's batches: <a href={path}>all batches</a>.
              </p>
            </EmptyState>
          ) : (
            <EmptyState title="No batches yet">
              <p>
                Issue a key with the <code>transactions</code> scope and a push source under Keys, then POST
                rows to <code>/integration/transactions</code>.
              </p>
            </EmptyState>
          )
        }
      />
      {list.open && (
        <RejectedRows open={list.open} closeHref={hrefWith(path, { push_source: source, cursor })} />
      )}
    </>
  );
}

export function PushPage(props: PushPageProps) {
  const { shell, batches } = props;
  const admin = canAdminister(shell.book.role);
  return (
    <Layout shell={shell} title="Push sources">
      <h1>Push sources</h1>
      <p class="muted">
        Rows other systems push with a key of the <code>transactions</code> scope, batch by batch.
      </p>
      {props.done && <Notice kind="ok">{props.done}</Notice>}
      {props.undoForm?.sentence && <Notice kind="error">{props.undoForm.sentence}</Notice>}
      {batches === null ? (
        <Notice kind="warn">Only owners and admins see pushed batches.</Notice>
      ) : (
        <BatchTable shell={shell} list={batches} />
      )}
      {admin && (
        <div class="card">
          <h2>Close the books</h2>
          <p class="muted">
            Nothing dated on or before this day can be booked or undone afterwards; a closed day stays closed.
          </p>
          <Form
            action={bookPath(shell.book.id, 'push/close')}
            csrf={shell.csrfToken}
            form={props.closeForm}
            label="Close the books"
          >
            <Field name="through" label="Closed through" type="date" form={props.closeForm} required />
            <button type="submit">Close the books</button>
          </Form>
        </div>
      )}
    </Layout>
  );
}
