import { randomUUID } from 'node:crypto';
import type { Clock } from '../../core/clock.ts';
import { AppError } from '../../core/errors.ts';
import { type AmountE8, formatAmount, parseAmountInput, ZERO } from '../../core/money.ts';
import type { Db, Queryable } from '../../platform/db/database.ts';
import type { AgentWriteKind } from '../../platform/db/schema.ts';
import { readAmount } from '../ledger/index.ts';
import {
  type DayTotal,
  type Decision,
  decide,
  type Fence,
  type FenceVerdict,
  PERM_OF,
  spentToday,
  totalAfterRelease,
  totalAfterSpend,
} from './domain.ts';
import * as store from './store.ts';

// The one road for every agent write: the rule table (status × fence × perms) decides whether
// the write applies now, waits as a proposal, or is refused; an applied write and what it spent
// are recorded in the same transaction as the write itself, under the agent's row lock, so
// concurrent writes cannot spend past the daily cap.

export type WritesDeps = { db: Db; clock: Clock };

/** Who asks: the agent, as the door found it (its issuer still an owner or admin). */
export type AgentCaller = {
  agentId: string;
  spaceId: string;
  issuerUserId: string;
  accountIds: string[] | null;
};

export type WriteCtx = {
  tx: Queryable;
  deps: WritesDeps;
  agent: store.AgentRow;
  /** The accounts the agent may use (null: every account of its space). */
  accountIds: string[] | null;
  now: Date;
};

/** One kind of write: how its input is checked, what the fence says about it, and how it applies. */
export type WriteKind<I> = {
  kind: AgentWriteKind;
  /** Refuses input that could never apply (unknown account, wrong category), proposal or not. */
  check: (ctx: WriteCtx, input: I) => Promise<void>;
  /** Fills what the input leaves implicit (a payment's currency), so a proposal reads in full. */
  complete?: (ctx: WriteCtx, input: I) => Promise<I>;
  fence: (
    ctx: WriteCtx,
    input: I,
    fence: Fence,
    spentToday: AmountE8,
  ) => Promise<FenceVerdict> | FenceVerdict;
  /** Applies the write with `actorId` as the person acting; answers the result and what it spent in USD. */
  apply: (
    ctx: WriteCtx,
    input: I,
    actorId: string,
    writeId: string,
  ) => Promise<{ result: Record<string, unknown>; spentUsd: AmountE8 }>;
};

export type AgentWriteOut = {
  applied: boolean;
  message: string;
  proposal_id: string | null;
  result: Record<string, unknown> | null;
};

export function fenceOf(agent: store.AgentRow): Fence {
  return {
    x402Hosts: agent.x402_hosts,
    allowedMerchants: agent.allowed_merchants,
    perRequestUsd: readAmount(agent.per_request_usd),
    dailyUsd: readAmount(agent.daily_usd),
    expiresAt: agent.fence_expires_at,
  };
}

function dayTotalOf(agent: store.AgentRow): DayTotal {
  return { day: agent.spent_day, spentUsd: readAmount(agent.spent_usd) };
}

/** What the agent spent today, read from its (locked) row. */
export function agentSpentToday(agent: store.AgentRow, now: Date): AmountE8 {
  return spentToday(dayTotalOf(agent), now);
}

/**
 * Counts a spend against the agent's daily cap and records it. `agent` is the agent's row as
 * read under its lock in `tx` (lockAgent), so the total written is the one the fence was checked
 * against and no concurrent write can slip between.
 */
export async function countSpend(
  tx: Queryable,
  agent: store.AgentRow,
  spend: { writeId: string; amount: AmountE8; at: Date },
) {
  const total = totalAfterSpend(dayTotalOf(agent), spend.at, spend.amount);
  const row = {
    id: randomUUID(),
    spaceId: agent.space_id,
    agentId: agent.id,
    writeId: spend.writeId,
    amountUsd: formatAmount(spend.amount),
    at: spend.at,
  };
  await store.addSpend(tx, row, { day: total.day, spentUsd: formatAmount(total.spentUsd) });
}

/**
 * Gives a failed write's reservation back: its spend row goes, and the agent's day total drops
 * when it still counts the day of that spend. Takes the agent's row lock in `tx`.
 */
