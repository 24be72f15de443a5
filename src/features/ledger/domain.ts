import type { EntryKind, Origin } from '../../core/events.ts';
import { type AmountE8, asAmount } from '../../core/money.ts';

// The ledger's rules, with no I/O. Postings are signed (debits positive); an entry balances when
// its postings sum to zero in every currency. A ledger account's "natural" balance is its sum
// for debit-normal accounts (assets) and the negated sum for credit-normal ones (income, equity,
// what is owed to a client), so both read as positive numbers in normal use.

export type NormalSide = 'debit' | 'credit';
export type LedgerAccountKind = 'asset' | 'income' | 'expense' | 'client_credit' | 'equity' | 'clearing';
// An entry's kind and origin are the words the book channel carries (spec §6.2), defined there.
export type { EntryKind, Origin };

export type LedgerAccountRef = {
  id: string;
  currency: string;
  normalSide: NormalSide;
  tracksBalance: boolean;
  noOverdraft: boolean;
};

export type Posting = { account: LedgerAccountRef; amount: AmountE8 };

export type EntryDraft = {
  /** Given when the caller must know the id before the entry is written (it is referenced first). */
  id?: string;
  spaceId: string;
  origin: Origin;
  kind: EntryKind;
  occurredOn: string;
  causeType: string;
  causeId: string | null;
  counterparty?: string;
  memo?: string;
  reversesEntryId?: string | null;
  postings: Posting[];
};

export type PostResult =
  | { ok: true; entryId: string; balances: Map<string, AmountE8> }
  | { ok: false; code: 'insufficient_balance'; ledgerAccountId: string };

/** Sum per currency; an entry is well-formed when every sum is zero and no posting is zero. */
export function imbalance(
  postings: readonly { account: Pick<LedgerAccountRef, 'currency'>; amount: AmountE8 }[],
): Map<string, AmountE8> {
  const sums = new Map<string, bigint>();
  for (const posting of postings) {
    sums.set(posting.account.currency, (sums.get(posting.account.currency) ?? 0n) + posting.amount);
  }
  const off = new Map<string, AmountE8>();
  for (const [currency, sum] of sums) if (sum !== 0n) off.set(currency, asAmount(sum));
  return off;
}

export function isWellFormed(postings: readonly Posting[]): boolean {
  return (
    postings.length >= 2 &&
    postings.every((posting) => posting.amount !== 0n) &&
    imbalance(postings).size === 0
  );
}

/**
 * The one rule of the natural direction: a debit-normal account grows with positive postings, a
 * credit-normal one with negative postings. Everything else (balances read, postings written,
 * the store's SQL guards) is derived from it.
 */
export function naturalSign(normalSide: NormalSide): 1 | -1 {
  return normalSide === 'debit' ? 1 : -1;
}

/** The balance as a person reads it: positive money held, or positive money owed. */
export function naturalBalance(normalSide: NormalSide, signedSum: AmountE8): AmountE8 {
  return asAmount(BigInt(naturalSign(normalSide)) * signedSum);
}

/** The signed posting that adds `amount` to an account in its natural direction. */
export function increase(account: LedgerAccountRef, amount: AmountE8): Posting {
  return { account, amount: naturalBalance(account.normalSide, amount) };
}

export function decrease(account: LedgerAccountRef, amount: AmountE8): Posting {
  return { account, amount: naturalBalance(account.normalSide, asAmount(-amount)) };
}

/** A reversal undoes an entry with new postings of opposite sign; nothing is edited. */
export function reversalOf(postings: readonly Posting[]): Posting[] {
  return postings.map((posting) => ({ account: posting.account, amount: asAmount(-posting.amount) }));
}

/**
 * Tracked accounts are updated in one global order (no-overdraft accounts first, then by id),
 * so two transactions touching the same accounts never wait on each other in a cycle.
 */
export function balanceUpdates(
  postings: readonly Posting[],
): { account: LedgerAccountRef; delta: AmountE8 }[] {
  const deltas = new Map<string, { account: LedgerAccountRef; delta: bigint }>();
  for (const posting of postings) {
    if (!posting.account.tracksBalance) continue;
    const current = deltas.get(posting.account.id) ?? { account: posting.account, delta: 0n };
    current.delta += posting.amount;
    deltas.set(posting.account.id, current);
  }
  return [...deltas.values()]
    .filter((update) => update.delta !== 0n)
    .sort(
      (a, b) =>
        Number(b.account.noOverdraft) - Number(a.account.noOverdraft) ||
        (a.account.id < b.account.id ? -1 : 1),
    )
    .map((update) => ({ account: update.account, delta: asAmount(update.delta) }));
}
