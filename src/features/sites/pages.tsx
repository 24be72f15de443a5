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

// Sites: origins where the book's payment pages may be framed, each proven by a file the
// site publishes (its content shown here), then verified.

type Site = {
  id: string;
  origin: string;
  token: string;
  well_known_url: string;
  verified: boolean;
  verified_at: string | null;
  created_at: string;
};
type BookShell = Shell & { book: ShellBook };

function ProofCell({ site }: { site: Site }) {
  return (
    <>
      <div>
        Publish at <code>{site.well_known_url}</code>:
      </div>
      <code id={`proof-${site.id}`}>{site.token}</code>{' '}
      <button type="button" class="small secondary" data-copy={`proof-${site.id}`} hidden>
        Copy
      </button>
    </>
  );
}

function SiteActions({ shell, site }: { shell: BookShell; site: Site }) {
  return (
    <div class="actions">
      <ActionButton
        action={bookPath(shell.book.id, `sites/${site.id}/verify`)}
        csrf={shell.csrfToken}
        label="Verify"
      />
      <ActionButton
        action={bookPath(shell.book.id, `sites/${site.id}/remove`)}
        csrf={shell.csrfToken}
        label="Remove"
        tone="danger"
        confirm={`Stop allowing ${site.origin} to frame your pages?`}
      />
    </div>
  );
}

export function SitesPage(props: {
  shell: BookShell;
  page: { items: Site[]; next_cursor: string | null };
  cursor: string | undefined;
  form: FormState;
  notice?: string | undefined;
}) {
  const { shell, page, form } = props;
  const sites = page.items;
  const path = bookPath(shell.book.id, 'sites');
  const admin = canAdminister(shell.book.role);
  const columns: Column<Site>[] = [
    { header: 'Origin', cell: (site) => <code>{site.origin}</code> },
    {
      header: 'Status',
      cell: (site) =>
        site.verified ? (
          <>
            <Pill tone="ok">verified</Pill> <DateTime at={site.verified_at} />
          </>
        ) : (
          <Pill tone="warn">not verified</Pill>
        ),
    },
    { header: 'Proof file', cell: (site) => <ProofCell site={site} /> },
  ];
  if (admin) columns.push({ header: '', cell: (site) => <SiteActions shell={shell} site={site} /> });
  return (
    <Layout shell={shell} title="Sites">
      <h1>Sites</h1>
      <p class="muted">Your payment pages may be shown in a frame only on sites proven here.</p>
      {props.notice && <Notice kind="ok">{props.notice}</Notice>}
      {
        <>
          {form.sentence && sites.length > 0 && !form.errors.origin && (
            <Notice kind="error">{form.sentence}</Notice>
          )}
          <Table
            caption="Sites"
            columns={columns}
            rows={sites}
            nextHref={page.next_cursor ? hrefWith(path, { cursor: page.next_cursor }) : null}
            firstHref={props.cursor ? path : null}
            empty={
              <EmptyState title="No sites yet">
                <p>
                  Add the origin of the site that embeds your payment pages, publish its proof file, then
                  verify.
                </p>
              </EmptyState>
            }
          />
          {admin && (
            <div class="card">
              <h2>Add a site</h2>
              <Form
                action={bookPath(shell.book.id, 'sites')}
                csrf={shell.csrfToken}
                form={form.errors.origin ? form : undefined}
                label="Add a site"
              >
                <Field
                  name="origin"
                  label="Origin"
                  type="url"
                  form={form}
                  placeholder="https://shop.example.com"
                  required
                />
                <button type="submit">Add</button>
              </Form>
            </div>
          )}
        </>
      }
    </Layout>
  );
}
