import { assert } from '../../core/assert.ts';
import { DAY_MS } from '../../core/clock.ts';
import { utcDateOf } from '../../core/day.ts';
import { type AmountE8, asAmount, formatAmountTrimmed, parseDecimalText, SCALE } from '../../core/money.ts';
import type { InvoiceStatus, StoredSeller } from '../../platform/db/schema.ts';

// Invoice rules without I/O: the currency's minor unit, line and tax rounding, the totals and
// the state machine. Every amount is a bigint; rounding happens only in roundHalfUp/divideHalfUp.

/**
 * ISO 4217 exponents (minor units) for the currencies people invoice in, checked in so the
 * answer never depends on the runtime's Intl data. Crypto assets use their own decimals, capped
 * at the eight decimals every amount in the service carries (ETH's 18 become 8).
 */
export const CURRENCY_MINOR_UNITS: Readonly<Record<string, number>> = {
  // Zero-decimal currencies.
  BIF: 0,
  CLP: 0,
  DJF: 0,
  GNF: 0,
  ISK: 0,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  PYG: 0,
  RWF: 0,
  UGX: 0,
  UYI: 0,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
  // Three-decimal currencies.
  BHD: 3,
  IQD: 3,
  JOD: 3,
  KWD: 3,
  LYD: 3,
  OMR: 3,
  TND: 3,
  // Four decimals: the Chilean and Uruguayan units of account.
  CLF: 4,
  UYW: 4,
  // Two decimals (the common ones, listed so the table documents them; unknown codes get 2 too).
  AED: 2,
  AUD: 2,
  BRL: 2,
  CAD: 2,
  CHF: 2,
  CNY: 2,
  CZK: 2,
  DKK: 2,
  EUR: 2,
  GBP: 2,
  HKD: 2,
  HUF: 2,
  IDR: 2,
  ILS: 2,
  INR: 2,
  MXN: 2,
  MYR: 2,
  NOK: 2,
  NZD: 2,
  PHP: 2,
  PLN: 2,
  RON: 2,
  RUB: 2,
  SAR: 2,
  SEK: 2,
  SGD: 2,
  THB: 2,
  TRY: 2,
  TWD: 2,
  UAH: 2,
  USD: 2,
  ZAR: 2,
  // Crypto assets: their own decimals, capped at SCALE.
  USDC: 6,
  USDT: 6,
  EURC: 6,
  PYUSD: 6,
  DAI: 8,
  BTC: 8,
  ETH: 8,
  SOL: 8,
};

/** The minor unit of a currency: ISO 4217 exponent, crypto decimals (≤ 8), unknown → 2. */
export function minorUnitsOf(currency: string): number {
  const exponent = CURRENCY_MINOR_UNITS[currency.toUpperCase()] ?? 2;
  return Math.min(exponent, SCALE);
}

/** num / den rounded half away from zero (half-up on magnitudes), den > 0. */
export function divideHalfUp(num: bigint, den: bigint): bigint {
  const negative = num < 0n;
  const magnitude = negative ? -num : num;
  const rounded = (magnitude * 2n + den) / (den * 2n);
  return negative ? -rounded : rounded;
}

/** Rounds an amount (10⁻⁸ units) half-up to `exponent` decimals. */
export function roundHalfUp(amount: AmountE8, exponent: number): AmountE8 {
  const step = 10n ** BigInt(SCALE - exponent);
  return asAmount(divideHalfUp(amount, step) * step);
}

/** DECISIONS' TaxKind values: the kinds the app's invoice form offers. */
export const TAX_KINDS = ['standard', 'reduced', 'zero', 'exempt', 'reverse_charge'] as const;
/**
 * Our extension, for the EN 16931 VAT categories the five above cannot say: an intra-community
 * supply (K), an export outside the EU (G), and a supply not subject to VAT (O). A line takes
 * them through the API.
 */
export const EXTENDED_TAX_KINDS = ['intra_community', 'export', 'not_subject'] as const;
/** Every tax kind a line may carry. */
export const LINE_TAX_KINDS = [...TAX_KINDS, ...EXTENDED_TAX_KINDS] as const;
export type TaxKind = (typeof LINE_TAX_KINDS)[number];
/** Kinds that never carry tax, whatever rate is written beside them. */
const UNTAXED: ReadonlySet<TaxKind> = new Set([
  'zero',
  'exempt',
  'reverse_charge',
  'intra_community',
  'export',
  'not_subject',
]);

