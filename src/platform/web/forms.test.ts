import { describe, expect, it } from 'vitest';
import { toValidationItems } from '../http/validation.ts';
import { sentenceForPeople } from './forms.ts';

// Forms answer a field that failed its schema in a sentence, not in the validator's words.

const failure = (keyword: string, params: Record<string, unknown>) =>
  sentenceForPeople(toValidationItems([{ keyword, instancePath: '/name', params }], 'body')[0]!);

describe('form errors for people', () => {
  it('turns each validator check into a plain sentence, with its limit', () => {
    expect(failure('minLength', { limit: 10 })).toBe('Type at least 10 characters.');
    expect(failure('minLength', { limit: 1 })).toBe('Fill this in.');
    expect(failure('maxLength', { limit: 120 })).toBe('Keep this to 120 characters or fewer.');
    expect(failure('required', { missingProperty: 'name' })).toBe('Fill this in.');
    expect(failure('enum', { allowedValues: ['sepa', 'uk'] })).toBe('Choose one of the options.');
    expect(failure('minimum', { limit: 1 })).toBe('Type a number of 1 or more.');
    expect(failure('type', { type: 'integer' })).toBe('Type a whole number.');
    expect(failure('format', { format: 'email' })).toBe('Type an email address, like name@example.com.');
    expect(failure('format', { format: 'date' })).toBe('Type a date as YYYY-MM-DD.');
    expect(failure('pattern', { pattern: '^[A-Z]{3}$' })).toBe('This is not in the expected form.');
  });

  it('never shows the validator’s own words, and keeps a service’s sentence as it is', () => {
    for (const keyword of ['multipleOf', 'uniqueItems', 'const', 'maxItems', 'exclusiveMaximum']) {
      const sentence = failure(keyword, { limit: 2, multipleOf: 2, allowedValue: 'x' });
      expect(sentence, keyword).not.toMatch(/should|Input|String|List/);
    }
    expect(sentenceForPeople({ type: 'conflict', msg: 'A contact with this email exists.' })).toBe(
      'A contact with this email exists.',
    );
  });
});
