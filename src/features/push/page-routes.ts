import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../core/errors.ts';
import { canAdminister } from '../../core/roles.ts';
import { type Static, Type } from '../../platform/http/schema-kit.ts';
import { typedRoutes } from '../../platform/http/typed.ts';
import { hrefWith } from '../../platform/web/components.tsx';
import { formRoute, runForm } from '../../platform/web/forms.ts';
import { seeOther, sendPage, shellOf } from '../../platform/web/plumbing.ts';
import { bookPath } from '../../platform/web/shell.ts';
import { closePeriod } from '../spaces/index.ts';
import { type BatchList, PushPage, type PushPageProps } from './pages.tsx';
import { BatchQuery } from './routes.ts';
import * as service from './service.ts';

// Page routes of Push sources: the same service calls as the app API (batches, undo) and the
// spaces' close-period.

const BookParams = Type.Object({ book_id: Type.String({ maxLength: 64 }) });
const BatchParams = Type.Object({
  book_id: Type.String({ maxLength: 64 }),
  batch_id: Type.String({ format: 'uuid' }),
});
const CloseForm = Type.Object({ through: Type.String({ format: 'date' }) });
// After a write the page is fetched again (303), so a reload never repeats it; the query says
// what the write did, shown in place.
const DoneQuery = Type.Object({
  reversed: Type.Optional(Type.String({ pattern: '^[0-9]{1,6}$' })),
  closed: Type.Optional(Type.String({ format: 'date' })),
});
// The list's filter and page, and the batch whose refused rows are opened below it.
const ListQuery = Type.Object({
  ...DoneQuery.properties,
  ...BatchQuery.properties,
  open: Type.Optional(Type.String({ format: 'uuid' })),
});
type ListQueryType = Static<typeof ListQuery>;

function doneSentence(query: ListQueryType): string | undefined {
  if (query.reversed !== undefined)
    return `Batch undone: ${query.reversed} ${query.reversed === '1' ? 'row' : 'rows'} reversed.`;
  if (query.closed !== undefined) return `The books are closed through ${query.closed}.`;
  return undefined;
}

type Deps = service.PushDeps & Parameters<typeof closePeriod>[0];

async function batchList(
  deps: Deps,
  request: FastifyRequest,
  query: ListQueryType,
): Promise<BatchList | null> {
  const shell = shellOf(request);
  // Members and viewers may open the screen; the batches are for owners and admins only.
  if (!canAdminister(shell.book.role)) return null;
  const filter = { push_source: query.push_source, cursor: query.cursor };
  const [page, open] = await Promise.all([
    service.listBatches(deps, shell.user.id, shell.book.id, filter),
    query.open === undefined
      ? undefined
      : service.batchRejections(deps, shell.user.id, shell.book.id, query.open),
  ]);
  return { page, cursor: query.cursor, source: query.push_source, open };
}

/** The screen; `query` is the GET's list filter and page (a write's answer shows the first page). */
async function render(
  deps: Deps,
  request: FastifyRequest,
  extra: Omit<PushPageProps, 'shell' | 'batches'> = {},
  query: ListQueryType = {},
) {
  return PushPage({ shell: shellOf(request), batches: await batchList(deps, request, query), ...extra });
}

export function registerPushPages(server: FastifyInstance, deps: Deps) {
  const scope = typedRoutes(server);
  const path = '/app/books/:book_id/push';
  scope.get(
    path,
    { schema: { hide: true, params: BookParams, querystring: ListQuery } },
    async (request, reply) =>
      sendPage(reply, await render(deps, request, { done: doneSentence(request.query) }, request.query)),
  );
  scope.post(
    `${path}/:batch_id/undo`,
    { schema: { hide: true, params: BatchParams } },
    async (request, reply) => {
      const shell = shellOf(request);
      const { batch_id } = request.params;
      const outcome = await runForm(request, () =>
        service.undoBatch(deps, shell.user.id, shell.book.id, batch_id),
      );
      if (!outcome.ok) {
        if (outcome.status === 404) throw new AppError('not_found', 'No such batch in this space.');
        return sendPage(reply, await render(deps, request, { undoForm: outcome.form }), outcome.status);
      }
      return seeOther(
        reply,
        hrefWith(bookPath(shell.book.id, 'push'), { reversed: String(outcome.value.reversed) }),
      );
    },
  );
  scope.post(`${path}/close`, formRoute({ params: BookParams, body: CloseForm }), async (request, reply) => {
    const shell = shellOf(request);
    const outcome = await runForm(request, ({ body }) =>
      closePeriod(deps, shell.user.id, shell.book.id, body.through),
    );
    if (!outcome.ok)
      return sendPage(reply, await render(deps, request, { closeForm: outcome.form }), outcome.status);
    return seeOther(
      reply,
      hrefWith(bookPath(shell.book.id, 'push'), { closed: outcome.value.closed_through }),
    );
  });
}
