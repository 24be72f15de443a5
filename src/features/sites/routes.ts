import type { FastifyInstance } from 'fastify';
import { APP_READ_ERRORS, APP_WRITE_ERRORS, routeDoc } from '../../platform/http/openapi.ts';
import { CursorPage, CursorParam, Text, Type } from '../../platform/http/schema-kit.ts';
import { requireCaller, typedRoutes } from '../../platform/http/typed.ts';

export const SiteListQuery = Type.Object({ cursor: CursorParam });

import { addSite, listSites, removeSite, type SitesDeps, verifySite } from './service.ts';

const SpaceParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
const SiteParams = Type.Object({
  id: Type.String({ format: 'uuid' }),
  site_id: Type.String({ format: 'uuid' }),
});
export const SiteIn = Type.Object({
  origin: Text({
    minLength: 1,
    maxLength: 300,
    description: 'Scheme, host and port, e.g. https://shop.example.com.',
  }),
});
const SiteOut = Type.Object({
  id: Type.String({ format: 'uuid' }),
  origin: Type.String(),
  token: Type.String({ description: 'Publish it on a line of its own at well_known_url.' }),
  well_known_url: Type.String(),
  verified: Type.Boolean(),
  verified_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
});

/** The OpenAPI description of each route below (see platform/http/openapi.ts). */
const docs = {
  addSite: routeDoc({
    operationId: 'addSite',
    summary: 'Add a site',
    description:
      "Adds an origin that may show the space's pay pages in a frame once its control is proven. Owners and admins only. Adding an origin already listed answers 200 with it; a new one answers 201 with the proof to publish.",
    tags: ['Sites'],
    errors: APP_WRITE_ERRORS,
  }),
  listSites: routeDoc({
    operationId: 'listSites',
    summary: 'List sites',
    description: "Lists the space's sites and whether each is verified, the newest first, 50 a page.",
    tags: ['Sites'],
    errors: APP_READ_ERRORS,
  }),
  verifySite: routeDoc({
    operationId: 'verifySite',
    summary: 'Verify a site',
    description:
      'Fetches the proof from the site (public addresses only, no redirects) and marks it verified when it matches. Owners and admins only.',
    tags: ['Sites'],
    errors: APP_WRITE_ERRORS,
  }),
  removeSite: routeDoc({
    operationId: 'removeSite',
    summary: 'Remove a site',
    description:
      'Removes a site; its pages may no longer be framed there. Owners and admins only. Answers 204.',
    tags: ['Sites'],
    errors: APP_READ_ERRORS,
  }),
};

/** Proven sites: where the space's payment pages may be shown in a frame. */
export function registerSiteAppRoutes(server: FastifyInstance, deps: SitesDeps) {
  const app = typedRoutes(server);
  app.post(
    '/app/api/spaces/:id/sites',
    {
      schema: {
        ...docs.addSite,
        params: SpaceParams,
        body: SiteIn,
        response: { 200: SiteOut, 201: SiteOut },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const { origin } = request.body;
      const added = await addSite(deps, requireCaller(request).userId, id, origin);
      return reply.code(added.created ? 201 : 200).send(added.site);
    },
  );
  app.get(
    '/app/api/spaces/:id/sites',
    {
      schema: {
        ...docs.listSites,
        params: SpaceParams,
        querystring: SiteListQuery,
        response: { 200: CursorPage(SiteOut) },
      },
    },
    async (request) => listSites(deps, requireCaller(request).userId, request.params.id, request.query),
  );
  app.post(
    '/app/api/spaces/:id/sites/:site_id/verify',
    {
      schema: {
        ...docs.verifySite,
        params: SiteParams,
        response: { 200: SiteOut },
      },
    },
    async (request) => {
      const { id, site_id } = request.params;
      return verifySite(deps, requireCaller(request).userId, id, site_id);
    },
  );
  app.delete(
    '/app/api/spaces/:id/sites/:site_id',
    {
      schema: {
        ...docs.removeSite,
        params: SiteParams,
      },
    },
    async (request, reply) => {
      const { id, site_id } = request.params;
      await removeSite(deps, requireCaller(request).userId, id, site_id);
      return reply.code(204).send();
    },
  );
}
