import { randomUUID } from 'node:crypto';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { type Address, formatUnits, getAddress, isAddress } from 'viem';
import { assert, defined } from '../../core/assert.ts';
import { canonicalJson } from '../../core/canonical-json.ts';
import type { Clock } from '../../core/clock.ts';
import { utcDateOf } from '../../core/day.ts';
import { AppError } from '../../core/errors.ts';
import { type AmountE8, formatAmount } from '../../core/money.ts';
import type { Chain } from '../../platform/chain/chain.ts';
import type { ConfiguredNetwork } from '../../platform/chain/networks.ts';
import { readChain } from '../../platform/chain/outcome.ts';
import { EIP3009_TOKEN_ABI } from '../../platform/chain/token.ts';
import { fromBaseUnits, toBaseUnits } from '../../platform/chain/units.ts';
import { type SecretBox, sha256Hex } from '../../platform/crypto.ts';
import { inTransaction, type Queryable } from '../../platform/db/database.ts';
import { moneyOut } from '../../platform/outbox/events.ts';
import { eventsRider } from '../../platform/outbox/outbox.ts';
import { createAccount, markServerProven } from '../accounts/index.ts';
import {
  decrease,
  type EntryCondition,
  increase,
  ledgerAccounts,
  postEntry,
  postEntryIf,
} from '../ledger/index.ts';
import { screen } from '../screening/index.ts';
import type { Facilitator } from '../x402/index.ts';
import { decide, PERM_OF, spendingFence } from './domain.ts';
import { agentAccount, agentSigner } from './signer.ts';
import * as store from './store.ts';
import {
  type AgentCaller,
  type AgentWriteOut,
  agentSpentToday,
  amountOf,
  countSpend,
  fenceOf,
  releaseSpend,
  type WritesDeps,
} from './writes.ts';

// The agent's hot wallet: balances read from the chain, and transfers out of it. A transfer is
// an EIP-3009 authorization signed with the agent's own key (opened from its seal only here,
// never logged or returned) and put on chain by the facilitator's gas wallet, the same send
// path (nonce manager, one sender at a time) as every x402 settlement. The day's cap is
// reserved under the agent's row lock before anything is signed, so concurrent transfers
// cannot overspend; a transfer the chain refuses gives its reservation back.

export type WalletDeps = WritesDeps & {
  secrets: SecretBox;
  chain: Chain | undefined;
  facilitator: Facilitator;
};

export type WalletTransferInput = {
  chain: string;
  asset: string;
  amount: number | string;
  destination: string;
  network?: string;
  payee?: string;
};

const TRANSFER_TIMEOUT_SECONDS = 120;

/**
 * The agent's wallet address and, per configured network, its token and native balances. A
 * balance is read from a node or not shown at all: a read that ends unknown (timeout, rate limit,
 * node error) answers 503, never a made-up zero.
 */
export async function walletBalances(deps: WalletDeps, caller: AgentCaller) {
  const { wallet_address: address } = await store.walletOf(deps.db, caller.agentId);
  const balances = [];
  const chain = deps.chain;
  for (const network of chain?.networks.list() ?? []) {
    const client = chain?.clients(network.name)?.publicClient;
    if (!client) continue;
    const [units, wei] = await Promise.all([
      readChain(network.name, 'balanceOf', () =>
        client.readContract({
          address: network.token.address,
          abi: EIP3009_TOKEN_ABI,
          functionName: 'balanceOf',
          args: [address as Address],
        }),
      ),
      readChain(network.name, 'eth_getBalance', () => client.getBalance({ address: address as Address })),
    ]);
    if (units.kind !== 'found' || wei.kind !== 'found') {
      throw new AppError(
        'service_unavailable',
        `The ${network.name} node could not be asked for the wallet's balance; retry shortly.`,
        { network: network.name },
      );
    }
    const amount = fromBaseUnits(units.value, network.token.decimals);
    const native = fromBaseUnits(wei.value, 18);
    balances.push({
      network: network.name,
      asset: network.token.symbol,
      // A balance finer than eight places (the native coin has 18) is shown exactly, never as 0.
      amount: amount.ok ? formatAmount(amount.value) : formatUnits(units.value, network.token.decimals),
      native: native.ok ? formatAmount(native.value) : formatUnits(wei.value, 18),
    });
  }
  return { address: getAddress(address), balances };
}

export type Resolved = {
  network: ConfiguredNetwork;
  caip2: string;
  baseUnits: bigint;
  amount: AmountE8;
  to: Address;
};

