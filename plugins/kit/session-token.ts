/**
 * The session a request carries, as auth verifies it and CSRF binds its tokens to it: one
 * reading of the `Authorization: Bearer` header and the session cookie for both.
 */
import type { RequestInfo } from '../sdk.js';

/** The cookie a browser session carries its token in (set it with set_cookie after login). */
export const SESSION_COOKIE = 'rvm_session';

/** `Bearer <token68>` (RFC 6750 §2.1): the scheme in any case, spaces around the token. */
const BEARER = /^[Bb][Ee][Aa][Rr][Ee][Rr] +([^\s]+) *$/;

/** The token a request carries: a Bearer `Authorization` header first, else the session cookie; null when none. */
export function requestToken(request: Pick<RequestInfo, 'headers' | 'cookies'>): string | null {
  const header = request.headers.authorization;
  if (typeof header === 'string') {
    const match = BEARER.exec(header);
    if (match !== null) return match[1]!;
  }
  const cookie = request.cookies[SESSION_COOKIE];
  return cookie === undefined || cookie === '' ? null : cookie;
}
