import type { FastifyInstance } from 'fastify';
import { type Static, Type } from '../../platform/http/schema-kit.ts';
import { EMPTY_FORM } from '../../platform/web/components.tsx';
import { runForm, seeOther, sendPage, shellOf, viewerShellOf } from '../../platform/web/plumbing.ts';
import { bookPath } from '../../platform/web/shell.ts';
import { BooksPage, MembersPage, SettingsPage } from './pages.tsx';
import { ListQuery, MemberAdd, MemberPatch, SpaceCreate, SpacePatch } from './schemas.ts';
import * as service from './service.ts';

// Page routes of Books, Book settings and Members. The same service calls as the app API.

const BookParams = Type.Object({ book_id: Type.String({ maxLength: 64 }) });
const MemberParams = Type.Object({
  book_id: Type.String({ maxLength: 64 }),
  user_id: Type.String({ format: 'uuid' }),
});
const Switches = Type.Object({ integration_enabled: Type.Boolean(), payments_enabled: Type.Boolean() });

export function registerSpacePages(scope: FastifyInstance, deps: service.SpacesDeps) {
  scope.get('/app/books', { schema: { hide: true, querystring: ListQuery } }, async (request, reply) => {
    const shell = viewerShellOf(request);
    const query = request.query as Static<typeof ListQuery>;
    const page = await service.listSpaces(deps, shell.user.id, query);
    return sendPage(reply, BooksPage({ shell, page, cursor: query.cursor, form: EMPTY_FORM }));
  });
  scope.post(
    '/app/books',
    { schema: { hide: true, body: SpaceCreate }, attachValidation: true },
    async (request, reply) => {
      const shell = viewerShellOf(request);
      const outcome = await runForm(request, () =>
        service.createSpace(deps, shell.user.id, request.body as Static<typeof SpaceCreate>),
      );
      if (outcome.ok) return seeOther(reply, bookPath(outcome.value.id, 'settings'));
      const page = await service.listSpaces(deps, shell.user.id);
      const books = BooksPage({ shell, page, cursor: undefined, form: outcome.form });
      return sendPage(reply, books, outcome.status);
    },
  );
  scope.get('/app/books/:book_id', { schema: { hide: true, params: BookParams } }, async (request, reply) =>
    seeOther(reply, bookPath(shellOf(request).book.id, 'payment-requests')),
  );
  registerSettingsPages(scope, deps);
  registerMemberPages(scope, deps);
}

function registerSettingsPages(scope: FastifyInstance, deps: service.SpacesDeps) {
  const path = '/app/books/:book_id/settings';
  scope.get(path, { schema: { hide: true, params: BookParams } }, async (request, reply) => {
    const shell = shellOf(request);
    const space = await service.getSpace(deps, shell.user.id, shell.book.id);
    return sendPage(reply, SettingsPage({ shell, space, form: EMPTY_FORM }));
  });
  scope.post(
    path,
    { schema: { hide: true, params: BookParams, body: SpacePatch }, attachValidation: true },
    async (request, reply) => {
      const shell = shellOf(request);
      const outcome = await runForm(request, () =>
        service.updateSpace(deps, shell.user.id, shell.book.id, request.body as Static<typeof SpacePatch>),
      );
      if (outcome.ok) return seeOther(reply, bookPath(shell.book.id, 'settings'));
      const space = await service.getSpace(deps, shell.user.id, shell.book.id);
      return sendPage(reply, SettingsPage({ shell, space, form: outcome.form }), outcome.status);
    },
  );
  scope.post(
    `${path}/switches`,
    {
      schema: { hide: true, params: BookParams, body: Switches },
      attachValidation: true,
      config: { form: { booleans: ['integration_enabled', 'payments_enabled'] } },
    },
    async (request, reply) => {
      const shell = shellOf(request);
      const outcome = await runForm(request, () =>
        service.updateSpace(deps, shell.user.id, shell.book.id, request.body as Static<typeof Switches>),
      );
      if (outcome.ok) return seeOther(reply, bookPath(shell.book.id, 'settings'));
      const space = await service.getSpace(deps, shell.user.id, shell.book.id);
      return sendPage(reply, SettingsPage({ shell, space, form: outcome.form }), outcome.status);
    },
  );
}

function registerMemberPages(scope: FastifyInstance, deps: service.SpacesDeps) {
  const path = '/app/books/:book_id/members';
  const render = async (request: Parameters<typeof shellOf>[0], form = EMPTY_FORM) => {
    const shell = shellOf(request);
    const query = request.method === 'GET' ? (request.query as Static<typeof ListQuery>) : {};
    const page = await service.listMembers(deps, shell.user.id, shell.book.id, query);
    return MembersPage({ shell, page, cursor: query.cursor, form });
  };
  scope.get(
    path,
    { schema: { hide: true, params: BookParams, querystring: ListQuery } },
    async (request, reply) => sendPage(reply, await render(request)),
  );
  scope.post(
    path,
    { schema: { hide: true, params: BookParams, body: MemberAdd }, attachValidation: true },
    async (request, reply) => {
      const shell = shellOf(request);
      const outcome = await runForm(request, () =>
        service.addMember(deps, shell.user.id, shell.book.id, request.body as Static<typeof MemberAdd>),
      );
      if (outcome.ok) return seeOther(reply, bookPath(shell.book.id, 'members'));
      return sendPage(reply, await render(request, outcome.form), outcome.status);
    },
  );
  scope.post(
    `${path}/:user_id`,
    { schema: { hide: true, params: MemberParams, body: MemberPatch }, attachValidation: true },
    async (request, reply) => {
      const shell = shellOf(request);
      const { user_id } = request.params as Static<typeof MemberParams>;
      const outcome = await runForm(request, () =>
        service.changeRole(
          deps,
          shell.user.id,
          shell.book.id,
          user_id,
          (request.body as Static<typeof MemberPatch>).role,
        ),
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
      const { user_id } = request.params as Static<typeof MemberParams>;
      const outcome = await runForm(request, () =>
        service.removeMember(deps, shell.user.id, shell.book.id, user_id),
      );
      if (outcome.ok) return seeOther(reply, bookPath(shell.book.id, 'members'));
      return sendPage(reply, await render(request, outcome.form), outcome.status);
    },
  );
}
