import { randomUUID } from 'node:crypto';
import { assert, defined } from '../../core/assert.ts';
import type { Clock } from '../../core/clock.ts';
import { decodeCursor, PAGE_SIZE, pageOf } from '../../core/cursor.ts';
import { utcDateOf } from '../../core/day.ts';
import { AppError } from '../../core/errors.ts';
import type { EntryKind } from '../../core/events.ts';
import { hasSecretShape } from '../../core/ids.ts';
import {
  type AmountE8,
  asAmount,
  formatAmount,
  isRecordSpelling,
  parseAmountInput,
} from '../../core/money.ts';
import { randomSecret } from '../../platform/crypto.ts';
import { untilShort } from '../../platform/db/batches.ts';
import { type Db, inTransaction, type Queryable } from '../../platform/db/database.ts';
import { type Member, spaceOfMember } from '../../platform/http/member.ts';
import { moneyIn, moneyOut, paymentRequestPaid } from '../../platform/outbox/events.ts';
import { enqueueEvents, eventsRider, type OutboxEvent } from '../../platform/outbox/outbox.ts';
import { type AccountFacts, requireAccountFacts } from '../accounts/index.ts';
import { findClientCredit } from '../client-credits/index.ts';
import { applyInvoiceDiscount, applyInvoiceSettlement, recordInvoiceShortfall } from '../invoices/index.ts';
import {
  decrease,
  type EntryDraft,
  type EntryRider,
  ensureLedgerAccounts,
  increase,
  type LedgerAccountSpec,
  ledgerAccountSpecs,
  type Posting,
  postEntry,
  postEntryIf,
  readAmount,
  reverseEntry,
} from '../ledger/index.ts';
import { fileResource } from '../resources/index.ts';
import { requireAdministering } from '../spaces/index.ts';
import {
  afterReversal,
  afterSettlement,
  cancelDecision,
  checkMint,
  expiryFor,
  pegOf,
  type RequestStatus,
  stillOpen,
  TOKEN_DECIMALS,
  tagLadder,
  visibleStatus,
} from './domain.ts';
import { fileLapses, fileOpenChanges, openChangeRiders } from './open-sums.ts';
import * as store from './store.ts';

export type RequestsDeps = { db: Db; clock: Clock; publicUrl: string };

export type MintInput = {
  spaceId: string;
  keyId: string | null;
  accountId: string;
  amount: AmountE8;
  currency: string | null;
  expiresAt: string | null;
  memo: string;
  resource: string;
  topUpFor?: { clientCreditId: string };
  /** The invoice this request pays (the invoice's public page mints it). */
  invoiceId?: string;
};

/** A stored amount in the records' spelling; most already are, and are returned as they are. */
function spelled(text: string): string {
  return isRecordSpelling(text) ? text : formatAmount(readAmount(text));
}

export function present(row: store.ShownRow, publicUrl: string, now: Date) {
  return {
    id: row.id,
    token: row.token,
    url: `${publicUrl}/pay/${row.token}`,
    amount: spelled(row.amount),
    amount_due: spelled(row.amount_due),
    currency: row.currency,
    status: visibleStatus(row.status, row.expires_at, now),
    created_at: row.created_at.toISOString(),
    amount_received: spelled(row.amount_received),
    expires_at: row.expires_at.toISOString(),
    memo: row.memo,
    resource_id: row.resource_id,
  };
}

export type PaymentRequestRecord = ReturnType<typeof present>;

