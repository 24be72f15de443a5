import { AppError } from '../../core/errors.ts';
import { formatAmount } from '../../core/money.ts';
import type { Queryable } from '../../platform/db/database.ts';
import { checkPublicUrl } from '../../platform/net/public-address.ts';
import { AddressRefused } from '../../platform/net/safe-fetch.ts';
import { readAmount } from '../ledger/index.ts';
import * as store from './store.ts';
import {
  bookWalletOutIf,
  readyWalletAccount,
  resolve,
  SCREENING_HIT,
  screensOut,
  sendAndRecord,
  type WalletTransferInput,
} from './wallet.ts';
import { amountOf } from './writes.ts';
import {
  MACHINE_ACCEPT,
  paidOf,
  payingFetch,
  type Quote,
  readAnswer,
  recordSignedOrStop,
  screenPayTo,
  settlementOf,
  type X402FetchDeps,
} from './x402-fetch.ts';

// A person approves a proposal whose applying is chain I/O: a transfer from the agent's hot
// wallet, or an x402 fetch paid from it. The chain is never asked inside a database
// transaction: the proposal is claimed first (pending → approving, under its row lock, so two
// approvals at once apply it once), the transfer or fetch runs, and its outcome is recorded
// after: approved with the result, or back to pending with the failure for the owner to read.
// An approved proposal does not count against the agent's daily cap (a person decided it).

export type ApprovalDeps = X402FetchDeps;

/** A proposal only a pending one can be decided; anything else is 422 proposal_state. */
export function requirePending(row: store.WriteRow | undefined): store.WriteRow {
  if (!row) throw new AppError('not_found', 'No such proposal in this space.');
  if (row.status !== 'pending') {
    throw new AppError(
      'proposal_state',
      `This proposal is ${row.status}; only a pending one can be decided.`,
      { status: row.status },
    );
  }
  return row;
}

/** The kinds whose applying asks the chain, approved by `approveWithChainIo`. */
export const CHAIN_IO_KINDS = new Set(['wallet_transfer', 'x402']);

type Claimed = { write: store.WriteRow; agent: store.AgentRow };

/**
 * pending → approving for one person, in a short transaction of its own: the proposal is
 * pending, its agent not revoked, and whatever `recheck` reads from the database still holds.
 */
async function claim(
  deps: ApprovalDeps,
  who: { actorId: string; spaceId: string; proposalId: string },
  recheck: (tx: Queryable) => Promise<void> = async () => {},
): Promise<Claimed> {
  return deps.db.transaction().execute(async (tx) => {
    const write = requirePending(await store.lockWrite(tx, who.spaceId, who.proposalId));
    const agent = await store.findAgent(tx, who.spaceId, write.agent_id);
    if (!agent || agent.revoked_at !== null) {
      throw new AppError('conflict', 'This agent was revoked: its proposals can only be rejected.');
    }
    await recheck(tx);
    await store.claimWrite(tx, write.id, who.actorId, deps.clock.now());
    return { write, agent };
  });
}

const CHAIN_REFUSED = 'The chain refused the transfer; nothing was spent.';

/** What a failed approval leaves on the proposal for the owner to read. */
function failed(deps: ApprovalDeps, actorId: string, failure: { error: string; detail: string }) {
  return { ...failure, failed_by: actorId, failed_at: deps.clock.now().toISOString() };
}

/** The approval failed: back to pending with the failure recorded, and the person told why. */
async function giveBack(
  deps: ApprovalDeps,
  writeId: string,
  actorId: string,
  failure: { error: string; detail: string } & Record<string, unknown>,
): Promise<never> {
  const result = failed(deps, actorId, failure);
  await store.endApproval(deps.db, writeId, { status: 'pending', result });
  throw new AppError('transfer_failed', failure.detail, result);
}

async function approveWalletTransfer(
  deps: ApprovalDeps,
  who: { actorId: string; spaceId: string; proposalId: string },
  input: WalletTransferInput,
) {
  // The network, token and amount are read again: the server's networks may have changed.
  const resolved = resolve(deps, input);
  const claimed = await claim(deps, who, async (tx) => {
    if (await screensOut(tx, resolved, input.payee)) {
      throw new AppError('invalid_request', `${SCREENING_HIT} Reject this proposal.`, {
        field: 'destination',
      });
    }
  });
  const { write, agent } = claimed;
  // A transfer the chain refused goes back to pending (sendAndRecord then answers 502); one the
  // chain took and the books could not record stays approving, for an operator to look at.
  await sendAndRecord(
    deps,
    agent,
    resolved,
    { writeId: write.id, payee: input.payee },
    {
      failed: async (tx, failure) => {
        const detail = CHAIN_REFUSED;
        const result = failed(deps, who.actorId, { ...failure, error: 'transfer_failed', detail });
        await store.endApproval(tx, write.id, { status: 'pending', result });
        return result;
      },
      applied: (tx, result) => store.endApproval(tx, write.id, { status: 'approved', result }),
    },
  );
}

type X402Input = { url: string; quoted?: string; asset?: string; network?: string; pay_to?: string };

/** What changed between a proposal's quote and the one its approval met, and how it reads. */
export type QuoteChange = { field: 'pay_to' | 'network' | 'asset' | 'amount'; detail: string };

/**
 * The quote an approval meets against the one its proposal recorded: what changed (pay-to,
 * network, asset, amount: the owner approved that payment, not another), or undefined when it is
 * the same. Proposals made before any quote was seen (host outside the fence, observing)
 * recorded none and compare nothing.
 */