/** Whether a line of this kind and rate carries tax (a rate above 0, on a kind that is taxed). */
export function isTaxed(taxKind: TaxKind | null, rate: TaxRateE8): boolean {
  return !(taxKind !== null && UNTAXED.has(taxKind)) && rate !== 0n;
}

/** A tax rate in percent, as 10⁻⁸ percent ("20" → 20·10⁸). Its own type: never an amount. */
declare const rateBrand: unique symbol;
export type TaxRateE8 = bigint & { readonly [rateBrand]: true };

export type LineInput = {
  description: string;
  unit_price: string;
  quantity?: string;
  tax_kind?: TaxKind | null;
  tax_rate?: string;
  unit?: string;
};

export type LineProblem = { index: number; field: 'unit_price' | 'quantity' | 'tax_rate'; detail: string };

export type PricedLine = {
  description: string;
  unitPrice: AmountE8;
  quantity: AmountE8;
  taxKind: TaxKind | null;
  taxRate: TaxRateE8;
  unit: string;
  /** unit_price × quantity rounded to the minor unit: net, or gross with inclusive prices. */
  amount: AmountE8;
};

export type TaxGroup = { taxKind: TaxKind | null; taxRate: TaxRateE8; net: AmountE8; tax: AmountE8 };

export type Totals = {
  lines: PricedLine[];
  breakdown: TaxGroup[];
  subtotal: AmountE8;
  taxTotal: AmountE8;
  total: AmountE8;
};

const RATE_MAX = asAmount(100n * 10n ** BigInt(SCALE));

type Parsed<T> = { ok: true; value: T } | { ok: false; detail: string };

function parseLineNumbers(line: LineInput): Record<'price' | 'quantity' | 'rate', Parsed<bigint>> {
  const price = parseDecimalText(line.unit_price);
  const quantity = parseDecimalText(line.quantity ?? '1');
  const rateText = line.tax_rate ?? '';
  const rate = rateText === '' ? ({ ok: true, value: asAmount(0n) } as const) : parseDecimalText(rateText);
  const decimal = 'must be a decimal string with at most eight fraction digits';
  return {
    price: price.ok ? price : { ok: false, detail: `unit_price ${decimal}` },
    quantity: !quantity.ok
      ? { ok: false, detail: `quantity ${decimal}` }
      : quantity.value <= 0n
        ? { ok: false, detail: 'quantity must be greater than 0' }
        : quantity,
    rate: !rate.ok
      ? { ok: false, detail: `tax_rate ${decimal} (a percent, e.g. "20" or "7.5")` }
      : rate.value < 0n || rate.value > RATE_MAX
        ? { ok: false, detail: 'tax_rate must be a percent from 0 to 100' }
        : rate,
  };
}

/** Parses and prices one line: unit_price × quantity, rounded half-up to the minor unit. */
export function priceLine(
  line: LineInput,
  index: number,
  exponent: number,
): { ok: true; value: PricedLine } | { ok: false; problem: LineProblem } {
  const parsed = parseLineNumbers(line);
  for (const [field, result] of [
    ['unit_price', parsed.price],
    ['quantity', parsed.quantity],
    ['tax_rate', parsed.rate],
  ] as const) {
    if (!result.ok) return { ok: false, problem: { index, field, detail: result.detail } };
  }
  const price = (parsed.price as { value: bigint }).value;
  const quantity = (parsed.quantity as { value: bigint }).value;
  // price·quantity carries 16 decimals; one division brings it to the minor unit, half-up.
  const step = 10n ** BigInt(SCALE - exponent);
  const amount = divideHalfUp(price * quantity, 10n ** BigInt(SCALE) * step) * step;
  return {
    ok: true,
    value: {
      description: line.description,
      unitPrice: asAmount(price),
      quantity: asAmount(quantity),
      taxKind: line.tax_kind ?? null,
      taxRate: (parsed.rate as { value: bigint }).value as TaxRateE8,
      unit: line.unit ?? '',
      amount: asAmount(amount),
    },
  };
}

/** Tax of one group: exclusive = net·rate; inclusive = gross − gross/(1+rate) = gross·rate/(1+rate). */
export function groupTax(
  base: AmountE8,
  taxKind: TaxKind | null,
  rate: TaxRateE8,
  inclusive: boolean,
  exponent: number,
): AmountE8 {
  if (!isTaxed(taxKind, rate)) return asAmount(0n);
  const hundred = 100n * 10n ** BigInt(SCALE);
  const step = 10n ** BigInt(SCALE - exponent);
  const den = inclusive ? hundred + rate : hundred;
  return asAmount(divideHalfUp(base * rate, den * step) * step);
}

