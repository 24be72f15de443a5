import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type AmountE8, asAmount } from '../../core/money.ts';
import { allocate } from './domain.ts';

const open = (id: string, amount: bigint) => ({ id, open: asAmount(amount) });

describe('allocate', () => {
  it('gives a transfer of exactly one request’s open amount to that request alone, even when it is not the oldest', () => {
    const plan = allocate(asAmount(300n), [open('a', 100n), open('b', 300n), open('c', 300n)]);
    expect(plan).toEqual({
      allocations: [{ requestId: 'b', amount: 300n, matchedBy: 'exact' }],
      remainder: 0n,
    });
  });

  it('fills oldest first what matches no request, and leaves the excess as remainder', () => {
    expect(allocate(asAmount(150n), [open('a', 100n), open('b', 300n)])).toEqual({
      allocations: [
        { requestId: 'a', amount: 100n, matchedBy: 'oldest_first' },
        { requestId: 'b', amount: 50n, matchedBy: 'oldest_first' },
      ],
      remainder: 0n,
    });
    expect(allocate(asAmount(500n), [open('a', 100n), open('b', 300n)]).remainder).toBe(100n);
    expect(allocate(asAmount(7n), []).remainder).toBe(7n);
  });

  it('never loses or invents money: allocations plus remainder equal the transfer', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 10n ** 12n }),
        fc.array(fc.bigInt({ min: 0n, max: 10n ** 10n }), { maxLength: 20 }),
        (amount, opens) => {
          const requests = opens.map((value, index) => open(String(index), value));
          const plan = allocate(asAmount(amount), requests);
          const total = plan.allocations.reduce((sum, item) => sum + (item.amount as bigint), 0n);
          expect(total + (plan.remainder as bigint)).toBe(amount);
          for (const item of plan.allocations) {
            const request = requests.find((candidate) => candidate.id === item.requestId)!;
            expect(item.amount <= request.open && (item.amount as AmountE8) > 0n).toBe(true);
          }
        },
      ),
    );
  });
});
