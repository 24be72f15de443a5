import {
  Amount,
  DateOnly,
  DateTime,
  DecimalOut,
  Enum,
  NullableAmount,
  NullableDateTime,
  NullableText,
  NullableUuid,
  Text,
  Type,
  Uuid,
} from '../../platform/http/schema-kit.ts';
import { AGENT_PERMS, AGENT_STATUSES } from './domain.ts';

// The spec's §2.7 shapes (AgentMeOut … AgentWriteOut) and the app's agent and proposal bodies.
// The agent routes validate with these, and the MCP tools take their input schemas from them.

const Currency = Text({ minLength: 2, maxLength: 12, pattern: '^[A-Za-z0-9]+$' });
const Host = Text({ minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9.-]+(:[0-9]{1,5})?$' });
const Merchant = Text({ minLength: 1, maxLength: 120 });
export const TX_KINDS = ['income', 'expense', 'transfer'] as const;

export const FenceIn = Type.Object({
  x402_hosts: Type.Array(Host, { maxItems: 20, description: 'Hosts the agent may pay with x402.' }),
  allowed_merchants: Type.Array(Merchant, {
    maxItems: 20,
    description: 'Payees the agent may pay without a person.',
  }),
  per_request_usd: Amount('positive', { description: 'The most one write may spend, in USD.' }),
  daily_usd: Amount('positive', { description: 'The most the agent may spend in a UTC day, in USD.' }),
  expires_at: Type.Optional(NullableDateTime()),
});

export const AgentIssue = Type.Object(
  {
    name: Text({ minLength: 1, maxLength: 120 }),
    perms: Type.Array(Enum(AGENT_PERMS), { maxItems: AGENT_PERMS.length, uniqueItems: true }),
    account_ids: Type.Optional(
      Type.Array(Uuid(), {
        maxItems: 50,
        uniqueItems: true,
        description: 'When given, the only accounts the agent may use.',
      }),
    ),
    fence: FenceIn,
  },
  { $id: 'AgentIssue' },
);

export const AgentStatusIn = Type.Object({ status: Enum(AGENT_STATUSES) }, { $id: 'AgentStatusIn' });

const FenceOut = Type.Object({
  x402_hosts: Type.Array(Type.String()),
  allowed_merchants: Type.Array(Type.String()),
  per_request_usd: DecimalOut(),
  daily_usd: DecimalOut(),
  expires_at: Type.Union([DateTime(), Type.Null()]),
});

const AgentFields = {
  id: Uuid(),
  name: Type.String(),
  prefix: Type.String({ description: 'The first characters of the token, to tell agents apart.' }),
  status: Enum(AGENT_STATUSES),
  perms: Type.Array(Type.String()),
  account_ids: Type.Array(Uuid()),
  accounts_restricted: Type.Boolean(),
  fence: FenceOut,
  wallet_address: Type.String({ description: 'The agent’s hot wallet: fund it to let it pay.' }),
  issuer_user_id: Uuid(),
  created_at: DateTime(),
  revoked_at: Type.Union([DateTime(), Type.Null()]),
};

export const AgentOut = Type.Object(AgentFields, { $id: 'AgentOut' });
export const AgentList = Type.Object({ items: Type.Array(AgentOut) });
export const AgentIssued = Type.Object(
  {
    ...AgentFields,
    agent_id: Uuid(),
    token: Type.String({ description: 'The oat_ token. Shown once; only its hash is kept.' }),
  },
  { $id: 'AgentIssued' },
);

export const AgentParams = Type.Object({ id: Uuid(), aid: Uuid() });
export const ProposalParams = Type.Object({ id: Uuid(), pid: Uuid() });
export const ProposalQuery = Type.Object({
  status: Type.Optional(Enum(['applied', 'pending', 'approving', 'approved', 'rejected', 'lapsed'] as const)),
});
export const RejectIn = Type.Object({ reason: Text({ minLength: 1, maxLength: 500 }) });

export const ProposalOut = Type.Object(
  {
    id: Uuid(),
    agent_id: Uuid(),
    agent_name: Type.String(),
    kind: Type.String(),
    input: Type.Record(Type.String(), Type.Unknown()),
    message: Type.String(),
    status: Type.String(),
    result: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
    decided_by: Type.Union([Uuid(), Type.Null()]),
    decided_at: Type.Union([DateTime(), Type.Null()]),
    reject_reason: Type.Union([Type.String(), Type.Null()]),
    created_at: DateTime(),
  },
  { $id: 'ProposalOut' },
);
export const ProposalList = Type.Object({ items: Type.Array(ProposalOut) });

/** Names are stored trimmed; these patterns refuse what would trim to too little (the tables' CHECKs). */
const NOT_BLANK = '\\S';
const TWO_VISIBLE = '\\S[\\s\\S]*\\S';

export const CategoryIn = Type.Object({
  name: Text({ minLength: 1, maxLength: 80, pattern: NOT_BLANK, description: 'Not blank; trimmed.' }),
  kind: Enum(TX_KINDS),
});
export const CategoryOut = Type.Object(
  { id: Uuid(), name: Type.String(), kind: Type.String(), created_at: DateTime() },
  { $id: 'CategoryOut' },
);
export const CategoryList = Type.Object({ items: Type.Array(CategoryOut) });

// ---- The agent API (spec §2.7) ----

export const AgentWriteOut = Type.Object(
  {
    applied: Type.Boolean(),
    message: Type.String({ default: '' }),
    proposal_id: Type.Union([Uuid(), Type.Null()]),
    result: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
  },
  { $id: 'AgentWriteOut' },
);

export const AgentSpaceOut = Type.Object(
  {
    id: Uuid(),
    name: Type.String(),
    kind: Type.String(),
    base_currency: Type.String(),
    preset: Type.String(),
    perms: Type.Array(Type.String()),
    account_ids: Type.Optional(Type.Array(Uuid())),
    accounts_restricted: Type.Optional(Type.Boolean({ default: false })),
    number_format: Type.Optional(Type.String({ default: 'dot_comma' })),
    accounts: Type.Optional(
      Type.Array(
        Type.Object({
          id: Uuid(),
          name: Type.String(),
          kind: Type.String(),
          currency: Type.String(),
          address: Type.Union([Type.String(), Type.Null()], {
            description: 'Masked: the last four characters.',
          }),
        }),
      ),
    ),
  },
  { $id: 'AgentSpaceOut' },
);

export const AgentMeOut = Type.Object(
  {
    agent_id: Uuid(),
    name: Type.String(),
    status: Enum(AGENT_STATUSES),
    observing: Type.Boolean(),
    owner_name: Type.String(),
    masked: Type.Boolean({ default: true }),
    spaces: Type.Array(AgentSpaceOut, { default: [] }),
    wallet_address: Type.Optional(Type.String({ description: 'Masked: the last four characters.' })),
    fence: Type.Optional(FenceOut),
  },
  { $id: 'AgentMeOut' },
);

export const AgentSpaceParams = Type.Object({ space_id: Uuid() });
export const AgentTxParams = Type.Object({ space_id: Uuid(), id: Uuid() });

export const AgentPaymentIn = Type.Object(
  {
    account_id: Uuid(),
    amount: Amount('positive'),
    payee: Text({ minLength: 1, maxLength: 200 }),
    occurred_on: DateOnly(),
    category_id: Type.Optional(NullableUuid()),
    currency: Type.Optional(NullableText({ minLength: 2, maxLength: 12, pattern: '^[A-Za-z0-9]+$' })),
    note: Type.Optional(Text({ maxLength: 500, default: '' })),
  },
  { $id: 'AgentPaymentIn' },
);

export const AgentTxIn = Type.Object(
  {
    account_id: Uuid(),
    kind: Enum(TX_KINDS),
    amount: Amount('positive'),
    occurred_on: DateOnly(),
    category_id: Type.Optional(NullableUuid()),
    note: Type.Optional(Text({ maxLength: 500, default: '' })),
    payee: Type.Optional(Text({ maxLength: 200, default: '' })),
  },
  { $id: 'AgentTxIn' },
);

export const AgentTxPatch = Type.Object(
  {
    category_id: Type.Optional(NullableUuid()),
    clear_category: Type.Optional(Type.Boolean({ default: false })),
    note: Type.Optional(NullableText({ maxLength: 500 })),
    payee: Type.Optional(NullableText({ maxLength: 200 })),
  },
  { $id: 'AgentTxPatch' },
);

export const AgentChainPaymentIn = Type.Object(
  {
    account_id: Uuid(),
    amount: Amount('positive'),
    chain: Text({ minLength: 2, maxLength: 24 }),
    destination: Text({ minLength: 8, maxLength: 256 }),
    currency: Currency,
    occurred_on: DateOnly(),
    payee: Text({ minLength: 1, maxLength: 200 }),
    note: Type.Optional(Text({ maxLength: 500 })),
  },
  { $id: 'AgentChainPaymentIn' },
);

export const AgentGrantChangeIn = Type.Object(
  {
    allowed_merchants: Type.Optional(Type.Union([Type.Array(Merchant, { maxItems: 20 }), Type.Null()])),
    x402_hosts: Type.Optional(Type.Union([Type.Array(Host, { maxItems: 20 }), Type.Null()])),
    daily_amount_cap_usd: Type.Optional(NullableAmount('positive')),
    expires_at: Type.Optional(NullableDateTime()),
    reason: Type.Optional(Text({ maxLength: 200, default: '' })),
  },
  { $id: 'AgentGrantChangeIn' },
);

export const AgentWalletTransferIn = Type.Object(
  {
    chain: Text({ minLength: 3, maxLength: 12, description: 'evm, or the network’s own name.' }),
    asset: Text({ minLength: 3, maxLength: 12, description: 'The token, e.g. USDC.' }),
    amount: Amount('positive'),
    destination: Text({ minLength: 8, maxLength: 128 }),
    network: Type.Optional(Text({ maxLength: 24, default: 'base' })),
    payee: Type.Optional(Text({ maxLength: 200, default: '' })),
  },
  { $id: 'AgentWalletTransferIn' },
);

export const AgentWalletOut = Type.Object(
  {
    address: Type.String({ description: 'The agent’s hot wallet; fund it to let the agent pay.' }),
    balances: Type.Array(
      Type.Object({
        network: Type.String(),
        asset: Type.String(),
        amount: DecimalOut(),
        native: DecimalOut({ description: 'The chain’s own coin, for gas it never needs to pay.' }),
      }),
    ),
  },
  { $id: 'AgentWalletOut' },
);

export const AgentX402In = Type.Object(
  { url: Text({ minLength: 8, maxLength: 2000, description: 'Public https (loopback in development).' }) },
  { $id: 'AgentX402In' },
);

export const CardIntentOpenIn = Type.Object(
  {
    merchant: Text({
      minLength: 2,
      maxLength: 120,
      pattern: TWO_VISIBLE,
      description: 'At least two characters once trimmed.',
    }),
    purpose: Text({ minLength: 1, maxLength: 200 }),
    ceiling_usd: Type.Unsafe<number | string>({
      type: ['number', 'string'],
      exclusiveMinimum: 0,
      maximum: 100000,
      pattern: '^[0-9]{1,6}(\\.[0-9]{1,2})?$',
      description: 'The most the card may pay, in USD: a number, or a string with at most two decimals.',
    }),
    kind: Type.Optional(Enum(['one_off', 'recurring'] as const, { default: 'one_off' })),
    period: Type.Optional(
      Type.Unsafe<'month' | 'year' | null>({ type: ['string', 'null'], enum: ['month', 'year', null] }),
    ),
    months: Type.Optional(Type.Unsafe<number | null>({ type: ['integer', 'null'], minimum: 1, maximum: 12 })),
    expires_in_hours: Type.Optional(
      Type.Unsafe<number | null>({ type: ['integer', 'null'], minimum: 1, maximum: 720 }),
    ),
    category_id: Type.Optional(NullableUuid()),
  },
  { $id: 'CardIntentOpenIn' },
);

export const CardIntentOut = Type.Object(
  {
    id: Uuid(),
    agent_id: Uuid(),
    merchant: Type.String(),
    purpose: Type.String(),
    ceiling_usd: DecimalOut(),
    kind: Type.String(),
    period: Type.Union([Type.String(), Type.Null()]),
    months: Type.Union([Type.Integer(), Type.Null()]),
    category_id: Type.Union([Uuid(), Type.Null()]),
    status: Type.String(),
    expires_at: Type.Union([DateTime(), Type.Null()]),
    created_at: DateTime(),
    matched_entry_ids: Type.Array(Uuid()),
  },
  { $id: 'CardIntentOut' },
);
export const CardIntentList = Type.Object({ items: Type.Array(CardIntentOut) });
