import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { asAmount } from '../../core/money.ts';
import {
  balanceUpdates,
  decrease,
  imbalance,
  increase,
  isWellFormed,
  type LedgerAccountRef,
  naturalBalance,
  reversalOf,
} from './domain.ts';

const account = (
  id: string,
  normalSide: 'debit' | 'credit',
  currency = 'USD',
  noOverdraft = false,
): LedgerAccountRef => ({
  id,
  currency,
  normalSide,
  tracksBalance: true,
  noOverdraft,
});
const cash = account('a-cash', 'debit');
const income = account('b-income', 'credit');
const credit = account('c-credit', 'credit', 'USD', true);

describe('ledger domain', () => {
  it('calls an entry well-formed only when it balances in every currency', () => {
    const ten = asAmount(10n);
    expect(isWellFormed([increase(cash, ten), increase(income, ten)])).toBe(true);
    expect(isWellFormed([increase(cash, ten), decrease(income, ten)])).toBe(false);
    const usdc = account('d-usdc', 'debit', 'USDC');
    const unbalanced = [increase(usdc, ten), increase(income, ten)];
    expect(imbalance(unbalanced)).toEqual(
      new Map([
        ['USDC', 10n],
        ['USD', -10n],
      ]),
    );
    expect(isWellFormed([increase(cash, asAmount(0n)), increase(income, asAmount(0n))])).toBe(false);
  });

  it('reads natural balances as positive for money held and money owed', () => {
    expect(naturalBalance('debit', asAmount(5n))).toBe(5n);
    expect(naturalBalance('credit', asAmount(-5n))).toBe(5n);
  });

  it('orders balance updates: no-overdraft accounts first, then by id, merging repeats', () => {
    const updates = balanceUpdates([
      increase(cash, asAmount(3n)),
      decrease(credit, asAmount(3n)),
      increase(cash, asAmount(2n)),
      decrease(cash, asAmount(2n)),
    ]);
    expect(updates.map((update) => [update.account.id, update.delta])).toEqual([
      ['c-credit', 3n],
      ['a-cash', 3n],
    ]);
  });

  it('any sequence of balanced entries and their reversals keeps every currency summing to zero', () => {
    const accounts = [
      cash,
      income,
      credit,
      account('e-eur', 'debit', 'EUR'),
      account('f-eur', 'credit', 'EUR'),
    ];
    const entry = fc
      .tuple(
        fc.integer({ min: 0, max: 4 }),
        fc.integer({ min: 0, max: 4 }),
        fc.bigInt({ min: 1n, max: 10n ** 20n }),
      )
      .filter(([from, to]) => from !== to && accounts[from]!.currency === accounts[to]!.currency)
      .map(([from, to, amount]) => [
        { account: accounts[from]!, amount: asAmount(amount) },
        { account: accounts[to]!, amount: asAmount(-amount) },
      ]);
    fc.assert(
      fc.property(
        fc.array(entry, { maxLength: 30 }),
        fc.array(fc.boolean(), { maxLength: 30 }),
        (entries, reverse) => {
          const all = entries.flatMap((postings, index) =>
            reverse[index] ? [...postings, ...reversalOf(postings)] : postings,
          );
          for (const postings of entries) expect(isWellFormed(postings)).toBe(true);
          expect(imbalance(all).size).toBe(0);
        },
      ),
    );
  });
});
