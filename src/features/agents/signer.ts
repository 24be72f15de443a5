import { type ClientEvmSigner, toClientEvmSigner } from '@x402/evm';
import {
  concat,
  getTypesForEIP712Domain,
  type Hex,
  hashDomain,
  hashStruct,
  hashTypedData,
  keccak256,
  validateTypedData,
} from 'viem';
import { type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import type { ConfiguredNetwork } from '../../platform/chain/networks.ts';
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
 * What the x402 client signs with on one network: the agent's account, with EIP-712 typed data
 * hashed as viem does (keccak256 of "\x19\x01", the domain separator and the message's struct
 * hash, after the same validation) but with the token's domain separator computed once per
 * process. Only the configured token's own domain is kept (a quote names the domain it wants
 * signed, so a domain it made up is hashed afresh and never kept); the secp256k1 signature is
 * the account's. The result is the signature the account's own `signTypedData` makes.
 * With `countersign`, the typed data is first checked and hashed, then `countersign` starts, and
 * the secp256k1 signing runs once its statement is on its way; the signature is returned only
 * after `countersign` resolved.
 */
export function agentSigner(
  account: PrivateKeyAccount,
  network: ConfiguredNetwork,
  publicClient: unknown,
  countersign?: Countersign,
): ClientEvmSigner {
  const signer = toClientEvmSigner(account, publicClient as never);
  const signTypedData = async (typed: TypedData) => {
    const hash = digestOf(network, typed);
    if (!countersign) return account.sign({ hash });
    const answered = countersign(typed);
    // Seen as handled at once: if it rejects while the signature is computed, it is awaited below.
    answered.catch(() => undefined);
    // Signing is CPU-bound: let the countersign's statement be written to its socket first.
    await new Promise<void>((resolve) => setImmediate(resolve));
    const signature = await account.sign({ hash });
    await answered;
    return signature;
  };
  return { ...signer, signTypedData };
}

/** The EIP-712 digest of `typed`, after viem's checks of its domain, types and message. */
function digestOf(network: ConfiguredNetwork, typed: TypedData): Hex {
  validateTypedData({
    domain: typed.domain,
    types: { EIP712Domain: getTypesForEIP712Domain({ domain: typed.domain }), ...typed.types },
    primaryType: typed.primaryType,
    message: typed.message,
  } as never);
  if (typed.primaryType === 'EIP712Domain') return hashTypedData(typed as never);
  const separator =
    tokenSeparatorFor(network, typed.domain) ??
    hashDomain({
      domain: typed.domain as never,
      types: { EIP712Domain: getTypesForEIP712Domain({ domain: typed.domain as never }) },
    });
  const struct = hashStruct({
    data: typed.message as never,
    primaryType: typed.primaryType as never,
    types: typed.types as never,
  });
  return keccak256(concat(['0x1901', separator, struct]));
}

type TypedDomain = TypedData['domain'];

const tokenSeparators = new Map<string, Hex>();

/** The token's domain separator when `domain` is exactly the network's token domain. */
function tokenSeparatorFor(network: ConfiguredNetwork, domain: TypedDomain): Hex | undefined {
  const { token } = network;
  const keys = Object.keys(domain).sort().join(',');
  const same =
    keys === 'chainId,name,verifyingContract,version' &&
    domain.name === token.name &&
    domain.version === token.version &&
    Number(domain.chainId) === network.chainId &&
    typeof domain.verifyingContract === 'string' &&
    domain.verifyingContract.toLowerCase() === token.address.toLowerCase();
  if (!same) return undefined;
  const key = `${network.chainId}|${token.address.toLowerCase()}|${token.name}|${token.version}`;
  let separator = tokenSeparators.get(key);
  if (separator === undefined) {
    separator = hashDomain({
      domain: domain as never,
      types: { EIP712Domain: getTypesForEIP712Domain({ domain: domain as never }) },
    });
    tokenSeparators.set(key, separator);
  }
  return separator;
}
