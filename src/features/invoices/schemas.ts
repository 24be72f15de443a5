import {
  Amount,
  DateOnly,
  DecimalOut,
  EmailOrEmpty,
  Enum,
  NullableBoolean,
  NullableDateOnly,
  NullableDateTime,
  NullableEnum,
  NullableText,
  NullableUuid,
  type Static,
  Text,
  type TSchema,
  Type,
  Uuid,
} from '../../platform/http/schema-kit.ts';
import { EINVOICE_FORMATS, LINE_TAX_KINDS } from './domain.ts';

// Limits are the spec's (§2.3) and DECISIONS' "Bodies the spec leaves out"; the seller's fields
// take the client's limits, website the email's.

const Email = (maxLength = 200) => EmailOrEmpty(maxLength, { default: '' });

const optionalText = (maxLength: number) => Type.Optional(Text({ maxLength, default: '' }));

export const LineItem = Type.Object({
  description: Text({ minLength: 1, maxLength: 300 }),
  unit_price: Text({
    minLength: 1,
    maxLength: 32,
    description: 'A decimal string (a discount may be negative).',
  }),
  quantity: Type.Optional(
    Text({ minLength: 1, maxLength: 32, default: '1', description: 'A decimal string above 0.' }),
  ),
  tax_kind: Type.Optional(NullableEnum(LINE_TAX_KINDS)),
  tax_rate: Type.Optional(Text({ maxLength: 16, default: '', description: 'A percent: "20", "7.5".' })),
  unit: optionalText(16),
});

const sellerFields = <Field extends TSchema, Mail extends TSchema>(
  text: (maxLength: number) => Field,
  email: Mail,
) => ({
  name: text(200),
  email,
  phone: text(40),
  address: text(2000),
  country: text(80),
  reg_number: text(64),
  tax_id: text(64),
  website: text(200),
});

export const SellerOverride = Type.Object(sellerFields(optionalText, Type.Optional(Email())), {
  description: 'Issuer requisites for one invoice.',
});

/** The same fields inside the create body, where a nullable object may not carry defaults. */
const NestedSeller = Type.Object(
  sellerFields(
    (maxLength) => Type.Optional(Text({ maxLength })),
    Type.Optional(Type.String({ maxLength: 200, anyOf: [{ maxLength: 0 }, { format: 'email' }] })),
  ),
);

export const ClientOverride = Type.Object(
  {
    name: optionalText(200),
    email: Type.Optional(Email()),
    phone: optionalText(40),
    address: optionalText(2000),
    country: optionalText(80),
    reg_number: optionalText(64),
    tax_id: optionalText(64),
  },
  { description: 'Client requisites for one mirrored invoice.' },
);

export const IntegrationInvoiceCreate = Type.Object(
  {
    account_id: Uuid(),
    client_name: Text({ minLength: 1, maxLength: 200 }),
    line_items: Type.Array(LineItem, { minItems: 1, maxItems: 200 }),
    due_on: Type.Optional(
      DateOnly({ description: 'Required for invoices and quotes; a credit note has no due date.' }),
    ),
    client_address: optionalText(2000),
    client_country: optionalText(80),
    client_country_code: optionalText(2),
    client_email: Type.Optional(Email()),
    client_phone: optionalText(40),
    client_reg_number: optionalText(64),
    client_tax_id: optionalText(64),
    contact_id: Type.Optional(NullableUuid()),
    currency: Type.Optional(
      NullableText({ minLength: 2, maxLength: 12, description: "Defaults to the account's." }),
    ),
    issued_on: Type.Optional(NullableDateOnly()),
    notes: optionalText(4000),
    number: Type.Optional(
      NullableText({ minLength: 1, maxLength: 40, description: "The seller's own number." }),
    ),
    prices_include_tax: Type.Optional(NullableBoolean()),
    project_id: Type.Optional(NullableUuid()),
    purchase_order: optionalText(64),
    save_contact: Type.Optional(Type.Boolean({ default: false })),
    seller: Type.Optional(Type.Union([NestedSeller, Type.Null()])),
    tax_authority_number: optionalText(64),
    tax_exempt_reason: Type.Optional(NullableText({ maxLength: 200 })),
    tax_zero_reason: Type.Optional(NullableText({ maxLength: 200 })),
    delivered_on: Type.Optional(
      NullableDateOnly({
        description:
          'Our extension: the actual delivery date (EN 16931 BT-72); an e-invoice with an intra_community line needs it.',
      }),
    ),
    kind: Type.Optional(
      Enum(['invoice', 'quote', 'credit_note'] as const, {
        default: 'invoice',
        description: 'Our extension: a quote starts as quote_draft, a credit note is issued at once.',
      }),
    ),
    corrects_invoice_id: Type.Optional(
      NullableUuid({
        description: "A credit note's invoice: its total adds to that invoice's credited_amount.",
      }),
    ),
  },
  {
    $id: 'IntegrationInvoiceCreate',
    title: 'IntegrationInvoiceCreate',
    // due_on is the spec's required field for invoices and quotes; only a credit note goes without.
    if: { properties: { kind: { const: 'credit_note' } }, required: ['kind'] },
    else: { properties: { due_on: { type: 'string', format: 'date' } }, required: ['due_on'] },
  },
);

