import { SCOPES } from '../../platform/http/context.ts';
import { CursorPage, CursorParam, Enum, NullableText, Text, Type } from '../../platform/http/schema-kit.ts';

export const KeyIssue = Type.Object({
  name: Text({ minLength: 1, maxLength: 120 }),
  scopes: Type.Array(Enum(SCOPES), { minItems: 1, maxItems: SCOPES.length, uniqueItems: true }),
  webhook_url: Type.Optional(
    NullableText({ maxLength: 2000, description: 'Public https address for key webhooks.' }),
  ),
  lifetime_days: Type.Optional(
    Type.Unsafe<30 | 90 | 180 | 365>({
      type: 'integer',
      enum: [30, 90, 180, 365],
      description: 'Default 90 with the transactions scope.',
    }),
  ),
  push_source: Type.Optional(
    Text({
      minLength: 1,
      maxLength: 80,
      description: 'Required with the transactions scope: the push source the key files into.',
    }),
  ),
});

const KeyFields = {
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  prefix: Type.String({ description: 'The first characters of the key, to tell keys apart.' }),
  scopes: Type.Array(Type.String()),
  webhook_url: Type.Union([Type.String(), Type.Null()]),
  push_source: Type.Union([Type.String(), Type.Null()]),
  issuer_user_id: Type.String({ format: 'uuid' }),
  status: Type.String({ description: 'active, revoked or expired' }),
  created_at: Type.String({ format: 'date-time' }),
  expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  revoked_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  last_used_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
};

export const KeyOut = Type.Object(KeyFields);
export const KeyList = CursorPage(KeyOut);
export const KeyListQuery = Type.Object({ cursor: CursorParam });

export const KeyIssued = Type.Object({
  ...KeyFields,
  key: Type.String({ description: 'The integration key. Shown once; only its hash is kept.' }),
  webhook_secret: Type.String({ description: 'Signs key webhooks. Shown once; kept encrypted.' }),
});

export const KeyParams = Type.Object({
  id: Type.String({ format: 'uuid' }),
  key_id: Type.String({ format: 'uuid' }),
});

export const PingOut = Type.Object(
  { space_id: Type.String({ format: 'uuid' }), scopes: Type.Array(Type.String()) },
  { $id: 'PingOut', title: 'PingOut' },
);
