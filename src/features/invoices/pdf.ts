import PDFDocument from 'pdfkit';
import QRCode from 'qrcode';
import { asAmount, formatDecimalTextForPeople, formatMoneyForPeople } from '../../core/money.ts';
import { formatCalendarDateForPeople, type PeopleFormat, UTC_ENGLISH } from '../../core/people-format.ts';
import { documentFonts } from '../../platform/fonts.ts';
import { readAmount } from '../ledger/index.ts';
import { dublinCoreXmp, FACTUR_X_FILE_NAME, facturXXmp } from './einvoice-pdfa.ts';
import type { InvoiceRow } from './store.ts';

// The invoice, quote or credit note as a PDF: A4, set in DejaVu Sans embedded in the file
// (platform/fonts.ts), drawn from a sheet that holds everything it shows, so drawing does no
// I/O. Layout, top to bottom: the seller's name and the document's title and number; the
// book's logo atop the seller block, the seller and buyer blocks; the
// dates and terms; the line table (its header repeated on every page it continues on); the tax
// summary per rate; the totals and the amount due; how to pay (bank details with a GiroCode for
// euros, the pay link with its QR code); notes; and on every page the seller's footer and
// "Page n of m". Dates and amounts are written in the book's locale when the typeface can draw
// what that locale writes (`documentLocale`), else in English.

/** How a document is paid: the bank transfer (when its account has requisites) and the pay link. */
export type PdfPayment = {
  /** The public page where the document is paid online. */
  url: string;
  bank: {
    /** Label and value pairs, in the order a payer types them ("IBAN", "DE89 3704 …"). */
    rows: [string, string][];
    /** The transfer's reference: what the payer writes so the payment finds this document. */
    reference: string;
    /** The EPC069-12 payload for a euro transfer to an IBAN, or null. */
    epcPayload: string | null;
  } | null;
};

/** The book's stored logo (PNG or JPEG, at most 512 pixels a side). */
export type PdfLogo = { bytes: Buffer; width: number; height: number };

export type InvoiceSheet = {
  row: InvoiceRow;
  /** The book's logo, drawn atop the seller block, or null. */
  logo: PdfLogo | null;
  /** The number of the invoice a credit note corrects, or null. */
  corrects: string | null;
  /** The open amount (what is still due). */
  due: bigint;
  /** How to pay; null for a draft, a quote, a credit note or a document paid in full. */
  payment: PdfPayment | null;
  /** The book's time zone and locale (features/spaces' peopleFormatOf). */
  format: PeopleFormat;
};

/** A document's files are named `<kind>-<number>` ("credit-note-CN-000001"), the number made safe. */
export function documentFileBase(row: Pick<InvoiceRow, 'kind' | 'number'>): string {
  const safeNumber = row.number.replace(/[^\w.-]+/g, '_').slice(0, 60);
  return `${row.kind.replace('_', '-')}-${safeNumber}`;
}

const TITLES: Record<InvoiceRow['kind'], string> = {
  invoice: 'Invoice',
  quote: 'Quote',
  credit_note: 'Credit note',
};

const PAGE = { margin: 50, width: 595.28, height: 841.89 };
const CONTENT_WIDTH = PAGE.width - 2 * PAGE.margin;
/** Room kept at the bottom of every page for the footer and the page number. */
const FOOTER_ROOM = 46;
const INK = '#1f2933';
const MUTED = '#616e7c';
const RULE = '#cbd2d9';
const BAND = '#f0f4f8';

type Doc = InstanceType<typeof PDFDocument>;

/** The names each document registers the two faces of `documentFonts()` under. */
const REGULAR = 'regular';
const BOLD = 'bold';
/** The largest box the logo is fitted into, in points. */
const LOGO_BOX = { width: 150, height: 56 };

// Whether the typeface draws every character a locale writes dates and numbers with: DejaVu has
// Latin, Greek, Cyrillic, Hebrew and Arabic, but no CJK ideographs (zh writes 2026年11月27日), no
// Thai, no Indic scripts. A fact of the font and the locale, so it is decided once per locale.
const drawableLocales = new Map<string, boolean>();

function fontDraws(text: string): boolean {
  const { regular, bold } = documentFonts();
  for (const character of text) {
    const code = character.codePointAt(0) ?? 0;
    if (!regular.hasGlyphForCodePoint(code) || !bold.hasGlyphForCodePoint(code)) return false;
  }
  return true;
}

