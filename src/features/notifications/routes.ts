import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../core/clock.ts';
import type { Db } from '../../platform/db/database.ts';
import { APP_READ_ERRORS, APP_WRITE_ERRORS, routeDoc } from '../../platform/http/openapi.ts';
import { CursorPage, CursorParam, Type } from '../../platform/http/schema-kit.ts';
import { requireCaller, typedRoutes } from '../../platform/http/typed.ts';
import { requireMember } from '../spaces/index.ts';
import { listForMember, markRead } from './service.ts';

const Params = Type.Object({ id: Type.String({ format: 'uuid' }) });
export const NotificationQuery = Type.Object({ cursor: CursorParam });
const NotificationOut = Type.Object({
  id: Type.String({ format: 'uuid' }),
  kind: Type.String(),
  subject_id: Type.Union([Type.String(), Type.Null()]),
  payload: Type.Record(Type.String(), Type.Unknown()),
  created_at: Type.String({ format: 'date-time' }),
  read_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

/** The OpenAPI description of each route below (see platform/http/openapi.ts). */
const docs = {
  listNotifications: routeDoc({
    operationId: 'listNotifications',
    summary: 'List notifications',
    description:
      'Lists the notices the server raised for the space (a paused subscription, a low gas wallet, …), newest first, 50 a page. Any member may read.',
    tags: ['Notifications'],
    errors: APP_READ_ERRORS,
  }),
  markNotificationsRead: routeDoc({
    operationId: 'markNotificationsRead',
    summary: 'Mark notifications read',
    description:
      "Marks every notice of the space read for the calling member, which clears the shell's badge.",
    tags: ['Notifications'],
    errors: APP_WRITE_ERRORS,
  }),
};

export function registerNotificationRoutes(server: FastifyInstance, deps: { db: Db; clock: Clock }) {
  const app = typedRoutes(server);
  app.post(
    '/app/api/spaces/:id/notifications/read',
    {
      schema: {
        ...docs.markNotificationsRead,
        params: Params,
        response: { 200: Type.Object({ read: Type.Boolean() }) },
      },
    },
    async (request) => {
      const { id } = request.params;
      const member = await requireMember(deps.db, id, requireCaller(request).userId);
      await markRead(deps, member, deps.clock.now());
      return { read: true };
    },
  );
  app.get(
    '/app/api/spaces/:id/notifications',
    {
      schema: {
        ...docs.listNotifications,
        params: Params,
        querystring: NotificationQuery,
        response: { 200: CursorPage(NotificationOut) },
      },
    },
    async (request) => {
      const { id } = request.params;
      const member = await requireMember(deps.db, id, requireCaller(request).userId);
      return listForMember(deps, member, request.query);
    },
  );
}
