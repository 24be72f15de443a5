import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AssertionFailure } from '../../core/assert.ts';
import { asAmount, formatAmountTrimmed } from '../../core/money.ts';
import {
  afterPayment,
  afterSend,
  allows,
  CLIENT_CONTACT_FIELDS,
  computeTotals,
  contactFromClient,
  formatRate,
  type InvoiceStatus,
  initialStatus,
  type LineInput,
  type Move,
  minorUnitsOf,
  openAmount,
  openAmountOf,
  roundHalfUp,
  type TaxKind,
  visibleStatus,
} from './domain.ts';

type Case = {
  name: string;
  currency: string;
  inclusive?: boolean;
  lines: Array<[price: string, quantity: string, kind: TaxKind | null, rate: string]>;
  subtotal: string;
  tax: string;
  total: string;
  breakdown?: Array<[kind: TaxKind | null, rate: string, net: string, tax: string]>;
};

const line = ([unit_price, quantity, tax_kind, tax_rate]: Case['lines'][number]): LineInput => ({
  description: 'x',
  unit_price,
  quantity,
  tax_kind,
  tax_rate,
});

// Every figure below was worked by hand; the comment shows the arithmetic.
const CASES: Case[] = [
  {
    name: 'one line, 20% on top',
    currency: 'USD',
    lines: [['10.00', '1', 'standard', '20']],
    subtotal: '10',
    tax: '2',
    total: '12',
  },
  // 59.97 × 0.20 = 11.994 → 11.99
  {
    name: 'three units, tax rounds down',
    currency: 'USD',
    lines: [['19.99', '3', 'standard', '20']],
    subtotal: '59.97',
    tax: '11.99',
    total: '71.96',
  },
  // 0.333 × 3 = 0.999 → 1.00
  {
    name: 'line rounds up to the cent',
    currency: 'USD',
    lines: [['0.333', '3', null, '']],
    subtotal: '1',
    tax: '0',
    total: '1',
  },
  // each 0.005 → 0.01; summed first it would be 0.015 → 0.02
  {
    name: 'per-line rounding of half cents',
    currency: 'USD',
    lines: [
      ['0.005', '1', null, ''],
      ['0.005', '1', null, ''],
      ['0.005', '1', null, ''],
    ],
    subtotal: '0.03',
    tax: '0',
    total: '0.03',
  },
  // 10 × 1.5 = 15; 15 × 7.5% = 1.125 → 1.13
  {
    name: 'decimal quantity and rate, half-up tax',
    currency: 'USD',
    lines: [['10', '1.5', 'reduced', '7.5']],
    subtotal: '15',
    tax: '1.13',
    total: '16.13',
  },
  // 12 × 20/120 = 2
  {
    name: 'inclusive, exact',
    currency: 'USD',
    inclusive: true,
    lines: [['12.00', '1', 'standard', '20']],
    subtotal: '10',
    tax: '2',
    total: '12',
  },
  // 10 × 20/120 = 1.666… → 1.67; net 8.33
  {
    name: 'inclusive, tax rounds up',
    currency: 'USD',
    inclusive: true,
    lines: [['10.00', '1', 'standard', '20']],
    subtotal: '8.33',
    tax: '1.67',
    total: '10',
  },
  // 100 × 7.5/107.5 = 6.9767… → 6.98
  {
    name: 'inclusive, fractional rate',
    currency: 'USD',
    inclusive: true,
    lines: [['100', '1', 'reduced', '7.5']],
    subtotal: '93.02',
    tax: '6.98',
    total: '100',
  },
  {
    name: 'mixed rates: one group per (kind, rate)',
    currency: 'EUR',
    lines: [
      ['100', '1', 'standard', '20'],
      ['50', '1', 'reduced', '5'],
      ['30', '1', 'zero', '0'],
    ],
    subtotal: '180',
    tax: '22.5',
    total: '202.5',
    breakdown: [
      ['standard', '20', '100', '20'],
      ['reduced', '5', '50', '2.5'],
      ['zero', '0', '30', '0'],
    ],
  },
  // group net 0.10 × 7% = 0.007 → 0.01; per line it would be 0.0035 → 0.00 twice
  {
    name: 'tax on the group, not per line',
    currency: 'USD',
    lines: [
      ['0.05', '1', 'standard', '7'],
      ['0.05', '1', 'standard', '7'],
    ],
    subtotal: '0.1',
    tax: '0.01',
    total: '0.11',
    breakdown: [['standard', '7', '0.1', '0.01']],
  },
  // 1234 × 10% = 123.4 → 123
  {
    name: 'JPY: no minor unit',
    currency: 'JPY',
    lines: [['1234', '1', 'standard', '10']],
    subtotal: '1234',
    tax: '123',
    total: '1357',
  },
  // 99.5 → 100 yen; 100 × 8% = 8
  {
    name: 'JPY: half a yen rounds up',
    currency: 'JPY',
    lines: [['99.5', '1', 'reduced', '8']],
    subtotal: '100',
    tax: '8',
    total: '108',
  },
  // 1100 × 10/110 = 100
  {
    name: 'JPY inclusive, exact',
    currency: 'JPY',
    inclusive: true,
    lines: [['1100', '1', 'standard', '10']],
    subtotal: '1000',
    tax: '100',
    total: '1100',
  },
  // 1000 × 8/108 = 74.07 → 74
  {
    name: 'JPY inclusive, rounded',
    currency: 'jpy',
    inclusive: true,
    lines: [['1000', '1', 'reduced', '8']],
    subtotal: '926',
    tax: '74',
    total: '1000',
  },
  // 1.2345 → 1.235; 1.235 × 10% = 0.1235 → 0.124
  {
    name: 'BHD: three decimals, both halves up',
    currency: 'BHD',
    lines: [['1.2345', '1', 'standard', '10']],
    subtotal: '1.235',
    tax: '0.124',
    total: '1.359',
  },
  // 0.0005 × 3 = 0.0015 → 0.002
  {
    name: 'BHD: line below a fils rounds up',
    currency: 'BHD',
    lines: [['0.0005', '3', null, '']],
    subtotal: '0.002',
    tax: '0',
    total: '0.002',
  },
  // 5 × 5/105 = 0.238095… → 0.238
  {
    name: 'KWD inclusive',
    currency: 'KWD',
    inclusive: true,
    lines: [['5.000', '1', 'standard', '5']],
    subtotal: '4.762',
    tax: '0.238',
    total: '5',
  },
  {
    name: 'exempt carries no tax whatever the rate',
    currency: 'USD',
    lines: [['100', '1', 'exempt', '20']],
    subtotal: '100',
    tax: '0',
    total: '100',
    breakdown: [['exempt', '20', '100', '0']],
  },
  {
    name: 'reverse charge carries no tax',
    currency: 'EUR',
    inclusive: true,
    lines: [['250', '1', 'reverse_charge', '21']],
    subtotal: '250',
    tax: '0',
    total: '250',
  },
  // each 0.125 → 0.13, ten lines 1.30; summed first 1.25
  {
    name: 'ten lines whose rounding adds up',
    currency: 'USD',
    lines: Array.from({ length: 10 }, () => ['0.125', '1', null, ''] as Case['lines'][number]),
    subtotal: '1.3',
    tax: '0',
    total: '1.3',
  },
  // 1.23456 → 1.2346; × 19% = 0.234574 → 0.2346
  {
    name: 'CLF: four decimals',
    currency: 'CLF',
    lines: [['1.23456', '1', 'standard', '19']],
    subtotal: '1.2346',
    tax: '0.2346',
    total: '1.4692',
  },
  // 1.005 → 1.01
  {
    name: 'unknown currency: two decimals',
    currency: 'XYZ',
    lines: [['1.005', '1', null, '']],
    subtotal: '1.01',
    tax: '0',
    total: '1.01',
  },
  // 0.1234567 → 0.123457
  {
    name: 'USDC: six decimals',
    currency: 'USDC',
    lines: [['0.1234567', '1', null, '']],
    subtotal: '0.123457',
    tax: '0',
    total: '0.123457',
  },
  // 0.12345678 × 0.5 = 0.06172839 exactly (ETH capped at 8 decimals)
  {
    name: 'ETH: capped at eight decimals',
    currency: 'ETH',
    lines: [['0.12345678', '0.5', null, '']],
    subtotal: '0.06172839',
    tax: '0',
    total: '0.06172839',
  },
  // 9.99 × 2.5 = 24.975 → 24.98; × 20% = 4.996 → 5.00
  {
    name: 'decimal quantity rounds the line',
    currency: 'USD',
    lines: [['9.99', '2.5', 'standard', '20']],
    subtotal: '24.98',
    tax: '5',
    total: '29.98',
  },
  // 100 − 10 = 90 net in one group; 18 tax
  {
    name: 'a discount line reduces its group',
    currency: 'USD',
    lines: [
      ['100', '1', 'standard', '20'],
      ['-10', '1', 'standard', '20'],
    ],
    subtotal: '90',
    tax: '18',
    total: '108',
  },
  {
    name: 'a rate without a kind is still taxed',
    currency: 'USD',
    lines: [['50', '1', null, '10']],
    subtotal: '50',
    tax: '5',
    total: '55',
    breakdown: [[null, '10', '50', '5']],
  },
  {
    name: 'inclusive, mixed rates',
    currency: 'GBP',
    inclusive: true,
    lines: [
      ['110', '1', 'standard', '10'],
      ['105', '1', 'reduced', '5'],
    ],
    subtotal: '200',
    tax: '15',
    total: '215',
    breakdown: [
      ['standard', '10', '100', '10'],
      ['reduced', '5', '100', '5'],
    ],
  },
  // 0.25 × 10% = 0.025 → 0.03
  {
    name: 'tax exactly half a cent rounds up',
    currency: 'USD',
    lines: [['0.25', '1', 'standard', '10']],
    subtotal: '0.25',
    tax: '0.03',
    total: '0.28',
  },
  // 0.10 × 3 = 0.30 (no rounding), 3 lines inclusive 0.3 × 20/120 = 0.05 each group → one group 0.9 → 0.15
  {
    name: 'many inclusive lines, one group',
    currency: 'USD',
    inclusive: true,
    lines: [
      ['0.10', '3', 'standard', '20'],
      ['0.10', '3', 'standard', '20'],
      ['0.10', '3', 'standard', '20'],
    ],
    subtotal: '0.75',
    tax: '0.15',
    total: '0.9',
  },
];

