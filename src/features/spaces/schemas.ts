import { CursorPage, CursorParam, Enum, Text, Type } from '../../platform/http/schema-kit.ts';
import { PLANS, ROLES } from './domain.ts';

export const CurrencyCode = (description = 'A currency or token code, 2 to 12 letters or digits.') =>
  Text({ minLength: 2, maxLength: 12, pattern: '^[A-Za-z0-9]+$', description });

export const SpaceCreate = Type.Object({
  name: Text({ minLength: 1, maxLength: 120 }),
  base_currency: CurrencyCode(),
  plan: Type.Optional(Enum(PLANS, { default: 'free' })),
});

export const SpacePatch = Type.Object({
  name: Type.Optional(Text({ minLength: 1, maxLength: 120 })),
  plan: Type.Optional(Enum(PLANS)),
  subscription_packs: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
  integration_enabled: Type.Optional(Type.Boolean()),
  payments_enabled: Type.Optional(Type.Boolean()),
});

export const SpaceOut = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  base_currency: Type.String(),
  plan: Type.String(),
  subscription_packs: Type.Integer(),
  integration_enabled: Type.Boolean(),
  payments_enabled: Type.Boolean(),
  public_handle: Type.String(),
  role: Type.String({ description: "The caller's role in this space." }),
  created_at: Type.String({ format: 'date-time' }),
});

export const SpaceList = CursorPage(SpaceOut);

export const SpaceParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
export const MemberParams = Type.Object({
  id: Type.String({ format: 'uuid' }),
  user_id: Type.String({ format: 'uuid' }),
});

export const MemberAdd = Type.Object({
  email: Text({ maxLength: 200, format: 'email' }),
  role: Enum(ROLES),
});
export const MemberPatch = Type.Object({ role: Enum(ROLES) });

export const MemberOut = Type.Object({
  user_id: Type.String({ format: 'uuid' }),
  email: Type.String(),
  name: Type.String(),
  role: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
});
export const MemberList = CursorPage(MemberOut);
/** `?cursor=` of the spaces and members lists. */
export const ListQuery = Type.Object({ cursor: CursorParam });
