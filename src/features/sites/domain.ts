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
  if (url.origin.length > ORIGIN_MAX)
    return { ok: false, reason: `The origin is longer than ${ORIGIN_MAX} characters.` };
  return { ok: true, origin: url.origin };
}

/** The published file proves control when one of its lines is exactly the token. */
export function fileProves(text: string, token: string): boolean {
  return text.split(/\r?\n/).some((line) => line.trim() === token);
}

/** The CSP frame-ancestors source list: the proven origins, or 'none'. */
export function frameAncestors(origins: readonly string[]): string {
  return origins.length === 0 ? "'none'" : origins.join(' ');
}
