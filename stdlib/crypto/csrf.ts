/**
 * CSRF protection by OWASP's signed double-submit cookie. A token is `nonce.signature`, where
 * nonce is 32 random bytes and signature = HMAC-SHA256(app secret, binding + '!' + nonce),
 * both base64url. The binding is the caller's session — the `Authorization: Bearer` token, else
 * the `rvm_session` cookie, else empty — so a token issued to one session is worthless in
 * another, and one planted by an attacker (cookie tossing) fails the signature check.
 *
 * The functions here are pure: the guard, `csrf_token()` and the runtime's `GET /_app/csrf`
 * share them.
 */
import { randomBytes } from 'node:crypto';
import { bearerToken, constantTimeEqual, normalizeOrigin, requestToken, signText } from '../../plugins/sdk.js';
import type { RequestInfo } from '../../plugins/sdk.js';

/** The cookie holding the token: readable by the page's scripts, so not HttpOnly. */
export const CSRF_COOKIE = 'rvm_csrf';
/** The request header the client echoes the token in (lower-case, as RequestInfo has it). */
export const CSRF_HEADER = 'x-csrf-token';
/** The form field an HTML form echoes the token in. */
export const CSRF_FIELD = '_csrf';
/** 256 bits of randomness per token: unguessable, as OWASP asks of the random part. */
export const NONCE_BYTES = 32;
/** Methods that must not change state (RFC 9110 §9.2.1): the guard lets them through. */
export const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

/** base64url of 32 bytes (nonce) and of a SHA-256 MAC (signature): 43 characters each. */
const TOKEN = /^([A-Za-z0-9_-]{43})\.([A-Za-z0-9_-]{43})$/;
const FORM_TYPES: ReadonlySet<string> = new Set(['application/x-www-form-urlencoded', 'multipart/form-data']);
/** What a Host / X-Forwarded-Host value may hold: a host name or IP literal and a port. */
const HOST = /^[A-Za-z0-9.\-_:[\]]+$/;

/** The session a token is bound to: the bearer token, else the `rvm_session` cookie, else ''. */
export function sessionBinding(request: Pick<RequestInfo, 'headers' | 'cookies'>): string {
  return requestToken(request) ?? '';
}

/** The signature of `nonce` for `binding`: HMAC-SHA256 under the app secret, base64url. */
export function signCsrf(secret: string, binding: string, nonce: string): string {
  return signText(secret, `${binding}!${nonce}`);
}

/** A fresh token for `binding`. */
export function issueCsrfToken(secret: string, binding: string): string {
  const nonce = randomBytes(NONCE_BYTES).toString('base64url');
  return `${nonce}.${signCsrf(secret, binding, nonce)}`;
}

/** True when `token` has the token's shape and its signature is valid for `binding`. */
export function csrfTokenValid(token: unknown, secret: string, binding: string): boolean {
  if (typeof token !== 'string') return false;
  const parts = TOKEN.exec(token);
  return parts !== null && constantTimeEqual(parts[2], signCsrf(secret, binding, parts[1]));
}

/**
 * The token the client submitted: the `X-CSRF-Token` header, else the `_csrf` field of a
 * urlencoded or multipart body. Null when absent or sent more than once.
 */
export function submittedToken(request: Pick<RequestInfo, 'headers' | 'body'>): string | null {
  const header = request.headers[CSRF_HEADER];
  if (header !== undefined) return typeof header === 'string' ? header : null;
  const type = single(request.headers['content-type'])?.split(';')[0].trim().toLowerCase();
  if (type === undefined || !FORM_TYPES.has(type)) return null;
  const body = request.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body) || !Object.hasOwn(body, CSRF_FIELD)) return null;
  const field = (body as Record<string, unknown>)[CSRF_FIELD];
  return typeof field === 'string' ? field : null;
}

/**

 * True when the guard must wait for the body: an unsafe method whose token can only be the
 * `_csrf` field of a form (no X-CSRF-Token header). Guards run before the body is read.
 */
export function tokenInBody(request: Pick<RequestInfo, 'method' | 'headers'>): boolean {
  if (SAFE_METHODS.has(request.method) || bearerToken(request) !== null || request.headers[CSRF_HEADER] !== undefined) return false;
  const type = single(request.headers['content-type'])?.split(';')[0].trim().toLowerCase();
  return type !== undefined && FORM_TYPES.has(type);
}

/**
 * The origin this request was addressed to: its scheme (HTTPS directly or, from a trusted proxy,
 * `X-Forwarded-Proto`) and its `Host` (from a trusted proxy, `X-Forwarded-Host` first). Null
 * when there is no usable host.
 */
export function ownOrigin(request: Pick<RequestInfo, 'headers' | 'secure' | 'proxied'>): string | null {
  let host = single(request.headers.host);
  if (request.proxied) {
    const forwarded = single(request.headers['x-forwarded-host']);
    if (forwarded !== undefined && forwarded.trim() !== '') host = forwarded.split(',')[0].trim();
  }
  if (host === undefined || !HOST.test(host)) return null;
  return normalizeOrigin(`${request.secure ? 'https' : 'http'}://${host}`);
}

/**
 * The Origin check of the guard: true when the request has no `Origin` header, or it names the
 * request's own origin or one of `trusted` (normalised origins). `Origin: null` is refused.
 */
export function originAccepted(request: Pick<RequestInfo, 'headers' | 'secure' | 'proxied'>, trusted: ReadonlySet<string>): boolean {
  const header = request.headers.origin;
  if (header === undefined) return true;
  if (typeof header !== 'string') return false;
  const origin = normalizeOrigin(header);
  if (origin === null) return false;
  return origin === ownOrigin(request) || trusted.has(origin);
}

/**
 * The whole decision of the `csrf` guard: safe methods pass, and so does a request that
 * authenticates with a Bearer `Authorization` header — it carries no ambient credential (a
 * browser never adds that header by itself, and it wins over the session cookie), as Django REST
 * framework exempts token authentication. Any other passes only when its Origin (if sent) is
 * acceptable, the submitted token equals the `rvm_csrf` cookie (constant time), and the token's
 * signature is valid for this caller's session.
 */
export function csrfRequestValid(request: RequestInfo, secret: string, trusted: ReadonlySet<string>): boolean {
  if (SAFE_METHODS.has(request.method) || bearerToken(request) !== null) return true;
  if (!originAccepted(request, trusted)) return false;
  const cookie = request.cookies[CSRF_COOKIE];
  const submitted = submittedToken(request);
  if (typeof cookie !== 'string' || submitted === null) return false;
  // Both checks always run, so timing tells nothing about which one failed.
  const same = constantTimeEqual(submitted, cookie);
  const signed = csrfTokenValid(cookie, secret, sessionBinding(request));
  return same && signed;
}

/** A header's value when it was sent once; undefined when absent or repeated. */
function single(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
