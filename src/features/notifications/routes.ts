import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../core/clock.ts';
import type { Db } from '../../platform/db/database.ts';
import { type Static, Type } from '../../platform/http/schema-kit.ts';
import { listForMember, markRead } from './service.ts';

const Params = Type.Object({ id: Type.String({ format: 'uuid' }) });
const NotificationOut = Type.Object({
  id: Type.String({ format: 'uuid' }),
  kind: Type.String(),
  subject_id: Type.Union([Type.String(), Type.Null()]),
  payload: Type.Record(Type.String(), Type.Unknown()),
  created_at: Type.String({ format: 'date-time' }),
  read_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

export function registerNotificationRoutes(app: FastifyInstance, deps: { db: Db; clock: Clock }) {
  app.post(
    '/app/api/spaces/:id/notifications/read',
    { schema: { tags: ['app'], params: Params, response: { 200: Type.Object({ read: Type.Boolean() }) } } },
    async (request) => {
      const { id } = request.params as Static<typeof Params>;
      await markRead(deps, id, request.session!.userId, deps.clock.now());
      return { read: true };
    },
  );
  app.get(
    '/app/api/spaces/:id/notifications',
    {
      schema: {
        tags: ['app'],
        params: Params,
        response: { 200: Type.Object({ items: Type.Array(NotificationOut) }) },
      },
    },
    async (request) => {
      const { id } = request.params as Static<typeof Params>;
      return { items: await listForMember(deps, id, request.session!.userId) };
    },
  );
}
