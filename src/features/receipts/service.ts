import {
  createReceiptEIP712,
  type EIP712SignedReceipt,
  type SignTypedDataFn,
} from '@x402/extensions/offer-receipt';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { defined } from '../../core/assert.ts';
import type { Clock } from '../../core/clock.ts';
import { AppError } from '../../core/errors.ts';
import type { SecretBox } from '../../platform/crypto.ts';
import type { Queryable } from '../../platform/db/database.ts';
import { requireRole } from '../spaces/index.ts';
import * as store from './store.ts';

// Signed receipts of x402 payments (the offer-receipt extension, EIP-712 form). Each book signs
// with a key of its own, made on its first receipt and sealed with the master key; the key's
// address is public (/.well-known/x402-receipt-signers/{address}), so anyone can check that a
// receipt's recovered signer is a Tollbook book's key, and whose.

export type ReceiptDeps = { db: Queryable; clock: Clock; secrets: SecretBox };

export type ReceiptInput = {
  spaceId: string;
  /** The x402 settlement claim the receipt is for: one receipt per claim. */
  claimId: string;
  network: string;
  transaction: string;
  resourceUrl: string;
  payer: string;
  /**
   * The caller booked the payment just now: a receipt is stored only if a racing answer made
   * one, so none is looked for first (the insert keeps a receipt stored first).
   */
  justBooked?: boolean | undefined;
};

/** The book's signing function, its key made on first use (a racing first use keeps one key). */
async function signerOf(deps: ReceiptDeps, spaceId: string): Promise<SignTypedDataFn> {
  let key = await store.findKey(deps.db, spaceId);
  if (!key) {
    const privateKey = generatePrivateKey();
    await store.insertKey(deps.db, {
      space_id: spaceId,
      address: privateKeyToAccount(privateKey).address.toLowerCase(),
      key_sealed: deps.secrets.seal(privateKey),
      created_at: deps.clock.now(),
    });
    key = defined(await store.findKey(deps.db, spaceId), "a book's receipt key just stored");
  }
  const account = privateKeyToAccount(deps.secrets.open(key.key_sealed) as `0x${string}`);
  // The extension hands over its receipt types as plain records; they are viem's typed data.
  return (params) => account.signTypedData(params as Parameters<typeof account.signTypedData>[0]);
}

/**
 * A stored receipt as the extension's type. Only `receiptFor` writes the column, with what
 * `createReceiptEIP712` returned, so the JSON read back is that value; the cast names its type.
 */
function signedReceiptOf(row: { receipt: unknown }): EIP712SignedReceipt {
  return row.receipt as EIP712SignedReceipt;
}

/**
 * The signed receipt of a settled payment: the stored one, or a new one signed and stored (a
 * racing call's stored receipt wins, so every answer for one payment carries the same receipt).
 * Runs after the booking's transaction has committed; signing is local, no outside call.
 */
export async function receiptFor(deps: ReceiptDeps, input: ReceiptInput): Promise<EIP712SignedReceipt> {
  const stored = input.justBooked
    ? undefined
    : await store.findReceipt(deps.db, input.spaceId, input.claimId);
  if (stored) return signedReceiptOf(stored);
  const sign = await signerOf(deps, input.spaceId);
  const receipt = await createReceiptEIP712(
    {
      resourceUrl: input.resourceUrl,
      payer: input.payer,
      network: input.network,
      transaction: input.transaction,
    },
    sign,
  );
  const inserted = await store.insertReceipt(deps.db, {
    claim_id: input.claimId,
    space_id: input.spaceId,
    reference: `${input.network}:${input.transaction}`,
    receipt,
    issued_at: deps.clock.now(),
  });
  const kept =
    inserted ??
    defined(await store.findReceipt(deps.db, input.spaceId, input.claimId), 'a receipt stored first');
  return signedReceiptOf(kept);
}

/** Which ledger entries of a book have a receipt, by entry id: the receipt's id (its claim). */
export async function receiptsOfEntries(
  db: Queryable,
  spaceId: string,
  entryIds: string[],
): Promise<Map<string, string>> {
  const rows = await store.receiptsOfEntries(db, spaceId, entryIds);
  return new Map(rows.map((row) => [row.entry_id, row.claim_id]));
}

/** A book's receipt, for a member to download. */
export async function downloadReceipt(deps: { db: Queryable }, userId: string, spaceId: string, id: string) {
  await requireRole(deps.db, spaceId, userId);
  const row = await store.findReceipt(deps.db, spaceId, id);
  if (!row || row.space_id !== spaceId) throw new AppError('not_found', 'No receipt here.');
  return { reference: row.reference, receipt: row.receipt };
}

/** The public facts of a receipt key: whose it is and since when; undefined for an unknown address. */
export async function receiptSigner(db: Queryable, address: string) {
  const found = await store.findSigner(db, address.toLowerCase());
  if (!found) return undefined;
  return { address: found.address, format: 'eip712' as const, book: found.book, since: found.created_at };
}