describe('invoice totals, worked by hand', () => {
  it.each(CASES)('$name', (c) => {
    const outcome = computeTotals(c.lines.map(line), c.currency, c.inclusive ?? false);
    if (!outcome.ok) throw new Error(JSON.stringify(outcome.problems));
    const { totals } = outcome;
    expect(formatAmountTrimmed(totals.subtotal)).toBe(c.subtotal);
    expect(formatAmountTrimmed(totals.taxTotal)).toBe(c.tax);
    expect(formatAmountTrimmed(totals.total)).toBe(c.total);
    if (c.breakdown) {
      expect(
        totals.breakdown.map((g) => [
          g.taxKind,
          formatRate(g.taxRate),
          formatAmountTrimmed(g.net),
          formatAmountTrimmed(g.tax),
        ]),
      ).toEqual(c.breakdown);
    }
  });

  it('has at least twenty cases', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(20);
  });

  it('knows the ISO 4217 exponents: JPY 0, BHD 3, USD 2, CLF 4; unknown 2; ETH capped at 8', () => {
    expect([minorUnitsOf('JPY'), minorUnitsOf('BHD'), minorUnitsOf('USD'), minorUnitsOf('CLF')]).toEqual([
      0, 3, 2, 4,
    ]);
    expect([minorUnitsOf('KWD'), minorUnitsOf('OMR'), minorUnitsOf('krw'), minorUnitsOf('QQQ')]).toEqual([
      3, 3, 0, 2,
    ]);
    expect([minorUnitsOf('USDC'), minorUnitsOf('BTC'), minorUnitsOf('ETH')]).toEqual([6, 8, 8]);
  });

  it('rounds half away from zero', () => {
    expect(formatAmountTrimmed(roundHalfUp(asAmount(500_000n), 2))).toBe('0.01');
    expect(formatAmountTrimmed(roundHalfUp(asAmount(-500_000n), 2))).toBe('-0.01');
    expect(formatAmountTrimmed(roundHalfUp(asAmount(499_999n), 2))).toBe('0');
  });

  it('reports each bad number with its line and field, and prices nothing', () => {
    const outcome = computeTotals(
      [
        { description: 'a', unit_price: '1e3' },
        { description: 'b', unit_price: '1', quantity: '0' },
        { description: 'c', unit_price: '1', tax_rate: '101' },
        { description: 'd', unit_price: '1', tax_rate: '-1' },
        { description: 'e', unit_price: '1.000000001' },
      ],
      'USD',
      false,
    );
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.problems.map((p) => [p.index, p.field])).toEqual([
      [0, 'unit_price'],
      [1, 'quantity'],
      [2, 'tax_rate'],
      [3, 'tax_rate'],
      [4, 'unit_price'],
    ]);
  });
});

