import { type ClientEvmSigner, toClientEvmSigner } from '@x402/evm';
import type { Hex, TypedDataDefinition } from 'viem';
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

/**
 * Asked with the typed data about to be signed, before its signature is made; the signature is
 * made only once the answer resolved (an x402 fetch records the authorization first), and not
 * at all when it rejects.
 */
export type Countersign = (typed: TypedData) => Promise<void>;

type TypedData = Parameters<ClientEvmSigner['signTypedData']>[0];

/**
 * What the x402 client signs with: the agent's account, after `countersign` (when given)
 * resolved. A recorded authorization is signed only then, so no signature exists for an
 * authorization whose record failed.
 */
export function agentSigner(
  account: PrivateKeyAccount,
  publicClient: Parameters<typeof toClientEvmSigner>[1],
  countersign?: Countersign,
): ClientEvmSigner {
  const signer = toClientEvmSigner(account, publicClient);
  const signTypedData = async (typed: TypedData) => {
    if (countersign) await countersign(typed);
    // The scheme's typed data is a plain record; viem types the same object as its definition.
    return account.signTypedData(typed as TypedDataDefinition);
  };
  return { ...signer, signTypedData };
}
