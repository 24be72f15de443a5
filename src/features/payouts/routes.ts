import type { FastifyInstance, FastifyRequest } from 'fastify';
import { assert } from '../../core/assert.ts';
import { type AmountE8, parseAmountInput } from '../../core/money.ts';
import { type Static, Type } from '../../platform/http/schema-kit.ts';
import { screeningStatus } from '../screening/index.ts';
import { type ChainRailDeps, chainTransaction, reportChainTx } from './chain-rail.ts';
import type { PolicyKind, Rail } from './domain.ts';
import {
  createApprovalRule,
  createPolicyRule,
  listApprovalRules,
  listPolicyRules,
  removeRule,
} from './rules.ts';
import {
  ApprovalRuleCreate,
  ApprovalRuleOut,
  OptionalReasonIn,
  PaymentCreate,
  PaymentOut,
  PaymentPage,
  PaymentQuery,
  PolicyRuleCreate,
  PolicyRuleOut,
  ReasonIn,
  ReferenceIn,
  RemovedOut,
  ScreeningOut,
  TransferCreate,
  TransferOut,
} from './schemas.ts';
import {
  approvePayout,
  bankFile,
  cancelPayout,
  createPayout,
  getPayout,
  listPayouts,
  markBankExecuted,
  type PayoutsDeps,
  rejectPayout,
  releasePayout,
} from './service.ts';
import { createTransfer } from './transfers.ts';

// The app API of money out (DECISIONS "Money out"): payments, their approval and policy rules,
// transfers between the book's own accounts, and the sanctions list's state.

const SpaceParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
const PaymentParams = Type.Object({
  id: Type.String({ format: 'uuid' }),
  pid: Type.String({ format: 'uuid' }),
});
const RuleParams = Type.Object({
  id: Type.String({ format: 'uuid' }),
  rule_id: Type.String({ format: 'uuid' }),
});

function amountOf(value: number | string): AmountE8 {
  const parsed = parseAmountInput(value);
  assert(parsed.ok, 'The schema lets only valid amounts through.');
  return parsed.value;
}

function optionalAmount(value: number | string | undefined): AmountE8 | undefined {
  return value === undefined ? undefined : amountOf(value);
}

const userOf = (request: FastifyRequest) => request.session!.userId;
const spaceOf = (request: FastifyRequest) => (request.params as Static<typeof SpaceParams>).id;
const paymentOf = (request: FastifyRequest) => request.params as Static<typeof PaymentParams>;

function registerPaymentReads(app: FastifyInstance, deps: PayoutsDeps) {
  app.get(
    '/app/api/spaces/:id/payments',
    {
      schema: {
        tags: ['app'],
        params: SpaceParams,
        querystring: PaymentQuery,
        response: { 200: PaymentPage },
      },
    },
    async (request) => {
      const query = request.query as Static<typeof PaymentQuery>;
      return listPayouts(deps, userOf(request), spaceOf(request), {
        status: query.status,
        starting_after: query.starting_after,
        limit: query.limit === undefined ? undefined : Number(query.limit),
      });
    },
  );
  app.get(
    '/app/api/spaces/:id/payments/:pid/file',
    {
      schema: { tags: ['app'], params: PaymentParams, summary: 'The bank file: pain.001.001.03 XML or CSV' },
    },
    async (request, reply) => {
      const ids = paymentOf(request);
      const file = await bankFile(deps, userOf(request), ids.id, ids.pid);
      return reply
        .type(file.contentType)
        .header('content-disposition', `attachment; filename="${file.filename}"`)
        .send(file.body);
    },
  );
  app.get(
    '/app/api/spaces/:id/payments/:pid',
    { schema: { tags: ['app'], params: PaymentParams, response: { 200: PaymentOut } } },
    async (request) => getPayout(deps, userOf(request), paymentOf(request).id, paymentOf(request).pid),
  );
}

function registerPaymentWrites(app: FastifyInstance, deps: PayoutsDeps) {
  app.post(
    '/app/api/spaces/:id/payments',
    { schema: { tags: ['app'], params: SpaceParams, body: PaymentCreate, response: { 201: PaymentOut } } },
    async (request, reply) => {
      const body = request.body as Static<typeof PaymentCreate>;
      const created = await createPayout(deps, userOf(request), spaceOf(request), {
        ...body,
        rail: body.rail as Rail,
        amount: amountOf(body.amount),
      });
      return reply.code(201).send(created);
    },
  );
  const action = (
    path: string,
    body: typeof ReasonIn | typeof OptionalReasonIn | typeof ReferenceIn | undefined,
    run: (request: FastifyRequest, ids: { id: string; pid: string }) => Promise<unknown>,
  ) =>
    app.post(
      `/app/api/spaces/:id/payments/:pid/${path}`,
      {
        schema: {
          tags: ['app'],
          params: PaymentParams,
          ...(body ? { body } : {}),
          response: { 200: PaymentOut },
        },
      },
      async (request) => run(request, paymentOf(request)),
    );
  action('approve', undefined, (request, ids) => approvePayout(deps, userOf(request), ids.id, ids.pid));
  action('reject', OptionalReasonIn, (request, ids) =>
    rejectPayout(deps, userOf(request), ids.id, ids.pid, (request.body as { reason?: string }).reason ?? ''),
  );
  action('release', ReasonIn, (request, ids) =>
    releasePayout(deps, userOf(request), ids.id, ids.pid, (request.body as { reason: string }).reason),
  );
  action('cancel', undefined, (request, ids) => cancelPayout(deps, userOf(request), ids.id, ids.pid));
  action('executed', ReferenceIn, (request, ids) =>
    markBankExecuted(
      deps,
      userOf(request),
      ids.id,
      ids.pid,
      (request.body as { reference: string }).reference,
    ),
  );
}