/** Mints a request inside the caller's transaction (also used for charges' top-ups). */
export async function mintRequest(
  tx: Queryable,
  deps: Pick<RequestsDeps, 'clock' | 'publicUrl'>,
  input: MintInput,
): Promise<PaymentRequestRecord> {
  const account = await requireAccountFacts(tx, input.spaceId, input.accountId);
  const currency = (input.currency ?? account.currency).toUpperCase();
  const problem = checkMint(account, currency, input.amount);
  if (problem?.code === 'currency_mismatch')
    throw new AppError('currency_mismatch', problem.detail, { field: 'currency' });
  if (problem)
    throw new AppError('amount_not_accepted', problem.detail, { field: 'amount', ...problem.details });
  const now = deps.clock.now();
  const expiry = expiryFor(now, input.expiresAt);
  if (!expiry.ok) throw new AppError('invalid_request', expiry.detail, { field: 'expires_at' });
  const ask = await uniqueAsk(tx, input.spaceId, account, input.amount, now);
  const row = {
    id: randomUUID(),
    space_id: input.spaceId,
    token: randomSecret('pr_'),
    account_id: account.id,
    key_id: input.keyId,
    purpose: input.topUpFor ? ('top_up' as const) : ('sale' as const),
    client_credit_id: input.topUpFor?.clientCreditId ?? null,
    amount: formatAmount(input.amount),
    amount_due: formatAmount(ask.due),
    unique_ask: ask.unique,
    currency,
    status: 'active' as const,
    memo: input.memo,
    resource_id: await fileResource(tx, input.spaceId, input.resource, now),
    expires_at: expiry.at,
    created_at: now,
    invoice_id: input.invoiceId ?? null,
  };
  await store.insertRequest(tx, row);
  await fileOpenChanges(tx, [{ before: null, after: { ...row, amount_received: '0' } }]);
  return present({ ...row, amount_received: '0' }, deps.publicUrl, now);
}

/**
 * What a request on this account asks the payer to send: unique among the account's open
 * requests when the account is paid by direct transfers (crypto), so the watch can tell them
 * apart (declared by the unique index on open asks); the price itself elsewhere. The account
 * lock makes concurrent mints take turns.
 */
async function uniqueAsk(
  tx: Queryable,
  spaceId: string,
  account: AccountFacts,
  amount: AmountE8,
  now: Date,
): Promise<{ due: AmountE8; unique: boolean }> {
  const decimals = account.kind === 'crypto' ? TOKEN_DECIMALS[account.currency] : undefined;
  const ladder = tagLadder(amount, decimals);
  if (ladder === null) return { due: amount, unique: false };
  await store.lockAccountForMint(tx, spaceId, account.id);
  const asked = await store.firstFreeAsk(
    tx,
    account.id,
    { top: formatAmount(ladder.top), step: formatAmount(ladder.step), rungs: ladder.rungs },
    now,
  );
  if (asked === null)
    throw new AppError(
      'amount_not_accepted',
      'Every amount within one cent of this price is already asked for by an open request on this account; let some lapse or use another account.',
      { field: 'amount' },
    );
  await fileLapses(tx, await store.lapseAsk(tx, account.id, asked, now));
  return { due: readAmount(asked), unique: true };
}

export function parseAmount(value: number | string): AmountE8 {
  const parsed = parseAmountInput(value);
  assert(parsed.ok, 'The schema lets only valid amounts through.');
  return parsed.value;
}

async function findOwnByToken(db: Queryable, spaceId: string, token: string) {
  return hasSecretShape(token, 'pr_') ? store.findInSpaceByToken(db, spaceId, token) : undefined;
}

export async function getRequest(
  deps: RequestsDeps,
  spaceId: string,
  token: string,
): Promise<PaymentRequestRecord> {
  const row = await findOwnByToken(deps.db, spaceId, token);
  if (!row) throw new AppError('not_found', 'No payment request with this token in this space.');
  return present(row, deps.publicUrl, deps.clock.now());
}

/** One request of the space for its members, by token (app API and the mark-paid page). */
export async function getRequestInApp(deps: RequestsDeps, member: Member, token: string) {
  return getRequest(deps, spaceOfMember(member), token);
}

/** For pages and rails: any request by its public token. */
export function findRequestByToken(db: Queryable, token: string) {
  return store.findByToken(db, token);
}

export type Rail = store.SettlementRow['rail'];

