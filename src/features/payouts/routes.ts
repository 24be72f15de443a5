import type { FastifyInstance } from 'fastify';
import { assert } from '../../core/assert.ts';
import { type AmountE8, parseAmountInput } from '../../core/money.ts';
import { APP_READ_ERRORS, APP_WRITE_ERRORS, routeDoc } from '../../platform/http/openapi.ts';
import { type Static, Type } from '../../platform/http/schema-kit.ts';
import { requireCaller, type TypedApp, typedRoutes } from '../../platform/http/typed.ts';
import { type ChainRailDeps, chainTransaction, reportChainTx } from './chain-rail.ts';
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
  screeningFor,
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

const TAGS = ['Money out'];

/** The OpenAPI description of each route below (see platform/http/openapi.ts). */
const docs = {
  listPayments: routeDoc({
    operationId: 'listPayments',
    summary: 'List outgoing payments',
    description:
      'Lists the space’s outgoing payments, newest first, to any member. Filter by status; page with starting_after (the last id of the previous page) and limit (1 to 100, default 50). A starting_after that names no payment of this space is refused.',
    tags: TAGS,
    errors: APP_READ_ERRORS,
  }),
  getPaymentFile: routeDoc({
    operationId: 'getPaymentFile',
    summary: 'Download a bank payment’s file',
    description:
      'Answers the file an owner or admin hands to the bank for a bank payment that is executing or executed: SEPA pain.001.001.03 XML when the contact’s requisites are SEPA, CSV otherwise, as an attachment. Other rails, other states and other roles are refused.',
    tags: TAGS,
    errors: APP_READ_ERRORS,
  }),
  getPayment: routeDoc({
    operationId: 'getPayment',
    summary: 'Read an outgoing payment',
    description:
      'Answers one outgoing payment of the space, with its approvals, the approvals it needs, why it is blocked (if it is) and, once executed, its ledger transaction. Any member may read it.',
    tags: TAGS,
    errors: APP_READ_ERRORS,
  }),
  createPayment: routeDoc({
    operationId: 'createPayment',
    summary: 'Create an outgoing payment',
    description:
      'Makes a payment from one of the space’s accounts; owners, admins and members may. rail chain pays an address on the account’s network, bank pays the contact’s requisites, book records a payment made by hand. The highest approval rule the amount meets sets the approvals it needs (awaiting_approval); with none it is approved at once. A policy rule it breaks or a sanctions-list match blocks it with a stable reason. A date inside a closed period, a currency other than the account’s, or an amount the account cannot carry is refused, and nothing is written.',
    tags: TAGS,
    errors: APP_WRITE_ERRORS,
  }),
  approvePayment: routeDoc({
    operationId: 'approvePayment',
    summary: 'Approve an outgoing payment',
    description:
      'Adds the caller’s approval to a payment awaiting approval. Only owners and admins approve, never the payment’s maker, once each (a second approval is a conflict). The approval that completes the count starts execution: a book payment is executed at once, a bank or chain payment waits for the bank or the wallet; if the account cannot carry it then, it fails.',
    tags: TAGS,
    errors: APP_WRITE_ERRORS,
  }),
  rejectPayment: routeDoc({
    operationId: 'rejectPayment',
    summary: 'Reject an outgoing payment',
    description:
      'An owner or admin rejects a payment awaiting approval or blocked, with an optional reason that is recorded. A payment held by screening is rejected only by an owner. Payments in other states are refused.',
    tags: TAGS,
    errors: APP_WRITE_ERRORS,
  }),
  releasePayment: routeDoc({
    operationId: 'releasePayment',
    summary: 'Release a screening hold',
    description:
      'An owner releases a payment held by screening (blocked with reason screening_hold), giving a reason that is recorded with who released it; the payment then goes on its way as if it had not been held. Any other payment, and any caller who is not an owner, is refused.',
    tags: TAGS,
    errors: APP_WRITE_ERRORS,
  }),
  cancelPayment: routeDoc({
    operationId: 'cancelPayment',
    summary: 'Cancel an outgoing payment',
    description:
      'The payment’s maker, an owner or an admin cancels a payment that has not left: executed, rejected, failed or already cancelled payments, and a chain payment whose transaction was reported, are refused.',
    tags: TAGS,
    errors: APP_WRITE_ERRORS,
  }),
  markPaymentExecuted: routeDoc({
    operationId: 'markPaymentExecuted',
    summary: 'Mark a bank payment executed',
    description:
      'An owner or admin records that the bank carried out an executing bank payment, with the bank’s reference: one ledger entry lowers the account, then money.out and payout.executed are sent. Other rails and states are refused, and so is a payment the account can no longer carry.',
    tags: TAGS,
    errors: APP_WRITE_ERRORS,
  }),
  listApprovalRules: routeDoc({
    operationId: 'listApprovalRules',
    summary: 'List approval rules',
    description:
      'Lists the space’s approval rules to any member: from which amount, in which currency, a payment needs how many approvals.',
    tags: TAGS,
    errors: APP_READ_ERRORS,
  }),
  createApprovalRule: routeDoc({
    operationId: 'createApprovalRule',
    summary: 'Create an approval rule',
    description:
      'An owner or admin requires 1 to 5 approvals for payments of at least min_amount in a currency. When several rules match a payment, the highest applies. Rules apply to payments made after them.',
    tags: TAGS,
    errors: APP_WRITE_ERRORS,
  }),
  deleteApprovalRule: routeDoc({
    operationId: 'deleteApprovalRule',
    summary: 'Remove an approval rule',
    description:
      'An owner or admin removes an approval rule; payments made before keep the approvals they need. A rule of another space, or one already removed, is not found.',
    tags: TAGS,
    errors: APP_WRITE_ERRORS,
  }),
  listPolicyRules: routeDoc({
    operationId: 'listPolicyRules',
    summary: 'List policy rules',
    description:
      'Lists the space’s policy rules (limits, blocked destinations, allowed currencies) to any member.',
    tags: TAGS,
    errors: APP_READ_ERRORS,
  }),
  createPolicyRule: routeDoc({
    operationId: 'createPolicyRule',
    summary: 'Create a policy rule',
    description:
      'An owner or admin adds a rule a payment must keep: max_per_payment or max_per_day (amount, in currency or the space’s base currency), blocked_destination (destination) or allowed_currencies (currencies). A kind without its field is refused. A payment that breaks a rule is blocked with policy_max_per_payment, policy_max_per_day, policy_blocked_destination or policy_currency.',
    tags: TAGS,
    errors: APP_WRITE_ERRORS,
  }),
  deletePolicyRule: routeDoc({
    operationId: 'deletePolicyRule',
    summary: 'Remove a policy rule',
    description:
      'An owner or admin removes a policy rule; it no longer blocks new payments. A rule of another space, or one already removed, is not found.',
    tags: TAGS,
    errors: APP_WRITE_ERRORS,
  }),
  getPaymentTransaction: routeDoc({
    operationId: 'getPaymentTransaction',
    summary: 'Read a chain payment’s unsigned transfer',
    description:
      'Answers the ERC-20 transfer an executing chain payment needs, unsigned (chain id, from, token contract, value and data), for the person’s browser wallet to sign and send from the account’s proven address. A payment in another state, or not on the chain rail, is refused.',
    tags: TAGS,
    errors: APP_READ_ERRORS,
  }),
  reportPaymentChainTx: routeDoc({
    operationId: 'reportPaymentChainTx',
    summary: 'Report a chain payment’s transaction',
    description:
      'Records the hash of the transaction the person sent for an executing chain payment. It must be mined and successful and carry the payment’s exact transfer from the account’s address to the destination; anything else is refused. With the network’s confirmations the payment is executed (one ledger entry, money.out, payout.executed); with fewer it stays executing until reported again or seen by the watch. Reporting the same hash again is safe; another hash is a conflict.',
    tags: TAGS,
    errors: APP_WRITE_ERRORS,
  }),
  createTransfer: routeDoc({
    operationId: 'createTransfer',
    summary: 'Move money between own accounts',
    description:
      'An owner or admin moves an amount from one of the space’s accounts to another: one ledger entry of kind transfer, with money.out and money.in of origin internal. Across currencies give to_amount, what arrives; in one currency to_amount, if given, equals amount. The same account twice, a date inside a closed period, or more than the source holds is refused.',
    tags: TAGS,
    errors: APP_WRITE_ERRORS,
  }),
  getScreeningStatus: routeDoc({
    operationId: 'getScreeningStatus',
    summary: 'Read the sanctions list’s state',
    description:
      'Answers whether the operator has loaded a sanctions list (tollbook screening load), when it was published and loaded, from where, and how many entries it holds. Payments are screened against it before they leave.',
    tags: TAGS,
    errors: APP_READ_ERRORS,
  }),
};