function registerRuleRoutes(app: FastifyInstance, deps: PayoutsDeps) {
  app.post(
    '/app/api/spaces/:id/approval-rules',
    {
      schema: {
        tags: ['app'],
        params: SpaceParams,
        body: ApprovalRuleCreate,
        response: { 201: ApprovalRuleOut },
      },
    },
    async (request, reply) => {
      const body = request.body as Static<typeof ApprovalRuleCreate>;
      const rule = await createApprovalRule(deps, userOf(request), spaceOf(request), {
        ...body,
        min_amount: amountOf(body.min_amount),
      });
      return reply.code(201).send(rule);
    },
  );
  app.post(
    '/app/api/spaces/:id/policy-rules',
    {
      schema: {
        tags: ['app'],
        params: SpaceParams,
        body: PolicyRuleCreate,
        response: { 201: PolicyRuleOut },
      },
    },
    async (request, reply) => {
      const body = request.body as Static<typeof PolicyRuleCreate>;
      const rule = await createPolicyRule(deps, userOf(request), spaceOf(request), {
        ...body,
        kind: body.kind as PolicyKind,
        amount: optionalAmount(body.amount),
      });
      return reply.code(201).send(rule);
    },
  );
  for (const [path, table, Out] of [
    ['approval-rules', 'approval_rules', ApprovalRuleOut],
    ['policy-rules', 'policy_rules', PolicyRuleOut],
  ] as const) {
    app.get(
      `/app/api/spaces/:id/${path}`,
      {
        schema: {
          tags: ['app'],
          params: SpaceParams,
          response: { 200: Type.Object({ items: Type.Array(Out) }) },
        },
      },
      async (request) =>
        table === 'approval_rules'
          ? listApprovalRules(deps, userOf(request), spaceOf(request))
          : listPolicyRules(deps, userOf(request), spaceOf(request)),
    );
    app.delete(
      `/app/api/spaces/:id/${path}/:rule_id`,
      { schema: { tags: ['app'], params: RuleParams, response: { 200: RemovedOut } } },
      async (request) => {
        const { id, rule_id } = request.params as Static<typeof RuleParams>;
        return removeRule(deps, userOf(request), id, table, rule_id);
      },
    );
  }
}

const ChainTxIn = Type.Object({ tx_hash: Type.String({ pattern: '^0x[0-9a-fA-F]{64}$' }) });
const UnsignedOut = Type.Object({
  chain_id: Type.Integer(),
  network: Type.String(),
  from: Type.String(),
  to: Type.String(),
  value: Type.String(),
  data: Type.String(),
});

function registerChainRail(app: FastifyInstance, deps: ChainRailDeps) {
  app.get(
    '/app/api/spaces/:id/payments/:pid/transaction',
    { schema: { tags: ['app'], params: PaymentParams, response: { 200: UnsignedOut } } },
    async (request) => chainTransaction(deps, userOf(request), paymentOf(request).id, paymentOf(request).pid),
  );
  app.post(
    '/app/api/spaces/:id/payments/:pid/chain-tx',
    { schema: { tags: ['app'], params: PaymentParams, body: ChainTxIn, response: { 200: PaymentOut } } },
    async (request) => {
      const ids = paymentOf(request);
      await reportChainTx(
        deps,
        userOf(request),
        ids.id,
        ids.pid,
        (request.body as { tx_hash: string }).tx_hash,
      );
      return getPayout(deps, userOf(request), ids.id, ids.pid);
    },
  );
}

export function registerPayoutRoutes(app: FastifyInstance, deps: ChainRailDeps) {
  registerChainRail(app, deps);
  registerPaymentReads(app, deps);
  registerPaymentWrites(app, deps);
  registerRuleRoutes(app, deps);
  app.post(
    '/app/api/spaces/:id/transfers',
    { schema: { tags: ['app'], params: SpaceParams, body: TransferCreate, response: { 201: TransferOut } } },
    async (request, reply) => {
      const body = request.body as Static<typeof TransferCreate>;
      const moved = await createTransfer(deps, userOf(request), spaceOf(request), {
        ...body,
        amount: amountOf(body.amount),
        to_amount: optionalAmount(body.to_amount),
      });
      return reply.code(201).send(moved);
    },
  );
  app.get(
    '/app/api/spaces/:id/screening',
    { schema: { tags: ['app'], params: SpaceParams, response: { 200: ScreeningOut } } },
    async () => screeningStatus(deps.db),
  );
}
