import { randomUUID } from 'node:crypto';
import { assert } from '../../core/assert.ts';
import { utcDateOf } from '../../core/day.ts';
import { AppError } from '../../core/errors.ts';
import { type AmountE8, asAmount, formatAmount, parseAmountInput } from '../../core/money.ts';
import type { Queryable } from '../../platform/db/database.ts';
import { invoicePaidOnBook, invoicePaidOnKey, moneyIn } from '../../platform/outbox/events.ts';
import { enqueueEvent } from '../../platform/outbox/outbox.ts';
import { requireAccount } from '../accounts/index.ts';
import { increase, ledgerAccounts, postEntry, readAmount } from '../ledger/index.ts';
import { requireAdministrator } from '../spaces/index.ts';
import { afterPayment, allows, openAmountOf, type PaymentOutcome } from './domain.ts';
import { type InvoicesDeps, ownInvoice, refuseMove, today } from './lifecycle.ts';
import { presentWithPayments } from './presentation.ts';
import type { PaymentBody } from './schemas.ts';
import * as store from './store.ts';

// Money against an invoice: payments recorded by hand, settlements of its payment requests,
// early-payment discounts, shortfalls after a reorganisation, write-offs; invoice.paid once.

function parseAmount(value: number | string): AmountE8 {
  const parsed = parseAmountInput(value);
  assert(parsed.ok, 'The schema lets only valid amounts through.');
  return parsed.value;
}

async function bookPayment(
  tx: Queryable,
  row: store.InvoiceRow,
  payment: { id: string; accountId: string; amount: AmountE8; occurredOn: string; at: Date },
) {
  // Cash basis: a mirrored invoice's system of record is elsewhere, so the book records income
  // when money lands (the account's asset against income), not a receivable at issue.
  const where = { spaceId: row.space_id, currency: row.currency, at: payment.at };
  const asset = await ledgerAccounts.asset(tx, { ...where, accountId: payment.accountId });
  const income = await ledgerAccounts.income(tx, { ...where, resourceId: null });
  const posted = await postEntry(
    tx,
    {
      spaceId: row.space_id,
      origin: 'manual',
      kind: 'income',
      occurredOn: payment.occurredOn,
      causeType: 'invoice_payment',
      causeId: payment.id,
      counterparty: row.client_name,
      memo: `Invoice ${row.number}`,
      postings: [increase(asset, payment.amount), increase(income, payment.amount)],
    },
    payment.at,
  );
  assert(posted.ok, 'A payment only adds to balances, so no guard can refuse it.');
  return posted.entryId;
}

/** invoice.paid on both channels; the caller holds the invoice's row lock and sets paid_event_at. */
async function emitPaid(
  tx: Queryable,
  row: store.InvoiceRow,
  paid: AmountE8,
  via: InvoicePaymentDraft['via'],
  at: Date,
) {
  const scope = { spaceId: row.space_id, at };
  const invoice = { invoice_id: row.id, number: row.number, currency: row.currency };
  if (row.key_id !== null) {
    const total = readAmount(row.total);
    await enqueueEvent(
      tx,
      invoicePaidOnKey({ ...scope, keyId: row.key_id }, { ...invoice, total, total_paid: paid, via }),
    );
  }
  await enqueueEvent(tx, invoicePaidOnBook(scope, { ...invoice, amount: paid }));
}

type InvoicePaymentDraft = {
  /** The payment row's id, when a ledger entry already names it as its cause. */
  id?: string;
  accountId: string;
  amount: AmountE8;
  via: 'manual' | 'settlement' | 'card' | 'write_off';
  note: string;
  occurredOn: string;
  txId: string | null;
  entryId: string | null;
  at: Date;
  /** The road invoice.paid names when this row closes the invoice, if not its own `via`. */
  announceVia?: 'settlement' | 'card';
};

/**
 * The one road every payment of an invoice takes, on its locked row: the payment row, the new
 * status and paid amount, and invoice.paid written once, by the payment that closes it. A
 * write-off is not money paid, so it does not move `last_paid_on`.
 */