export type SettleInput = {
  spaceId: string;
  requestId: string;
  amount: AmountE8;
  rail: Rail;
  reference: string;
  payer: string;
  at: Date;
  /** For chain rails: what the key webhook reports. */
  chain?: { asset: string; network: string; txHash: string };
  /**
   * The money has already moved (a transfer confirmed on chain for a request this rail had
   * claimed while it was active): it is booked even if the request lapsed or was paid meanwhile,
   * because refusing it would lose it. Such a request ends paid, possibly overpaid.
   */
  committed?: boolean;
  /** For direct chain transfers: which rule matched the transfer to this request. */
  matchedBy?: 'exact' | 'oldest_first';
  /**
   * The request as the caller read it. Given with the database handle itself (no transaction),
   * the settlement is one statement guarded on that state (see settleAsSeen); when the request
   * changed meanwhile, or carries an invoice, it is settled under the request's lock as usual.
   */
  seen?: store.RequestRow | undefined;
  /** The rail's own rows, written in the settlement's entry statement (not on a replay). */
  riders?: EntryRider[] | undefined;
};

export type SettleOutcome =
  | { ok: true; replayed: boolean; settlement: store.SettlementRow; request: store.RequestRow }
  | { ok: false; code: 'request_not_payable'; status: string };

async function postingsFor(
  tx: Queryable,
  request: store.RequestRow,
  account: AccountFacts,
  amount: AmountE8,
  at: Date,
): Promise<Posting[]> {
  const where = { spaceId: request.space_id, at };
  let counter: LedgerAccountSpec;
  if (request.purpose === 'top_up') {
    const creditId = request.client_credit_id;
    assert(creditId !== null, 'A top-up request always names its client credit.');
    const credit = await findClientCredit(tx, request.space_id, creditId);
    assert(credit, 'A top-up request always names its client credit.');
    counter = ledgerAccountSpecs.clientCredit({
      ...where,
      currency: request.currency,
      clientRef: credit.client_ref,
    });
  } else {
    counter = ledgerAccountSpecs.income({
      ...where,
      currency: request.currency,
      resourceId: request.resource_id,
    });
  }
  const specs = [
    ledgerAccountSpecs.asset({ ...where, currency: account.currency, accountId: account.id }),
    counter,
  ];
  const pegged = account.currency !== request.currency;
  // USDC received for a USD price: the peg clearing accounts bridge the two currencies 1:1,
  // so the entry balances in each currency on its own.
  if (pegged) {
    assert(pegOf(account.currency) === request.currency, 'Minting refuses currencies that do not fit.');
    const pair = `${account.currency}/${request.currency}`;
    specs.push(
      ledgerAccountSpecs.peg({ ...where, currency: account.currency, pair }),
      ledgerAccountSpecs.peg({ ...where, currency: request.currency, pair }),
    );
  }
  const [asset, income, pegHeld, pegOwed] = await ensureLedgerAccounts(tx, specs);
  const intoAsset = increase(defined(asset, 'the asset ledger account'), amount);
  const intoIncome = increase(defined(income, 'the counter ledger account'), amount);
  if (!pegged) return [intoAsset, intoIncome];
  return [
    intoAsset,
    decrease(defined(pegHeld, 'the held peg account'), amount),
    increase(defined(pegOwed, 'the owed peg account'), amount),
    intoIncome,
  ];
}

function eventsOf(
  request: store.RequestRow,
  account: AccountFacts,
  entryId: string,
  input: SettleInput,
): OutboxEvent[] {
  const scope = { spaceId: request.space_id, at: input.at };
  const events: OutboxEvent[] = [
    moneyIn(scope, {
      transaction_id: entryId,
      account_id: account.id,
      amount: input.amount,
      currency: account.currency,
      kind: 'income',
      origin: 'rail',
      occurred_on: utcDateOf(input.at),
    }),
  ];
  // Only a machine payer's authorization settled on chain by us is pushed on the key channel.
  if (input.rail === 'x402' && request.key_id !== null && input.chain) {
    events.push(
      paymentRequestPaid(
        { ...scope, keyId: request.key_id },
        {
          payment_request_id: request.id,
          token: request.token,
          resource_id: request.resource_id,
          amount: input.amount,
          asset: input.chain.asset,
          network: input.chain.network,
          tx_hash: input.chain.txHash,
          payer: input.payer,
          settled_at: input.at.toISOString(),
          memo: request.memo,
        },
      ),
    );
  }
  return events;
}

