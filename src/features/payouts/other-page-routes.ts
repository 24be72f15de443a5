import type { FastifyInstance, FastifyRequest } from 'fastify';
import { assert } from '../../core/assert.ts';
import { AppError } from '../../core/errors.ts';
import { type AmountE8, parseAmountInput } from '../../core/money.ts';
import { Type } from '../../platform/http/schema-kit.ts';
import { typedRoutes } from '../../platform/http/typed.ts';
import { type FormState, hrefWith } from '../../platform/web/components.tsx';
import { formRoute, runForm } from '../../platform/web/forms.ts';
import { seeOther, sendPage, shellOf } from '../../platform/web/plumbing.ts';
import { bookPath } from '../../platform/web/shell.ts';
import { RulesPage, type RulesPageProps, ScreeningPage, TransfersPage } from './pages.tsx';
import {
  createApprovalRule,
  createPolicyRule,
  listApprovalRules,
  listPolicyRules,
  removeRule,
} from './rules.ts';
import { ApprovalRuleCreate, PolicyRuleCreate, TransferCreate } from './schemas.ts';
import { heldPayouts, payoutChoices } from './screens.ts';
import type { PayoutsDeps } from './service.ts';
import { createTransfer } from './transfers.ts';

// Page routes of the Payments out sub-screens: approval and policy rules, the screening queue,
// and transfers between the book's own accounts. Same service calls as the app API.

export const BookParams = Type.Object({ book_id: Type.String({ maxLength: 64 }) });

export function amountOf(value: number | string): AmountE8 {
  const parsed = parseAmountInput(value);
  assert(parsed.ok, 'The schema lets only valid amounts through.');
  return parsed.value;
}

const RuleParams = Type.Object({
  book_id: Type.String({ maxLength: 64 }),
  kind: Type.Union([Type.Literal('approval'), Type.Literal('policy')]),
  rule_id: Type.String({ format: 'uuid' }),
});

// The form writes allowed currencies as one comma-separated field; the rest is the API's body.
const { currencies: _listed, ...policyFields } = PolicyRuleCreate.properties;
const PolicyRuleForm = Type.Object({
  ...policyFields,
  currencies: Type.Optional(
    Type.String({
      maxLength: 700,
      description: 'Currency codes separated by commas.',
    }),
  ),
});

const TransferQuery = Type.Object({ entry: Type.Optional(Type.String({ format: 'uuid' })) });

async function renderRules(
  deps: PayoutsDeps,
  request: FastifyRequest,
  extra: Omit<RulesPageProps, 'shell' | 'approvalRules' | 'policyRules'> = {},
) {
  const shell = shellOf(request);
  const [approval, policy] = await Promise.all([
    listApprovalRules(deps, shell.user.id, shell.book.id),
    listPolicyRules(deps, shell.user.id, shell.book.id),
  ]);
  return RulesPage({ shell, approvalRules: approval.items, policyRules: policy.items, ...extra });
}

const CURRENCY_CODE = /^[A-Za-z0-9]{2,12}$/;
const CURRENCIES_MAX = 50;

/** The comma-separated field as the API's list, each code checked as the API's schema does. */
function currencyList(text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined;
  const codes = text
    .split(',')
    .map((code) => code.trim())
    .filter((code) => code !== '');
  const wrong = codes.find((code) => !CURRENCY_CODE.test(code));
  if (wrong !== undefined || codes.length > CURRENCIES_MAX) {
    const detail =
      wrong === undefined
        ? `At most ${CURRENCIES_MAX} currencies.`
        : `“${wrong}” is not a currency code (2 to 12 letters or digits).`;
    throw new AppError('invalid_request', detail, { field: 'currencies' });
  }
  return codes;
}