function amountOf(value: number | string): AmountE8 {
  const parsed = parseAmountInput(value);
  assert(parsed.ok, 'The schema lets only valid amounts through.');
  return parsed.value;
}

function optionalAmount(value: number | string | undefined): AmountE8 | undefined {
  return value === undefined ? undefined : amountOf(value);
}

function registerPaymentReads(app: TypedApp, deps: PayoutsDeps) {
  app.get(
    '/app/api/spaces/:id/payments',
    {
      schema: {
        ...docs.listPayments,
        params: SpaceParams,
        querystring: PaymentQuery,
        response: { 200: PaymentPage },
      },
    },
    async (request) => {
      const { status, starting_after, limit } = request.query;
      return listPayouts(deps, requireCaller(request).userId, request.params.id, {
        status,
        starting_after,
        limit: limit === undefined ? undefined : Number(limit),
      });
    },
  );
  app.get(
    '/app/api/spaces/:id/payments/:pid/file',
    {
      schema: { ...docs.getPaymentFile, params: PaymentParams },
    },
    async (request, reply) => {
      const { id, pid } = request.params;
      const file = await bankFile(deps, requireCaller(request).userId, id, pid);
      return reply
        .type(file.contentType)
        .header('content-disposition', `attachment; filename="${file.filename}"`)
        .send(file.body);
    },
  );
  app.get(
    '/app/api/spaces/:id/payments/:pid',
    { schema: { ...docs.getPayment, params: PaymentParams, response: { 200: PaymentOut } } },
    async (request) => getPayout(deps, requireCaller(request).userId, request.params.id, request.params.pid),
  );
}

