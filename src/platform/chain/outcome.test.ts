import { HttpRequestError, TransactionReceiptNotFoundError } from 'viem';
import { describe, expect, it } from 'vitest';
import { ChainRound, chainUnknownTotal, classifyRead, onEvidenceOfRemoval } from './outcome.ts';

describe('classifyRead', () => {
  it('answers found for a value, absent for null and for viem not-found errors, unknown for every other error', async () => {
    expect(await classifyRead(async () => 7)).toEqual({ kind: 'found', value: 7 });
    expect(await classifyRead(async () => null)).toEqual({ kind: 'absent' });
    const missing = new TransactionReceiptNotFoundError({ hash: `0x${'1'.repeat(64)}` });
    expect(await classifyRead(() => Promise.reject(missing))).toEqual({ kind: 'absent' });
    const limited = new HttpRequestError({ url: 'http://127.0.0.1:1', status: 429 });
    expect((await classifyRead(() => Promise.reject(limited))).kind).toBe('unknown');
    expect((await classifyRead(() => Promise.reject(new Error('socket hang up')))).kind).toBe('unknown');
  });
});

async function unitCount(): Promise<number> {
  const values = (await chainUnknownTotal.get()).values;
  return (
    values.find((value) => value.labels.network === 'unit' && value.labels.call === 'eth_call')?.value ?? 0
  );
}

describe('ChainRound', () => {
  it('counts each unknown read under its network and call, and forgets them once logged', async () => {
    const round = new ChainRound('test', undefined);
    const before = await unitCount();
    await round.read('unit', 'eth_call', () => Promise.reject(new Error('timeout')));
    await round.read('unit', 'eth_call', async () => 1);
    expect((await unitCount()) - before).toBe(1);
    expect(round.unknownCount).toBe(1);
    round.end();
    expect(round.unknownCount).toBe(0);
  });
});

describe('onEvidenceOfRemoval', () => {
  it('marks on the first sighting, waits at the same head, undoes only a block later', () => {
    expect(onEvidenceOfRemoval(null, 100n)).toBe('mark');
    expect(onEvidenceOfRemoval(100n, 100n)).toBe('wait');
    expect(onEvidenceOfRemoval(100n, 99n)).toBe('wait');
    expect(onEvidenceOfRemoval(100n, 101n)).toBe('undo');
  });
});
