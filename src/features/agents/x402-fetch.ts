import { randomUUID } from 'node:crypto';
import { x402Client } from '@x402/core/client';
import { decodePaymentResponseHeader } from '@x402/core/http';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { EVM_NETWORK_CHAIN_ID_MAP, ExactEvmSchemeV1 } from '@x402/evm/v1';
import { wrapFetchWithPayment } from '@x402/fetch';
import { defined } from '../../core/assert.ts';
import { AppError } from '../../core/errors.ts';
import { type AmountE8, formatAmount } from '../../core/money.ts';
import type { ConfiguredNetwork } from '../../platform/chain/networks.ts';
import { fromBaseUnits } from '../../platform/chain/units.ts';
import { checkPublicUrl, type Resolver } from '../../platform/net/public-address.ts';
import { AddressRefused, createSafeFetch } from '../../platform/net/safe-fetch.ts';
import { normalizeAddress, screen } from '../screening/index.ts';
import { decide, hostFence, PERM_OF, x402Fence } from './domain.ts';
import type { AgentAdmission } from './door.ts';
import { agentAccount, agentSigner, type Countersign } from './signer.ts';
import * as store from './store.ts';
import { authorizationOf, bookWalletOutIf, readyWalletAccount, type WalletDeps } from './wallet.ts';
import { type AgentCaller, type AgentWriteOut, agentSpentToday, countSpend, fenceOf } from './writes.ts';

// POST /agent/x402 {url}: the agent fetches a URL and, when it answers 402, pays from its hot
// wallet with the official x402 client (@x402/fetch over @x402/evm's exact scheme). The host
// must be in the fence's x402_hosts; the quoted amount must fit the per-request cap and what is
// left of the day's cap (agents/domain.ts's x402Fence), checked and reserved under the agent's
// row lock in one transaction when the client asks the agent's signer to sign (the signature is
// computed meanwhile and handed out only once it committed), so concurrent fetches cannot
// overspend and nothing leaves unreserved; the same transaction records the authorization for
// the repair job. The URL is checked as webhook addresses are and no redirect is followed.

export type X402FetchDeps = WalletDeps & { resolver: Resolver; allowPrivate: boolean };

const BODY_BYTES_MAX = 64 * 1024;
const PAID_THEN_BROKE =
  'The fetch broke after paying; the payment is booked or released once the chain can tell.';

type Reserved = { writeId: string; amount: AmountE8; network: ConfiguredNetwork };

async function propose(
  deps: X402FetchDeps,
  caller: AgentCaller,
  url: string,
  message: string,
): Promise<AgentWriteOut> {
  const id = randomUUID();
  await store.insertWrite(deps.db, {
    id,
    spaceId: caller.spaceId,
    agentId: caller.agentId,
    kind: 'x402',
    input: { url },
    message,
    status: 'pending',
    result: null,
    at: deps.clock.now(),
  });
  return { applied: false, message, proposal_id: id, result: null };
}

type Reservation = { ok: true; reserved: Reserved } | { ok: false; message: string; writeId: string };

/**
 * What a write records of the quote it was made for: the URL, network, asset, amount and pay-to.
 * A proposal's approval pays only the same quote (approvals.ts).
 */
export function quoteInput(url: string, quote: Quote) {
  return {
    url,
    quoted: formatAmount(quote.amount),
    asset: quote.network.token.symbol,
    network: quote.network.name,
    pay_to: quote.payTo,
  };
}

/**
 * The quote's pay-to against the sanctions list, before anything is signed or reserved: a
 * sentence saying why it is refused, or undefined.
 */
export async function screenPayTo(deps: X402FetchDeps, quote: Quote): Promise<string | undefined> {
  const hit = await screen(deps.db, { address: quote.payTo, names: [] });
  if (!hit) return undefined;
  return `screening: the host asks to pay ${quote.payTo}, an address on the sanctions list (${hit.programs || 'SDN'}); nothing was signed or spent.`;
}

