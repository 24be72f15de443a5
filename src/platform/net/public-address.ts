import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

// SSRF protection for outbound webhook calls. A URL is admitted only when its host is, or resolves
// exclusively to, plain public unicast addresses. The verdict carries the addresses that were
// checked so that the sender can connect to one of them instead of resolving the name again (a
// second lookup could answer differently and undo the check).

/** Returns every A and AAAA address for the name, in the order the resolver gives them. */
export type Resolver = (hostname: string) => Promise<string[]>;

/** Resolves through the operating system, so /etc/hosts and the local DNS setup apply as they would on connect. */
export const systemResolver: Resolver = async (hostname) => {
  const results = await lookup(hostname, { all: true, verbatim: true });
  return results.map((result) => result.address);
};

/** How long an answer is reused: shorter than almost any record's TTL, so a moved host is soon followed. */
export const RESOLVER_CACHE_MS = 10_000;
const RESOLVER_CACHE_NAMES_MAX = 1024;

/**
 * The resolver's answers kept for `ttlMs` per name (at most RESOLVER_CACHE_NAMES_MAX names; the
 * oldest is dropped first). A lookup costs a thread-pool round trip even for a cached name, and
 * an agent fetches the same few hosts again and again. Only answers are kept, never failures,
 * and callers still check every address before connecting to it, so a name that turns private
 * is refused once its answer is asked again; a kept answer only delays that by `ttlMs`.
 * Concurrent asks for one name share one lookup.
 */
export function cachedResolver(resolver: Resolver, ttlMs = RESOLVER_CACHE_MS, now = Date.now): Resolver {
  const kept = new Map<string, { answer: Promise<string[]>; until: number }>();
  return (hostname) => {
    const key = hostname.toLowerCase();
    const hit = kept.get(key);
    if (hit && hit.until > now()) return hit.answer;
    const answer = resolver(hostname);
    kept.delete(key);
    if (kept.size >= RESOLVER_CACHE_NAMES_MAX) {
      const oldest = kept.keys().next().value;
      if (oldest !== undefined) kept.delete(oldest);
    }
    const entry = { answer, until: now() + ttlMs };
    kept.set(key, entry);
    // A failed lookup is forgotten at once, so the next ask tries again.
    answer.catch(() => {
      if (kept.get(key) === entry) kept.delete(key);
    });
    return answer;
  };
}

/**
 * `allowPrivate` is the development switch (loopback and private ranges, http on any port).
 * `allowList` is the operator's explicit allowance, kept in production: address ranges in CIDR
 * notation (`10.0.5.0/24`, `127.0.0.1/32`) the server may call although they are not public. A URL
 * whose host is an address literal inside it may also use http and any port. Metadata addresses
 * stay refused whatever either says.
 */
export type AddressPolicy = {
  allowPrivate: boolean;
  allowList?: readonly string[];
  requirePort443?: boolean;
};

/** Answers the reason an allow-list entry is unusable, or null for a CIDR range ipaddr parses. */
export function allowListEntryProblem(entry: string): string | null {
  try {
    ipaddr.parseCIDR(entry);
    return null;
  } catch {
    return `"${entry}" is not an address range in CIDR notation (for example 10.0.5.0/24 or fd00::/64)`;
  }
}

function inAllowList(text: string, policy: AddressPolicy): boolean {
  if (!policy.allowList || policy.allowList.length === 0) return false;
  const ip = parsePlain(text);
  if (ip === null) return false;
  const plain =
    ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()
      ? (ip as ipaddr.IPv6).toIPv4Address()
      : ip;
  return policy.allowList.some((entry) => {
    const [range, bits] = ipaddr.parseCIDR(entry);
    return range.kind() === plain.kind() && plain.match(range, bits);
  });
}

export type AddressVerdict = { ok: true; url: URL; addresses: string[] } | { ok: false; reason: string };

const MAX_URL_LENGTH = 2000;

type IP = ipaddr.IPv4 | ipaddr.IPv6;

// `private` is the class a development setup may opt into (loopback, RFC 1918, ULA); `blocked` is
// never callable, whatever the policy says.
type Classification =
  | { kind: 'public'; text: string }
  | { kind: 'private'; text: string; label: string }
  | { kind: 'blocked'; text: string; label: string };

// Cloud metadata services hand out credentials, so they stay refused even when private addresses are
// allowed. 168.63.129.16 is in public space but is Azure's host endpoint and only reachable from a VM.
const METADATA_ADDRESSES = new Set(['169.254.169.254', '100.100.100.200', '168.63.129.16', 'fd00:ec2::254']);