async function applyPayment(
  tx: Queryable,
  row: store.InvoiceRow,
  outcome: Extract<PaymentOutcome, { ok: true }>,
  payment: InvoicePaymentDraft,
) {
  await store.insertPayment(tx, {
    id: payment.id ?? randomUUID(),
    space_id: row.space_id,
    invoice_id: row.id,
    account_id: payment.accountId,
    amount: formatAmount(payment.amount),
    currency: row.currency,
    via: payment.via,
    note: payment.note,
    occurred_on: payment.occurredOn,
    tx_id: payment.txId,
    entry_id: payment.entryId,
    created_at: payment.at,
  });
  const announce = outcome.closes && row.paid_event_at === null;
  const moved =
    payment.via !== 'write_off' && (row.last_paid_on === null || row.last_paid_on < payment.occurredOn);
  const updated = await store.updateInvoice(tx, row.space_id, row.id, {
    status: outcome.status,
    paid_amount: formatAmount(outcome.paid),
    ...(moved ? { last_paid_on: payment.occurredOn } : {}),
    ...(announce ? { paid_event_at: payment.at } : {}),
    updated_at: payment.at,
  });
  if (announce) await emitPaid(tx, updated, outcome.paid, payment.announceVia ?? payment.via, payment.at);
  return updated;
}

/** POST .../payments: a hand-recorded payment against a sent or partial invoice. */
export async function recordPayment(
  tx: Queryable,
  deps: InvoicesDeps,
  spaceId: string,
  id: string,
  body: PaymentBody,
) {
  // The row lock makes concurrent payments on one invoice run one after another, so only the
  // one that reaches the total sees an open invoice close, and invoice.paid is written once.
  const row = await ownInvoice(tx, spaceId, id, true);
  refuseMove('pay', row);
  const amount = parseAmount(body.amount);
  const outcome = afterPayment(
    readAmount(row.total),
    readAmount(row.credited_amount),
    readAmount(row.paid_amount),
    amount,
  );
  if (!outcome.ok)
    throw new AppError(
      'amount_not_accepted',
      'The payment is larger than the amount still open on the invoice.',
      {
        field: 'amount',
        reason: 'overpayment',
        open: formatAmount(outcome.open),
      },
    );
  const account = await requireAccount(tx, spaceId, body.account_id ?? row.account_id);
  if (account.currency.toUpperCase() !== row.currency)
    throw new AppError(
      'currency_mismatch',
      `The account holds ${account.currency}; the invoice is in ${row.currency}.`,
      {
        field: 'account_id',
      },
    );
  const at = deps.clock.now();
  const payment = {
    id: randomUUID(),
    accountId: account.id,
    amount,
    occurredOn: body.occurred_on ?? today(deps.clock),
    at,
  };
  const entryId = await bookPayment(tx, row, payment);
  await enqueueEvent(
    tx,
    moneyIn(
      { spaceId: row.space_id, at },
      {
        transaction_id: entryId,
        account_id: account.id,
        amount,
        currency: row.currency,
        kind: 'income',
        origin: 'manual',
        occurred_on: payment.occurredOn,
      },
    ),
  );
  const updated = await applyPayment(tx, row, outcome, {
    id: payment.id,
    accountId: account.id,
    amount,
    via: 'manual',
    note: body.note ?? '',
    occurredOn: payment.occurredOn,
    txId: body.tx_id ?? null,
    entryId,
    at,
  });
  return presentWithPayments(tx, updated, deps.publicUrl, today(deps.clock));
}

/**
 * A payment request minted for the invoice settled (card, chain, x402, bank): the payment is
 * recorded against the invoice, which moves to partial or paid, with invoice.paid once. The
 * settlement has booked the money already (its entry is referenced, not booked again). An
 * invoice that no longer takes payments (void, or paid by another road meanwhile) is left alone:
 * the money stays booked as the request's income. More than is open closes the invoice; the
 * excess is the request's, not the invoice's. Answers what is still open on the invoice
 * afterwards (null when it takes no payments).
 */