/**
 * Under the agent's row lock: the rule table (status, the x402 perm) and the fence (expiry and
 * both caps) decide on the quote; inside, the write is recorded as sending with the authorization
 * and its spend counted, in the same transaction; outside, a proposal naming the fence it met.
 */
async function reserveQuote(
  deps: X402FetchDeps,
  caller: AgentCaller,
  url: string,
  quote: Quote,
  signed: store.SignedAuthorization,
): Promise<Reservation> {
  return deps.db.transaction().execute(async (tx) => {
    const agent = await store.lockAgent(tx, caller.agentId);
    if (agent.revoked_at !== null) throw new AppError('unauthorized', 'This agent token was revoked.');
    const now = deps.clock.now();
    const verdict = x402Fence(fenceOf(agent), now, {
      amount: quote.amount,
      spentToday: agentSpentToday(agent, now),
    });
    const decision = decide({
      status: agent.status,
      perms: agent.perms,
      needs: PERM_OF.x402,
      fence: verdict,
    });
    if (decision.outcome === 'refuse') throw new AppError(decision.code, decision.message);
    const writeId = randomUUID();
    const base = { id: writeId, spaceId: agent.space_id, agentId: agent.id, kind: 'x402' as const, at: now };
    const input = quoteInput(url, quote);
    if (decision.outcome === 'propose') {
      await store.insertWrite(tx, {
        ...base,
        input,
        message: decision.message,
        status: 'pending',
        result: null,
      });
      return { ok: false as const, message: decision.message, writeId };
    }
    await store.insertWrite(tx, { ...base, input, message: '', status: 'sending', result: null });
    await store.recordSigned(tx, writeId, signed);
    await countSpend(tx, agent, { writeId, amount: quote.amount, at: now });
    return { ok: true as const, reserved: { writeId, amount: quote.amount, network: quote.network } };
  });
}

/**
 * The gates before anything is fetched: frozen, perm, observing, the host in the fence. They read
 * the agent as the door read it for this very call (no second read); the reservation checks its
 * status and perm again in the statement that reserves.
 */
async function gate(deps: X402FetchDeps, agent: store.AgentRow, rawUrl: string) {
  const verdict = await checkPublicUrl(rawUrl, { allowPrivate: deps.allowPrivate }, deps.resolver);
  if (!verdict.ok) {
    throw new AppError('webhook_address_not_public', `The URL is refused: ${verdict.reason}`, {
      field: 'url',
    });
  }
  const host = verdict.url.host.toLowerCase();
  const decision = decide({
    status: agent.status,
    perms: agent.perms,
    needs: PERM_OF.x402,
    fence: hostFence(agent.x402_hosts, host),
  });
  if (decision.outcome === 'refuse') throw new AppError(decision.code, decision.message);
  return { agent, decision, url: verdict.url.toString() };
}

/**
 * A resolver that asks each name once for the request it serves: the gate's check and the
 * client's two fetches of the same URL then pin the very addresses the gate checked, and the
 * name is not looked up three times. It lives only as long as that one request.
 */
function oncePerRequest(resolver: Resolver): Resolver {
  const answers = new Map<string, Promise<string[]>>();
  return (hostname) => {
    let answer = answers.get(hostname);
    if (!answer) {
      answer = resolver(hostname);
      answers.set(hostname, answer);
    }
    return answer;
  };
}

function networkOf(deps: X402FetchDeps, caip2: string, asset: string) {
  const network = deps.chain?.networks.list().find((candidate) => candidate.caip2 === caip2);
  if (!network || network.token.address.toLowerCase() !== asset.toLowerCase()) return undefined;
  return network;
}

export type Quote = { amount: AmountE8; network: ConfiguredNetwork; payTo: string };

/**
 * Asked with the quote and the EIP-3009 authorization about to be signed, before the signature
 * is handed to the client (so before anything can leave): answers why not (the fence, the amount
 * a person approved), or undefined to send; it records the authorization first, so issue 19's
 * repair can ask the chain what became of it. Throwing stops the payment too.
 */
