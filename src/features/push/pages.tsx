import {
  ActionButton,
  type Column,
  DateTime,
  EmptyState,
  Field,
  Form,
  type FormState,
  Notice,
  Pill,
  Table,
} from '../../platform/web/components.tsx';
import { Layout } from '../../platform/web/layout.tsx';
import { bookPath, canAdminister, type Shell, type ShellBook } from '../../platform/web/shell.ts';

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

export type PushPageProps = {
  shell: BookShell;
  batches: BatchView[] | null;
  /** What the last write did, shown in place. */
  done?: string | undefined;
  undoForm?: FormState | undefined;
  closeForm?: FormState | undefined;
};

function batchColumns(shell: BookShell): Column<BatchView>[] {
  return [
    { header: 'Pushed', cell: (batch) => <DateTime at={batch.created_at} /> },
    { header: 'Source', cell: (batch) => batch.push_source },
    { header: 'Rows', numeric: true, cell: (batch) => batch.rows_total },
    { header: 'Booked', numeric: true, cell: (batch) => batch.booked },
    { header: 'Duplicates', numeric: true, cell: (batch) => batch.duplicates },
    { header: 'Skipped (closed)', numeric: true, cell: (batch) => batch.skipped_closed },
    { header: 'Rejected', numeric: true, cell: (batch) => batch.rejected },
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
        <Table
          caption="Pushed batches"
          columns={batchColumns(shell)}
          rows={batches}
          empty={
            <EmptyState title="No batches yet">
              <p>
                Issue a key with the <code>transactions</code> scope and a push source under Keys, then POST
                rows to <code>/integration/transactions</code>.
              </p>
            </EmptyState>
          }
        />
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