export function registerRulePages(server: FastifyInstance, deps: PayoutsDeps) {
  const scope = typedRoutes(server);
  const path = '/app/books/:book_id/payments-out/rules';
  const back = (bookId: string) => bookPath(bookId, 'payments-out/rules');
  scope.get(path, { schema: { hide: true, params: BookParams } }, async (request, reply) =>
    sendPage(reply, await renderRules(deps, request)),
  );
  scope.post(
    `${path}/approval`,
    formRoute(
      { params: BookParams, body: ApprovalRuleCreate },
      { form: { integers: ['required_approvals'] } },
    ),
    async (request, reply) => {
      const shell = shellOf(request);
      const outcome = await runForm(request, ({ body }) =>
        createApprovalRule(deps, shell.user.id, shell.book.id, {
          ...body,
          min_amount: amountOf(body.min_amount),
        }),
      );
      if (outcome.ok) return seeOther(reply, back(shell.book.id));
      return sendPage(
        reply,
        await renderRules(deps, request, { approvalForm: outcome.form }),
        outcome.status,
      );
    },
  );
  scope.post(
    `${path}/policy`,
    formRoute({ params: BookParams, body: PolicyRuleForm }),
    async (request, reply) => {
      const shell = shellOf(request);
      const outcome = await runForm(request, async ({ body }) => {
        return createPolicyRule(deps, shell.user.id, shell.book.id, {
          ...body,
          amount: body.amount === undefined ? undefined : amountOf(body.amount),
          currencies: currencyList(body.currencies),
        });
      });
      if (outcome.ok) return seeOther(reply, back(shell.book.id));
      return sendPage(reply, await renderRules(deps, request, { policyForm: outcome.form }), outcome.status);
    },
  );
  scope.post(
    `${path}/:kind/:rule_id/remove`,
    { schema: { hide: true, params: RuleParams } },
    async (request, reply) => {
      const shell = shellOf(request);
      const outcome = await runForm(request, () => {
        const { kind, rule_id } = request.params;
        const table = kind === 'approval' ? 'approval_rules' : 'policy_rules';
        return removeRule(deps, shell.user.id, shell.book.id, table, rule_id);
      });
      if (outcome.ok) return seeOther(reply, back(shell.book.id));
      if (outcome.status === 404) throw new AppError('not_found', 'No such rule in this book.');
      return sendPage(
        reply,
        await renderRules(deps, request, { refused: outcome.form.sentence }),
        outcome.status,
      );
    },
  );
}

export function registerScreeningPage(scope: FastifyInstance, deps: PayoutsDeps) {
  scope.get(
    '/app/books/:book_id/payments-out/screening',
    { schema: { hide: true, params: BookParams } },
    async (request, reply) => {
      const shell = shellOf(request);
      const { status, held, inbound } = await heldPayouts(deps, shell.user.id, shell.book.id);
      return sendPage(reply, ScreeningPage({ shell, status, held, inbound }));
    },
  );
}

async function renderTransfers(
  deps: PayoutsDeps,
  request: FastifyRequest,
  form?: FormState,
  doneEntry?: string,
) {
  const shell = shellOf(request);
  const choices = await payoutChoices(deps, shell.user.id, shell.book.id);
  return TransfersPage({ shell, choices, form, doneEntry });
}

export function registerTransferPages(server: FastifyInstance, deps: PayoutsDeps) {
  const scope = typedRoutes(server);
  const path = '/app/books/:book_id/payments-out/transfers';
  scope.get(
    path,
    { schema: { hide: true, params: BookParams, querystring: TransferQuery } },
    async (request, reply) => {
      return sendPage(reply, await renderTransfers(deps, request, undefined, request.query.entry));
    },
  );
  scope.post(path, formRoute({ params: BookParams, body: TransferCreate }), async (request, reply) => {
    const shell = shellOf(request);
    const outcome = await runForm(request, ({ body }) => {
      return createTransfer(deps, shell.user.id, shell.book.id, {
        ...body,
        amount: amountOf(body.amount),
        to_amount: body.to_amount === undefined ? undefined : amountOf(body.to_amount),
      });
    });
    if (!outcome.ok)
      return sendPage(reply, await renderTransfers(deps, request, outcome.form), outcome.status);
    const done = hrefWith(bookPath(shell.book.id, 'payments-out/transfers'), {
      entry: outcome.value.transaction_id,
    });
    return seeOther(reply, done);
  });
}
