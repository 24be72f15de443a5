import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../core/clock.ts';
import type { Db } from '../../platform/db/database.ts';
import { Type } from '../../platform/http/schema-kit.ts';
import { typedRoutes } from '../../platform/http/typed.ts';
import { seeOther, sendPage, shellOf } from '../../platform/web/plumbing.ts';
import { bookPath } from '../../platform/web/shell.ts';
import { NotificationsPage } from './pages.tsx';
import { NotificationQuery } from './routes.ts';
import { listForMember, markRead } from './service.ts';

const BookParams = Type.Object({ book_id: Type.String({ maxLength: 64 }) });

export function registerNotificationPages(server: FastifyInstance, deps: { db: Db; clock: Clock }) {
  const scope = typedRoutes(server);
  const path = '/app/books/:book_id/notifications';
  scope.get(
    path,
    { schema: { hide: true, params: BookParams, querystring: NotificationQuery } },
    async (request, reply) => {
      const shell = shellOf(request);
      const query = request.query;
      const page = await listForMember(deps, shell.member, query);
      return sendPage(reply, NotificationsPage({ shell, page, cursor: query.cursor }));
    },
  );
  // Reading is not a change to the book: a viewer may mark their own notifications read.
  scope.post(
    `${path}/read`,
    { schema: { hide: true, params: BookParams }, config: { viewerMay: true } },
    async (request, reply) => {
      const shell = shellOf(request);
      await markRead(deps, shell.member, deps.clock.now());
      return seeOther(reply, bookPath(shell.book.id, 'notifications'));
    },
  );
}