export type BeforeSending = (quote: Quote, signed: store.SignedAuthorization) => Promise<string | undefined>;

/**
 * Asked with the quote before anything is signed: answers why it is refused (its pay-to is on
 * the sanctions list; an approval's quote differs from the proposal's), or undefined to go on.
 */
export type BeforeSigning = (quote: Quote) => Promise<string | undefined>;

const ONLY_EIP3009 = 'Only an EIP-3009 authorization is paid: its outcome can be checked.';

/**
 * The official client, signing with the agent's key. A quote in a token this server does not
 * pay is refused before signing; for anything else the signer asks `beforeSending` with the
 * authorization it is about to sign and signs only once `beforeSending` let it go (its reservation
 * committed); a refused payment is never signed and is dropped unsent (the client sends nothing
 * when signing throws). After creation, the payment must carry the very
 * authorization that was recorded.
 */
export function payingFetch(
  deps: X402FetchDeps,
  sealedKey: string,
  beforeSending: BeforeSending,
  beforeSigning: BeforeSigning,
) {
  const account = agentAccount(deps.secrets, sealedKey);
  // One client per fetch, so the quote read before signing is the one signed after it.
  let quote: Quote | undefined;
  let recorded: store.SignedAuthorization | undefined;
  const countersign: Countersign = async (typed) => {
    const signed =
      quote && typed.primaryType === 'TransferWithAuthorization'
        ? authorizationOf(quote.network, { authorization: typed.message })
        : undefined;
    if (!quote || !signed) throw new Error(ONLY_EIP3009);
    const refusal = await beforeSending(quote, signed);
    if (refusal !== undefined) throw new Error(`Payment creation aborted: ${refusal}`);
    recorded = signed;
  };
  const client = new x402Client();
  const chain = deps.chain;
  for (const network of chain?.networks.list() ?? []) {
    const publicClient = chain?.clients(network.name)?.publicClient;
    if (!publicClient) continue;
    // What registerExactEvmScheme registers for one network, with its v1 names listed once.
    const signer = agentSigner(account, publicClient, countersign);
    client.register(network.caip2, new ExactEvmScheme(signer));
    for (const name of v1NamesOf(network.chainId)) client.registerV1(name, new ExactEvmSchemeV1(signer));
  }
  // Our own hook is the spend control: the client's default USD cap is replaced by the fence.
  client.setSpendControls({ maxAmountPerPayment: false, allowedAssets: true });
  client.onBeforePaymentCreation(async ({ selectedRequirements }) => {
    quote = quoteOf(deps, selectedRequirements);
    if (!quote) return { abort: true, reason: NOT_OUR_TOKEN };
    const refusal = await beforeSigning(quote);
    if (refusal !== undefined) {
      quote = undefined;
      return { abort: true, reason: refusal };
    }
  });
  client.onAfterPaymentCreation(async ({ paymentPayload }) => {
    const sending = quote && authorizationOf(quote.network, paymentPayload.payload);
    if (!sending || !recorded || !sameAuthorization(sending, recorded)) throw new Error(ONLY_EIP3009);
  });
  const safeFetch = createSafeFetch({ policy: { allowPrivate: deps.allowPrivate }, resolver: deps.resolver });
  return wrapFetchWithPayment(safeFetch, client);
}

function sameAuthorization(a: store.SignedAuthorization, b: store.SignedAuthorization) {
  return (
    a.network === b.network &&
    a.nonce.toLowerCase() === b.nonce.toLowerCase() &&
    a.value === b.value &&
    a.validBefore.getTime() === b.validBefore.getTime()
  );
}

const v1Names = new Map<number, string[]>();

/** The x402 v1 network names of a chain id (e.g. "base" for 8453), as the exact scheme knows them. */
function v1NamesOf(chainId: number): string[] {
  let names = v1Names.get(chainId);
  if (!names) {
    names = Object.entries(EVM_NETWORK_CHAIN_ID_MAP)
      .filter(([, id]) => id === chainId)
      .map(([name]) => name);
    v1Names.set(chainId, names);
  }
  return names;
}

