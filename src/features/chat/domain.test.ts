import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  buttonData,
  cleanFileName,
  clipText,
  invoiceCaption,
  isWellFormedCode,
  LINK_CODE_LENGTH,
  linkCodeFrom,
  parseButtonData,
  parseLinkCommand,
  proposedDueDate,
  sniffContentType,
} from './domain.ts';

const INVOICE = '3f0c7f5e-8f59-4a43-9d5c-0a9a5c6c1a11';

describe('link codes', () => {
  it('are 12 characters of the unambiguous alphabet, and read back as well formed', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: LINK_CODE_LENGTH, maxLength: LINK_CODE_LENGTH }), (bytes) => {
        const code = linkCodeFrom(bytes);
        expect(code).toMatch(/^[A-HJ-NP-Z2-9]{12}$/);
        expect(isWellFormedCode(code)).toBe(true);
      }),
    );
    expect(isWellFormedCode('ABC')).toBe(false);
    expect(isWellFormedCode('ABCDEFGHJK01')).toBe(false);
  });

  it('parses /link in the forms Telegram sends, for this bot only', () => {
    expect(parseLinkCommand('/link abcdefghjkmn', 'tb_bot')).toEqual({ code: 'ABCDEFGHJKMN' });
    expect(parseLinkCommand('  /link@TB_bot ABCDEFGHJKMN ', 'tb_bot')).toEqual({ code: 'ABCDEFGHJKMN' });
    expect(parseLinkCommand('/link', 'tb_bot')).toEqual({ code: '' });
    expect(parseLinkCommand('/link@other_bot ABCDEFGHJKMN', 'tb_bot')).toBeNull();
    expect(parseLinkCommand('/linked ABC', 'tb_bot')).toBeNull();
    expect(parseLinkCommand('please /link ABC', 'tb_bot')).toBeNull();
    expect(parseLinkCommand('/link A B', 'tb_bot')).toBeNull();
  });
});

describe('button data', () => {
  it('round-trips every press and stays within Telegram’s 64 bytes', () => {
    for (const press of [
      { kind: 'paid', invoiceId: INVOICE } as const,
      { kind: 'defer', invoiceId: INVOICE, days: 7 } as const,
      { kind: 'defer', invoiceId: INVOICE, days: 30 } as const,
    ]) {
      const data = buttonData(press);
      expect(Buffer.byteLength(data)).toBeLessThanOrEqual(64);
      expect(parseButtonData(data)).toEqual(press);
    }
  });

  it('refuses anything else: other day counts, other ids, trailing text', () => {
    expect(parseButtonData(`defer:${INVOICE}:8`)).toBeNull();
    expect(parseButtonData(`paid:${INVOICE}x`)).toBeNull();
    expect(parseButtonData('paid:not-a-uuid')).toBeNull();
    expect(parseButtonData('')).toBeNull();
  });
});

describe('proposed due date', () => {
  it('counts from the due date, or from today when the invoice is overdue', () => {
    expect(proposedDueDate('2026-12-31', '2026-12-01', 14)).toBe('2027-01-14');
    expect(proposedDueDate('2026-01-10', '2026-02-20', 7)).toBe('2026-02-27');
    expect(proposedDueDate('2028-02-20', '2028-01-01', 30)).toBe('2028-03-21');
  });
});

describe('sniffed content type', () => {
  it('reads the bytes, never the name', () => {
    expect(sniffContentType(Buffer.from('%PDF-1.7\n'))).toBe('application/pdf');
    expect(sniffContentType(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe('image/png');
    expect(sniffContentType(Buffer.from([0xff, 0xd8, 0xff, 0xe0]))).toBe('image/jpeg');
    expect(sniffContentType(Buffer.from('GIF89a'))).toBe('image/gif');
    expect(sniffContentType(Buffer.from('RIFF\0\0\0\0WEBPVP8 '))).toBe('image/webp');
    expect(sniffContentType(Buffer.from([0x50, 0x4b, 0x03, 0x04]))).toBe('application/zip');
    expect(sniffContentType(Buffer.from('date,amount\n2026-01-01,12.50\n'))).toBe(
      'text/plain; charset=utf-8',
    );
    expect(sniffContentType(Buffer.from([0x00, 0x01, 0x02]))).toBe('application/octet-stream');
    expect(sniffContentType(Buffer.from([0xc3, 0x28]))).toBe('application/octet-stream');
    expect(sniffContentType(Buffer.alloc(0))).toBe('application/octet-stream');
  });
});

describe('names and text', () => {
  it('keeps a file name without its path or control characters', () => {
    expect(cleanFileName('../../etc/passwd', 'f')).toBe('passwd');
    expect(cleanFileName('C:\\Users\\a\\b "x".pdf', 'f')).toBe('b x.pdf');
    expect(cleanFileName('a\u0000b\u001fc', 'f')).toBe('abc');
    expect(cleanFileName(undefined, 'fallback')).toBe('fallback');
    expect(cleanFileName('   ', 'fallback')).toBe('fallback');
  });

  it('clips text at the limit without splitting a character', () => {
    expect(clipText('😀'.repeat(5), 3)).toBe('😀😀😀');
    expect(clipText('short', 10)).toBe('short');
  });

  it('captions an invoice with number, total, due date and page link', () => {
    const caption = invoiceCaption({
      sellerName: 'Northwind',
      number: 'INV-7',
      total: '1,000.00 USD',
      dueOn: '2026-12-31',
      url: 'https://t.example/i/tok',
      purpose: 'send',
    });
    expect(caption).toBe(
      'Invoice INV-7 from Northwind\nTotal: 1,000.00 USD\nDue: 2026-12-31\nView and pay: https://t.example/i/tok',
    );
  });
});
