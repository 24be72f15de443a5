import { randomBytes } from 'node:crypto';
import type { Clock } from '../../core/clock.ts';
import { AppError } from '../../core/errors.ts';
import { isPersonalSignatureBy } from '../../platform/chain/signatures.ts';
import type { Db } from '../../platform/db/database.ts';
import { requireAdministrator } from '../spaces/index.ts';
import * as store from './store.ts';

// Proof of control of a pay-to address (DECISIONS "Chains and addresses"): the space asks for a
// one-time challenge, the address signs it, and only then is the address quoted to payers.

const CHALLENGE_LIFETIME_MS = 15 * 60 * 1000;

export type ProofsDeps = { db: Db; clock: Clock };

async function provableAccount(deps: ProofsDeps, userId: string, spaceId: string, accountId: string) {
  await requireAdministrator(deps.db, spaceId, userId);
  const account = await store.findAccount(deps.db, spaceId, accountId);
  if (!account) throw new AppError('not_found', 'No such account in this space.');
  if (account.kind !== 'crypto' || account.address === null) {
    throw new AppError('invalid_request', 'Only a crypto account with an address can prove control of it.', {
      field: 'account_id',
    });
  }
  return { ...account, address: account.address };
}

/** A new one-time challenge for the account's address; any earlier one stops counting. */
export async function startProof(deps: ProofsDeps, userId: string, spaceId: string, accountId: string) {
  const account = await provableAccount(deps, userId, spaceId, accountId);
  const now = deps.clock.now();
  const message = [
    'Tollbook: prove control of this address.',
    `Address: ${account.address}`,
    `Account: ${account.id}`,
    `Space: ${spaceId}`,
    `Nonce: ${randomBytes(16).toString('hex')}`,
    `Issued: ${now.toISOString()}`,
  ].join('\n');
  await store.setChallenge(deps.db, account.id, message, new Date(now.getTime() + CHALLENGE_LIFETIME_MS));
  return {
    message,
    address: account.address,
    expires_at: new Date(now.getTime() + CHALLENGE_LIFETIME_MS).toISOString(),
  };
}

/** Checks the signature of the pending challenge; a challenge is used up by its first answer. */
export async function completeProof(
  deps: ProofsDeps,
  userId: string,
  spaceId: string,
  accountId: string,
  signature: string,
) {
  const account = await provableAccount(deps, userId, spaceId, accountId);
  const now = deps.clock.now();
  const challenge = await store.takeChallenge(deps.db, account.id);
  if (!challenge || challenge.expiresAt.getTime() <= now.getTime()) {
    throw new AppError('invalid_request', 'No open challenge for this account; ask for a new one with {}.', {
      field: 'signature',
    });
  }
  if (!(await isPersonalSignatureBy(account.address, challenge.message, signature))) {
    throw new AppError(
      'invalid_request',
      'The signature is not a personal_sign of the challenge by the account address.',
      {
        field: 'signature',
      },
    );
  }
  await store.markProven(deps.db, account.id, account.address, now);
  return { proven: true, address: account.address, proven_at: now.toISOString() };
}