/** The settlement this reference already made (a retry, or a twin that committed first), answered as it was. */
async function earlierSettlement(
  tx: Queryable,
  request: store.RequestRow,
  input: SettleInput,
): Promise<SettleOutcome | undefined> {
  const existing = await store.findSettlement(tx, input.spaceId, input.rail, input.reference);
  if (!existing) return undefined;
  const settled =
    existing.payment_request_id === request.id
      ? request
      : await store.lockRequest(tx, input.spaceId, existing.payment_request_id);
  assert(settled, 'A settlement always names its request.');
  return { ok: true, replayed: true, settlement: existing, request: settled };
}
/**
 * The one settlement function every rail calls. Idempotent per (rail, reference): a retry
 * returns the first settlement. Books the ledger entry (filed under the endpoint, or crediting
 * the client for a top-up), moves the request's received amount and status, and writes the
 * events: inside the caller's transaction, or (given `seen` and no transaction) as one statement.
 */
export async function settlePaymentRequest(db: Queryable, input: SettleInput): Promise<SettleOutcome> {
  if (input.seen && !db.isTransaction && input.seen.invoice_id === null) {
    const settled = await settleAsSeen(db, input.seen, input);
    if (settled) return settled;
  }
  return inTransaction(db, (tx) => settleLocked(tx, input));
}

/** What a settlement writes, computed from the request it applies to. */
async function settlementPlan(tx: Queryable, request: store.RequestRow, input: SettleInput) {
  const settlementId = randomUUID();
  const entryId = randomUUID();
  const account = await requireAccountFacts(tx, request.space_id, request.account_id);
  const draft: EntryDraft = {
    id: entryId,
    spaceId: request.space_id,
    origin: 'rail',
    kind: 'income',
    occurredOn: utcDateOf(input.at),
    causeType: 'settlement',
    causeId: settlementId,
    counterparty: input.payer,
    memo: request.memo,
    postings: await postingsFor(tx, request, account, input.amount, input.at),
  };
  const settlement: store.SettlementRow = {
    id: settlementId,
    space_id: request.space_id,
    payment_request_id: request.id,
    rail: input.rail,
    reference: input.reference,
    amount: formatAmount(input.amount),
    currency: request.currency,
    payer: input.payer,
    entry_id: entryId,
    settled_at: input.at,
    matched_by: input.matchedBy ?? null,
  };
  const next = afterSettlement(
    readAmount(request.amount_due),
    readAmount(request.amount_received),
    input.amount,
  );
  const receipt: store.Receipt = {
    received: formatAmount(next.received),
    status: next.status,
    paidAt: request.paid_at ?? (next.status === 'paid' ? input.at : null),
  };
  const after = {
    ...request,
    amount_received: receipt.received,
    status: receipt.status,
    paid_at: receipt.paidAt,
  };
  const riders = [
    store.settlementRider(settlement),
    eventsRider(eventsOf(request, account, entryId, input)),
    ...(input.riders ?? []),
    ...openChangeRiders({ before: request, after }),
  ];
  return { account, draft, settlement, receipt, riders, after, nextStatus: next.status };
}

/**
 * A settlement in one statement, with no transaction: the request moves from the state the
 * caller read (`seen`) to the next one, and only then the balance, the entry with its postings,
 * the settlement row, the events and the rail's riders are written. Answers undefined, having
 * written nothing, when the request is no longer in that state or this reference was settled
 * already: the caller then settles under the request's lock, which answers a replay as it was.
 */
