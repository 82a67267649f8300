/**
 * The caller's identity: finds the token a request carries (`Authorization: Bearer`, else the
 * `rvm_session` cookie), verifies it with the app's JWT key, and memoises the verified claims per
 * request (`ctx.locals`) and across requests (a bounded cache keyed by the token), so a hot route
 * verifies a token asynchronously once and synchronously from then on. `auth_user()`, `auth_check()`.
 */
import { HALT, HTTP, RUNTIME, RvmError, SESSION_COOKIE, fromJson, requestToken } from '../../plugins/sdk.js';
import type { CallContext, ErrorResponseSpec, Halt, PluginApi, SecretSource, SecuritySchemeSpec, ValueObject } from '../../plugins/sdk.js';
import { BEARER_SCHEME_NAME, CLOCK_SKEW_SECONDS, isRevoked, keyBytes, revoke, verifyJwtClaims } from './jwt.js';
import { Rechecked, type Clock } from './rechecked.js';
import { TokenCache } from './token-cache.js';

/** The environment variable holding the JWT key; it wins over the file. */
export const JWT_SECRET_ENV = 'JWT_SECRET';
/** The `.secrets/` file holding the JWT key when the environment has none. */
export const JWT_SECRET_FILE = 'jwt_secret';
/**
 * Verified tokens kept across requests. Tokens are at most 8 KiB, so the cache stays under
 * 32 MiB at worst and near 2 MiB for ordinary tokens, while covering every active session of a
 * busy single process.
 */
export const TOKEN_CACHE_SIZE = 4096;
/** The challenge sent with every 401 of the auth guard and auth_user() (RFC 6750 §3). */
export const BEARER_CHALLENGE = { 'WWW-Authenticate': 'Bearer' } as const;

/** Keys in `ctx.locals`: the verified claims (shared with the cache: never mutated) and the user handed to code. */
const CLAIMS_LOCAL = 'auth.claims';
const USER_LOCAL = 'auth.user';
/** Set in `ctx.locals` when the request's token was revoked: its 401 says so (`token_revoked`). */
const REVOKED_LOCAL = 'auth.revoked';

/** What a StoredUserLookup answers when no record stands behind the token (no `User` type, or a `sub` that is no record id): the claims alone are the user. */
export const CLAIMS_ONLY = Symbol('claims only');

/** What a StoredUserLookup finds: the user's fields, no user (null), CLAIMS_ONLY, or HALT when the read failed and answered. */
export type StoredUser = ValueObject | null | typeof CLAIMS_ONLY | Halt;

/**
 * The hook that turns verified claims into the stored user: given the claims (their `sub` is the
 * user's id), the `User` record's fields; null when the app has users and none has that id (the
 * token names nobody: 401); CLAIMS_ONLY when the app has no `User` type or `sub` is not a record
 * id; HALT when the read
 * failed and the request was answered (503 `database_unavailable`), never the claims in its
 * place (stored-user.ts reads it through the SDK's stored records).
 */
export type StoredUserLookup = (ctx: CallContext, claims: ValueObject) => StoredUser | Promise<StoredUser>;

/** The user code reads: the fields, null when not authenticated, HALT when the request was answered. */
export type AuthUser = ValueObject | null | Halt;

export interface AuthSessionOptions {
  now?: Clock;
  cacheSize?: number;
  storedUser?: StoredUserLookup | null;
}

/** What an app without a JWT key is told: at `rvm check` and start (a warning), and by each request (500). */
export const AUTH_NOT_CONFIGURED_MESSAGE = `authentication is not configured: set the ${JWT_SECRET_ENV} environment variable or write the key to .secrets/${JWT_SECRET_FILE} (at least 32 random bytes, e.g. from secure_random(32))`;

/** The JWT key text of an app: JWT_SECRET, else `.secrets/jwt_secret`; null when neither is set. */
export function configuredKey(secrets: SecretSource): string | null {
  const fromEnv = secrets.env(JWT_SECRET_ENV);
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  const fromFile = secrets.read(JWT_SECRET_FILE);
  return fromFile === null || fromFile === '' ? null : fromFile;
}

