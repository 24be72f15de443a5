import {
  Enum,
  NullableText,
  NullableUuid,
  type Static,
  Text,
  type TSchema,
  Type,
} from '../../platform/http/schema-kit.ts';
import { ACH_ACCOUNT_TYPES, REQUISITES_SCHEMES, type RequisitesInput } from './domain.ts';

// Limits are the spec's (§2.4); the limits of requisites fields, which the spec leaves out, are
// our choice and all sit in LIMITS. Checksums (IBAN, ABA, BIC) live in domain.ts; the schema
// checks shape only.

export const LIMITS = {
  name: 120,
  address: 2000,
  addresses: 20,
  compliance: 120,
  country: 80,
  email: 200,
  kind: 16,
  note: 2000,
  phone: 40,
  reg_number: 64,
  tags: 20,
  tag: 40,
  tax_id: 64,
  addressLine: 256,
  chain: 24,
  network: 24,
  details: 2000,
  label: 80,
  holder: 200,
  bank_name: 200,
  bank_address: 2000,
  swift_account_number: 34,
  // 34 characters of IBAN with a space after every four, as it is printed.
  iban: 42,
  bic: 11,
} as const;

const holder = Text({
  minLength: 1,
  maxLength: LIMITS.holder,
  description: 'The account holder as the bank knows them.',
});

const SCHEME_FIELDS: Record<(typeof REQUISITES_SCHEMES)[number], TSchema> = {
  sepa: Type.Object({
    iban: Text({
      minLength: 1,
      maxLength: LIMITS.iban,
      description: 'Spaces and lower case are accepted; stored compact, upper case.',
    }),
    bic: Type.Optional(NullableText({ maxLength: LIMITS.bic, description: '8 or 11 characters.' })),
    holder,
  }),
  swift: Type.Object({
    account_number: Text({
      minLength: 1,
      maxLength: LIMITS.swift_account_number,
      description: 'Letters and digits, or an IBAN.',
    }),
    swift_bic: Text({ minLength: 1, maxLength: LIMITS.bic, description: '8 or 11 characters.' }),
    holder,
    bank_name: Type.Optional(NullableText({ maxLength: LIMITS.bank_name })),
    bank_address: Type.Optional(NullableText({ maxLength: LIMITS.bank_address })),
  }),
  uk: Type.Object({
    account_number: Text({ maxLength: 8, pattern: '^[0-9]{8}$', description: 'Exactly 8 digits.' }),
    sort_code: Text({
      maxLength: 8,
      pattern: '^(?:[0-9]{6}|[0-9]{2}-[0-9]{2}-[0-9]{2})$',
      description: '123456 or 12-34-56; stored as 6 digits.',
    }),
    holder,
  }),
  us_ach: Type.Object({
    account_number: Text({ maxLength: 17, pattern: '^[0-9]{4,17}$', description: '4 to 17 digits.' }),
    routing_number: Text({
      maxLength: 9,
      pattern: '^[0-9]{9}$',
      description: '9 digits with a valid ABA checksum.',
    }),
    holder,
    account_type: Enum(ACH_ACCOUNT_TYPES),
  }),
};

/**
 * Requisites are discriminated by `scheme` with if/then rather than anyOf, so a mistake in one
 * scheme's fields is reported once, at its own path, instead of once per scheme.
 */
export const RequisitesIn = Type.Unsafe<RequisitesInput | null>({
  type: ['object', 'null'],
  required: ['scheme'],
  properties: {
    scheme: Enum(REQUISITES_SCHEMES, { description: 'Which fields follow: sepa, swift, uk or us_ach.' }),
  },
  allOf: REQUISITES_SCHEMES.map((scheme) => ({
    if: { type: 'object', required: ['scheme'], properties: { scheme: { const: scheme } } },
    // biome-ignore lint/suspicious/noThenProperty: this is JSON Schema's if/then, not a promise.
    then: SCHEME_FIELDS[scheme],
  })),
  description: 'Bank requisites in one of four schemes, or null.',
});

export const ContactAddressIn = Type.Object(
  {
    address: Type.Optional(
      Text({
        maxLength: LIMITS.addressLine,
        default: '',
        description: 'A wallet address, or a postal line.',
      }),
    ),
    chain: Type.Optional(NullableText({ maxLength: LIMITS.chain })),
    details: Type.Optional(Text({ maxLength: LIMITS.details, default: '' })),
    is_primary: Type.Optional(
      Type.Boolean({
        default: false,
        description: 'At most one; when none is marked, the first address is primary.',
      }),
    ),
    label: Type.Optional(Text({ maxLength: LIMITS.label, default: '' })),
    network: Type.Optional(NullableText({ maxLength: LIMITS.network })),
    requisites: Type.Optional(RequisitesIn),
  },
  { title: 'ContactAddressIn' },
);

/** An empty string or an email address; if/then keeps the empty case out of the error list. */
const emailOrEmpty = (extra: { default?: string }) =>
  Type.Unsafe<string>({
    type: 'string',
    maxLength: LIMITS.email,
    ...extra,
    if: { type: 'string', minLength: 1 },
    // biome-ignore lint/suspicious/noThenProperty: this is JSON Schema's if/then, not a promise.
    then: { type: 'string', format: 'email' },
    description: 'An email address, or empty.',
  });
const Email = emailOrEmpty({ default: '' });

const optionalText = (maxLength: number, description?: string) =>
  Type.Optional(Text({ maxLength, default: '', ...(description === undefined ? {} : { description }) }));