/** The network, token and amount a transfer names, or a 422 saying which field is wrong. */
export function resolve(deps: WalletDeps, input: WalletTransferInput): Resolved {
  const name = input.network ?? 'base';
  const network = deps.chain?.networks.list().find((candidate) => candidate.name === name);
  if (!network || !deps.facilitator.networks.has(network.caip2)) {
    throw new AppError('invalid_request', `The network ${name} is not served by this server.`, {
      field: 'network',
    });
  }
  if (!['evm', name].includes(input.chain.toLowerCase())) {
    throw new AppError('invalid_request', `chain is evm (or ${name}) on this network.`, { field: 'chain' });
  }
  if (input.asset.toUpperCase() !== network.token.symbol.toUpperCase()) {
    throw new AppError('invalid_request', `The wallet sends ${network.token.symbol} on ${name}.`, {
      field: 'asset',
    });
  }
  if (!isAddress(input.destination, { strict: false })) {
    throw new AppError('invalid_request', 'destination must be a 0x address.', { field: 'destination' });
  }
  const amount = amountOf(input.amount);
  const units = toBaseUnits(amount, network.token.decimals);
  if (!units.ok || units.value <= 0n) {
    throw new AppError(
      'amount_not_accepted',
      `${network.token.symbol} has ${network.token.decimals} decimals.`,
      {
        field: 'amount',
      },
    );
  }
  return { network, caip2: network.caip2, baseUnits: units.value, amount, to: getAddress(input.destination) };
}

/** A retry with the same Idempotency-Key answers the first result; another body is refused. */
async function replay(deps: WalletDeps, agentId: string, key: string, hash: string) {
  const row = await store.findWriteByIdempotencyKey(deps.db, agentId, key);
  if (!row) return undefined;
  if (row.request_hash !== hash) {
    throw new AppError(
      'idempotency_key_reused',
      'This Idempotency-Key was already used with a different body.',
    );
  }
  if (row.status === 'sending') {
    throw new AppError(
      'idempotency_in_progress',
      'A transfer with this Idempotency-Key is still on its way.',
    );
  }
  if (row.status === 'failed') {
    throw new AppError('transfer_failed', 'The chain refused this transfer; send a new one with a new key.', {
      ...(row.result ?? {}),
    });
  }
  const applied = row.status === 'applied';
  return {
    applied,
    message: row.message,
    proposal_id: applied ? null : row.id,
    result: row.result,
  } as AgentWriteOut;
}

export const SCREENING_HIT = 'screening: the destination matches the sanctions list.';

/** The destination address (and the payee, when named) checked against the sanctions list. */
export async function screensOut(tx: Queryable, resolved: Resolved, payee: string | undefined) {
  return screen(tx, { address: resolved.to.toLowerCase(), names: payee ? [payee] : [] });
}

type Reservation = { kind: 'proposal'; answer: AgentWriteOut } | { kind: 'send'; writeId: string };

/** Under the agent's lock: the rule table, screening and the day's cap; reserves the spend. */
async function reserve(
  deps: WalletDeps,
  caller: AgentCaller,
  input: WalletTransferInput,
  resolved: Resolved,
  idempotency: { key: string; hash: string } | undefined,
): Promise<Reservation> {
  return deps.db.transaction().execute(async (tx) => {
    const agent = await store.lockAgent(tx, caller.agentId);
    if (agent.revoked_at !== null) throw new AppError('unauthorized', 'This agent token was revoked.');
    const now = deps.clock.now();
    const needs = PERM_OF.wallet_transfer;
    const gate = decide({ status: agent.status, perms: agent.perms, needs, fence: { inside: true } });
    if (gate.outcome === 'refuse') throw new AppError(gate.code, gate.message);
    const spentToday = agentSpentToday(agent, now);
    const merchant = input.payee ? input.payee : resolved.to.toLowerCase();
    let fence = spendingFence(fenceOf(agent), now, {
      amount: resolved.amount,
      currency: resolved.network.token.symbol,
      merchant,
      spentToday,
    });
    if (fence.inside && (await screensOut(tx, resolved, input.payee))) {
      fence = { inside: false, message: SCREENING_HIT };
    }
    const decision = decide({ status: agent.status, perms: agent.perms, needs, fence });
    const writeId = randomUUID();
    const status = decision.outcome === 'propose' ? 'pending' : 'sending';
    const message = decision.outcome === 'propose' ? decision.message : '';
    await store.insertWrite(tx, {
      id: writeId,
      spaceId: agent.space_id,
      agentId: agent.id,
      kind: 'wallet_transfer',
      input: { ...input },
      message,
      status,
      result: null,
      at: now,
      idempotency,
    });
    if (status === 'pending') {
      return { kind: 'proposal', answer: { applied: false, message, proposal_id: writeId, result: null } };
    }
    await countSpend(tx, agent, { writeId, amount: resolved.amount, at: now });
    return { kind: 'send', writeId };
  });
}

