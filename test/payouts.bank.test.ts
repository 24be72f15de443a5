import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireAccount } from '../src/features/accounts/index.ts';
import { type SepaPayment, sepaXml } from '../src/features/payouts/bank-file.ts';
import { amountOf, findPayout } from '../src/features/payouts/store.ts';
import { createHarness, type Harness } from './harness.ts';
import { type Book, expectEventBody, makeBook } from './payouts-setup.ts';

/**
 * The published ISO 20022 schema, in shared/ beside the repository (CI lays it out so);
 * TOLLBOOK_SHARED_DIR names another shared/ folder for a checkout laid out otherwise.
 */
const SHARED =
  process.env.TOLLBOOK_SHARED_DIR ?? join(dirname(fileURLToPath(import.meta.url)), '../../shared');
const PAIN_001_XSD = join(SHARED, 'vendor/iso20022/pain.001.001.03.xsd');
const xsdDir = mkdtempSync(join(tmpdir(), 'pain001-'));

/** xmllint against the published schema: '' when the file validates, else it throws. */
function validatePain001(text: string): string {
  writeFileSync(join(xsdDir, 'payment.xml'), text);
  return execFileSync('xmllint', ['--noout', '--schema', PAIN_001_XSD, join(xsdDir, 'payment.xml')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

let h: Harness;
let cyrillicContact: string;
let b: Book;
let eur: { id: string };
let sepaContact: string;
let achContact: string;
beforeAll(async () => {
  h = await createHarness();
  b = await makeBook(h);
  eur = await h.makeAccount(b.spaceId, {
    kind: 'bank',
    name: 'Tollbook Demo GmbH',
    currency: 'EUR',
    opening_balance: '5000',
    details: 'IBAN DE89 3704 0044 0532 0130 00, BIC COBADEFFXXX',
  });
  const key = await h.issueKey(b.owner, b.spaceId, { scopes: ['contacts'] });
  const contact = async (name: string, requisites: Record<string, unknown>) => {
    const res = await h.inject({
      method: 'POST',
      url: '/integration/contacts',
      key: key.key,
      payload: { name, kind: 'company', addresses: [{ label: 'Bank', address: '', requisites }] },
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as string;
  };
  sepaContact = await contact('Lieferant AG', {
    scheme: 'sepa',
    iban: 'FR14 2004 1010 0505 0001 3M02 606',
    bic: 'PSSTFRPPLIL',
    holder: 'Lieferant AG',
  });
  cyrillicContact = await contact('Пётр Щукин & Söhne', {
    scheme: 'sepa',
    iban: 'DE89 3704 0044 0532 0130 00',
    holder: 'Пётр Щукин & Söhne Ζεύς Łódź',
  });
  achContact = await contact('=HYPERLINK Supplies', {
    scheme: 'us_ach',
    account_number: '000123456789',
    routing_number: '011000015',
    holder: '=HYPERLINK Supplies',
    account_type: 'checking',
  });
});
afterAll(async () => {
  await b.ledgerSound();
  await h.close();
});

describe('bank payments', () => {
  it('waits in executing, gives a pain.001.001.03 file, and is executed with the bank’s reference', async () => {
    const payment = (
      await b.post(b.member, '/payments', {
        account_id: eur.id,
        rail: 'bank',
        amount: '1234.56',
        payee: 'Lieferant AG',
        contact_id: sepaContact,
        note: 'Invoice 2026-117',
      })
    ).json();
    expect(payment).toMatchObject({
      status: 'executing',
      destination: 'FR1420041010050500013M02606',
      transaction_id: null,
    });
    const file = await b.get(b.admin, `/payments/${payment.id}/file`);
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-type']).toContain('application/xml');
    const xml = file.body;
    expect(xml).toContain('urn:iso:std:iso:20022:tech:xsd:pain.001.001.03');
    expect(xml).toContain('<InstdAmt Ccy="EUR">1234.56</InstdAmt>');
    expect(xml).toContain('<IBAN>DE89370400440532013000</IBAN>');
    expect(xml).toContain('<IBAN>FR1420041010050500013M02606</IBAN>');
    const validate = validatePain001;
    expect(validate(xml)).toBe('');
    // The check is not vacuous: a lower-case IBAN or a sub-cent-precision amount is refused.
    expect(() => validate(xml.replace('<IBAN>DE89', '<IBAN>de89'))).toThrow(/fails to validate/);
    expect(() => validate(xml.replace('>1234.56</InstdAmt>', '>1234.567891</InstdAmt>'))).toThrow(
      /fails to validate/,
    );
    expect(await b.balance(eur.id)).toBe('5000.00000000');
    expect(
      (await b.post(b.member, `/payments/${payment.id}/executed`, { reference: 'BANK-REF-1' })).statusCode,
    ).toBe(403);
    const done = (
      await b.post(b.admin, `/payments/${payment.id}/executed`, { reference: 'BANK-REF-1' })
    ).json();
    expect(done).toMatchObject({ status: 'executed', reference: 'BANK-REF-1' });
    expect(await b.balance(eur.id)).toBe('3765.44000000');
    const executed = (await b.events('payout.executed')).find((e) => e.payload.payment_id === payment.id)!;
    expectEventBody(executed.payload, {
      payment_id: payment.id,
      amount: '1234.56000000',
      currency: 'EUR',
      rail: 'bank',
      transaction_id: done.transaction_id,
    });
    const out2 = (await b.events('money.out')).find((e) => e.payload.transaction_id === done.transaction_id)!;
    expect(out2.payload).toMatchObject({ origin: 'rail', kind: 'expense', direction: 'out' });
    const again = await b.post(b.admin, `/payments/${payment.id}/executed`, { reference: 'BANK-REF-2' });
    expect(again.json().error).toBe('payment_state');
  });

  it('takes the paying account’s IBAN, BIC and holder from its bank requisites, never its nickname', async () => {
    const edited = await h.makeAccount(b.spaceId, {
      kind: 'bank',
      name: 'Main bank (EUR)',
      currency: 'EUR',
      opening_balance: '100',
    });
    const patched = await h.inject({
      method: 'PATCH',
      url: `/app/api/spaces/${b.spaceId}/accounts/${edited.id}`,
      session: b.owner.token,
      payload: {
        requisites: {
          scheme: 'sepa',
          iban: 'DE02 1203 0000 0000 2020 51',
          bic: 'BYLADEM1001',
          holder: 'Nordlicht Studio GmbH',
        },
      },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    const payment = (
      await b.post(b.member, '/payments', {
        account_id: edited.id,
        rail: 'bank',
        amount: '12.50',
        payee: 'Lieferant AG',
        contact_id: sepaContact,
      })
    ).json();
    const xml = (await b.get(b.admin, `/payments/${payment.id}/file`)).body;
    expect(xml).toContain('<IBAN>DE02120300000000202051</IBAN>');
    expect(xml).toContain('<BIC>BYLADEM1001</BIC>');
    expect(xml).toContain('<Nm>Nordlicht Studio GmbH</Nm>');
    expect(xml).not.toContain('Main bank');
    expect(validatePain001(xml)).toBe('');
  });

  it('spells names in the SEPA character set and cuts remittance to 140 characters; the file meets the published schema', async () => {
    const note = `Rechnung Nr. 2026/118 für Ärzte – ${'Ж'.repeat(20)} ${'x'.repeat(200)}`;
    const payment = (
      await b.post(b.member, '/payments', {
        account_id: eur.id,
        rail: 'bank',
        amount: '10',
        payee: 'Пётр Щукин',
        contact_id: cyrillicContact,
        note,
      })
    ).json();
    expect(payment.status).toBe('executing');
    const xml = (await b.get(b.admin, `/payments/${payment.id}/file`)).body;
    expect(validatePain001(xml)).toBe('');
    expect(xml).toContain('<Nm>Petr Shchukin + Sohne Zeys Lodz</Nm>');
    const remittance = /<Ustrd>([^<]*)<\/Ustrd>/.exec(xml)![1]!;
    expect(remittance.startsWith('Rechnung Nr. 2026/118 fur Arzte - ZhZhZh')).toBe(true);
    expect(remittance.length).toBeLessThanOrEqual(140);
    expect(remittance).toMatch(/^[A-Za-z0-9/?:().,'+ -]+$/);
    await b.post(b.admin, `/payments/${payment.id}/executed`, { reference: 'BANK-REF-3' });
  });

  it('puts several payments from one account in one pain.001 file that meets the published schema', async () => {
    const long = `Facture n° 77 — ${'Ω'.repeat(10)} ${'Zahlung für Übersetzung '.repeat(10)}`;
    const made = [
      { amount: '12.34', payee: 'Lieferant AG', contact_id: sepaContact, note: 'Invoice 1' },
      { amount: '5', payee: 'Пётр Щукин', contact_id: cyrillicContact, note: long },
      { amount: '0.07', payee: 'Lieferant AG', contact_id: sepaContact, note: '' },
    ];
    const rows = [];
    for (const input of made) {
      const payment = (
        await b.post(b.member, '/payments', { account_id: eur.id, rail: 'bank', ...input })
      ).json();
      expect(payment.status).toBe('executing');
      rows.push((await findPayout(h.db, b.spaceId, payment.id))!);
    }
    const account = await requireAccount(h.db, b.spaceId, eur.id);
    const xml = sepaXml(
      rows.map((row) => ({
        row,
        amount: amountOf({ amount: row.amount }),
        requisites: row.requisites as SepaPayment['requisites'],
      })),
      account,
      new Date(),
    );
    expect(validatePain001(xml)).toBe('');
    expect(xml).toContain('<NbOfTxs>3</NbOfTxs>');
    expect(xml).toContain('<CtrlSum>17.41</CtrlSum>');
    expect([...xml.matchAll(/<InstdAmt Ccy="EUR">([^<]*)</g)].map((match) => match[1])).toEqual([
      '12.34',
      '5.00',
      '0.07',
    ]);
    const endToEnd = [...xml.matchAll(/<EndToEndId>([^<]*)</g)].map((match) => match[1]);
    expect(endToEnd).toEqual(rows.map((row) => row.id.replaceAll('-', '')));
    const ids = [...xml.matchAll(/<(?:PmtInfId|InstrId)>([^<]*)</g)].map((match) => match[1]);
    expect(new Set(ids).size).toBe(ids.length);
    expect(xml).toContain('<Nm>Petr Shchukin + Sohne Zeys Lodz</Nm>');
    const remittances = [...xml.matchAll(/<Ustrd>([^<]*)<\/Ustrd>/g)].map((match) => match[1]!);
    expect(remittances[1]!.slice(0, 50)).toBe('Facture ndeg 77 - OOOOOOOOOO Zahlung fur Ubersetzu');
    expect(remittances[1]!.length).toBe(140);
    for (const text of remittances) expect(text).toMatch(/^[A-Za-z0-9/?:().,'+ -]+$/);
    for (const row of rows)
      await b.post(b.admin, `/payments/${row.id}/executed`, { reference: `BATCH-${row.id.slice(0, 8)}` });
  });

  it('gives CSV for other requisites, with formula characters neutralised', async () => {
    const usd = (
      await b.post(b.member, '/payments', {
        account_id: b.bank.id,
        rail: 'bank',
        amount: '99.5',
        payee: 'Supplies',
        contact_id: achContact,
      })
    ).json();
    const file = await b.get(b.owner, `/payments/${usd.id}/file`);
    expect(file.headers['content-type']).toContain('text/csv');
    const [header, line] = file.body.trim().split('\r\n');
    expect(header).toBe(
      'payment_id,amount,currency,payee,scheme,holder,iban,bic,account_number,sort_code,routing_number,swift_bic,bank_name,account_type,note',
    );
    expect(line).toBe(
      `"${usd.id}","99.50000000","USD","Supplies","us_ach","'=HYPERLINK Supplies","","","000123456789","","011000015","","","checking",""`,
    );
  });

  it('refuses a bank payment without requisites, a file for a book payment, and sub-cent SEPA amounts', async () => {
    const none = await b.post(b.member, '/payments', {
      account_id: b.bank.id,
      rail: 'bank',
      amount: '1',
      payee: 'X',
    });
    expect(none.json()).toMatchObject({ error: 'invalid_request', details: { field: 'contact_id' } });
    const book = (await b.pay(b.member, { amount: '1' })).json();
    expect((await b.get(b.owner, `/payments/${book.id}/file`)).json()).toMatchObject({
      details: { field: 'rail' },
    });
    const fine = (
      await b.post(b.member, '/payments', {
        account_id: eur.id,
        rail: 'bank',
        amount: '1.005',
        payee: 'L',
        contact_id: sepaContact,
      })
    ).json();
    const file = await b.get(b.owner, `/payments/${fine.id}/file`);
    expect(file.statusCode).toBe(422);
    expect(file.json().error).toBe('amount_not_accepted');
    expect((await b.post(b.member, `/payments/${fine.id}/cancel`)).json().status).toBe('cancelled');
  });
});
