/**
 * The session a request carries, as auth verifies it and CSRF binds its tokens to it: one
 * reading of the `Authorization: Bearer` header and the session cookie for both.
 */
import type { RequestInfo } from '../../vm/host/context.js';

/** The cookie a browser session carries its token in (set it with set_cookie after login). */
export const SESSION_COOKIE = 'rvm_session';

/** `Bearer <token68>` (RFC 6750 §2.1): the scheme in any case, spaces around the token. */
const BEARER = /^[Bb][Ee][Aa][Rr][Ee][Rr] +([^\s]+) *$/;

/** The token of a Bearer `Authorization` header; null when the request sends none (or another scheme). */
export function bearerToken(request: Pick<RequestInfo, 'headers'>): string | null {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return null;
  const match = BEARER.exec(header);
  return match === null ? null : match[1]!;
}

/** The token a request carries: a Bearer `Authorization` header first, else the session cookie; null when none. */
export function requestToken(request: Pick<RequestInfo, 'headers' | 'cookies'>): string | null {
  const bearer = bearerToken(request);
  if (bearer !== null) return bearer;
  const cookie = request.cookies[SESSION_COOKIE];
  return cookie === undefined || cookie === '' ? null : cookie;
}
