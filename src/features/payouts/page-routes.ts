import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../core/errors.ts';
import { type Static, type TSchema, Type } from '../../platform/http/schema-kit.ts';
import { type TypedApp, typedRoutes } from '../../platform/http/typed.ts';
import { type FormState, hrefWith } from '../../platform/web/components.tsx';
import { formRoute, type Opened, runForm } from '../../platform/web/forms.ts';
import { seeOther, sendPage, shellOf } from '../../platform/web/plumbing.ts';
import { bookPath } from '../../platform/web/shell.ts';
import { type ChainRailDeps, reportChainTx } from './chain-rail.ts';
import {
  amountOf,
  BookParams,
  registerRulePages,
  registerScreeningPage,
  registerTransferPages,
} from './other-page-routes.ts';
import { PaymentDetailPage, PaymentsPage } from './pages.tsx';
import { OptionalReasonIn, PaymentCreate, PaymentQuery, ReasonIn, ReferenceIn } from './schemas.ts';
import { payoutChoices, payoutDetail } from './screens.ts';
import {
  approvePayout,
  bankFile,
  cancelPayout,
  createPayout,
  listPayouts,
  markBankExecuted,
  rejectPayout,
  releasePayout,
} from './service.ts';

// Page routes of Payments out: the list and create form, and a payment's detail with its
// actions. Each calls the same service function as the app API route of the same write.

const PaymentParams = Type.Object({
  book_id: Type.String({ maxLength: 64 }),
  pid: Type.String({ format: 'uuid' }),
});
const DetailQuery = Type.Object({
  done: Type.Optional(Type.String({ maxLength: 20 })),
});
const ChainTxForm = Type.Object({ tx_hash: Type.String({ pattern: '^0x[0-9a-fA-F]{64}$' }) });

/** What each action did, as the detail page says it after the 303. */
const DONE: Record<string, string> = {
  created: 'Payment created.',
  approve: 'Your approval is recorded.',
  reject: 'Payment rejected.',
  release: 'Hold released; the payment went on its way.',
  cancel: 'Payment cancelled.',
  executed: 'Marked executed with the bank’s reference.',
  'chain-tx': 'Transaction recorded; the payment is executed once the network confirms it.',
};

/** The list with its filter (a re-rendered form shows the first page, unfiltered). */
async function renderList(
  deps: ChainRailDeps,
  request: FastifyRequest,
  query: Static<typeof PaymentQuery>,
  form?: FormState,
) {
  const shell = shellOf(request);
  const [page, choices] = await Promise.all([
    listPayouts(deps, shell.user.id, shell.book.id, {
      status: query.status,
      starting_after: query.starting_after,
    }),
    payoutChoices(deps, shell.user.id, shell.book.id),
  ]);
  return PaymentsPage({
    shell,
    page,
    status: query.status,
    startingAfter: query.starting_after,
    choices,
    form,
  });
}

async function renderDetail(
  deps: ChainRailDeps,
  request: FastifyRequest,
  pid: string,
  extra: { refused?: { action: string; form: FormState }; done?: string | undefined } = {},
) {
  const shell = shellOf(request);
  const detail = await payoutDetail(deps, shell.user.id, shell.book.id, pid);
  return PaymentDetailPage({ shell, detail, ...extra });
}

function registerList(scope: TypedApp, deps: ChainRailDeps, path: string) {
  scope.get(
    path,
    { schema: { hide: true, params: BookParams, querystring: PaymentQuery } },
    async (request, reply) => sendPage(reply, await renderList(deps, request, request.query)),
  );
  scope.post(path, formRoute({ params: BookParams, body: PaymentCreate }), async (request, reply) => {
    const shell = shellOf(request);
    const outcome = await runForm(request, ({ body }) =>
      createPayout(deps, shell.user.id, shell.book.id, { ...body, amount: amountOf(body.amount) }),
    );
    if (!outcome.ok) {
      return sendPage(reply, await renderList(deps, request, {}, outcome.form), outcome.status);
    }
    const created = bookPath(shell.book.id, `payments-out/${outcome.value.id}`);
    return seeOther(reply, hrefWith(created, { done: 'created' }));
  });
}

