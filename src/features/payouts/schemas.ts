import {
  Amount,
  DateOnly,
  Enum,
  NullableDateTime,
  NullableText,
  NullableUuid,
  Text,
  Type,
  Uuid,
} from '../../platform/http/schema-kit.ts';
import { PAYOUT_STATUSES, POLICY_KINDS, RAILS } from './domain.ts';

const Currency = Text({ minLength: 2, maxLength: 12, pattern: '^[A-Za-z0-9]+$' });

export const PaymentCreate = Type.Object(
  {
    account_id: Uuid(),
    amount: Amount('positive'),
    currency: Type.Optional(Currency),
    payee: Text({
      minLength: 1,
      maxLength: 200,
      description: 'Who is paid (screened against the sanctions list).',
    }),
    rail: Enum(RAILS),
    destination: Type.Optional(
      Text({ maxLength: 128, description: 'chain: an address on the account’s network; book: free text.' }),
    ),
    contact_id: Type.Optional(Uuid({ description: 'bank: the contact whose requisites are paid to.' })),
    note: Type.Optional(Text({ maxLength: 500 })),
    occurred_on: Type.Optional(DateOnly()),
  },
  { $id: 'PaymentCreate' },
);

export const PaymentOut = Type.Object(
  {
    id: Uuid(),
    status: Enum(PAYOUT_STATUSES),
    account_id: Uuid(),
    amount: Type.String({ description: 'Eight decimals.' }),
    currency: Type.String(),
    rail: Enum(RAILS),
    payee: Type.String(),
    destination: Type.String(),
    contact_id: NullableUuid(),
    note: Type.String(),
    occurred_on: Type.String({ format: 'date' }),
    maker_id: Uuid(),
    approvals: Type.Integer(),
    approved_by: Type.Array(Uuid()),
    required_approvals: Type.Integer(),
    blocked_reason: NullableText({ maxLength: 64 }),
    release_reason: NullableText({ maxLength: 500 }),
    reject_reason: NullableText({ maxLength: 500 }),
    reference: NullableText({ maxLength: 140 }),
    transaction_id: NullableUuid(),
    tx_hash: NullableText({ maxLength: 66 }),
    created_at: Type.String({ format: 'date-time' }),
    approved_at: NullableDateTime(),
    executed_at: NullableDateTime(),
  },
  { $id: 'PaymentOut' },
);

export const PaymentPage = Type.Object({ items: Type.Array(PaymentOut), has_more: Type.Boolean() });

export const PaymentQuery = Type.Object({
  status: Type.Optional(Enum(PAYOUT_STATUSES)),
  starting_after: Type.Optional(Uuid()),
  limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$' })),
});

export const ReasonIn = Type.Object({ reason: Text({ minLength: 1, maxLength: 500 }) });
export const OptionalReasonIn = Type.Object({ reason: Type.Optional(Text({ maxLength: 500 })) });
export const ReferenceIn = Type.Object({ reference: Text({ minLength: 1, maxLength: 140 }) });

export const ApprovalRuleCreate = Type.Object(
  {
    min_amount: Amount('positive', { description: 'Payments of at least this amount meet the rule.' }),
    currency: Currency,
    required_approvals: Type.Integer({ minimum: 1, maximum: 5 }),
  },
  { $id: 'ApprovalRuleCreate' },
);

export const ApprovalRuleOut = Type.Object({
  id: Uuid(),
  min_amount: Type.String(),
  currency: Type.String(),
  required_approvals: Type.Integer(),
  created_at: Type.String({ format: 'date-time' }),
});

export const PolicyRuleCreate = Type.Object(
  {
    kind: Enum(POLICY_KINDS),
    amount: Type.Optional(Amount('positive')),
    currency: Type.Optional(Currency),
    destination: Type.Optional(Text({ minLength: 1, maxLength: 128 })),
    currencies: Type.Optional(Type.Array(Currency, { minItems: 1, maxItems: 50 })),
  },
  { $id: 'PolicyRuleCreate' },
);

export const PolicyRuleOut = Type.Object({
  id: Uuid(),
  kind: Enum(POLICY_KINDS),
  amount: Type.Union([Type.String(), Type.Null()]),
  currency: Type.Union([Type.String(), Type.Null()]),
  destination: Type.Union([Type.String(), Type.Null()]),
  currencies: Type.Union([Type.Array(Type.String()), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
});

export const RemovedOut = Type.Object({ id: Uuid(), removed: Type.Boolean() });

export const TransferCreate = Type.Object(
  {
    from_account_id: Uuid(),
    to_account_id: Uuid(),
    amount: Amount('positive'),
    to_amount: Type.Optional(
      Amount('positive', { description: 'What arrives, when the currencies differ.' }),
    ),
    occurred_on: Type.Optional(DateOnly()),
    note: Type.Optional(Text({ maxLength: 500 })),
  },
  { $id: 'TransferCreate' },
);

export const TransferOut = Type.Object({
  transaction_id: Uuid(),
  from_account_id: Uuid(),
  to_account_id: Uuid(),
  amount: Type.String(),
  currency: Type.String(),
  to_amount: Type.String(),
  to_currency: Type.String(),
  occurred_on: Type.String({ format: 'date' }),
  note: Type.String(),
});

export const ScreeningOut = Type.Object({
  loaded: Type.Boolean(),
  published_on: Type.Union([Type.String(), Type.Null()]),
  entries: Type.Integer(),
  loaded_at: NullableDateTime(),
  source: Type.Union([Type.String(), Type.Null()]),
  checked_at: NullableDateTime(),
  check_outcome: Type.Union([Type.String(), Type.Null()]),
  stale: Type.Boolean({ description: 'The list was published more than 7 days ago (or is undated).' }),
});
