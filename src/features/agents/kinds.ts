import { AppError } from '../../core/errors.ts';
import { formatAmount, ZERO } from '../../core/money.ts';
import { moneyIn, moneyOut } from '../../platform/outbox/events.ts';
import { enqueueEvents } from '../../platform/outbox/outbox.ts';
import { type AccountRow, requireAccount } from '../accounts/index.ts';
import { decrease, increase, ledgerAccounts, postEntry } from '../ledger/index.ts';
import { createPayoutIn } from '../payouts/index.ts';
import { closedThrough } from '../spaces/index.ts';
import { type CardIntentInput, cardIntentWrite, matchCardIntent } from './card-intents.ts';
import { bookkeepingFence, isUsdLike, spendingFence } from './domain.ts';
import * as store from './store.ts';
import { amountOf, type WriteCtx, type WriteKind } from './writes.ts';

// The kinds of agent writes of the books: payments out, book rows, corrections of book rows,
// chain payments for a person to sign, and grant changes. Each says how its input is checked,
// what the fence says about it and how it applies.

export type PaymentInput = {
  account_id: string;
  amount: number | string;
  payee: string;
  occurred_on: string;
  category_id?: string | null;
  currency?: string | null;
  note?: string;
};

export type TxInput = {
  account_id: string;
  kind: 'income' | 'expense' | 'transfer';
  amount: number | string;
  occurred_on: string;
  category_id?: string | null;
  note?: string;
  payee?: string;
};

export type TxPatchInput = {
  id: string;
  category_id?: string | null;
  clear_category?: boolean;
  note?: string | null;
  payee?: string | null;
};

export type ChainPaymentInput = {
  account_id: string;
  amount: number | string;
  chain: string;
  destination: string;
  currency: string;
  occurred_on: string;
  payee: string;
  note?: string;
};

/** An account the agent may use: of its space, and listed when the agent is restricted. */
async function agentAccount(ctx: WriteCtx, accountId: string): Promise<AccountRow> {
  if (ctx.accountIds !== null && !ctx.accountIds.includes(accountId)) {
    throw new AppError('account_not_found', 'This agent may not use this account.', {
      account_id: accountId,
    });
  }
  return requireAccount(ctx.tx, ctx.agent.space_id, accountId);
}

async function checkCategory(ctx: WriteCtx, categoryId: string | null | undefined, kind: string) {
  if (categoryId === null || categoryId === undefined) return;
  const category = await store.findCategory(ctx.tx, ctx.agent.space_id, categoryId);
  if (!category)
    throw new AppError('invalid_request', 'No such category in this space.', { field: 'category_id' });
  if (category.kind !== kind) {
    throw new AppError('invalid_request', `This category is for ${category.kind} rows, not ${kind}.`, {
      field: 'category_id',
    });
  }
}

async function checkOpenPeriod(ctx: WriteCtx, occurredOn: string) {
  const closed = await closedThrough(ctx.tx, ctx.agent.space_id);
  if (closed !== null && occurredOn <= closed) {
    throw new AppError('period_closed', `The books are closed through ${closed}; date the row later.`, {
      field: 'occurred_on',
      closed_through: closed,
    });
  }
}

/** Files the category of a payment's booked row, so the row can later be corrected like any other. */
async function noteBookRow(
  ctx: WriteCtx,
  row: {
    entryId: string;
    accountId: string;
    kind: 'income' | 'expense';
    categoryId: string | null;
    note: string;
    payee: string;
  },
) {
  await store.insertBookRow(ctx.tx, {
    space_id: ctx.agent.space_id,
    entry_id: row.entryId,
    agent_id: ctx.agent.id,
    account_id: row.accountId,
    kind: row.kind,
    category_id: row.categoryId,
    note: row.note,
    payee: row.payee,
    created_at: ctx.now,
    updated_at: ctx.now,
  });
}