/**
 * The locale a document is written in: the book's, when the typeface draws every character its
 * dates (all twelve months) and numbers use; otherwise English, as a book without settings
 * reads, so no date or amount is printed as missing-glyph boxes.
 */
export function documentLocale(locale: string): string {
  let drawable = drawableLocales.get(locale);
  if (drawable === undefined) {
    const samples = [formatDecimalTextForPeople('-1234567.5', locale) ?? ''];
    for (let month = 1; month <= 12; month++)
      samples.push(formatCalendarDateForPeople(`2026-${String(month).padStart(2, '0')}-27`, locale));
    drawable = fontDraws(samples.join(''));
    drawableLocales.set(locale, drawable);
  }
  return drawable ? locale : UTC_ENGLISH.locale;
}

/** How one document writes its amounts, quantities and dates: in its locale (`documentLocale`). */
function writer(locale: string) {
  return {
    money: (value: string | bigint, currency: string) =>
      formatMoneyForPeople(typeof value === 'bigint' ? asAmount(value) : readAmount(value), currency, locale),
    decimal: (text: string) => formatDecimalTextForPeople(text, locale) ?? text,
    day: (date: string) => formatCalendarDateForPeople(date, locale),
  };
}
type Writer = ReturnType<typeof writer>;

/** The table's columns: description takes what the others leave. */
const COLUMNS = [
  { key: 'description', title: 'Description', width: 0, align: 'left' },
  { key: 'quantity', title: 'Qty', width: 48, align: 'right' },
  { key: 'unit', title: 'Unit', width: 44, align: 'left' },
  { key: 'unit_price', title: 'Unit price', width: 76, align: 'right' },
  { key: 'tax', title: 'Tax', width: 44, align: 'right' },
  { key: 'amount', title: 'Amount', width: 86, align: 'right' },
] as const;

function columnLayout() {
  const fixed = COLUMNS.reduce((sum, column) => sum + column.width, 0);
  let x = PAGE.margin;
  return COLUMNS.map((column) => {
    const width = column.width === 0 ? CONTENT_WIDTH - fixed : column.width;
    const placed = { ...column, x, width };
    x += width;
    return placed;
  });
}

/** The seller, buyer and terms columns under the header. */
const BLOCK_GAP = 14;
const BLOCKS = (() => {
  const widths = [150, 142, CONTENT_WIDTH - 150 - 142 - 2 * BLOCK_GAP] as const;
  const sellerX = PAGE.margin;
  const buyerX = sellerX + widths[0] + BLOCK_GAP;
  const termsX = buyerX + widths[1] + BLOCK_GAP;
  return [
    { x: sellerX, width: widths[0] },
    { x: buyerX, width: widths[1] },
    { x: termsX, width: widths[2] },
  ] as const;
})();

/** The lowest y a block may end at before it must move to the next page. */
const bottomLimit = () => PAGE.height - PAGE.margin - FOOTER_ROOM;

/** Starts a new page when `height` does not fit below `y`; returns where to draw. */
function roomFor(doc: Doc, y: number, height: number): number {
  if (y + height <= bottomLimit()) return y;
  doc.addPage();
  return PAGE.margin;
}

function drawHeader(doc: Doc, sheet: InvoiceSheet): number {
  const { row } = sheet;
  const top = PAGE.margin;
  doc.fillColor(INK).font(BOLD).fontSize(18);
  doc.text(row.seller_name || 'Seller', PAGE.margin, top, { width: CONTENT_WIDTH / 2 });
  const nameBottom = doc.y;
  doc.font(BOLD).fontSize(20);
  doc.text(TITLES[row.kind], PAGE.margin + CONTENT_WIDTH / 2, top, {
    width: CONTENT_WIDTH / 2,
    align: 'right',
  });
  doc.font(REGULAR).fontSize(11).fillColor(MUTED);
  doc.text(row.number, PAGE.margin + CONTENT_WIDTH / 2, doc.y + 2, {
    width: CONTENT_WIDTH / 2,
    align: 'right',
  });
  const y = Math.max(nameBottom, doc.y) + 14;
  doc
    .moveTo(PAGE.margin, y)
    .lineTo(PAGE.margin + CONTENT_WIDTH, y)
    .strokeColor(RULE)
    .lineWidth(1)
    .stroke();
  return y + 14;
}