const V4_LABELS: Record<string, string> = {
  unspecified: 'an unspecified address (0.0.0.0/8)',
  broadcast: 'the broadcast address',
  multicast: 'a multicast address (224.0.0.0/4)',
  linkLocal: 'a link-local address (169.254.0.0/16)',
  loopback: 'a loopback address (127.0.0.0/8)',
  carrierGradeNat: 'a carrier-grade NAT address (100.64.0.0/10)',
  private: 'a private network address (RFC 1918)',
  reserved: 'a reserved, documentation or benchmarking address',
  as112: 'an AS112 sink address',
  amt: 'an AMT relay address',
};

const V6_LABELS: Record<string, string> = {
  unspecified: 'the unspecified address (::)',
  linkLocal: 'a link-local address (fe80::/10)',
  multicast: 'a multicast address (ff00::/8)',
  loopback: 'the loopback address (::1)',
  uniqueLocal: 'a unique local address (fc00::/7)',
  deprecatedSiteLocal: 'a site-local address (fec0::/10)',
  discard: 'a discard-only address (100::/64)',
  rfc6145: 'an IPv4-translated address (::ffff:0:0:0/96)',
  rfc6052: 'a local-use NAT64 address (64:ff9b:1::/48)',
  '6to4': 'a 6to4 tunnel address (2002::/16)',
  teredo: 'a Teredo tunnel address (2001::/32)',
  benchmarking: 'a benchmarking address (2001:2::/48)',
  reserved: 'a reserved or documentation address',
};

// Parsed once: the prefixes that need handling beyond ipaddr's own range names.
const NAT64_PREFIX = ipaddr.IPv6.parse('64:ff9b::');
const GLOBAL_UNICAST_PREFIX = ipaddr.IPv6.parse('2000::');

/**
 * Parses only the plain textual forms. ipaddr.parse alone would also take shorthand such as
 * "127.1" or a zone suffix, and those are not what a resolver or a URL host should hand us.
 */
function parsePlain(address: string): IP | null {
  if (typeof address !== 'string' || address.includes('%')) return null;
  const family = isIP(address);
  try {
    if (family === 4) return ipaddr.IPv4.parse(address);
    if (family === 6) return ipaddr.IPv6.parse(address);
  } catch {
    // node:net and ipaddr disagreeing about a string is reason enough to refuse it.
  }
  return null;
}

function classifyV4(ip: ipaddr.IPv4): Classification {
  const text = ip.toString();
  if (METADATA_ADDRESSES.has(text)) return { kind: 'blocked', text, label: 'a cloud metadata address' };
  const range = ip.range();
  if (range === 'unicast') return { kind: 'public', text };
  const label = V4_LABELS[range] ?? `a special-purpose address (${range})`;
  if (range === 'loopback' || range === 'private') return { kind: 'private', text, label };
  return { kind: 'blocked', text, label };
}

function classifyV6(ip: ipaddr.IPv6): Classification {
  // A mapped address reaches the embedded IPv4 host, so it is judged (and reported) as that host.
  if (ip.isIPv4MappedAddress()) return classifyV4(ip.toIPv4Address());
  const text = ip.toRFC5952String();
  if (METADATA_ADDRESSES.has(text)) return { kind: 'blocked', text, label: 'a cloud metadata address' };
  // On an IPv6-only network DNS64 synthesises 64:ff9b::/96 answers for ordinary public hosts, and
  // the NAT64 gateway forwards to the embedded IPv4 address, so that address decides.
  if (ip.match(NAT64_PREFIX, 96)) {
    const [, , , , , , high = 0, low = 0] = ip.parts;
    const embedded = new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
    const inner = classifyV4(embedded);
    if (inner.kind === 'public') return { kind: 'public', text };
    return { kind: 'blocked', text, label: `a NAT64 address wrapping the non-public address ${inner.text}` };
  }
  const range = ip.range();
  const label = V6_LABELS[range] ?? `a special-purpose address (${range})`;
  if (range === 'loopback' || range === 'uniqueLocal') return { kind: 'private', text, label };
  if (range !== 'unicast') return { kind: 'blocked', text, label };
  // ipaddr calls everything it has no name for "unicast", but only 2000::/3 is allocated for
  // global unicast; the rest (for example IPv4-compatible ::a.b.c.d) is reserved by the IETF.
  if (!ip.match(GLOBAL_UNICAST_PREFIX, 3)) {
    return { kind: 'blocked', text, label: 'an address outside the global unicast range (2000::/3)' };
  }
  return { kind: 'public', text };
}

function classify(address: string): Classification | null {
  const ip = parsePlain(address);
  if (ip === null) return null;
  return ip.kind() === 'ipv4' ? classifyV4(ip as ipaddr.IPv4) : classifyV6(ip as ipaddr.IPv6);
}

/** True only for a plain IPv4 or IPv6 address in public unicast space; false for anything else, including non-addresses. */
export function isPublicIp(address: string): boolean {
  return classify(address)?.kind === 'public';
}