async function settleAsSeen(
  db: Queryable,
  seen: store.RequestRow,
  input: SettleInput,
): Promise<SettleOutcome | undefined> {
  assert(
    seen.id === input.requestId && seen.space_id === input.spaceId,
    'The seen request is the one settled',
  );
  const status = visibleStatus(seen.status, seen.expires_at, input.at);
  if (status !== 'active' && !input.committed) return undefined;
  const plan = await settlementPlan(db, seen, input);
  try {
    const condition = store.receiptIfUnchanged(seen, plan.receipt);
    const posted = await postEntryIf(db, condition, plan.draft, input.at, plan.riders);
    if (!posted.ok) return undefined;
  } catch (error) {
    // A twin of this reference committed first, on a request in the state we saw: nothing of this
    // statement was written, and the locked path answers the twin's settlement.
    if (String((error as { code?: unknown }).code) === UNIQUE_VIOLATION) return undefined;
    throw error;
  }
  return { ok: true, replayed: false, settlement: plan.settlement, request: plan.after };
}

const UNIQUE_VIOLATION = '23505';

/** A settlement under the request's row lock, in the caller's transaction. */
async function settleLocked(tx: Queryable, input: SettleInput): Promise<SettleOutcome> {
  // The request's row lock serializes settlements of one request; under it, a settlement with
  // this reference (a retry, or a concurrent twin that committed first) is answered as it was.
  const request = await store.lockRequest(tx, input.spaceId, input.requestId);
  assert(request, `No payment request ${input.requestId}`);
  const replayed = await earlierSettlement(tx, request, input);
  if (replayed) return replayed;
  const status = visibleStatus(request.status, request.expires_at, input.at);
  if (status !== 'active' && !input.committed) return { ok: false, code: 'request_not_payable', status };
  const plan = await settlementPlan(tx, request, input);
  const riders = [...plan.riders, store.receiptRider(request.id, plan.receipt)];
  const posted = await postEntry(tx, plan.draft, input.at, riders);
  assert(posted.ok, 'A settlement only adds to balances, so no guard can refuse it.');
  const settled = {
    accountId: plan.account.id,
    settlementId: plan.settlement.id,
    entryId: posted.entryId,
    nextStatus: plan.nextStatus,
  };
  if (request.invoice_id) await payInvoice(tx, request, { ...settled, invoiceId: request.invoice_id }, input);
  return { ok: true, replayed: false, settlement: plan.settlement, request: plan.after };
}

/**
 * The invoice a request was minted for receives what the settlement brought; when that paid the
 * request in full by its tagged amount, the tag the invoice still lacks is given as a discount.
 */
async function payInvoice(
  tx: Queryable,
  request: store.RequestRow,
  settled: {
    invoiceId: string;
    accountId: string;
    settlementId: string;
    entryId: string;
    nextStatus: RequestStatus;
  },
  input: SettleInput,
) {
  const { invoiceId, accountId, settlementId, nextStatus } = settled;
  const via = input.rail === 'card' ? 'card' : 'settlement';
  const stillOpen = await applyInvoiceSettlement(tx, {
    spaceId: request.space_id,
    invoiceId,
    accountId,
    amount: input.amount,
    via,
    entryId: settled.entryId,
    reference: `${input.rail}:${input.reference}`,
    at: input.at,
  });
  const discount = tagDiscount(request, nextStatus, stillOpen);
  if (discount !== null) {
    const entryId = await bookTagDiscount(tx, request, settlementId, discount, input);
    await applyInvoiceDiscount(tx, {
      spaceId: request.space_id,
      invoiceId,
      accountId,
      amount: discount,
      via,
      entryId,
      note: `Settlement discount: the request asked ${formatAmount(readAmount(request.amount_due))} of ${formatAmount(readAmount(request.amount))} (${input.rail}:${input.reference})`,
      at: input.at,
    });
  }
}

/**
 * What an invoice still lacks when its request has just been paid in full by the amount it asked
 * (issue 22): the request asked for its price lowered by a tag under one cent, so the invoice is
 * left open by at most that tag, which is then given as a discount. Null when there is nothing
 * to give: the request is not newly paid, it carried no tag, the invoice takes no payments or is
 * closed already, or it lacks more than the tag (another road changed it; it stays open).
 */
function tagDiscount(
  request: store.RequestRow,
  nextStatus: RequestStatus,
  stillOpen: AmountE8 | null,
): AmountE8 | null {
  if (request.status === 'paid' || nextStatus !== 'paid' || stillOpen === null || stillOpen <= 0n)
    return null;
  const tag = readAmount(request.amount) - readAmount(request.amount_due);
  return stillOpen <= tag ? stillOpen : null;
}

