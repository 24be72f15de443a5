import { XMLParser } from 'fast-xml-parser';
import { normalizeAddress, normalizeName, type ScreeningEntry, type SdnList } from './domain.ts';

// Reading OFAC's classic SDN.XML (https://sanctionslist.ofac.treas.gov, "SDN.XML").

const DIGITAL_CURRENCY = 'digital currency address';

type XmlNode = Record<string, unknown>;

function asList(value: unknown): XmlNode[] {
  if (value === undefined || value === null || value === '') return [];
  return (Array.isArray(value) ? value : [value]) as XmlNode[];
}

function text(value: unknown): string {
  return value === undefined || value === null ? '' : String(value).trim();
}

function fullName(node: XmlNode): string {
  return `${text(node.firstName)} ${text(node.lastName)}`.trim();
}

function entriesOf(entry: XmlNode): ScreeningEntry[] {
  const sdnUid = text(entry.uid);
  const programs = asList((entry.programList as XmlNode | undefined)?.program)
    .map((program) => text(program))
    .filter((program) => program !== '')
    .join(', ');
  const found: ScreeningEntry[] = [];
  const addName = (name: string) => {
    const value = normalizeName(name);
    if (value !== '') found.push({ kind: 'name', value, sdnUid, listed: name, programs });
  };
  const name = fullName(entry);
  addName(name);
  for (const aka of asList((entry.akaList as XmlNode | undefined)?.aka)) addName(fullName(aka));
  for (const id of asList((entry.idList as XmlNode | undefined)?.id)) {
    if (!text(id.idType).toLowerCase().startsWith(DIGITAL_CURRENCY)) continue;
    const value = normalizeAddress(text(id.idNumber));
    // An address is shown by the name of the entry that lists it (the address itself is the
    // payment's own, shown beside it).
    if (value !== '') found.push({ kind: 'address', value, sdnUid, listed: name || value, programs });
  }
  return found;
}

/** OFAC writes its date as MM/DD/YYYY; it is kept as YYYY-MM-DD (or as written, if otherwise). */
function isoDate(published: string): string {
  const parts = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(published);
  const [, month, day, year] = parts ?? [];
  if (month === undefined || day === undefined || year === undefined) return published;
  return `${year}-${month.padStart(2, '0')}-${day.padStart(2, '0')}`;
}

export type ParseResult = { ok: true; list: SdnList } | { ok: false; problem: string };

/**
 * Reads SDN.XML (`sdnList` → `publshInformation` (sic) and `sdnEntry` elements). Every name and
 * a.k.a. becomes a name entry; every id whose idType begins "Digital Currency Address" an
 * address entry. Duplicates are kept once.
 */
export function parseSdnXml(xml: string): ParseResult {
  const parser = new XMLParser({
    ignoreAttributes: true,
    parseTagValue: false,
    trimValues: true,
    processEntities: true,
    isArray: (name) => name === 'sdnEntry' || name === 'aka' || name === 'id' || name === 'program',
  });
  let document: XmlNode;
  try {
    document = parser.parse(xml, true) as XmlNode;
  } catch (error) {
    return { ok: false, problem: `The file is not well-formed XML: ${(error as Error).message}` };
  }
  const root = document.sdnList as XmlNode | undefined;
  if (root === undefined || typeof root !== 'object') {
    return { ok: false, problem: 'The file has no sdnList element: is it the classic SDN.XML?' };
  }
  const info = (root.publshInformation ?? {}) as XmlNode;
  const sdnEntries = asList(root.sdnEntry);
  const seen = new Set<string>();
  const entries: ScreeningEntry[] = [];
  for (const sdn of sdnEntries) {
    for (const entry of entriesOf(sdn)) {
      const key = `${entry.kind}|${entry.value}|${entry.sdnUid}`;
      if (seen.has(key)) continue;
      seen.add(key);
      entries.push(entry);
    }
  }
  return {
    ok: true,
    list: { publishedOn: isoDate(text(info.Publish_Date)), entries, sdnCount: sdnEntries.length },
  };
}
