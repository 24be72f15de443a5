import { randomUUID } from 'node:crypto';
import { defined } from '../../core/assert.ts';
import { utcDateOf } from '../../core/day.ts';
import { AppError } from '../../core/errors.ts';
import { type AmountE8, formatAmount } from '../../core/money.ts';
import { type MoneyMove, moneyIn, moneyOut } from '../../platform/outbox/events.ts';
import { enqueueEvents } from '../../platform/outbox/outbox.ts';
import { requireAccount } from '../accounts/index.ts';
import { decrease, ensureLedgerAccounts, increase, ledgerAccountSpecs, postEntry } from '../ledger/index.ts';
import { closedThrough, inClosedPeriod, requireAdministrator } from '../spaces/index.ts';
import { payingSide } from './execution.ts';
import type { PayoutsDeps } from './service.ts';

// Moves between the book's own accounts: one entry, money.out from one and money.in to the
// other, both with origin internal and kind transfer. Across currencies both amounts are given
// and a clearing account per currency carries the difference, so the entry balances in each.

export type TransferInput = {
  from_account_id: string;
  to_account_id: string;
  amount: AmountE8;
  to_amount?: AmountE8 | undefined;
  occurred_on?: string | undefined;
  note?: string | undefined;
};

function refuse(field: string, detail: string): never {
  throw new AppError('invalid_request', detail, { field });
}

async function accountsOf(tx: Parameters<typeof requireAccount>[0], spaceId: string, input: TransferInput) {
  if (input.from_account_id === input.to_account_id) {
    refuse('to_account_id', 'A transfer moves money between two different accounts.');
  }
  const from = await requireAccount(tx, spaceId, input.from_account_id);
  const to = await requireAccount(tx, spaceId, input.to_account_id);
  const crosses = from.currency !== to.currency;
  if (crosses && input.to_amount === undefined) {
    throw new AppError(
      'currency_mismatch',
      `The accounts hold ${from.currency} and ${to.currency}; give to_amount, what arrives in ${to.currency}.`,
      { field: 'to_amount' },
    );
  }
  if (!crosses && input.to_amount !== undefined && input.to_amount !== input.amount) {
    refuse('to_amount', 'Between accounts of one currency, to_amount (if given) equals amount.');
  }
  return {
    from,
    to,
    toAmount: crosses ? defined(input.to_amount, 'to_amount between currencies') : input.amount,
  };
}

async function postingsOf(
  tx: Parameters<typeof requireAccount>[0],
  spaceId: string,
  moved: Awaited<ReturnType<typeof accountsOf>>,
  amount: AmountE8,
  at: Date,
) {
  const where = { spaceId, at };
  const specs = [
    ledgerAccountSpecs.asset({ ...where, currency: moved.from.currency, accountId: moved.from.id }),
    ledgerAccountSpecs.asset({ ...where, currency: moved.to.currency, accountId: moved.to.id }),
  ];
  const crosses = moved.from.currency !== moved.to.currency;
  if (crosses) {
    const pair = `fx:${moved.from.currency}/${moved.to.currency}`;
    const clearing = (currency: string) => ({
      ...where,
      currency,
      kind: 'clearing' as const,
      ref: pair,
      normalSide: 'debit' as const,
      tracksBalance: false,
      noOverdraft: false,
    });
    specs.push(clearing(moved.from.currency), clearing(moved.to.currency));
  }
  const [fromAsset, toAsset, fromClearing, toClearing] = await ensureLedgerAccounts(tx, specs);
  const postings = [
    decrease(payingSide(moved.from, defined(fromAsset, 'the paying asset')), amount),
    increase(defined(toAsset, 'the receiving asset'), moved.toAmount),
  ];
  if (crosses) {
    postings.push(
      increase(defined(fromClearing, 'the paying clearing account'), amount),
      decrease(defined(toClearing, 'the receiving clearing account'), moved.toAmount),
    );
  }
  return postings;
}

async function emitTransfer(
  tx: Parameters<typeof requireAccount>[0],
  done: {
    spaceId: string;
    at: Date;
    entryId: string;
    occurredOn: string;
    moved: Awaited<ReturnType<typeof accountsOf>>;
    amount: AmountE8;
  },
) {
  const { spaceId, at, moved } = done;
  const side = (accountId: string, amount: AmountE8, currency: string): MoneyMove => ({
    transaction_id: done.entryId,
    account_id: accountId,
    amount,
    currency,
    kind: 'transfer',
    origin: 'internal',
    occurred_on: done.occurredOn,
  });
  const scope = { spaceId, at };
  await enqueueEvents(tx, [
    moneyOut(scope, side(moved.from.id, done.amount, moved.from.currency)),
    moneyIn(scope, side(moved.to.id, moved.toAmount, moved.to.currency)),
  ]);
}

export async function createTransfer(
  deps: PayoutsDeps,
  userId: string,
  spaceId: string,
  input: TransferInput,
) {
  await requireAdministrator(deps.db, spaceId, userId);
  return deps.db.transaction().execute(async (tx) => {
    const moved = await accountsOf(tx, spaceId, input);
    const at = deps.clock.now();
    const occurredOn = input.occurred_on ?? utcDateOf(at);
    const closed = await closedThrough(tx, spaceId);
    if (inClosedPeriod(occurredOn, closed)) {
      throw new AppError(
        'period_closed',
        `The books are closed through ${closed}; date the transfer later.`,
        {
          field: 'occurred_on',
          closed_through: closed,
        },
      );
    }
    const posted = await postEntry(
      tx,
      {
        spaceId,
        origin: 'internal',
        kind: 'transfer',
        occurredOn,
        causeType: 'transfer',
        causeId: randomUUID(),
        memo: input.note ?? '',
        postings: await postingsOf(tx, spaceId, moved, input.amount, at),
      },
      at,
    );
    if (!posted.ok) {
      throw new AppError('insufficient_balance', 'The account does not hold enough for this transfer.', {
        account_id: moved.from.id,
      });
    }
    await emitTransfer(tx, { spaceId, at, entryId: posted.entryId, occurredOn, moved, amount: input.amount });
    return {
      transaction_id: posted.entryId,
      from_account_id: moved.from.id,
      to_account_id: moved.to.id,
      amount: formatAmount(input.amount),
      currency: moved.from.currency,
      to_amount: formatAmount(moved.toAmount),
      to_currency: moved.to.currency,
      occurred_on: occurredOn,
      note: input.note ?? '',
    };
  });
}