/**
 * The tag given as a discount, in the settlement's transaction: the request's income (or
 * "general") rises by it, to the whole price the invoice asked, and the expense
 * `settlement_discount` rises by the same, both in the request's currency. No money moves: the
 * account holds exactly what arrived.
 */
async function bookTagDiscount(
  tx: Queryable,
  request: store.RequestRow,
  settlementId: string,
  amount: AmountE8,
  input: SettleInput,
): Promise<string> {
  const where = { spaceId: request.space_id, at: input.at, currency: request.currency };
  const [expense, income] = await ensureLedgerAccounts(tx, [
    ledgerAccountSpecs.expense({ ...where, ref: 'settlement_discount' }),
    ledgerAccountSpecs.income({ ...where, resourceId: request.resource_id }),
  ]);
  const posted = await postEntry(
    tx,
    {
      spaceId: request.space_id,
      origin: 'rail',
      kind: 'expense',
      occurredOn: utcDateOf(input.at),
      causeType: 'settlement_discount',
      causeId: settlementId,
      counterparty: input.payer,
      memo: `Settlement discount on ${request.memo}`.slice(0, 500),
      postings: [increase(expense, amount), increase(income, amount)],
    },
    input.at,
  );
  assert(posted.ok, 'A discount only adds to balances that have no floor.');
  return posted.entryId;
}

/** The invoice's request that can still take money, if any. */
export function activeRequestForInvoice(db: Queryable, spaceId: string, invoiceId: string, now: Date) {
  return store.activeForInvoice(db, spaceId, invoiceId, now);
}

/**
 * The open top-up request of a client credit on an account, if any: a refused charge reuses it
 * rather than minting another request on the same address.
 */
export function openTopUpRequest(
  db: Queryable,
  spaceId: string,
  clientCreditId: string,
  accountId: string,
  now: Date,
) {
  return store.openTopUp(db, spaceId, clientCreditId, accountId, now);
}

/** A watched account's requests that can still take money, oldest first. */
export function activeRequestsForAccount(db: Queryable, spaceId: string, accountId: string, now: Date) {
  return store.activeForAccount(db, spaceId, accountId, now);
}

/**
 * Undoes the settlements of one chain transfer (rail, and the reference it was booked under or
 * its per-request children) after a reorganisation: the ledger entry is reversed by new postings
 * dated like the original where the period is open (else today), the request's received amount
 * shrinks and it is active again if it is still in time (cancelled otherwise). Answers what was
 * undone; a settlement already undone is left alone.
 */
export async function reverseChainSettlements(
  tx: Queryable,
  input: { spaceId: string; rail: Rail; reference: string; at: Date },
) {
  const undone: { requestId: string; amount: string }[] = [];
  for (const settlement of await store.settlementsByPrefix(tx, input.spaceId, input.rail, input.reference)) {
    const request = await store.lockRequest(tx, input.spaceId, settlement.payment_request_id);
    assert(request, 'A settlement always names its request.');
    const memo = 'Chain reorganisation: the transfer is no longer on the chain';
    const sameDay = utcDateOf(settlement.settled_at);
    let reversed = await reverseEntry(tx, input.spaceId, settlement.entry_id, input.at, sameDay, memo);
    if (!reversed.ok) {
      const today = utcDateOf(input.at);
      reversed = await reverseEntry(tx, input.spaceId, settlement.entry_id, input.at, today, memo);
    }
    assert(reversed.ok, 'Reversing an income entry only lowers balances that have no floor.');
    const next = afterReversal(
      readAmount(request.amount_due),
      readAmount(request.amount_received),
      readAmount(settlement.amount),
      request.expires_at,
      input.at,
    );
    const paidAt = next.status === 'paid' ? request.paid_at : null;
    const received = formatAmount(next.received);
    await store.recordReceipt(tx, request.id, received, next.status, paidAt);
    await fileOpenChanges(tx, [
      { before: request, after: { ...request, amount_received: received, status: next.status } },
    ]);
    await store.markSettlementReversed(tx, settlement.id, input.at);
    if (request.invoice_id)
      await recordInvoiceShortfall(tx, input.spaceId, request.invoice_id, readAmount(settlement.amount));
    undone.push({ requestId: request.id, amount: settlement.amount });
  }
  return undone;
}

