import {
  createCipheriv,
  createDecipheriv,
  createHash,
  randomBytes,
  randomFillSync,
  timingSafeEqual,
} from 'node:crypto';
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
// Bulk work makes thousands of ids per request; one call to the CSPRNG per id cost more than
// the rest of the id. Random bytes are drawn 4 KiB at a time and each byte is used once.
const RANDOM_POOL = Buffer.alloc(4096);
let poolOffset = RANDOM_POOL.length;
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

function hexOf(from: number, to: number): string {
  let out = '';
  for (let index = from; index < to; index++) out += HEX[RANDOM_POOL.readUInt8(index)];
  return out;
}

export function uuidv7(now = Date.now()): string {
  if (poolOffset + 10 > RANDOM_POOL.length) {
    randomFillSync(RANDOM_POOL);
    poolOffset = 0;
  }
  const at = poolOffset;
  poolOffset += 10;
  // 48 bits of milliseconds, version 7 with 12 random bits, variant 10 with 62 random bits.
  const time = now.toString(16).padStart(12, '0');
  const byte = (offset: number) => RANDOM_POOL.readUInt8(at + offset);
  const version = `7${(byte(0) & 0x0f).toString(16)}${HEX[byte(1)]}`;
  const variant = `${HEX[(byte(2) & 0x3f) | 0x80]}${HEX[byte(3)]}`;
  return `${time.slice(0, 8)}-${time.slice(8)}-${version}-${variant}-${hexOf(at + 4, at + 10)}`;
}
