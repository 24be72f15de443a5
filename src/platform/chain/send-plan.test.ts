import { describe, expect, it } from 'vitest';
import { raisedFees } from './send-plan.ts';

describe('raisedFees', () => {
  it('raises both caps by at least one eighth, rounded up', () => {
    expect(raisedFees({ maxFeePerGas: 800n, maxPriorityFeePerGas: 80n })).toEqual({
      maxFeePerGas: 900n,
      maxPriorityFeePerGas: 90n,
    });
    expect(raisedFees({ maxFeePerGas: 9n, maxPriorityFeePerGas: 1n })).toEqual({
      maxFeePerGas: 11n,
      maxPriorityFeePerGas: 2n,
    });
  });

  it('raises a zero tip to at least 1 wei', () => {
    expect(raisedFees({ maxFeePerGas: 100n, maxPriorityFeePerGas: 0n }).maxPriorityFeePerGas).toBe(1n);
  });

  it('follows the chain when it asks more than the raise', () => {
    expect(
      raisedFees(
        { maxFeePerGas: 100n, maxPriorityFeePerGas: 10n },
        { maxFeePerGas: 500n, maxPriorityFeePerGas: 50n },
      ),
    ).toEqual({ maxFeePerGas: 500n, maxPriorityFeePerGas: 50n });
  });

  it('never answers less than 12.5 % more, for any caps', () => {
    for (let fee = 0n; fee < 2_000n; fee += 7n) {
      const raised = raisedFees({ maxFeePerGas: fee * 3n, maxPriorityFeePerGas: fee });
      expect(raised.maxPriorityFeePerGas * 8n).toBeGreaterThanOrEqual(fee * 9n);
      expect(raised.maxFeePerGas * 8n).toBeGreaterThanOrEqual(fee * 27n);
      expect(raised.maxFeePerGas).toBeGreaterThanOrEqual(raised.maxPriorityFeePerGas);
    }
  });
});