export const paymentWrite: WriteKind<PaymentInput> = {
  kind: 'payment',
  async check(ctx, input) {
    const account = await agentAccount(ctx, input.account_id);
    const currency = input.currency ?? account.currency;
    if (currency.toUpperCase() !== account.currency.toUpperCase()) {
      throw new AppError(
        'currency_mismatch',
        `The account holds ${account.currency}; pay in ${account.currency}.`,
        {
          field: 'currency',
        },
      );
    }
    await checkCategory(ctx, input.category_id, 'expense');
    await checkOpenPeriod(ctx, input.occurred_on);
  },
  async complete(ctx, input) {
    return { ...input, currency: (await agentAccount(ctx, input.account_id)).currency };
  },
  async fence(ctx, input, fence, spentToday) {
    const account = await agentAccount(ctx, input.account_id);
    return spendingFence(fence, ctx.now, {
      amount: amountOf(input.amount),
      currency: account.currency,
      merchant: input.payee,
      spentToday,
    });
  },
  async apply(ctx, input, actorId) {
    const account = await agentAccount(ctx, input.account_id);
    const amount = amountOf(input.amount);
    const payment = await createPayoutIn(ctx.tx, ctx.deps, actorId, ctx.agent.space_id, {
      account_id: account.id,
      amount,
      currency: account.currency,
      payee: input.payee,
      rail: 'book',
      note: input.note ?? '',
      occurred_on: input.occurred_on,
    });
    if (payment.transaction_id !== null) {
      await matchCardIntent(ctx, {
        spaceId: ctx.agent.space_id,
        entryId: payment.transaction_id,
        payee: input.payee,
        amount,
        currency: account.currency,
      });
      await noteBookRow(ctx, {
        entryId: payment.transaction_id,
        accountId: account.id,
        kind: 'expense',
        categoryId: input.category_id ?? null,
        note: input.note ?? '',
        payee: input.payee,
      });
    }
    return { result: payment, spentUsd: isUsdLike(account.currency) ? amount : ZERO };
  },
};

export const chainPaymentWrite: WriteKind<ChainPaymentInput> = {
  kind: 'chain_payment',
  async check(ctx, input) {
    const account = await agentAccount(ctx, input.account_id);
    if (account.kind !== 'crypto' || account.network === null) {
      throw new AppError('invalid_request', 'A chain payment leaves a crypto account with a network.', {
        field: 'account_id',
      });
    }
    const named = input.chain.toLowerCase();
    if (named !== account.network.toLowerCase() && named !== (account.chain ?? '').toLowerCase()) {
      throw new AppError('invalid_request', `The account is on ${account.network}, not ${input.chain}.`, {
        field: 'chain',
      });
    }
    if (input.currency.toUpperCase() !== account.currency.toUpperCase()) {
      throw new AppError('currency_mismatch', `The account holds ${account.currency}.`, {
        field: 'currency',
      });
    }
    await checkOpenPeriod(ctx, input.occurred_on);
  },
  fence(ctx, input, fence, spentToday) {
    return spendingFence(fence, ctx.now, {
      amount: amountOf(input.amount),
      currency: input.currency,
      merchant: input.payee,
      spentToday,
    });
  },
  async apply(ctx, input, actorId) {
    const amount = amountOf(input.amount);
    // A chain payment is signed by a person: it waits in `executing` for the signed transfer.
    const payment = await createPayoutIn(ctx.tx, ctx.deps, actorId, ctx.agent.space_id, {
      account_id: input.account_id,
      amount,
      currency: input.currency,
      payee: input.payee,
      rail: 'chain',
      destination: input.destination,
      note: input.note ?? '',
      occurred_on: input.occurred_on,
    });
    return { result: payment, spentUsd: isUsdLike(input.currency) ? amount : ZERO };
  },
};

