import { DAY_MS } from '../../core/clock.ts';
import { type AmountE8, asAmount, UNIT } from '../../core/money.ts';

// Rules of payment requests, with no I/O.

export type RequestStatus = 'active' | 'paid' | 'cancelled';

/** Tokens whose value is pinned 1:1 to a currency; a USD price may be paid in USDC. */
const PEGS: Record<string, string> = { USDC: 'USD' };
/** Base-unit decimals of the tokens the chain rail moves; amounts finer than this cannot be paid. */
export const TOKEN_DECIMALS: Record<string, number> = { USDC: 6 };

export const ON_CHAIN_FLOOR = asAmount(UNIT); // one dollar
export const DEFAULT_LIFETIME_MS = DAY_MS;
export const LIFETIME_MAX_MS = 365 * DAY_MS;
export const LIFETIME_MIN_MS = 60_000;

export function pegOf(currency: string): string {
  return PEGS[currency] ?? currency;
}

/** A request in `requested` can land in an account holding `held`: the same, or held pegs to it. */
export function currenciesFit(held: string, requested: string): boolean {
  return held === requested || pegOf(held) === requested;
}

export type AccountFacts = { kind: string; currency: string };

/** True when a machine could pay this account only on chain, where the one-dollar floor holds. */
export function hasOnChainFloor(account: AccountFacts): boolean {
  return account.kind === 'crypto' && pegOf(account.currency) === 'USD';
}

export type MintProblem =
  | { code: 'currency_mismatch'; detail: string }
  | { code: 'amount_not_accepted'; detail: string; details: Record<string, unknown> };

export function checkMint(account: AccountFacts, currency: string, amount: AmountE8): MintProblem | null {
  if (!currenciesFit(account.currency, currency)) {
    return {
      code: 'currency_mismatch',
      detail: `The account holds ${account.currency}; it cannot take a request in ${currency}.`,
    };
  }
  if (hasOnChainFloor(account) && amount < ON_CHAIN_FLOOR) {
    return {
      code: 'amount_not_accepted',
      detail:
        'The on-chain rail has a floor of 1 USD; charge smaller prices to a prepaid balance with POST /integration/charges.',
      details: { floor: '1', currency: 'USD', alternative: '/integration/charges' },
    };
  }
  const decimals = account.kind === 'crypto' ? TOKEN_DECIMALS[account.currency] : undefined;
  if (decimals !== undefined && amount % 10n ** BigInt(8 - decimals) !== 0n) {
    return {
      code: 'amount_not_accepted',
      detail: `${account.currency} moves in steps of 10^-${decimals}; this amount has more decimals than the token.`,
      details: { decimals },
    };
  }
  return null;
}

/** A tag lowers an asked amount by less than this: one cent (10^-2, in 10^-8 units). */
export const TAG_LIMIT = asAmount(UNIT / 100n);

/**
 * The amounts a new request on an address may ask for (issue 22), in the order it takes them:
 * its price, then the price lowered by one, two, ... steps of the token's smallest unit, staying
 * above zero and less than one cent below the price. The request asks for the first of them no
 * other open request of the account asks for, and counts as paid in full once it has received
 * that. Null when the account needs no tag (no token decimals: the request asks for its price).
 */
export function tagLadder(
  amount: AmountE8,
  decimals: number | undefined,
): { top: AmountE8; step: AmountE8; rungs: number } | null {
  if (decimals === undefined) return null;
  const step = 10n ** BigInt(8 - decimals);
  const aboveZero = (amount + step - 1n) / step;
  const underLimit = (TAG_LIMIT + step - 1n) / step;
  return {
    top: amount,
    step: asAmount(step),
    rungs: Number(aboveZero < underLimit ? aboveZero : underLimit),
  };
}

/** The deadline: the one asked for (within limits), else one day after minting. */
export function expiryFor(
  now: Date,
  asked: string | null | undefined,
): { ok: true; at: Date } | { ok: false; detail: string } {
  if (asked === undefined || asked === null)
    return { ok: true, at: new Date(now.getTime() + DEFAULT_LIFETIME_MS) };
  const at = new Date(asked);
  const ahead = at.getTime() - now.getTime();
  if (ahead < LIFETIME_MIN_MS)
    return { ok: false, detail: 'expires_at must be at least a minute in the future.' };
  if (ahead > LIFETIME_MAX_MS) return { ok: false, detail: 'expires_at must be within a year.' };
  return { ok: true, at };
}

/** The status a reader sees: an active request past its deadline has lapsed, even before the job runs. */
export function visibleStatus(status: RequestStatus, expiresAt: Date, now: Date): RequestStatus {
  return status === 'active' && expiresAt.getTime() <= now.getTime() ? 'cancelled' : status;
}

/** What a settlement of `amount` does to a request that had `received` of the `total` it asks for. */
export function afterSettlement(
  total: AmountE8,
  received: AmountE8,
  amount: AmountE8,
): { received: AmountE8; status: RequestStatus } {
  const next = asAmount(received + amount);
  return { received: next, status: next >= total ? 'paid' : 'active' };
}

/**
 * What undoing a settlement of `amount` does to a request: the received amount shrinks (never
 * below zero); a request no longer paid in full takes payments again while it is in time.
 */
export function afterReversal(
  total: AmountE8,
  received: AmountE8,
  amount: AmountE8,
  expiresAt: Date,
  at: Date,
): { received: AmountE8; status: RequestStatus } {
  const left = asAmount(received > amount ? received - amount : 0n);
  if (left >= total) return { received: left, status: 'paid' };
  return { received: left, status: expiresAt.getTime() > at.getTime() ? 'active' : 'cancelled' };
}

/** What a request still waits for: what it asks, less what it has received, never below zero. */
export function stillOpen(due: AmountE8, received: AmountE8): AmountE8 {
  return asAmount(due > received ? due - received : 0n);
}

/** A request as the book's open sums count it. */
export type OpenSource = { status: RequestStatus; due: AmountE8; received: AmountE8 };

/** A request's part of its book's open sums, or a change to them: how many requests, and how much. */
export type OpenShare = { requests: number; open: bigint };

/**
 * What a request adds to its book's open sums: itself and what it still waits for while its
 * status is active (past its deadline or not: readers take the lapsed ones off), nothing after.
 */
export function openShareOf(request: OpenSource): OpenShare {
  return request.status === 'active'
    ? { requests: 1, open: stillOpen(request.due, request.received) }
    : { requests: 0, open: 0n };
}

/**
 * What a write that moves a request from `before` (null for a new one) to `after` does to the
 * open sums; null when it leaves them as they were.
 */
export function openChange(before: OpenSource | null, after: OpenSource): OpenShare | null {
  const was = before === null ? { requests: 0, open: 0n } : openShareOf(before);
  const is = openShareOf(after);
  const change = { requests: is.requests - was.requests, open: is.open - was.open };
  return change.requests === 0 && change.open === 0n ? null : change;
}

/**
 * What cancelling a request does, from the status a reader sees. The spec's only road to
 * `cancelled` is the lapse, so cancelling an active request makes it lapse now; a cancelled one
 * is answered as it is; a paid one cannot be undone this way.
 */
export function cancelDecision(visible: RequestStatus): 'lapse_now' | 'already_cancelled' | 'refuse_paid' {
  if (visible === 'active') return 'lapse_now';
  return visible === 'cancelled' ? 'already_cancelled' : 'refuse_paid';
}
