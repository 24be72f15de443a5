import fc from 'fast-check';
import { bytesToHex, hexToBytes, verifyMessage } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { isPersonalSignatureBy } from './signatures.ts';

// libsecp256k1's recovery held to viem's (the JavaScript recovery it replaces) as the oracle:
// the same verdict for the signer, for another address, and for signatures bent out of shape.

const ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

async function viemVerdict(address: string, message: string, signature: string): Promise<boolean> {
  try {
    return await verifyMessage({
      address: address as `0x${string}`,
      message,
      signature: signature as `0x${string}`,
    });
  } catch {
    // viem throws for a signature it cannot read; for the oracle that is a no.
    return false;
  }
}

const privateKey = fc
  .uint8Array({ minLength: 32, maxLength: 32 })
  .map((bytes) => bytesToHex(bytes))
  .filter((hex) => {
    const value = BigInt(hex);
    return value > 0n && value < ORDER;
  });

type BendValue =
  | { kind: 'byte'; at: number; xor: number }
  | { kind: 'v'; v: number }
  | { kind: 'zero'; part: number }
  | { kind: 'order'; part: number };

/** Ways to bend a signature: a byte changed, another last byte, r or s set to 0 or to the order. */
const bend: fc.Arbitrary<BendValue> = fc.oneof(
  fc.record({
    kind: fc.constant('byte' as const),
    at: fc.integer({ min: 0, max: 64 }),
    xor: fc.integer({ min: 1, max: 255 }),
  }),
  fc.record({ kind: fc.constant('v' as const), v: fc.constantFrom(0, 1, 2, 26, 27, 28, 29, 255) }),
  fc.record({ kind: fc.constant('zero' as const), part: fc.constantFrom(0, 32) }),
  fc.record({ kind: fc.constant('order' as const), part: fc.constantFrom(0, 32) }),
);

function bent(signature: `0x${string}`, how: BendValue): string {
  const bytes = hexToBytes(signature);
  if (how.kind === 'byte') bytes[how.at] = (bytes[how.at] ?? 0) ^ how.xor;
  if (how.kind === 'v') bytes[64] = how.v;
  if (how.kind === 'zero') bytes.fill(0, how.part, how.part + 32);
  if (how.kind === 'order') bytes.set(hexToBytes(`0x${ORDER.toString(16)}`), how.part);
  return bytesToHex(bytes);
}

describe('isPersonalSignatureBy', () => {
  it('gives viem’s verdict for the signer, another address and bent signatures', async () => {
    await fc.assert(
      fc.asyncProperty(
        privateKey,
        privateKey,
        fc.string({ maxLength: 400 }),
        bend,
        async (key, other, message, how) => {
          const signer = privateKeyToAccount(key as `0x${string}`);
          const stranger = privateKeyToAccount(other as `0x${string}`).address;
          const signature = await signer.signMessage({ message });
          expect(await isPersonalSignatureBy(signer.address, message, signature)).toBe(true);
          expect(await isPersonalSignatureBy(signer.address.toLowerCase(), message, signature)).toBe(true);
          expect(await isPersonalSignatureBy(stranger, message, signature)).toBe(signer.address === stranger);
          expect(await isPersonalSignatureBy(signer.address, `${message}.`, signature)).toBe(false);
          const changed = bent(signature, how);
          expect(await isPersonalSignatureBy(signer.address, message, changed)).toBe(
            await viemVerdict(signer.address, message, changed),
          );
        },
      ),
      { numRuns: 150 },
    );
  });

  it('takes the 27/28 and 0/1 spellings of the recovery bit alike', async () => {
    const signer = privateKeyToAccount(`0x${'11'.repeat(32)}`);
    const signature = hexToBytes(await signer.signMessage({ message: 'hello' }));
    const low = Uint8Array.from(signature);
    low[64] = (signature[64] ?? 27) - 27;
    expect(await isPersonalSignatureBy(signer.address, 'hello', bytesToHex(signature))).toBe(true);
    expect(await isPersonalSignatureBy(signer.address, 'hello', bytesToHex(low))).toBe(true);
  });

  it('refuses what is not a 65-byte signature or not an address', async () => {
    const signer = privateKeyToAccount(`0x${'22'.repeat(32)}`);
    const signature = await signer.signMessage({ message: 'hi' });
    expect(await isPersonalSignatureBy(signer.address, 'hi', signature.slice(0, 130))).toBe(false);
    expect(await isPersonalSignatureBy(signer.address, 'hi', `${signature}00`)).toBe(false);
    expect(await isPersonalSignatureBy('0x1234', 'hi', signature)).toBe(false);
    expect(await isPersonalSignatureBy(signer.address, 'hi', 'not a signature')).toBe(false);
  });
});
