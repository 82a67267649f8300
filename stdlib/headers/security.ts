/**
 * security_headers(), set_hsts() and x_frame_options(): the recommended response headers.
 */
import { RUNTIME, RvmError } from '../../plugins/sdk.js';
import type { PluginApi, ResponseDraft } from '../../plugins/sdk.js';

/** helmet 8's default Content-Security-Policy, directive for directive (helmet's README). */
export const DEFAULT_CSP =
  "default-src 'self'; base-uri 'self'; font-src 'self' https: data:; form-action 'self'; frame-ancestors 'self'; img-src 'self' data:; object-src 'none'; script-src 'self'; script-src-attr 'none'; style-src 'self' https: 'unsafe-inline'; upgrade-insecure-requests";

/** One year, helmet's HSTS max-age, and the minimum the HSTS preload list accepts. */
export const HSTS_DEFAULT_SECONDS = 31_536_000;
/** The preload list's minimum max-age (hstspreload.org): one year. */
export const HSTS_PRELOAD_MIN_SECONDS = 31_536_000;
/** Largest max-age accepted: two years is what OWASP recommends; ten leaves room and catches typos in milliseconds. */
export const HSTS_MAX_SECONDS = 10 * 31_536_000;

/**
 * The helmet 8 default set (helmet's README), lower-case names. HSTS is included on plain HTTP
 * too, as helmet does: browsers ignore it there (RFC 6797 §8.1), and behind a TLS proxy without
 * trust proxy the app cannot tell that the client used HTTPS.
 */
export const SECURITY_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ['content-security-policy', DEFAULT_CSP],
  ['cross-origin-opener-policy', 'same-origin'],
  ['cross-origin-resource-policy', 'same-origin'],
  ['origin-agent-cluster', '?1'],
  ['referrer-policy', 'no-referrer'],
  ['strict-transport-security', `max-age=${HSTS_DEFAULT_SECONDS}; includeSubDomains`],
  ['x-content-type-options', 'nosniff'],
  ['x-dns-prefetch-control', 'off'],
  ['x-download-options', 'noopen'],
  ['x-frame-options', 'SAMEORIGIN'],
  ['x-permitted-cross-domain-policies', 'none'],
  ['x-xss-protection', '0'],
];

const FRAME_OPTIONS: ReadonlySet<string> = new Set(['DENY', 'SAMEORIGIN']);

/** Sets every header of SECURITY_HEADERS on `response` and removes X-Powered-By. */
export function applySecurityHeaders(response: ResponseDraft): void {
  for (const [name, value] of SECURITY_HEADERS) response.setHeader(name, value);
  response.removeHeader('x-powered-by');
}

/** The Strict-Transport-Security value; refuses a max-age out of range and a preload the list would reject. */
export function hstsValue(seconds: number, includeSubdomains: boolean, preload: boolean): string {
  if (seconds < 0 || seconds > HSTS_MAX_SECONDS) {
    throw new RvmError(`set_hsts() takes a max-age from 0 to ${HSTS_MAX_SECONDS} seconds, got ${seconds}`, RUNTIME.invalid_argument);
  }
  if (preload && (seconds < HSTS_PRELOAD_MIN_SECONDS || !includeSubdomains)) {
    // A preload directive the list would reject only misleads whoever reads the header.
    throw new RvmError(`set_hsts() with preload needs at least ${HSTS_PRELOAD_MIN_SECONDS} seconds and include_subdomains`, RUNTIME.invalid_argument);
  }
  return `max-age=${seconds}${includeSubdomains ? '; includeSubDomains' : ''}${preload ? '; preload' : ''}`;
}

/** Registers security_headers, set_hsts and x_frame_options. */
export function registerSecurityHeaders(rvm: PluginApi): void {
  rvm.native(
    'security_headers',
    (ctx) => {
      applySecurityHeaders(ctx.response);
      return null;
    },
    {
      params: [],
      returns: 'null',
      doc: "Sets helmet 8's recommended headers: Content-Security-Policy (default-src 'self' …), Strict-Transport-Security max-age=31536000; includeSubDomains, Cross-Origin-Opener-Policy and Cross-Origin-Resource-Policy same-origin, Referrer-Policy no-referrer, X-Content-Type-Options nosniff, X-Frame-Options SAMEORIGIN, X-DNS-Prefetch-Control off, X-Permitted-Cross-Domain-Policies none, Origin-Agent-Cluster ?1, X-Download-Options noopen, X-XSS-Protection 0; removes X-Powered-By. Later set_csp, set_hsts or x_frame_options calls replace their header.",
    },
  );

  rvm.native(
    'set_hsts',
    (ctx, seconds, includeSubdomains, preload) => {
      const value = hstsValue(seconds, includeSubdomains ?? true, preload ?? false);
      ctx.response.setHeader('strict-transport-security', value);
      return null;
    },
    {
      params: [
        { name: 'seconds', type: 'int', doc: `max-age, 0 to ${HSTS_MAX_SECONDS} (0 tells browsers to forget the policy)` },
        { name: 'include_subdomains', type: 'bool', optional: true, doc: 'default true' },
        { name: 'preload', type: 'bool', optional: true, doc: `default false; needs include_subdomains and at least ${HSTS_PRELOAD_MIN_SECONDS} seconds` },
      ],
      returns: 'null',
      doc: 'Sets Strict-Transport-Security: max-age=SECONDS[; includeSubDomains][; preload]. Browsers honour it only over HTTPS. A max-age out of range, or preload without a year and include_subdomains, is an invalid_argument error.',
    },
  );

  rvm.native(
    'x_frame_options',
    (ctx, value) => {
      const option = value.toUpperCase();
      if (!FRAME_OPTIONS.has(option)) {
        // ALLOW-FROM is obsolete and ignored by browsers; frame-ancestors in set_csp replaces it.
        throw new RvmError(
          `x_frame_options() takes 'DENY' or 'SAMEORIGIN', got ${JSON.stringify(value)} (use set_csp({frame_ancestors: ...}) for a list of origins)`,
          RUNTIME.invalid_argument,
        );
      }
      ctx.response.setHeader('x-frame-options', option);
      return null;
    },
    {
      params: [{ name: 'value', type: 'text', doc: "'DENY' or 'SAMEORIGIN' (any case)" }],
      returns: 'null',
      doc: 'Sets X-Frame-Options to DENY or SAMEORIGIN; anything else (ALLOW-FROM is obsolete) is an invalid_argument error. set_csp({frame_ancestors: ...}) is the modern equivalent.',
    },
  );
}
