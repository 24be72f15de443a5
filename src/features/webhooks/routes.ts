import type { FastifyInstance } from 'fastify';
import type { Static } from '../../platform/http/schema-kit.ts';
import { closeSenders, createSenders, type Senders } from './delivery-service.ts';
import {
  DeliveryOut,
  DeliveryPage,
  DeliveryParams,
  JournalQuery,
  KeyDeliveryParams,
  KeyParams,
  SpaceParams,
  SubscriptionCreate,
  SubscriptionDeleted,
  SubscriptionList,
  SubscriptionOut,
  SubscriptionParams,
  SubscriptionWithSecret,
  WebhookTest,
  WebhookTestOut,
} from './schemas.ts';
import * as service from './service.ts';

const tags = ['app'];
const BASE = '/app/api/spaces/:id/subscriptions';

export type WebhookRouteDeps = Omit<service.WebhooksDeps, 'senders'> & { senders?: Senders };

/** Book subscriptions, their journal and the test send (owners and admins only). */
export function registerWebhookRoutes(app: FastifyInstance, routeDeps: WebhookRouteDeps) {
  const owned = routeDeps.senders === undefined;
  const senders =
    routeDeps.senders ??
    createSenders({ allowPrivate: routeDeps.webhookAllowPrivate, resolver: routeDeps.resolver });
  if (owned) app.addHook('onClose', async () => closeSenders(senders));
  const deps: service.WebhooksDeps = { ...routeDeps, senders };
  app.post(
    BASE,
    {
      schema: {
        tags,
        params: SpaceParams,
        body: SubscriptionCreate,
        response: { 201: SubscriptionWithSecret },
      },
    },
    async (request, reply) => {
      const { id } = request.params as Static<typeof SpaceParams>;
      const body = request.body as Static<typeof SubscriptionCreate>;
      const created = await service.createSubscription(deps, request.session!.userId, id, body);
      return reply.code(201).header('cache-control', 'no-store').send(created);
    },
  );
  app.get(
    BASE,
    { schema: { tags, params: SpaceParams, response: { 200: SubscriptionList } } },
    async (request) => {
      const { id } = request.params as Static<typeof SpaceParams>;
      return { items: await service.listSubscriptions(deps, request.session!.userId, id) };
    },
  );
  app.delete(
    `${BASE}/:sid`,
    { schema: { tags, params: SubscriptionParams, response: { 200: SubscriptionDeleted } } },
    async (request) => {
      const { id, sid } = request.params as Static<typeof SubscriptionParams>;
      return service.deleteSubscription(deps, request.session!.userId, id, sid);
    },
  );
  app.post(
    `${BASE}/:sid/rotate-secret`,
    { schema: { tags, params: SubscriptionParams, response: { 200: SubscriptionWithSecret } } },
    async (request, reply) => {
      const { id, sid } = request.params as Static<typeof SubscriptionParams>;
      const rotated = await service.rotateSecret(deps, request.session!.userId, id, sid);
      return reply.header('cache-control', 'no-store').send(rotated);
    },
  );
  app.post(
    `${BASE}/:sid/resume`,
    { schema: { tags, params: SubscriptionParams, response: { 200: SubscriptionOut } } },
    async (request) => {
      const { id, sid } = request.params as Static<typeof SubscriptionParams>;
      return service.resumeSubscription(deps, request.session!.userId, id, sid);
    },
  );
  registerJournalRoutes(app, deps);
}

function registerJournalRoutes(app: FastifyInstance, deps: service.WebhooksDeps) {
  app.get(
    `${BASE}/:sid/deliveries`,
    {
      schema: {
        tags,
        params: SubscriptionParams,
        querystring: JournalQuery,
        response: { 200: DeliveryPage },
      },
    },
    async (request) => {
      const { id, sid } = request.params as Static<typeof SubscriptionParams>;
      const query = request.query as Static<typeof JournalQuery>;
      return service.listJournal(deps, request.session!.userId, { spaceId: id, subscriptionId: sid }, query);
    },
  );
  app.post(
    `${BASE}/:sid/deliveries/:did/retry`,
    { schema: { tags, params: DeliveryParams, response: { 200: DeliveryOut } } },
    async (request) => {
      const { id, sid, did } = request.params as Static<typeof DeliveryParams>;
      const ids = { spaceId: id, subscriptionId: sid, deliveryId: did };
      return service.retryDelivery(deps, request.session!.userId, ids);
    },
  );
  registerKeyJournalRoutes(app, deps);
  app.post(
    '/app/api/spaces/:id/webhooks/test',
    { schema: { tags, params: SpaceParams, body: WebhookTest, response: { 200: WebhookTestOut } } },
    async (request, reply) => {
      const { id } = request.params as Static<typeof SpaceParams>;
      const result = await service.sendTest(
        deps,
        request.session!.userId,
        id,
        request.body as service.WebhookTestInput,
      );
      return reply.header('cache-control', 'no-store').send(result);
    },
  );
}

/** The key channel's journal (issue 22): the same 30 days, statuses and Retry as a subscription's. */
function registerKeyJournalRoutes(app: FastifyInstance, deps: service.WebhooksDeps) {
  app.get(
    '/app/api/spaces/:id/keys/:key_id/deliveries',
    { schema: { tags, params: KeyParams, querystring: JournalQuery, response: { 200: DeliveryPage } } },
    async (request) => {
      const { id, key_id } = request.params as Static<typeof KeyParams>;
      const query = request.query as Static<typeof JournalQuery>;
      return service.listKeyJournal(deps, request.session!.userId, { spaceId: id, keyId: key_id }, query);
    },
  );
  app.post(
    '/app/api/spaces/:id/keys/:key_id/deliveries/:did/retry',
    { schema: { tags, params: KeyDeliveryParams, response: { 200: DeliveryOut } } },
    async (request) => {
      const { id, key_id, did } = request.params as Static<typeof KeyDeliveryParams>;
      const ids = { spaceId: id, keyId: key_id, deliveryId: did };
      return service.retryKeyDelivery(deps, request.session!.userId, ids);
    },
  );
}
