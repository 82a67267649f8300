/**
 * The CSRF natives and guard: csrf_token(), csrf_verify(submitted, stored) and `guard csrf`.
 */
import { HTTP, constantTimeEqual, normalizeOrigin, setCookie } from '../../plugins/sdk.js';
import type { AppSettings, CallContext, Halt, PluginApi } from '../../plugins/sdk.js';
import { CSRF_COOKIE, csrfRequestValid, csrfTokenValid, issueCsrfToken, sessionBinding, tokenInBody } from './csrf.js';

/** Where csrf_token() keeps the token it issued, so a second call in one request agrees. */
const LOCAL_TOKEN = 'crypto.csrf_token';

const CSRF_MESSAGE = 'CSRF token missing or invalid';

/**
 * Extra origins the guard accepts besides the request's own, from `rvm.config.json`
 * `{"csrf": {"trustedOrigins": ["https://app.example.com"]}}` (a front end on another origin, or
 * a proxy that rewrites Host). Throws on a malformed entry, failing the plugin's setup.
 */
export function trustedOrigins(settings: AppSettings): Set<string> {
  const section = settings.config.csrf;
  if (section === undefined) return new Set();
  if (section === null || typeof section !== 'object' || Array.isArray(section)) {
    throw new Error('rvm.config.json: csrf must be an object like {"trustedOrigins": ["https://app.example.com"]}');
  }
  const list = (section as Record<string, unknown>).trustedOrigins;
  if (list === undefined) return new Set();
  if (!Array.isArray(list)) throw new Error('rvm.config.json: csrf.trustedOrigins must be a list of origins like "https://app.example.com"');
  const out = new Set<string>();
  for (const entry of list) {
    const origin = typeof entry === 'string' ? normalizeOrigin(entry) : null;
    if (origin === null)
      throw new Error(`rvm.config.json: csrf.trustedOrigins has ${JSON.stringify(entry)}, which is not an origin like "https://app.example.com"`);
    out.add(origin);
  }
  return out;
}

/**
 * The CSRF token for this caller: the one in its `rvm_csrf` cookie when that is still valid for
 * its session (so pages open in several tabs keep working), else a new one set in that cookie.
 */
export function csrfTokenFor(ctx: CallContext): string {
  const cached = ctx.locals.get(LOCAL_TOKEN);
  if (typeof cached === 'string') return cached;
  const secret = ctx.app.secrets.appSecret();
  const binding = sessionBinding(ctx.request);
  const existing = ctx.request.cookies[CSRF_COOKIE];
  let token: string;
  if (csrfTokenValid(existing, secret, binding)) {
    token = existing!;
  } else {
    token = issueCsrfToken(secret, binding);
    // Not HttpOnly: the page reads it to echo it in X-CSRF-Token. Secure follows the request.
    setCookie(ctx, CSRF_COOKIE, token, { httpOnly: false, sameSite: 'Lax', path: '/' });
  }
  ctx.locals.set(LOCAL_TOKEN, token);
  return token;
}

/** Registers csrf_token, csrf_verify and the csrf guard. */
export function registerCsrf(rvm: PluginApi): void {
  const trusted = trustedOrigins(rvm.app);

  // The API reference's Try It fetches its token here for routes with `guard csrf`.
  rvm.endpoint(
    'csrf',
    (ctx) => {
      const token = csrfTokenFor(ctx);
      ctx.response.setHeader('cache-control', 'no-store');
      return ctx.respond(200, { token });
    },
    { doc: 'A CSRF token for this caller: sets the rvm_csrf cookie and answers {"token"}.' },
  );

  rvm.native('csrf_token', (ctx) => csrfTokenFor(ctx), {
    params: [],
    returns: 'text',
    doc: "The caller's CSRF token, also set in the rvm_csrf cookie (SameSite=Lax, not HttpOnly, Secure over HTTPS): 32 random bytes signed with HMAC-SHA256 under the app secret and bound to the caller's session (bearer token or rvm_session cookie). Put it in forms as the _csrf field or send it as X-CSRF-Token; routes with `guard csrf` check it.",
  });

  rvm.native(
    'csrf_verify',
    (_ctx, submitted, stored) => typeof submitted === 'string' && typeof stored === 'string' && submitted !== '' && constantTimeEqual(submitted, stored),
    {
      params: [
        { name: 'submitted', type: 'any', doc: 'the token the client sent' },
        { name: 'stored', type: 'any', doc: 'the token it must equal, e.g. request.cookies.rvm_csrf' },
      ],
      returns: 'bool',
      doc: 'True when both are the same non-empty text, compared in constant time; false for anything else (null, other types). The csrf guard also checks the signature and the Origin: prefer it.',
    },
  );

  rvm.guard(
    'csrf',
    (ctx) => {
      // `csrf: optional` checks like `csrf: required`: a CSRF check that never refuses protects nothing.
      const check = (c: CallContext): void | Halt => {
        if (csrfRequestValid(c.request, c.app.secrets.appSecret(), trusted)) return;
        return c.fail(HTTP.csrf_invalid.status, CSRF_MESSAGE, HTTP.csrf_invalid.code);
      };
      // A form's `_csrf` field is checked right after the body is read, before validation.
      if (tokenInBody(ctx.request)) ctx.afterBody(check);
      else return check(ctx);
    },
    {
      params: [],
      doc: "CSRF protection (OWASP signed double-submit cookie). GET, HEAD, OPTIONS and TRACE pass. Other methods pass only when the X-CSRF-Token header (or the _csrf field of a form body) equals the rvm_csrf cookie, the token's signature is valid for the caller's session, and an Origin header, if sent, is the request's own origin (or listed in csrf.trustedOrigins). Get a token from csrf_token() or GET /_app/csrf.",
      security: {
        name: 'csrfToken',
        scheme: {
          type: 'apiKey',
          in: 'header',
          name: 'X-CSRF-Token',
          description:
            'A token from GET /_app/csrf or csrf_token(), which also set the rvm_csrf cookie it must match; sent back as X-CSRF-Token (or a form field _csrf) on POST, PUT, PATCH and DELETE. A request with an Authorization header needs none.',
        },
      },
      responses: [
        {
          status: HTTP.csrf_invalid.status,
          code: HTTP.csrf_invalid.code,
          description:
            'The CSRF token is missing, does not match the rvm_csrf cookie, is not signed for this session, or the request came from another origin.',
        },
      ],
    },
  );
}