/** The lines of the seller's block: legal name, address, tax ids, contact. */
function sellerLines(row: InvoiceRow): string[] {
  const snapshot = row.seller_snapshot;
  const legal = snapshot?.legal_name && snapshot.legal_name !== row.seller_name ? snapshot.legal_name : '';
  return [
    row.seller_name,
    legal,
    ...row.seller_address.split('\n'),
    // The address text ends with its country's name; the code alone stands when there is none.
    row.seller_address.trim() === '' ? row.seller_country : '',
    row.seller_tax_id ? `VAT ID ${row.seller_tax_id}` : '',
    snapshot?.tax_number ? `Tax number ${snapshot.tax_number}` : '',
    row.seller_reg_number ? `Registration ${row.seller_reg_number}` : '',
    row.seller_email,
    row.seller_phone,
    row.seller_website,
  ].filter((line) => line.trim() !== '');
}

function buyerLines(row: InvoiceRow): string[] {
  return [
    row.client_name,
    ...row.client_address.split('\n'),
    row.client_country,
    row.client_tax_id ? `VAT ID ${row.client_tax_id}` : '',
    row.client_reg_number ? `Registration ${row.client_reg_number}` : '',
    row.client_email,
  ].filter((line) => line.trim() !== '');
}

/** The logo fitted into its box (never enlarged), at the top left of `x`, `y`; returns the y under it. */
function drawLogo(doc: Doc, logo: PdfLogo, x: number, y: number, width: number): number {
  const box = { width: Math.min(LOGO_BOX.width, width), height: LOGO_BOX.height };
  const scale = Math.min(box.width / logo.width, box.height / logo.height, 1);
  const height = logo.height * scale;
  doc.image(logo.bytes, x, y, { width: logo.width * scale, height });
  return y + height + 10;
}

function drawBlock(doc: Doc, title: string, lines: string[], x: number, y: number, width: number): number {
  doc.font(BOLD).fontSize(8).fillColor(MUTED).text(title.toUpperCase(), x, y, { width });
  let at = doc.y + 3;
  lines.forEach((line, index) => {
    doc
      .font(index === 0 ? BOLD : REGULAR)
      .fontSize(index === 0 ? 11 : 9.5)
      .fillColor(INK)
      .text(line, x, at, { width });
    at = doc.y + 1;
  });
  return at;
}

/** Number, dates and terms, as label and value pairs. */
function termRows(sheet: InvoiceSheet, w: Writer): [string, string][] {
  const { row } = sheet;
  const rows: [string, string][] = [
    [`${TITLES[row.kind]} number`, row.number],
    ['Issue date', w.day(row.issued_on)],
  ];
  if (row.kind === 'invoice') {
    rows.push(['Due date', w.day(row.due_on)]);
    const days = Math.round((Date.parse(row.due_on) - Date.parse(row.issued_on)) / 86_400_000);
    if (Number.isFinite(days) && days >= 0)
      rows.push(['Payment terms', days === 0 ? 'Due on receipt' : `${days} days`]);
  }
  if (row.kind === 'quote') rows.push(['Valid until', w.day(row.due_on)]);
  if (sheet.corrects !== null) rows.push(['Corrects', sheet.corrects]);
  if (row.purchase_order) rows.push(['Purchase order', row.purchase_order]);
  rows.push(['Currency', row.currency]);
  return rows;
}

function drawTerms(doc: Doc, rows: [string, string][], x: number, y: number, width: number): number {
  let at = y;
  for (const [label, value] of rows) {
    doc
      .font(REGULAR)
      .fontSize(9)
      .fillColor(MUTED)
      .text(label, x, at, { width: width * 0.5 });
    // A label may wrap ("Credit note number"): the next row starts below the taller of the two.
    const labelEnd = doc.y;
    doc
      .font(BOLD)
      .fillColor(INK)
      .text(value, x + width * 0.5, at, { width: width * 0.5, align: 'right' });
    at = Math.max(labelEnd, doc.y) + 3;
  }
  return at;
}

function drawTableHeader(doc: Doc, y: number): number {
  const columns = columnLayout();
  doc.rect(PAGE.margin, y, CONTENT_WIDTH, 20).fill(BAND);
  doc.font(BOLD).fontSize(8.5).fillColor(MUTED);
  for (const column of columns) {
    doc.text(column.title, column.x + 4, y + 6, { width: column.width - 8, align: column.align });
  }
  return y + 24;
}