export async function applyInvoiceSettlement(
  tx: Queryable,
  input: {
    spaceId: string;
    invoiceId: string;
    accountId: string;
    amount: AmountE8;
    via: 'card' | 'settlement';
    entryId: string;
    reference: string;
    at: Date;
  },
): Promise<AmountE8 | null> {
  const row = await store.lockInvoice(tx, input.spaceId, input.invoiceId);
  if (!row || !allows('pay', row.status)) return null;
  const open = openAmountOf(row);
  const applied = input.amount < open ? input.amount : open;
  if (applied <= 0n) return open;
  const outcome = afterPayment(
    readAmount(row.total),
    readAmount(row.credited_amount),
    readAmount(row.paid_amount),
    applied,
  );
  assert(outcome.ok, 'The applied amount is at most what is open.');
  await applyPayment(tx, row, outcome, {
    accountId: input.accountId,
    amount: applied,
    via: input.via,
    note: input.reference.slice(0, 500),
    occurredOn: utcDateOf(input.at),
    txId: null,
    entryId: input.entryId,
    at: input.at,
  });
  return asAmount(open - applied);
}

/**
 * The rest of an invoice, at most the tag (under one cent) its request was lowered by, given as
 * a settlement discount once that request was paid in full (issue 22): a `write_off` payment row
 * that names the discount's ledger entry, so the invoice closes and invoice.paid fires once,
 * naming the road the money came by.
 */
export async function applyInvoiceDiscount(
  tx: Queryable,
  input: {
    spaceId: string;
    invoiceId: string;
    accountId: string;
    amount: AmountE8;
    via: 'card' | 'settlement';
    entryId: string;
    note: string;
    at: Date;
  },
) {
  const row = await store.lockInvoice(tx, input.spaceId, input.invoiceId);
  assert(row && allows('pay', row.status), 'The invoice took the settlement just now.');
  const outcome = afterPayment(
    readAmount(row.total),
    readAmount(row.credited_amount),
    readAmount(row.paid_amount),
    input.amount,
  );
  assert(outcome.ok && outcome.closes, 'The discount is exactly what is open.');
  await applyPayment(tx, row, outcome, {
    accountId: input.accountId,
    amount: input.amount,
    via: 'write_off',
    note: input.note.slice(0, 500),
    occurredOn: utcDateOf(input.at),
    txId: null,
    entryId: input.entryId,
    at: input.at,
    announceVia: input.via,
  });
}

/** A reorganisation took back money that paid the invoice: it stays as it is, the gap is recorded. */
export async function recordInvoiceShortfall(
  tx: Queryable,
  spaceId: string,
  invoiceId: string,
  amount: AmountE8,
) {
  const row = await store.lockInvoice(tx, spaceId, invoiceId);
  if (!row) return;
  await store.updateInvoice(tx, spaceId, invoiceId, {
    shortfall_amount: formatAmount(asAmount(readAmount(row.shortfall_amount) + amount)),
  });
}

/**
 * Writes off what is still open on a sent or partial invoice (owners and admins, from the app):
 * a payment row `via: write_off` with no ledger entry (the book records income only when money
 * lands, so nothing was booked to undo), the invoice closes, and invoice.paid fires once.
 */
export async function writeOffInvoice(
  deps: InvoicesDeps,
  userId: string,
  spaceId: string,
  id: string,
  reason: string,
) {
  await requireAdministrator(deps.db, spaceId, userId);
  return deps.db.transaction().execute(async (tx) => {
    const row = await ownInvoice(tx, spaceId, id, true);
    refuseMove('pay', row);
    const open = openAmountOf(row);
    const outcome = afterPayment(
      readAmount(row.total),
      readAmount(row.credited_amount),
      readAmount(row.paid_amount),
      open,
    );
    assert(outcome.ok && outcome.closes, 'Writing off what is open always closes the invoice.');
    const at = deps.clock.now();
    const occurredOn = today(deps.clock);
    const updated = await applyPayment(tx, row, outcome, {
      accountId: row.account_id,
      amount: open,
      via: 'write_off',
      note: reason,
      occurredOn,
      txId: null,
      entryId: null,
      at,
    });
    return presentWithPayments(tx, updated, deps.publicUrl, occurredOn);
  });
}