const decimalText = (maxWhole: number, fractionMax: number) =>
  fc
    .tuple(
      fc.integer({ min: 0, max: maxWhole }),
      fc.integer({ min: 0, max: fractionMax }),
      fc.integer({ min: 0, max: 10 ** fractionMax - 1 }),
    )
    .map(([whole, digits, fraction]) =>
      digits === 0
        ? String(whole)
        : `${whole}.${String(fraction).padStart(fractionMax, '0').slice(0, digits)}`,
    );

const lineArb = fc.record({
  description: fc.constant('line'),
  unit_price: decimalText(1_000_000, 4),
  quantity: decimalText(1000, 3).filter((q) => !/^0(\.0*)?$/.test(q)),
  tax_kind: fc.constantFrom<TaxKind | null>(
    null,
    ...(['standard', 'reduced', 'zero', 'exempt', 'reverse_charge'] as const),
  ),
  tax_rate: fc.constantFrom('', '0', '5', '7.5', '10', '19', '20', '21', '8.875'),
  unit: fc.constant(''),
});

describe('invoice totals, properties', () => {
  it('subtotal + tax_total = total, the breakdown sums to both, and every figure sits on the minor unit', () => {
    fc.assert(
      fc.property(
        fc.array(lineArb, { minLength: 1, maxLength: 30 }),
        fc.constantFrom('USD', 'JPY', 'BHD', 'CLF', 'USDC', 'ETH'),
        fc.boolean(),
        (lines, currency, inclusive) => {
          const outcome = computeTotals(lines, currency, inclusive);
          expect(outcome.ok).toBe(true);
          if (!outcome.ok) return;
          const t = outcome.totals;
          expect(t.subtotal + t.taxTotal).toBe(t.total);
          expect(t.breakdown.reduce((sum, g) => sum + g.net, 0n)).toBe(t.subtotal);
          expect(t.breakdown.reduce((sum, g) => sum + g.tax, 0n)).toBe(t.taxTotal);
          const lineSum = t.lines.reduce((sum, l) => sum + l.amount, 0n);
          expect(inclusive ? t.total : t.subtotal).toBe(lineSum);
          const step = 10n ** BigInt(8 - minorUnitsOf(currency));
          for (const value of [t.subtotal, t.taxTotal, ...t.lines.map((l) => l.amount)])
            expect(value % step).toBe(0n);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('invoice state machine', () => {
  const ALL: InvoiceStatus[] = [
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
  ];
  const EXPECTED: Record<Move, InvoiceStatus[]> = {
    send: ['draft', 'sent', 'partial', 'issued', 'quote_draft', 'quote_sent'],
    pay: ['sent', 'partial'],
    remind: ['sent', 'partial'],
    void: ALL.filter((status) => status !== 'void'),
    edit: ['draft', 'sent', 'partial', 'issued', 'quote_draft', 'quote_sent'],
    revise: ['draft', 'quote_draft'],
    accept: ['quote_sent'],
    decline: ['quote_sent'],
  };
  it.each(Object.entries(EXPECTED))(
    'allows %s from exactly its states and refuses every other',
    (move, from) => {
      expect(ALL.filter((status) => allows(move as Move, status))).toEqual(
        ALL.filter((s) => from.includes(s)),
      );
    },
  );

  it('sends a draft to sent and a quote draft to quote_sent, and leaves others', () => {
    expect(ALL.map((status) => afterSend(status))).toEqual(
      ALL.map((s) => (s === 'draft' ? 'sent' : s === 'quote_draft' ? 'quote_sent' : s)),
    );
  });

  it('goes partial below the open amount, paid on it, and refuses beyond it', () => {
    const a = (n: bigint) => asAmount(n * 100_000_000n);
    expect(afterPayment(a(100n), a(0n), a(0n), a(40n))).toEqual({
      ok: true,
      paid: a(40n),
      status: 'partial',
      closes: false,
    });
    expect(afterPayment(a(100n), a(10n), a(40n), a(50n))).toEqual({
      ok: true,
      paid: a(90n),
      status: 'paid',
      closes: true,
    });
    expect(afterPayment(a(100n), a(0n), a(40n), a(61n))).toEqual({
      ok: false,
      code: 'overpayment',
      open: a(60n),
    });
  });

  it('reads the open amount as the total less credit notes and payments, never below zero', () => {
    const a = (n: bigint) => asAmount(n * 100_000_000n);
    expect(openAmount(a(100n), a(10n), a(40n))).toBe(a(50n));
    expect(openAmount(a(100n), a(60n), a(40n))).toBe(a(0n));
    expect(openAmount(a(100n), a(60n), a(50n))).toBe(a(0n));
    expect(openAmountOf({ total: '120.5', credited_amount: '0.00000001', paid_amount: '20' })).toBe(
      asAmount(10_049_999_999n),
    );
    // The presented form (eight places) reads the same as the stored one.
    expect(
      openAmountOf({ total: '1.00000000', credited_amount: '0.00000000', paid_amount: '0.25000000' }),
    ).toBe(asAmount(75_000_000n));
  });

  it('throws on an unreadable stored amount instead of reading it as zero', () => {
    expect(() => openAmountOf({ total: 'NaN', credited_amount: '0', paid_amount: '0' })).toThrow(
      AssertionFailure,
    );
    expect(() => openAmountOf({ total: '10', credited_amount: '', paid_amount: '0' })).toThrow(
      /credited_amount/,
    );
    expect(() => openAmountOf({ total: '10', credited_amount: '0', paid_amount: 'ten' })).toThrow(
      /paid_amount/,
    );
  });

  it('agrees with afterPayment: a payment of exactly the open amount closes the invoice', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 10n ** 12n }),
        fc.bigInt({ min: 0n, max: 10n ** 12n }),
        fc.bigInt({ min: 0n, max: 10n ** 12n }),
        (total, credited, paid) => {
          const open = openAmount(asAmount(total), asAmount(credited), asAmount(paid));
          fc.pre(open > 0n);
          const outcome = afterPayment(asAmount(total), asAmount(credited), asAmount(paid), open);
          expect(outcome).toMatchObject({ ok: true, closes: true });
        },
      ),
    );
  });

  it('reads a sent quote past due as expired; starts each kind in its state; numbers INV-000001', () => {
    expect(visibleStatus('quote_sent', '2026-06-01', '2026-06-02')).toBe('quote_expired');
    expect(visibleStatus('quote_sent', '2026-06-01', '2026-06-01')).toBe('quote_sent');
    expect(visibleStatus('sent', '2026-06-01', '2026-07-01')).toBe('sent');
    expect([initialStatus('invoice'), initialStatus('quote'), initialStatus('credit_note')]).toEqual([
      'draft',
      'quote_draft',
      'issued',
    ]);
  });
});

describe('client fields and contact requisites', () => {
  it('maps every client field to its requisite, blanks as empty text', () => {
    const contact = contactFromClient({ client_name: 'Acme', client_tax_id: 'DE123', client_email: null });
    expect(contact).toEqual({
      name: 'Acme',
      email: '',
      address: '',
      country: '',
      phone: '',
      reg_number: '',
      tax_id: 'DE123',
    });
  });

  it('names each requisite once and each client field once', () => {
    const fields = CLIENT_CONTACT_FIELDS.map(([field]) => field);
    const requisites = CLIENT_CONTACT_FIELDS.map(([, requisite]) => requisite);
    expect(new Set(fields).size).toBe(fields.length);
    expect(new Set(requisites).size).toBe(requisites.length);
    for (const [field, requisite] of CLIENT_CONTACT_FIELDS) expect(field).toBe(`client_${requisite}`);
  });
});