function lineCells(
  row: InvoiceRow,
  line: InvoiceRow['line_items'][number],
  w: Writer,
): Record<string, string> {
  return {
    description: line.description,
    quantity: w.decimal(line.quantity),
    unit: line.unit,
    unit_price: w.decimal(line.unit_price),
    // A line without a rate is untaxed: a dash, as on the app's page, never a bare "%".
    tax: line.tax_rate.trim() === '' ? '—' : `${line.tax_rate}%`,
    amount: w.money(line.amount, row.currency),
  };
}

/**
 * The height a cell's text takes in the current font at this width. Text that fits on one line
 * (no line break, no wider than the column) is one line high; only longer text is laid out to be
 * measured, since pdfkit lays a cell out again to draw it.
 */
export function cellHeight(doc: Doc, text: string, width: number): number {
  if (text === '') return 0;
  if (!text.includes('\n') && doc.widthOfString(text) <= width) return doc.currentLineHeight(true);
  return doc.heightOfString(text, { width });
}

function drawLines(doc: Doc, row: InvoiceRow, start: number, w: Writer): number {
  const columns = columnLayout();
  let y = drawTableHeader(doc, start);
  for (const line of row.line_items) {
    const cells = lineCells(row, line, w);
    doc.font(REGULAR).fontSize(9.5);
    const description = columns[0];
    const height =
      Math.max(...columns.map((column) => cellHeight(doc, cells[column.key] ?? '', column.width - 8))) + 8;
    if (y + height > bottomLimit()) {
      doc.addPage();
      y = drawTableHeader(doc, PAGE.margin);
    }
    doc.font(REGULAR).fontSize(9.5).fillColor(INK);
    for (const column of columns) {
      doc.text(cells[column.key] ?? '', column.x + 4, y + 4, {
        width: column.width - 8,
        align: column.align,
      });
    }
    y += height;
    doc
      .moveTo(description?.x ?? PAGE.margin, y)
      .lineTo(PAGE.margin + CONTENT_WIDTH, y)
      .strokeColor(RULE)
      .lineWidth(0.5)
      .stroke();
  }
  return y + 12;
}

/** The tax summary (one row per rate and kind) on the left, the totals on the right. */
function drawSums(doc: Doc, sheet: InvoiceSheet, start: number, w: Writer): number {
  const { row } = sheet;
  const groups = row.tax_breakdown;
  const totals: [string, string, boolean][] = [
    ['Subtotal', w.money(row.subtotal, row.currency), false],
    ['Tax', w.money(row.tax_total, row.currency), false],
    ['Total', w.money(row.total, row.currency), true],
  ];
  if (readAmount(row.credited_amount) > 0n)
    totals.push(['Credited', `−${w.money(row.credited_amount, row.currency)}`, false]);
  if (readAmount(row.paid_amount) > 0n)
    totals.push(['Paid', `−${w.money(row.paid_amount, row.currency)}`, false]);
  if (row.kind === 'invoice') totals.push(['Amount due', w.money(sheet.due, row.currency), true]);
  const height = Math.max(groups.length * 16 + 30, totals.length * 18 + 10);
  const y = roomFor(doc, start, height);
  const half = CONTENT_WIDTH / 2 - 10;
  // Tax summary.
  doc.font(BOLD).fontSize(8).fillColor(MUTED).text('TAX SUMMARY', PAGE.margin, y, { width: half });
  let at = doc.y + 4;
  const cell = (text: string, x: number, width: number, align: 'left' | 'right') =>
    doc.text(text, x, at, { width, align });
  doc.font(BOLD).fontSize(8.5).fillColor(MUTED);
  cell('Rate', PAGE.margin, 60, 'left');
  cell('Net', PAGE.margin + 60, (half - 60) / 2, 'right');
  cell('Tax', PAGE.margin + 60 + (half - 60) / 2, (half - 60) / 2, 'right');
  at += 14;
  doc.font(REGULAR).fontSize(9).fillColor(INK);
  for (const group of groups) {
    const kind =
      group.tax_kind && group.tax_kind !== 'standard' ? ` ${group.tax_kind.replaceAll('_', ' ')}` : '';
    const rate = `${group.tax_rate}%${kind}`;
    cell(rate, PAGE.margin, 60, 'left');
    cell(w.money(group.net, row.currency), PAGE.margin + 60, (half - 60) / 2, 'right');
    cell(w.money(group.tax, row.currency), PAGE.margin + 60 + (half - 60) / 2, (half - 60) / 2, 'right');
    // A long kind ("0% reverse charge") wraps in its column; the next row starts below it.
    at += Math.max(16, doc.heightOfString(rate, { width: 60 }) + 4);
  }
  const left = at;
  // Totals.
  const x = PAGE.margin + CONTENT_WIDTH / 2 + 10;
  at = y;
  for (const [label, value, strong] of totals) {
    doc.font(strong ? BOLD : REGULAR).fontSize(strong ? 11 : 9.5);
    doc.fillColor(strong ? INK : MUTED).text(label, x, at, { width: half / 2 });
    doc.fillColor(INK).text(value, x + half / 2, at, { width: half / 2, align: 'right' });
    at += strong ? 20 : 17;
  }
  return Math.max(left, at) + 14;
}

