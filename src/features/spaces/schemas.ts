import { CursorPage, CursorParam, EmailOrEmpty, Enum, Text, Type } from '../../platform/http/schema-kit.ts';
import { COUNTRY_CODES, HANDLE_PATTERN, PLANS, PREFIX_PATTERN, ROLES } from './domain.ts';

export const CurrencyCode = (description = 'A currency or token code, 2 to 12 letters or digits.') =>
  Text({ minLength: 2, maxLength: 12, pattern: '^[A-Za-z0-9]+$', description });

const TIME_ZONE_WORDS =
  'An IANA time zone name such as Europe/Berlin or UTC: the zone the book writes moments in.';
const LOCALE_WORDS = 'A BCP 47 language tag such as en-GB or ja-JP: how the book writes dates and numbers.';
const TimeZone = (description = TIME_ZONE_WORDS) => Text({ minLength: 1, maxLength: 64, description });
const Locale = (description = LOCALE_WORDS) => Text({ minLength: 2, maxLength: 35, description });

export const SpaceCreate = Type.Object({
  name: Text({ minLength: 1, maxLength: 120 }),
  base_currency: CurrencyCode(),
  plan: Type.Optional(Enum(PLANS, { default: 'free' })),
  time_zone: Type.Optional(TimeZone(`${TIME_ZONE_WORDS} UTC when left out.`)),
  locale: Type.Optional(
    Locale(
      `${LOCALE_WORDS} When left out, the first language of the request's Accept-Language this server can write dates in, else en.`,
    ),
  ),
});

export const SpacePatch = Type.Object({
  name: Type.Optional(Text({ minLength: 1, maxLength: 120 })),
  plan: Type.Optional(Enum(PLANS)),
  subscription_packs: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
  integration_enabled: Type.Optional(Type.Boolean()),
  payments_enabled: Type.Optional(Type.Boolean()),
  time_zone: Type.Optional(TimeZone()),
  locale: Type.Optional(Locale()),
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
  time_zone: Type.String({ description: 'The IANA time zone the book writes moments in.' }),
  locale: Type.String({ description: 'The BCP 47 locale the book writes dates and numbers in.' }),
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

const profileText = (maxLength: number, description: string) =>
  Type.Optional(Text({ maxLength, description }));

/** ISO 3166-1 alpha-2 in capitals, or empty while unknown. */
const Country = Type.Unsafe<string>({
  type: 'string',
  enum: ['', ...COUNTRY_CODES],
  description: 'ISO 3166-1 alpha-2 country code in capitals ("DE"), or empty.',
});

/** The seller's postal address, in the parts e-invoices and bank files ask for. */
export const ProfileAddress = Type.Object({
  line1: profileText(200, 'Street and number.'),
  line2: profileText(200, 'An additional line (building, floor, care of).'),
  postal_code: profileText(20, 'The postal code.'),
  city: profileText(100, 'The city.'),
  region: profileText(100, 'The region, state or province.'),
  country: Type.Optional(Country),
});

/**
 * A change to the seller profile: fields left out stay as they are; an address replaces the
 * whole address (its parts left out become empty).
 */
export const ProfilePatch = Type.Object({
  legal_name: profileText(200, 'The registered name of the business.'),
  trading_name: profileText(200, 'The name the business trades under; shown to clients and payers.'),
  address: Type.Optional(ProfileAddress),
  vat_id: profileText(64, 'VAT identification number, with its country prefix ("DE123456789").'),
  tax_number: profileText(64, 'The national tax number, where it is not a VAT id.'),
  registration_id: profileText(64, 'Company registration id (court register, Companies House…).'),
  email: Type.Optional(
    EmailOrEmpty(200, { description: 'Where clients write for support; empty for none.' }),
  ),
  phone: Type.Optional(Text({ maxLength: 40, pattern: '^[0-9+()./ -]*$', description: 'A phone number.' })),
  website: Type.Optional(
    Text({ maxLength: 200, pattern: '^(https?://[^\\s]+)?$', description: 'An http(s) address, or empty.' }),
  ),
  payment_terms_days: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 365, description: 'Days from issue to due date by default.' }),
  ),
  invoice_footer: profileText(1000, 'Text printed at the foot of every document.'),
  public_handle: Type.Optional(
    Text({
      minLength: 3,
      maxLength: 48,
      pattern: HANDLE_PATTERN,
      description:
        "The book's name in public addresses: lower-case letters and digits in hyphen-separated runs. The old handle stops answering.",
    }),
  ),
});

export const ProfileOut = Type.Object({
  space_id: Type.String({ format: 'uuid' }),
  legal_name: Type.String(),
  trading_name: Type.String(),
  display_name: Type.String({ description: 'Trading name, else legal name, else the book name.' }),
  address: Type.Object({
    line1: Type.String(),
    line2: Type.String(),
    postal_code: Type.String(),
    city: Type.String(),
    region: Type.String(),
    country: Type.String(),
  }),
  vat_id: Type.String(),
  tax_number: Type.String(),
  registration_id: Type.String(),
  email: Type.String(),
  phone: Type.String(),
  website: Type.String(),
  payment_terms_days: Type.Integer(),
  invoice_footer: Type.String(),
  public_handle: Type.String(),
});

const KindNumbering = Type.Object({
  prefix: Type.Optional(
    Text({
      maxLength: 20,
      pattern: PREFIX_PATTERN,
      description: 'Letters, digits and / . _ - ("INV-", "2026/").',
    }),
  ),
  next_number: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 999_999_999, description: 'The number the next document gets.' }),
  ),
});

/** A change to the numbering of invoices, quotes and credit notes; kinds left out stay. */
export const NumberingPatch = Type.Object({
  invoice: Type.Optional(KindNumbering),
  quote: Type.Optional(KindNumbering),
  credit_note: Type.Optional(KindNumbering),
});

const KindNumberingOut = Type.Object({
  prefix: Type.String(),
  next_number: Type.Integer(),
  next: Type.String({ description: 'The next generated number, as it will read.' }),
});

export const NumberingOut = Type.Object({
  invoice: KindNumberingOut,
  quote: KindNumberingOut,
  credit_note: KindNumberingOut,
});

export const InvitationCreate = Type.Object({
  email: Text({ maxLength: 200, format: 'email', description: 'Where the invitation is mailed.' }),
  role: Enum(ROLES, { description: 'The role the invited person joins with.' }),
});
export const InvitationOut = Type.Object({
  id: Type.String({ format: 'uuid' }),
  email: Type.String(),
  role: Type.String(),
  invited_by: Type.String({ format: 'uuid', description: 'The user who sent the invitation.' }),
  created_at: Type.String({ format: 'date-time' }),
  expires_at: Type.String({ format: 'date-time' }),
});
export const InvitationList = Type.Object({ items: Type.Array(InvitationOut) });
export const InvitationParams = Type.Object({
  id: Type.String({ format: 'uuid' }),
  invitation_id: Type.String({ format: 'uuid' }),
});
export const InvitationAccept = Type.Object({
  token: Text({ minLength: 1, maxLength: 200, description: 'The token of the invitation link.' }),
});
export const InvitationJoined = Type.Object({
  space_id: Type.String({ format: 'uuid' }),
  role: Type.String({ description: 'The role the caller joined with.' }),
});
