import { describe, expect, it } from 'vitest';
import { quoteDecision } from './domain.ts';

// What an answer does to a quote (what a draft may still change is in domain.test.ts's table).

describe('an answer to a quote', () => {
  it('moves a sent quote, repeats as a no-op, and refuses everything else', () => {
    expect(quoteDecision('quote_sent', 'accept')).toBe('move');
    expect(quoteDecision('quote_sent', 'decline')).toBe('move');
    expect(quoteDecision('quote_accepted', 'accept')).toBe('same');
    expect(quoteDecision('quote_declined', 'decline')).toBe('same');
    expect(quoteDecision('quote_declined', 'accept')).toBe('refuse');
    expect(quoteDecision('quote_accepted', 'decline')).toBe('refuse');
    expect(quoteDecision('quote_expired', 'accept')).toBe('refuse');
    expect(quoteDecision('quote_draft', 'accept')).toBe('refuse');
    expect(quoteDecision('void', 'accept')).toBe('refuse');
  });
});
