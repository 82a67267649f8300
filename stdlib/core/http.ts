/**
 * Core HTTP natives acting on the response being built: set_header, set_headers, set_cookie,
 * and next() for middleware.
 */
import { RUNTIME, RvmError, absent, entriesOf, isHeaderName, isHeaderValue, isPlainObject, setCookie, toText, typeName } from '../../plugins/sdk.js';
import type { CookieOptions, PluginApi, Value } from '../../plugins/sdk.js';

/** Headers that frame the message: the runtime computes them, a handler must not. */
const FRAMING_HEADERS: ReadonlySet<string> = new Set(['content-length', 'transfer-encoding']);
const SAME_SITE: Readonly<Record<string, 'Lax' | 'Strict' | 'None'>> = { lax: 'Lax', strict: 'Strict', none: 'None' };
const COOKIE_OPTIONS = ['max_age', 'expires', 'path', 'domain', 'http_only', 'same_site', 'secure'];

/** Registers set_header, set_headers, set_cookie and next. */
export function registerHttp(rvm: PluginApi): void {
  rvm.native(
    'set_header',
    (ctx, name, value) => {
      const [key, text] = checkHeader(name, value);
      ctx.response.setHeader(key, text);
      return null;
    },
    {
      params: [
        { name: 'name', type: 'text' },
        { name: 'value', type: 'any' },
      ],
      returns: 'null',
      doc: 'Sets a response header, replacing an earlier value; the value may be text, a number or a bool; a name that is not an HTTP token, a value with CR, LF or other control characters, or content-length/transfer-encoding is an invalid_header error.',
    },
  );

  rvm.native(
    'set_headers',
    (ctx, headers) => {
      // Check every entry before setting any, so a bad entry leaves the response untouched.
      const checked = entriesOf('set_headers', 'headers', headers).map(([name, value]) => checkHeader(name, value));
      for (const [key, text] of checked) ctx.response.setHeader(key, text);
      return null;
    },
    {
      params: [{ name: 'headers', type: 'object' }],
      returns: 'null',
      doc: 'Sets each key of the object as a response header, with the rules of set_header; if any entry is invalid, none is set.',
    },
  );

  rvm.native(
    'set_cookie',
    (ctx, name, value, options) => {
      if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
        throw new RvmError(`set_cookie() expects value to be text, got ${typeName(value)}`, RUNTIME.type_error);
      }
      setCookie(ctx, name, toText(value), cookieOptions(options));
      return null;
    },
    {
      params: [
        { name: 'name', type: 'text' },
        { name: 'value', type: 'any' },
        { name: 'options', type: 'object', optional: true },
      ],
      returns: 'null',
      doc: "Adds a Set-Cookie header (one per cookie; the value is percent-encoded, request.cookies decodes it); options {max_age (seconds), expires (ISO-8601 text or Unix seconds), path, domain, http_only, same_site ('Lax'|'Strict'|'None'), secure} default to HttpOnly, SameSite=Lax, Path=/, and Secure when the request came over HTTPS (always with SameSite=None); an invalid name or attribute is an invalid_cookie error, an unknown option an invalid_argument error.",
    },
  );
}

/** Validates a header name and value; returns the lower-case name and the value as text. */
function checkHeader(name: string, value: Value | undefined): [string, string] {
  const key = name.toLowerCase();
  if (!isHeaderName(key)) throw new RvmError(`invalid header name ${JSON.stringify(name)}`, RUNTIME.invalid_header);
  if (FRAMING_HEADERS.has(key)) throw new RvmError(`header '${key}' is set by the runtime`, RUNTIME.invalid_header);
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
    throw new RvmError(`set_header() expects the value of '${key}' to be text, got ${typeName(value)}`, RUNTIME.type_error);
  }
  const text = toText(value);
  if (!isHeaderValue(text)) throw new RvmError(`header '${key}' has a value with a line break or control character`, RUNTIME.invalid_header);
  return [key, text];
}

/** Turns the language options object into CookieOptions, refusing unknown keys and wrong types. */
function cookieOptions(options: Value | undefined): CookieOptions {
  const out: CookieOptions = {};
  if (absent(options)) return out;
  if (!isPlainObject(options)) throw new RvmError(`set_cookie() expects options to be an object, got ${typeName(options)}`, RUNTIME.type_error);
  for (const key of Object.keys(options)) {
    if (!COOKIE_OPTIONS.includes(key)) {
      throw new RvmError(`set_cookie() has no option '${key}' (options: ${COOKIE_OPTIONS.join(', ')})`, RUNTIME.invalid_argument);
    }
    const v = options[key];
    if (absent(v)) continue;
    switch (key) {
      case 'max_age':
        if (typeof v !== 'number' || !Number.isFinite(v)) throw optionType(key, 'a number of seconds', v);
        out.maxAge = v;
        break;
      case 'expires':
        out.expires = cookieDate(v);
        break;
      case 'path':
      case 'domain':
        if (typeof v !== 'string') throw optionType(key, 'text', v);
        out[key] = v;
        break;
      case 'http_only':
        if (typeof v !== 'boolean') throw optionType(key, 'a bool', v);
        out.httpOnly = v;
        break;
      case 'secure':
        if (typeof v !== 'boolean') throw optionType(key, 'a bool', v);
        out.secure = v;
        break;
      case 'same_site': {
        const mode = typeof v === 'string' ? SAME_SITE[v.toLowerCase()] : undefined;
        if (!mode) throw new RvmError(`set_cookie() option same_site must be 'Lax', 'Strict' or 'None', got ${JSON.stringify(v)}`, RUNTIME.invalid_argument);
        out.sameSite = mode;
        break;
      }
    }
  }
  return out;
}

function optionType(key: string, expected: string, v: Value): RvmError {
  return new RvmError(`set_cookie() expects option ${key} to be ${expected}, got ${typeName(v)}`, RUNTIME.type_error);
}

/** `expires`: ISO-8601 text (as now() gives) or Unix seconds (as timestamp() gives). */
function cookieDate(v: Value): Date {
  const date = typeof v === 'number' ? new Date(v * 1000) : typeof v === 'string' ? new Date(v) : null;
  if (!date || Number.isNaN(date.getTime())) {
    throw new RvmError(`set_cookie() option expires must be ISO-8601 text or Unix seconds, got ${JSON.stringify(v)}`, RUNTIME.invalid_argument);
  }
  return date;
}
