import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import jsqr from 'jsqr';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type User } from './harness.ts';
import { testPng } from './support/images.ts';

// The invoice PDF as a client receives it: seller and buyer blocks, the line table with its
// header on every page, the tax summary, the totals, how to pay (bank details with a GiroCode
// for euros, the pay link) and "Page n of m". Read back with pdftotext, rendered with pdftoppm
// (the PNGs land in test-results/invoice-pdf/ to be looked at), and the GiroCode decoded. The
// book's logo sits atop the seller block of every kind of document (pdfimages), and every font
// is embedded (pdffonts), so accents, Polish and Greek letters render.

// jsqr is CommonJS: at run time its function is the module itself; to the checker, its default.
const jsQR = ((jsqr as unknown as { default?: unknown }).default ?? jsqr) as typeof jsqr.default;

const RESULTS_DIR = fileURLToPath(new URL('../test-results/invoice-pdf/', import.meta.url));

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ env: { RATE_LIMIT_PER_MINUTE: '100000', SMTP_URL: 'smtp://127.0.0.1:9' } });
  mkdirSync(RESULTS_DIR, { recursive: true });
});
afterAll(() => h.close());

type Book = { owner: User; spaceId: string; accountId: string };

const api = (user: User, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: Record<string, unknown>) =>
  h.inject({ method, url, session: user.token, ...(payload ? { payload } : {}) });

async function book(): Promise<Book> {
  const owner = await h.signup('Owner');
  const spaceId = await h.createSpace(owner, { name: 'Nordlicht' });
  const account = await h.makeAccount(spaceId, { kind: 'bank', name: 'Main bank (EUR)', currency: 'EUR' });
  const requisites = await api(owner, 'PATCH', `/app/api/spaces/${spaceId}/accounts/${account.id}`, {
    requisites: {
      scheme: 'sepa',
      iban: 'DE89370400440532013000',
      bic: 'COBADEFFXXX',
      holder: 'Nordlicht Studio GmbH',
    },
  });
  expect(requisites.statusCode, requisites.body).toBe(200);
  const profile = await api(owner, 'PATCH', `/app/api/spaces/${spaceId}/profile`, {
    legal_name: 'Nordlicht Studio GmbH',
    trading_name: 'Nordlicht',
    address: { line1: 'Hafenstraße 12', postal_code: '20457', city: 'Hamburg', country: 'DE' },
    vat_id: 'DE123456789',
    registration_id: 'HRB 12345',
    email: 'billing@nordlicht.example',
    invoice_footer: 'Nordlicht Studio GmbH · Hamburg · Thank you for your business.',
  });
  expect(profile.statusCode, profile.body).toBe(200);
  return { owner, spaceId, accountId: account.id };
}

async function sentInvoice(b: Book, lines: Record<string, unknown>[], client: Record<string, string> = {}) {
  const created = await api(b.owner, 'POST', `/app/api/spaces/${b.spaceId}/invoices`, {
    account_id: b.accountId,
    client_name: 'Acme GmbH',
    client_email: 'ap@acme.example',
    client_address: 'Marktplatz 1\n80331 München',
    client_tax_id: 'DE987654321',
    issued_on: '2026-11-02',
    due_on: '2026-12-02',
    notes: 'Work done in October.',
    line_items: lines,
    ...client,
  });
  expect(created.statusCode, created.body).toBe(201);
  const invoice = created.json() as { id: string; number: string; url: string };
  const sent = await api(b.owner, 'POST', `/app/api/spaces/${b.spaceId}/invoices/${invoice.id}/send`, {
    via: 'none',
  });
  expect(sent.statusCode, sent.body).toBe(200);
  const pdf = await api(b.owner, 'GET', `/app/api/spaces/${b.spaceId}/invoices/${invoice.id}/pdf`);
  expect(pdf.statusCode).toBe(200);
  expect(pdf.headers['content-type']).toContain('application/pdf');
  return { invoice, pdf: pdf.rawPayload };
}

