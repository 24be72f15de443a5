import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../core/errors.ts';
import { canAdminister } from '../../core/roles.ts';
import { Type } from '../../platform/http/schema-kit.ts';
import { typedRoutes } from '../../platform/http/typed.ts';
import { type FormState, hrefWith } from '../../platform/web/components.tsx';
import { formRoute, runForm } from '../../platform/web/forms.ts';
import { seeOther, sendPage, shellOf } from '../../platform/web/plumbing.ts';
import { bookPath } from '../../platform/web/shell.ts';
import { closeSenders, createSenders } from './delivery-service.ts';
import { DeliveryPage, JournalPage, SubscriptionsPage, type SubscriptionsPageProps } from './pages.tsx';
import { JournalQuery, SubscriptionCreate } from './schemas.ts';
import * as service from './service.ts';

// Page routes of Connections → Event subscriptions: the same service calls as the app API.
// A secret is shown only in the answer to the write that made it; other writes answer 303.

const BookParams = Type.Object({ book_id: Type.String({ maxLength: 64 }) });
const SubParams = Type.Object({
  book_id: Type.String({ maxLength: 64 }),
  sid: Type.String({ format: 'uuid' }),
});
const DeliveryParams = Type.Object({
  book_id: Type.String({ maxLength: 64 }),
  sid: Type.String({ format: 'uuid' }),
  did: Type.String({ format: 'uuid' }),
});
const Done = Type.Object({
  done: Type.Optional(
    Type.Union([Type.Literal('resumed'), Type.Literal('deleted'), Type.Literal('retried')]),
  ),
});
const DONE_SENTENCES = {
  resumed: 'Resumed: its held deliveries are being sent again.',
  deleted: 'The subscription is deleted.',
  retried: 'Retry scheduled: the delivery is due now.',
};

export type WebhookPageDeps = Omit<service.WebhooksDeps, 'senders'>;

export function registerSubscriptionPages(server: FastifyInstance, pageDeps: WebhookPageDeps) {
  const scope = typedRoutes(server);
  const senders = createSenders({
    allowPrivate: pageDeps.webhookAllowPrivate,
    allowList: pageDeps.webhookAllowList,
    resolver: pageDeps.resolver,
  });
  scope.addHook('onClose', async () => closeSenders(senders));
  const deps: service.WebhooksDeps = { ...pageDeps, senders };
  const path = '/app/books/:book_id/subscriptions';
  const render = async (
    request: FastifyRequest,
    extra: Omit<SubscriptionsPageProps, 'shell' | 'subscriptions'> = {},
  ) => {
    const shell = shellOf(request);
    const subscriptions = canAdminister(shell.book.role)
      ? await service.listSubscriptions(deps, shell.user.id, shell.book.id)
      : null;
    return SubscriptionsPage({ shell, subscriptions, ...extra });
  };
  scope.get(
    path,
    { schema: { hide: true, params: BookParams, querystring: Done } },
    async (request, reply) => {
      const { done } = request.query;
      return sendPage(reply, await render(request, { done: done && DONE_SENTENCES[done] }));
    },
  );
  scope.post(
    path,
    formRoute({ params: BookParams, body: SubscriptionCreate }, { form: { arrays: ['events'] } }),
    async (request, reply) => {
      const shell = shellOf(request);
      const outcome = await runForm(request, ({ body }) =>
        service.createSubscription(deps, shell.user.id, shell.book.id, body),
      );
      if (!outcome.ok) return sendPage(reply, await render(request, { form: outcome.form }), outcome.status);
      const secret = { label: `Signing secret for ${outcome.value.url}`, value: outcome.value.secret };
      return sendPage(reply, await render(request, { secret, done: 'Subscription added.' }));
    },
  );
  registerSubscriptionActions(scope, deps, render);
  registerJournalPages(scope, deps);
}

type Render = (
  request: FastifyRequest,
  extra?: Omit<SubscriptionsPageProps, 'shell' | 'subscriptions'>,
) => Promise<ReturnType<typeof SubscriptionsPage>>;

