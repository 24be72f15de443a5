import { Amount, NullableAmount, Text, Type, Uuid } from '../../platform/http/schema-kit.ts';
import { PaymentRequestOut } from '../payment-requests/index.ts';

export const ChargeCreate = Type.Object(
  {
    client_ref: Text({
      minLength: 1,
      maxLength: 120,
      description: "The seller's own client identifier; keys the balance.",
    }),
    account_id: Uuid(),
    amount: Amount('positive'),
    currency: Type.Optional(Text({ maxLength: 8, default: 'USD' })),
    memo: Type.Optional(Text({ maxLength: 200, default: '' })),
    resource: Type.Optional(Text({ maxLength: 300, default: '' })),
    top_up_amount: Type.Optional(
      NullableAmount('positive', {
        description: 'Size of the top-up request if the balance cannot carry the call.',
      }),
    ),
  },
  { $id: 'ChargeCreate', title: 'ChargeCreate' },
);

export const ChargeOut = Type.Object(
  {
    paid: Type.Boolean(),
    client_ref: Type.String(),
    balance_usd: Type.String({ description: 'Eight decimals.' }),
    charged_usd: Type.Union([Type.String(), Type.Null()], {
      description: 'The price, spelled as sent; null when not paid.',
    }),
    entry_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    top_up: Type.Union([PaymentRequestOut, Type.Null()]),
    balance_url: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'ChargeOut', title: 'ChargeOut' },
);
