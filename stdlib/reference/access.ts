/**
 * Who may see the API reference. Dev mode serves it; production (`--prod`) only when
 * rvm.config.json enables it, and then optionally behind HTTP Basic authentication — FastAPI's
 * choice (`docs_url=None`, or docs behind a dependency) as configuration:
 *
 *     "reference": true
 *     "reference": { "enabled": true, "basic": { "user": "docs", "password_secret": "reference_password" } }
 *
 * `false` (or `enabled: false`) turns it off in dev mode too.
 */
import { Buffer } from 'node:buffer';
import { HTTP, constantTimeEqual, type AppSettings, type CallContext, type EndpointFn, type Halt } from '../../plugins/sdk.js';

/** What a reference endpoint checks before answering. */
export interface ReferenceAccess {
  enabled: boolean;
  /** HTTP Basic credentials: the user, and the `.secrets/` file holding the password. */
  basic: { user: string; passwordSecret: string } | null;
}

/** The realm browsers show in their login prompt. */
export const BASIC_REALM = 'API reference';
/** Secret file names, as `secret()` accepts them. */
const SECRET_NAME = /^[A-Za-z0-9._-]+$/;
const KNOWN_KEYS = new Set(['enabled', 'basic']);
const KNOWN_BASIC_KEYS = new Set(['user', 'password_secret']);

/** Reads `reference` from the app's config; throws an Error naming the bad key (a plugin setup error). */
export function referenceAccess(app: AppSettings): ReferenceAccess {
  const value = app.config.reference;
  const where = 'rvm.config.json: reference';
  if (value === undefined) return { enabled: app.dev, basic: null };
  if (typeof value === 'boolean') return { enabled: value, basic: null };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`${where} must be true, false or an object`);
  const config = value as Record<string, unknown>;
  // A misspelt `basic` would leave production docs open: unknown keys are refused.
  for (const key of Object.keys(config)) if (!KNOWN_KEYS.has(key)) throw new Error(`${where}: unknown key '${key}' (known: enabled, basic)`);
  if (config.enabled !== undefined && typeof config.enabled !== 'boolean') throw new Error(`${where}.enabled must be true or false`);
  return { enabled: config.enabled ?? true, basic: config.basic === undefined ? null : basicConfig(config.basic, `${where}.basic`) };
}

function basicConfig(value: unknown, where: string): ReferenceAccess['basic'] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`${where} must be an object { "user", "password_secret" }`);
  const config = value as Record<string, unknown>;
  for (const key of Object.keys(config)) if (!KNOWN_BASIC_KEYS.has(key)) throw new Error(`${where}: unknown key '${key}' (known: user, password_secret)`);
  if (typeof config.user !== 'string' || config.user === '' || config.user.includes(':')) throw new Error(`${where}.user must be a non-empty text without ':'`);
  const secret = config.password_secret;
  if (typeof secret !== 'string' || !SECRET_NAME.test(secret)) throw new Error(`${where}.password_secret must name a file of .secrets/ ([A-Za-z0-9._-]+)`);
  return { user: config.user, passwordSecret: secret };
}

/** Answers 404, 401 or 500 when the request may not see the reference; null lets it through. */
export function checkAccess(ctx: CallContext, access: ReferenceAccess): Halt | null {
  if (!access.enabled) return ctx.fail(HTTP.not_found.status, HTTP.not_found.message, HTTP.not_found.code);
  if (access.basic === null) return null;
  let password: string | null;
  try {
    password = ctx.app.secrets.read(access.basic.passwordSecret);
  } catch {
    password = null;
  }
  if (password === null || password === '') {
    ctx.log(`API reference: Basic authentication is configured but .secrets/${access.basic.passwordSecret} is missing or empty`);
    return ctx.fail(HTTP.reference_auth_not_configured.status, HTTP.reference_auth_not_configured.message, HTTP.reference_auth_not_configured.code);
  }
  const sent = basicCredentials(ctx.request.headers.authorization);
  // Both comparisons always run, so timing does not tell which half was wrong.
  const userOk = constantTimeEqual(sent?.user ?? '', access.basic.user);
  const passwordOk = constantTimeEqual(sent?.password ?? '', password);
  if (sent !== null && userOk && passwordOk) return null;
  return ctx.fail(HTTP.unauthorized.status, 'Authentication required', HTTP.unauthorized.code, { 'WWW-Authenticate': `Basic realm="${BASIC_REALM}"` });
}

/** `Authorization: Basic base64(user:password)` decoded, or null. */
function basicCredentials(header: string | string[] | undefined): { user: string; password: string } | null {
  if (typeof header !== 'string') return null;
  const m = /^Basic +([A-Za-z0-9+/=]+) *$/i.exec(header);
  if (m === null) return null;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? null : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** `fn` behind the access check. */
export function guarded(fn: EndpointFn, access: ReferenceAccess): EndpointFn {
  return (ctx, app) => checkAccess(ctx, access) ?? fn(ctx, app);
}