export const ContactCreate = Type.Object(
  {
    name: Text({ minLength: 1, maxLength: LIMITS.name }),
    address: optionalText(LIMITS.address, 'Postal address.'),
    addresses: Type.Optional(Type.Array(ContactAddressIn, { maxItems: LIMITS.addresses, default: [] })),
    compliance: optionalText(LIMITS.compliance),
    country: optionalText(LIMITS.country),
    email: Type.Optional(Email),
    identity_id: Type.Optional(NullableUuid()),
    kind: Type.Optional(
      Text({ maxLength: LIMITS.kind, default: 'person', description: 'person by default; company, etc.' }),
    ),
    note: optionalText(LIMITS.note),
    phone: optionalText(LIMITS.phone),
    reg_number: optionalText(LIMITS.reg_number, 'Company registration number.'),
    save_to_book: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          "true lists the contact in the space's shared address book; false keeps it for this integration, usable by id.",
      }),
    ),
    tags: Type.Optional(
      Type.Array(Text({ minLength: 1, maxLength: LIMITS.tag }), {
        maxItems: LIMITS.tags,
        default: [],
        description: 'Each 1 to 40 characters.',
      }),
    ),
    tax_id: optionalText(LIMITS.tax_id),
    whitelisted: Type.Optional(Type.Boolean({ default: false })),
  },
  { $id: 'ContactCreate', title: 'ContactCreate' },
);

const NullableString = () => Type.Union([Type.String(), Type.Null()]);

export const RequisitesOut = Type.Union(
  [
    Type.Object({
      scheme: Type.Literal('sepa'),
      iban: Type.String(),
      bic: NullableString(),
      holder: Type.String(),
    }),
    Type.Object({
      scheme: Type.Literal('swift'),
      account_number: Type.String(),
      swift_bic: Type.String(),
      holder: Type.String(),
      bank_name: NullableString(),
      bank_address: NullableString(),
    }),
    Type.Object({
      scheme: Type.Literal('uk'),
      account_number: Type.String(),
      sort_code: Type.String(),
      holder: Type.String(),
    }),
    Type.Object({
      scheme: Type.Literal('us_ach'),
      account_number: Type.String(),
      routing_number: Type.String(),
      holder: Type.String(),
      account_type: Type.String(),
    }),
    Type.Null(),
  ],
  { description: 'Normalised: IBAN and BIC compact and upper case, sort code as 6 digits.' },
);

export const ContactAddressOut = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    label: Type.String(),
    address: Type.String(),
    chain: NullableString(),
    details: Type.String(),
    is_primary: Type.Boolean(),
    network: NullableString(),
    requisites: RequisitesOut,
  },
  { title: 'ContactAddressOut' },
);

export const ScreeningSummary = Type.Object({
  verdict: NullableString(),
  checked_at: Type.String({ format: 'date-time' }),
  hits_open: Type.Integer(),
  registry_checked: Type.Boolean(),
  hits_more: Type.Integer(),
  registry_found: Type.Union([Type.Boolean(), Type.Null()]),
});

export const ContactOut = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    note: Type.String(),
    kind: Type.String(),
    whitelisted: Type.Boolean(),
    compliance: Type.String(),
    addresses: Type.Array(ContactAddressOut),
    address: Type.String(),
    country: Type.String(),
    email: Type.String(),
    phone: Type.String(),
    reg_number: Type.String(),
    tax_id: Type.String(),
    tax_id_expected_format: Type.String(),
    collection_tone: NullableString(),
    identity_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    last_paid_on: Type.Union([Type.String({ format: 'date' }), Type.Null()]),
    last_paid_usd: NullableString(),
    screening: Type.Union([ScreeningSummary, Type.Null()]),
    tags: Type.Array(Type.String()),
    whitelist_reset: Type.Boolean(),
    save_to_book: Type.Boolean({
      description: "Whether the contact is listed in the space's shared address book.",
    }),
  },
  { $id: 'ContactOut', title: 'ContactOut' },
);

export type ContactCreateBody = Static<typeof ContactCreate>;

const changedText = (maxLength: number) => Type.Optional(Text({ maxLength }));

/**
 * A contact's edit: each field given replaces the one held, a field left out stays as it is
 * (no defaults here, unlike ContactCreate). `addresses` replaces the whole list, in order.
 */
export const ContactPatch = Type.Object(
  {
    name: Type.Optional(Text({ minLength: 1, maxLength: LIMITS.name })),
    kind: Type.Optional(Text({ minLength: 1, maxLength: LIMITS.kind })),
    email: Type.Optional(emailOrEmpty({})),
    phone: changedText(LIMITS.phone),
    address: changedText(LIMITS.address),
    country: changedText(LIMITS.country),
    reg_number: changedText(LIMITS.reg_number),
    tax_id: changedText(LIMITS.tax_id),
    note: changedText(LIMITS.note),
    tags: Type.Optional(
      Type.Array(Text({ minLength: 1, maxLength: LIMITS.tag }), {
        maxItems: LIMITS.tags,
        description: 'Each 1 to 40 characters; the list given replaces the one held.',
      }),
    ),
    addresses: Type.Optional(
      Type.Array(ContactAddressIn, {
        maxItems: LIMITS.addresses,
        description: 'The whole list, in order; it replaces the addresses held.',
      }),
    ),
  },
  { $id: 'ContactPatch', title: 'ContactPatch' },
);

export type ContactPatchBody = Static<typeof ContactPatch>;

/** One recorded edit: who, when, and each changed field before and after. */
export const ContactEditOut = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    at: Type.String({ format: 'date-time' }),
    by: Type.String({ description: 'The name of the member who made the edit.' }),
    changed: Type.Record(Type.String(), Type.Object({ from: Type.Unknown(), to: Type.Unknown() })),
  },
  { $id: 'ContactEditOut', title: 'ContactEditOut' },
);