/** The OpenAPI scheme of a token sent in the Authorization header. */
export const BEARER_SCHEME: SecuritySchemeSpec = {
  name: BEARER_SCHEME_NAME,
  scheme: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: `An HS256 JWT the app issues at sign-in (jwt_create, signed with ${JWT_SECRET_ENV} or .secrets/${JWT_SECRET_FILE}), sent as Authorization: Bearer <token>. It wins over the ${SESSION_COOKIE} cookie.`,
  },
};
/** The OpenAPI scheme of the same token in the session cookie, as browsers send it. */
export const SESSION_COOKIE_SCHEME: SecuritySchemeSpec = {
  name: 'cookieAuth',
  scheme: {
    type: 'apiKey',
    in: 'cookie',
    name: SESSION_COOKIE,
    description: `The same JWT in the ${SESSION_COOKIE} cookie, which the app sets at sign-in (set_cookie) or social login sets; browsers send it by themselves. Writes authenticated by it also need the CSRF token where a route has guard csrf.`,
  },
};
/** Either carries the caller's token: the auth and role guards and auth_user() accept both. */
export const SESSION_SCHEMES: readonly SecuritySchemeSpec[] = [BEARER_SCHEME, SESSION_COOKIE_SCHEME];

/** The 401 of every authentication failure, for the reference. */
export const UNAUTHORIZED: ErrorResponseSpec = {
  status: HTTP.unauthorized.status,
  code: HTTP.unauthorized.code,
  description: `No valid token: none sent (Authorization: Bearer or the ${SESSION_COOKIE} cookie), or it is expired, tampered with or not HS256.`,
  headers: ['WWW-Authenticate'],
};
/** The 401 of a token signed out (auth_logout, jwt_revoke), for the reference. */
export const TOKEN_REVOKED: ErrorResponseSpec = {
  status: HTTP.token_revoked.status,
  code: HTTP.token_revoked.code,
  description: 'The token was signed out (auth_logout, jwt_revoke): sign in again for a new one.',
  headers: ['WWW-Authenticate'],
};
/** The 401s of every authentication failure. */
export const AUTH_FAILURES: readonly ErrorResponseSpec[] = [UNAUTHORIZED, TOKEN_REVOKED];
/** The 500 of an app without a JWT key, for the reference. */
export const AUTH_NOT_CONFIGURED: ErrorResponseSpec = {
  status: HTTP.internal_error.status,
  code: RUNTIME.auth_not_configured,
  description: `The app has no JWT key (${JWT_SECRET_ENV} or .secrets/${JWT_SECRET_FILE}); outside dev mode the body says internal_error.`,
};
/** The 503 of a stored User that cannot be read, for the reference. */
export const STORED_USER_UNAVAILABLE: ErrorResponseSpec = {
  status: HTTP.database_unavailable.status,
  code: HTTP.database_unavailable.code,
  description: 'The stored User could not be read: the claims of the token are not used instead.',
};

/** The 401 every authentication failure answers, with the Bearer challenge; `token_revoked` for a signed-out token. */
export function unauthorized(ctx: CallContext): Halt {
  if (ctx.locals.get(REVOKED_LOCAL) === true) {
    return ctx.fail(HTTP.token_revoked.status, 'The token was revoked (signed out): sign in again', HTTP.token_revoked.code, BEARER_CHALLENGE);
  }
  return ctx.fail(HTTP.unauthorized.status, 'Authentication required', HTTP.unauthorized.code, BEARER_CHALLENGE);
}

function isPromise<T>(value: unknown): value is Promise<T> {
  return value instanceof Promise;
}

/** Authentication state of one app: its key (re-read at most once a second) and its verified-token cache. */
export class AuthSession {
  private readonly now: Clock;
  private readonly key: Rechecked<string | null>;
  private readonly cache: TokenCache;
  private readonly storedUser: StoredUserLookup | null;
  /** The key text the cache's entries were verified with, and its bytes. */
  private cacheKey: string | null = null;
  private keyData: Uint8Array = new Uint8Array();

  constructor(options: AuthSessionOptions = {}) {
    this.now = options.now ?? Date.now;
    this.key = new Rechecked(configuredKey, this.now);
    this.cache = new TokenCache(options.cacheSize ?? TOKEN_CACHE_SIZE);
    this.storedUser = options.storedUser ?? null;
  }

  /** Number of verified tokens cached (tests, diagnostics). */
  get cachedTokens(): number {
    return this.cache.size;
  }

  /**
   * The verified claims of the request's token, or null when it sent none, an invalid or a
   * revoked one. Synchronous when the request or the cache already knows the token and the store
   * answers synchronously (in-process); a Promise otherwise. Throws RvmError
   * `auth_not_configured` when the app has no JWT key, `weak_secret` when it is short.
   */
  authenticate(ctx: CallContext): ValueObject | null | Promise<ValueObject | null> {
    const locals = ctx.locals;
    if (locals.has(CLAIMS_LOCAL)) return locals.get(CLAIMS_LOCAL) as ValueObject | null;
    const claims = this.verified(ctx, requestToken(ctx.request));
    return isPromise<ValueObject | null>(claims) ? claims.then((c) => this.admit(ctx, c)) : this.admit(ctx, claims);
  }