/**
 * A draft's changes (PATCH …/invoices/{invoice_id}): its client, lines, dates and notes; fields
 * left out stay as they are. Lines, when given, replace all lines; the totals are computed again.
 */
export const InvoicePatch = Type.Object(
  {
    client_name: Type.Optional(Text({ minLength: 1, maxLength: 200 })),
    client_email: Type.Optional(EmailOrEmpty(200)),
    client_address: Type.Optional(Text({ maxLength: 2000 })),
    client_country: Type.Optional(Text({ maxLength: 80 })),
    client_country_code: Type.Optional(Text({ maxLength: 2 })),
    client_phone: Type.Optional(Text({ maxLength: 40 })),
    client_reg_number: Type.Optional(Text({ maxLength: 64 })),
    client_tax_id: Type.Optional(Text({ maxLength: 64 })),
    contact_id: Type.Optional(NullableUuid()),
    line_items: Type.Optional(Type.Array(LineItem, { minItems: 1, maxItems: 200 })),
    issued_on: Type.Optional(DateOnly()),
    due_on: Type.Optional(DateOnly()),
    notes: Type.Optional(Text({ maxLength: 4000 })),
    purchase_order: Type.Optional(Text({ maxLength: 64 })),
    prices_include_tax: Type.Optional(Type.Boolean()),
  },
  { title: 'InvoicePatch', description: 'Changes to a draft invoice or quote; fields left out stay.' },
);

export const SendIn = Type.Object({
  to: Type.Optional(Email()),
  cc: Type.Optional(Type.Array(Type.String({ format: 'email', maxLength: 200 }), { maxItems: 10 })),
  message: optionalText(2000),
  via: Type.Optional(Enum(['email', 'chat', 'none'] as const, { default: 'email' })),
});

export const InvoicePaymentCreate = Type.Object(
  {
    amount: Amount('positive', { description: "In the invoice's own currency." }),
    account_id: Type.Optional(NullableUuid()),
    note: optionalText(500),
    occurred_on: Type.Optional(NullableDateOnly()),
    tx_id: Type.Optional(NullableUuid()),
  },
  { title: 'InvoicePaymentCreate', description: 'A hand-recorded payment.' },
);

export const EmptyIn = Type.Object({});
export const VoidIn = Type.Object({ reason: optionalText(500) });
export const RemindIn = Type.Object({
  message: optionalText(2000),
  // Absent: every channel the invoice has (mail when configured, the client's chat group).
  via: Type.Optional(Enum(['email', 'chat'] as const)),
});

// The spec's InvoiceDocKind, and its InvoiceStatus: the status as shown (a sent quote past due_on
// reads quote_expired).
export const INVOICE_KINDS = ['invoice', 'quote', 'credit_note'] as const;
export const VISIBLE_STATUSES = [
  'draft',
  'sent',
  'partial',
  'paid',
  'issued',
  'void',
  'quote_draft',
  'quote_sent',
  'quote_accepted',
  'quote_declined',
  'quote_expired',
] as const;

const LineItemOut = Type.Object({
  description: Type.String(),
  unit_price: DecimalOut(),
  quantity: DecimalOut(),
  tax_kind: Type.Union([Type.String(), Type.Null()]),
  tax_rate: Type.String(),
  unit: Type.String(),
  amount: DecimalOut({
    description: 'unit_price × quantity rounded to the minor unit; gross with inclusive prices.',
  }),
});

const TaxGroupOut = Type.Object({
  tax_kind: Type.Union([Type.String(), Type.Null()]),
  tax_rate: Type.String(),
  net: DecimalOut(),
  tax: DecimalOut(),
});

const InvoicePaymentOut = Type.Object({
  id: Type.String({ format: 'uuid' }),
  amount: DecimalOut(),
  account_id: Type.String({ format: 'uuid' }),
  via: Type.String(),
  note: Type.String(),
  occurred_on: Type.String({ format: 'date' }),
  tx_id: Type.Union([Type.String(), Type.Null()]),
  entry_id: Type.Union([Type.String(), Type.Null()]),
});

const NullableString = () => Type.Union([Type.String(), Type.Null()]);

