// Sanctions screening with no I/O: the normal forms that list entries and a payment's names
// and addresses are compared in (the SDN.XML reader is in sdn-xml.ts).

/** The list's entries as they are matched: a normalised name, or a chain address. */
export type ScreeningEntry = { kind: 'name' | 'address'; value: string; sdnUid: string };
export type SdnList = { publishedOn: string; entries: ScreeningEntry[]; sdnCount: number };

const HEX_ADDRESS = /^0x[0-9a-fA-F]+$/;

/**
 * A name in the form it is compared: accents dropped (NFKD, then marks removed), lower case,
 * anything but letters and digits as a word break, and the words sorted, so "José  Núñez",
 * "NUNEZ, Jose" and "jose nunez" are the same name.
 */
export function normalizeName(name: string): string {
  const words = name
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== '');
  return words.sort().join(' ');
}

/**
 * A chain address in the form it is compared: hex addresses in lower case (so a checksum-cased
 * address matches), other encodings (base58 bitcoin addresses are case-sensitive) as written.
 */
export function normalizeAddress(address: string): string {
  const trimmed = address.trim();
  return HEX_ADDRESS.test(trimmed) ? trimmed.toLowerCase() : trimmed;
}

/** What a payment is screened on: its chain address (if any) and its payee's name. */
export type ScreeningSubject = { address?: string | null; names: string[] };

export function subjectValues(subject: ScreeningSubject): { names: string[]; addresses: string[] } {
  const names = subject.names.map(normalizeName).filter((value) => value !== '');
  const address = subject.address ? normalizeAddress(subject.address) : '';
  return { names: [...new Set(names)], addresses: address === '' ? [] : [address] };
}
