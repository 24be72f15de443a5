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
