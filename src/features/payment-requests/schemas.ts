import {
  Amount,
  Enum,
  NullableDateTime,
  NullableText,
  Text,
  Type,
  Uuid,
} from '../../platform/http/schema-kit.ts';

export const PaymentRequestCreate = Type.Object(
  {
    account_id: Uuid(),
    amount: Amount('positive-unbounded', {
      description: 'Greater than 0; a JSON number or a decimal string.',
    }),
    currency: Type.Optional(
      NullableText({ maxLength: 12, description: "Defaults to the account's currency." }),
    ),
    expires_at: Type.Optional(NullableDateTime()),
    memo: Type.Optional(Text({ maxLength: 2000, default: '' })),
    resource: Type.Optional(
      Text({
        maxLength: 500,
        default: '',
        description: 'The endpoint this pays for; files the payment under its card.',
      }),
    ),
  },
  { $id: 'PaymentRequestCreate', title: 'PaymentRequestCreate' },
);

export const PaymentRequestOut = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    token: Type.String(),
    url: Type.String({ description: 'The payment page: serves a person and a machine.' }),
    amount: Type.String({ description: 'Eight decimals.' }),
    amount_due: Type.String({
      description:
        'What the payer is asked to send, exactly (eight decimals): the amount, lowered by a tag under one cent on a crypto account when another open request there asks for the same; paid in full once this much has arrived.',
    }),
    currency: Type.String(),
    status: Type.String({ description: 'active, paid or cancelled' }),
    created_at: Type.String({ format: 'date-time' }),
    amount_received: Type.Union([Type.String(), Type.Null()]),
    expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    memo: Type.String(),
    resource_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  },
  { title: 'PaymentRequestOut', description: 'A payment request record.' },
);

export const TokenParams = Type.Object({ token: Type.String({ minLength: 1, maxLength: 100 }) });

export const MarkPaidIn = Type.Object({
  amount: Amount('positive-unbounded'),
  reference: Text({
    minLength: 1,
    maxLength: 200,
    description: 'The bank reference; settling twice with one reference books once.',
  }),
  payer: Type.Optional(Text({ maxLength: 200, default: '' })),
});
export const SpaceTokenParams = Type.Object({
  id: Type.String({ format: 'uuid' }),
  token: Type.String({ minLength: 1, maxLength: 100 }),
});

export const RequestListQuery = Type.Object({
  status: Type.Optional(Enum(['active', 'paid', 'cancelled'] as const)),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
});
export const RequestListOut = Type.Object({
  items: Type.Array(PaymentRequestOut),
  next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'Send as ?cursor= for the next 50.' }),
});
