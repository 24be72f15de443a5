import { type ClientEvmSigner, toClientEvmSigner } from '@x402/evm';
import { type Hex, hashTypedData } from 'viem';
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
 * handed out only once the answer resolves, and not at all when it rejects. It runs while the
 * signature is computed (an x402 fetch records the authorization meanwhile).
 */
export type Countersign = (typed: TypedData) => Promise<void>;

type TypedData = Parameters<ClientEvmSigner['signTypedData']>[0];

/**
 * What the x402 client signs with: the agent's account. The typed data is hashed by viem's own
 * `hashTypedData` (which checks its domain, types and message) and signed by the account, which
 * is exactly what the account's `signTypedData` does in one step. Split in two, both CPU-bound
 * steps (hashing and the secp256k1 signing) run while `countersign`'s statement is on its way;
 * the signature is returned only after `countersign` resolved.
 */
export function agentSigner(
  account: PrivateKeyAccount,
  publicClient: unknown,
  countersign?: Countersign,
): ClientEvmSigner {
  const signer = toClientEvmSigner(account, publicClient as never);
  const signTypedData = async (typed: TypedData) => {
    if (!countersign) return account.sign({ hash: hashTypedData(typed as never) });
    const answered = countersign(typed);
    // Seen as handled at once: if it rejects while the signature is computed, it is awaited below.
    answered.catch(() => undefined);
    // Hashing and signing are CPU-bound: let the countersign's statement be written to its socket
    // first. Should hashing throw (typed data viem refuses), nothing is signed, so nothing leaves;
    // an authorization the countersign recorded meanwhile is released by the repair job once
    // its validBefore passed, as any recorded authorization that never reached the chain.
    await new Promise<void>((resolve) => setImmediate(resolve));
    const signature = await account.sign({ hash: hashTypedData(typed as never) });
    await answered;
    return signature;
  };
  return { ...signer, signTypedData };
}