/**
 * A provider gave back part or all of a settlement's money to the payer (a card refund): new
 * postings take the refunded amount back out of the account and the income (or the client's
 * prepaid credit) it went to; the settlement and the request stay as they were, since the sale
 * did happen. Credit the client has already spent cannot be taken back from them, so that
 * refund is booked as an expense instead. An invoice the money paid keeps its status; the gap
 * is recorded, as for a chain reorganisation. The caller makes each refund happen once.
 */
export async function refundSettlement(
  tx: Queryable,
  input: { spaceId: string; rail: Rail; reference: string; amount: AmountE8; at: Date; memo: string },
): Promise<{ entryId: string; settlementId: string }> {
  const settlement = await store.findSettlement(tx, input.spaceId, input.rail, input.reference);
  assert(settlement, `No ${input.rail} settlement ${input.reference}`);
  const request = await store.lockRequest(tx, input.spaceId, settlement.payment_request_id);
  assert(request, 'A settlement always names its request.');
  const account = await requireAccountFacts(tx, request.space_id, request.account_id);
  const draft = {
    spaceId: request.space_id,
    origin: 'rail' as const,
    kind: 'income' as const,
    occurredOn: utcDateOf(input.at),
    causeType: 'refund',
    causeId: settlement.id,
    counterparty: settlement.payer,
    memo: input.memo,
  };
  const taken = (await postingsFor(tx, request, account, input.amount, input.at)).map((posting) => ({
    account: posting.account,
    amount: asAmount(-posting.amount),
  }));
  const given = await postEntry(tx, { ...draft, postings: taken }, input.at);
  let posted: typeof given & { kind: EntryKind } = { ...given, kind: 'income' };
  if (!posted.ok) {
    const where = { spaceId: request.space_id, at: input.at };
    const [asset, expense] = await ensureLedgerAccounts(tx, [
      ledgerAccountSpecs.asset({ ...where, currency: account.currency, accountId: account.id }),
      ledgerAccountSpecs.expense({ ...where, currency: account.currency, ref: `refund:${input.rail}` }),
    ]);
    const postings = [decrease(asset, input.amount), increase(expense, input.amount)];
    posted = { ...(await postEntry(tx, { ...draft, kind: 'expense', postings }, input.at)), kind: 'expense' };
  }
  assert(posted.ok, 'A refund lowers only balances that have no floor.');
  await enqueueEvents(tx, [
    moneyOut(
      { spaceId: request.space_id, at: input.at },
      {
        transaction_id: posted.entryId,
        account_id: account.id,
        amount: input.amount,
        currency: account.currency,
        // The entry's kind: income given back, or (credit already spent) an expense.
        kind: posted.kind,
        origin: 'rail',
        occurred_on: draft.occurredOn,
      },
    ),
  ]);
  if (request.invoice_id) await recordInvoiceShortfall(tx, input.spaceId, request.invoice_id, input.amount);
  return { entryId: posted.entryId, settlementId: settlement.id };
}

/**
 * What a direct transfer must still bring to close a request: the amount it asks for (the price,
 * lowered by the tag that tells it apart from the account's other open requests), less what it
 * has received. The account watch and the wallet transfer on the pay page use it.
 */
export function openAmount(request: store.RequestRow): AmountE8 {
  return stillOpen(readAmount(request.amount_due), readAmount(request.amount_received));
}

/**
 * What a rail that names the request it pays (a card, an x402 authorization) still takes: the
 * price, less what has been received. Such a payment needs no tag to be told apart, so the payer
 * pays, and the seller receives, the price in full.
 */
export function openPrice(request: store.RequestRow): AmountE8 {
  const open = readAmount(request.amount) - readAmount(request.amount_received);
  return (open > 0n ? open : 0n) as AmountE8;
}