function files(pdf: Buffer, name: string) {
  const dir = mkdtempSync(join(tmpdir(), 'tb-pdf-'));
  const path = join(dir, `${name}.pdf`);
  writeFileSync(path, pdf);
  return { dir, path };
}

const pdfText = (path: string) => execFileSync('pdftotext', ['-layout', path, '-'], { encoding: 'utf8' });

/** Renders every page to PNG in test-results (to be looked at); returns the paths. */
function render(path: string, name: string): string[] {
  execFileSync('pdftoppm', ['-png', '-r', '120', path, join(RESULTS_DIR, name)]);
  const count = Number(/Pages:\s+(\d+)/.exec(execFileSync('pdfinfo', [path], { encoding: 'utf8' }))?.[1]);
  const width = String(count).length;
  return Array.from({ length: count }, (_, index) =>
    join(RESULTS_DIR, `${name}-${String(index + 1).padStart(width, '0')}.png`),
  );
}

/** The QR codes on a page: the page is cut into vertical strips so each holds at most one code. */
function qrCodesIn(pngPath: string): string[] {
  const png = PNG.sync.read(readFileSync(pngPath));
  const found: string[] = [];
  for (const [from, to] of [
    [0, 0.5],
    [0.5, 0.748],
    [0.748, 1],
  ] as const) {
    const left = Math.floor(png.width * from);
    const width = Math.floor(png.width * to) - left;
    const strip = new Uint8ClampedArray(width * png.height * 4);
    for (let y = 0; y < png.height; y++) {
      const start = (y * png.width + left) * 4;
      strip.set(png.data.subarray(start, start + width * 4), y * width * 4);
    }
    const code = jsQR(strip, width, png.height);
    if (code) found.push(code.data);
  }
  return found;
}

describe('the invoice PDF', () => {
  it('shows the seller, the buyer, the lines, the tax summary, the totals and how to pay', async () => {
    const b = await book();
    const { invoice, pdf } = await sentInvoice(b, [
      { description: 'Design workshop', unit_price: '800', quantity: '3', unit: 'day', tax_rate: '19' },
      { description: 'Printed booklet', unit_price: '12.50', quantity: '40', unit: 'piece', tax_rate: '7' },
    ]);
    const { path } = files(pdf, 'invoice');
    const text = pdfText(path);
    for (const expected of [
      'Nordlicht',
      'Nordlicht Studio GmbH',
      'Hafenstraße 12',
      'VAT ID DE123456789',
      'Registration HRB 12345',
      'Acme GmbH',
      'Marktplatz 1',
      'VAT ID DE987654321',
      `Invoice number`,
      invoice.number,
      'Issue date',
      'Nov 2, 2026',
      'Due date',
      'Dec 2, 2026',
      'Payment terms',
      '30 days',
      'Description',
      'Unit price',
      'Design workshop',
      '2,400.00 EUR',
      'Printed booklet',
      'TAX SUMMARY',
      '19%',
      '456.00 EUR',
      '7%',
      '35.00 EUR',
      'Subtotal',
      '2,900.00 EUR',
      'Total',
      '3,391.00 EUR',
      'Amount due',
      'How to pay',
      'Account holder',
      'Nordlicht Studio GmbH',
      'DE89 3704 0044 0532 0130 00',
      'COBADEFFXXX',
      'Reference',
      invoice.url,
      'Work done in October.',
      'Thank you for your business.',
      'Page 1 of 1',
    ]) {
      expect(text, expected).toContain(expected);
    }
    const [page] = render(path, 'invoice');
    // The GiroCode carries the IBAN, the amount due and the invoice's number.
    const codes = qrCodesIn(page ?? '');
    expect(codes).toContain(invoice.url);
    const giro = codes.find((code) => code.startsWith('BCD\n'));
    expect(giro?.split('\n')).toEqual([
      'BCD',
      '002',
      '1',
      'SCT',
      'COBADEFFXXX',
      'Nordlicht Studio GmbH',
      'DE89370400440532013000',
      'EUR3391.00',
      '',
      '',
      invoice.number,
    ]);
  });

  it('repeats the table header on every page of a 200-line invoice and numbers the pages', async () => {
    const b = await book();
    const lines = Array.from({ length: 200 }, (_, index) => ({
      description: `Consulting hour ${index + 1}${index % 17 === 0 ? ' — including travel to the client and the written report that followed' : ''}`,
      unit_price: '95',
      quantity: '1.5',
      unit: 'hour',
      tax_rate: index % 3 === 0 ? '0' : '19',
    }));
    const { pdf } = await sentInvoice(b, lines);
    const { path } = files(pdf, 'long');
    const pages = render(path, 'long');
    expect(pages.length).toBeGreaterThan(3);
    const text = pdfText(path);
    const perPage = text.split('\f').filter((page) => page.trim() !== '');
    expect(perPage).toHaveLength(pages.length);
    for (const [index, page] of perPage.entries()) {
      expect(page, `page ${index + 1}`).toContain(`Page ${index + 1} of ${pages.length}`);
      // Every page that shows lines starts them under the header.
      if (page.includes('Consulting hour'))
        expect(page, `page ${index + 1}`).toMatch(/Description\s+Qty\s+Unit/);
    }
    expect(text).toContain('Consulting hour 200');
    expect(text).toContain('0%');
    expect(text).toContain('Amount due');
  });
});