async function qrPng(text: string, level: 'L' | 'M'): Promise<Buffer> {
  return QRCode.toBuffer(text, { errorCorrectionLevel: level, margin: 2, width: 220 });
}

/** How to pay: the bank transfer with its GiroCode, then the pay link with its QR code. */
async function drawPayment(doc: Doc, payment: PdfPayment, start: number): Promise<number> {
  const bankRows = payment.bank
    ? [...payment.bank.rows, ['Reference', payment.bank.reference] as [string, string]]
    : [];
  const qrSize = 92;
  const height = Math.max(bankRows.length * 15 + 40, qrSize + 40) + 40;
  let y = roomFor(doc, start, height);
  doc.rect(PAGE.margin, y, CONTENT_WIDTH, 1).fill(RULE);
  y += 10;
  doc.font(BOLD).fontSize(11).fillColor(INK).text('How to pay', PAGE.margin, y);
  y = doc.y + 6;
  const textWidth = CONTENT_WIDTH - 2 * (qrSize + 16);
  let at = y;
  if (payment.bank) {
    doc.font(BOLD).fontSize(9).fillColor(MUTED).text('Bank transfer', PAGE.margin, at, { width: textWidth });
    at = doc.y + 3;
    for (const [label, value] of bankRows) {
      doc.font(REGULAR).fontSize(9).fillColor(MUTED).text(label, PAGE.margin, at, { width: 90 });
      doc
        .font(BOLD)
        .fillColor(INK)
        .text(value, PAGE.margin + 90, at, { width: textWidth - 90 });
      at = doc.y + 3;
    }
    at += 6;
  }
  // The codes, right-aligned: the GiroCode first (a banking app scans it), then the pay link's.
  const codes: [string, Buffer][] = [];
  if (payment.bank?.epcPayload) codes.push(['GiroCode', await qrPng(payment.bank.epcPayload, 'M')]);
  codes.push(['Pay online', await qrPng(payment.url, 'L')]);
  let codeX = PAGE.margin + CONTENT_WIDTH - codes.length * (qrSize + 16) + 16;
  for (const [label, png] of codes) {
    doc.image(png, codeX, y, { width: qrSize, height: qrSize });
    doc
      .font(REGULAR)
      .fontSize(8)
      .fillColor(MUTED)
      .text(label, codeX, y + qrSize + 2, { width: qrSize, align: 'center' });
    codeX += qrSize + 16;
  }
  // The pay link on a line of its own under both, so it is never cut.
  at = Math.max(at, y + qrSize + 16);
  doc.font(BOLD).fontSize(9).fillColor(MUTED).text('Pay online', PAGE.margin, at, { width: 90 });
  doc
    .font(REGULAR)
    .fontSize(9)
    .fillColor('#1d4ed8')
    .text(payment.url, PAGE.margin + 90, at, {
      width: CONTENT_WIDTH - 90,
      link: payment.url,
      underline: true,
    });
  return doc.y + 14;
}

function drawNotes(doc: Doc, row: InvoiceRow, start: number): number {
  if (row.notes.trim() === '') return start;
  doc.font(REGULAR).fontSize(9.5);
  const height = doc.heightOfString(row.notes, { width: CONTENT_WIDTH }) + 20;
  const y = roomFor(doc, start, Math.min(height, 120));
  doc.font(BOLD).fontSize(8).fillColor(MUTED).text('NOTES', PAGE.margin, y);
  doc
    .font(REGULAR)
    .fontSize(9.5)
    .fillColor(INK)
    .text(row.notes, PAGE.margin, doc.y + 3, { width: CONTENT_WIDTH });
  return doc.y + 10;
}