type PaymentIds = Static<typeof PaymentParams>;
type PaymentView = Static<typeof PaymentOut>;

/** A state change that takes no body. */
function bareAction(
  app: TypedApp,
  path: string,
  doc: ReturnType<typeof routeDoc>,
  run: (userId: string, ids: PaymentIds) => Promise<PaymentView>,
) {
  app.post(
    `/app/api/spaces/:id/payments/:pid/${path}`,
    { schema: { ...doc, params: PaymentParams, response: { 200: PaymentOut } } },
    async (request) => run(requireCaller(request).userId, request.params),
  );
}

function registerPaymentWrites(app: TypedApp, deps: PayoutsDeps) {
  app.post(
    '/app/api/spaces/:id/payments',
    {
      schema: {
        ...docs.createPayment,
        params: SpaceParams,
        body: PaymentCreate,
        response: { 201: PaymentOut },
      },
    },
    async (request, reply) => {
      const created = await createPayout(deps, requireCaller(request).userId, request.params.id, {
        ...request.body,
        amount: amountOf(request.body.amount),
      });
      return reply.code(201).send(created);
    },
  );
  bareAction(app, 'approve', docs.approvePayment, (userId, ids) =>
    approvePayout(deps, userId, ids.id, ids.pid),
  );
  app.post(
    '/app/api/spaces/:id/payments/:pid/reject',
    {
      schema: {
        ...docs.rejectPayment,
        params: PaymentParams,
        body: OptionalReasonIn,
        response: { 200: PaymentOut },
      },
    },
    async (request) => {
      const { id, pid } = request.params;
      return rejectPayout(deps, requireCaller(request).userId, id, pid, request.body.reason ?? '');
    },
  );
  app.post(
    '/app/api/spaces/:id/payments/:pid/release',
    {
      schema: {
        ...docs.releasePayment,
        params: PaymentParams,
        body: ReasonIn,
        response: { 200: PaymentOut },
      },
    },
    async (request) => {
      const { id, pid } = request.params;
      return releasePayout(deps, requireCaller(request).userId, id, pid, request.body.reason);
    },
  );
  bareAction(app, 'cancel', docs.cancelPayment, (userId, ids) => cancelPayout(deps, userId, ids.id, ids.pid));
  app.post(
    '/app/api/spaces/:id/payments/:pid/executed',
    {
      schema: {
        ...docs.markPaymentExecuted,
        params: PaymentParams,
        body: ReferenceIn,
        response: { 200: PaymentOut },
      },
    },
    async (request) => {
      const { id, pid } = request.params;
      return markBankExecuted(deps, requireCaller(request).userId, id, pid, request.body.reference);
    },
  );
}