const NOT_OUR_TOKEN = 'The quote asks for a token this server does not pay.';

/** The quote a payment requirement states, when it is in a token this server pays. */
function quoteOf(
  deps: X402FetchDeps,
  requirements: { network: string; asset: string; amount: string; payTo: string },
): Quote | undefined {
  const network = networkOf(deps, requirements.network, requirements.asset);
  const amount = network && fromBaseUnits(BigInt(requirements.amount), network.token.decimals);
  const payTo = normalizeAddress(requirements.payTo);
  return network && amount?.ok ? { amount: amount.value, network, payTo } : undefined;
}

/** What an agent asks for: a pay page answers machines with its x402 quote as JSON. */
export const MACHINE_ACCEPT = { accept: 'application/json, text/plain;q=0.9, */*;q=0.8' };

/** What was paid, as the answer's `paid` says it. */
export function paidOf(quote: Pick<Quote, 'amount' | 'network'>, txHash: string) {
  return {
    amount: formatAmount(quote.amount),
    asset: quote.network.token.symbol,
    network: quote.network.name,
    tx_hash: txHash,
  };
}

export async function readAnswer(response: Response) {
  const bytes = Buffer.from(await response.arrayBuffer()).subarray(0, BODY_BYTES_MAX);
  return {
    status: response.status,
    content_type: response.headers.get('content-type') ?? '',
    body: bytes.toString('utf8'),
  };
}

export function settlementOf(response: Response) {
  const header = response.headers.get('payment-response') ?? response.headers.get('x-payment-response');
  if (!header) return undefined;
  try {
    const settled = decodePaymentResponseHeader(header);
    return settled.success ? settled.transaction : undefined;
  } catch {
    return undefined;
  }
}

type Outcome = {
  /** Reserved and recorded: the signed payment was let go, so only the chain can end it. */
  reserved?: Reserved;
  proposal?: { message: string; writeId: string };
  /** A refusal met while reserving (the agent frozen or revoked meanwhile), or by screening. */
  refused?: AppError;
  /** The wallet's book account, read while the host is paid (a reserved fetch books on it). */
  account?: WalletAccountReady;
};

type WalletAccountReady = ReturnType<typeof readyWalletAccount>;

/**
 * A fetch that broke: the proposal it made; a payment it let go, left on its way for the repair
 * job (repair.ts), since only the chain can tell whether the host settles it; or the reason.
 */
function broken(outcome: Outcome, error: unknown): AgentWriteOut {
  if (outcome.proposal) {
    return {
      applied: false,
      message: outcome.proposal.message,
      proposal_id: outcome.proposal.writeId,
      result: null,
    };
  }
  if (outcome.reserved) throw new AppError('transfer_failed', PAID_THEN_BROKE, { pending: true });
  if (outcome.refused) throw outcome.refused;
  if (error instanceof AddressRefused) {
    throw new AppError('webhook_address_not_public', `The URL is refused: ${error.message}`, {
      field: 'url',
    });
  }
  throw new AppError('transfer_failed', 'The URL could not be fetched or paid; nothing was spent.', {
    reason: error instanceof Error ? error.message.slice(0, 200) : 'unknown',
  });
}

