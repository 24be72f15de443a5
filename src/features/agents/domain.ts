import { DAY_MS } from '../../core/clock.ts';
import { type AmountE8, asAmount, ZERO } from '../../core/money.ts';
import type { AgentPerm, AgentStatus, AgentWriteKind } from '../../platform/db/schema.ts';

// The agent's rules, without I/O: its status machine, the one rule table every write passes
// (status × fence × perms), the fence's checks and the masking of what an agent reads.

export const AGENT_STATUSES = ['observing', 'active', 'frozen'] as const satisfies readonly AgentStatus[];
export const AGENT_PERMS = [
  'payments',
  'transactions',
  'chain_payments',
  'wallet',
  'x402',
  'cards',
] as const satisfies readonly AgentPerm[];

/** A proposal nobody decided within this long lapses. */
export const PROPOSAL_LIFETIME_MS = 7 * DAY_MS;

/**
 * DECISIONS "Agents": observing → active (owner), any → frozen (owner), frozen → observing
 * (owner). Staying put is allowed (a retried PATCH answers the same agent).
 */
const NEXT: Record<AgentStatus, readonly AgentStatus[]> = {
  observing: ['observing', 'active', 'frozen'],
  active: ['active', 'frozen'],
  frozen: ['frozen', 'observing'],
};

export function canMove(from: AgentStatus, to: AgentStatus): boolean {
  return NEXT[from].includes(to);
}

/** Which perm each kind of write needs. */
export const PERM_OF: Record<AgentWriteKind, AgentPerm | null> = {
  payment: 'payments',
  transaction: 'transactions',
  transaction_patch: 'transactions',
  chain_payment: 'chain_payments',
  wallet_transfer: 'wallet',
  x402: 'x402',
  card_intent: 'cards',
  // Asking for a wider fence needs no perm: it is always a proposal.
  grant_change: null,
};

/** What the fence says about one write: inside, or outside with the sentence the agent reads. */
export type FenceVerdict = { inside: true } | { inside: false; message: string };

export type Decision =
  | { outcome: 'apply' }
  | { outcome: 'propose'; message: string }
  | { outcome: 'refuse'; code: 'agent_frozen' | 'missing_perm'; message: string };

/**
 * The one rule table. Frozen refuses every write; a missing perm refuses; observing proposes
 * everything; active applies inside the fence and proposes outside it.
 */
export function decide(input: {
  status: AgentStatus;
  perms: readonly AgentPerm[];
  needs: AgentPerm | null;
  fence: FenceVerdict;
}): Decision {
  if (input.status === 'frozen') {
    return {
      outcome: 'refuse',
      code: 'agent_frozen',
      message: 'This agent is frozen; its owner can unfreeze it.',
    };
  }
  if (input.needs !== null && !input.perms.includes(input.needs)) {
    return {
      outcome: 'refuse',
      code: 'missing_perm',
      message: `This agent lacks the ${input.needs} perm that this write needs.`,
    };
  }
  if (input.status === 'observing') {
    return { outcome: 'propose', message: 'The agent is observing: every write waits for a person.' };
  }
  if (!input.fence.inside) return { outcome: 'propose', message: input.fence.message };
  return { outcome: 'apply' };
}

export type Fence = {
  x402Hosts: readonly string[];
  allowedMerchants: readonly string[];
  perRequestUsd: AmountE8;
  dailyUsd: AmountE8;
  expiresAt: Date | null;
};

/** Currencies the fence counts at par with its USD caps (dollar stablecoins are pegged 1:1). */
const USD_LIKE = new Set(['USD', 'USDC']);

export function isUsdLike(currency: string): boolean {
  return USD_LIKE.has(currency.toUpperCase());
}

export function fenceExpired(fence: Fence, now: Date): boolean {
  return fence.expiresAt !== null && fence.expiresAt.getTime() <= now.getTime();
}

const outside = (message: string): FenceVerdict => ({ inside: false, message });

/** A fence check that moves no money: only the fence's expiry. */
export function bookkeepingFence(fence: Fence, now: Date): FenceVerdict {
  if (fenceExpired(fence, now)) return outside('fence: expired; a person must approve this.');
  return { inside: true };
}

/** Compares names the way people mean them: case and surrounding spaces do not matter. */
export function sameName(left: string, right: string): boolean {
  return left.trim().toLowerCase() === right.trim().toLowerCase();
}

/**
 * A write that spends: the expiry, the merchant (payee) on the allowed list, the currency the
 * caps count in, the per-request cap and what is left of the day's cap.
 */
export function spendingFence(
  fence: Fence,
  now: Date,
  spend: { amount: AmountE8; currency: string; merchant: string | null; spentToday: AmountE8 },
): FenceVerdict {
  const expired = bookkeepingFence(fence, now);
  if (!expired.inside) return expired;
  const merchant = spend.merchant;
  if (merchant !== null && !fence.allowedMerchants.some((name) => sameName(name, merchant))) {
    return outside(`fence: allowed_merchants does not list “${spend.merchant}”.`);
  }
  if (!isUsdLike(spend.currency)) {
    return outside(`fence: the caps count USD; a ${spend.currency.toUpperCase()} amount needs a person.`);
  }
  if (spend.amount > fence.perRequestUsd) return outside('fence: over per_request_usd.');
  if (spend.spentToday + spend.amount > fence.dailyUsd)
    return outside('fence: over what is left of daily_usd.');
  return { inside: true };
}

/** The UTC day holding `now`, in days since 1970-01-01: the window the daily cap counts. */
export function dayNumber(now: Date): number {
  return Math.floor(now.getTime() / DAY_MS);
}

/** What the agent spent today, from its row's day total (another day's total counts nothing). */
export function spentToday(row: { spent_day: number | null; spent_usd: AmountE8 }, now: Date): AmountE8 {
  return row.spent_day === dayNumber(now) ? row.spent_usd : ZERO;
}

/** Hides all but the last four characters (account numbers, addresses) from an agent's reads. */
export function mask(value: string): string {
  if (value.length <= 4) return value;
  return `…${value.slice(-4)}`;
}

export function sumAmounts(amounts: readonly AmountE8[]): AmountE8 {
  return asAmount(amounts.reduce((total, amount) => total + amount, 0n));
}
