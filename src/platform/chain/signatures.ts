import { isXOnlyPoint, recover } from 'tiny-secp256k1';
import { hashMessage, hexToBytes, isAddress, keccak256 } from 'viem';

// EIP-191 personal signatures, checked by recovering the signer's key with libsecp256k1 (the
// C library Bitcoin Core and geth use, built to WebAssembly by tiny-secp256k1): about a sixth of
// the CPU of the same recovery in JavaScript, which a sign-in paid on every x402 call from a
// credit (viem's recovery through @noble/curves took about 2.3 ms of it). The message's hash is
// viem's, so the bytes signed are the ones every EIP-191 wallet signs.

/** The order of secp256k1's group: a signature's r and s lie in [1, ORDER - 1]. */
const ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
/** r, s and v: the 65 bytes a wallet's personal_sign answers. */
const SIGNATURE = /^0x[0-9a-fA-F]{130}$/;

function inOrder(bytes: Uint8Array): boolean {
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  return value > 0n && value < ORDER;
}

/** The recovery bit a signature's last byte names (0 and 1, or 27 and 28 as wallets write it); null for any other byte. */
function recoveryBitOf(v: number): 0 | 1 | null {
  if (v === 0 || v === 27) return 0;
  if (v === 1 || v === 28) return 1;
  return null;
}

/**
 * Whether `signature` is an EIP-191 personal_sign of `message` by `address` (an EOA). A
 * malformed signature (not 65 bytes, r or s out of range, a last byte that names no recovery
 * bit, no point for r) is simply not a signature by anyone: false, never an exception.
 */
export async function isPersonalSignatureBy(
  address: string,
  message: string,
  signature: string,
): Promise<boolean> {
  if (!isAddress(address, { strict: false }) || !SIGNATURE.test(signature)) return false;
  const bytes = hexToBytes(signature as `0x${string}`);
  const compact = bytes.subarray(0, 64);
  const bit = recoveryBitOf(bytes[64] ?? -1);
  const r = compact.subarray(0, 32);
  if (bit === null || !inOrder(r) || !inOrder(compact.subarray(32))) return false;
  // r must be the x of a point on the curve, the point the recovery starts from.
  if (!isXOnlyPoint(r)) return false;
  const key = recover(hexToBytes(hashMessage(message)), compact, bit, false);
  if (key === null) return false;
  // An address is the last 20 bytes of the keccak of the key's 64 bytes (without the 0x04 tag).
  return keccak256(key.subarray(1)).slice(26) === address.slice(2).toLowerCase();
}
