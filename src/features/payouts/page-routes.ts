import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../core/errors.ts';
import type { PayoutStatus } from '../../platform/db/schema.ts';
import { type Static, Type } from '../../platform/http/schema-kit.ts';
import { type FormState, hrefWith } from '../../platform/web/components.tsx';
import { runForm, seeOther, sendPage, shellOf } from '../../platform/web/plumbing.ts';
import { bookPath } from '../../platform/web/shell.ts';
import { type ChainRailDeps, reportChainTx } from './chain-rail.ts';
import type { Rail } from './domain.ts';
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

async function renderList(deps: ChainRailDeps, request: FastifyRequest, form?: FormState) {
  const shell = shellOf(request);
  const query = (form ? {} : request.query) as Static<typeof PaymentQuery>;
  const [page, choices] = await Promise.all([
    listPayouts(deps, shell.user.id, shell.book.id, {
      status: query.status as PayoutStatus | undefined,
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
  extra: { refused?: { action: string; form: FormState }; done?: string | undefined } = {},
) {
  const shell = shellOf(request);
  const { pid } = request.params as Static<typeof PaymentParams>;
  const detail = await payoutDetail(deps, shell.user.id, shell.book.id, pid);
  return PaymentDetailPage({ shell, detail, ...extra });
}

function registerList(scope: FastifyInstance, deps: ChainRailDeps, path: string) {
  scope.get(
    path,
    { schema: { hide: true, params: BookParams, querystring: PaymentQuery } },
    async (request, reply) => sendPage(reply, await renderList(deps, request)),
  );
  scope.post(
    path,
    { schema: { hide: true, params: BookParams, body: PaymentCreate }, attachValidation: true },
    async (request, reply) => {
      const shell = shellOf(request);
      const body = request.body as Static<typeof PaymentCreate>;
      const outcome = await runForm(request, () =>
        createPayout(deps, shell.user.id, shell.book.id, {
          ...body,
          rail: body.rail as Rail,
          amount: amountOf(body.amount),
        }),
      );
      if (!outcome.ok) return sendPage(reply, await renderList(deps, request, outcome.form), outcome.status);
      const created = bookPath(shell.book.id, `payments-out/${outcome.value.id}`);
      return seeOther(reply, hrefWith(created, { done: 'created' }));
    },
  );
}

type Action = (
  request: FastifyRequest,
  ids: { userId: string; spaceId: string; pid: string },
) => Promise<unknown>;

/** One action of the detail page: the service call, then back to the detail (or its refusal in place). */
function registerAction(
  scope: FastifyInstance,
  deps: ChainRailDeps,
  name: string,
  body: object | undefined,
  run: Action,
) {
  scope.post(
    `/app/books/:book_id/payments-out/:pid/${name}`,
    { schema: { hide: true, params: PaymentParams, ...(body ? { body } : {}) }, attachValidation: true },
    async (request: FastifyRequest, reply: FastifyReply) => {
      const shell = shellOf(request);
      const { pid } = request.params as Static<typeof PaymentParams>;
      const outcome = await runForm(request, () =>
        run(request, { userId: shell.user.id, spaceId: shell.book.id, pid }),
      );
      if (!outcome.ok) {
        if (outcome.status === 404) throw new AppError('not_found', 'No payment with this id in this book.');
        const page = await renderDetail(deps, request, { refused: { action: name, form: outcome.form } });
        return sendPage(reply, page, outcome.status);
      }
      return seeOther(reply, hrefWith(bookPath(shell.book.id, `payments-out/${pid}`), { done: name }));
    },
  );
}

function registerActions(scope: FastifyInstance, deps: ChainRailDeps) {
  const reasonOf = (request: FastifyRequest) => (request.body as { reason?: string } | undefined)?.reason;
  registerAction(scope, deps, 'approve', undefined, (_request, ids) =>
    approvePayout(deps, ids.userId, ids.spaceId, ids.pid),
  );
  registerAction(scope, deps, 'reject', OptionalReasonIn, (request, ids) =>
    rejectPayout(deps, ids.userId, ids.spaceId, ids.pid, reasonOf(request) ?? ''),
  );
  registerAction(scope, deps, 'release', ReasonIn, (request, ids) =>
    releasePayout(deps, ids.userId, ids.spaceId, ids.pid, reasonOf(request) ?? ''),
  );
  registerAction(scope, deps, 'cancel', undefined, (_request, ids) =>
    cancelPayout(deps, ids.userId, ids.spaceId, ids.pid),
  );
  registerAction(scope, deps, 'executed', ReferenceIn, (request, ids) =>
    markBankExecuted(
      deps,
      ids.userId,
      ids.spaceId,
      ids.pid,
      (request.body as { reference: string }).reference,
    ),
  );
  registerAction(scope, deps, 'chain-tx', ChainTxForm, (request, ids) =>
    reportChainTx(deps, ids.userId, ids.spaceId, ids.pid, (request.body as { tx_hash: string }).tx_hash),
  );
}

export function registerPayoutPages(scope: FastifyInstance, deps: ChainRailDeps) {
  const path = '/app/books/:book_id/payments-out';
  registerList(scope, deps, path);
  registerRulePages(scope, deps);
  registerScreeningPage(scope, deps);
  registerTransferPages(scope, deps);
  scope.get(
    `${path}/:pid`,
    { schema: { hide: true, params: PaymentParams, querystring: DetailQuery } },
    async (request, reply) => {
      const { done } = request.query as Static<typeof DetailQuery>;
      return sendPage(reply, await renderDetail(deps, request, { done: done ? DONE[done] : undefined }));
    },
  );
  scope.get(
    `${path}/:pid/file`,
    { schema: { hide: true, params: PaymentParams } },
    async (request, reply) => {
      const shell = shellOf(request);
      const { pid } = request.params as Static<typeof PaymentParams>;
      const file = await bankFile(deps, shell.user.id, shell.book.id, pid);
      return reply
        .type(file.contentType)
        .header('content-disposition', `attachment; filename="${file.filename}"`)
        .send(file.body);
    },
  );
  registerActions(scope, deps);
}