  /**
   * The claims of `token` verified with the app's key (the cache first), or null when it is no
   * valid token; the deny list is not asked. Throws as `authenticate` does.
   */
  verified(ctx: CallContext, token: string | null): ValueObject | null | Promise<ValueObject | null> {
    const now = this.now();
    // Before looking at the token: an app without a key hears so at its first request, token or not.
    const keyText = this.currentKey(ctx.app.secrets, now);
    if (token === null) return null;
    const cached = this.cache.get(token, now);
    if (cached !== undefined) return cached;
    return verifyJwtClaims(token, this.keyData, now).then((payload) => {
      const claims = payload === null ? null : (fromJson(payload) as ValueObject);
      // A key rotated while jose was verifying must not receive an entry checked with the old one.
      if (claims !== null && this.cacheKey === keyText) {
        this.cache.set(token, claims, ((payload!.exp as number) + CLOCK_SKEW_SECONDS) * 1000);
      }
      return claims;
    });
  }

  /** Keeps for the request the claims of its token, or null when it sent none, an invalid one or a revoked one (asked of the shared store). */
  private admit(ctx: CallContext, claims: ValueObject | null): ValueObject | null | Promise<ValueObject | null> {
    const settle = (revoked: boolean): ValueObject | null => {
      if (revoked) ctx.locals.set(REVOKED_LOCAL, true);
      const admitted = revoked ? null : claims;
      ctx.locals.set(CLAIMS_LOCAL, admitted);
      return admitted;
    };
    if (claims === null) return settle(false);
    const revoked = isRevoked(ctx.store, claims);
    return isPromise<boolean>(revoked) ? revoked.then(settle) : settle(revoked);
  }

  /**
   * `auth_logout()`: revokes the request's own token, which from then on is no credential in this
   * request either. False when it sent no valid token, or one without a `jti` (not revocable).
   */
  logout(ctx: CallContext): boolean | Promise<boolean> {
    const signOut = (claims: ValueObject | null): boolean | Promise<boolean> => {
      if (claims === null) return false;
      const revoked = revoke(ctx.store, claims, this.now());
      const forget = (done: boolean): boolean => {
        if (done)
          for (const [key, value] of [
            [CLAIMS_LOCAL, null],
            [USER_LOCAL, null],
            [REVOKED_LOCAL, true],
          ] as const)
            ctx.locals.set(key, value);
        return done;
      };
      return isPromise<boolean>(revoked) ? revoked.then(forget) : forget(revoked);
    };
    const claims = this.authenticate(ctx);
    return isPromise<ValueObject | null>(claims) ? claims.then(signOut) : signOut(claims);
  }

  /** `jwt_revoke(token)`: revokes a token signed with the app's key; false when it is no valid token or has no `jti`. */
  revokeToken(ctx: CallContext, token: string | null): boolean | Promise<boolean> {
    const claims = this.verified(ctx, token);
    const revokeIt = (c: ValueObject | null): boolean | Promise<boolean> => (c === null ? false : revoke(ctx.store, c, this.now()));
    return isPromise<ValueObject | null>(claims) ? claims.then(revokeIt) : revokeIt(claims);
  }

  /**
   * The authenticated user for code to read: a private copy of the claims with the stored
   * user's fields merged over them (see StoredUserLookup); null when not authenticated or the
   * token names no stored user; HALT when reading the stored user failed and answered.
   */
  user(ctx: CallContext): AuthUser | Promise<AuthUser> {
    const locals = ctx.locals;
    if (locals.has(USER_LOCAL)) return locals.get(USER_LOCAL) as ValueObject | null;
    const claims = this.authenticate(ctx);
    return isPromise<ValueObject | null>(claims) ? claims.then((c) => this.userOf(ctx, c)) : this.userOf(ctx, claims);
  }

