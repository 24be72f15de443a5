import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type Static, Type } from '../../platform/http/schema-kit.ts';
import { typedRoutes } from '../../platform/http/typed.ts';
import { EMPTY_FORM, type FormState } from '../../platform/web/components.tsx';
import { formRoute, runForm } from '../../platform/web/forms.ts';
import { seeOther, sendPage, shellOf } from '../../platform/web/plumbing.ts';
import { bookPath } from '../../platform/web/shell.ts';
import { SitesPage } from './pages.tsx';
import { SiteIn, SiteListQuery } from './routes.ts';
import { addSite, listSites, removeSite, type SitesDeps, verifySite } from './service.ts';

const BookParams = Type.Object({ book_id: Type.String({ maxLength: 64 }) });
const SiteParams = Type.Object({
  book_id: Type.String({ maxLength: 64 }),
  site_id: Type.String({ format: 'uuid' }),
});

async function render(
  deps: SitesDeps,
  request: FastifyRequest,
  form: FormState,
  { query = {}, notice }: { query?: Static<typeof SiteListQuery>; notice?: string } = {},
) {
  const shell = shellOf(request);
  const page = await listSites(deps, shell.user.id, shell.book.id, query);
  return SitesPage({ shell, page, cursor: query.cursor, form, notice });
}

export function registerSitePages(server: FastifyInstance, deps: SitesDeps) {
  const scope = typedRoutes(server);
  const path = '/app/books/:book_id/sites';
  scope.get(
    path,
    { schema: { hide: true, params: BookParams, querystring: SiteListQuery } },
    async (request, reply) =>
      sendPage(reply, await render(deps, request, EMPTY_FORM, { query: request.query })),
  );
  scope.post(path, formRoute({ params: BookParams, body: SiteIn }), async (request, reply) => {
    const shell = shellOf(request);
    const outcome = await runForm(request, ({ body }) =>
      addSite(deps, shell.user.id, shell.book.id, body.origin),
    );
    if (outcome.ok) return seeOther(reply, bookPath(shell.book.id, 'sites'));
    const form = {
      ...outcome.form,
      errors: { origin: outcome.form.sentence ?? '', ...outcome.form.errors },
    };
    return sendPage(reply, await render(deps, request, form), outcome.status);
  });
  scope.post(
    `${path}/:site_id/verify`,
    { schema: { hide: true, params: SiteParams } },
    async (request, reply) => {
      const shell = shellOf(request);
      const { site_id } = request.params;
      const outcome = await runForm(request, () => verifySite(deps, shell.user.id, shell.book.id, site_id));
      if (outcome.ok)
        return sendPage(
          reply,
          await render(deps, request, EMPTY_FORM, { notice: `${outcome.value.origin} is verified.` }),
        );
      return sendPage(reply, await render(deps, request, outcome.form), outcome.status);
    },
  );
  scope.post(
    `${path}/:site_id/remove`,
    { schema: { hide: true, params: SiteParams } },
    async (request, reply) => {
      const shell = shellOf(request);
      const { site_id } = request.params;
      const outcome = await runForm(request, () => removeSite(deps, shell.user.id, shell.book.id, site_id));
      if (outcome.ok) return seeOther(reply, bookPath(shell.book.id, 'sites'));
      return sendPage(reply, await render(deps, request, outcome.form), outcome.status);
    },
  );
}