function groupKey(line: PricedLine): string {
  return `${line.taxKind ?? ''}|${line.taxRate}`;
}

/** Groups priced lines by (tax_kind, tax_rate) in first-seen order and computes the totals. */
export function totalsOf(lines: PricedLine[], inclusive: boolean, exponent: number): Totals {
  const groups = new Map<string, { taxKind: TaxKind | null; taxRate: TaxRateE8; base: bigint }>();
  for (const line of lines) {
    const key = groupKey(line);
    const group = groups.get(key) ?? { taxKind: line.taxKind, taxRate: line.taxRate, base: 0n };
    group.base += line.amount;
    groups.set(key, group);
  }
  const breakdown: TaxGroup[] = [];
  let subtotal = 0n;
  let taxTotal = 0n;
  for (const group of groups.values()) {
    const tax = groupTax(asAmount(group.base), group.taxKind, group.taxRate, inclusive, exponent);
    const net = inclusive ? group.base - tax : group.base;
    breakdown.push({ taxKind: group.taxKind, taxRate: group.taxRate, net: asAmount(net), tax });
    subtotal += net;
    taxTotal += tax;
  }
  return {
    lines,
    breakdown,
    subtotal: asAmount(subtotal),
    taxTotal: asAmount(taxTotal),
    total: asAmount(subtotal + taxTotal),
  };
}

export type ComputeOutcome = { ok: true; totals: Totals } | { ok: false; problems: LineProblem[] };

/** Prices every line and totals the invoice; problems are returned, never thrown. */
export function computeTotals(lines: LineInput[], currency: string, inclusive: boolean): ComputeOutcome {
  const exponent = minorUnitsOf(currency);
  const priced: PricedLine[] = [];
  const problems: LineProblem[] = [];
  lines.forEach((line, index) => {
    const result = priceLine(line, index, exponent);
    if (result.ok) priced.push(result.value);
    else problems.push(result.problem);
  });
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, totals: totalsOf(priced, inclusive, exponent) };
}

/** A rate's spelling on the way out: "20", "7.5", "0". */
export function formatRate(rate: TaxRateE8): string {
  return formatAmountTrimmed(asAmount(rate));
}

// State machine (DECISIONS "Totals and states"): draft → sent → partial → paid; void from any
// state but void. A refused move is a value naming the state, never an exception.

// The status words are the database's (platform/db/schema.ts); the rules about them live here.
export type { InvoiceStatus };

export type Move = 'send' | 'pay' | 'void' | 'remind' | 'edit' | 'revise' | 'accept' | 'decline';

/** Which states each move starts from. Sending again re-delivers without moving the state. */
const MOVES_FROM: Record<Move, ReadonlySet<InvoiceStatus>> = {
  // An issued credit note is sent (by mail) as often as asked; sending leaves it issued.
  send: new Set<InvoiceStatus>(['draft', 'sent', 'partial', 'quote_draft', 'quote_sent', 'issued']),
  pay: new Set<InvoiceStatus>(['sent', 'partial']),
  remind: new Set<InvoiceStatus>(['sent', 'partial']),
  void: new Set<InvoiceStatus>([
    'draft',
    'sent',
    'partial',
    'paid',
    'issued',
    'quote_draft',
    'quote_sent',
    'quote_accepted',
    'quote_declined',
    'quote_expired',
  ]),
  accept: new Set<InvoiceStatus>(['quote_sent']),
  decline: new Set<InvoiceStatus>(['quote_sent']),
  // Seller and client requisites may be corrected until the invoice is closed.
  edit: new Set<InvoiceStatus>(['draft', 'sent', 'partial', 'quote_draft', 'quote_sent', 'issued']),
  // Client, lines, dates and notes change only until the document is sent; after that a credit
  // note corrects an invoice.
  revise: new Set<InvoiceStatus>(['draft', 'quote_draft']),
};

export function allows(move: Move, status: InvoiceStatus): boolean {
  return MOVES_FROM[move].has(status);
}

/**
 * What the client's or the seller's answer does to a quote (its status as shown, so a sent quote
 * past its date reads expired): a sent quote moves; a quote already given the same answer stays
 * as it is, so a repeated answer changes nothing; any other is refused.
 */
export function quoteDecision(
  status: InvoiceStatus,
  decision: 'accept' | 'decline',
): 'move' | 'same' | 'refuse' {
  if (status === (decision === 'accept' ? 'quote_accepted' : 'quote_declined')) return 'same';
  return allows(decision, status) ? 'move' : 'refuse';
}