/** The EIP-3009 authorization a signed x402 payload carries, as a write records it (0130). */
export function authorizationOf(
  network: ConfiguredNetwork,
  payload: Record<string, unknown>,
): store.SignedAuthorization | undefined {
  const authorization = (payload as { authorization?: Record<string, unknown> }).authorization;
  const nonce = authorization?.nonce;
  if (typeof nonce !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(nonce)) return undefined;
  const value = BigInt(String(authorization?.value ?? '0'));
  const validBefore = Number(authorization?.validBefore ?? Number.NaN);
  if (value <= 0n || !Number.isSafeInteger(validBefore)) return undefined;
  return { network: network.name, nonce, value, validBefore: new Date(validBefore * 1000) };
}

/** Signs the authorization with the agent's key; nothing leaves the process yet. */
async function sign(deps: WalletDeps, sealedKey: string, resolved: Resolved) {
  const account = agentAccount(deps.secrets, sealedKey);
  // A resolved network is one this process runs, so its clients are there.
  const client = defined(
    deps.chain?.clients(resolved.network.name),
    `the clients of ${resolved.network.name}`,
  ).publicClient;
  const scheme = new ExactEvmScheme(agentSigner(account, client));
  const requirements = {
    scheme: 'exact',
    network: resolved.caip2 as `${string}:${string}`,
    asset: resolved.network.token.address,
    amount: resolved.baseUnits.toString(),
    payTo: resolved.to,
    maxTimeoutSeconds: TRANSFER_TIMEOUT_SECONDS,
    extra: { name: resolved.network.token.name, version: resolved.network.token.version },
  };
  const signed = await scheme.createPaymentPayload(2, requirements);
  const payload = { x402Version: 2, accepted: requirements, payload: signed.payload };
  const authorization = authorizationOf(resolved.network, signed.payload as Record<string, unknown>);
  assert(authorization !== undefined, 'The exact scheme signs an EIP-3009 authorization.');
  return { payload, requirements, authorization };
}

/** Has the gas wallet put a signed authorization on chain. */
async function settle(deps: WalletDeps, signed: Awaited<ReturnType<typeof sign>>) {
  try {
    return await deps.facilitator.engine.settle(signed.payload, signed.requirements);
  } catch {
    return { success: false, transaction: '', errorReason: 'settle_failed' };
  }
}

/**
 * Failures after which the authorization may still be on chain: the receipt did not come in
 * time, or the send threw (the node may have taken it). Every other failure was decided before
 * the broadcast (verification, simulation) or by the chain reverting it, which spends no nonce.
 */
const OUTCOME_UNKNOWN = new Set(['settlement_pending', 'settle_failed']);

/** A payment that left the agent's wallet: the network's token and the amount signed. */
export type WalletOut = { network: ConfiguredNetwork; amount: AmountE8 };
/** What the entry names: the agent write that paid, the transaction hash, and who was paid. */
export type WalletOutProof = { writeId: string; txHash: string; payee: string };
type WalletOwner = { space_id: string; wallet_address: string; name: string };

/**
 * The one rule for money leaving the agent's wallet, a transfer or an x402 payment: money.out
 * (origin rail) from the wallet's book account to the agent-wallet expense, with its money.out
 * event riding in the entry's statement. The entry's id is chosen first so the event names it.
 */
async function walletOutEntry(
  tx: Queryable,
  deps: { clock: Clock },
  wallet: WalletOwner,
  out: WalletOut,
  proof: WalletOutProof,
  account: store.WalletAccountRef,
) {
  const at = deps.clock.now();
  const where = { spaceId: wallet.space_id, currency: account.currency, at };
  const asset = await ledgerAccounts.asset(tx, { ...where, accountId: account.id });
  const expense = await ledgerAccounts.expense(tx, { ...where, ref: 'agent-wallet' });
  const occurredOn = utcDateOf(at);
  const entryId = randomUUID();
  const move = {
    transaction_id: entryId,
    account_id: account.id,
    amount: out.amount,
    currency: account.currency,
    kind: 'expense' as const,
    origin: 'rail' as const,
    occurred_on: occurredOn,
  };
  const draft = {
    id: entryId,
    spaceId: wallet.space_id,
    origin: 'rail' as const,
    kind: 'expense' as const,
    occurredOn,
    causeType: 'agent_write',
    causeId: proof.writeId,
    counterparty: proof.payee,
    memo: proof.txHash,
    postings: [decrease(asset, out.amount), increase(expense, out.amount)],
  };
  const riders = [eventsRider([moneyOut({ spaceId: wallet.space_id, at }, move)])];
  return { at, draft, riders, booked: { transactionId: entryId, accountId: account.id } };
}

