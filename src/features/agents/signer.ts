import type { Hex } from 'viem';
import { type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import type { SecretBox } from '../../platform/crypto.ts';

// The agent's signing account, opened from its seal. Deriving the public key from the private
// key costs about a millisecond of CPU on every payment, so an opened account is kept in this
// process for a short while: at most ACCOUNTS_MAX agents, each for ACCOUNT_TTL_MS, keyed by the
// sealed text (a revoked or re-keyed agent's seal is never asked for again). The key is never
// logged or returned; it lives only as long as the account object does.

const ACCOUNTS_MAX = 256;
const ACCOUNT_TTL_MS = 5 * 60_000;

type Held = { account: PrivateKeyAccount; until: number };
const held = new Map<string, Held>();

export function agentAccount(secrets: SecretBox, sealedKey: string, nowMs = Date.now()): PrivateKeyAccount {
  const hit = held.get(sealedKey);
  if (hit && hit.until > nowMs) return hit.account;
  const account = privateKeyToAccount(secrets.open(sealedKey) as Hex);
  held.delete(sealedKey);
  if (held.size >= ACCOUNTS_MAX) {
    // The oldest entry goes first: a Map iterates in insertion order.
    const oldest = held.keys().next().value;
    if (oldest !== undefined) held.delete(oldest);
  }
  held.set(sealedKey, { account, until: nowMs + ACCOUNT_TTL_MS });
  return account;
}