/** The per-subscription writes: New secret, Send test (answered in place), Resume, Delete. */
function registerSubscriptionActions(server: FastifyInstance, deps: service.WebhooksDeps, render: Render) {
  const scope = typedRoutes(server);
  const path = '/app/books/:book_id/subscriptions/:sid';
  const options = { schema: { hide: true, params: SubParams } };
  const failed = async (
    request: FastifyRequest,
    reply: Parameters<typeof sendPage>[0],
    form: FormState,
    status: number,
  ) => sendPage(reply, await render(request, { problem: form.sentence }), status);
  scope.post(`${path}/rotate`, options, async (request, reply) => {
    const shell = shellOf(request);
    const { sid } = request.params;
    const outcome = await runForm(request, () =>
      service.rotateSecret(deps, shell.user.id, shell.book.id, sid),
    );
    if (!outcome.ok) return failed(request, reply, outcome.form, outcome.status);
    const secret = { label: `New signing secret for ${outcome.value.url}`, value: outcome.value.secret };
    return sendPage(reply, await render(request, { secret }));
  });
  scope.post(`${path}/test`, options, async (request, reply) => {
    const shell = shellOf(request);
    const { sid } = request.params;
    const outcome = await runForm(request, () =>
      service.sendTest(deps, shell.user.id, shell.book.id, { subscription_id: sid }),
    );
    if (!outcome.ok) return failed(request, reply, outcome.form, outcome.status);
    const result = outcome.value;
    const answer =
      result.response_code === null ? (result.error ?? 'no answer') : `HTTP ${result.response_code}`;
    return sendPage(
      reply,
      await render(
        request,
        result.delivered
          ? { done: `Test delivered to ${result.url}: ${answer}.` }
          : { problem: `The test to ${result.url} failed: ${answer}.` },
      ),
    );
  });
  for (const [action, done] of [
    ['resume', 'resumed'],
    ['delete', 'deleted'],
  ] as const) {
    scope.post(`${path}/${action}`, options, async (request, reply) => {
      const shell = shellOf(request);
      const { sid } = request.params;
      const outcome = await runForm(
        request,
        async (): Promise<unknown> =>
          action === 'resume'
            ? service.resumeSubscription(deps, shell.user.id, shell.book.id, sid)
            : service.deleteSubscription(deps, shell.user.id, shell.book.id, sid),
      );
      if (!outcome.ok) return failed(request, reply, outcome.form, outcome.status);
      const back =
        action === 'resume'
          ? bookPath(shell.book.id, `subscriptions/${sid}`)
          : bookPath(shell.book.id, 'subscriptions');
      return seeOther(reply, hrefWith(back, { done }));
    });
  }
}

const JournalPageQuery = Type.Object({ ...JournalQuery.properties, ...Done.properties });

type JournalShell = ReturnType<typeof shellOf>;

/** The subscription whose journal a page shows: owners and admins only, in this book. */
async function journalSubscription(deps: service.WebhooksDeps, shell: JournalShell, sid: string) {
  if (!canAdminister(shell.book.role))
    throw new AppError('forbidden', 'Only owners and admins read the journal of a subscription.');
  const subscription = (await service.listSubscriptions(deps, shell.user.id, shell.book.id)).find(
    (row) => row.id === sid,
  );
  if (!subscription) throw new AppError('not_found', 'No such subscription in this space.');
  return subscription;
}

/** One page of a subscription's deliveries and its recent test sends. */
async function journalRows(
  deps: service.WebhooksDeps,
  shell: JournalShell,
  sid: string,
  query: Parameters<typeof service.listJournal>[3],
) {
  const where = { spaceId: shell.book.id, subscriptionId: sid };
  const page = await service.listJournal(deps, shell.user.id, where, query);
  const testSends = await service.listTestSends(deps, shell.user.id, where);
  return { page, testSends };
}

function registerJournalPages(server: FastifyInstance, deps: service.WebhooksDeps) {
  const scope = typedRoutes(server);
  const path = '/app/books/:book_id/subscriptions/:sid';
  scope.get(
    path,
    { schema: { hide: true, params: SubParams, querystring: JournalPageQuery } },
    async (request, reply) => {
      const shell = shellOf(request);
      const { sid } = request.params;
      const query = request.query;
      const subscription = await journalSubscription(deps, shell, sid);
      const { page, testSends } = await journalRows(deps, shell, sid, query);
      const last = page.items.at(-1);
      const base = bookPath(shell.book.id, `subscriptions/${sid}`);
      return sendPage(
        reply,
        JournalPage({
          shell,
          subscription,
          deliveries: page.items,
          testSends,
          status: query.status,
          nextHref:
            page.has_more && last ? hrefWith(base, { status: query.status, starting_after: last.id }) : null,
          done: query.done && DONE_SENTENCES[query.done],
        }),
      );
    },
  );
  scope.get(
    `${path}/deliveries/:did`,
    { schema: { hide: true, params: DeliveryParams } },
    async (request, reply) => {
      const shell = shellOf(request);
      const { sid, did } = request.params;
      const subscription = await journalSubscription(deps, shell, sid);
      const delivery = await service.getDelivery(deps, shell.user.id, {
        spaceId: shell.book.id,
        subscriptionId: sid,
        deliveryId: did,
      });
      return sendPage(reply, DeliveryPage({ shell, subscription, delivery }));
    },
  );
  scope.post(
    `${path}/deliveries/:did/retry`,
    { schema: { hide: true, params: DeliveryParams } },
    async (request, reply) => {
      const shell = shellOf(request);
      const { sid, did } = request.params;
      const base = bookPath(shell.book.id, `subscriptions/${sid}`);
      const outcome = await runForm(request, () =>
        service.retryDelivery(deps, shell.user.id, {
          spaceId: shell.book.id,
          subscriptionId: sid,
          deliveryId: did,
        }),
      );
      if (outcome.ok) return seeOther(reply, hrefWith(base, { done: 'retried' }));
      if (outcome.status === 404) throw new AppError('not_found', 'No such delivery for this subscription.');
      // A refusal (a paused subscription) is shown on the journal itself.
      const subscription = await journalSubscription(deps, shell, sid);
      const { page, testSends } = await journalRows(deps, shell, sid, {});
      return sendPage(
        reply,
        JournalPage({
          shell,
          subscription,
          deliveries: page.items,
          testSends,
          status: undefined,
          nextHref: null,
          problem: outcome.form.sentence,
        }),
        outcome.status,
      );
    },
  );
}
