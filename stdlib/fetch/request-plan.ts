/**
 * `http_fetch(url, options?)`'s arguments checked and turned into what is sent: the URL, the
 * method, the headers, the body, and the limits of the call (spec/plugins/fetch.md).
 * Secrets are revealed here, into what goes on the wire, and nowhere else.
 */
import {
  RUNTIME,
  RvmError,
  SecretText,
  absent,
  checkLength,
  entriesOf,
  isHeaderName,
  isHeaderValue,
  isPlainObject,
  revealText,
  typeName,
} from '../../plugins/sdk.js';
import type { NativeBudget, Value } from '../../plugins/sdk.js';

/** How long a call may take by default, connection to the last byte: a slow API answers in seconds. */
export const DEFAULT_TIMEOUT_MS = 10_000;
/** The longest `timeout_ms`: the request's own deadline (`limits.wallTimeMs`, 30 s) ends it sooner anyway. */
export const MAX_TIMEOUT_MS = 60_000;
/** Bytes of an answer read by default: API answers are kilobytes. */
export const DEFAULT_MAX_BYTES = 1024 * 1024;
/** The largest `max_bytes`: the answer becomes one text, and a text holds at most MAX_TEXT_LENGTH (16 Mi) characters. */
export const MAX_MAX_BYTES = 16 * 1024 * 1024;

/** Methods a call may use (RFC 9110 §9; CONNECT and TRACE are for proxies and diagnostics, not APIs). */
const METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
/** Headers that frame or route the message: undici sets them from the URL and the body. */
const TRANSPORT_HEADERS: ReadonlySet<string> = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'expect',
  'te',
  'trailer',
]);
const OPTIONS = ['method', 'headers', 'json', 'form', 'body', 'timeout_ms', 'max_bytes', 'follow_redirects'];

/** Which redirects are followed: none (the 3xx is the answer), those on the same host, or any. */
export type RedirectPolicy = 'none' | 'same_host' | 'any_host';

/** One call, checked. */
export interface RequestPlan {
  url: URL;
  method: string;
  /** Lower-case names; values revealed. */
  headers: Record<string, string>;
  /** Names whose value was a secret: not sent on to another host. */
  secretHeaders: Set<string>;
  body: string | null;
  timeoutMs: number;
  maxBytes: number;
  redirects: RedirectPolicy;
}

function optionType(key: string, expected: string, v: Value): RvmError {
  return new RvmError(`http_fetch() expects option ${key} to be ${expected}, got ${typeName(v)}`, RUNTIME.type_error);
}

/** Text or a secret, revealed; else a type_error naming `what`. */
function textOrSecret(what: string, v: Value): string {
  if (typeof v !== 'string' && !(v instanceof SecretText))
    throw new RvmError(`http_fetch() expects ${what} to be text or a secret, got ${typeName(v)}`, RUNTIME.type_error);
  return revealText(v);
}

/**
 * The URL to fetch: absolute, `http:` or `https:`, without credentials (they would be sent
 * to every host a redirect leads to, and show wherever a URL is logged: a header says them
 * once, to one host). Errors name the URL's scheme or host, never its path or query.
 */
export function checkedUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new RvmError('http_fetch() expects an absolute http: or https: URL', RUNTIME.fetch_invalid_url);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new RvmError(`http_fetch() fetches http: and https: URLs, not ${url.protocol}`, RUNTIME.fetch_invalid_url);
  if (url.username !== '' || url.password !== '') {
    throw new RvmError(`http_fetch() refuses a URL with a user name or password (${url.host}): send credentials in a header`, RUNTIME.fetch_invalid_url);
  }
  url.hash = '';
  return url;
}

/** A whole number in 1..max, or the default when absent. */
function bounded(key: string, v: Value | undefined, fallback: number, max: number): number {
  if (absent(v)) return fallback;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw optionType(key, 'an int', v);
  if (v < 1 || v > max) throw new RvmError(`http_fetch() option ${key} must be from 1 to ${max}, got ${v}`, RUNTIME.invalid_argument);
  return v;
}

/** JSON text of a value, secrets revealed (JSON.stringify calls toJSON, which hides them, before the replacer sees the original). */
function revealingJson(value: Value): string {
  try {
    return JSON.stringify(value, function (this: Record<string, unknown>, key: string, shown: unknown) {
      const original = this[key];
      return original instanceof SecretText ? original.reveal() : shown;
    });
  } catch (error) {
    throw new RvmError(`http_fetch() option json: ${(error as Error).message}`, RUNTIME.invalid_argument);
  }
}

