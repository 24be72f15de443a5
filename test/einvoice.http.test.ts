import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PDFArray, PDFDict, PDFDocument, PDFName, PDFNumber, PDFStream } from '@cantoo/pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeAuthContract } from './auth-contract.ts';
import { describeFailures, type Syntax, stylesheet, validateEn16931, vendorExample } from './en16931.ts';
import { createHarness, type Harness, type User } from './harness.ts';

// E-invoices (GET /integration/invoices/{id}/einvoice, the app API's and the Download menu's
// twin): documents made through the HTTP API come out as CII, UBL and Factur-X, and the official
// EN 16931 rules find no fatal fault in them.

const SELLER_PROFILE = {
  legal_name: 'Nordlicht Studio GmbH',
  trading_name: 'Nordlicht',
  address: {
    line1: 'Hafenstraße 12',
    line2: 'Haus B',
    postal_code: '20457',
    city: 'Hamburg',
    region: 'Hamburg',
    country: 'DE',
  },
  vat_id: 'DE123456789',
  tax_number: '22/815/08150',
  registration_id: 'HRB 12345',
  email: 'billing@nordlicht.example',
  phone: '+49 40 123456',
  website: 'https://nordlicht.example',
  payment_terms_days: 30,
};

const CLIENT = {
  client_name: 'Acme SARL',
  client_email: 'ap@acme.example',
  client_address: '1 rue de Rivoli\n75001 Paris',
  client_country_code: 'FR',
  client_tax_id: 'FR12345678901',
  client_reg_number: '123 456 789',
};

// The mirrored seller an integration may set (spec 2.3), enough for EN 16931 on its own.
const OWN_SELLER = {
  name: 'Bridge Seller BV',
  address: 'Keizersgracht 1, 1015 Amsterdam',
  country: 'NL',
  tax_id: 'NL123456789B01',
  email: 'invoices@bridge.example',
};

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
  // Compiling the rules takes a while the first time (then they come from the disk cache).
  await Promise.all([stylesheet('cii'), stylesheet('ubl')]);
}, 600_000);
afterAll(() => h.close());

type Book = { owner: User; spaceId: string; accountId: string };

async function book(profile: Record<string, unknown> | null = SELLER_PROFILE): Promise<Book> {
  const owner = await h.signup('Owner');
  const spaceId = await h.createSpace(owner, { name: 'E-invoice book' });
  const account = await h.makeAccount(spaceId, { kind: 'bank', name: 'Main bank (EUR)', currency: 'EUR' });
  if (profile !== null) {
    const res = await api(owner, 'PATCH', `/app/api/spaces/${spaceId}/profile`, profile);
    expect(res.statusCode, res.body).toBe(200);
  }
  return { owner, spaceId, accountId: account.id };
}

function api(user: User, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: Record<string, unknown>) {
  return h.inject({ method, url, session: user.token, ...(payload ? { payload } : {}) });
}

async function create(b: Book, body: Record<string, unknown>) {
  const res = await api(b.owner, 'POST', `/app/api/spaces/${b.spaceId}/invoices`, {
    account_id: b.accountId,
    due_on: '2099-06-30',
    issued_on: '2026-06-01',
    currency: 'EUR',
    ...CLIENT,
    ...body,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; number: string; total: string };
}

async function einvoice(b: Book, id: string, format: 'cii' | 'ubl' | 'facturx') {
  return api(b.owner, 'GET', `/app/api/spaces/${b.spaceId}/invoices/${id}/einvoice?format=${format}`);
}

/** Fails with the broken rules' ids and sentences when a document breaks any fatal rule. */
async function expectValid(syntax: Syntax, xml: string) {
  const failures = await validateEn16931(syntax, xml);
  expect(
    failures.map((failure) => failure.id),
    describeFailures(failures),
  ).toEqual([]);
}

async function expectBothValid(b: Book, id: string) {
  for (const syntax of ['cii', 'ubl'] as const) {
    const res = await einvoice(b, id, syntax);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/xml/);
    await expectValid(syntax, res.body);
  }
}

