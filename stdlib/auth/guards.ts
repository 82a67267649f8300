/**
 * The guards of the auth plugin: `auth` (a valid JWT; `auth: optional` authenticates without
 * ever rejecting), `role(r1, ...)` (an authenticated caller holding one of the roles) and
 * `api_key` (a valid `X-API-Key`). Their metadata feeds the reference and the OpenAPI export.
 */
import { HALT, HTTP, RUNTIME, SESSION_COOKIE } from '../../plugins/sdk.js';
import type { AppSettings, CallContext, GuardFn, Halt, PluginApi, SecuritySchemeSpec, Value, ValueObject } from '../../plugins/sdk.js';
import { API_KEYS_ENV, API_KEYS_FILE, API_KEYS_NOT_CONFIGURED_MESSAGE, API_KEY_HEADER, apiKeysConfigured, type ApiKeyring } from './api-keys.js';
import {
  AUTH_NOT_CONFIGURED,
  AUTH_NOT_CONFIGURED_MESSAGE,
  JWT_SECRET_ENV,
  JWT_SECRET_FILE,
  SESSION_SCHEMES,
  STORED_USER_UNAVAILABLE,
  AUTH_FAILURES,
  configuredKey,
  unauthorized,
  type AuthSession,
} from './session.js';

/** The OpenAPI scheme of the `api_key` guard. */
export const API_KEY_SCHEME: SecuritySchemeSpec = {
  name: 'apiKeyAuth',
  scheme: {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
    description: `One of the app's keys (.secrets/${API_KEYS_FILE}, one per line, or ${API_KEYS_ENV}, comma-separated), handed out by its operators, sent as X-API-Key.`,
  },
};

/** True when the claims hold one of `roles`: the text claim `role`, or the list claim `roles`. */
export function holdsRole(user: ValueObject, roles: readonly Value[]): boolean {
  const role = Object.hasOwn(user, 'role') ? user.role : null;
  if (typeof role === 'string' && roles.includes(role)) return true;
  const held = Object.hasOwn(user, 'roles') ? user.roles : null;
  return Array.isArray(held) && held.some((r) => typeof r === 'string' && roles.includes(r));
}

/** Runs `then` on a value that may still be a Promise, staying synchronous when it is not. */
function after<T>(value: T | Promise<T>, then: (v: T) => void | Halt): void | Halt | Promise<void | Halt> {
  return value instanceof Promise ? value.then(then) : then(value);
}

/** The warning for an app that uses `auth` or `role` without a JWT key. */
function authSetup(app: AppSettings): string | null {
  return configuredKey(app.secrets) === null ? AUTH_NOT_CONFIGURED_MESSAGE : null;
}

/** Registers the auth, role and api_key guards. */
export function registerGuards(rvm: PluginApi, session: AuthSession, apiKeys: ApiKeyring): void {
  const auth: GuardFn = (ctx, _args, use) =>
    after(session.authenticate(ctx), (claims) => (claims === null && use.mode === 'required' ? unauthorized(ctx) : undefined));
  rvm.guard('auth', auth, {
    params: [],
    doc: `Requires a valid HS256 JWT, sent as Authorization: Bearer <token> or in the ${SESSION_COOKIE} cookie (the header wins), verified with ${JWT_SECRET_ENV} or .secrets/${JWT_SECRET_FILE}. With auth: optional a valid token authenticates and a missing or invalid one is let through (auth_check() tells which).`,
    security: [...SESSION_SCHEMES],
    responses: [...AUTH_FAILURES, AUTH_NOT_CONFIGURED],
    checkSetup: authSetup,
  });

  const role: GuardFn = (ctx, args, use) => {
    // Optional makes any guard advisory; a role check that never rejects does nothing.
    if (use.mode === 'optional') return;
    return after(session.user(ctx), (user) => {
      if (user === HALT) return HALT;
      if (user === null) return unauthorized(ctx);
      if (!holdsRole(user, args)) return forbidden(ctx, args);
    });
  };
  rvm.guard('role', role, {
    params: [
      { name: 'role', type: 'text', doc: 'a role that lets the caller through' },
      { name: 'roles', type: 'text', rest: true, doc: 'further roles, any of which is enough' },
    ],
    doc: 'Requires an authenticated caller (as the auth guard) holding one of the roles: the text field role, or the list field roles, of the stored User when the app has a type User and the sub of the token is a record id (a sub naming no stored User is 401; a database that cannot be read, 503 database_unavailable), else of the token.',
    security: [...SESSION_SCHEMES],
    responses: [
      ...AUTH_FAILURES,
      { status: HTTP.forbidden.status, code: HTTP.forbidden.code, description: 'The caller holds none of the roles.' },
      STORED_USER_UNAVAILABLE,
      AUTH_NOT_CONFIGURED,
    ],
    checkSetup: authSetup,
  });

  const apiKey: GuardFn = (ctx, _args, use) => {
    const presented = ctx.request.headers[API_KEY_HEADER];
    // Checked even without a header, so a missing configuration shows up on the first request.
    const ok = apiKeys.accepts(ctx.app.secrets, typeof presented === 'string' ? presented : '');
    if (!ok && use.mode === 'required') return ctx.fail(HTTP.invalid_api_key.status, 'Invalid or missing API key', HTTP.invalid_api_key.code);
  };
  rvm.guard('api_key', apiKey, {
    params: [],
    doc: `Requires an X-API-Key header equal to one of the app's keys: .secrets/${API_KEYS_FILE} (one per line, # comments) and ${API_KEYS_ENV} (comma-separated), compared in constant time.`,
    security: API_KEY_SCHEME,
    checkSetup: (app) => (apiKeysConfigured(app.secrets) ? null : API_KEYS_NOT_CONFIGURED_MESSAGE),
    responses: [
      { status: HTTP.invalid_api_key.status, code: HTTP.invalid_api_key.code, description: 'The X-API-Key header is missing or matches no key.' },
      {
        status: HTTP.internal_error.status,
        code: RUNTIME.api_key_not_configured,
        description: `The app lists no keys (.secrets/${API_KEYS_FILE} or ${API_KEYS_ENV}); outside dev mode the body says internal_error.`,
      },
    ],
  });
}

/** The 403 of the role guard. */
function forbidden(ctx: CallContext, roles: readonly Value[]): Halt {
  const names = roles.filter((r): r is string => typeof r === 'string');
  return ctx.fail(HTTP.forbidden.status, `Requires the role ${names.join(' or ')}`, HTTP.forbidden.code);
}
