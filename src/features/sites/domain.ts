// Sites a space may be framed on, with no I/O: what an origin is, and what proves control.

/** Where the site publishes its token. */
export const WELL_KNOWN_PATH = '/.well-known/tollbook-site.txt';
export const ORIGIN_MAX = 300;

export type OriginVerdict = { ok: true; origin: string } | { ok: false; reason: string };

/**
 * The origin as browsers compare it for frame-ancestors: scheme, host and a non-default port,
 * lower case, nothing else. https only, unless development admits http.
 */
export function normalizeOrigin(raw: string, allowHttp: boolean): OriginVerdict {
  if (raw.includes('*'))
    return { ok: false, reason: 'Wildcards are not accepted: register each origin on its own.' };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'The origin is not a valid absolute URL such as https://shop.example.com.' };
  }
  if (url.protocol !== 'https:' && !(allowHttp && url.protocol === 'http:'))
    return { ok: false, reason: `The origin must use https${allowHttp ? ' or http' : ''}.` };
  if (url.username !== '' || url.password !== '')
    return { ok: false, reason: 'The origin must not contain a username or password.' };
  if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '')
    return { ok: false, reason: 'An origin is scheme, host and port only: no path, query or fragment.' };
  if (!isHostName(url.hostname))
    return {
      ok: false,
      reason: 'The host must be a domain name (letters, digits and hyphens between dots) or an IP address.',
    };
  if (url.origin.length > ORIGIN_MAX)
    return { ok: false, reason: `The origin is longer than ${ORIGIN_MAX} characters.` };
  return { ok: true, origin: url.origin };
}

function isLabelCode(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 48 && code <= 57) || code === 45;
}

/**
 * The WHATWG parser keeps characters such as ' ; _ in a host; a browser's origin never has
 * them. A host is DNS labels (1 to 63 of a-z, 0-9, hyphen, not at either end; punycode
 * included, as the parser has already converted Unicode) or an IP literal the parser normalized.
 */
export function isHostName(hostname: string): boolean {
  if (hostname.startsWith('[') && hostname.endsWith(']')) return true;
  if (hostname.length === 0 || hostname.length > 253) return false;
  for (const label of hostname.split('.')) {
    if (label.length === 0 || label.length > 63) return false;
    if (label.startsWith('-') || label.endsWith('-')) return false;
    for (let index = 0; index < label.length; index++)
      if (!isLabelCode(label.charCodeAt(index))) return false;
  }
  return true;
}

/** The published file proves control when one of its lines is exactly the token. */
export function fileProves(text: string, token: string): boolean {
  return text.split(/\r?\n/).some((line) => line.trim() === token);
}

/** The CSP frame-ancestors source list: the proven origins, or 'none'. */
export function frameAncestors(origins: readonly string[]): string {
  return origins.length === 0 ? "'none'" : origins.join(' ');
}
