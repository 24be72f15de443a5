import { randomUUID } from 'node:crypto';
import { defined } from '../../core/assert.ts';
import type { Clock } from '../../core/clock.ts';
import { utcDateOf } from '../../core/day.ts';
import { AppError } from '../../core/errors.ts';
import { type AmountE8, formatAmount } from '../../core/money.ts';
import { inTransaction, type Queryable, type Tx } from '../../platform/db/database.ts';
import type { IntegrationCaller } from '../../platform/http/context.ts';
import { requireAccountFacts } from '../accounts/index.ts';
import {
  balanceUrl,
  CREDIT_CURRENCY,
  lockClientCredit,
  type OpenCredit,
  openClientCredit,
} from '../client-credits/index.ts';
import {
  decrease,
  increase,
  ledgerAccounts,
  naturalBalanceOf,
  postEntry,
  readAmount,
} from '../ledger/index.ts';
import {
  hasOnChainFloor,
  mintRequest,
  ON_CHAIN_FLOOR,
  openTopUpRequest,
  pegOf,
  presentRequest,
} from '../payment-requests/index.ts';
import { fileResource } from '../resources/index.ts';
import { spelledAsSent, topUpAmount } from './domain.ts';
import * as store from './store.ts';

export type ChargesDeps = { clock: Clock; publicUrl: string };

export type ChargeInput = {
  client_ref: string;
  account_id: string;
  amount: number | string;
  currency?: string;
  memo?: string;
  resource?: string;
  top_up_amount?: number | string | null;
};

export type Amounts = { price: AmountE8; topUp: AmountE8 | null };

/**
 * The answer to a call the balance cannot carry: the current balance and a request to top it up.
 * The client's open top-up request on this account is reused while its price covers the top-up
 * asked for now, so refused calls do not pile up open requests on one address: concurrent
 * refusals for one client take turns on the credit's row lock, and each sees what the one before
 * it minted.
 */
async function refuseWithTopUp(
  tx: Tx,
  deps: ChargesDeps,
  caller: IntegrationCaller,
  refused: { clientRef: string; accountId: string; amount: AmountE8; credit: OpenCredit },
) {
  await lockClientCredit(tx, refused.credit);
  const now = deps.clock.now();
  const open = await openTopUpRequest(tx, caller.spaceId, refused.credit.id, refused.accountId, now);
  const request =
    open && readAmount(open.amount) >= refused.amount
      ? presentRequest(open, deps.publicUrl, now)
      : await mintTopUp(tx, deps, caller, refused);
  return {
    paid: false,
    client_ref: refused.clientRef,
    balance_usd: formatAmount(await naturalBalanceOf(tx, refused.credit.ledgerAccount.id)),
    charged_usd: null,
    entry_id: null,
    top_up: request,
    balance_url: balanceUrl(deps.publicUrl, refused.credit.page_token),
  };
}

function mintTopUp(
  tx: Queryable,
  deps: ChargesDeps,
  caller: IntegrationCaller,
  refused: { clientRef: string; accountId: string; amount: AmountE8; credit: OpenCredit },
) {
  return mintRequest(
    tx,
    { clock: deps.clock, publicUrl: deps.publicUrl },
    {
      spaceId: caller.spaceId,
      keyId: caller.keyId,
      accountId: refused.accountId,
      amount: refused.amount,
      currency: CREDIT_CURRENCY,
      expiresAt: null,
      memo: `Top-up for ${refused.clientRef}`,
      resource: '',
      topUpFor: { clientCreditId: refused.credit.id },
    },
  );
}

/** What must hold before a charge: USD, an account that can take a USD top-up, a payable top-up. */
async function checkChargeable(
  tx: Queryable,
  caller: IntegrationCaller,
  input: ChargeInput,
  amounts: Amounts,
) {
  const currency = (input.currency ?? CREDIT_CURRENCY).toUpperCase();
  if (currency !== CREDIT_CURRENCY) {
    throw new AppError('currency_mismatch', 'Prepaid balances are kept in USD; charge in USD.', {
      field: 'currency',
    });
  }
  const account = await requireAccountFacts(tx, caller.spaceId, input.account_id);
  if (pegOf(account.currency) !== CREDIT_CURRENCY) {
    throw new AppError(
      'currency_mismatch',
      `The account holds ${account.currency}; prepaid charges need a USD or USDC account.`,
      { field: 'account_id' },
    );
  }
  const topUp = topUpAmount(amounts.price, amounts.topUp);
  if (hasOnChainFloor(account) && topUp < ON_CHAIN_FLOOR) {
    throw new AppError(
      'amount_not_accepted',
      'A top-up on this account is paid on chain, where the floor is 1 USD; ask for at least 1.',
      {
        field: 'top_up_amount',
        floor: '1',
      },
    );
  }
  return { account, topUp };
}

/**
 * Charges one call to a client's prepaid balance. The balance moves under its row lock with a
 * guard, so concurrent charges each see what the previous left and none can overdraw; a call
 * the balance cannot carry is answered with a top-up request instead (spec §4, charges).
 *
 * A paid charge is one statement (the guarded move, the entry, its postings and the charge row),
 * atomic on its own, so `db` may be the database itself: the common path then costs one round
 * trip. What comes before it only reads rows that never change (kept per process) or creates
 * them once, idempotently. The refusal writes several rows and opens its own transaction.
 */
export async function charge(
  db: Queryable,
  deps: ChargesDeps,
  caller: IntegrationCaller,
  input: ChargeInput,
  amounts: Amounts,
) {
  const { account, topUp } = await checkChargeable(db, caller, input, amounts);
  const at = deps.clock.now();
  const resourceId = await fileResource(db, caller.spaceId, input.resource, at);
  const credit = await openClientCredit(db, caller.spaceId, input.client_ref, at);
  const income = await ledgerAccounts.income(db, {
    spaceId: caller.spaceId,
    currency: CREDIT_CURRENCY,
    at,
    resourceId,
  });
  const chargeId = randomUUID();
  const row = {
    id: chargeId,
    space_id: caller.spaceId,
    client_credit_id: credit.id,
    account_id: account.id,
    key_id: caller.keyId,
    amount: formatAmount(amounts.price),
    currency: CREDIT_CURRENCY,
    memo: input.memo ?? '',
    resource_id: resourceId,
    created_at: at,
  };
  const posted = await postEntry(
    db,
    {
      spaceId: caller.spaceId,
      origin: 'internal',
      kind: 'income',
      occurredOn: utcDateOf(at),
      causeType: 'charge',
      causeId: chargeId,
      counterparty: input.client_ref,
      memo: input.memo ?? '',
      postings: [decrease(credit.ledgerAccount, amounts.price), increase(income, amounts.price)],
    },
    at,
    [store.chargeRider(row)],
  );
  if (posted.ok) {
    return {
      paid: true,
      client_ref: input.client_ref,
      balance_usd: formatAmount(
        defined(posted.balances.get(credit.ledgerAccount.id), "the credit's new balance"),
      ),
      charged_usd: spelledAsSent(input.amount),
      entry_id: posted.entryId,
      top_up: null,
      balance_url: null,
    };
  }
  return inTransaction(db, (tx) =>
    refuseWithTopUp(tx, deps, caller, {
      clientRef: input.client_ref,
      accountId: account.id,
      amount: topUp,
      credit,
    }),
  );
}