/** Added to a refusal the development switch would lift, outside production (where it does not exist). */
export const DEVELOPMENT_SWITCH_HINT =
  'In development, start the server with WEBHOOK_ALLOW_PRIVATE=1 to let webhooks reach loopback and private addresses over http.';

/**
 * Whether the development switch (WEBHOOK_ALLOW_PRIVATE=1) would admit a URL `policy` refused:
 * a loopback or private receiver, or http, or another port. Blocked ranges stay refused.
 */
export async function developmentSwitchWouldAdmit(
  raw: string,
  policy: AddressPolicy,
  resolve: Resolver,
): Promise<boolean> {
  if (policy.allowPrivate) return false;
  return (await checkPublicUrl(raw, { ...policy, allowPrivate: true, requirePort443: false }, resolve)).ok;
}

function refuse(reason: string): AddressVerdict {
  return { ok: false, reason };
}

function admitted(classification: Classification, policy: AddressPolicy): boolean {
  if (classification.kind === 'public') return true;
  if (classification.kind === 'private' && policy.allowPrivate) return true;
  return !METADATA_ADDRESSES.has(classification.text) && inAllowList(classification.text, policy);
}

function errorCode(error: unknown): string | null {
  if (typeof error !== 'object' || error === null) return null;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code) ? code : null;
}

/**
 * Decides whether the server may call `raw`. It never throws: every problem, including a failing
 * resolver, comes back as `{ ok: false, reason }` with a sentence that can be shown to a person.
 */
export async function checkPublicUrl(
  raw: string,
  policy: AddressPolicy,
  resolve: Resolver,
): Promise<AddressVerdict> {
  if (typeof raw !== 'string' || raw.length === 0) return refuse('The URL is empty.');
  if (raw.length > MAX_URL_LENGTH) return refuse(`The URL is longer than ${MAX_URL_LENGTH} characters.`);

  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse('The URL is not a valid absolute URL.');
  }
  // Parsing percent-encodes some characters, so the stored form can outgrow the input.
  if (url.href.length > MAX_URL_LENGTH) return refuse(`The URL is longer than ${MAX_URL_LENGTH} characters.`);
  if (url.username !== '' || url.password !== '') {
    return refuse('The URL must not contain a username or password.');
  }

  const scheme = url.protocol.slice(0, -1);
  const literal = ipLiteral(url.hostname);
  // An address literal the operator listed is an internal receiver: http and any port are its own.
  const listedLiteral = literal !== null && inAllowList(literal, policy);
  const httpAdmitted = policy.allowPrivate || listedLiteral;
  if (url.protocol !== 'https:' && !(httpAdmitted && url.protocol === 'http:')) {
    const wanted = httpAdmitted ? 'https or http' : 'https';
    return refuse(`The URL must use ${wanted}, not ${scheme}.`);
  }
  if (policy.requirePort443 && !listedLiteral) {
    const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
    if (port !== 443) return refuse(`The URL must use port 443, not ${port}.`);
  }

  // WHATWG parsing has already turned every IPv4 spelling into dotted decimal and wrapped IPv6 in
  // brackets, so anything else here is a name.
  const host = url.hostname;
  if (literal !== null) {
    const classification = classify(literal);
    if (classification === null) return refuse(`The URL host ${host} is not a usable IP address.`);
    if (!admitted(classification, policy)) {
      return refuse(`The URL host ${host} is ${describe(classification)}, which the server will not call.`);
    }
    return { ok: true, url, addresses: [classification.text] };
  }

  let resolved: unknown;
  try {
    resolved = await resolve(host);
  } catch (error) {
    const code = errorCode(error);
    return refuse(`The URL host ${host} could not be resolved${code === null ? '' : ` (${code})`}.`);
  }
  if (!Array.isArray(resolved) || resolved.length === 0) {
    return refuse(`The URL host ${host} does not resolve to any address.`);
  }

  // One disallowed answer refuses the whole URL: the sender may end up on any of them.
  const addresses: string[] = [];
  for (const address of resolved) {
    const classification = typeof address === 'string' ? classify(address) : null;
    if (classification === null) {
      return refuse(`The URL host ${host} resolves to ${String(address)}, which is not an IP address.`);
    }
    if (!admitted(classification, policy)) {
      return refuse(
        `The URL host ${host} resolves to ${classification.text}, ${describe(classification)}, which the server will not call.`,
      );
    }
    if (!addresses.includes(classification.text)) addresses.push(classification.text);
  }
  return { ok: true, url, addresses };
}

function ipLiteral(host: string): string | null {
  if (host.startsWith('[') && host.endsWith(']')) return host.slice(1, -1);
  return isIP(host) === 4 ? host : null;
}

function describe(classification: Classification): string {
  return classification.kind === 'public' ? 'a public address' : classification.label;
}