describe('the EN 16931 validator', () => {
  it('passes the official examples (the oracle works)', async () => {
    await expectValid('cii', vendorExample('cii'));
    await expectValid('ubl', vendorExample('ubl'));
  });

  it('finds a broken rule and names it by its BR id', async () => {
    // The example with its total without VAT doubled breaks BR-CO-13 (and the totals after it).
    const broken = vendorExample('ubl').replace(
      /<cbc:TaxExclusiveAmount currencyID="(\w+)">([\d.]+)</,
      (_all, currency: string, amount: string) =>
        `<cbc:TaxExclusiveAmount currencyID="${currency}">${(Number(amount) * 2).toFixed(2)}<`,
    );
    const failures = await validateEn16931('ubl', broken);
    expect(failures.map((failure) => failure.id)).toContain('BR-CO-13');
  });
});

describe('e-invoices of documents made through the API', () => {
  it('a plain invoice: CII and UBL pass every fatal rule, named and dated as the invoice', async () => {
    const b = await book();
    const invoice = await create(b, {
      line_items: [
        {
          description: 'Design',
          unit_price: '800',
          quantity: '3',
          unit: 'day',
          tax_kind: 'standard',
          tax_rate: '19',
        },
      ],
    });
    await expectBothValid(b, invoice.id);
    const ubl = (await einvoice(b, invoice.id, 'ubl')).body;
    expect(ubl).toContain('<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"');
    expect(ubl).toContain(`<cbc:ID>${invoice.number}</cbc:ID>`);
    expect(ubl).toContain('urn:fdc:peppol.eu:2017:poacc:billing:3.0');
    expect(ubl).toContain('<cbc:PayableAmount currencyID="EUR">2856.00</cbc:PayableAmount>');
    expect(ubl).toContain('<cbc:RegistrationName>Nordlicht Studio GmbH</cbc:RegistrationName>');
    const cii = await einvoice(b, invoice.id, 'cii');
    expect(cii.headers['content-disposition']).toBe(
      `attachment; filename="invoice-${invoice.number}.cii.xml"`,
    );
    // A Factur-X reader takes the profile from the specification id (BT-24): EN 16931 alone.
    expect(cii.body).toContain('<ram:ID>urn:cen.eu:en16931:2017</ram:ID>');
    expect(cii.body).not.toContain('peppol');
  });

  it('a multi-rate invoice with a discount line and decimal quantities passes', async () => {
    const b = await book();
    const invoice = await create(b, {
      line_items: [
        {
          description: 'Consulting',
          unit_price: '99.995',
          quantity: '1.5',
          unit: 'hour',
          tax_kind: 'standard',
          tax_rate: '19',
        },
        { description: 'Book', unit_price: '12.50', quantity: '3', tax_kind: 'reduced', tax_rate: '7' },
        { description: 'Hosting', unit_price: '20', quantity: '2.25', unit: 'month', tax_rate: '19' },
        {
          description: 'Loyalty discount',
          unit_price: '-10',
          quantity: '1',
          tax_kind: 'standard',
          tax_rate: '19',
        },
      ],
    });
    await expectBothValid(b, invoice.id);
  });

  it('prices that include tax come out net, and still add up', async () => {
    const b = await book();
    const invoice = await create(b, {
      prices_include_tax: true,
      line_items: [
        { description: 'Ticket', unit_price: '11.90', quantity: '3', tax_kind: 'standard', tax_rate: '19' },
        {
          description: 'Ticket, child',
          unit_price: '5.95',
          quantity: '1',
          tax_kind: 'standard',
          tax_rate: '19',
        },
        { description: 'Guide', unit_price: '10.70', quantity: '1', tax_kind: 'reduced', tax_rate: '7' },
      ],
    });
    await expectBothValid(b, invoice.id);
    expect((await einvoice(b, invoice.id, 'ubl')).body).toContain(
      `<cbc:TaxInclusiveAmount currencyID="EUR">${Number(invoice.total).toFixed(2)}</cbc:TaxInclusiveAmount>`,
    );
  });

  it('0 %, exempt (with its reason) and zero rated lines pass', async () => {
    const b = await book();
    const invoice = await create(b, {
      tax_exempt_reason: 'Exempt under §4 Nr. 21 UStG (education)',
      line_items: [
        { description: 'Workshop', unit_price: '500', quantity: '1', tax_kind: 'exempt' },
        { description: 'Printed book', unit_price: '30', quantity: '2', tax_kind: 'zero', tax_rate: '0' },
        { description: 'Sample', unit_price: '0', quantity: '1' },
      ],
    });
    await expectBothValid(b, invoice.id);
    expect((await einvoice(b, invoice.id, 'cii')).body).toContain('Exempt under §4 Nr. 21 UStG (education)');
  });

  it('a reverse charge invoice to a VAT-registered buyer passes and says "Reverse charge"', async () => {
    const b = await book();
    const invoice = await create(b, {
      line_items: [
        {
          description: 'Audit',
          unit_price: '1200',
          quantity: '1',
          tax_kind: 'reverse_charge',
          tax_rate: '19',
        },
      ],
    });
    await expectBothValid(b, invoice.id);
    const ubl = (await einvoice(b, invoice.id, 'ubl')).body;
    expect(ubl).toContain('<cbc:TaxExemptionReasonCode>VATEX-EU-AE</cbc:TaxExemptionReasonCode>');
    expect(ubl).toContain('<cbc:PayableAmount currencyID="EUR">1200.00</cbc:PayableAmount>');
  });

  it('intra-community supply, export and not-subject invoices pass', async () => {
    const b = await book();
    const intra = await create(b, {
      delivered_on: '2026-05-28',
      line_items: [
        { description: 'Machine part', unit_price: '340', quantity: '4', tax_kind: 'intra_community' },
      ],
    });
    await expectBothValid(b, intra.id);
    const exported = await create(b, {
      client_country_code: 'US',
      client_tax_id: '',
      line_items: [{ description: 'Machine', unit_price: '9000', quantity: '1', tax_kind: 'export' }],
    });
    await expectBothValid(b, exported.id);
    const small = await book({ ...SELLER_PROFILE, vat_id: '' });
    const notSubject = await create(small, {
      line_items: [{ description: 'Lesson', unit_price: '45', quantity: '2', tax_kind: 'not_subject' }],
    });
    await expectBothValid(small, notSubject.id);
  });

  it('a credit note comes out as a UBL CreditNote naming the invoice it corrects, and passes', async () => {
    const b = await book();
    const invoice = await create(b, {
      line_items: [
        { description: 'Design', unit_price: '800', quantity: '3', tax_kind: 'standard', tax_rate: '19' },
      ],
    });
    const credit = await create(b, {
      kind: 'credit_note',
      corrects_invoice_id: invoice.id,
      line_items: [
        {
          description: 'Design (one day less)',
          unit_price: '800',
          quantity: '1',
          tax_kind: 'standard',
          tax_rate: '19',
        },
      ],
    });
    await expectBothValid(b, credit.id);
    const ubl = (await einvoice(b, credit.id, 'ubl')).body;
    expect(ubl).toContain('<CreditNote xmlns="urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2"');
    expect(ubl).toContain('<cbc:CreditNoteTypeCode>381</cbc:CreditNoteTypeCode>');
    expect(ubl).toContain(`<cbc:ID>${invoice.number}</cbc:ID>`);
    const cii = (await einvoice(b, credit.id, 'cii')).body;
    expect(cii).toContain('<ram:TypeCode>381</ram:TypeCode>');
    // BT-25/26 in CII too: the corrected invoice's number and issue date.
    expect(cii).toMatch(
      new RegExp(
        `<ram:InvoiceReferencedDocument>\\s*<ram:IssuerAssignedID>${invoice.number}</ram:IssuerAssignedID>\\s*<ram:FormattedIssueDateTime>\\s*<qdt:DateTimeString format="102">20260601</qdt:DateTimeString>`,
      ),
    );
  });

  it('a mirrored invoice with its own seller needs no profile, and the SEPA account becomes its payment means', async () => {
    const b = await book(null);
    const patched = await api(b.owner, 'PATCH', `/app/api/spaces/${b.spaceId}/accounts/${b.accountId}`, {
      requisites: {
        scheme: 'sepa',
        iban: 'DE89370400440532013000',
        bic: 'COBADEFFXXX',
        holder: 'Bridge Seller BV',
      },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    const { key } = await keyFor(b);
    const res = await h.inject({
      method: 'POST',
      url: '/integration/invoices',
      key,
      payload: {
        account_id: b.accountId,
        due_on: '2099-01-31',
        ...CLIENT,
        seller: OWN_SELLER,
        line_items: [
          {
            description: 'Licence',
            unit_price: '49.99',
            quantity: '12',
            tax_kind: 'standard',
            tax_rate: '21',
          },
        ],
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    const id = res.json().id as string;
    for (const syntax of ['cii', 'ubl'] as const) {
      const file = await h.inject({
        method: 'GET',
        url: `/integration/invoices/${id}/einvoice?format=${syntax}`,
        key,
      });
      expect(file.statusCode, file.body).toBe(200);
      await expectValid(syntax, file.body);
      expect(file.body).toContain('DE89370400440532013000');
      expect(file.body).toContain('Bridge Seller BV');
    }
  });
});

async function keyFor(b: Book) {
  const res = await api(b.owner, 'POST', `/app/api/spaces/${b.spaceId}/keys`, {
    name: 'Bridge',
    scopes: ['invoices'],
  });
  expect(res.statusCode, res.body).toBe(201);
  return { key: res.json().key as string };
}

function pdfTool(tool: string, args: string[]): string {
  return execFileSync(tool, args, { encoding: 'utf8' });
}

describe('Factur-X', () => {
  it('is a PDF/A-3 declaring Factur-X EN 16931, with the CII of the invoice embedded', async () => {
    const b = await book();
    const invoice = await create(b, {
      line_items: [
        {
          description: 'Design',
          unit_price: '800',
          quantity: '3',
          unit: 'day',
          tax_kind: 'standard',
          tax_rate: '19',
        },
      ],
    });
    const res = await einvoice(b, invoice.id, 'facturx');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="invoice-${invoice.number}.pdf"`);
    const dir = mkdtempSync(join(tmpdir(), 'tb-facturx-'));
    const pdfPath = join(dir, 'invoice.pdf');
    writeFileSync(pdfPath, res.rawPayload);
    expect(pdfTool('pdfdetach', ['-list', pdfPath])).toContain('factur-x.xml');
    const out = join(dir, 'attached');
    execFileSync('mkdir', [out]);
    pdfTool('pdfdetach', ['-saveall', '-o', out, pdfPath]);
    expect(readdirSync(out)).toEqual(['factur-x.xml']);
    const embedded = readFileSync(join(out, 'factur-x.xml'), 'utf8');
    const cii = (await einvoice(b, invoice.id, 'cii')).body;
    expect(embedded).toBe(cii);
    await expectValid('cii', embedded);
    const meta = pdfTool('pdfinfo', ['-meta', pdfPath]);
    expect(meta).toMatch(/<pdfaid:part>3<\/pdfaid:part>/);
    expect(meta).toMatch(/<pdfaid:conformance>B<\/pdfaid:conformance>/);
    expect(meta).toMatch(/<fx:ConformanceLevel>EN 16931<\/fx:ConformanceLevel>/);
    expect(meta).toMatch(/<fx:DocumentFileName>factur-x.xml<\/fx:DocumentFileName>/);
    // Strict PDF/A-3b: every font embedded, the XMP in UTF-8 with the seller's name, an sRGB
    // output intent whose ICC profile says its three components, no information dictionary
    // entry that could disagree with the XMP.
    const fonts = pdfTool('pdffonts', [pdfPath])
      .split('\n')
      .slice(2)
      .filter((line) => line.trim() !== '');
    expect(fonts.length).toBeGreaterThan(0);
    for (const font of fonts) expect(font).toMatch(/^\S*DejaVuSans\S*\s+CID TrueType\s+Identity-H\s+yes /);
    expect(meta).toContain(
      '<dc:creator><rdf:Seq><rdf:li>Nordlicht Studio GmbH</rdf:li></rdf:Seq></dc:creator>',
    );
    expect(meta).toContain('<pdfaSchema:prefix>fx</pdfaSchema:prefix>');
    const parsed = await PDFDocument.load(res.rawPayload, { updateMetadata: false });
    const intents = parsed.catalog.lookup(PDFName.of('OutputIntents'), PDFArray);
    expect(intents.size()).toBe(1);
    const intent = intents.lookup(0, PDFDict);
    expect(intent.lookup(PDFName.of('S'))).toBe(PDFName.of('GTS_PDFA1'));
    const profile = intent.lookup(PDFName.of('DestOutputProfile'), PDFStream);
    expect(profile.dict.lookup(PDFName.of('N'), PDFNumber).asNumber()).toBe(3);
    // The information dictionary names only what pdfkit also writes into the XMP.
    const info = parsed.context.trailerInfo.Info;
    const keys = info ? parsed.context.lookup(info, PDFDict).keys() : [];
    expect(keys.map((key) => key.asString()).sort()).toEqual(['/CreationDate', '/Creator', '/Producer']);
    expect(meta).toContain('<pdf:Producer>Tollbook</pdf:Producer>');
    // The CII is the Alternative form of the invoice (PDF/A-3's associated file).
    const af = parsed.catalog.lookup(PDFName.of('AF'), PDFArray).lookup(0, PDFDict);
    expect(af.lookup(PDFName.of('AFRelationship'))).toBe(PDFName.of('Alternative'));
    // The visible invoice is the app's own PDF, unchanged.
    expect(pdfTool('pdftotext', ['-layout', pdfPath, '-'])).toMatch(
      new RegExp(`Invoice number\\s+${invoice.number}`),
    );
  });
});

describe('refusals', () => {
  it('answers 422 einvoice_incomplete listing what an empty seller profile and the buyer lack', async () => {
    const b = await book(null);
    const invoice = await create(b, {
      client_country_code: '',
      client_email: '',
      line_items: [{ description: 'Design', unit_price: '800', tax_kind: 'standard', tax_rate: '19' }],
    });
    for (const format of ['facturx', 'cii', 'ubl'] as const) {
      const res = await einvoice(b, invoice.id, format);
      expect(res.statusCode, res.body).toBe(422);
      const body = res.json();
      expect(body.error).toBe('einvoice_incomplete');
      expect(body.detail).toMatch(/EN 16931/);
      expect(body.details.missing).toEqual(
        expect.arrayContaining([
          'seller.legal_name',
          'seller.address.country',
          'seller.vat_id',
          'client_country_code',
        ]),
      );
      if (format === 'ubl')
        expect(body.details.missing).toEqual(expect.arrayContaining(['seller.email', 'client_email']));
      else expect(body.details.missing).not.toContain('seller.email');
    }
  });

  it('names the exemption reason, the buyer VAT ID and the delivery date when a category needs them', async () => {
    const b = await book();
    const invoice = await create(b, {
      client_tax_id: '',
      client_reg_number: '',
      line_items: [
        { description: 'Course', unit_price: '100', tax_kind: 'exempt' },
        { description: 'Audit', unit_price: '100', tax_kind: 'reverse_charge' },
        { description: 'Part', unit_price: '100', tax_kind: 'intra_community' },
      ],
    });
    const res = await einvoice(b, invoice.id, 'cii');
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().details.missing.sort()).toEqual(['client_tax_id', 'delivered_on', 'tax_exempt_reason']);
  });

  it('refuses a quote (invoice_state), another space’s invoice (404) and an unknown format (422)', async () => {
    const b = await book();
    const quote = await create(b, { kind: 'quote', line_items: [{ description: 'Plan', unit_price: '10' }] });
    const refused = await einvoice(b, quote.id, 'ubl');
    expect(refused.statusCode).toBe(422);
    expect(refused.json().error).toBe('invoice_state');
    const other = await book();
    const theirs = await create(other, {
      line_items: [{ description: 'X', unit_price: '1', tax_rate: '19' }],
    });
    expect((await einvoice(b, theirs.id, 'ubl')).statusCode).toBe(404);
    const bad = await api(
      b.owner,
      'GET',
      `/app/api/spaces/${b.spaceId}/invoices/${theirs.id}/einvoice?format=pdf`,
    );
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail[0].loc).toEqual(['query', 'format']);
  });
});

describe('the invoice page', () => {
  it('offers PDF, Factur-X, UBL and CII under Download, and the links answer the files', async () => {
    const b = await book();
    const invoice = await create(b, {
      line_items: [{ description: 'Design', unit_price: '800', tax_kind: 'standard', tax_rate: '19' }],
    });
    const page = await h.inject({
      method: 'GET',
      url: `/app/books/${b.spaceId}/invoices/${invoice.id}`,
      headers: { cookie: `tb_session=${b.owner.token}` },
    });
    expect(page.statusCode, page.body.slice(0, 300)).toBe(200);
    const menu = /<details class="menu">([\s\S]*?)<\/details>/.exec(page.body)?.[1] ?? '';
    expect(menu).toContain('Download');
    const links = [...menu.matchAll(/href="([^"]+)"/g)].map((match) =>
      (match[1] ?? '').replace(/&amp;/g, '&'),
    );
    expect(links).toHaveLength(4);
    for (const [link, type] of [
      [links[1], 'application/pdf'],
      [links[2], 'application/xml'],
      [links[3], 'application/xml'],
    ] as const) {
      const file = await h.inject({
        method: 'GET',
        url: link ?? '',
        headers: { cookie: `tb_session=${b.owner.token}` },
      });
      expect(file.statusCode, file.body.slice(0, 300)).toBe(200);
      expect(file.headers['content-type']).toContain(type);
    }
  });

  it('answers a page naming what is missing when the profile is not enough for an e-invoice', async () => {
    const b = await book(null);
    const invoice = await create(b, {
      line_items: [{ description: 'Design', unit_price: '800', tax_rate: '19' }],
    });
    const res = await h.inject({
      method: 'GET',
      url: `/app/books/${b.spaceId}/invoices/${invoice.id}/einvoice?format=facturx`,
      headers: { cookie: `tb_session=${b.owner.token}` },
    });
    expect(res.statusCode).toBe(422);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('seller.legal_name');
  });
});

describeAuthContract({
  method: 'GET',
  url: '/integration/invoices/none/einvoice?format=ubl',
  scope: 'invoices',
  okStatus: 200,
  setup: async (harness, key) => {
    const account = await harness.makeAccount(key.spaceId, { currency: 'EUR' });
    const res = await harness.inject({
      method: 'POST',
      url: '/integration/invoices',
      key: key.key,
      payload: {
        account_id: account.id,
        due_on: '2099-01-31',
        ...CLIENT,
        seller: OWN_SELLER,
        line_items: [{ description: 'Licence', unit_price: '10', tax_kind: 'standard', tax_rate: '21' }],
      },
    });
    if (res.statusCode !== 201) throw new Error(res.body);
    return { url: `/integration/invoices/${res.json().id}/einvoice?format=ubl` };
  },
});