/** `a=1&b=x+y` of an object of texts, numbers, bools and secrets (a list repeats its key; null leaves it out). */
function formText(form: Value): string {
  const params = new URLSearchParams();
  for (const [key, value] of entriesOf('http_fetch', 'option form', form)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item === null) continue;
      if (typeof item === 'number' || typeof item === 'boolean') params.append(key, String(item));
      else params.append(key, textOrSecret(`form field '${key}'`, item));
    }
  }
  return params.toString();
}

function redirectPolicy(v: Value | undefined): RedirectPolicy {
  if (absent(v) || v === true) return 'same_host';
  if (v === false) return 'none';
  if (v === 'any_host') return 'any_host';
  throw new RvmError(`http_fetch() option follow_redirects must be true (same host), false or 'any_host', got ${JSON.stringify(v)}`, RUNTIME.invalid_argument);
}

/** Checks `url` and `options` and charges their size to `budget`. */
export function planRequest(url: Value, options: Value | undefined, budget: NativeBudget): RequestPlan {
  const urlText = textOrSecret('url', url);
  budget.chargeText(urlText.length);
  const plan: RequestPlan = {
    url: checkedUrl(urlText),
    method: 'GET',
    // No prototype: a header named `__proto__` is a header like any other.
    headers: Object.assign(Object.create(null) as Record<string, string>, { 'user-agent': 'rvm', accept: 'application/json, text/plain;q=0.9, */*;q=0.8' }),
    secretHeaders: new Set(),
    body: null,
    timeoutMs: DEFAULT_TIMEOUT_MS,
    maxBytes: DEFAULT_MAX_BYTES,
    redirects: 'same_host',
  };
  if (absent(options)) return plan;
  if (!isPlainObject(options)) throw new RvmError(`http_fetch() expects options to be an object, got ${typeName(options)}`, RUNTIME.type_error);
  for (const key of Object.keys(options)) {
    if (!OPTIONS.includes(key)) throw new RvmError(`http_fetch() has no option '${key}' (options: ${OPTIONS.join(', ')})`, RUNTIME.invalid_argument);
  }
  const { method, headers, json, form, body } = options;
  if (!absent(method)) {
    if (typeof method !== 'string') throw optionType('method', 'text', method);
    plan.method = method.toUpperCase();
    if (!METHODS.has(plan.method))
      throw new RvmError(`http_fetch() option method must be one of ${[...METHODS].join(', ')}, got ${JSON.stringify(method)}`, RUNTIME.invalid_argument);
  }
  plan.timeoutMs = bounded('timeout_ms', options.timeout_ms, DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS);
  plan.maxBytes = bounded('max_bytes', options.max_bytes, DEFAULT_MAX_BYTES, MAX_MAX_BYTES);
  plan.redirects = redirectPolicy(options.follow_redirects);
  if (!absent(headers)) addHeaders(plan, headers, budget);

  const bodies = [json, form, body].filter((b) => !absent(b)).length;
  if (bodies > 1) throw new RvmError('http_fetch() takes one of the options json, form and body', RUNTIME.invalid_argument);
  if (!absent(json)) setBody(plan, revealingJson(json), 'application/json');
  else if (!absent(form)) setBody(plan, formText(form), 'application/x-www-form-urlencoded');
  else if (!absent(body)) setBody(plan, textOrSecret('option body', body), 'text/plain; charset=utf-8');
  if (plan.body !== null) {
    if (plan.method === 'GET' || plan.method === 'HEAD')
      throw new RvmError(`http_fetch() cannot send a body with ${plan.method}: set method`, RUNTIME.invalid_argument);
    budget.chargeText(plan.body.length);
  }
  return plan;
}

function setBody(plan: RequestPlan, text: string, contentType: string): void {
  plan.body = checkLength('http_fetch', text);
  plan.headers['content-type'] ??= contentType;
}

/** Adds the `headers` option: names HTTP tokens, values text, numbers, bools or secrets without line breaks. */
function addHeaders(plan: RequestPlan, headers: Value, budget: NativeBudget): void {
  const entries = entriesOf('http_fetch', 'option headers', headers);
  budget.chargeItems(entries.length);
  for (const [name, value] of entries) {
    const key = name.toLowerCase();
    if (!isHeaderName(key)) throw new RvmError(`http_fetch() header name ${JSON.stringify(name)} is not an HTTP token`, RUNTIME.invalid_header);
    if (TRANSPORT_HEADERS.has(key)) throw new RvmError(`http_fetch() sets header '${key}' itself`, RUNTIME.invalid_header);
    const text = typeof value === 'number' || typeof value === 'boolean' ? String(value) : textOrSecret(`header '${key}'`, value);
    // The message names the header, never its value: it may be a secret.
    if (!isHeaderValue(text)) throw new RvmError(`http_fetch() header '${key}' has a line break or control character`, RUNTIME.invalid_header);
    budget.chargeText(text.length);
    plan.headers[key] = text;
    if (value instanceof SecretText) plan.secretHeaders.add(key);
  }
}
