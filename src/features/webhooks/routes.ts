import type { FastifyInstance } from 'fastify';
import { APP_READ_ERRORS, APP_WRITE_ERRORS, routeDoc } from '../../platform/http/openapi.ts';
import { requireCaller, typedRoutes } from '../../platform/http/typed.ts';
import { closeSenders, createSenders, type Senders } from './delivery-service.ts';
import {
  DeliveryOut,
  DeliveryPage,
  DeliveryParams,
  JournalQuery,
  KeyDeliveryParams,
  KeyParams,
  KeySecretRotated,
  SpaceParams,
  SubscriptionCreate,
  SubscriptionDeleted,
  SubscriptionList,
  SubscriptionOut,
  SubscriptionParams,
  SubscriptionRotated,
  SubscriptionWithSecret,
  WebhookTest,
  WebhookTestOut,
} from './schemas.ts';
import * as service from './service.ts';

const BASE = '/app/api/spaces/:id/subscriptions';

export type WebhookRouteDeps = Omit<service.WebhooksDeps, 'senders'> & { senders?: Senders };

/** The OpenAPI description of each route below (see platform/http/openapi.ts). */
const docs = {
  createSubscription: routeDoc({
    operationId: 'createSubscription',
    summary: 'Add a book webhook subscription',
    description:
      "Subscribes a public https address (port 443) to the space's book events; no events means all, including later ones. Owners and admins only. The signing secret is in this answer only.",
    tags: ['Webhooks'],
    errors: APP_WRITE_ERRORS,
  }),
  listSubscriptions: routeDoc({
    operationId: 'listSubscriptions',
    summary: 'List book webhook subscriptions',
    description: "Lists the space's subscriptions with their events and state (active or paused).",
    tags: ['Webhooks'],
    errors: APP_READ_ERRORS,
  }),
  deleteSubscription: routeDoc({
    operationId: 'deleteSubscription',
    summary: 'Delete a book webhook subscription',
    description: 'Deletes a subscription; nothing more is sent to it. Owners and admins only.',
    tags: ['Webhooks'],
    errors: APP_READ_ERRORS,
  }),
  rotateSubscriptionSecret: routeDoc({
    operationId: 'rotateSubscriptionSecret',
    summary: "Rotate a subscription's secret",
    description:
      'Makes a new signing secret and answers it once; deliveries from now on are signed with it. For 24 hours the replaced secret also signs (a second signature in webhook-signature), so receivers switch without a gap. Owners and admins only.',
    tags: ['Webhooks'],
    errors: APP_WRITE_ERRORS,
  }),
  rotateKeyWebhookSecret: routeDoc({
    operationId: 'rotateKeyWebhookSecret',
    summary: "Rotate an integration key's webhook secret",
    description:
      "Makes a new webhook signing secret for the key and answers it once; the key's deliveries from now on are signed with it, and for 24 hours with the replaced one too (a second signature in webhook-signature). A revoked key answers 409. Owners and admins only.",
    tags: ['Webhooks'],
    errors: APP_WRITE_ERRORS,
  }),
  listKeyDeliveries: routeDoc({
    operationId: 'listKeyDeliveries',
    summary: "Read an integration key's webhook journal",
    description:
      "Lists the key channel's deliveries of the last 30 days (event, status, attempt, response code), newest first, by cursor, optionally filtered by status. Owners and admins only.",
    tags: ['Webhooks'],
    errors: APP_READ_ERRORS,
  }),
  retryKeyDelivery: routeDoc({
    operationId: 'retryKeyDelivery',
    summary: 'Retry a key-channel delivery',
    description:
      'Sends one journal row of the key channel again, with its original event id, and answers the row as it now stands. Owners and admins only.',
    tags: ['Webhooks'],
    errors: APP_WRITE_ERRORS,
  }),
  resumeSubscription: routeDoc({
    operationId: 'resumeSubscription',
    summary: 'Resume a paused subscription',
    description:
      'Resumes a subscription paused after a day of failures; held deliveries are sent again. Owners and admins only.',
    tags: ['Webhooks'],
    errors: APP_WRITE_ERRORS,
  }),
  listDeliveries: routeDoc({
    operationId: 'listDeliveries',
    summary: "List a subscription's deliveries",
    description:
      'The delivery journal of the last 30 days: event, status, attempt and response code, newest first, paged with starting_after.',
    tags: ['Webhooks'],
    errors: APP_READ_ERRORS,
  }),
  retryDelivery: routeDoc({
    operationId: 'retryDelivery',
    summary: 'Retry a delivery',
    description: 'Sends one delivery again now with its original event id. Owners and admins only.',
    tags: ['Webhooks'],
    errors: APP_WRITE_ERRORS,
  }),
  testWebhook: routeDoc({
    operationId: 'testWebhook',
    summary: 'Send a test webhook',
    description:
      'Sends a signed test event to an address (or a subscription) and answers what the receiver said. Owners and admins only; the address follows the same public-address rules.',
    tags: ['Webhooks'],
    errors: APP_WRITE_ERRORS,
  }),
};

