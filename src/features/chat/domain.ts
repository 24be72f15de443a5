// Pure rules of the chat feature: link codes, the bot's commands and buttons, file types, and
// the dates a client may ask for. No I/O here.

/** A link code lives this long (DECISIONS "Chat (Telegram)"). */
export const LINK_CODE_TTL_MS = 24 * 60 * 60 * 1000;
/** Telegram's own limit on one message; a question is kept as sent up to it. */
export const MESSAGE_CHARS_MAX = 4096;
/** A caption on a document (the invoice's PDF) is shorter. */
export const CAPTION_CHARS_MAX = 1024;
/** The largest file the bot fetches and keeps (also the Bot API's own download limit). */
export const FILE_BYTES_MAX = 20 * 1024 * 1024;
/** The extensions a client may ask for with "Need more time". */
export const DEFERRAL_DAYS = [7, 14, 30] as const;
export type DeferralDays = (typeof DEFERRAL_DAYS)[number];

const CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
export const LINK_CODE_LENGTH = 12;

/**
 * A link code from random bytes: 12 characters of an alphabet without look-alikes (0/O, 1/I),
 * so it survives being read aloud or retyped; 60 bits, single-use and short-lived.
 */
export function linkCodeFrom(bytes: Uint8Array): string {
  let code = '';
  for (let i = 0; i < LINK_CODE_LENGTH; i++) code += CODE_ALPHABET[(bytes[i] ?? 0) % CODE_ALPHABET.length];
  return code;
}

export function linkCommand(code: string): string {
  return `/link ${code}`;
}

/**
 * The code in a "/link <code>" message, or null when the message is not that command. Accepts
 * the form Telegram sends in groups ("/link@tollbook_bot CODE") and lower case typing.
 */
export function parseLinkCommand(text: string, botUsername: string): { code: string } | null {
  const match = /^\/link(?:@([A-Za-z0-9_]{1,64}))?(?:\s+(\S+))?\s*$/.exec(text.trim());
  if (!match) return null;
  if (match[1] !== undefined && match[1].toLowerCase() !== botUsername.toLowerCase()) return null;
  return { code: (match[2] ?? '').toUpperCase() };
}

export function isWellFormedCode(code: string): boolean {
  return code.length === LINK_CODE_LENGTH && [...code].every((c) => CODE_ALPHABET.includes(c));
}

/** Bot commands the service does not answer as questions (anything starting with a slash). */
export function isCommand(text: string): boolean {
  return text.startsWith('/');
}

export type ButtonPress =
  | { kind: 'paid'; invoiceId: string }
  | { kind: 'defer'; invoiceId: string; days: DeferralDays };

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

/** Callback data of the invoice buttons: at most 64 bytes, as Telegram allows. */
export function buttonData(press: ButtonPress): string {
  return press.kind === 'paid' ? `paid:${press.invoiceId}` : `defer:${press.invoiceId}:${press.days}`;
}

export function parseButtonData(data: string): ButtonPress | null {
  const paidId = new RegExp(`^paid:(${UUID})$`).exec(data)?.[1];
  if (paidId !== undefined) return { kind: 'paid', invoiceId: paidId };
  const [, invoiceId, daysText] = new RegExp(`^defer:(${UUID}):(\\d{1,2})$`).exec(data) ?? [];
  if (invoiceId === undefined) return null;
  const days = Number(daysText);
  const allowed = DEFERRAL_DAYS.find((d) => d === days);
  return allowed === undefined ? null : { kind: 'defer', invoiceId, days: allowed };
}

function addDays(date: string, days: number): string {
  const at = new Date(`${date}T00:00:00Z`);
  at.setUTCDate(at.getUTCDate() + days);
  return at.toISOString().slice(0, 10);
}

/**
 * The due date a client proposes with "Need more time": the days counted from the current due
 * date, or from today when the invoice is already overdue (so the extension is never in the past).
 */
export function proposedDueDate(dueOn: string, today: string, days: DeferralDays): string {
  return addDays(dueOn > today ? dueOn : today, days);
}

const SIGNATURES: { type: string; bytes: number[]; offset?: number }[] = [
  { type: 'application/pdf', bytes: [0x25, 0x50, 0x44, 0x46, 0x2d] },
  { type: 'image/png', bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] },
  { type: 'image/jpeg', bytes: [0xff, 0xd8, 0xff] },
  { type: 'image/gif', bytes: [0x47, 0x49, 0x46, 0x38] },
  { type: 'application/zip', bytes: [0x50, 0x4b, 0x03, 0x04] },
  { type: 'image/webp', bytes: [0x57, 0x45, 0x42, 0x50], offset: 8 },
];

function startsWith(data: Uint8Array, bytes: number[], offset = 0): boolean {
  if (data.length < offset + bytes.length) return false;
  return bytes.every((byte, i) => data[offset + i] === byte);
}

/**
 * The content type read from the file's first bytes, never from its name or what the sender
 * claimed: known signatures, then text when the bytes are valid UTF-8 without control
 * characters, else opaque bytes.
 */
export function sniffContentType(data: Uint8Array): string {
  for (const signature of SIGNATURES) {
    if (signature.type === 'image/webp' && !startsWith(data, [0x52, 0x49, 0x46, 0x46])) continue;
    if (startsWith(data, signature.bytes, signature.offset)) return signature.type;
  }
  if (data.length === 0) return 'application/octet-stream';
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(data.subarray(0, 4096));
    if (![...text].some(isBinaryControl)) return 'text/plain; charset=utf-8';
  } catch {
    // Not UTF-8: opaque bytes.
  }
  return 'application/octet-stream';
}

/** Tab, line feed and carriage return are text; other C0 control characters are not. */
function isBinaryControl(char: string): boolean {
  const code = char.charCodeAt(0);
  return code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d;
}

/** A file name safe to show and to offer as a download name: no path, no control characters. */
export function cleanFileName(name: string | undefined, fallback: string): string {
  const base = (name ?? '').split(/[\\/]/).pop() ?? '';
  const cleaned = [...base]
    .filter((char) => char.charCodeAt(0) >= 0x20 && char.charCodeAt(0) !== 0x7f && char !== '"')
    .join('')
    .trim()
    .slice(0, 255);
  return cleaned === '' ? fallback : cleaned;
}

/** Clip text to Telegram's limit without splitting a surrogate pair. */
export function clipText(text: string, max = MESSAGE_CHARS_MAX): string {
  const chars = [...text];
  return chars.length <= max ? text : chars.slice(0, max).join('');
}

export type InvoicePost = {
  sellerName: string;
  number: string;
  /** As people write it: "240.00 USD". */
  total: string;
  dueOn: string;
  url: string;
  purpose: 'send' | 'remind';
};

/** The caption posted with the invoice's PDF, in the seller's name. */
export function invoiceCaption(post: InvoicePost): string {
  const from = post.sellerName === '' ? '' : ` from ${post.sellerName}`;
  const head = post.purpose === 'remind' ? `Reminder: invoice ${post.number}` : `Invoice ${post.number}`;
  return clipText(
    `${head}${from}\nTotal: ${post.total}\nDue: ${post.dueOn}\nView and pay: ${post.url}`,
    CAPTION_CHARS_MAX,
  );
}
