import { canAdminister } from '../../core/roles.ts';
import { SCOPES } from '../../platform/http/context.ts';
import {
  ActionButton,
  type Column,
  DateTime,
  EmptyState,
  Field,
  Form,
  type FormState,
  hrefWith,
  Pill,
  SecretBox,
  Select,
  Table,
} from '../../platform/web/components.tsx';
import { Layout } from '../../platform/web/layout.tsx';
import { bookPath, type Shell, type ShellBook } from '../../platform/web/shell.ts';

// Keys, under Client credits as the spec places them: issue (scopes, webhook address, push
// source, lifetime), the key and webhook secret shown once, the list, revoke.

export type KeyView = {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  webhook_url: string | null;
  push_source: string | null;
  status: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
};

export type IssuedKey = { name: string; key: string; webhook_secret: string };

const LIFETIMES = [
  ['', 'No expiry (default; 90 days with transactions)'],
  ['30', '30 days'],
  ['90', '90 days'],
  ['180', '180 days'],
  ['365', '365 days'],
] as const;

function ScopePicker({ form }: { form: FormState }) {
  const chosen = Array.isArray(form.values.scopes) ? (form.values.scopes as string[]) : ['payments'];
  const error = form.errors.scopes;
  return (
    <fieldset class="field">
      <legend>Scopes</legend>
      {SCOPES.map((scope) => (
        <label>
          <input type="checkbox" name="scopes" value={scope} checked={chosen.includes(scope)} /> {scope}
        </label>
      ))}
      <span class="hint">What the key may do. “transactions” files rows into a push source.</span>
      {error && <span class="error">{error}</span>}
    </fieldset>
  );
}

function IssueForm({ shell, form }: { shell: Shell & { book: ShellBook }; form: FormState }) {
  return (
    <div class="card">
      <h2>Issue a key</h2>
      <Form action={bookPath(shell.book.id, 'keys')} csrf={shell.csrfToken} form={form} label="Issue a key">
        <Field
          name="name"
          label="Name"
          form={form}
          hint="Where it is used, e.g. “production server”."
          required
          maxLength={120}
        />
        <ScopePicker form={form} />
        <div class="row">
          <Field
            name="webhook_url"
            label="Webhook address (optional)"
            type="url"
            form={form}
            hint="A public https address that receives this key's events."
          />
          <Field name="push_source" label="Push source (transactions only)" form={form} maxLength={80} />
          <Select name="lifetime_days" label="Lifetime" options={LIFETIMES} form={form} />
        </div>
        <button type="submit">Issue the key</button>
      </Form>
    </div>
  );
}

function statusTone(status: string) {
  return status === 'active' ? 'ok' : status === 'expired' ? 'warn' : 'bad';
}

export function KeysPage(props: {
  shell: Shell & { book: ShellBook };
  page: { items: KeyView[]; next_cursor: string | null };
  cursor: string | undefined;
  form: FormState;
  issued?: IssuedKey;
}) {
  const { shell, page, form, issued } = props;
  const path = bookPath(shell.book.id, 'keys');
  const admin = canAdminister(shell.book.role);
  const columns: Column<KeyView>[] = [
    { header: 'Name', cell: (key) => key.name },
    { header: 'Prefix', cell: (key) => <code>{key.prefix}…</code> },
    { header: 'Scopes', cell: (key) => key.scopes.join(', ') },
    { header: 'Status', cell: (key) => <Pill tone={statusTone(key.status)}>{key.status}</Pill> },
    {
      header: 'Last use',
      cell: (key) =>
        key.last_used_at ? <DateTime at={key.last_used_at} /> : <span class="muted">never</span>,
    },
    {
      header: 'Expires',
      cell: (key) =>
        key.expires_at ? <DateTime at={key.expires_at} dateOnly /> : <span class="muted">never</span>,
    },
  ];
  if (admin) {
    columns.push({
      header: '',
      cell: (key) =>
        key.status === 'active' ? (
          <ActionButton
            action={bookPath(shell.book.id, `keys/${key.id}/revoke`)}
            csrf={shell.csrfToken}
            label="Revoke"
            tone="danger"
            confirm={`Revoke ${key.name}? Calls with it are refused at once.`}
          />
        ) : null,
    });
  }
  return (
    <Layout shell={shell} title="Keys">
      <p class="muted">
        <a href={bookPath(shell.book.id, 'clients')}>Client credits</a> › Keys
      </p>
      <h1>Keys</h1>
      {issued && (
        <>
          <div class="notice ok" role="status">
            Key “{issued.name}” issued.
          </div>
          <SecretBox id="issued-key" label="Integration key" value={issued.key} />
          <SecretBox id="issued-secret" label="Webhook secret" value={issued.webhook_secret} />
        </>
      )}
      {admin ? (
        <Table
          caption="Keys"
          columns={columns}
          rows={page.items}
          nextHref={page.next_cursor ? hrefWith(path, { cursor: page.next_cursor }) : null}
          firstHref={props.cursor ? path : null}
          empty={
            <EmptyState title="No keys yet">
              <p>Issue a key below and give it to your server: it mints payment requests and charges.</p>
            </EmptyState>
          }
        />
      ) : (
        <EmptyState title="Keys are for owners and admins">
          <p>Ask an owner or admin of this book for a key.</p>
        </EmptyState>
      )}
      {admin && <IssueForm shell={shell} form={form} />}
    </Layout>
  );
}
