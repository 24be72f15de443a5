import type {
  Network,
  PaymentPayload,
  PaymentRequirements,
  SettleResponse,
  VerifyResponse,
} from '@x402/core/types';
import { OFFER_RECEIPT } from '@x402/extensions/offer-receipt';
import { PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import { defined } from '../../core/assert.ts';
import { type AmountE8, formatAmount, parseAmountInput } from '../../core/money.ts';
import type { ConfiguredNetwork } from '../../platform/chain/networks.ts';
import { fromBaseUnits } from '../../platform/chain/units.ts';
import { sha256Hex } from '../../platform/crypto.ts';
import type { Queryable } from '../../platform/db/database.ts';
import type { Static } from '../../platform/http/schema-kit.ts';
import { type AccountRow, findProvenAccounts } from '../accounts/index.ts';
import { charge } from '../charges/index.ts';
import { CREDIT_CURRENCY, openClientCredit } from '../client-credits/index.ts';
import { hasOnChainFloor, mintRequest, ON_CHAIN_FLOOR } from '../payment-requests/index.ts';
import { payerListed, SANCTIONED_PAYER } from '../screening/index.ts';
import {
  CLAIM_LEASE_MS,
  creditRefOf,
  DUPLICATE_WAIT_MS,
  describeReason,
  PAYMENT_ID_CONFLICT,
  type PayloadFacts,
  type Requirements,
  readCreditTerms,
  readPayload,
  samePayment,
} from './domain.ts';
import { readPaymentId } from './extensions.ts';
import type { EnvelopeIn } from './schemas.ts';
import {
  bookSettlement,
  claimKey,
  newClaim,
  putOnChain,
  settledResponse,
  withReceipt,
  type X402Deps,
} from './service.ts';
import * as store from './store.ts';

// Tollbook as the facilitator of someone else's x402 middleware (spec §1, the facilitator
// paragraph): GET /x402/supported, POST /x402/verify, POST /x402/settle. Gas is spent only for
// the token of a configured network and a pay-to address some space has proven; the money is
// filed under that space's endpoint card for the resource URL in the payload.

/** The space an integration key pins the call to, when the middleware sent one. */
export type GatewayCaller = { spaceId: string; keyId: string } | undefined;

/** A facilitator call's body, as its schema admitted it (the scheme checks the payload further). */
export type Envelope = Static<typeof EnvelopeIn>;

type Admitted = {
  ok: true;
  requirement: Requirements;
  network: ConfiguredNetwork;
  account: AccountRow;
  facts: PayloadFacts;
  amount: AmountE8;
  /** The payer's `payment-identifier` id, when the payload carries one. */
  paymentId: string | null;
  /** The seller's credit terms: the payment tops up the payer's credit, and the call costs `price` from it. */
  credit: { price: AmountE8 } | null;
};
type Refused = { ok: false; reason: string; message: string; payer?: string | undefined };

const RESOURCE_URL_MAX = 500;

function refuse(reason: string, message: string, payer?: string): Refused {
  return { ok: false, reason, message, payer };
}

/** Who receives this payment, on which network, or why Tollbook will not spend gas on it. */
async function admit(deps: X402Deps, envelope: Envelope, caller: GatewayCaller): Promise<Admitted | Refused> {
  const read = readPayload(envelope.paymentPayload);
  if (!read.ok) return refuse('invalid_payload', read.reason);
  const payer = read.facts.authorization.from;
  const paymentId = readPaymentId(envelope.paymentPayload);
  if (!paymentId.ok) return refuse('invalid_payload', paymentId.reason, payer);
  const requirement = envelope.paymentRequirements;
  if (envelope.x402Version !== 2 || requirement.scheme !== 'exact')
    return refuse('unsupported_scheme', 'Only x402 version 2 with the exact scheme is supported.', payer);
  const network = deps.facilitator.networks.get(requirement.network);
  if (!network)
    return refuse('unsupported_network', `Network ${requirement.network} is not served here.`, payer);
  if (requirement.asset.toLowerCase() !== network.token.address.toLowerCase())
    return refuse(
      'unsupported_asset',
      `Only ${network.token.symbol} at ${network.token.address} is settled on ${network.caip2}.`,
      payer,
    );
  const converted = /^\d{1,40}$/.test(requirement.amount)
    ? fromBaseUnits(BigInt(requirement.amount), network.token.decimals)
    : undefined;
  const amount = converted?.ok ? converted.value : undefined;
  if (amount === undefined || amount <= 0n)
    return refuse('invalid_amount', 'The amount must be a positive integer of base units.', payer);
  const resourceUrl = (envelope.paymentPayload.resource as { url?: unknown } | undefined)?.url ?? '';
  if (typeof resourceUrl !== 'string' || resourceUrl.length > RESOURCE_URL_MAX)
    return refuse(
      'invalid_payload',
      `The resource URL must be a string of at most ${RESOURCE_URL_MAX} characters.`,
      payer,
    );
  const accounts = (await findProvenAccounts(deps.db, requirement.payTo)).filter(
    (account) =>
      account.network === network.name &&
      account.currency === network.token.symbol &&
      (caller === undefined || account.space_id === caller.spaceId),
  );
  const account = accounts[0];
  if (!account)
    return refuse(
      'pay_to_not_proven',
      'No space here has proven control of this pay-to address on this network.',
      payer,
    );
  if (hasOnChainFloor(account) && amount < ON_CHAIN_FLOOR)
    return refuse(
      'amount_below_floor',
      'On-chain settlement has a floor of 1 USD; charge smaller prices to a prepaid balance.',
      payer,
    );
  if (await payerListed(deps.db, payer)) return refuse('payer_sanctioned', SANCTIONED_PAYER, payer);
  const credit = admitCredit(requirement.extra, amount, caller);
  if (!credit.ok) return refuse('invalid_payload', credit.reason, payer);
  return {
    credit: credit.price === null ? null : { price: credit.price },
    ok: true,
    requirement: requirement as Requirements,
    network,
    account,
    facts: read.facts,
    amount,
    paymentId: paymentId.id,
  };
}

/**
 * The credit terms a quote carries, checked before anything goes on chain: a price the payment
 * covers, asked by a call that carries the seller's integration key (the credit is the seller's
 * liability to the payer, so only the seller may open it).
 */
function admitCredit(
  extra: Record<string, unknown> | undefined,
  amount: AmountE8,
  caller: GatewayCaller,
): { ok: true; price: AmountE8 | null } | { ok: false; reason: string } {
  const read = readCreditTerms(extra);
  if (!read.ok) return read;
  if (read.terms === null) return { ok: true, price: null };
  if (caller === undefined)
    return {
      ok: false,
      reason: 'A quote that tops up a credit is settled only with the seller’s integration key.',
    };
  const price = parseAmountInput(read.terms.price);
  if (!price.ok || price.value <= 0n || price.value > amount)
    return { ok: false, reason: 'The credit price must be a positive decimal no larger than the payment.' };
  return { ok: true, price: price.value };
}

export function supported(deps: X402Deps) {
  const found = deps.facilitator.engine.getSupported();
  return {
    kinds: found.kinds,
    extensions: ['bazaar', PAYMENT_IDENTIFIER, OFFER_RECEIPT],
    signers: found.signers,
  };
}

export async function verify(
  deps: X402Deps,
  envelope: Envelope,
  caller: GatewayCaller,
): Promise<VerifyResponse> {
  const admitted = await admit(deps, envelope, caller);
  if (!admitted.ok)
    return {
      isValid: false,
      invalidReason: admitted.reason,
      invalidMessage: admitted.message,
      payer: admitted.payer,
    };
  if (admitted.paymentId) {
    // An id another payment holds would be refused at settlement: say so now.
    const resource = (envelope.paymentPayload.resource ?? {}) as { url?: string };
    const wanted = newClaim(
      deps,
      { space_id: admitted.account.space_id, id: null },
      admitted.requirement,
      admitted.facts,
      'facilitator',
      resource.url ?? null,
      admitted.paymentId,
    );
    const held = await store.findLiveByPaymentId(deps.db, wanted.pay_to, admitted.paymentId);
    if (held && !samePayment(held, wanted))
      return {
        isValid: false,
        invalidReason: PAYMENT_ID_CONFLICT,
        invalidMessage: 'This payment identifier was already used for another payment.',
        payer: admitted.facts.authorization.from,
      };
  }
  const verdict = await deps.facilitator.engine.verify(
    envelope.paymentPayload as PaymentPayload,
    admitted.requirement as PaymentRequirements,
  );
  if (verdict.isValid) return verdict;
  return { ...verdict, invalidMessage: describeReason(verdict.invalidReason, verdict.invalidMessage) };
}

function failure(
  network: string,
  reason: string,
  message: string,
  payer?: string,
  transaction = '',
): SettleResponse {
  return {
    success: false,
    errorReason: reason,
    errorMessage: message,
    transaction,
    network: network as Network,
    payer,
  };
}

export async function settle(
  deps: X402Deps,
  envelope: Envelope,
  caller: GatewayCaller,
): Promise<SettleResponse> {
  const admitted = await admit(deps, envelope, caller);
  const network = envelope.paymentRequirements.network;
  if (!admitted.ok) return failure(network, admitted.reason, admitted.message, admitted.payer);
  const resource = (envelope.paymentPayload.resource ?? {}) as { url?: string; description?: string };
  const claim = newClaim(
    deps,
    { space_id: admitted.account.space_id, id: null },
    admitted.requirement,
    admitted.facts,
    'facilitator',
    resource.url ?? null,
    admitted.paymentId,
  );
  const claimed = await claimOrWait(deps, claim, admitted);
  if (claimed.kind === 'answer') return claimed.response;
  const outcome = await putOnChain(
    deps,
    claim,
    admitted.requirement,
    envelope.paymentPayload as PaymentPayload,
    claimed.firstAttempt,
  );
  if (!outcome.ok) return withMessage(outcome.response);
  await bookSettlement(deps, claim, outcome.response, {
    requestIn: async (tx) => (await mintFor(tx, deps, admitted, caller, resource)).id,
  });
  if (admitted.credit && caller) await chargeFirstCall(deps, admitted, caller, resource.url ?? '');
  return withReceipt(deps, claim, outcome.response, '', true);
}

/**
 * The payment request a facilitator settlement pays: a sale filed under the resource's endpoint
 * card, or, under credit terms, a top-up of the credit the payer's address keys.
 */
async function mintFor(
  tx: Queryable,
  deps: X402Deps,
  admitted: Admitted,
  caller: GatewayCaller,
  resource: { url?: string; description?: string },
) {
  const spaceId = admitted.account.space_id;
  const credit = admitted.credit
    ? await openClientCredit(tx, spaceId, creditRefOf(admitted.facts.authorization.from), deps.clock.now())
    : undefined;
  return mintRequest(tx, deps, {
    spaceId,
    keyId: caller?.keyId ?? null,
    accountId: admitted.account.id,
    amount: admitted.amount,
    currency: credit ? CREDIT_CURRENCY : null,
    expiresAt: null,
    memo: (resource.description ?? '').slice(0, 500),
    resource: resource.url ?? '',
    ...(credit ? { topUpFor: { clientCreditId: credit.id } } : {}),
  });
}

/**
 * Under credit terms, the call the payment was made for is charged to the credit it just
 * topped up, through the charge service. The money has moved and the resource is served either
 * way, so a charge that fails here is logged, not answered.
 */
async function chargeFirstCall(
  deps: X402Deps,
  admitted: Admitted,
  caller: NonNullable<GatewayCaller>,
  url: string,
) {
  const price = defined(admitted.credit, 'credit terms').price;
  const clientRef = creditRefOf(admitted.facts.authorization.from);
  try {
    const charged = await charge(
      deps.db,
      deps,
      caller,
      { client_ref: clientRef, account_id: admitted.account.id, amount: formatAmount(price), resource: url },
      { price, topUp: null },
      'refuse',
    );
    if (!charged.paid) deps.logger?.error({ clientRef }, 'the call an x402 top-up paid for was not charged');
  } catch (error) {
    deps.logger?.error({ err: error, clientRef }, 'the call an x402 top-up paid for was not charged');
  }
}

/**
 * Claims the authorization for this call. A duplicate of a live claim (the middleware's retry,
 * or the same payload sent twice at once) waits for that claim's outcome and answers it, or takes
 * the claim over once its lease ran out; it never broadcasts a second time.
 */
async function claimOrWait(
  deps: X402Deps,
  claim: ReturnType<typeof newClaim>,
  admitted: Admitted,
): Promise<{ kind: 'claimed'; firstAttempt: boolean } | { kind: 'answer'; response: SettleResponse }> {
  const network = admitted.requirement.network;
  const deadline = Date.now() + DUPLICATE_WAIT_MS;
  while (!(await store.insertClaim(deps.db, claim))) {
    const existing = await store.findLiveByAuthorization(
      deps.db,
      claimKey(admitted.requirement, admitted.facts),
    );
    if (existing && existing.signature_hash !== claim.signature_hash) {
      const response = failure(
        network,
        'authorization_used',
        'This authorization nonce was already used for another payment.',
        claim.payer,
      );
      return { kind: 'answer', response };
    }
    if (existing?.status === 'settled')
      return { kind: 'answer', response: await withReceipt(deps, existing, settledResponse(existing)) };
    // Another authorization under the payer's payment-identifier id: the same payment answers the
    // first result (once settled), a different one is refused; neither broadcasts.
    const held =
      !existing && claim.payment_id
        ? await store.findLiveByPaymentId(deps.db, claim.pay_to, claim.payment_id)
        : undefined;
    if (held && !samePayment(held, claim)) {
      const message = 'This payment identifier was already used for another payment.';
      return { kind: 'answer', response: failure(network, PAYMENT_ID_CONFLICT, message, claim.payer) };
    }
    if (held?.status === 'settled')
      return { kind: 'answer', response: await withReceipt(deps, held, settledResponse(held)) };
    const now = deps.clock.now();
    const lease = new Date(now.getTime() + CLAIM_LEASE_MS);
    if (existing && (await store.takeOverClaim(deps.db, existing.id, now, lease))) {
      Object.assign(claim, { id: existing.id, space_id: existing.space_id });
      return { kind: 'claimed', firstAttempt: false };
    }
    if (Date.now() > deadline) {
      const message = 'The same payment is being settled by another call.';
      const response = failure(network, 'settlement_pending', message, claim.payer, existing?.tx_hash ?? '');
      return { kind: 'answer', response };
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { kind: 'claimed', firstAttempt: true };
}

function withMessage(response: SettleResponse): SettleResponse {
  return { ...response, errorMessage: describeReason(response.errorReason, response.errorMessage) };
}

/** The per-address bucket of the rate limiter for calls that carry no key. */
export function payToBucket(payTo: string): string {
  const hex = sha256Hex(`x402-pay-to:${payTo.toLowerCase()}`);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