/** The transfer landed: money.out from the agent wallet's account (made on first use). */
export async function bookTransfer(
  tx: Queryable,
  deps: { clock: Clock },
  wallet: WalletOwner,
  out: WalletOut,
  proof: WalletOutProof,
) {
  const account = await walletAccount(tx, deps, wallet, out.network);
  const entry = await walletOutEntry(tx, deps, wallet, out, proof, account);
  const posted = await postEntry(tx, entry.draft, entry.at, entry.riders);
  if (!posted.ok)
    throw new AppError('insufficient_balance', 'The wallet account cannot carry this transfer.');
  return entry.booked;
}

/**
 * The same money.out, posted only if `end` (the guarded UPDATE that ends the agent's write)
 * takes effect: the end, the balance, the entry and its event in one statement, so a write is
 * booked exactly when it is marked paid. Answers undefined, having written nothing, when the
 * write had ended already (the repair job, or another process, got there first).
 */
export async function bookWalletOutIf(
  db: Queryable,
  deps: { clock: Clock },
  wallet: WalletOwner,
  payment: { out: WalletOut; proof: WalletOutProof; account: store.WalletAccountRef },
  end: EntryCondition,
) {
  const entry = await walletOutEntry(db, deps, wallet, payment.out, payment.proof, payment.account);
  const posted = await postEntryIf(db, end, entry.draft, entry.at, entry.riders);
  return posted.ok ? entry.booked : undefined;
}

/**
 * The wallet's book account on a network: known to the process once it was read proven and
 * committed (no statement), else read with no transaction when it is there already, else made
 * under the agent's row lock in a short transaction (first use).
 */
export async function readyWalletAccount(
  db: Queryable,
  deps: { clock: Clock },
  wallet: WalletOwner,
  network: ConfiguredNetwork,
): Promise<store.WalletAccountRef> {
  const address = wallet.wallet_address.toLowerCase();
  const found = await store.provenWalletAccount(db, wallet.space_id, address, network.name);
  if (found) return found;
  const made = await inTransaction(db, (tx) => walletAccount(tx, deps, wallet, network));
  return { id: made.id, currency: made.currency };
}

/**
 * The book account of the agent's wallet on a network, made on first use (a transfer out, or
 * the chain watch seeing money come in) under the agent's row lock, so there is one. Its address
 * is proven from the start: this server made the key.
 */
export async function walletAccount(
  tx: Queryable,
  deps: { clock: Clock },
  wallet: { space_id: string; wallet_address: string; name: string },
  network: ConfiguredNetwork,
) {
  const address = wallet.wallet_address.toLowerCase();
  const found = await store.findWalletAccount(tx, wallet.space_id, address, network.name);
  if (found?.address_proven === address) return found;
  await store.lockAgentByWallet(tx, wallet.space_id, address);
  let account = await store.findWalletAccount(tx, wallet.space_id, address, network.name);
  if (!account) {
    await createAccount(
      tx,
      deps.clock,
      { spaceId: wallet.space_id },
      {
        kind: 'crypto',
        name: `Agent wallet: ${wallet.name}`.slice(0, 120),
        currency: network.token.symbol,
        network: network.name,
        address,
      },
    );
    account = await store.findWalletAccount(tx, wallet.space_id, address, network.name);
  }
  assert(account !== undefined, 'The wallet account was just made.');
  if (account.address_proven !== address) {
    await markServerProven(tx, deps.clock, account.id, address);
    return { ...account, address_proven: address };
  }
  return account;
}

export type WalletOfAgent = {
  space_id: string;
  wallet_address: string;
  wallet_key_sealed: string;
  name: string;
};

type Ends = {
  /** Records the failure; answers what was recorded, which the 502's details carry. */
  failed: (tx: Queryable, result: Record<string, unknown>) => Promise<Record<string, unknown>>;
  applied: (tx: Queryable, result: Record<string, unknown>) => Promise<void>;
};

/**
 * Records what the live path saw, unless the repair job ended the write first (the process was
 * slow past the grace period): then the write's recorded end stands and is answered.
 */
