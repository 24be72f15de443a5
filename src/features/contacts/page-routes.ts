import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type Static, Type } from '../../platform/http/schema-kit.ts';
import { typedRoutes } from '../../platform/http/typed.ts';
import { EMPTY_FORM, type FormState } from '../../platform/web/components.tsx';
import { formRoute, runForm } from '../../platform/web/forms.ts';
import { seeOther, sendPage, shellOf } from '../../platform/web/plumbing.ts';
import { bookPath } from '../../platform/web/shell.ts';
import { contactEditsInApp, readContactInApp, updateContactInApp } from './edits.ts';
import { ADDRESS_KINDS, type AddressKind, ContactsPage } from './pages.tsx';
import { ContactPage } from './pages-contact.tsx';
import { ContactListQuery } from './routes.ts';
import { ContactCreate, ContactPatch, type ContactPatchBody } from './schemas.ts';
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
  registerContactPage(server, deps);
  scope.post(path, formRoute({ params: BookParams, body: ContactCreate }), async (request, reply) => {
    const shell = shellOf(request);
    const outcome = await runForm(request, ({ body }) =>
      service.createContactInApp(deps, shell.user.id, shell.book.id, body),
    );
    if (outcome.ok) return seeOther(reply, bookPath(shell.book.id, 'contacts'));
    return sendPage(reply, await render(deps, request, outcome.form, null), outcome.status);
  });
}

const ContactParams = Type.Object({
  book_id: Type.String({ maxLength: 64 }),
  contact_id: Type.String({ format: 'uuid' }),
});
const ContactQuery = Type.Object({
  scheme: Type.Optional(Type.Union(ADDRESS_KINDS.map((kind) => Type.Literal(kind)))),
});

type Contact = Awaited<ReturnType<typeof readContactInApp>>;

/** The form as the contact stands: its fields as the edit form names them. */
function heldForm(contact: Contact): FormState {
  return { values: { ...contact, addresses: contact.addresses }, errors: {} };
}

/**
 * The edit form sends every field; a blank one arrives as "not given" and means empty here, so
 * clearing a field clears it. The form edits the first address (or removes it when its kind is
 * None); the contact's further addresses stay as they are, after it.
 */
function wholeContact(body: ContactPatchBody, held: Contact): ContactPatchBody {
  const rest = held.addresses.slice(1).map(({ id: _id, ...address }) => address);
  const first = body.addresses?.[0];
  return {
    email: '',
    phone: '',
    address: '',
    country: '',
    reg_number: '',
    tax_id: '',
    note: '',
    tags: [],
    ...body,
    addresses: first === undefined ? rest : [first, ...rest],
  };
}

async function renderContact(
  deps: service.ContactsDeps,
  request: FastifyRequest,
  contactId: string,
  form: FormState | null,
  scheme?: AddressKind,
) {
  const shell = shellOf(request);
  const contact = await readContactInApp(deps, shell.user.id, shell.book.id, contactId);
  const edits = await contactEditsInApp(deps, shell.user.id, shell.book.id, contactId);
  const shown = form ?? heldForm(contact);
  const kind = scheme ?? postedKind(shown.values);
  return ContactPage({ shell, contact, form: shown, kind, edits });
}

/** One contact's page: what it holds, its edit form and its recorded changes. */
export function registerContactPage(server: FastifyInstance, deps: service.ContactsDeps) {
  const scope = typedRoutes(server);
  const path = '/app/books/:book_id/contacts/:contact_id';
  scope.get(
    path,
    { schema: { hide: true, params: ContactParams, querystring: ContactQuery } },
    async (request, reply) =>
      sendPage(
        reply,
        await renderContact(deps, request, request.params.contact_id, null, request.query.scheme),
      ),
  );
  scope.post(
    path,
    formRoute({ params: ContactParams, body: ContactPatch }, { form: { arrays: ['tags'] } }),
    async (request, reply) => {
      const shell = shellOf(request);
      const { contact_id } = request.params;
      const held = await readContactInApp(deps, shell.user.id, shell.book.id, contact_id);
      const outcome = await runForm(request, ({ body }) =>
        updateContactInApp(deps, shell.user.id, shell.book.id, contact_id, wholeContact(body, held)),
      );
      if (outcome.ok) return seeOther(reply, bookPath(shell.book.id, `contacts/${contact_id}`));
      return sendPage(reply, await renderContact(deps, request, contact_id, outcome.form), outcome.status);
    },
  );
}
