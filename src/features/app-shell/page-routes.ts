import type { FastifyInstance } from 'fastify';
import { Type } from '../../platform/http/schema-kit.ts';
import { typedRoutes } from '../../platform/http/typed.ts';
import { seeOther, viewerShellOf } from '../../platform/web/plumbing.ts';
import { bookPath } from '../../platform/web/shell.ts';

const SwitchQuery = Type.Object({ book: Type.Optional(Type.String({ maxLength: 100 })) });

/** /app opens the newest book's Home (or the Books screen when there is none); the switcher's target. */
export function registerShellPages(server: FastifyInstance) {
  const scope = typedRoutes(server);
  scope.get('/app', { schema: { hide: true } }, async (request, reply) => {
    const shell = viewerShellOf(request);
    const first = shell.books[0];
    return seeOther(reply, first ? bookPath(first.id) : '/app/books');
  });
  scope.get('/app/switch', { schema: { hide: true, querystring: SwitchQuery } }, async (request, reply) => {
    const shell = viewerShellOf(request);
    const wanted = request.query.book;
    const book = shell.books.find((candidate) => candidate.id === wanted);
    return seeOther(reply, book ? bookPath(book.id) : '/app/books');
  });
}
