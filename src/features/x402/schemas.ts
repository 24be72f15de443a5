import { Amount, Text, Type, Uuid } from '../../platform/http/schema-kit.ts';

// The facilitator's wire shapes (x402 v2). Payloads are checked further by the exact scheme;
// these only bound sizes and types so nothing malformed reaches it.

// Typed as a record so the handler reads its fields as unknowns; the JSON schema is a plain object.
const Loose = (description: string) =>
  Type.Unsafe<Record<string, unknown>>(Type.Object({}, { additionalProperties: true, description }));

export const RequirementsIn = Type.Object(
  {
    scheme: Text({ minLength: 1, maxLength: 40 }),
    network: Text({ minLength: 1, maxLength: 100 }),
    asset: Text({ minLength: 1, maxLength: 100 }),
    amount: Text({ minLength: 1, maxLength: 80 }),
    payTo: Text({ minLength: 1, maxLength: 100 }),
    maxTimeoutSeconds: Type.Integer({ minimum: 0, maximum: 86_400 }),
    extra: Type.Optional(
      Loose('Scheme-specific data: for exact on EVM, the token EIP-712 name and version.'),
    ),
  },
  { additionalProperties: true },
);

export const EnvelopeIn = Type.Object(
  {
    x402Version: Type.Integer({ minimum: 1, maximum: 100 }),
    paymentPayload: Loose("The payer's PaymentPayload, as sent in PAYMENT-SIGNATURE."),
    paymentRequirements: RequirementsIn,
  },
  { additionalProperties: true },
);

export const VerifyOut = Type.Object(
  {
    isValid: Type.Boolean(),
    invalidReason: Type.Optional(Type.String()),
    invalidMessage: Type.Optional(Type.String()),
    payer: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

export const SettleOut = Type.Object(
  {
    success: Type.Boolean(),
    errorReason: Type.Optional(Type.String()),
    errorMessage: Type.Optional(Type.String()),
    payer: Type.Optional(Type.String()),
    transaction: Type.String(),
    network: Type.String(),
  },
  { additionalProperties: true },
);

export const SupportedOut = Type.Object({
  kinds: Type.Array(
    Type.Object(
      { x402Version: Type.Integer(), scheme: Type.String(), network: Type.String() },
      { additionalProperties: true },
    ),
  ),
  extensions: Type.Array(Type.String()),
  signers: Type.Record(Type.String(), Type.Array(Type.String())),
});

export const DiscoveryQuery = Type.Object(
  {
    type: Type.Optional(Text({ maxLength: 20, description: 'Only `http` resources are listed here.' })),
    // Query strings are text: the patterns bound them (limit 1–100, default 20; offset from 0).
    limit: Type.Optional(
      Type.String({ pattern: '^(100|[1-9][0-9]?)$', description: '1 to 100; default 20.' }),
    ),
    offset: Type.Optional(Type.String({ pattern: '^(0|[1-9][0-9]{0,6})$', description: 'Default 0.' })),
  },
  { additionalProperties: true },
);

export const DiscoveryOut = Type.Object({
  x402Version: Type.Integer(),
  items: Type.Array(
    Type.Object({
      resource: Type.String(),
      type: Type.String(),
      x402Version: Type.Integer(),
      accepts: Type.Array(Type.Object({}, { additionalProperties: true })),
      lastUpdated: Type.String({ format: 'date-time' }),
      description: Type.String(),
      extensions: Type.Optional(
        Type.Object(
          { bazaar: Type.Object({}, { additionalProperties: true }) },
          { description: "The card's bazaar extension: its method and input and output schemas." },
        ),
      ),
    }),
  ),
  pagination: Type.Object({ limit: Type.Integer(), offset: Type.Integer(), total: Type.Integer() }),
});

export const CreditCallIn = Type.Object(
  {
    sign_in: Text({
      minLength: 1,
      maxLength: 8000,
      description: "The payer's SIGN-IN-WITH-X header, as the x402 client sent it (base64 JSON).",
    }),
    resource: Text({
      minLength: 1,
      maxLength: 300,
      description:
        'The absolute URL of the resource called; the sign-in must be bound to its origin. Files the charge under its endpoint card.',
    }),
    account_id: Uuid(),
    amount: Amount('positive', { description: 'The price of this call, in USD.' }),
    memo: Type.Optional(Text({ maxLength: 200, default: '' })),
  },
  { $id: 'CreditCallIn', title: 'CreditCallIn' },
);
