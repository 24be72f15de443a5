import { describe, expect, it } from 'vitest';
import { changedFields } from './edits.ts';

describe('changedFields', () => {
  it('keeps only the given fields whose value differs, with before and after', () => {
    const held = { name: 'Main', color: null, details: '', requisites: { scheme: 'sepa', iban: 'DE1' } };
    expect(
      changedFields(held, {
        name: 'Main',
        color: '#ff0000',
        details: undefined,
        requisites: { scheme: 'sepa', iban: 'DE2' },
      }),
    ).toEqual({
      color: { from: null, to: '#ff0000' },
      requisites: { from: { scheme: 'sepa', iban: 'DE1' }, to: { scheme: 'sepa', iban: 'DE2' } },
    });
    expect(changedFields(held, { name: 'Main', requisites: { iban: 'DE1', scheme: 'sepa' } })).toEqual({});
  });
});
