/**
 * set_csp(object): a Content-Security-Policy built from directives written as object keys in
 * snake_case (`default_src` → `default-src`), with bare keywords quoted (`self` → `'self'`).
 */
import { RUNTIME, RvmError, typeName } from '../../plugins/sdk.js';
import type { PluginApi, Value, ValueObject } from '../../plugins/sdk.js';
import { isPlainObject } from '../../plugins/sdk.js';

/**
 * The directives of CSP Level 3 and its extensions that browsers implement. A name outside the
 * list is refused: a misspelt directive is silently ignored by browsers, which would leave the
 * page less protected than its author believes.
 */
export const CSP_DIRECTIVES: ReadonlySet<string> = new Set([
  'default-src',
  'script-src',
  'script-src-elem',
  'script-src-attr',
  'style-src',
  'style-src-elem',
  'style-src-attr',
  'img-src',
  'font-src',
  'connect-src',
  'media-src',
  'object-src',
  'frame-src',
  'child-src',
  'worker-src',
  'manifest-src',
  'prefetch-src',
  'fenced-frame-src',
  'base-uri',
  'form-action',
  'frame-ancestors',
  'navigate-to',
  'sandbox',
  'plugin-types',
  'report-uri',
  'report-to',
  'upgrade-insecure-requests',
  'block-all-mixed-content',
  'require-trusted-types-for',
  'trusted-types',
  'require-sri-for',
  'webrtc',
]);

/** Source keywords CSP requires in single quotes; written bare (or with `_`) they are quoted. */
const KEYWORDS: ReadonlySet<string> = new Set([
  'self',
  'none',
  'unsafe-inline',
  'unsafe-eval',
  'strict-dynamic',
  'unsafe-hashes',
  'report-sample',
  'unsafe-allow-redirects',
  'wasm-unsafe-eval',
  'inline-speculation-rules',
]);
/** Nonce and hash sources, also quoted when bare: `nonce-abc`, `sha256-…`. */
const NONCE_OR_HASH = /^(nonce|sha256|sha384|sha512)-[A-Za-z0-9+/_=-]+$/;
/**
 * What a source may contain: visible ASCII without `;` (it would start another directive) and
 * `,` (it would start a second policy) — the header-injection characters of a CSP.
 */
const SAFE_SOURCE = /^[\x21-\x2b\x2d-\x3a\x3c-\x7e]+$/;
const KEY = /^[A-Za-z][A-Za-z0-9_-]*$/;

/** Builds the policy text from a directives object; throws invalid_argument / invalid_header. */
export function buildCsp(directives: ValueObject): string {
  const parts: string[] = [];
  const seen = new Set<string>();
  for (const key of Object.keys(directives)) {
    const name = directiveName(key);
    if (seen.has(name)) throw new RvmError(`set_csp() has the directive ${name} twice`, RUNTIME.invalid_argument);
    seen.add(name);
    const sources = sourcesOf(name, directives[key] as Value);
    if (sources === null) continue;
    parts.push(sources.length === 0 ? name : `${name} ${sources.join(' ')}`);
  }
  if (parts.length === 0) throw new RvmError('set_csp() needs at least one directive, e.g. {default_src: "self"}', RUNTIME.invalid_argument);
  return parts.join('; ');
}

function directiveName(key: string): string {
  const name = KEY.test(key) ? key.toLowerCase().replaceAll('_', '-') : key;
  if (!CSP_DIRECTIVES.has(name)) throw new RvmError(`set_csp(): '${key}' is not a Content-Security-Policy directive`, RUNTIME.invalid_argument);
  return name;
}

/** The sources of one directive; null when the directive is left out (false or null). */
function sourcesOf(name: string, value: Value): string[] | null {
  if (value === null || value === false) return null;
  if (value === true) return [];
  const items = Array.isArray(value) ? value : [value];
  const out: string[] = [];
  for (const item of items) {
    if (typeof item !== 'string') throw new RvmError(`set_csp() expects ${name} to be text or a list of text, got ${typeName(item)}`, RUNTIME.type_error);
    for (const token of item.split(/[ \t]+/)) if (token !== '') out.push(quoted(name, token));
  }
  return out;
}

function quoted(name: string, token: string): string {
  if (!SAFE_SOURCE.test(token)) {
    throw new RvmError(`set_csp(): the value of ${name} contains ';', ',' or a control or non-ASCII character`, RUNTIME.invalid_header);
  }
  const bare = token.toLowerCase().replaceAll('_', '-');
  if (KEYWORDS.has(bare)) return `'${bare}'`;
  if (NONCE_OR_HASH.test(token)) return `'${token}'`;
  return token;
}

/** Registers set_csp. */
export function registerCsp(rvm: PluginApi): void {
  rvm.native(
    'set_csp',
    (ctx, directives) => {
      if (!isPlainObject(directives)) throw new RvmError(`set_csp() expects an object of directives, got ${typeName(directives)}`, RUNTIME.type_error);
      ctx.response.setHeader('content-security-policy', buildCsp(directives));
      return null;
    },
    {
      params: [{ name: 'directives', type: 'object', doc: "e.g. {default_src: 'self', img_src: ['self', 'data:'], upgrade_insecure_requests: true}" }],
      returns: 'null',
      doc: "Sets Content-Security-Policy from an object: keys are directives in snake_case (default_src → default-src), values text or a list of text; true gives a directive without value, false or null leaves it out. Keywords written bare are quoted (self → 'self', unsafe_inline → 'unsafe-inline', nonce-… and sha256-… too). Replaces any earlier policy. An unknown directive is an invalid_argument error; a value with ';', ',' or a control character an invalid_header error.",
    },
  );
}