/** On every page: the seller's footer text and "Page n of m", inside the room kept for them. */
function drawFooters(doc: Doc, row: InvoiceRow) {
  const footer = row.seller_snapshot?.invoice_footer ?? '';
  const range = doc.bufferedPageRange();
  for (let index = 0; index < range.count; index++) {
    doc.switchToPage(range.start + index);
    // Text below the bottom margin would start a page of its own: the margin is lifted while
    // the footer is written.
    const bottom = doc.page.margins.bottom;
    doc.page.margins.bottom = 0;
    const y = PAGE.height - PAGE.margin - 24;
    doc
      .moveTo(PAGE.margin, y - 6)
      .lineTo(PAGE.margin + CONTENT_WIDTH, y - 6)
      .strokeColor(RULE)
      .lineWidth(0.5)
      .stroke();
    doc.font(REGULAR).fontSize(8).fillColor(MUTED);
    doc.text(footer, PAGE.margin, y, { width: CONTENT_WIDTH - 90, height: 24, ellipsis: true });
    doc.text(`Page ${index + 1} of ${range.count}`, PAGE.margin + CONTENT_WIDTH - 90, y, {
      width: 90,
      align: 'right',
    });
    doc.page.margins.bottom = bottom;
  }
}

/** The CII XML a Factur-X carries inside its PDF. */
export type FacturXPart = { cii: Buffer };

/**
 * The document as a PDF; with `facturX`, the same document as a Factur-X: a PDF/A-3b (pdfkit's
 * subset: the sRGB output intent, the identification in the XMP) carrying the CII as its
 * `Alternative` attachment, with the Factur-X properties in its XMP.
 */
export async function renderInvoicePdf(sheet: InvoiceSheet, facturX?: FacturXPart): Promise<Buffer> {
  const { row } = sheet;
  const now = new Date();
  const doc = new PDFDocument({
    size: 'A4',
    // PDF/A-3 (the Factur-X) rests on PDF 1.7.
    pdfVersion: '1.7',
    ...(facturX ? { subset: 'PDF/A-3b' as const } : {}),
    margin: PAGE.margin,
    bufferPages: true,
    // No Title or Author here: pdfkit would copy them into the XMP unescaped (einvoice-pdfa.ts).
    info: { Creator: 'Tollbook', Producer: 'Tollbook', CreationDate: now },
  });
  // The issuer by its legal name (BT-27) where the profile gives one.
  const issuer = row.seller_snapshot?.legal_name || row.seller_name;
  doc.appendXML(dublinCoreXmp({ title: `${TITLES[row.kind]} ${row.number}`, creator: issuer }));
  if (facturX) {
    doc.file(facturX.cii, {
      name: FACTUR_X_FILE_NAME,
      type: 'text/xml',
      description: 'The invoice in UN/CEFACT CII, EN 16931 (Factur-X)',
      relationship: 'Alternative',
      creationDate: now,
      modifiedDate: now,
    });
    doc.appendXML(facturXXmp());
  }
  // pdfkit opens Helvetica as the starting font, a font it names but never embeds: nothing is
  // written in it, as the regular face takes over before the first word.
  const fonts = documentFonts();
  doc.registerFont(REGULAR, fonts.regular).registerFont(BOLD, fonts.bold).font(REGULAR);

  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  const w = writer(documentLocale(sheet.format.locale));
  let y = drawHeader(doc, sheet);
  // Three columns side by side, apart by GAP: the seller (under the logo), the buyer, the terms.
  const [seller, buyer, terms] = BLOCKS;
  const sellerTop = sheet.logo ? drawLogo(doc, sheet.logo, seller.x, y, seller.width) : y;
  const sellerEnd = drawBlock(doc, 'From', sellerLines(row), seller.x, sellerTop, seller.width);
  const buyerEnd = drawBlock(
    doc,
    row.kind === 'quote' ? 'For' : 'Bill to',
    buyerLines(row),
    buyer.x,
    y,
    buyer.width,
  );
  const termsEnd = drawTerms(doc, termRows(sheet, w), terms.x, y, terms.width);
  y = Math.max(sellerEnd, buyerEnd, termsEnd) + 18;
  y = drawLines(doc, row, y, w);
  y = drawSums(doc, sheet, y, w);
  if (sheet.payment) y = await drawPayment(doc, sheet.payment, y);
  drawNotes(doc, row, y);
  drawFooters(doc, row);
  doc.end();
  return done;
}
