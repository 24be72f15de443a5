import { describe, expect, it } from 'vitest';
import {
  COUNTRY_CODES,
  CURRENCY_CODES,
  REC20_UNIT_CODES,
} from '../src/features/invoices/einvoice-code-lists.ts';
import { einvoiceCodes } from '../src/features/invoices/einvoice-codes.ts';

// Our code lists against the ones @e-invoice-eu/core (the test oracle) reads its data with: a
// country, currency or unit we let through is one the library takes, and the other way round.

type CodeLists = Record<string, { enum?: readonly string[] } | undefined>;

async function libraryList(name: string): Promise<string[]> {
  const { invoiceSchema } = await import('@e-invoice-eu/core');
  const lists = (invoiceSchema as unknown as { $defs?: { codeLists?: CodeLists } }).$defs?.codeLists;
  const values = lists?.[name]?.enum;
  if (values === undefined) throw new Error(`@e-invoice-eu/core has no code list ${name}`);
  return [...values].sort();
}

const ours = (codes: string) => codes.trim().split(/\s+/).sort();

describe('the e-invoice code lists', () => {
  it('are the library’s countries, currencies and units, code for code', async () => {
    expect(ours(COUNTRY_CODES)).toEqual(await libraryList('ISO3166'));
    expect(ours(CURRENCY_CODES)).toEqual(await libraryList('ISO4217'));
    expect(ours(REC20_UNIT_CODES)).toEqual(await libraryList('UNECERec20'));
  }, 60_000);

  it('answer by membership', () => {
    const codes = einvoiceCodes();
    expect([codes.isCountry('DE'), codes.isCountry('EL'), codes.isCountry('de')]).toEqual([
      true,
      false,
      false,
    ]);
    expect([codes.isCurrency('EUR'), codes.isCurrency('USDC')]).toEqual([true, false]);
    expect([codes.isUnit('HUR'), codes.isUnit('C62'), codes.isUnit('hour')]).toEqual([true, true, false]);
  });
});
