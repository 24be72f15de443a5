import { randomUUID } from 'node:crypto';
import { AppError } from '../../core/errors.ts';
import { type AmountE8, formatAmount } from '../../core/money.ts';
import { hasInvisible } from '../screening/index.ts';
import { baseCurrencyOf, requireAdministrator, requireRole } from '../spaces/index.ts';
import type { PolicyKind } from './domain.ts';
import type { PayoutsDeps } from './service.ts';
import * as store from './store.ts';

// Approval and policy rules: set by owners and admins, read by every member. A rule is never
// edited: a payment that met a rule keeps what it met, and removing a rule only marks it.

export async function createApprovalRule(
  deps: PayoutsDeps,
  userId: string,
  spaceId: string,
  input: { min_amount: AmountE8; currency: string; required_approvals: number },
) {
  await requireAdministrator(deps.db, spaceId, userId);
  const row = {
    id: randomUUID(),
    space_id: spaceId,
    min_amount: formatAmount(input.min_amount),
    currency: input.currency.toUpperCase(),
    required_approvals: input.required_approvals,
    created_by: userId,
    created_at: deps.clock.now(),
  };
  await store.insertApprovalRule(deps.db, row);
  return presentApprovalRule(row);
}

function presentApprovalRule(row: {
  id: string;
  min_amount: string;
  currency: string;
  required_approvals: number;
  created_at: Date;
}) {
  return {
    id: row.id,
    min_amount: formatAmount(store.amountOf({ amount: row.min_amount })),
    currency: row.currency,
    required_approvals: row.required_approvals,
    created_at: row.created_at.toISOString(),
  };
}

export async function listApprovalRules(deps: PayoutsDeps, userId: string, spaceId: string) {
  await requireRole(deps.db, spaceId, userId);
  return { items: (await store.activeApprovalRules(deps.db, spaceId)).map(presentApprovalRule) };
}

export async function removeRule(
  deps: PayoutsDeps,
  userId: string,
  spaceId: string,
  table: 'approval_rules' | 'policy_rules',
  ruleId: string,
) {
  await requireAdministrator(deps.db, spaceId, userId);
  if (!(await store.removeRule(deps.db, table, spaceId, ruleId, deps.clock.now()))) {
    throw new AppError('not_found', 'No such rule in this space.');
  }
  return { id: ruleId, removed: true };
}

export type PolicyRuleInput = {
  kind: PolicyKind;
  amount?: AmountE8 | undefined;
  currency?: string | undefined;
  destination?: string | undefined;
  currencies?: string[] | undefined;
};

function need<T>(value: T | undefined, field: string, kind: string): T {
  if (value === undefined || (typeof value === 'string' && value.trim() === '')) {
    throw new AppError('invalid_request', `A ${kind} rule needs ${field}.`, { field });
  }
  return value;
}

/** The columns of a rule of each kind; a field the kind does not use is ignored. */
function policyColumns(input: PolicyRuleInput, baseCurrency: string) {
  const none = { amount: null, currency: null, destination: null, currencies: null };
  if (input.kind === 'max_per_payment' || input.kind === 'max_per_day') {
    return {
      ...none,
      amount: formatAmount(need(input.amount, 'amount', input.kind)),
      currency: (input.currency ?? baseCurrency).toUpperCase(),
    };
  }
  if (input.kind === 'blocked_destination') {
    const destination = need(input.destination, 'destination', input.kind);
    if (hasInvisible(destination)) {
      throw new AppError('invalid_request', 'destination holds an invisible character; write it without.', {
        field: 'destination',
      });
    }
    return { ...none, destination: destination.trim() };
  }
  const currencies = need(input.currencies, 'currencies', input.kind);
  if (currencies.length === 0) {
    throw new AppError('invalid_request', 'An allowed_currencies rule names at least one currency.', {
      field: 'currencies',
    });
  }
  return { ...none, currencies: [...new Set(currencies.map((code) => code.toUpperCase()))] };
}

export async function createPolicyRule(
  deps: PayoutsDeps,
  userId: string,
  spaceId: string,
  input: PolicyRuleInput,
) {
  await requireAdministrator(deps.db, spaceId, userId);
  const row = {
    id: randomUUID(),
    space_id: spaceId,
    kind: input.kind,
    ...policyColumns(input, await baseCurrencyOf(deps.db, spaceId)),
    created_by: userId,
    created_at: deps.clock.now(),
  };
  await store.insertPolicyRule(deps.db, row);
  return presentPolicyRule(row);
}

function presentPolicyRule(row: {
  id: string;
  kind: PolicyKind;
  amount: string | null;
  currency: string | null;
  destination: string | null;
  currencies: string[] | null;
  created_at: Date;
}) {
  return {
    id: row.id,
    kind: row.kind,
    amount: row.amount === null ? null : formatAmount(store.amountOf({ amount: row.amount })),
    currency: row.currency,
    destination: row.destination,
    currencies: row.currencies,
    created_at: row.created_at.toISOString(),
  };
}

export async function listPolicyRules(deps: PayoutsDeps, userId: string, spaceId: string) {
  await requireRole(deps.db, spaceId, userId);
  return { items: (await store.activePolicyRules(deps.db, spaceId)).map(presentPolicyRule) };
}