/** The state a send leaves behind. */
export function afterSend(status: InvoiceStatus): InvoiceStatus {
  if (status === 'draft') return 'sent';
  if (status === 'quote_draft') return 'quote_sent';
  return status;
}

export type PaymentOutcome =
  | { ok: true; paid: AmountE8; status: 'partial' | 'paid'; closes: boolean }
  | { ok: false; code: 'overpayment'; open: AmountE8 };

/** What is still to be paid on an invoice: its total less credit notes and payments, never below zero. */
export function openAmount(total: AmountE8, credited: AmountE8, paid: AmountE8): AmountE8 {
  const open = total - credited - paid;
  return asAmount(open > 0n ? open : 0n);
}

/** The three amounts an open amount is made of, as the database or an invoice record spells them. */
export type InvoiceAmounts = { total: string; credited_amount: string; paid_amount: string };

/** One of an invoice's amounts as stored; an unreadable one is a bug, never zero. */
function storedAmount(text: string, field: keyof InvoiceAmounts): AmountE8 {
  const parsed = parseDecimalText(text);
  assert(parsed.ok, `An invoice's ${field} is not a decimal amount: ${text}`);
  return parsed.value;
}

/** The open amount of a stored (or presented) invoice. */
export function openAmountOf(invoice: InvoiceAmounts): AmountE8 {
  return openAmount(
    storedAmount(invoice.total, 'total'),
    storedAmount(invoice.credited_amount, 'credited_amount'),
    storedAmount(invoice.paid_amount, 'paid_amount'),
  );
}

/** An invoice as the owed-by-due-day sums read it. */
export type OwedSource = InvoiceAmounts & {
  kind: DocKind;
  status: InvoiceStatus;
  currency: string;
  due_on: string;
};

/** An invoice's share of what its book is owed on its due day. */
export type OwedShare = { currency: string; dueOn: string; open: AmountE8 };

/**
 * What an invoice adds to its book's owed sums (invoice_owed_days): its open amount on its due
 * day while it can take a payment; nothing for a draft, a paid or void invoice, a quote or a
 * credit note.
 */
export function owedShareOf(invoice: OwedSource): OwedShare | null {
  if (invoice.kind !== 'invoice' || !allows('pay', invoice.status)) return null;
  return { currency: invoice.currency, dueOn: invoice.due_on, open: openAmountOf(invoice) };
}

/** What a payment does to an invoice: partial below the open amount, paid on reaching it. */
export function afterPayment(
  total: AmountE8,
  credited: AmountE8,
  paid: AmountE8,
  amount: AmountE8,
): PaymentOutcome {
  const due = total - credited;
  const open = openAmount(total, credited, paid);
  if (amount > open) return { ok: false, code: 'overpayment', open };
  const nowPaid = asAmount(paid + amount);
  const closes = nowPaid >= due;
  return { ok: true, paid: nowPaid, status: closes ? 'paid' : 'partial', closes };
}

export type DocKind = 'invoice' | 'quote' | 'credit_note';

/** The e-invoice files of an invoice or credit note: Factur-X (PDF with CII), CII and UBL. */
export const EINVOICE_FORMATS = ['facturx', 'cii', 'ubl'] as const;
export type EinvoiceFormat = (typeof EINVOICE_FORMATS)[number];

/** Where each kind of document starts: an invoice as a draft, a quote as a quote draft, a credit note issued. */
export function initialStatus(kind: DocKind): InvoiceStatus {
  if (kind === 'quote') return 'quote_draft';
  if (kind === 'credit_note') return 'issued';
  return 'draft';
}

/** A sent quote past its due date reads as expired (dates are YYYY-MM-DD, so text order is date order). */
export function visibleStatus(status: InvoiceStatus, dueOn: string, today: string): InvoiceStatus {
  return status === 'quote_sent' && today > dueOn ? 'quote_expired' : status;
}

/** What a credit note may still take off an invoice: what is open on it. */
export function creditRoom(total: AmountE8, credited: AmountE8, paid: AmountE8): AmountE8 {
  return openAmount(total, credited, paid);
}

export type ReminderStage = 'before_due' | 'on_due' | 'after_due';

/** Days before the due date the first automatic reminder goes out. */
export const REMIND_BEFORE_DAYS = 3;
/** Days after the due date the last one goes out. */
export const REMIND_AFTER_DAYS = 7;

export function addDays(date: string, days: number): string {
  return utcDateOf(new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS));
}

