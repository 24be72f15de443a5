import type { Clock } from '../../core/clock.ts';
import { AppError } from '../../core/errors.ts';
import type { AmountE8 } from '../../core/money.ts';
import type { Db, Tx } from '../../platform/db/database.ts';
import type { IntegrationCaller } from '../../platform/http/context.ts';
import { charge } from '../charges/index.ts';
import { creditRefOf } from './domain.ts';
import { readSignIn } from './extensions.ts';
import * as store from './store.ts';

// An x402 resource paid from a prepaid credit: the payer signs in with the sign-in-with-x
// extension (its EIP-4361 message), and the call is charged to the credit its address keys in
// the seller's book, through the charge service. A sign-in is accepted once per book.

export type CreditDeps = { db: Db; clock: Clock; publicUrl: string };

export type CreditCallInput = {
  sign_in: string;
  resource: string;
  account_id: string;
  amount: number | string;
  memo?: string;
};

function resourceUrlOf(text: string): URL {
  const url = URL.canParse(text) ? new URL(text) : undefined;
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:'))
    throw new AppError('invalid_request', 'The resource must be an absolute http(s) URL.', {
      field: 'resource',
    });
  return url;
}

/**
 * Charges one call of `resource` to the credit of whoever signed `sign_in`, in the caller's
 * transaction (the route always opens one). A sign-in the extension refuses is 422 with the
 * extension's reason; a nonce the book accepted before is 409 (a replay), and the transaction
 * rolls back, charge and all. The nonce is accepted last, after the charge: the charge reads the
 * credit before the transaction writes anything, as a plain charge does, and the nonce's UNIQUE
 * key still decides (a replay racing the first call waits on the first's nonce and loses). A
 * credit that cannot carry the price answers `paid: false` and mints no top-up request, and the
 * sign-in is used all the same: the payer tops up by paying the resource's x402 price.
 */
export async function chargeSignedIn(
  db: Tx,
  deps: CreditDeps,
  caller: IntegrationCaller,
  input: CreditCallInput,
  price: AmountE8,
) {
  const resource = resourceUrlOf(input.resource);
  const read = await readSignIn(input.sign_in, resource);
  if (!read.ok)
    throw new AppError('invalid_request', `${read.reason}: ${read.message}`, {
      field: 'sign_in',
      reason: read.reason,
    });
  const clientRef = creditRefOf(read.signedIn.address);
  const charged = await charge(
    db,
    deps,
    caller,
    {
      client_ref: clientRef,
      account_id: input.account_id,
      amount: input.amount,
      memo: input.memo ?? '',
      resource: input.resource,
    },
    { price, topUp: null },
    'refuse',
  );
  const accepted = await store.acceptSignInNonce(db, {
    space_id: caller.spaceId,
    nonce: read.signedIn.nonce,
    client_ref: clientRef,
    accepted_at: deps.clock.now(),
    expires_at: read.signedIn.expiresAt,
  });
  if (!accepted)
    throw new AppError('conflict', 'This sign-in was already used: sign the fresh challenge of a new 402.', {
      field: 'sign_in',
      reason: 'invalid_siwx_nonce',
    });
  return charged;
}
