import type { FastifyInstance, FastifyRequest } from 'fastify';
import { canAdminister } from '../../core/roles.ts';
import { type Static, Type } from '../../platform/http/schema-kit.ts';
import { typedRoutes } from '../../platform/http/typed.ts';
import { EMPTY_FORM, type FormState } from '../../platform/web/components.tsx';
import { formRoute, runForm } from '../../platform/web/forms.ts';
import { seeOther, sendPage, shellOf, viewerShellOf } from '../../platform/web/plumbing.ts';
import { bookPath } from '../../platform/web/shell.ts';
import * as invitations from './invitations.ts';
import * as logo from './logo.ts';
import * as numbering from './numbering.ts';
import { BooksPage, MembersPage, SettingsPage } from './pages.tsx';
import * as profile from './profile.ts';
import {
  InvitationCreate,
  ListQuery,
  MemberAdd,
  MemberPatch,
  NumberingPatch,
  ProfilePatch,
  SpaceCreate,
  SpacePatch,
} from './schemas.ts';
import * as service from './service.ts';

// Page routes of Books, Book settings and Members. The same service calls as the app API.

const BookParams = Type.Object({ book_id: Type.String({ maxLength: 64 }) });
const MemberParams = Type.Object({
  book_id: Type.String({ maxLength: 64 }),
  user_id: Type.String({ format: 'uuid' }),
});
const FormatPatch = Type.Object({
  time_zone: Type.String({ minLength: 1, maxLength: 64 }),
  locale: Type.String({ minLength: 2, maxLength: 35 }),
});
const Switches = Type.Object({ integration_enabled: Type.Boolean(), payments_enabled: Type.Boolean() });

/** What the book pages need: the spaces' own deps, and the mail road of invitations. */
export type SpacePagesDeps = service.SpacesDeps & invitations.InvitationDeps;

export function registerSpacePages(server: FastifyInstance, deps: SpacePagesDeps) {
  const scope = typedRoutes(server);
  scope.get('/app/books', { schema: { hide: true, querystring: ListQuery } }, async (request, reply) => {
    const shell = viewerShellOf(request);
    const query = request.query;
    const page = await service.listSpaces(deps, shell.user.id, query);
    return sendPage(reply, BooksPage({ shell, page, cursor: query.cursor, form: EMPTY_FORM }));
  });
  scope.post('/app/books', formRoute({ body: SpaceCreate }), async (request, reply) => {
    const shell = viewerShellOf(request);
    const outcome = await runForm(request, ({ body }) =>
      service.createSpace(deps, shell.user.id, body, request.headers['accept-language']),
    );
    if (outcome.ok) return seeOther(reply, bookPath(outcome.value.id));
    const page = await service.listSpaces(deps, shell.user.id);
    const books = BooksPage({ shell, page, cursor: undefined, form: outcome.form });
    return sendPage(reply, books, outcome.status);
  });
  registerSettingsPages(scope, deps);
  registerMemberPages(scope, deps);
}

/** Book settings as the caller may see it, with one form's state shown in place. */
async function settingsPage(
  deps: service.SpacesDeps,
  request: Parameters<typeof shellOf>[0],
  forms: {
    form?: FormState;
    profileForm?: FormState;
    numberingForm?: FormState;
    logoForm?: FormState;
    formatForm?: FormState;
  } = {},
) {
  const shell = shellOf(request);
  const space = await service.getSpace(deps, shell.user.id, shell.book.id);
  const seller = await profile.getProfile(deps, shell.user.id, shell.book.id);
  const logoUrl = await logo.logoUrlOf(deps.db, shell.book.id);
  const numbers = await numbering.getNumbering(deps, shell.user.id, shell.book.id);
  return SettingsPage({
    shell,
    space,
    profile: seller,
    logo: logoUrl,
    numbering: numbers,
    form: forms.form ?? EMPTY_FORM,
    ...forms,
  });
}

/**
 * The profile form sends every field; a blank one arrives as "not given" and means empty here,
 * so clearing a field in the form clears it in the profile.
 */
function wholeProfile(body: Static<typeof ProfilePatch>): Static<typeof ProfilePatch> {
  return {
    legal_name: '',
    trading_name: '',
    vat_id: '',
    tax_number: '',
    registration_id: '',
    email: '',
    phone: '',
    website: '',
    invoice_footer: '',
    address: {},
    ...body,
  };
}