const actionPath = (name: string) => `/app/books/:book_id/payments-out/:pid/${name}`;
/** An action's options: its form body is checked by its schema, refusals shown in place. */
const actionOptions = <Body extends TSchema>(body: Body) => formRoute({ params: PaymentParams, body });
/** An action without a form: a bad address is the 400 page, as on every page route. */
const bareOptions = { schema: { hide: true, params: PaymentParams } } as const;

/**
 * What an action of the detail page answers: the service call (run only once the schemas'
 * checks held), then back to the detail, or the detail with the refusal in place.
 */
async function answerAction<R extends FastifyRequest>(
  deps: ChainRailDeps,
  request: R,
  reply: FastifyReply,
  action: { name: string; pid: string },
  run: (ids: { userId: string; spaceId: string; pid: string }, body: Opened<R>['body']) => Promise<unknown>,
) {
  const shell = shellOf(request);
  const { name, pid } = action;
  const outcome = await runForm(request, ({ body }) =>
    run({ userId: shell.user.id, spaceId: shell.book.id, pid }, body),
  );
  if (!outcome.ok) {
    if (outcome.status === 404) throw new AppError('not_found', 'No payment with this id in this book.');
    const page = await renderDetail(deps, request, pid, { refused: { action: name, form: outcome.form } });
    return sendPage(reply, page, outcome.status);
  }
  return seeOther(reply, hrefWith(bookPath(shell.book.id, `payments-out/${pid}`), { done: name }));
}

function registerActions(scope: TypedApp, deps: ChainRailDeps) {
  scope.post(actionPath('approve'), bareOptions, (request, reply) =>
    answerAction(deps, request, reply, { name: 'approve', pid: request.params.pid }, (ids) =>
      approvePayout(deps, ids.userId, ids.spaceId, ids.pid),
    ),
  );
  scope.post(actionPath('reject'), actionOptions(OptionalReasonIn), (request, reply) =>
    answerAction(deps, request, reply, { name: 'reject', pid: request.params.pid }, (ids, body) =>
      rejectPayout(deps, ids.userId, ids.spaceId, ids.pid, body.reason ?? ''),
    ),
  );
  scope.post(actionPath('release'), actionOptions(ReasonIn), (request, reply) =>
    answerAction(deps, request, reply, { name: 'release', pid: request.params.pid }, (ids, body) =>
      releasePayout(deps, ids.userId, ids.spaceId, ids.pid, body.reason),
    ),
  );
  scope.post(actionPath('cancel'), bareOptions, (request, reply) =>
    answerAction(deps, request, reply, { name: 'cancel', pid: request.params.pid }, (ids) =>
      cancelPayout(deps, ids.userId, ids.spaceId, ids.pid),
    ),
  );
  scope.post(actionPath('executed'), actionOptions(ReferenceIn), (request, reply) =>
    answerAction(deps, request, reply, { name: 'executed', pid: request.params.pid }, (ids, body) =>
      markBankExecuted(deps, ids.userId, ids.spaceId, ids.pid, body.reference),
    ),
  );
  scope.post(actionPath('chain-tx'), actionOptions(ChainTxForm), (request, reply) =>
    answerAction(deps, request, reply, { name: 'chain-tx', pid: request.params.pid }, (ids, body) =>
      reportChainTx(deps, ids.userId, ids.spaceId, ids.pid, body.tx_hash),
    ),
  );
}

export function registerPayoutPages(server: FastifyInstance, deps: ChainRailDeps) {
  const scope = typedRoutes(server);
  const path = '/app/books/:book_id/payments-out';
  registerList(scope, deps, path);
  registerRulePages(server, deps);
  registerScreeningPage(server, deps);
  registerTransferPages(server, deps);
  scope.get(
    `${path}/:pid`,
    { schema: { hide: true, params: PaymentParams, querystring: DetailQuery } },
    async (request, reply) => {
      const { done } = request.query;
      const page = await renderDetail(deps, request, request.params.pid, {
        done: done ? DONE[done] : undefined,
      });
      return sendPage(reply, page);
    },
  );
  scope.get(
    `${path}/:pid/file`,
    { schema: { hide: true, params: PaymentParams } },
    async (request, reply) => {
      const shell = shellOf(request);
      const file = await bankFile(deps, shell.user.id, shell.book.id, request.params.pid);
      return reply
        .type(file.contentType)
        .header('content-disposition', `attachment; filename="${file.filename}"`)
        .send(file.body);
    },
  );
  registerActions(scope, deps);
}