export function quoteChange(recorded: X402Input, quote: Quote): QuoteChange | undefined {
  if (recorded.pay_to !== undefined && recorded.pay_to !== quote.payTo) {
    return {
      field: 'pay_to',
      detail: `The host now asks to pay ${quote.payTo}; the proposal was for ${recorded.pay_to}.`,
    };
  }
  if (recorded.network !== undefined && recorded.network !== quote.network.name) {
    return {
      field: 'network',
      detail: `The host now asks for payment on ${quote.network.name}; the proposal was for ${recorded.network}.`,
    };
  }
  if (recorded.asset !== undefined && recorded.asset !== quote.network.token.symbol) {
    return {
      field: 'asset',
      detail: `The host now asks for ${quote.network.token.symbol}; the proposal was for ${recorded.asset}.`,
    };
  }
  if (recorded.quoted !== undefined && amountOf(recorded.quoted) !== quote.amount) {
    return {
      field: 'amount',
      detail: `The host now asks ${formatAmount(quote.amount)}; the proposal was for ${formatAmount(amountOf(recorded.quoted))}.`,
    };
  }
  return undefined;
}

/**
 * An approved x402 fetch pays at most what the proposal's quote said (a price that rose since is
 * refused), or, when the agent never saw a quote (host outside the fence, observing), at most
 * its per_request_usd.
 */
async function approveX402(
  deps: ApprovalDeps,
  who: { actorId: string; spaceId: string; proposalId: string },
  input: X402Input,
) {
  const verdict = await checkPublicUrl(input.url, { allowPrivate: deps.allowPrivate }, deps.resolver);
  if (!verdict.ok) {
    throw new AppError('webhook_address_not_public', `The URL is refused: ${verdict.reason}`, {
      field: 'url',
    });
  }
  const { write, agent } = await claim(deps, who);
  const limit = input.quoted ? amountOf(input.quoted) : readAmount(agent.per_request_usd);
  let quoted: Quote | undefined;
  let signed = false;
  let refused: QuoteChange | undefined;
  // Before signing: the quote is the proposal's (pay-to, network, asset, amount) and its pay-to
  // is not on the sanctions list (read again now: the list may have changed since the proposal).
  const beforeSigning = async (quote: Quote) => {
    const listed = await screenPayTo(deps, quote);
    refused =
      quoteChange(input, quote) ?? (listed === undefined ? undefined : { field: 'pay_to', detail: listed });
    return refused?.detail;
  };
  const pay = payingFetch(
    deps,
    agent.wallet_key_sealed,
    async (quote, authorization) => {
      if (quote.amount > limit) {
        return `The URL now asks ${formatAmount(quote.amount)}, more than the ${formatAmount(limit)} approved.`;
      }
      await recordSignedOrStop(deps, write.id, authorization);
      quoted = quote;
      signed = true;
      return undefined;
    },
    beforeSigning,
  );
  let response: Response;
  try {
    response = await pay(verdict.url.toString(), { headers: MACHINE_ACCEPT });
  } catch (error) {
    if (refused !== undefined && !signed) {
      // Refused before anything was signed: back to pending with the reason, answered 422.
      const result = failed(deps, who.actorId, { error: 'invalid_request', detail: refused.detail });
      await store.endApproval(deps.db, write.id, { status: 'pending', result });
      throw new AppError('invalid_request', `${refused.detail} Nothing was signed; reject this proposal.`, {
        field: refused.field,
        ...result,
      });
    }
    const reason = error instanceof AddressRefused ? `The URL is refused: ${error.message}` : String(error);
    const detail = `The URL could not be fetched or paid. ${reason.slice(0, 200)}`;
    if (signed) return leftForRepair(detail);
    return giveBack(deps, write.id, who.actorId, { error: 'transfer_failed', detail, signed: false });
  }
  const answer = await readAnswer(response);
  const txHash = settlementOf(response);
  if (quoted && !txHash) {
    const detail = `The URL answered ${answer.status} without a settled payment.`;
    if (signed) return leftForRepair(detail);
    return giveBack(deps, write.id, who.actorId, { error: 'transfer_failed', detail, status: answer.status });
  }
  if (!quoted || !txHash) {
    await store.endApproval(deps.db, write.id, { status: 'approved', result: { ...answer, paid: null } });
    return;
  }
  // Paid: booked (money.out on the agent wallet's account) in the statement that approves it.
  const result = { ...answer, paid: paidOf(quoted, txHash) };
  const account = await readyWalletAccount(deps.db, deps, agent, quoted.network);
  const proof = { writeId: write.id, txHash, payee: verdict.url.host };
  const end = store.approvedIfApproving(write.id, result);
  await bookWalletOutIf(deps.db, deps, agent, { out: quoted, proof, account }, end);
}

/**
 * A signed payment left with the request and no settlement came back: the host may still settle
 * it until its validBefore. Approving it again would sign a second payment, so the proposal stays
 * approving; the repair job (repair.ts) reads the authorization's nonce on chain once it can no
 * longer be used, and approves the proposal (it was paid) or gives it back to pending.
 */
function leftForRepair(detail: string): never {
  throw new AppError('transfer_failed', `${detail} The payment's outcome is settled on chain later.`, {
    pending: true,
  });
}

/** Approves a wallet-transfer or x402 proposal: claimed, the chain asked, the outcome recorded. */
export async function approveWithChainIo(
  deps: ApprovalDeps,
  who: { actorId: string; spaceId: string; proposalId: string },
  write: store.WriteRow,
) {
  if (write.kind === 'wallet_transfer') {
    return approveWalletTransfer(deps, who, write.input as WalletTransferInput);
  }
  return approveX402(deps, who, write.input as X402Input);
}
