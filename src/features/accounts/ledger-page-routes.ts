import type { FastifyInstance } from 'fastify';
import { DateOnly, Type } from '../../platform/http/schema-kit.ts';
import { typedRoutes } from '../../platform/http/typed.ts';
import { hrefWith } from '../../platform/web/components.tsx';
import { filterFormRoute, openForm, runForm } from '../../platform/web/forms.ts';
import { sendPage, shellOf } from '../../platform/web/plumbing.ts';
import { bookPath } from '../../platform/web/shell.ts';
import { type AccountNames, LedgerEntryPage, LedgerPage } from './ledger-pages.tsx';
import { type LedgerReadsDeps, listLedgerEntries, readLedgerEntry } from './ledger-reads.ts';
import { listSpaceAccounts } from './service.ts';

// Page routes of the Ledger screen: the same reads as the app API's ledger routes.

const BookParams = Type.Object({ book_id: Type.String({ maxLength: 64 }) });
const EntryParams = Type.Object({
  book_id: Type.String({ maxLength: 64 }),
  entry_id: Type.String({ format: 'uuid' }),
});
// Empty filter fields arrive as empty strings from the GET form: they mean "no filter".
const LedgerQuery = Type.Object({
  account_id: Type.Optional(Type.Union([Type.Literal(''), Type.String({ format: 'uuid' })])),
  from: Type.Optional(Type.Union([Type.Literal(''), DateOnly()])),
  to: Type.Optional(Type.Union([Type.Literal(''), DateOnly()])),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 400 })),
});

async function accountsOf(deps: LedgerReadsDeps, spaceId: string) {
  const accounts = await listSpaceAccounts(deps.db, spaceId);
  const names: AccountNames = Object.fromEntries(accounts.map((account) => [account.id, account.name]));
  return { accounts, names };
}

export function registerLedgerPages(server: FastifyInstance, deps: LedgerReadsDeps) {
  const scope = typedRoutes(server);
  const path = '/app/books/:book_id/ledger';
  scope.get(
    path,
    filterFormRoute({ params: BookParams, querystring: LedgerQuery }),
    async (request, reply) => {
      const shell = shellOf(request);
      // A filter that failed its schema is shown as typed (the form's values), with no filter applied.
      const sent = openForm(request);
      const query = sent.ok ? sent.query : {};
      const filter = {
        account_id: query.account_id || undefined,
        from: query.from || undefined,
        to: query.to || undefined,
      };
      const { accounts, names } = await accountsOf(deps, shell.book.id);
      const outcome = await runForm(request, () =>
        listLedgerEntries(deps, shell.user.id, shell.book.id, {
          accountId: filter.account_id,
          from: filter.from,
          to: filter.to,
          cursor: query.cursor,
        }),
      );
      const base = bookPath(shell.book.id, 'ledger');
      const page = outcome.ok ? outcome.value : { items: [], next_cursor: null };
      const view = LedgerPage({
        shell,
        entries: page.items,
        names,
        accounts,
        filter,
        nextHref: page.next_cursor ? hrefWith(base, { ...filter, cursor: page.next_cursor }) : null,
        firstHref: query.cursor ? hrefWith(base, filter) : null,
        form: outcome.ok ? undefined : outcome.form,
      });
      return sendPage(reply, view, outcome.ok ? 200 : outcome.status);
    },
  );
  scope.get(`${path}/:entry_id`, { schema: { hide: true, params: EntryParams } }, async (request, reply) => {
    const shell = shellOf(request);
    const { entry_id } = request.params;
    const entry = await readLedgerEntry(deps, shell.user.id, shell.book.id, entry_id);
    const { names } = await accountsOf(deps, shell.book.id);
    return sendPage(reply, LedgerEntryPage({ shell, entry, names }));
  });
}