export const InvoiceOut = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    number: Type.String(),
    client_name: Type.String(),
    client_email: Type.String(),
    line_items: Type.Array(LineItemOut),
    total: DecimalOut(),
    currency: Type.String(),
    issued_on: Type.String({ format: 'date' }),
    due_on: Type.String({ format: 'date' }),
    notes: Type.String(),
    token: Type.String(),
    status: Enum(VISIBLE_STATUSES),
    account_id: NullableString(),
    contact_id: NullableString(),
    project_id: NullableString(),
    corrects_invoice_id: NullableString(),
    auto_remind: Type.Boolean(),
    card_payments_enabled: Type.Boolean(),
    card_payments_live: Type.Boolean(),
    delivered_in_app: Type.Boolean(),
    prices_include_tax: Type.Boolean(),
    client_address: Type.String(),
    client_country: Type.String(),
    client_country_code: Type.String(),
    client_phone: Type.String(),
    client_reg_number: Type.String(),
    client_tax_id: Type.String(),
    purchase_order: Type.String(),
    tax_authority_number: Type.String(),
    tax_label: Type.String(),
    line_step: Type.String(),
    seller_address: Type.String(),
    seller_country: Type.String(),
    seller_email: Type.String(),
    seller_name: Type.String(),
    seller_phone: Type.String(),
    seller_reg_number: Type.String(),
    seller_tax_id: Type.String(),
    seller_website: Type.String(),
    subtotal: DecimalOut(),
    tax_total: DecimalOut(),
    paid_amount: DecimalOut(),
    credited_amount: DecimalOut(),
    tax_breakdown: Type.Array(TaxGroupOut),
    contested_at: NullableDateTime(),
    payer_marked_paid_at: NullableDateTime(),
    payment_withdrawn_at: NullableDateTime(),
    reminders_paused_at: NullableDateTime(),
    contested_reason: Type.String(),
    last_paid_on: NullableDateOnly(),
    promised_on: NullableDateOnly(),
    kind: Enum(INVOICE_KINDS),
    tax_exempt_reason: NullableString(),
    tax_zero_reason: NullableString(),
    delivered_on: NullableDateOnly(),
    void_reason: Type.String(),
    invoice_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
      description: 'For an accepted quote: the draft invoice made from it.',
    }),
    quote_decided_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'For an accepted or declined quote: when the answer was given.',
    }),
    quote_decided_by: Type.String({
      description:
        'The name the client typed on the quote’s page; empty when the seller recorded the answer.',
    }),
    payments: Type.Array(InvoicePaymentOut, {
      description: 'Recorded payments; a void invoice keeps them booked.',
    }),
    url: Type.String({ description: 'The public invoice page.' }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { title: 'InvoiceOut', description: 'An invoice as the space has it.' },
);

export const RemindOut = Type.Object({
  invoice_id: Type.String({ format: 'uuid' }),
  reminded: Type.Boolean(),
  via: Type.Array(Type.String()),
  at: Type.String({ format: 'date-time' }),
});

export const IdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });

export type InvoiceCreateBody = Static<typeof IntegrationInvoiceCreate>;
export type InvoicePatchBody = Static<typeof InvoicePatch>;
export type SellerBody = Static<typeof SellerOverride>;
export type ClientBody = Static<typeof ClientOverride>;
export type SendBody = Static<typeof SendIn>;
export type PaymentBody = Static<typeof InvoicePaymentCreate>;

// The owner's app: the Invoices list and the ids of one invoice of a space.

export const InvoiceListQuery = Type.Object({
  kind: Type.Optional(Enum(INVOICE_KINDS)),
  status: Type.Optional(
    Enum(VISIBLE_STATUSES, {
      description: 'The status as listed: a sent quote past due_on is quote_expired.',
    }),
  ),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
});
export type InvoiceListQueryBody = Static<typeof InvoiceListQuery>;

export const InvoiceListOut = Type.Object({
  items: Type.Array(InvoiceOut),
  next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'Send as ?cursor= for the next 50.' }),
});

export const SpaceInvoiceParams = Type.Object({
  id: Type.String({ format: 'uuid' }),
  invoice_id: Type.String({ format: 'uuid' }),
});
export const SpaceOnlyParams = Type.Object({ id: Type.String({ format: 'uuid' }) });

// E-invoices: the format asked for, and the file answered.

export const EinvoiceQuery = Type.Object({
  format: Enum(EINVOICE_FORMATS, {
    description:
      'facturx: a PDF/A-3 with the CII embedded (Factur-X / ZUGFeRD, profile EN 16931); cii: UN/CEFACT CII XML; ubl: UBL 2.1 with the Peppol BIS Billing 3.0 customization (an Invoice, or a CreditNote for a credit note).',
  }),
});
export type EinvoiceQueryBody = Static<typeof EinvoiceQuery>;
/**
 * The invoice page's Download links: a page answers a visitor's sign-in (or a stranger's 404)
 * before it reads its query, so the format is read by the handler, not refused by validation.
 */
export const EinvoicePageQuery = Type.Object({ format: Type.Optional(Type.String({ maxLength: 20 })) });

/** The e-invoice as a file: documented per content type, sent as the bytes it is (never serialized). */
const FileBytes = (description: string) =>
  Type.Unsafe<Buffer | string>({ type: 'string', format: 'binary', description });

export const EinvoiceFileOut = {
  description: 'The e-invoice file, as an attachment.',
  content: {
    'application/pdf': { schema: FileBytes('Factur-X (format=facturx).') },
    'application/xml': { schema: FileBytes('CII or UBL (format=cii, format=ubl).') },
  },
};
