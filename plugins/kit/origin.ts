/**
 * Web origins as CSRF and CORS compare them: one parser, so both plugins accept and refuse the
 * same texts.
 */

/**
 * Parses text as a bare origin (`scheme://host[:port]`, http or https, no path, query or
 * credentials) and returns its serialisation (lower-case, default port dropped), or null.
 */
export function normalizeOrigin(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (url.username !== '' || url.password !== '' || url.pathname !== '/' || url.search !== '' || url.hash !== '') return null;
  return url.origin;
}