/** Bank transfer settled by hand by an owner or admin (the development and small-office rail). */
export async function markPaid(
  deps: RequestsDeps,
  member: Member,
  token: string,
  input: { amount: number | string; reference: string; payer?: string },
) {
  const spaceId = spaceOfMember(member);
  requireAdministering(member);
  const row = await findOwnByToken(deps.db, spaceId, token);
  if (!row) throw new AppError('not_found', 'No payment request with this token in this space.');
  const outcome = await deps.db.transaction().execute((tx) =>
    settlePaymentRequest(tx, {
      spaceId,
      requestId: row.id,
      amount: parseAmount(input.amount),
      rail: 'bank',
      reference: input.reference,
      payer: input.payer ?? '',
      at: deps.clock.now(),
    }),
  );
  if (!outcome.ok)
    throw new AppError(
      'request_not_payable',
      `This payment request is ${outcome.status}; it takes no more payments.`,
      { status: outcome.status },
    );
  return present(outcome.request, deps.publicUrl, deps.clock.now());
}

/**
 * Cancels a request of the space: under its row lock (where settlements queue too), an active
 * request lapses now; a cancelled one is answered as it is; a paid one is 409 `conflict`. Whoever
 * takes the lock first wins: a settlement after the cancel finds the request not payable, a
 * cancel after a settlement that paid it in full is refused.
 */
export async function cancelRequest(
  deps: RequestsDeps,
  spaceId: string,
  token: string,
): Promise<PaymentRequestRecord> {
  const row = await findOwnByToken(deps.db, spaceId, token);
  if (!row) throw new AppError('not_found', 'No payment request with this token in this space.');
  const after = await inTransaction(deps.db, async (tx) => {
    const locked = await store.lockRequest(tx, spaceId, row.id);
    assert(locked, 'A request is never deleted.');
    const now = deps.clock.now();
    const decision = cancelDecision(visibleStatus(locked.status, locked.expires_at, now));
    if (decision === 'refuse_paid')
      throw new AppError('conflict', 'This payment request is paid; a paid request cannot be cancelled.', {
        status: 'paid',
      });
    if (decision !== 'lapse_now') return locked;
    const lapsed = await store.lapseNow(tx, spaceId, locked.id, now);
    await fileOpenChanges(tx, [{ before: locked, after: lapsed }]);
    return lapsed;
  });
  return present(after, deps.publicUrl, deps.clock.now());
}

/** The app's Cancel: owners and admins, as for marking a request paid. */
export function cancelRequestInApp(deps: RequestsDeps, member: Member, token: string) {
  requireAdministering(member);
  return cancelRequest(deps, spaceOfMember(member), token);
}

/**
 * Job: lapsed requests become cancelled (readers already see them so), a batch a transaction,
 * until a batch comes back short; answers how many lapsed.
 */
export function lapseRequests(deps: { db: Db; clock: Clock }, batchSize = 500): Promise<number> {
  return untilShort(batchSize, (size) =>
    inTransaction(deps.db, async (tx) => {
      const rows = await store.lapseDue(tx, deps.clock.now(), size);
      await fileLapses(tx, rows);
      return rows.length;
    }),
  );
}

/** A space's payment requests for its members, newest first, 50 a page (app API and page). */
export async function listRequests(
  deps: RequestsDeps,
  member: Member,
  query: { status?: 'active' | 'paid' | 'cancelled' | undefined; cursor?: string | undefined },
) {
  const spaceId = spaceOfMember(member);
  const before = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  if (query.cursor !== undefined && before === undefined) {
    throw new AppError('invalid_request', 'The cursor is not one this list gave out.', { field: 'cursor' });
  }
  const now = deps.clock.now();
  const rows = await store.listRequests(deps.db, spaceId, {
    status: query.status,
    before,
    now,
    limit: PAGE_SIZE + 1,
  });
  const page = pageOf(rows, (row) => ({ at: row.created_at, id: row.id }));
  return { items: page.items.map((row) => present(row, deps.publicUrl, now)), next_cursor: page.next_cursor };
}