async function recordEnd(
  deps: WalletDeps,
  writeId: string,
  record: (tx: Queryable) => Promise<Record<string, unknown>>,
) {
  return deps.db.transaction().execute(async (tx) => {
    const row = await store.lockWriteById(tx, writeId);
    if (row.status === 'sending' || row.status === 'approving') return record(tx);
    if (row.status === 'applied' || row.status === 'approved') return row.result ?? {};
    throw new AppError('transfer_failed', 'The repair released this transfer; nothing was spent.', {
      ...(row.result ?? {}),
    });
  });
}

/**
 * Sends a transfer the fence (or a person) allowed, then records its end in one transaction:
 * the chain took it → booked (money.out) and `end.applied`; refused → `end.failed` and a 502
 * `transfer_failed` naming what the chain said. The signed authorization is recorded on the
 * write before the gas wallet sees it, so a process that dies on the way leaves the repair job
 * (repair.ts) what it needs to ask the chain. An outcome not known yet (no receipt in time)
 * leaves the write on its way for the repair. Nothing here runs inside a transaction while the
 * chain is asked.
 */
export async function sendAndRecord(
  deps: WalletDeps,
  wallet: WalletOfAgent,
  resolved: Resolved,
  write: { writeId: string; payee: string | undefined },
  end: Ends,
): Promise<Record<string, unknown>> {
  const signed = await sign(deps, wallet.wallet_key_sealed, resolved);
  if (!(await store.recordSigned(deps.db, write.writeId, signed.authorization))) {
    throw new AppError(
      'transfer_failed',
      'This transfer was released before it was sent; nothing was spent.',
    );
  }
  const settled = await settle(deps, signed);
  const base = {
    amount: formatAmount(resolved.amount),
    asset: resolved.network.token.symbol,
    network: resolved.network.name,
    destination: resolved.to,
  };
  if (!settled.success && OUTCOME_UNKNOWN.has(settled.errorReason ?? '')) {
    throw new AppError(
      'transfer_failed',
      'The transfer’s outcome is not known yet: it stays on its way, and is booked or released once the chain can tell.',
      { ...base, tx_hash: settled.transaction || null, pending: true },
    );
  }
  if (!settled.success) {
    const result = {
      ...base,
      tx_hash: settled.transaction || null,
      error: settled.errorReason ?? 'settle_failed',
    };
    const recorded = await recordEnd(deps, write.writeId, (tx) => end.failed(tx, result));
    throw new AppError('transfer_failed', 'The chain refused the transfer; nothing was spent.', recorded);
  }
  return recordEnd(deps, write.writeId, async (tx) => {
    const proof = { writeId: write.writeId, txHash: settled.transaction, payee: write.payee ?? '' };
    const booked = await bookTransfer(tx, deps, wallet, resolved, proof);
    const out = {
      ...base,
      tx_hash: settled.transaction,
      transaction_id: booked.transactionId,
      account_id: booked.accountId,
    };
    await end.applied(tx, out);
    return out;
  });
}

/** POST /agent/wallet/transfers: one transaction per call; a retry with the same key answers the first. */
export async function transferFromWallet(
  deps: WalletDeps,
  caller: AgentCaller,
  input: WalletTransferInput,
  idempotencyKey: string | undefined,
): Promise<AgentWriteOut> {
  const idempotency = idempotencyKey
    ? { key: idempotencyKey, hash: sha256Hex(canonicalJson(input)) }
    : undefined;
  if (idempotency) {
    const earlier = await replay(deps, caller.agentId, idempotency.key, idempotency.hash);
    if (earlier) return earlier;
  }
  const resolved = resolve(deps, input);
  let reserved: Reservation;
  try {
    reserved = await reserve(deps, caller, input, resolved, idempotency);
  } catch (error) {
    // Two calls with one key at once: the loser of the unique index hears the usual 409.
    if (idempotency && /unique|duplicate/i.test(String((error as Error).message))) {
      throw new AppError('idempotency_in_progress', 'A transfer with this Idempotency-Key is on its way.');
    }
    throw error;
  }
  if (reserved.kind === 'proposal') return reserved.answer;
  const { writeId } = reserved;
  const wallet = await store.walletOf(deps.db, caller.agentId);
  const result = await sendAndRecord(
    deps,
    wallet,
    resolved,
    { writeId, payee: input.payee },
    {
      failed: async (tx, failure) => {
        await store.finishSending(tx, writeId, { status: 'failed', result: failure });
        await releaseSpend(tx, writeId);
        return failure;
      },
      applied: (tx, out) => store.finishSending(tx, writeId, { status: 'applied', result: out }),
    },
  );
  return { applied: true, message: '', proposal_id: null, result };
}