  /** Builds (and memoises) the user of verified `claims`. */
  private userOf(ctx: CallContext, claims: ValueObject | null): AuthUser | Promise<AuthUser> {
    if (claims === null) {
      ctx.locals.set(USER_LOCAL, null);
      return null;
    }
    const remember = (stored: StoredUser): AuthUser => {
      // The request is answered already (503): nothing to remember, nothing to fall back on.
      if (stored === HALT) return HALT;
      // A copy: code may change fields of what auth_user() returns; the cached claims must not change.
      const user = stored === null ? null : (fromJson(claims) as ValueObject);
      if (user !== null && stored !== CLAIMS_ONLY) Object.assign(user, fromJson(stored));
      ctx.locals.set(USER_LOCAL, user);
      return user;
    };
    if (this.storedUser === null) return remember(CLAIMS_ONLY);
    const stored = this.storedUser(ctx, claims);
    return isPromise<StoredUser>(stored) ? stored.then(remember) : remember(stored);
  }

  /** The app's key text, clearing the cache when it changed. Throws when none is configured or it is weak. */
  private currentKey(secrets: SecretSource, now: number): string {
    const keyText = this.key.get(secrets, now);
    if (keyText === null) {
      throw new RvmError(AUTH_NOT_CONFIGURED_MESSAGE, RUNTIME.auth_not_configured);
    }
    if (keyText !== this.cacheKey) {
      this.keyData = keyBytes(`the JWT key (${JWT_SECRET_ENV} or .secrets/${JWT_SECRET_FILE})`, keyText);
      this.cache.clear();
      this.cacheKey = keyText;
    }
    return keyText;
  }
}

/** Registers auth_user and auth_check on `session`. */
export function registerSession(rvm: PluginApi, session: AuthSession): void {
  rvm.native(
    'auth_user',
    (ctx) => {
      const user = session.user(ctx);
      if (isPromise<AuthUser>(user)) return user.then((u): ValueObject | Halt => u ?? unauthorized(ctx));
      return user ?? unauthorized(ctx);
    },
    {
      params: [],
      returns: 'object',
      security: [...SESSION_SCHEMES],
      responses: [...AUTH_FAILURES, STORED_USER_UNAVAILABLE, AUTH_NOT_CONFIGURED],
      doc: `The verified claims of the caller's token (Authorization: Bearer, else the ${SESSION_COOKIE} cookie), with the stored User's fields merged over them once the app has a type User (then a token whose sub is a record id naming no stored User answers 401, and a database that cannot be read 503 database_unavailable, never the claims alone). Without a valid token it ends the request with 401 unauthorized and WWW-Authenticate: Bearer, so a guard_definition may call it without a prior guard auth (use auth_check() for optional flows). auth_not_configured when the app has no ${JWT_SECRET_ENV} or .secrets/${JWT_SECRET_FILE}.`,
    },
  );

  rvm.native('auth_logout', (ctx) => session.logout(ctx), {
    params: [],
    returns: 'bool',
    doc: `Signs the caller out: the request's token (Authorization: Bearer, else the ${SESSION_COOKIE} cookie) goes on the deny list in the shared store until it expires, so the auth and role guards, auth_user() and jwt_verify refuse it on every worker and machine (401 token_revoked), this request included. True when a token was revoked; false when the request carries no valid token, or one without a jti (tokens of jwt_create always have one). It does not delete the cookie: set_cookie('${SESSION_COOKIE}', '', { max_age: 0 }). 503 store_full rather than a forgotten revocation when the store's security budget is full.`,
  });

  rvm.native('jwt_revoke', (ctx, token) => session.revokeToken(ctx, typeof token === 'string' ? token : null), {
    // What is not a token revokes nothing: false, never an error.
    params: [{ name: 'token', type: 'text', selfChecked: true }],
    returns: 'bool',
    doc: `Puts a token signed with the app's key (${JWT_SECRET_ENV} or .secrets/${JWT_SECRET_FILE}, as the auth guard verifies) on the deny list in the shared store until its exp, so the auth and role guards, auth_user() and jwt_verify refuse it on every worker and machine (401 token_revoked). True when it is revoked; false when it is not a valid token of that key (expired, tampered with) or has no jti. 503 store_full rather than a forgotten revocation when the store's security budget is full.`,
  });

  rvm.native(
    'auth_check',
    (ctx) => {
      const claims = session.authenticate(ctx);
      return isPromise<ValueObject | null>(claims) ? claims.then((c) => c !== null) : claims !== null;
    },
    {
      params: [],
      returns: 'bool',
      doc: `True when the request carries a valid token (Authorization: Bearer, else the ${SESSION_COOKIE} cookie); never rejects. auth_not_configured when the app has no ${JWT_SECRET_ENV} or .secrets/${JWT_SECRET_FILE}.`,
    },
  );
}
