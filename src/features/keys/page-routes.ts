import type { FastifyInstance } from 'fastify';
import { canAdminister } from '../../core/roles.ts';
import { type Static, Type } from '../../platform/http/schema-kit.ts';
import { typedRoutes } from '../../platform/http/typed.ts';
import { EMPTY_FORM, type FormState } from '../../platform/web/components.tsx';
import { formRoute, runForm } from '../../platform/web/forms.ts';
import { seeOther, sendPage, shellOf } from '../../platform/web/plumbing.ts';
import { bookPath } from '../../platform/web/shell.ts';
import { type IssuedKey, KeysPage } from './pages.tsx';
import { KeyIssue, KeyListQuery } from './schemas.ts';
import * as service from './service.ts';

const BookParams = Type.Object({ book_id: Type.String({ maxLength: 64 }) });
const KeyParams = Type.Object({
  book_id: Type.String({ maxLength: 64 }),
  key_id: Type.String({ format: 'uuid' }),
});

export function registerKeyPages(server: FastifyInstance, deps: service.KeysDeps) {
  const scope = typedRoutes(server);
  const path = '/app/books/:book_id/keys';
  const render = async (
    request: Parameters<typeof shellOf>[0],
    form: FormState,
    { query = {}, issued }: { query?: Static<typeof KeyListQuery>; issued?: IssuedKey } = {},
  ) => {
    const shell = shellOf(request);
    // Keys are an administrator's business: others see the screen's explanation, not the list.
    const page = canAdminister(shell.book.role)
      ? await service.listKeys(deps, shell.user.id, shell.book.id, query)
      : { items: [], next_cursor: null };
    return KeysPage({ shell, page, cursor: query.cursor, form, ...(issued ? { issued } : {}) });
  };
  scope.get(
    path,
    { schema: { hide: true, params: BookParams, querystring: KeyListQuery } },
    async (request, reply) => sendPage(reply, await render(request, EMPTY_FORM, { query: request.query })),
  );
  scope.post(
    path,
    formRoute(
      { params: BookParams, body: KeyIssue },
      { form: { arrays: ['scopes'], integers: ['lifetime_days'] } },
    ),
    async (request, reply) => {
      const shell = shellOf(request);
      const outcome = await runForm(request, ({ body }) =>
        service.issueKey(deps, shell.user.id, shell.book.id, body),
      );
      if (!outcome.ok) return sendPage(reply, await render(request, outcome.form), outcome.status);
      // The key and its secret exist only in this answer: rendered here, never kept for a GET.
      const issued = {
        name: outcome.value.name,
        key: outcome.value.key,
        webhook_secret: outcome.value.webhook_secret,
      };
      return sendPage(reply, await render(request, EMPTY_FORM, { issued }), 201);
    },
  );
  scope.post(
    `${path}/:key_id/revoke`,
    { schema: { hide: true, params: KeyParams } },
    async (request, reply) => {
      const shell = shellOf(request);
      const { key_id } = request.params;
      const outcome = await runForm(request, () =>
        service.revokeKey(deps, shell.user.id, shell.book.id, key_id),
      );
      if (outcome.ok) return seeOther(reply, bookPath(shell.book.id, 'keys'));
      return sendPage(reply, await render(request, outcome.form), outcome.status);
    },
  );
}