function registerSettingsPages(server: FastifyInstance, deps: service.SpacesDeps) {
  const scope = typedRoutes(server);
  const path = '/app/books/:book_id/settings';
  scope.get(path, { schema: { hide: true, params: BookParams } }, async (request, reply) =>
    sendPage(reply, await settingsPage(deps, request)),
  );
  scope.post(path, formRoute({ params: BookParams, body: SpacePatch }), async (request, reply) => {
    const shell = shellOf(request);
    const outcome = await runForm(request, ({ body }) =>
      service.updateSpace(deps, shell.user.id, shell.book.id, body),
    );
    if (outcome.ok) return seeOther(reply, bookPath(shell.book.id, 'settings'));
    return sendPage(reply, await settingsPage(deps, request, { form: outcome.form }), outcome.status);
  });
  scope.post(
    `${path}/profile`,
    formRoute({ params: BookParams, body: ProfilePatch }, { form: { integers: ['payment_terms_days'] } }),
    async (request, reply) => {
      const shell = shellOf(request);
      const outcome = await runForm(request, ({ body }) =>
        profile.updateProfile(deps, shell.user.id, shell.book.id, wholeProfile(body)),
      );
      if (outcome.ok) return seeOther(reply, bookPath(shell.book.id, 'settings'));
      const page = await settingsPage(deps, request, { profileForm: outcome.form });
      return sendPage(reply, page, outcome.status);
    },
  );
  registerLogoForms(server, deps, path);
  scope.post(
    `${path}/format`,
    formRoute({ params: BookParams, body: FormatPatch }),
    async (request, reply) => {
      const shell = shellOf(request);
      const outcome = await runForm(request, ({ body }) =>
        service.updateSpace(deps, shell.user.id, shell.book.id, {
          time_zone: body.time_zone,
          locale: body.locale,
        }),
      );
      if (outcome.ok) return seeOther(reply, bookPath(shell.book.id, 'settings'));
      return sendPage(reply, await settingsPage(deps, request, { formatForm: outcome.form }), outcome.status);
    },
  );
  const numberFields = ['invoice', 'quote', 'credit_note'].map((kind) => `${kind}.next_number`);
  scope.post(
    `${path}/numbering`,
    formRoute({ params: BookParams, body: NumberingPatch }, { form: { integers: numberFields } }),
    async (request, reply) => {
      const shell = shellOf(request);
      const outcome = await runForm(request, ({ body }) =>
        numbering.updateNumbering(deps, shell.user.id, shell.book.id, body),
      );
      if (outcome.ok) return seeOther(reply, bookPath(shell.book.id, 'settings'));
      const page = await settingsPage(deps, request, { numberingForm: outcome.form });
      return sendPage(reply, page, outcome.status);
    },
  );
  scope.post(
    `${path}/switches`,
    formRoute(
      { params: BookParams, body: Switches },
      { form: { booleans: ['integration_enabled', 'payments_enabled'] } },
    ),
    async (request, reply) => {
      const shell = shellOf(request);
      const outcome = await runForm(request, ({ body }) =>
        service.updateSpace(deps, shell.user.id, shell.book.id, body),
      );
      if (outcome.ok) return seeOther(reply, bookPath(shell.book.id, 'settings'));
      return sendPage(reply, await settingsPage(deps, request, { form: outcome.form }), outcome.status);
    },
  );
}

const InvitationPageParams = Type.Object({
  book_id: Type.String({ maxLength: 64 }),
  invitation_id: Type.String({ format: 'uuid' }),
});

function registerMemberPages(server: FastifyInstance, deps: SpacePagesDeps) {
  const scope = typedRoutes(server);
  const path = '/app/books/:book_id/members';
  const render = async (
    request: Parameters<typeof shellOf>[0],
    form = EMPTY_FORM,
    query: Static<typeof ListQuery> = {},
    inviteForm = EMPTY_FORM,
  ) => {
    const shell = shellOf(request);
    const page = await service.listMembers(deps, shell.user.id, shell.book.id, query);
    // Only owners and admins see (and may revoke) pending invitations.
    const pending = canAdminister(shell.book.role)
      ? (await invitations.listInvitations(deps, shell.user.id, shell.book.id)).items
      : null;
    return MembersPage({ shell, page, cursor: query.cursor, form, pending, inviteForm });
  };
  registerInvitationForms(scope, deps, render);
  scope.get(
    path,
    { schema: { hide: true, params: BookParams, querystring: ListQuery } },
    async (request, reply) => sendPage(reply, await render(request, EMPTY_FORM, request.query)),
  );
  scope.post(path, formRoute({ params: BookParams, body: MemberAdd }), async (request, reply) => {
    const shell = shellOf(request);
    const outcome = await runForm(request, ({ body }) =>
      service.addMember(deps, shell.user.id, shell.book.id, body),
    );
    if (outcome.ok) return seeOther(reply, bookPath(shell.book.id, 'members'));
    return sendPage(reply, await render(request, outcome.form), outcome.status);
  });
  scope.post(
    `${path}/:user_id`,
    formRoute({ params: MemberParams, body: MemberPatch }),
    async (request, reply) => {
      const shell = shellOf(request);
      const { user_id } = request.params;
      const outcome = await runForm(request, ({ body }) =>
        service.changeRole(deps, shell.user.id, shell.book.id, user_id, body.role),
      );
      if (outcome.ok) return seeOther(reply, bookPath(shell.book.id, 'members'));
      return sendPage(reply, await render(request, outcome.form), outcome.status);
    },
  );
  scope.post(
    `${path}/:user_id/remove`,
    { schema: { hide: true, params: MemberParams } },
    async (request, reply) => {
      const shell = shellOf(request);
      const { user_id } = request.params;
      const outcome = await runForm(request, () =>
        service.removeMember(deps, shell.user.id, shell.book.id, user_id),
      );
      if (outcome.ok) return seeOther(reply, bookPath(shell.book.id, 'members'));
      return sendPage(reply, await render(request, outcome.form), outcome.status);
    },
  );
}

