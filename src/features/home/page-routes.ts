import type { FastifyInstance } from 'fastify';
import { Type } from '../../platform/http/schema-kit.ts';
import { typedRoutes } from '../../platform/http/typed.ts';
import { seeOther, sendPage, shellOf } from '../../platform/web/plumbing.ts';
import { bookPath } from '../../platform/web/shell.ts';
import { HomePage } from './pages.tsx';
import { dismissChecklist, type HomeDeps, readHome } from './service.ts';

const BookParams = Type.Object({ book_id: Type.String({ maxLength: 64 }) });

/** A book's root is its Home; the checklist's Hide button posts here. */
export function registerHomePages(server: FastifyInstance, deps: HomeDeps) {
  const scope = typedRoutes(server);
  scope.get('/app/books/:book_id', { schema: { hide: true, params: BookParams } }, async (request, reply) => {
    const shell = shellOf(request);
    return sendPage(reply, HomePage({ shell, home: await readHome(deps, shell.member) }));
  });
  scope.post(
    '/app/books/:book_id/home/checklist/dismiss',
    { schema: { hide: true, params: BookParams } },
    async (request, reply) => {
      const shell = shellOf(request);
      await dismissChecklist(deps, shell.member);
      return seeOther(reply, bookPath(shell.book.id));
    },
  );
}