/** Book subscriptions, their journal and the test send (owners and admins only). */
export function registerWebhookRoutes(server: FastifyInstance, routeDeps: WebhookRouteDeps) {
  const app = typedRoutes(server);
  const owned = routeDeps.senders === undefined;
  const senders =
    routeDeps.senders ??
    createSenders({
      allowPrivate: routeDeps.webhookAllowPrivate,
      allowList: routeDeps.webhookAllowList,
      resolver: routeDeps.resolver,
    });
  if (owned) app.addHook('onClose', async () => closeSenders(senders));
  const deps: service.WebhooksDeps = { ...routeDeps, senders };
  app.post(
    BASE,
    {
      schema: {
        ...docs.createSubscription,

        params: SpaceParams,
        body: SubscriptionCreate,
        response: { 201: SubscriptionWithSecret },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const body = request.body;
      const created = await service.createSubscription(deps, requireCaller(request).userId, id, body);
      return reply.code(201).header('cache-control', 'no-store').send(created);
    },
  );
  app.get(
    BASE,
    {
      schema: {
        ...docs.listSubscriptions,
        params: SpaceParams,
        response: { 200: SubscriptionList },
      },
    },
    async (request) => {
      const { id } = request.params;
      return { items: await service.listSubscriptions(deps, requireCaller(request).userId, id) };
    },
  );
  registerSubscriptionChanges(app, deps);
  registerJournalRoutes(app, deps);
}

/** Deleting, rotating and resuming one subscription. */
function registerSubscriptionChanges(server: FastifyInstance, deps: service.WebhooksDeps) {
  const app = typedRoutes(server);
  app.delete(
    `${BASE}/:sid`,
    {
      schema: {
        ...docs.deleteSubscription,
        params: SubscriptionParams,
        response: { 200: SubscriptionDeleted },
      },
    },
    async (request) => {
      const { id, sid } = request.params;
      return service.deleteSubscription(deps, requireCaller(request).userId, id, sid);
    },
  );
  app.post(
    `${BASE}/:sid/rotate-secret`,
    {
      schema: {
        ...docs.rotateSubscriptionSecret,
        params: SubscriptionParams,
        response: { 200: SubscriptionRotated },
      },
    },
    async (request, reply) => {
      const { id, sid } = request.params;
      const rotated = await service.rotateSecret(deps, requireCaller(request).userId, id, sid);
      return reply.header('cache-control', 'no-store').send(rotated);
    },
  );
  app.post(
    `${BASE}/:sid/resume`,
    {
      schema: {
        ...docs.resumeSubscription,
        params: SubscriptionParams,
        response: { 200: SubscriptionOut },
      },
    },
    async (request) => {
      const { id, sid } = request.params;
      return service.resumeSubscription(deps, requireCaller(request).userId, id, sid);
    },
  );
}

function registerJournalRoutes(server: FastifyInstance, deps: service.WebhooksDeps) {
  const app = typedRoutes(server);
  app.get(
    `${BASE}/:sid/deliveries`,
    {
      schema: {
        ...docs.listDeliveries,

        params: SubscriptionParams,
        querystring: JournalQuery,
        response: { 200: DeliveryPage },
      },
    },
    async (request) => {
      const { id, sid } = request.params;
      const query = request.query;
      return service.listJournal(
        deps,
        requireCaller(request).userId,
        { spaceId: id, subscriptionId: sid },
        query,
      );
    },
  );
  app.post(
    `${BASE}/:sid/deliveries/:did/retry`,
    {
      schema: {
        ...docs.retryDelivery,
        params: DeliveryParams,
        response: { 200: DeliveryOut },
      },
    },
    async (request) => {
      const { id, sid, did } = request.params;
      const ids = { spaceId: id, subscriptionId: sid, deliveryId: did };
      return service.retryDelivery(deps, requireCaller(request).userId, ids);
    },
  );
  registerKeyJournalRoutes(app, deps);
  app.post(
    '/app/api/spaces/:id/webhooks/test',
    {
      schema: {
        ...docs.testWebhook,
        params: SpaceParams,
        body: WebhookTest,
        response: { 200: WebhookTestOut },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const result = await service.sendTest(deps, requireCaller(request).userId, id, request.body);
      return reply.header('cache-control', 'no-store').send(result);
    },
  );
}

/** The key channel's journal (issue 22): the same 30 days, statuses and Retry as a subscription's. */
function registerKeyJournalRoutes(server: FastifyInstance, deps: service.WebhooksDeps) {
  const app = typedRoutes(server);
  app.get(
    '/app/api/spaces/:id/keys/:key_id/deliveries',
    {
      schema: {
        ...docs.listKeyDeliveries,
        params: KeyParams,
        querystring: JournalQuery,
        response: { 200: DeliveryPage },
      },
    },
    async (request) => {
      const { id, key_id } = request.params;
      const query = request.query;
      return service.listKeyJournal(
        deps,
        requireCaller(request).userId,
        { spaceId: id, keyId: key_id },
        query,
      );
    },
  );
  app.post(
    '/app/api/spaces/:id/keys/:key_id/rotate-webhook-secret',
    { schema: { ...docs.rotateKeyWebhookSecret, params: KeyParams, response: { 200: KeySecretRotated } } },
    async (request, reply) => {
      const { id, key_id } = request.params;
      const ids = { spaceId: id, keyId: key_id };
      const rotated = await service.rotateKeyWebhookSecret(deps, requireCaller(request).userId, ids);
      return reply.header('cache-control', 'no-store').send(rotated);
    },
  );
  app.post(
    '/app/api/spaces/:id/keys/:key_id/deliveries/:did/retry',
    { schema: { ...docs.retryKeyDelivery, params: KeyDeliveryParams, response: { 200: DeliveryOut } } },
    async (request) => {
      const { id, key_id, did } = request.params;
      const ids = { spaceId: id, keyId: key_id, deliveryId: did };
      return service.retryKeyDelivery(deps, requireCaller(request).userId, ids);
    },
  );
}
