import {
  Amount,
  Enum,
  NullableAmount,
  NullableDateOnly,
  NullableText,
  Text,
  Type,
} from '../../platform/http/schema-kit.ts';
import { RequisitesIn, RequisitesOut } from '../contacts/index.ts';

export const ACCOUNT_KINDS = ['bank', 'card', 'cash', 'crypto', 'platform'] as const;

export const AccountCreate = Type.Object(
  {
    kind: Enum(ACCOUNT_KINDS),
    name: Text({ minLength: 1, maxLength: 120 }),
    currency: Text({ minLength: 2, maxLength: 12, description: 'Currency or token code (USD, EUR, USDC).' }),
    address: Type.Optional(
      NullableText({ maxLength: 128, description: 'For crypto accounts: the pay-to address.' }),
    ),
    chain: Type.Optional(
      NullableText({ maxLength: 24, description: 'Chain family; evm by default for crypto.' }),
    ),
    network: Type.Optional(
      NullableText({ maxLength: 24, description: 'base, ethereum, polygon, their testnets, or local.' }),
    ),
    color: Type.Optional(NullableText({ maxLength: 9, description: 'A hex colour such as #1a7f5a.' })),
    details: Type.Optional(Text({ maxLength: 2000, default: '' })),
    requisites: Type.Optional(RequisitesIn),
    external_signer: Type.Optional(Type.Boolean({ default: false })),
    opening_acquired_on: Type.Optional(NullableDateOnly()),
    opening_balance: Type.Optional(Amount('signed', { description: 'Between -1e16 and 1e16; default 0.' })),
    opening_cost: Type.Optional(NullableAmount('positive')),
  },
  { $id: 'AccountCreate', title: 'AccountCreate' },
);

export const AccountOut = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    kind: Type.String(),
    name: Type.String(),
    currency: Type.String(),
    address: Type.Union([Type.String(), Type.Null()]),
    chain: Type.Union([Type.String(), Type.Null()]),
    network: Type.Union([Type.String(), Type.Null()]),
    color: Type.Union([Type.String(), Type.Null()]),
    details: Type.String(),
    requisites: RequisitesOut,
    external_signer: Type.Boolean(),
    opening_acquired_on: Type.Union([Type.String({ format: 'date' }), Type.Null()]),
    opening_balance: Type.String({ description: 'Decimal string, eight places.' }),
    opening_cost: Type.Union([Type.String(), Type.Null()]),
    balance: Type.String({ description: 'Decimal string, eight places.' }),
    address_proven: Type.Boolean({ description: 'The space proved it controls the address.' }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'AccountOut', title: 'AccountOut' },
);

export const AccountListQuery = Type.Object({
  limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$', description: '1 to 500; default 100.' })),
  starting_after: Type.Optional(
    Type.String({ format: 'uuid', description: 'The last id of the previous page.' }),
  ),
});

export const AccountList = Type.Object({ items: Type.Array(AccountOut), has_more: Type.Boolean() });

/** A change to an account: the fields given change; `requisites: null` removes them. */
export const AccountPatch = Type.Object(
  {
    name: Type.Optional(Text({ minLength: 1, maxLength: 120 })),
    color: Type.Optional(NullableText({ maxLength: 9, description: 'A hex colour such as #1a7f5a.' })),
    details: Type.Optional(Text({ maxLength: 2000 })),
    requisites: Type.Optional(RequisitesIn),
  },
  { $id: 'AccountPatch', title: 'AccountPatch' },
);