function registerRuleRoutes(app: TypedApp, deps: PayoutsDeps) {
  app.post(
    '/app/api/spaces/:id/approval-rules',
    {
      schema: {
        ...docs.createApprovalRule,
        params: SpaceParams,
        body: ApprovalRuleCreate,
        response: { 201: ApprovalRuleOut },
      },
    },
    async (request, reply) => {
      const rule = await createApprovalRule(deps, requireCaller(request).userId, request.params.id, {
        ...request.body,
        min_amount: amountOf(request.body.min_amount),
      });
      return reply.code(201).send(rule);
    },
  );
  app.post(
    '/app/api/spaces/:id/policy-rules',
    {
      schema: {
        ...docs.createPolicyRule,
        params: SpaceParams,
        body: PolicyRuleCreate,
        response: { 201: PolicyRuleOut },
      },
    },
    async (request, reply) => {
      const rule = await createPolicyRule(deps, requireCaller(request).userId, request.params.id, {
        ...request.body,
        amount: optionalAmount(request.body.amount),
      });
      return reply.code(201).send(rule);
    },
  );
  app.get(
    '/app/api/spaces/:id/approval-rules',
    {
      schema: {
        ...docs.listApprovalRules,
        params: SpaceParams,
        response: { 200: Type.Object({ items: Type.Array(ApprovalRuleOut) }) },
      },
    },
    async (request) => listApprovalRules(deps, requireCaller(request).userId, request.params.id),
  );
  app.get(
    '/app/api/spaces/:id/policy-rules',
    {
      schema: {
        ...docs.listPolicyRules,
        params: SpaceParams,
        response: { 200: Type.Object({ items: Type.Array(PolicyRuleOut) }) },
      },
    },
    async (request) => listPolicyRules(deps, requireCaller(request).userId, request.params.id),
  );
  for (const [path, table, deleteDoc] of [
    ['approval-rules', 'approval_rules', docs.deleteApprovalRule],
    ['policy-rules', 'policy_rules', docs.deletePolicyRule],
  ] as const) {
    app.delete(
      `/app/api/spaces/:id/${path}/:rule_id`,
      { schema: { ...deleteDoc, params: RuleParams, response: { 200: RemovedOut } } },
      async (request) => {
        const { id, rule_id } = request.params;
        return removeRule(deps, requireCaller(request).userId, id, table, rule_id);
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

function registerChainRail(app: TypedApp, deps: ChainRailDeps) {
  app.get(
    '/app/api/spaces/:id/payments/:pid/transaction',
    { schema: { ...docs.getPaymentTransaction, params: PaymentParams, response: { 200: UnsignedOut } } },
    async (request) =>
      chainTransaction(deps, requireCaller(request).userId, request.params.id, request.params.pid),
  );
  app.post(
    '/app/api/spaces/:id/payments/:pid/chain-tx',
    {
      schema: {
        ...docs.reportPaymentChainTx,
        params: PaymentParams,
        body: ChainTxIn,
        response: { 200: PaymentOut },
      },
    },
    async (request) => {
      const { userId } = requireCaller(request);
      const { id, pid } = request.params;
      await reportChainTx(deps, userId, id, pid, request.body.tx_hash);
      return getPayout(deps, userId, id, pid);
    },
  );
}

export function registerPayoutRoutes(server: FastifyInstance, deps: ChainRailDeps) {
  const app = typedRoutes(server);
  registerChainRail(app, deps);
  registerPaymentReads(app, deps);
  registerPaymentWrites(app, deps);
  registerRuleRoutes(app, deps);
  app.post(
    '/app/api/spaces/:id/transfers',
    {
      schema: {
        ...docs.createTransfer,
        params: SpaceParams,
        body: TransferCreate,
        response: { 201: TransferOut },
      },
    },
    async (request, reply) => {
      const moved = await createTransfer(deps, requireCaller(request).userId, request.params.id, {
        ...request.body,
        amount: amountOf(request.body.amount),
        to_amount: optionalAmount(request.body.to_amount),
      });
      return reply.code(201).send(moved);
    },
  );
  app.get(
    '/app/api/spaces/:id/screening',
    { schema: { ...docs.getScreeningStatus, params: SpaceParams, response: { 200: ScreeningOut } } },
    async (request) => screeningFor(deps, requireCaller(request).userId, request.params.id),
  );
}
