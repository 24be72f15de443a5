import { AppError } from '../../core/errors.ts';

// Pure rules for contacts: the checksums of bank requisites (IBAN mod-97, ABA routing, BIC
// shape) and the cross-field rules a schema cannot say (one primary address at most).

export const REQUISITES_SCHEMES = ['sepa', 'swift', 'uk', 'us_ach'] as const;
export type RequisitesScheme = (typeof REQUISITES_SCHEMES)[number];
export const ACH_ACCOUNT_TYPES = ['checking', 'savings'] as const;
export type AchAccountType = (typeof ACH_ACCOUNT_TYPES)[number];

/** An expected outcome of a check: the normalised value, or why it was refused. */
export type Checked<T> = { ok: true; value: T } | { ok: false; problem: string };

const IBAN_SHAPE = /^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$/;
const BIC_SHAPE = /^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}(?:[A-Z0-9]{3})?$/;
const SORT_CODE_FORMS = /^(?:[0-9]{6}|[0-9]{2}-[0-9]{2}-[0-9]{2})$/;
const ROUTING_SHAPE = /^[0-9]{9}$/;
const WHITESPACE = /\s+/g;

/**
 * The remainder modulo 97 of a string of letters and digits read as one big number, letters
 * counting as 10 (A) to 35 (Z) as ISO 13616 says. It folds one character at a time, so the
 * intermediate value never leaves the safe integer range.
 */
export function mod97(text: string): number {
  let remainder = 0;
  for (const char of text) {
    const value = Number.parseInt(char, 36);
    if (Number.isNaN(value))
      throw new RangeError(`mod97 takes letters and digits only, not ${JSON.stringify(char)}.`);
    remainder = (remainder * (value < 10 ? 10 : 100) + value) % 97;
  }
  return remainder;
}

/** The two check digits that make `country + digits + bban` a valid IBAN. */
export function ibanCheckDigits(country: string, bban: string): string {
  const check = 98 - mod97(`${bban}${country}00`);
  return String(check).padStart(2, '0');
}

/** Spaces dropped and letters upper-cased, the electronic form of an IBAN. */
export function compactIban(raw: string): string {
  return raw.replace(WHITESPACE, '').toUpperCase();
}

/** Checks an IBAN as typed (spaces and lower case allowed) and returns its electronic form. */
export function checkIban(raw: string): Checked<string> {
  const iban = compactIban(raw);
  if (iban.length < 15 || iban.length > 34) {
    return { ok: false, problem: 'iban must have 15 to 34 letters and digits.' };
  }
  if (!IBAN_SHAPE.test(iban)) {
    return {
      ok: false,
      problem: 'iban must be two country letters, two check digits, then letters and digits.',
    };
  }
  // Check digits 00, 01 and 99 are never issued: 01 would pass mod-97 wherever 98 does.
  const checkDigits = Number(iban.slice(2, 4));
  if (checkDigits < 2 || checkDigits > 98)
    return { ok: false, problem: 'iban has check digits outside 02 to 98.' };
  if (mod97(`${iban.slice(4)}${iban.slice(0, 4)}`) !== 1) {
    return { ok: false, problem: 'iban fails its mod-97 check; a character is probably mistyped.' };
  }
  return { ok: true, value: iban };
}

/** A BIC (SWIFT code): 8 or 11 characters, bank, country, location and an optional branch. */
export function checkBic(raw: string): Checked<string> {
  const bic = raw.trim().toUpperCase();
  if (!BIC_SHAPE.test(bic)) {
    return {
      ok: false,
      problem:
        'BIC must be 8 or 11 characters: 4 bank letters, 2 country letters, 2 location and an optional 3-character branch.',
    };
  }
  return { ok: true, value: bic };
}

/** A UK sort code as 6 digits or as 12-34-56; either way it is kept as 6 digits. */
export function checkSortCode(raw: string): Checked<string> {
  if (!SORT_CODE_FORMS.test(raw))
    return { ok: false, problem: 'sort_code must be 6 digits, written 123456 or 12-34-56.' };
  return { ok: true, value: raw.replaceAll('-', '') };
}

// Federal Reserve routing symbols: 00-12 ordinary banks, 21-32 thrifts, 61-72 electronic, 80
// travellers' cheques. Any other first two digits name no institution.
function routingPrefixIsIssued(prefix: number): boolean {
  return prefix <= 12 || (prefix >= 21 && prefix <= 32) || (prefix >= 61 && prefix <= 72) || prefix === 80;
}

/** An ABA routing number: 9 digits whose weighted sum (3, 7, 1 repeating) is a multiple of 10. */
export function checkRoutingNumber(raw: string): Checked<string> {
  if (!ROUTING_SHAPE.test(raw)) return { ok: false, problem: 'routing_number must be exactly 9 digits.' };
  const digits = [...raw].map(Number);
  const weights = [3, 7, 1, 3, 7, 1, 3, 7, 1];
  const sum = digits.reduce((total, digit, index) => total + digit * (weights[index] ?? 0), 0);
  if (sum % 10 !== 0)
    return { ok: false, problem: 'routing_number fails the ABA checksum; a digit is probably mistyped.' };
  if (!routingPrefixIsIssued(Number(raw.slice(0, 2)))) {
    return { ok: false, problem: 'routing_number starts with digits no US bank is assigned.' };
  }
  return { ok: true, value: raw };
}

