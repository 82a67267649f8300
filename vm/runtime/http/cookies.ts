/**
 * Cookies: parsing the request's `Cookie` header and serialising `Set-Cookie` with the runtime's
 * defaults (HttpOnly, SameSite=Lax, Path=/, Secure when the request came over HTTPS).
 */
import { RvmError } from '../../values.js';
import { RUNTIME } from '../../errors.js';
import type { CallContext } from '../../host/context.js';

/** Options for one `Set-Cookie`; unset options take the runtime defaults. */
export interface CookieOptions {
  /** Default true: scripts cannot read the cookie. */
  httpOnly?: boolean;
  /** Default 'Lax'. 'None' always adds Secure, as browsers require. */
  sameSite?: 'Lax' | 'Strict' | 'None';
  /** Default '/'. */
  path?: string;
  domain?: string;
  /** Default false here; `setCookie` defaults it to whether the request is secure. */
  secure?: boolean;
  /** Lifetime in seconds; 0 or less deletes the cookie. */
  maxAge?: number;
  expires?: Date;
}

/** Parses a `Cookie` header into name → value; the first occurrence of a name wins (RFC 6265 §5.4). */
export function parseCookies(header: string | string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (header === undefined) return out;
  const text = Array.isArray(header) ? header.join('; ') : header;
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf(';', start);
    if (end === -1) end = text.length;
    const eq = text.indexOf('=', start);
    if (eq !== -1 && eq < end) {
      const name = text.slice(start, eq).trim();
      if (name !== '' && !Object.hasOwn(out, name)) {
        let value = text.slice(eq + 1, end).trim();
        if (value.length >= 2 && value.charCodeAt(0) === 34 && value.charCodeAt(value.length - 1) === 34) value = value.slice(1, -1);
        // defineProperty: a cookie named `__proto__` is data, never the prototype.
        Object.defineProperty(out, name, { value: decodeCookieValue(value), writable: true, enumerable: true, configurable: true });
      }
    }
    start = end + 1;
  }
  return out;
}

function decodeCookieValue(value: string): string {
  if (value.indexOf('%') === -1) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** RFC 7230 token characters: what a cookie name may contain. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Attribute values (path, domain) must not end the attribute or the header early. */
const UNSAFE_ATTRIBUTE = /[;\x00-\x1f\x7f]/;

/** Serialises one `Set-Cookie` header value; the value is percent-encoded. Throws on an invalid name or attribute. */
export function serializeCookie(name: string, value: string, options: CookieOptions = {}): string {
  if (!TOKEN.test(name)) throw new RvmError(`invalid cookie name '${name}'`, RUNTIME.invalid_cookie);
  let out = `${name}=${encodeURIComponent(value)}`;
  const path = options.path ?? '/';
  if (UNSAFE_ATTRIBUTE.test(path)) throw new RvmError(`invalid cookie path '${path}'`, RUNTIME.invalid_cookie);
  out += `; Path=${path}`;
  if (options.domain !== undefined) {
    if (options.domain === '' || UNSAFE_ATTRIBUTE.test(options.domain)) throw new RvmError(`invalid cookie domain '${options.domain}'`, RUNTIME.invalid_cookie);
    out += `; Domain=${options.domain}`;
  }
  if (options.maxAge !== undefined) {
    if (!Number.isFinite(options.maxAge)) throw new RvmError('cookie maxAge must be a finite number of seconds', RUNTIME.invalid_cookie);
    const seconds = Math.max(0, Math.floor(options.maxAge));
    out += `; Max-Age=${seconds}`;
    // Max-Age=0 alone is honoured by browsers, Expires in the past also by older clients.
    if (seconds === 0 && options.expires === undefined) out += '; Expires=Thu, 01 Jan 1970 00:00:00 GMT';
  }
  if (options.expires !== undefined) {
    if (Number.isNaN(options.expires.getTime())) throw new RvmError('cookie expires is not a valid date', RUNTIME.invalid_cookie);
    out += `; Expires=${options.expires.toUTCString()}`;
  }
  if (options.httpOnly !== false) out += '; HttpOnly';
  const sameSite = options.sameSite ?? 'Lax';
  if (options.secure === true || sameSite === 'None') out += '; Secure';
  out += `; SameSite=${sameSite}`;
  return out;
}

/** Appends a `Set-Cookie` to the response being built; `secure` defaults to whether the request is. */
export function setCookie(ctx: CallContext, name: string, value: string, options: CookieOptions = {}): void {
  const secure = options.secure ?? ctx.request.secure;
  ctx.response.appendHeader('set-cookie', serializeCookie(name, value, { ...options, secure }));
}
