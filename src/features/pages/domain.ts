import { type AmountE8, formatAmountFixed } from '../../core/money.ts';

// What a payment page offers, decided without I/O.

export type AccountView = {
  id: string;
  kind: string;
  name: string;
  currency: string;
  address: string | null;
  network: string | null;
  details: string;
  /** A bank account's requisites (features/contacts' shape), or null. */
  requisites: Record<string, unknown> | null;
};

export type Rails = {
  stablecoin: { account: AccountView } | null;
  bank: { account: AccountView; reference: string } | null;
  card: boolean;
};

/** The bank reference that identifies a request: short enough to type, long enough to be unique. */
export function bankReference(token: string): string {
  return `TB-${token.slice(3, 13).toUpperCase()}`;
}

/**
 * The request's own account comes first; otherwise another account of the space that can hold
 * the request's currency (a USD price may be paid in USDC to a crypto account, or to a USD bank
 * account).
 */
export function railsFor(
  request: { accountId: string; currency: string; token: string },
  accounts: AccountView[],
  peg: (currency: string) => string,
  cardAvailable: boolean,
): Rails {
  const fits = (account: AccountView) =>
    account.currency === request.currency || peg(account.currency) === peg(request.currency);
  const ordered = [...accounts].sort(
    (a, b) => Number(b.id === request.accountId) - Number(a.id === request.accountId),
  );
  const crypto = ordered.find(
    (account) => account.kind === 'crypto' && account.address !== null && fits(account),
  );
  const bank = ordered.find((account) => account.kind === 'bank' && fits(account));
  return {
    stablecoin: crypto ? { account: crypto } : null,
    bank: bank ? { account: bank, reference: bankReference(request.token) } : null,
    card: cardAvailable,
  };
}

export type CardVerdict = { ok: true } | { ok: false; code: 'card_declined' | 'invalid'; detail: string };

function luhn(digits: string): boolean {
  let sum = 0;
  for (let index = 0; index < digits.length; index++) {
    let digit = Number(digits[digits.length - 1 - index]);
    if (index % 2 === 1) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    sum += digit;
  }
  return sum % 10 === 0;
}

/** The development card rail: 4242… pays, 4000000000000002 is declined, anything else is not a test card. */
export function judgeTestCard(card: { number: string; exp: string; cvc: string }, now: Date): CardVerdict {
  const number = card.number.replace(/[\s-]/g, '');
  if (!/^\d{12,19}$/.test(number) || !luhn(number))
    return { ok: false, code: 'invalid', detail: 'The card number is not valid.' };
  const exp = /^(\d{2})\s*\/\s*(\d{2})$/.exec(card.exp);
  const month = Number(exp?.[1]);
  if (!exp || month < 1 || month > 12)
    return { ok: false, code: 'invalid', detail: 'The expiry must read MM/YY.' };
  const endOfMonth = Date.UTC(2000 + Number(exp[2]), month, 1);
  if (endOfMonth <= now.getTime())
    return { ok: false, code: 'card_declined', detail: 'The card has expired.' };
  if (!/^\d{3,4}$/.test(card.cvc))
    return { ok: false, code: 'invalid', detail: 'The security code is 3 or 4 digits.' };
  if (number === '4242424242424242') return { ok: true };
  return { ok: false, code: 'card_declined', detail: 'The card was declined.' };
}

/** An IBAN as people read it: groups of four ("DE89 3704 0044 0532 0130 00"). */
export function groupedIban(iban: string): string {
  return (iban.match(/.{1,4}/g) ?? []).join(' ');
}

/** The largest amount a GiroCode may carry: 999,999,999.99 euros. */
const EPC_AMOUNT_MAX = 99_999_999_999n * 1_000_000n;

/**
 * The payload of an EPC QR code ("GiroCode", EPC069-12, version 002, UTF-8) for a euro credit
 * transfer: service tag, version, character set, identification, BIC (optional in 002), the
 * beneficiary's name (70 at most), IBAN, "EUR" and the amount, no purpose, no structured
 * reference, the reference as remittance text (140 at most). Null when the amount cannot be
 * written exactly in cents or lies outside 0.01 to 999,999,999.99 euros: the payer then types
 * the transfer from the details shown.
 */
export function epcPayload(transfer: {
  bic: string | null;
  name: string;
  iban: string;
  amount: AmountE8;
  reference: string;
}): string | null {
  const cents = formatAmountFixed(transfer.amount, 2);
  if (cents === null || transfer.amount <= 0n || transfer.amount > EPC_AMOUNT_MAX) return null;
  return [
    'BCD',
    '002',
    '1',
    'SCT',
    transfer.bic ?? '',
    transfer.name.slice(0, 70),
    transfer.iban,
    `EUR${cents}`,
    '',
    '',
    transfer.reference.slice(0, 140),
  ].join('\n');
}
