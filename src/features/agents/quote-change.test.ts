import { describe, expect, it } from 'vitest';
import { asAmount, UNIT } from '../../core/money.ts';
import type { ConfiguredNetwork } from '../../platform/chain/networks.ts';
import { quoteChange } from './approvals.ts';

// One comparison of an approval's quote with its proposal's: any of pay-to, network, asset or
// amount changed refuses the approval, naming what changed.

const network = (name: string, symbol: string) =>
  ({ name, token: { symbol } }) as unknown as ConfiguredNetwork;
const recorded = {
  url: 'https://api.example/report',
  quoted: '1.00000000',
  asset: 'USDC',
  network: 'base',
  pay_to: '0xaaa',
};
const quote = { amount: asAmount(UNIT), network: network('base', 'USDC'), payTo: '0xaaa' };

describe('quoteChange', () => {
  it('finds nothing when the quote is the proposal’s', () => {
    expect(quoteChange(recorded, quote)).toBeUndefined();
  });

  it.each([
    ['pay_to', { ...quote, payTo: '0xbbb' }, 'The host now asks to pay 0xbbb; the proposal was for 0xaaa.'],
    ['network', { ...quote, network: network('polygon', 'USDC') }, 'on polygon; the proposal was for base'],
    ['asset', { ...quote, network: network('base', 'EURC') }, 'asks for EURC; the proposal was for USDC'],
    ['amount', { ...quote, amount: asAmount(UNIT * 2n) }, 'asks 2.00000000; the proposal was for 1.00000000'],
    ['amount', { ...quote, amount: asAmount(UNIT / 2n) }, 'asks 0.50000000; the proposal was for 1.00000000'],
  ])('refuses a changed %s', (field, changed, sentence) => {
    const change = quoteChange(recorded, changed);
    expect(change?.field).toBe(field);
    expect(change?.detail).toContain(sentence);
  });

  it('compares nothing for a proposal that recorded no quote', () => {
    expect(
      quoteChange({ url: recorded.url }, { ...quote, payTo: '0xbbb', amount: asAmount(UNIT * 9n) }),
    ).toBeUndefined();
  });
});
