import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type Static, Type } from '../../platform/http/schema-kit.ts';
import { typedRoutes } from '../../platform/http/typed.ts';
import { EMPTY_FORM, type FormState } from '../../platform/web/components.tsx';
import { formRoute, runForm } from '../../platform/web/forms.ts';
import { seeOther, sendPage, shellOf } from '../../platform/web/plumbing.ts';
import { bookPath } from '../../platform/web/shell.ts';
import { ADDRESS_KINDS, type AddressKind, ContactsPage } from './pages.tsx';
import { ContactListQuery } from './routes.ts';
import { ContactCreate } from './schemas.ts';
import * as service from './service.ts';

const BookParams = Type.Object({ book_id: Type.String({ maxLength: 64 }) });

const PageQuery = Type.Object({
  ...ContactListQuery.properties,
  scheme: Type.Optional(Type.Union(ADDRESS_KINDS.map((kind) => Type.Literal(kind)))),
});
type PageQueryType = Static<typeof PageQuery>;

/** The kind a refused form was filling in, read back from what it posted. */
function postedKind(values: Record<string, unknown>): AddressKind {
  const first = (
    values.addresses as { address?: unknown; requisites?: { scheme?: unknown } }[] | undefined
  )?.[0];
  const scheme = first?.requisites?.scheme;
  if (typeof scheme === 'string' && (ADDRESS_KINDS as readonly string[]).includes(scheme))
    return scheme as AddressKind;
  return first?.address !== undefined ? 'crypto' : 'none';
}

/** The list and the form: after a GET, the query's page and kind; after a post, its kind. */
async function render(
  deps: service.ContactsDeps,
  request: FastifyRequest,
  form: FormState,
  query: PageQueryType | null,
) {
  const shell = shellOf(request);
  const cursor = query?.cursor;
  const page = await service.listContactsInApp(deps, shell.user.id, shell.book.id, { cursor });
  const kind = query ? (query.scheme ?? 'none') : postedKind(form.values);
  return ContactsPage({ shell, page, cursor, form, kind });
}

export function registerContactPages(server: FastifyInstance, deps: service.ContactsDeps) {
  const scope = typedRoutes(server);
  const path = '/app/books/:book_id/contacts';
  scope.get(
    path,
    { schema: { hide: true, params: BookParams, querystring: PageQuery } },
    async (request, reply) => sendPage(reply, await render(deps, request, EMPTY_FORM, request.query)),
  );
  scope.post(path, formRoute({ params: BookParams, body: ContactCreate }), async (request, reply) => {
    const shell = shellOf(request);
    const outcome = await runForm(request, ({ body }) =>
      service.createContactInApp(deps, shell.user.id, shell.book.id, body),
    );
    if (outcome.ok) return seeOther(reply, bookPath(shell.book.id, 'contacts'));
    return sendPage(reply, await render(deps, request, outcome.form, null), outcome.status);
  });
}
