import type { PaymentPayload } from '@x402/core/types';
import { extractAndValidatePaymentIdentifier, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { paymentIdDeclaration, readPaymentId } from './extensions.ts';

// readPaymentId hands the payment-identifier block to the extension's validator without the
// schema the payer echoes. That is sound only while the validator's own checks of `info` say what
// the schema Tollbook declares says; these properties hold them to it.

const declared = paymentIdDeclaration()[PAYMENT_IDENTIFIER];

/** The extension's verdict on `info` against the declared schema (compiled by the extension). */
// The extension reads only the payload's `extensions` block, so a payload of that block alone is
// enough; the cast states the library's parameter type, as in extensions.ts.
const asPayload = (payload: object) => payload as unknown as PaymentPayload;

function againstDeclaredSchema(info: unknown): boolean {
  const payload = { extensions: { [PAYMENT_IDENTIFIER]: { info, schema: declared.schema } } };
  return extractAndValidatePaymentIdentifier(asPayload(payload)).validation.valid;
}

const idCharacters = fc.constantFrom(...'abcXYZ019_-', ' ', '.', '/', 'é', '\n');
const ids = fc.oneof(
  fc.string({ unit: idCharacters, minLength: 0, maxLength: 140 }),
  fc.string({ unit: fc.constantFrom(...'aZ9_-'), minLength: 14, maxLength: 130 }),
  fc.integer(),
  fc.constant(null),
);
const infos = fc.oneof(
  fc.record(
    { required: fc.oneof(fc.boolean(), fc.constant('yes'), fc.integer()), id: ids },
    {
      requiredKeys: [],
    },
  ),
  fc.record({ required: fc.boolean(), id: ids, note: fc.string() }),
);

describe('readPaymentId', () => {
  it('accepts exactly the info the declared schema accepts, whatever schema the payer sends', () => {
    fc.assert(
      fc.property(
        infos,
        fc.oneof(fc.constant(undefined), fc.constant(declared.schema), fc.constant({})),
        (info, schema) => {
          const read = readPaymentId({ extensions: { [PAYMENT_IDENTIFIER]: { info, schema } } });
          expect(read.ok).toBe(againstDeclaredSchema(info));
          if (read.ok) expect(read.id).toBe((info as { id?: string }).id ?? null);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("holds the info to the declared schema, not to the payer's", () => {
    const info = { required: false, id: 'pay_0123456789abcdef' };
    const strict = { type: 'object', properties: { id: { type: 'string', maxLength: 3 } } };
    const broken = { type: 'no such type' };
    for (const schema of [strict, broken]) {
      const payload = { extensions: { [PAYMENT_IDENTIFIER]: { info, schema } } };
      expect(extractAndValidatePaymentIdentifier(asPayload(payload)).validation.valid).toBe(false);
      expect(readPaymentId(payload)).toEqual({ ok: true, id: info.id });
    }
    const short = { required: false, id: 'short' };
    const lenient = { extensions: { [PAYMENT_IDENTIFIER]: { info: short, schema: { type: 'object' } } } };
    expect(readPaymentId(lenient).ok).toBe(false);
  });

  it('reads no id from a payload without the block', () => {
    expect(readPaymentId({ x402Version: 2 })).toEqual({ ok: true, id: null });
    expect(readPaymentId('text')).toEqual({ ok: true, id: null });
  });
});