/**
 * The automatic reminder an open invoice is due for today: three days before its due date, on
 * it, and a week after it. Only the latest applies; one missed while the server was down is not
 * sent late next to a newer one.
 */
export function reminderStage(dueOn: string, today: string): ReminderStage | null {
  if (today >= addDays(dueOn, REMIND_AFTER_DAYS)) return 'after_due';
  if (today >= dueOn) return 'on_due';
  if (today >= addDays(dueOn, -REMIND_BEFORE_DAYS)) return 'before_due';
  return null;
}

/**
 * What every new invoice starts with, however it is made (mirrored, or from an accepted quote):
 * nothing paid, credited or missing, not sent, paid, voided or paused, made at `at`.
 */
export function freshInvoiceState(at: Date) {
  return {
    paid_amount: '0',
    credited_amount: '0',
    shortfall_amount: '0',
    invoice_id: null,
    last_paid_on: null,
    sent_at: null,
    paid_event_at: null,
    voided_at: null,
    void_reason: '',
    reminders_paused_at: null,
    seller_snapshot: null,
    quote_decided_at: null,
    quote_decided_by: '',
    created_at: at,
    updated_at: at,
  };
}

/**
 * Which of an invoice's client fields fills which of a contact's requisites. Read both ways: a
 * picked contact fills the blank client fields of a form, and save_contact turns the client
 * fields into a contact.
 */
export const CLIENT_CONTACT_FIELDS = [
  ['client_name', 'name'],
  ['client_email', 'email'],
  ['client_address', 'address'],
  ['client_country', 'country'],
  ['client_phone', 'phone'],
  ['client_reg_number', 'reg_number'],
  ['client_tax_id', 'tax_id'],
] as const;

export type ClientField = (typeof CLIENT_CONTACT_FIELDS)[number][0];
export type ContactField = (typeof CLIENT_CONTACT_FIELDS)[number][1];

/** The contact an invoice's client fields describe; a field left out is empty text. */
export function contactFromClient(
  client: Partial<Record<ClientField, string | null | undefined>>,
): Record<ContactField, string> {
  const contact = {} as Record<ContactField, string>;
  for (const [field, requisite] of CLIENT_CONTACT_FIELDS) contact[requisite] = client[field] ?? '';
  return contact;
}

/** The seller fields a document row carries (what an integration may set, spec 2.3). */
export type SellerColumns = {
  seller_name: string;
  seller_email: string;
  seller_phone: string;
  seller_address: string;
  seller_country: string;
  seller_reg_number: string;
  seller_tax_id: string;
  seller_website: string;
};

/** The book's seller profile as a document needs it, its address already written out. */
export type ProfileSeller = Omit<StoredSeller, 'name'> & { display_name: string; address_text: string };

/**
 * The seller a document shows: each field the document set (a mirrored invoice's seller) is
 * kept, and the book's profile fills what it left out. A document that names its own seller
 * names its own legal entity, so the profile's legal name and tax number only come with the
 * profile's name.
 */
export function mergeSeller(own: SellerColumns, profile: ProfileSeller) {
  const pick = (mine: string, theirs: string) => (mine.trim() !== '' ? mine : theirs);
  const ownName = own.seller_name.trim() !== '';
  const ownCountry = /^[A-Za-z]{2}$/.test(own.seller_country) ? own.seller_country.toUpperCase() : '';
  const snapshot: StoredSeller = {
    name: pick(own.seller_name, profile.display_name),
    legal_name: ownName ? own.seller_name : profile.legal_name,
    address:
      own.seller_address.trim() !== ''
        ? { line1: own.seller_address, line2: '', postal_code: '', city: '', region: '', country: ownCountry }
        : profile.address,
    vat_id: pick(own.seller_tax_id, profile.vat_id),
    tax_number: ownName || own.seller_tax_id !== '' ? '' : profile.tax_number,
    registration_id: pick(own.seller_reg_number, profile.registration_id),
    email: pick(own.seller_email, profile.email),
    phone: pick(own.seller_phone, profile.phone),
    website: pick(own.seller_website, profile.website),
    invoice_footer: profile.invoice_footer,
  };
  const columns: SellerColumns = {
    seller_name: snapshot.name,
    seller_email: snapshot.email,
    seller_phone: snapshot.phone,
    seller_address: pick(own.seller_address, profile.address_text),
    seller_country: pick(own.seller_country, profile.address.country),
    seller_reg_number: snapshot.registration_id,
    seller_tax_id: pick(own.seller_tax_id, profile.vat_id || profile.tax_number),
    seller_website: snapshot.website,
  };
  return { columns, snapshot };
}