/** The Members page's invitation forms: invite by email, revoke a pending invitation. */
function registerInvitationForms(
  scope: ReturnType<typeof typedRoutes>,
  deps: SpacePagesDeps,
  render: (
    request: Parameters<typeof shellOf>[0],
    form?: FormState,
    query?: Static<typeof ListQuery>,
    inviteForm?: FormState,
  ) => Promise<ReturnType<typeof MembersPage>>,
) {
  const path = '/app/books/:book_id/members';
  scope.post(
    `${path}/invite`,
    formRoute({ params: BookParams, body: InvitationCreate }),
    async (request, reply) => {
      const shell = shellOf(request);
      const outcome = await runForm(request, ({ body }) =>
        invitations.inviteMember(deps, shell.user.id, shell.book.id, body),
      );
      if (outcome.ok) return seeOther(reply, bookPath(shell.book.id, 'members'));
      return sendPage(reply, await render(request, EMPTY_FORM, {}, outcome.form), outcome.status);
    },
  );
  scope.post(
    `${path}/invitations/:invitation_id/revoke`,
    { schema: { hide: true, params: InvitationPageParams } },
    async (request, reply) => {
      const shell = shellOf(request);
      const outcome = await runForm(request, () =>
        invitations.revokeInvitation(deps, shell.user.id, shell.book.id, request.params.invitation_id),
      );
      if (outcome.ok) return seeOther(reply, bookPath(shell.book.id, 'members'));
      return sendPage(reply, await render(request, outcome.form), outcome.status);
    },
  );
}

/** The logo form's fields (multipart): the CSRF token as text, the file as its bytes. */
async function multipartFields(contentType: string, body: Buffer): Promise<Record<string, string | Buffer>> {
  const fields: Record<string, string | Buffer> = {};
  const form = await new Response(new Uint8Array(body), {
    headers: { 'content-type': contentType },
  }).formData();
  for (const name of ['_csrf', 'logo']) {
    const value = form.get(name);
    if (value === null) continue;
    fields[name] = typeof value === 'string' ? value : Buffer.from(await value.arrayBuffer());
  }
  return fields;
}

/** A multipart body a little over the logo's limit: the file and the form's few text fields. */
const LOGO_FORM_BYTES_MAX = logo.LOGO_BYTES_MAX + 16 * 1024;

/** The Logo card's forms: upload (a multipart form with the file) and remove. */
function registerLogoForms(server: FastifyInstance, deps: service.SpacesDeps, path: string) {
  server.register(async (inner) => {
    inner.addContentTypeParser(
      'multipart/form-data',
      { parseAs: 'buffer', bodyLimit: LOGO_FORM_BYTES_MAX },
      async (request: FastifyRequest, body: Buffer) => {
        try {
          return await multipartFields(String(request.headers['content-type']), body);
        } catch {
          // A body that is not the multipart it says it is: a form with nothing in it.
          return {};
        }
      },
    );
    const scope = typedRoutes(inner);
    scope.post(`${path}/logo`, { schema: { hide: true, params: BookParams } }, async (request, reply) => {
      const shell = shellOf(request);
      const file = (request.body as Record<string, unknown> | undefined)?.logo;
      const outcome = await runForm(request, () =>
        logo.uploadLogo(deps, shell.user.id, shell.book.id, Buffer.isBuffer(file) ? file : Buffer.alloc(0)),
      );
      if (outcome.ok) return seeOther(reply, `${bookPath(shell.book.id, 'settings')}#logo`);
      const page = await settingsPage(deps, request, { logoForm: outcome.form });
      return sendPage(reply, page, outcome.status);
    });
    scope.post(
      `${path}/logo/remove`,
      { schema: { hide: true, params: BookParams } },
      async (request, reply) => {
        const shell = shellOf(request);
        await logo.removeLogo(deps, shell.user.id, shell.book.id);
        return seeOther(reply, `${bookPath(shell.book.id, 'settings')}#logo`);
      },
    );
  });
}
