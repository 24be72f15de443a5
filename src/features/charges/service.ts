import { randomUUID } from 'node:crypto';
import { assert, defined } from '../../core/assert.ts';
import type { Clock } from '../../core/clock.ts';
import { utcDateOf } from '../../core/day.ts';
import { AppError } from '../../core/errors.ts';
import { type AmountE8, formatAmount, parseAmountInput } from '../../core/money.ts';
import { type Db, inTransaction, type Queryable, type Tx } from '../../platform/db/database.ts';
import type { IntegrationCaller } from '../../platform/http/context.ts';
import { requireAccountFacts } from '../accounts/index.ts';
import {
  balanceUrl,
  CREDIT_CURRENCY,
  findCreditByPageToken,
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

type TopUpAsk = {
  spaceId: string;
  keyId: string | null;
  clientRef: string;
  accountId: string;
  amount: AmountE8;
  credit: OpenCredit;
};

/**
 * A client's top-up request on an account: its open one while that one's price covers the
 * top-up asked for now, else a new one, so refused calls (and the balance page's Top up) do not
 * pile up open requests on one address. Concurrent asks for one client take turns on the
 * credit's row lock, and each sees what the one before it minted.
 */
async function topUpRequest(tx: Tx, deps: ChargesDeps, ask: TopUpAsk) {
  await lockClientCredit(tx, ask.credit);
  const now = deps.clock.now();
  const open = await openTopUpRequest(tx, ask.spaceId, ask.credit.id, ask.accountId, now);
  return open && readAmount(open.amount) >= ask.amount
    ? presentRequest(open, deps.publicUrl, now)
    : await mintTopUp(tx, deps, ask);
}

/** The answer to a call the balance cannot carry: the current balance and a request to top it up. */
async function refuseWithTopUp(tx: Tx, deps: ChargesDeps, ask: TopUpAsk) {
  const request = await topUpRequest(tx, deps, ask);
  return {
    paid: false,
    client_ref: ask.clientRef,
    balance_usd: formatAmount(await naturalBalanceOf(tx, ask.credit.ledgerAccount.id)),
    charged_usd: null,
    entry_id: null,
    top_up: request,
    balance_url: balanceUrl(deps.publicUrl, ask.credit.page_token),
  };
}

/** The answer to a call the balance cannot carry, when the client tops up by other means. */
async function refuseWithoutTopUp(db: Queryable, deps: ChargesDeps, clientRef: string, credit: OpenCredit) {
  return {
    paid: false,
    client_ref: clientRef,
    balance_usd: formatAmount(await naturalBalanceOf(db, credit.ledgerAccount.id)),
    charged_usd: null,
    entry_id: null,
    top_up: null,
    balance_url: balanceUrl(deps.publicUrl, credit.page_token),
  };
}

function mintTopUp(tx: Queryable, deps: ChargesDeps, ask: TopUpAsk) {
  return mintRequest(
    tx,
    { clock: deps.clock, publicUrl: deps.publicUrl },
    {
      spaceId: ask.spaceId,
      keyId: ask.keyId,
      accountId: ask.accountId,
      amount: ask.amount,
      currency: CREDIT_CURRENCY,
      expiresAt: null,
      memo: `Top-up for ${ask.clientRef}`,
      resource: '',
      topUpFor: { clientCreditId: ask.credit.id },
    },
  );
}

/** Whether the balance page can offer Top up: the client has used an account of the book. */
export async function canTopUp(db: Queryable, spaceId: string, clientCreditId: string): Promise<boolean> {
  return (await store.lastTopUpAccount(db, spaceId, clientCreditId)) !== undefined;
}

/** What the balance page's Top up offers, in USD. */
export const TOP_UP_CHOICES = ['10', '25', '50'] as const;

/**
 * The balance page's Top up: a top-up request the way a refused charge makes one, on the
 * account the client last used (its last call's or last top-up's). Undefined when the page is
 * unknown or the client never used an account (nothing to top up).
 */
export async function topUpFromBalancePage(
  db: Db,
  deps: ChargesDeps,
  pageToken: string,
  amount: (typeof TOP_UP_CHOICES)[number],
): Promise<{ path: string } | undefined> {
  const found = await findCreditByPageToken(db, pageToken);
  if (!found) return undefined;
  const accountId = await store.lastTopUpAccount(db, found.space_id, found.id);
  if (!accountId) return undefined;
  const at = deps.clock.now();
  const credit = await openClientCredit(db, found.space_id, found.client_ref, at);
  const request = await inTransaction(db, (tx) =>
    topUpRequest(tx, deps, {
      spaceId: found.space_id,
      keyId: null,
      clientRef: found.client_ref,
      accountId,
      amount: parseAmount(amount),
      credit,
    }),
  );
  // A path on this server, as the invoice page's Pay answers: the browser stays on the origin it came from.
  return { path: `/pay/${request.token}` };
}

function parseAmount(text: string): AmountE8 {
  const parsed = parseAmountInput(text);
  assert(parsed.ok, 'The top-up choices are decimal numbers.');
  return parsed.value;
}

/** What must hold before a charge: USD, an account that can take a USD top-up, a payable top-up. */
async function checkChargeable(
  tx: Queryable,
  caller: Pick<IntegrationCaller, 'spaceId'>,
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
 *
 * `shortfall: 'refuse'` answers a call the balance cannot carry with the balance alone, minting
 * no top-up request: for callers whose client tops up another way (an x402 payment).
 */
export async function charge(
  db: Queryable,
  deps: ChargesDeps,
  caller: Pick<IntegrationCaller, 'spaceId' | 'keyId'>,
  input: ChargeInput,
  amounts: Amounts,
  shortfall: 'top_up' | 'refuse' = 'top_up',
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
  if (shortfall === 'refuse') return refuseWithoutTopUp(db, deps, input.client_ref, credit);
  return inTransaction(db, (tx) =>
    refuseWithTopUp(tx, deps, {
      spaceId: caller.spaceId,
      keyId: caller.keyId,
      clientRef: input.client_ref,
      accountId: account.id,
      amount: topUp,
      credit,
    }),
  );
}
