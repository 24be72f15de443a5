import { AppError } from '../../core/errors.ts';
import { type AmountE8, formatAmount, parseAmountInput, ZERO } from '../../core/money.ts';
import type { Queryable } from '../../platform/db/database.ts';
import { insertNotification } from '../notifications/index.ts';
import { listOwnerIds } from '../spaces/index.ts';
import { cardIntentFence, isUsdLike } from './domain.ts';
import * as store from './store.ts';
import type { WriteCtx, WriteKind } from './writes.ts';

// Card intents: an agent declares a card payment before its card makes it (merchant, purpose,
// ceiling). An expense row the agents book later whose payee is the merchant is matched to the
// oldest open intent; a row over the ceiling (or in a currency the ceiling cannot be read in)
// notifies the space's owners.

export type CardIntentInput = {
  merchant: string;
  purpose: string;
  ceiling_usd: number | string;
  kind?: 'one_off' | 'recurring';
  period?: 'month' | 'year' | null;
  months?: number | null;
  expires_in_hours?: number | null;
  category_id?: string | null;
};

const HOUR_MS = 3_600_000;

function ceilingOf(value: number | string): AmountE8 {
  const parsed = parseAmountInput(value);
  if (!parsed.ok || parsed.value <= 0n) {
    throw new AppError('invalid_request', 'ceiling_usd is a positive amount.', { field: 'ceiling_usd' });
  }
  return parsed.value;
}

/** Declaring needs the cards perm; inside the fence the merchant is allowed and the ceiling fits per_request_usd. */
export const cardIntentWrite: WriteKind<CardIntentInput> = {
  kind: 'card_intent',
  async check(ctx, input) {
    ceilingOf(input.ceiling_usd);
    if (input.category_id) {
      const category = await store.findCategory(ctx.tx, ctx.agent.space_id, input.category_id);
      if (!category)
        throw new AppError('invalid_request', 'No such category in this space.', { field: 'category_id' });
    }
  },
  fence(ctx, input, fence) {
    return cardIntentFence(fence, ctx.now, {
      merchant: input.merchant,
      ceilingUsd: ceilingOf(input.ceiling_usd),
    });
  },
  async apply(ctx, input, _actorId, writeId) {
    const hours = input.expires_in_hours ?? null;
    await store.insertCardIntent(ctx.tx, {
      id: writeId,
      space_id: ctx.agent.space_id,
      agent_id: ctx.agent.id,
      merchant: input.merchant.trim(),
      purpose: input.purpose,
      ceiling_usd: formatAmount(ceilingOf(input.ceiling_usd)),
      kind: input.kind ?? 'one_off',
      period: input.period ?? null,
      months: input.months ?? null,
      category_id: input.category_id ?? null,
      status: 'open',
      expires_at: hours === null ? null : new Date(ctx.now.getTime() + hours * HOUR_MS),
      created_at: ctx.now,
    });
    return { result: { intent_id: writeId, status: 'open' }, spentUsd: ZERO };
  },
};

/** Links a freshly booked expense row to the open intent of its payee; over the ceiling, tells the owners. */
export async function matchCardIntent(
  ctx: Pick<WriteCtx, 'tx' | 'now'>,
  row: { spaceId: string; entryId: string; payee: string; amount: AmountE8; currency: string },
) {
  if (row.payee.trim() === '') return;
  const intent = await store.lockOpenIntent(ctx.tx, row.spaceId, row.payee, ctx.now);
  if (!intent) return;
  const within = isUsdLike(row.currency) && row.amount <= parseCeiling(intent.ceiling_usd);
  await store.recordMatch(ctx.tx, {
    spaceId: row.spaceId,
    intent,
    entryId: row.entryId,
    amount: formatAmount(row.amount),
    within,
    at: ctx.now,
  });
  if (!within) await notifyOverCeiling(ctx.tx, intent, row, ctx.now);
}

function parseCeiling(text: string): AmountE8 {
  const parsed = parseAmountInput(text);
  return parsed.ok ? parsed.value : ZERO;
}

async function notifyOverCeiling(
  tx: Queryable,
  intent: store.CardIntentRow,
  row: { spaceId: string; entryId: string; amount: AmountE8; currency: string },
  at: Date,
) {
  for (const userId of await listOwnerIds(tx, row.spaceId)) {
    await insertNotification(tx, {
      spaceId: row.spaceId,
      userId,
      kind: 'card_intent_over_ceiling',
      subjectId: row.entryId,
      payload: {
        intent_id: intent.id,
        merchant: intent.merchant,
        ceiling_usd: intent.ceiling_usd,
        amount: formatAmount(row.amount),
        currency: row.currency,
        transaction_id: row.entryId,
      },
      at,
    });
  }
}

export function presentCardIntent(row: Awaited<ReturnType<typeof store.listCardIntents>>[number]) {
  return {
    id: row.id,
    agent_id: row.agent_id,
    merchant: row.merchant,
    purpose: row.purpose,
    ceiling_usd: formatAmount(parseCeiling(row.ceiling_usd)),
    kind: row.kind,
    period: row.period,
    months: row.months,
    category_id: row.category_id,
    status: row.status,
    expires_at: row.expires_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    matched_entry_ids: row.matched_entry_ids,
  };
}