async function postBookRow(ctx: WriteCtx, account: AccountRow, input: TxInput, writeId: string) {
  const amount = amountOf(input.amount);
  const where = { spaceId: ctx.agent.space_id, currency: account.currency, at: ctx.now };
  const asset = await ledgerAccounts.asset(ctx.tx, { ...where, accountId: account.id });
  const ref = `agent:${input.category_id ?? 'uncategorised'}`;
  const other =
    input.kind === 'income'
      ? await ledgerAccounts.otherIncome(ctx.tx, { ...where, ref })
      : await ledgerAccounts.expense(ctx.tx, { ...where, ref });
  const postings =
    input.kind === 'income'
      ? [increase(asset, amount), increase(other, amount)]
      : [decrease(asset, amount), increase(other, amount)];
  const posted = await postEntry(
    ctx.tx,
    {
      spaceId: ctx.agent.space_id,
      origin: 'manual',
      kind: input.kind === 'income' ? 'income' : 'expense',
      occurredOn: input.occurred_on,
      causeType: 'agent_write',
      causeId: writeId,
      counterparty: input.payee ?? '',
      memo: input.note ?? '',
      postings,
    },
    ctx.now,
  );
  if (!posted.ok) throw new AppError('insufficient_balance', 'The account cannot carry this row.');
  return posted.entryId;
}

export const transactionWrite: WriteKind<TxInput> = {
  kind: 'transaction',
  async check(ctx, input) {
    if (input.kind === 'transfer') {
      throw new AppError(
        'invalid_request',
        'A transfer moves between two accounts; a person makes it in the app.',
        {
          field: 'kind',
        },
      );
    }
    await agentAccount(ctx, input.account_id);
    await checkCategory(ctx, input.category_id, input.kind);
    await checkOpenPeriod(ctx, input.occurred_on);
  },
  fence: (ctx, _input, fence) => bookkeepingFence(fence, ctx.now),
  async apply(ctx, input, _actorId, writeId) {
    const account = await agentAccount(ctx, input.account_id);
    const kind = input.kind as 'income' | 'expense';
    const entryId = await postBookRow(ctx, account, input, writeId);
    const row = {
      entryId,
      accountId: account.id,
      kind,
      categoryId: input.category_id ?? null,
      note: input.note ?? '',
      payee: input.payee ?? '',
    };
    await noteBookRow(ctx, row);
    if (kind === 'expense') {
      await matchCardIntent(ctx, {
        spaceId: ctx.agent.space_id,
        entryId,
        payee: input.payee ?? '',
        amount: amountOf(input.amount),
        currency: account.currency,
      });
    }
    const scope = { spaceId: ctx.agent.space_id, at: ctx.now };
    const move = {
      transaction_id: entryId,
      account_id: account.id,
      amount: amountOf(input.amount),
      currency: account.currency,
      kind,
      origin: 'manual' as const,
      occurred_on: input.occurred_on,
    };
    await enqueueEvents(ctx.tx, [kind === 'income' ? moneyIn(scope, move) : moneyOut(scope, move)]);
    return { result: presentRow(row, input.amount, account.currency, input.occurred_on), spentUsd: ZERO };
  },
};

function presentRow(
  row: {
    entryId: string;
    accountId: string;
    kind: string;
    categoryId: string | null;
    note: string;
    payee: string;
  },
  amount?: number | string,
  currency?: string,
  occurredOn?: string,
) {
  return {
    id: row.entryId,
    account_id: row.accountId,
    kind: row.kind,
    category_id: row.categoryId,
    note: row.note,
    payee: row.payee,
    origin: 'manual',
    ...(amount === undefined ? {} : { amount: formatAmount(amountOf(amount)) }),
    ...(currency === undefined ? {} : { currency }),
    ...(occurredOn === undefined ? {} : { occurred_on: occurredOn }),
  };
}

async function bookRowOf(ctx: WriteCtx, entryId: string) {
  const row = await store.lockBookRow(ctx.tx, ctx.agent.space_id, entryId);
  if (!row || (ctx.accountIds !== null && !ctx.accountIds.includes(row.account_id))) {
    throw new AppError('not_found', 'No book row with this id that an agent filed in this space.');
  }
  return row;
}