/** pdfimages -list: one row per image, [width, height, type] (an image's alpha is an smask row). */
function imagesIn(path: string): [number, number, string][] {
  return execFileSync('pdfimages', ['-list', path], { encoding: 'utf8' })
    .split('\n')
    .slice(2)
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const cells = line.trim().split(/\s+/);
      return [Number(cells[3]), Number(cells[4]), cells[2] ?? ''];
    });
}

/** pdffonts: one row per font, [name, embedded]. */
function fontsIn(path: string): [string, string][] {
  return execFileSync('pdffonts', [path], { encoding: 'utf8' })
    .split('\n')
    .slice(2)
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const cells = line.trim().split(/\s+/);
      // name type encoding… emb sub uni object ID: "emb" is the fifth cell from the end.
      return [cells[0] ?? '', cells[cells.length - 5] ?? ''];
    });
}

describe('the logo and the fonts', () => {
  it('keeps the logo a document was sent with when the book changes or removes its logo; a draft shows the logo now', async () => {
    const b = await book();
    const putLogo = async (width: number, height: number) => {
      const res = await h.inject({
        method: 'PUT',
        url: `/app/api/spaces/${b.spaceId}/profile/logo`,
        session: b.owner.token,
        headers: { 'content-type': 'image/png' },
        payload: testPng(width, height),
      });
      expect(res.statusCode, res.body).toBe(200);
    };
    const logosOf = async (id: string, name: string) => {
      const res = await api(b.owner, 'GET', `/app/api/spaces/${b.spaceId}/invoices/${id}/pdf`);
      expect(res.statusCode).toBe(200);
      return imagesIn(files(res.rawPayload, name).path).filter(([, , kind]) => kind === 'image');
    };
    await putLogo(300, 120);
    const { invoice } = await sentInvoice(b, [{ description: 'Design', unit_price: '100' }]);
    const draft = await api(b.owner, 'POST', `/app/api/spaces/${b.spaceId}/invoices`, {
      account_id: b.accountId,
      client_name: 'Acme GmbH',
      due_on: '2099-01-31',
      line_items: [{ description: 'Later work', unit_price: '50' }],
    });
    expect(draft.statusCode, draft.body).toBe(201);
    const draftId = (draft.json() as { id: string }).id;
    await putLogo(200, 200);
    // A sent invoice also carries its two payment QR codes; a draft has none.
    const sentImages = await logosOf(invoice.id, 'kept-sent');
    expect(sentImages).toContainEqual([300, 120, 'image']);
    expect(sentImages).not.toContainEqual([200, 200, 'image']);
    expect(await logosOf(draftId, 'kept-draft')).toEqual([[200, 200, 'image']]);
    const removed = await h.inject({
      method: 'DELETE',
      url: `/app/api/spaces/${b.spaceId}/profile/logo`,
      session: b.owner.token,
    });
    expect(removed.statusCode, removed.body).toBeLessThan(300);
    expect(await logosOf(invoice.id, 'kept-sent-removed')).toEqual(sentImages);
    expect(await logosOf(draftId, 'kept-draft-removed')).toEqual([]);
    // The public address of a logo the book no longer shows answers nothing.
    const page = await h.inject({ method: 'GET', url: invoice.url.replace(/^https?:\/\/[^/]+/, '') });
    expect(page.body).not.toContain('/logos/');
  });

  it("draws the book's logo atop the seller block of an invoice, a quote and a credit note, every font embedded", async () => {
    const b = await book();
    const logo = await h.inject({
      method: 'PUT',
      url: `/app/api/spaces/${b.spaceId}/profile/logo`,
      session: b.owner.token,
      headers: { 'content-type': 'image/png' },
      payload: testPng(300, 120),
    });
    expect(logo.statusCode, logo.body).toBe(200);
    const { invoice, pdf } = await sentInvoice(
      b,
      [{ description: 'Μαθήματα ελληνικών — Übersetzung', unit_price: '120', quantity: '2', tax_rate: '19' }],
      {
        client_name: 'Müller & Søn',
        client_address: 'ul. Piotrkowska 1\n90-001 Łódź',
        client_country: 'Ελλάδα',
      },
    );
    const quote = await api(b.owner, 'POST', `/app/api/spaces/${b.spaceId}/invoices`, {
      kind: 'quote',
      account_id: b.accountId,
      client_name: 'Müller & Søn',
      due_on: '2099-01-31',
      line_items: [{ description: 'Workshop', unit_price: '800' }],
    });
    expect(quote.statusCode, quote.body).toBe(201);
    const credit = await api(b.owner, 'POST', `/app/api/spaces/${b.spaceId}/invoices`, {
      kind: 'credit_note',
      corrects_invoice_id: invoice.id,
      account_id: b.accountId,
      client_name: 'Müller & Søn',
      line_items: [{ description: 'Μαθήματα: one lesson fewer', unit_price: '120', tax_rate: '19' }],
    });
    expect(credit.statusCode, credit.body).toBe(201);
    const documents: [string, Buffer][] = [['logo-invoice', pdf]];
    for (const [name, id] of [
      ['logo-quote', (quote.json() as { id: string }).id],
      ['logo-credit-note', (credit.json() as { id: string }).id],
    ] as const) {
      const res = await api(b.owner, 'GET', `/app/api/spaces/${b.spaceId}/invoices/${id}/pdf`);
      expect(res.statusCode).toBe(200);
      documents.push([name, res.rawPayload]);
    }
    for (const [name, bytes] of documents) {
      const { path } = files(bytes, name);
      // The stored logo (300 × 120, its transparent half an soft mask) is in the file.
      const images = imagesIn(path);
      expect(images, name).toContainEqual([300, 120, 'image']);
      expect(images, name).toContainEqual([300, 120, 'smask']);
      const fonts = fontsIn(path);
      expect(fonts.length, name).toBeGreaterThan(0);
      for (const [font, embedded] of fonts) {
        expect(font, name).toMatch(/DejaVuSans/);
        expect(embedded, `${name}: ${font}`).toBe('yes');
      }
      render(path, name);
    }
    const { path } = files(pdf, 'accents');
    const text = pdfText(path);
    for (const expected of [
      'Müller & Søn',
      'Łódź',
      'Ελλάδα',
      'Μαθήματα ελληνικών — Übersetzung',
      'Hafenstraße 12',
    ])
      expect(text).toContain(expected);
    expect(pdfText(files(documents[2]?.[1] ?? Buffer.alloc(0), 'cn').path)).toContain('Corrects');
    // The quote's line has no rate: its tax cell is a dash, not a bare "%".
    expect(pdfText(files(documents[1]?.[1] ?? Buffer.alloc(0), 'q').path)).toMatch(
      /Workshop\s+1\.00\s+800\.00\s+—\s+800\.00 EUR/,
    );
  });
});
