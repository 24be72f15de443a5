import { randomUUID } from 'node:crypto';
import type { Network, PaymentPayload, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { OFFER_RECEIPT } from '@x402/extensions/offer-receipt';
import type { Logger } from 'pino';
import { getAddress } from 'viem';
import { defined } from '../../core/assert.ts';
import type { Clock } from '../../core/clock.ts';
import { AppError } from '../../core/errors.ts';
import { hasSecretShape } from '../../core/ids.ts';
import { type NetworkName, networkDefinition } from '../../platform/chain/networks.ts';
import { fromBaseUnits, toBaseUnits } from '../../platform/chain/units.ts';
import { type SecretBox, sha256Hex } from '../../platform/crypto.ts';
import type { Db, Queryable } from '../../platform/db/database.ts';
import {
  hasOnChainFloor,
  ON_CHAIN_FLOOR,
  openPrice,
  type PaymentRequestRecord,
  pegOf,
  presentRequest,
  type RequestRow,
  settlePaymentRequest,
} from '../payment-requests/index.ts';
import { receiptFor } from '../receipts/index.ts';
import { getResource } from '../resources/index.ts';
import { payerListed, SANCTIONED_PAYER } from '../screening/index.ts';
import {
  CLAIM_LEASE_MS,
  DUPLICATE_WAIT_MS,
  describeReason,
  PAYMENT_ID_CONFLICT,
  type PayloadFacts,
  type Requirements,
  readPayload,
  requirementsFor,
  samePayment,
  X402_VERSION,
} from './domain.ts';
import { paymentIdDeclaration, readPaymentId } from './extensions.ts';
import { type Facilitator, pendingKey } from './facilitator.ts';
import * as store from './store.ts';

// The machine side of a payment page (spec §4 rules 2–3): the x402 quote, and the settlement of
// an EIP-3009 authorization sent back in PAYMENT-SIGNATURE. Verification and the transfer are
// the x402 facilitator's; this file decides who may pay what, claims the request so it is paid
// once, and books what the chain confirmed through the one settlement function.

export type X402Deps = {
  db: Db;
  clock: Clock;
  publicUrl: string;
  facilitator: Facilitator;
  /** Seals the books' receipt keys. */
  secrets: SecretBox;
  logger?: Logger | undefined;
};

export type PaymentRequired = {
  x402Version: number;
  error: string;
  resource: { url: string; description: string; mimeType: string };
  accepts: Requirements[];
  /** The extensions this quote declares (payment-identifier: a payer may send an idempotency id). */
  extensions: Record<string, unknown>;
};

/** An answer the page route sends as it is: status, extra headers and JSON body. */
export type MachineAnswer = { status: number; headers: Record<string, string>; body: unknown };

export function encodeHeader(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64');
}

/** The request at a page address and the account it pays into, read in one statement. */
async function requestOr404(
  db: Queryable,
  token: string,
): Promise<{ request: RequestRow; payee: store.Payee }> {
  const found = hasSecretShape(token, 'pr_') ? await store.findRequestAndPayee(db, token) : undefined;
  if (!found) throw new AppError('not_found', 'No payment request at this address.');
  return found;
}

/** The quote for a request's open amount, with no entries when it cannot be paid on chain. */
async function quoteFor(
  deps: X402Deps,
  request: RequestRow,
  account: store.Payee,
  error: string,
): Promise<PaymentRequired> {
  const now = deps.clock.now();
  const record = presentRequest(request, deps.publicUrl, now);
  const accepts: Requirements[] = [];
  const proven = account.address !== null && account.address_proven === account.address.toLowerCase();
  const network =
    proven && account.kind === 'crypto' && account.network
      ? deps.facilitator.networks.get(networkDefinition(account.network as NetworkName).caip2)
      : undefined;
  const open = openPrice(request);
  const fits = network !== undefined && network.token.symbol === account.currency;
  const aboveFloor = !hasOnChainFloor(account) || open >= ON_CHAIN_FLOOR;
  const base = fits ? toBaseUnits(open, network.token.decimals) : undefined;
  const baseUnits = base?.ok && base.value > 0n ? base.value : undefined;
  if (network && fits && aboveFloor && pegOf(account.currency) === pegOf(request.currency) && baseUnits) {
    accepts.push(
      requirementsFor({
        caip2: network.caip2,
        token: network.token,
        payTo: defined(account.address, 'a proven account address'),
        baseUnits,
        remainingSeconds: (request.expires_at.getTime() - now.getTime()) / 1000,
      }),
    );
  }
  const resourceUrl = request.resource_id
    ? (await getResource(deps.db, request.space_id, request.resource_id))?.address
    : undefined;
  return {
    x402Version: X402_VERSION,
    error,
    // The endpoint the request pays for, when the seller named one; else the page itself.
    resource: { url: resourceUrl ?? record.url, description: request.memo, mimeType: 'application/json' },
    accepts,
    extensions: paymentIdDeclaration(),
  };
}

function quoteAnswer(quote: PaymentRequired, settle?: SettleResponse): MachineAnswer {
  const headers: Record<string, string> = { 'payment-required': encodeHeader(quote) };
  if (settle) headers['payment-response'] = encodeHeader(settle);
  return { status: 402, headers, body: quote };
}

function refusal(
  status: number,
  error: string,
  detail: string,
  details?: Record<string, unknown>,
): MachineAnswer {
  return { status, headers: {}, body: details ? { error, detail, details } : { error, detail } };
}

async function paidAnswer(
  deps: X402Deps,
  record: PaymentRequestRecord,
  claim: store.SettlementClaim,
  settle: SettleResponse,
  justBooked = false,
): Promise<MachineAnswer> {
  const response = await withReceipt(deps, claim, settle, record.url, justBooked);
  return { status: 200, headers: { 'payment-response': encodeHeader(response) }, body: record };
}

/**
 * A settled payment's answer with the book's signed receipt (offer-receipt) in `extensions`:
 * the same receipt for every answer about one payment. Issued after the booking committed; the
 * money has moved, so a receipt that cannot be made now is logged and the answer goes without it
 * (the next answer about the payment makes it).
 */
export async function withReceipt(
  deps: X402Deps,
  claim: store.SettlementClaim,
  settle: SettleResponse,
  fallbackUrl = '',
  /** This call booked the payment just now (no receipt is looked for before one is made). */
  justBooked = false,
): Promise<SettleResponse> {
  try {
    const receipt = await receiptFor(deps, {
      spaceId: claim.space_id,
      claimId: claim.id,
      network: claim.network,
      transaction: settle.transaction,
      resourceUrl: claim.resource_url ?? fallbackUrl,
      payer: settle.payer ?? getAddress(claim.payer),
      justBooked,
    });
    return { ...settle, extensions: { ...settle.extensions, [OFFER_RECEIPT]: { info: { receipt } } } };
  } catch (error) {
    deps.logger?.error({ err: error, claim: claim.id }, 'signing an x402 receipt failed');
    return settle;
  }
}

/** GET {pay_url} as a machine, without a payment: the quote, or the request's state. */
export async function machineQuote(deps: X402Deps, token: string): Promise<MachineAnswer> {
  const { request, payee } = await requestOr404(deps.db, token);
  const record = presentRequest(request, deps.publicUrl, deps.clock.now());
  if (record.status !== 'active')
    return { status: record.status === 'paid' ? 200 : 409, headers: {}, body: record };
  return quoteAnswer(await quoteFor(deps, request, payee, 'Payment required'));
}

function decodePayment(header: string): unknown {
  try {
    return JSON.parse(Buffer.from(header, 'base64').toString('utf8'));
  } catch {
    return undefined;
  }
}

export function settledResponse(claim: store.SettlementClaim): SettleResponse {
  return {
    success: true,
    transaction: defined(claim.tx_hash, "a settled claim's transaction"),
    network: claim.network as Network,
    payer: getAddress(claim.payer),
  };
}

/** GET {pay_url} with PAYMENT-SIGNATURE: verify, claim, settle on chain, book. */
export async function payOnPage(deps: X402Deps, token: string, header: string): Promise<MachineAnswer> {
  const { request, payee } = await requestOr404(deps.db, token);
  const payload = decodePayment(header);
  const read = readPayload(payload);
  const paymentId = readPaymentId(payload);
  const record = presentRequest(request, deps.publicUrl, deps.clock.now());
  if (record.status !== 'active')
    return answerForClosed(deps, request, record, read, paymentId.ok ? paymentId.id : null);
  if (!read.ok) return quoteAnswer(await quoteFor(deps, request, payee, `invalid_payload: ${read.reason}`));
  if (!paymentId.ok)
    return quoteAnswer(await quoteFor(deps, request, payee, `invalid_payload: ${paymentId.reason}`));
  const quote = await quoteFor(deps, request, payee, 'Payment required');
  const requirement = quote.accepts.find(
    (entry) => entry.network === read.facts.network && entry.scheme === read.facts.scheme,
  );
  if (!requirement) {
    const error = `no_matching_quote: this request takes no ${read.facts.scheme} payment on ${read.facts.network}.`;
    return quoteAnswer({ ...quote, error });
  }
  if (await payerListed(deps.db, read.facts.authorization.from))
    return quoteAnswer({ ...quote, error: `payer_sanctioned: ${SANCTIONED_PAYER}` });
  // The claim is committed before the facilitator's settle runs, so a crash during the broadcast
  // stays recoverable and two calls never both broadcast. A refused authorization frees the
  // claim; a retry of the same authorization finds it.
  const claim = newClaim(deps, request, requirement, read.facts, 'page', quote.resource.url, paymentId.id);
  const deadline = Date.now() + DUPLICATE_WAIT_MS;
  while (!(await store.insertClaim(deps.db, claim))) {
    const held = claim.payment_id ? await answerForHeldId(deps, token, claim, deadline) : undefined;
    if (held === 'wait') continue;
    if (held) return held;
    return answerForLostClaim(deps, request, quote, requirement, payload as PaymentPayload, claim);
  }
  return settleClaim(deps, claim, request, quote, requirement, payload as PaymentPayload, true);
}

/**
 * When the payer's `payment-identifier` id is held by another claim at this pay-to address: the
 * first result for the same payment (waiting while it settles), the extension's conflict for a
 * different one, or nothing when no claim holds the id (the insert lost on another key).
 */
async function answerForHeldId(
  deps: X402Deps,
  token: string,
  claim: store.SettlementClaim,
  deadline: number,
): Promise<MachineAnswer | 'wait' | undefined> {
  const held = await store.findLiveByPaymentId(deps.db, claim.pay_to, defined(claim.payment_id, 'an id'));
  if (!held || held.signature_hash === claim.signature_hash) return undefined;
  if (!samePayment(held, claim))
    return refusal(409, PAYMENT_ID_CONFLICT, 'This payment identifier was already used for another payment.');
  if (held.status === 'settled') {
    const { request } = await requestOr404(deps.db, token);
    const record = presentRequest(request, deps.publicUrl, deps.clock.now());
    return paidAnswer(deps, record, held, settledResponse(held));
  }
  if (Date.now() > deadline)
    return refusal(409, 'conflict', 'This payment is being settled by another call; retry shortly.');
  await new Promise((resolve) => setTimeout(resolve, 50));
  return 'wait';
}

/** The answer when another call holds the authorization's claim: this call broadcast nothing. */
async function answerForLostClaim(
  deps: X402Deps,
  request: RequestRow,
  quote: PaymentRequired,
  requirement: Requirements,
  payload: PaymentPayload,
  claim: store.SettlementClaim,
): Promise<MachineAnswer> {
  const existing = await store.findLiveByAuthorization(deps.db, {
    network: claim.network,
    asset: claim.asset,
    payer: claim.payer,
    nonce: claim.nonce,
  });
  if (existing) return answerForExisting(deps, request, quote, requirement, payload, existing);
  const racing = await store.findLiveByRequest(deps.db, request.id);
  if (racing && racing.signature_hash !== claim.signature_hash) {
    return refusal(409, 'request_not_payable', 'Another authorization is already settling this request.', {
      status: 'settling',
    });
  }
  return refusal(409, 'conflict', 'This authorization is being settled by another call; retry shortly.');
}

export function claimKey(requirement: Requirements, facts: PayloadFacts) {
  return {
    network: requirement.network,
    asset: requirement.asset.toLowerCase(),
    payer: facts.authorization.from.toLowerCase(),
    nonce: facts.authorization.nonce.toLowerCase(),
  };
}

export function newClaim(
  deps: X402Deps,
  request: { space_id: string; id: string | null },
  requirement: Requirements,
  facts: PayloadFacts,
  via: 'page' | 'facilitator',
  resourceUrl: string | null = null,
  paymentId: string | null = null,
): store.SettlementClaim {
  const now = deps.clock.now();
  return {
    id: randomUUID(),
    space_id: request.space_id,
    payment_request_id: request.id,
    via,
    ...claimKey(requirement, facts),
    pay_to: requirement.payTo.toLowerCase(),
    amount_base: requirement.amount,
    resource_url: resourceUrl,
    signature_hash: sha256Hex(facts.signature.toLowerCase()),
    payment_id: paymentId,
    status: 'pending',
    tx_hash: null,
    error_reason: null,
    lease_until: new Date(now.getTime() + CLAIM_LEASE_MS),
    created_at: now,
    settled_at: null,
  };
}

async function answerForClosed(
  deps: X402Deps,
  request: RequestRow,
  record: PaymentRequestRecord,
  read: ReturnType<typeof readPayload>,
  paymentId: string | null,
): Promise<MachineAnswer> {
  // The payer that paid, retrying (the same authorization, or a new one under the same
  // payment-identifier id): the same answer as the first time.
  const live = await store.findLiveByRequest(deps.db, request.id);
  const samePayer = read.ok && live?.payer === read.facts.authorization.from.toLowerCase();
  if (
    read.ok &&
    live?.status === 'settled' &&
    (live.signature_hash === sha256Hex(read.facts.signature.toLowerCase()) ||
      (samePayer && paymentId !== null && live.payment_id === paymentId))
  )
    return paidAnswer(deps, record, live, settledResponse(live));
  return refusal(
    409,
    'request_not_payable',
    `This payment request is ${record.status}; it takes no more payments.`,
    {
      status: record.status,
    },
  );
}

async function answerForExisting(
  deps: X402Deps,
  request: RequestRow,
  quote: PaymentRequired,
  requirement: Requirements,
  payload: PaymentPayload,
  existing: store.SettlementClaim,
): Promise<MachineAnswer> {
  const sameSignature =
    existing.signature_hash === sha256Hex(String(payload.payload.signature).toLowerCase());
  if (existing.payment_request_id !== request.id || !sameSignature) {
    return refusal(409, 'authorization_used', 'This authorization was already used for another payment.');
  }
  if (existing.status === 'settled') {
    const record = presentRequest(request, deps.publicUrl, deps.clock.now());
    return paidAnswer(deps, record, existing, settledResponse(existing));
  }
  const now = deps.clock.now();
  if (!(await store.takeOverClaim(deps.db, existing.id, now, new Date(now.getTime() + CLAIM_LEASE_MS)))) {
    return refusal(409, 'conflict', 'This authorization is being settled by another call; retry shortly.');
  }
  return settleClaim(deps, existing, request, quote, requirement, payload);
}

/**
 * Puts a claimed authorization on chain and books it; frees the claim when the chain refuses.
 * `firstAttempt`: this call just made the claim, so no earlier attempt can have broadcast it.
 */
async function settleClaim(
  deps: X402Deps,
  claim: store.SettlementClaim,
  request: RequestRow,
  quote: PaymentRequired,
  requirement: Requirements,
  payload: PaymentPayload,
  firstAttempt = false,
): Promise<MachineAnswer> {
  const outcome = await putOnChain(deps, claim, requirement, payload, firstAttempt);
  if (!outcome.ok) return outcome.answer ?? quoteAnswer({ ...quote, error: outcome.error }, outcome.response);
  const booked = await bookSettlement(deps, claim, outcome.response, { seen: request });
  const record = presentRequest(booked, deps.publicUrl, deps.clock.now());
  return paidAnswer(deps, record, claim, outcome.response, true);
}

type ChainOutcome =
  | { ok: true; response: SettleResponse }
  | {
      ok: false;
      error: string;
      response: SettleResponse;
      answer?: MachineAnswer;
    };

/**
 * Settles a claimed authorization through the scheme. `firstAttempt`: the caller just made the
 * claim, so the scheme's pending-settlement store need not be asked about an earlier broadcast.
 */
export async function putOnChain(
  deps: X402Deps,
  claim: store.SettlementClaim,
  requirement: Requirements,
  payload: PaymentPayload,
  firstAttempt: boolean,
): Promise<ChainOutcome> {
  let response: SettleResponse;
  const key = pendingKey(String(payload.payload.signature));
  // Only the call that put the key there takes it out (two calls may race for one claim).
  const marked = firstAttempt && !deps.facilitator.firstAttempts.has(key);
  if (marked) deps.facilitator.firstAttempts.add(key);
  try {
    response = await deps.facilitator.engine.settle(payload, requirement as PaymentRequirements);
  } catch (error) {
    response = {
      success: false,
      transaction: '',
      network: requirement.network as Network,
      errorReason: 'settle_failed',
    };
    deps.logger?.error({ err: error, claim: claim.id }, 'x402 settlement threw');
  }
  if (marked) deps.facilitator.firstAttempts.delete(key);
  // A replacement at the same nonce may have mined instead of the first transaction: the books
  // name the one that mined.
  const mined = deps.facilitator.minedAs.get(response.transaction.toLowerCase());
  deps.facilitator.minedAs.delete(response.transaction.toLowerCase());
  if (response.success) return { ok: true, response: mined ? { ...response, transaction: mined } : response };
  if (response.errorReason === 'settlement_pending' && response.transaction) {
    const now = deps.clock.now();
    await store.markBroadcast(deps.db, claim.id, response.transaction, new Date(now.getTime() + 5_000));
    const answer = refusal(
      409,
      'conflict',
      'The transfer is on its way but not confirmed yet; send the same payment again.',
      { status: 'settlement_pending', tx_hash: response.transaction },
    );
    return { ok: false, error: 'settlement_pending', response, answer };
  }
  await store.markFailed(
    deps.db,
    claim.id,
    response.errorReason ?? 'settle_failed',
    response.transaction || null,
  );
  const error = `${response.errorReason}: ${describeReason(response.errorReason, response.errorMessage)}`;
  return { ok: false, error, response };
}

/**
 * Books a confirmed transfer through the one settlement function, with the claim marked settled
 * in the same write. A page payment passes the request it read (`seen`): the booking is then one
 * statement, guarded on that state. A facilitator call passes `requestIn`, which names the
 * request inside the booking transaction (one minted for it). Retried: the money has moved, so
 * the books must follow.
 */
export async function bookSettlement(
  deps: X402Deps,
  claim: store.SettlementClaim,
  response: SettleResponse,
  target: { seen: RequestRow } | { requestId: string } | { requestIn: (tx: Queryable) => Promise<string> },
): Promise<RequestRow> {
  const network = defined(deps.facilitator.networks.get(claim.network), "a claim's network");
  const converted = fromBaseUnits(BigInt(claim.amount_base), network.token.decimals);
  if (!converted.ok) throw new Error(`A claimed amount ${claim.amount_base} cannot be booked exactly.`);
  const amount = converted.value;
  const at = deps.clock.now();
  const book = async (db: Queryable, requestId: string, seen?: RequestRow) => {
    const settled = { txHash: response.transaction, at, paymentRequestId: requestId };
    const outcome = await settlePaymentRequest(db, {
      spaceId: claim.space_id,
      requestId,
      amount,
      rail: 'x402',
      reference: `${claim.network}:${response.transaction}`,
      payer: response.payer ?? claim.payer,
      at,
      chain: { asset: network.token.address, network: claim.network, txHash: response.transaction },
      committed: true,
      seen,
      riders: [store.claimSettledRider(claim.id, settled)],
    });
    if (!outcome.ok) throw new Error(`A committed settlement was refused (${outcome.status}).`);
    // A replay wrote no riders: the claim is marked on its own (a no-op if it was marked then).
    if (outcome.replayed) await store.markSettled(db, claim.id, settled);
    return outcome.request;
  };
  for (let attempt = 1; ; attempt++) {
    try {
      if ('seen' in target) return await book(deps.db, target.seen.id, target.seen);
      if ('requestId' in target) return await book(deps.db, target.requestId);
      const { requestIn } = target;
      return await deps.db.transaction().execute(async (tx) => book(tx, await requestIn(tx)));
    } catch (error) {
      deps.logger?.error(
        { err: error, claim: claim.id, tx: response.transaction, attempt },
        'booking an x402 settlement failed',
      );
      if (attempt >= 3) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    }
  }
}