/** POST /agent/x402: answers AgentWriteOut with {status, content_type, body, paid} in `result`. */
export async function fetchWithX402(
  depsIn: X402FetchDeps,
  admission: Pick<AgentAdmission, 'caller' | 'principal'>,
  rawUrl: string,
): Promise<AgentWriteOut> {
  const deps = { ...depsIn, resolver: oncePerRequest(depsIn.resolver) };
  const { caller } = admission;
  const gated = await gate(deps, admission.principal, rawUrl);
  if (gated.decision.outcome === 'propose') return propose(deps, caller, gated.url, gated.decision.message);
  const outcome: Outcome = {};
  // One transaction reserves the quote and records the authorization while it is being signed;
  // the signed payment leaves only once that transaction committed.
  const beforeSending: BeforeSending = async (quote, signed) => {
    const reserved = await reserveQuote(deps, caller, gated.url, quote, signed).catch((error: unknown) => {
      if (error instanceof AppError) outcome.refused = error;
      throw error;
    });
    if (reserved.ok) {
      outcome.reserved = reserved.reserved;
      // The wallet's book account is read while the host is being paid, for the booking after.
      outcome.account = readyWalletAccount(deps.db, deps, gated.agent, reserved.reserved.network);
      outcome.account.catch(() => undefined);
      return undefined;
    }
    outcome.proposal = { message: reserved.message, writeId: reserved.writeId };
    return reserved.message;
  };
  // The quote's pay-to is screened before anything is signed or reserved.
  const beforeSigning: BeforeSigning = async (quote) => {
    const refusal = await screenPayTo(deps, quote);
    if (refusal !== undefined) {
      outcome.refused = new AppError('invalid_request', refusal, { field: 'url', pay_to: quote.payTo });
    }
    return refusal;
  };
  const pay = payingFetch(deps, gated.agent.wallet_key_sealed, beforeSending, beforeSigning);
  let response: Response;
  try {
    response = await pay(gated.url, { headers: MACHINE_ACCEPT });
  } catch (error) {
    return broken(outcome, error);
  }
  const answer = await readAnswer(response);
  if (!outcome.reserved) {
    const id = randomUUID();
    const result = { ...answer, paid: null };
    await store.insertWrite(deps.db, {
      id,
      spaceId: caller.spaceId,
      agentId: caller.agentId,
      kind: 'x402',
      input: { url: gated.url },
      message: '',
      status: 'applied',
      result,
      at: deps.clock.now(),
    });
    return { applied: true, message: '', proposal_id: null, result };
  }
  const paying = {
    reserved: outcome.reserved,
    wallet: gated.agent,
    host: new URL(gated.url).host,
    // Readied together with the reservation (beforeSending).
    account: defined(outcome.account, 'the wallet account of a reservation'),
  };
  const result = await endReserved(deps, paying, answer, settlementOf(response));
  return { applied: true, message: '', proposal_id: null, result };
}

/**
 * Ends a reserved fetch as the host answered. A settled payment is booked (money.out on the
 * agent wallet's account, the wallet transfer's rule) in the statement that applies the write,
 * so it is booked exactly when it is applied; if the repair job ended it first, that booking
 * stands. A signed payment the host did not settle it holds until its validBefore: the write
 * stays on its way, its spend reserved, for the repair job.
 */
async function endReserved(
  deps: X402FetchDeps,
  paying: { reserved: Reserved; wallet: store.AgentRow; host: string; account: WalletAccountReady },
  answer: Record<string, unknown>,
  txHash: string | undefined,
) {
  const { reserved } = paying;
  if (txHash) {
    const result = { ...answer, paid: paidOf(reserved, txHash) };
    const account = await paying.account;
    const payment = {
      out: reserved,
      proof: { writeId: reserved.writeId, txHash, payee: paying.host },
      account,
    };
    const end = store.appliedIfSending(reserved.writeId, result);
    await bookWalletOutIf(deps.db, deps, paying.wallet, payment, end);
    return result;
  }
  const result = { ...answer, paid: null, payment_pending: true };
  await store.noteAnswer(deps.db, reserved.writeId, result);
  return result;
}

/**
 * Records the authorization an approval's fetch signed on its write (issue 19's repair); throws,
 * and so stops the payment, when the write was released meanwhile.
 */
export async function recordSignedOrStop(
  deps: X402FetchDeps,
  writeId: string,
  signed: store.SignedAuthorization,
) {
  if (!(await store.recordSigned(deps.db, writeId, signed))) {
    throw new Error('The payment was released before it was sent.');
  }
}