export const transactionPatchWrite: WriteKind<TxPatchInput> = {
  kind: 'transaction_patch',
  async check(ctx, input) {
    const row = await bookRowOf(ctx, input.id);
    if (input.clear_category !== true) await checkCategory(ctx, input.category_id, row.kind);
  },
  fence: (ctx, _input, fence) => bookkeepingFence(fence, ctx.now),
  async apply(ctx, input) {
    const row = await bookRowOf(ctx, input.id);
    const categoryId = input.clear_category === true ? null : (input.category_id ?? row.category_id);
    const changes = {
      category_id: categoryId,
      note: input.note ?? row.note,
      payee: input.payee ?? row.payee,
    };
    await store.updateBookRow(ctx.tx, row.entry_id, { ...changes, updated_at: ctx.now });
    const patched = {
      entryId: row.entry_id,
      accountId: row.account_id,
      kind: row.kind,
      categoryId: changes.category_id,
      note: changes.note,
      payee: changes.payee,
    };
    return { result: presentRow(patched), spentUsd: ZERO };
  },
};

export type GrantChangeInput = {
  allowed_merchants?: string[] | null;
  x402_hosts?: string[] | null;
  daily_amount_cap_usd?: number | string | null;
  expires_at?: string | null;
  reason?: string;
};

/** What a grant change asks for, beside its reason: at least one field of the fence. */
function asksForSomething(input: GrantChangeInput): boolean {
  return (
    (input.allowed_merchants ?? null) !== null ||
    (input.x402_hosts ?? null) !== null ||
    (input.daily_amount_cap_usd ?? null) !== null ||
    (input.expires_at ?? null) !== null
  );
}

/** An agent asks for a different fence: always a proposal; applied, it replaces the named fields. */
export const grantChangeWrite: WriteKind<GrantChangeInput> = {
  kind: 'grant_change',
  async check(_ctx, input) {
    if (!asksForSomething(input)) {
      throw new AppError('invalid_request', 'Name at least one fence field to change.', { field: 'body' });
    }
  },
  fence: () => ({ inside: false, message: 'fence: a grant change always waits for a person.' }),
  async apply(ctx, input) {
    const changes = {
      ...(input.allowed_merchants ? { allowed_merchants: input.allowed_merchants } : {}),
      ...(input.x402_hosts ? { x402_hosts: input.x402_hosts.map((host) => host.toLowerCase()) } : {}),
      ...(input.daily_amount_cap_usd !== undefined && input.daily_amount_cap_usd !== null
        ? { daily_usd: formatAmount(amountOf(input.daily_amount_cap_usd)) }
        : {}),
      ...(input.expires_at ? { fence_expires_at: new Date(input.expires_at) } : {}),
    };
    await store.updateFence(ctx.tx, ctx.agent.id, changes, ctx.now);
    return { result: { agent_id: ctx.agent.id, changed: Object.keys(changes).sort() }, spentUsd: ZERO };
  },
};

/** The input each kind of write takes, by its kind's name. */
export type WriteInputs = {
  payment: PaymentInput;
  chain_payment: ChainPaymentInput;
  transaction: TxInput;
  transaction_patch: TxPatchInput;
  grant_change: GrantChangeInput;
  card_intent: CardIntentInput;
};

export type WriteKindName = keyof WriteInputs;

/** The kinds applied in one transaction (a wallet transfer and an x402 fetch ask the chain). */
export const WRITE_KINDS: { [K in WriteKindName]: WriteKind<WriteInputs[K]> } = {
  payment: paymentWrite,
  chain_payment: chainPaymentWrite,
  transaction: transactionWrite,
  transaction_patch: transactionPatchWrite,
  grant_change: grantChangeWrite,
  card_intent: cardIntentWrite,
};

export function isWriteKindName(kind: string): kind is WriteKindName {
  return Object.hasOwn(WRITE_KINDS, kind);
}
