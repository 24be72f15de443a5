import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { BASE62, SECRET_BODY_LENGTH } from '../core/ids.ts';

/** `prefix` + 43 base62 characters from the CSPRNG (about 256 bits), without modulo bias. */
export function randomSecret(prefix: string): string {
  let body = '';
  while (body.length < SECRET_BODY_LENGTH) {
    for (const byte of randomBytes(64)) {
      // 248 = 62 * 4: bytes at or above it would favour the first characters, so they are dropped.
      if (byte < 248 && body.length < SECRET_BODY_LENGTH) body += BASE62[byte % 62];
    }
  }
  return prefix + body;
}

export function sha256Hex(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** AES-256-GCM sealed box: "v1." + base64url(iv | tag | ciphertext). */
export class SecretBox {
  private readonly key: Buffer;

  constructor(keyHex: string) {
    this.key = Buffer.from(keyHex, 'hex');
    if (this.key.length !== 32) throw new Error('The master key must be 32 bytes.');
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `v1.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
  }

  open(sealed: string): string {
    if (!sealed.startsWith('v1.')) throw new Error('Unknown sealed-secret version.');
    const raw = Buffer.from(sealed.slice(3), 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }
}

/**
 * A UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, then random bits. Ids made one after the
 * other sort in time order, so bulk inserts append to their primary-key index instead of
 * landing on random pages.
 */
export function uuidv7(now = Date.now()): string {
  const bytes = randomBytes(16);
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