export async function releaseSpend(tx: Queryable, writeId: string) {
  const gone = await store.deleteSpend(tx, writeId);
  if (!gone) return;
  const agent = await store.lockAgent(tx, gone.agent_id);
  const before = dayTotalOf(agent);
  const after = totalAfterRelease(before, gone.spent_at, readAmount(gone.amount_usd));
  if (after === before || after.day === null) return;
  await store.setDayTotal(tx, agent.id, { day: after.day, spentUsd: formatAmount(after.spentUsd) });
}

export function amountOf(value: number | string): AmountE8 {
  const parsed = parseAmountInput(value);
  if (!parsed.ok) throw new AppError('invalid_request', 'amount is not a valid amount.', { field: 'amount' });
  return parsed.value;
}

function refuse(decision: Decision): void {
  if (decision.outcome === 'refuse') throw new AppError(decision.code, decision.message);
}

/** The agent as it is now, locked; a revoked agent is answered as an unknown token. */
async function lockLiveAgent(tx: Queryable, agentId: string) {
  const agent = await store.lockAgent(tx, agentId);
  if (agent.revoked_at !== null) throw new AppError('unauthorized', 'This agent token was revoked.');
  return agent;
}

/** Runs one agent write through the rule table; answers AgentWriteOut. */
export async function runAgentWrite<I extends object>(
  deps: WritesDeps,
  caller: AgentCaller,
  spaceId: string,
  spec: WriteKind<I>,
  given: I,
): Promise<AgentWriteOut> {
  if (spaceId !== caller.spaceId) throw new AppError('not_found', 'No such space for this agent.');
  return deps.db.transaction().execute(async (tx) => {
    const agent = await lockLiveAgent(tx, caller.agentId);
    const now = deps.clock.now();
    const ctx: WriteCtx = { tx, deps, agent, accountIds: caller.accountIds, now };
    const needs = PERM_OF[spec.kind];
    refuse(decide({ status: agent.status, perms: agent.perms, needs, fence: { inside: true } }));
    await spec.check(ctx, given);
    const input = spec.complete ? await spec.complete(ctx, given) : given;
    const fence = await spec.fence(ctx, input, fenceOf(agent), agentSpentToday(agent, now));
    const decision = decide({ status: agent.status, perms: agent.perms, needs, fence });
    refuse(decision);
    const writeId = randomUUID();
    const base = {
      id: writeId,
      spaceId,
      agentId: agent.id,
      kind: spec.kind,
      input: { ...input } as Record<string, unknown>,
      at: now,
    };
    if (decision.outcome === 'propose') {
      await store.insertWrite(tx, { ...base, message: decision.message, status: 'pending', result: null });
      return { applied: false, message: decision.message, proposal_id: writeId, result: null };
    }
    await store.insertWrite(tx, { ...base, message: '', status: 'applied', result: null });
    const applied = await spec.apply(ctx, input, agent.issuer_user_id, writeId);
    await recordApplied(tx, { writeId, agent, at: now }, applied);
    return { applied: true, message: '', proposal_id: null, result: applied.result };
  });
}

/** Stores an applied write's result and counts what it spent against the daily cap. */
async function recordApplied(
  tx: Queryable,
  where: { writeId: string; agent: store.AgentRow; at: Date },
  applied: { result: Record<string, unknown>; spentUsd: AmountE8 },
) {
  await tx
    .updateTable('agent_writes')
    .set({ result: JSON.stringify(applied.result) })
    .where('id', '=', where.writeId)
    .execute();
  if (applied.spentUsd === ZERO || applied.spentUsd <= 0n) return;
  await countSpend(tx, where.agent, { writeId: where.writeId, amount: applied.spentUsd, at: where.at });
}

/**
 * A person applies a proposal: its input is checked again (things may have changed in seven
 * days) and applied with the person as actor. The agent stays named on the proposal row.
 */
export async function applyProposal<I extends object>(
  ctx: Omit<WriteCtx, 'accountIds'> & { accountIds: string[] | null },
  spec: WriteKind<I>,
  input: I,
  actorId: string,
  writeId: string,
) {
  await spec.check(ctx, input);
  return spec.apply(ctx, input, actorId, writeId);
}
