import { remove as confusableSkeleton } from 'confusables';

// Sanctions screening with no I/O: the normal forms that list entries and a payment's names
// and addresses are compared in (the SDN.XML reader is in sdn-xml.ts, near matching in near.ts).
// docs/design/screening.md states the rules.

/**
 * The list's entries as they are matched: a normalised name (its words in the order listed), or
 * a chain address; `listed` is the name or address as the list writes it, `programs` the
 * sanctions programs of its SDN entry.
 */
export type ScreeningEntry = {
  kind: 'name' | 'address';
  value: string;
  sdnUid: string;
  listed: string;
  programs: string;
};
export type SdnList = { publishedOn: string; entries: ScreeningEntry[]; sdnCount: number };

/** Default-ignorable code points and other format characters: invisible, so never part of a name. */
const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\p{Cf}]/gu;

/**
 * Legal forms dropped from the end of a name (and, for the Russian forms, from its start), as
 * their words after normalisation: "S.A.R.L." is ["s","a","r","l"]. Only when a word would be
 * left. The same set is listed in docs/design/screening.md.
 */
export const LEGAL_FORMS: readonly string[] = [
  'ab',
  'ag',
  'as',
  'bv',
  'b v',
  'co',
  'company',
  'corp',
  'corporation',
  'cjsc',
  'fze',
  'fzco',
  'gmbh',
  'inc',
  'incorporated',
  'jsc',
  'kg',
  'limited',
  'llc',
  'l l c',
  'llp',
  'lp',
  'ltd',
  'nv',
  'n v',
  'oao',
  'ojsc',
  'ooo',
  'oy',
  'pao',
  'pjsc',
  'plc',
  'pte',
  'pty',
  'sa',
  's a',
  'sarl',
  's a r l',
  'sas',
  'sl',
  'spa',
  's p a',
  'srl',
  'zao',
];
/** The Russian forms that stand before the name (ООО «Ромашка»). */
const LEADING_FORMS = new Set(['ooo', 'oao', 'zao', 'pao']);
const FORMS_BY_LENGTH = [...new Set(LEGAL_FORMS.map((form) => form.split(' ').length))].sort((a, b) => b - a);
const FORMS = new Set(LEGAL_FORMS);

/**
 * Text in the form names are compared: invisible characters removed first, then NFKC, full case
 * folding, the UTS #39 confusable skeleton (the `confusables` package: Cyrillic "а" is Latin
 * "a"), and accents folded (NFD, marks removed).
 */
export function foldText(text: string): string {
  const visible = text.replace(INVISIBLE, '').normalize('NFKC');
  // Upper then lower folds "ß" to "ss" and final sigma to sigma, as full case folding does.
  const folded = visible.toUpperCase().toLowerCase();
  return confusableSkeleton(folded)
    .toLowerCase()
    .normalize('NFD')
    .replace(/\p{M}+/gu, '');
}

function dropLegalForms(words: string[]): string[] {
  let end = words.length;
  let dropped = true;
  while (dropped) {
    dropped = false;
    for (const length of FORMS_BY_LENGTH) {
      if (end - length < 1) continue;
      if (FORMS.has(words.slice(end - length, end).join(' '))) {
        end -= length;
        dropped = true;
        break;
      }
    }
  }
  let start = 0;
  while (end - start > 1 && LEADING_FORMS.has(words[start] ?? '')) start += 1;
  return words.slice(start, end);
}

/** A name's words as compared: folded, split on anything but letters and digits, legal forms dropped. */
export function nameWords(name: string): string[] {
  const words = foldText(name)
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== '');
  return dropLegalForms(words);
}

/**
 * A name in the form it is stored and compared: its words in their order, one space apart.
 * "José  NÚÑEZ" and "jose nunez" are the same; word order is compared by the index (near.ts).
 */
export function normalizeName(name: string): string {
  return nameWords(name).join(' ');
}

const HEX_ADDRESS = /^0x[0-9a-f]+$/i;

/**
 * A destination in the form it is compared: invisible characters removed, trimmed, and, for hex
 * addresses (whose case is only a checksum), lower case. Other encodings stay as written (base58
 * bitcoin addresses are case-sensitive).
 */
export function normalizeAddress(address: string): string {
  const visible = address.replace(INVISIBLE, '').trim();
  return HEX_ADDRESS.test(visible) ? visible.toLowerCase() : visible;
}

/** Whether a written address holds an invisible character (such an address is refused, not cleaned). */
export function hasInvisible(text: string): boolean {
  return new RegExp(INVISIBLE.source, 'u').test(text);
}

/**
 * A payout policy's destination or payee as compared (`blocked_destination`): folded as names are
 * (invisible characters, look-alikes, case, accents) with every space removed, so IBANs and
 * account numbers written in groups match too.
 */
export function normalizeDestination(destination: string): string {
  return foldText(destination).replace(/\s+/gu, '');
}

/** What a payment is screened on: its destination (if any) and its payee's names. */
export type ScreeningSubject = { address?: string | null; names: string[] };

export function subjectValues(subject: ScreeningSubject): { names: string[][]; addresses: string[] } {
  const seen = new Set<string>();
  const names: string[][] = [];
  for (const name of subject.names) {
    const words = nameWords(name);
    const key = words.join(' ');
    if (key === '' || seen.has(key)) continue;
    seen.add(key);
    names.push(words);
  }
  const address = subject.address ? normalizeAddress(subject.address) : '';
  return { names, addresses: address === '' ? [] : [address] };
}