export type RequisitesInput =
  | { scheme: 'sepa'; iban: string; bic?: string | null | undefined; holder: string }
  | {
      scheme: 'swift';
      account_number: string;
      swift_bic: string;
      holder: string;
      bank_name?: string | null | undefined;
      bank_address?: string | null | undefined;
    }
  | { scheme: 'uk'; account_number: string; sort_code: string; holder: string }
  | {
      scheme: 'us_ach';
      account_number: string;
      routing_number: string;
      holder: string;
      account_type: AchAccountType;
    };

/** Requisites as stored and shown: normalised, with absent optional fields as null. */
export type Requisites =
  | { scheme: 'sepa'; iban: string; bic: string | null; holder: string }
  | {
      scheme: 'swift';
      account_number: string;
      swift_bic: string;
      holder: string;
      bank_name: string | null;
      bank_address: string | null;
    }
  | { scheme: 'uk'; account_number: string; sort_code: string; holder: string }
  | {
      scheme: 'us_ach';
      account_number: string;
      routing_number: string;
      holder: string;
      account_type: AchAccountType;
    };

function refuse(field: string, detail: string): never {
  throw new AppError('invalid_request', detail, { field });
}

function accept<T>(checked: Checked<T>, field: string): T {
  if (!checked.ok) refuse(field, checked.problem);
  return checked.value;
}

function requireVisible(value: string, field: string): string {
  if (value.trim() === '') refuse(field, `${field.split('.').at(-1)} must contain more than spaces.`);
  return value;
}

/** An empty optional field means the same as a missing one. */
function optional(value: string | null | undefined): string | null {
  return value === undefined || value === null || value === '' ? null : value;
}

const SWIFT_ACCOUNT_SHAPE = /^[A-Z0-9]{1,34}$/;

/** Checks one requisites object; `at` is its path, such as `addresses.0.requisites`. */
export function normalizeRequisites(input: RequisitesInput, at: string): Requisites {
  const holder = requireVisible(input.holder, `${at}.holder`);
  switch (input.scheme) {
    case 'sepa': {
      const bic = optional(input.bic);
      return {
        scheme: 'sepa',
        iban: accept(checkIban(input.iban), `${at}.iban`),
        bic: bic === null ? null : accept(checkBic(bic), `${at}.bic`),
        holder,
      };
    }
    case 'swift': {
      // SWIFT field 59 allows up to 34 letters and digits; spaces people type for reading are dropped.
      const accountNumber = input.account_number.replace(WHITESPACE, '').toUpperCase();
      if (!SWIFT_ACCOUNT_SHAPE.test(accountNumber)) {
        refuse(`${at}.account_number`, 'account_number must be 1 to 34 letters and digits.');
      }
      return {
        scheme: 'swift',
        account_number: accountNumber,
        swift_bic: accept(checkBic(input.swift_bic), `${at}.swift_bic`),
        holder,
        bank_name: optional(input.bank_name),
        bank_address: optional(input.bank_address),
      };
    }
    case 'uk':
      return {
        scheme: 'uk',
        account_number: input.account_number,
        sort_code: accept(checkSortCode(input.sort_code), `${at}.sort_code`),
        holder,
      };
    case 'us_ach':
      return {
        scheme: 'us_ach',
        account_number: input.account_number,
        routing_number: accept(checkRoutingNumber(input.routing_number), `${at}.routing_number`),
        holder,
        account_type: input.account_type,
      };
  }
}

export type ContactAddressInput = {
  label: string;
  address: string;
  chain: string | null;
  network: string | null;
  details: string;
  is_primary: boolean;
  requisites: RequisitesInput | null;
};

export type ContactAddress = Omit<ContactAddressInput, 'requisites'> & { requisites: Requisites | null };

/**
 * Normalises a contact's addresses in the order given. At most one may be primary; when none
 * is marked and there are addresses, the first becomes primary, so a contact with addresses
 * always has exactly one to pay to by default.
 */
export function normalizeAddresses(addresses: readonly ContactAddressInput[]): ContactAddress[] {
  const primaries = addresses.flatMap((address, index) => (address.is_primary ? [index] : []));
  if (primaries.length > 1) {
    refuse(`addresses.${primaries[1]}.is_primary`, 'At most one address may be primary.');
  }
  const primaryIndex = primaries[0] ?? 0;
  return addresses.map((address, index) => ({
    ...address,
    is_primary: index === primaryIndex,
    requisites:
      address.requisites === null
        ? null
        : normalizeRequisites(address.requisites, `addresses.${index}.requisites`),
  }));
}

/** The rules on a contact's own fields that its schema cannot say. */
export function checkContactName(name: string): string {
  return requireVisible(name, 'name');
}
