/**
 * JSON Web Tokens with jose: HS256 only (RFC 7518 §3.2), keys of at least 32 bytes, `iat`, `exp`
 * and a random `jti` set by rvm and `exp` always required, verification that never trusts the
 * token's own `alg` header. `jwt_create`, `jwt_verify`, `jwt_is_expired`.
 *
 * Log-out for stateless tokens: a revoked token's `jti` goes on a deny list in the shared store
 * (`ctx.store`: in-process, the primary's over IPC under `--workers`, Redis across machines), kept
 * until the token would expire anyway, so every worker and machine refuses it. The entries are
 * security state (SECURITY_KEY_PREFIX): a flood of other keys never pushes one out, and a full
 * budget refuses a new revocation (503 `store_full`) rather than forget a live one.
 */
import { randomBytes } from 'node:crypto';
import { decodeJwt } from 'jose/jwt/decode';
import { RUNTIME, HostObject, RvmError, SECURITY_KEY_PREFIX, SecretText, fromJson, onFirstUse, typeName } from '../../plugins/sdk.js';
import type { KeyValueStore, PluginApi, Value, ValueObject } from '../../plugins/sdk.js';

/** jose's signing and verification, imported by the first token made or checked (decoding alone is light). */
const loadJose = onFirstUse(() => import('jose'));

/** The one algorithm rvm signs and accepts: a key serves one algorithm (RFC 8725 §3.1). */
export const JWT_ALGORITHM = 'HS256';
/** RFC 7518 §3.2: an HS256 key must be at least as long as the hash output (256 bits). */
export const MIN_SECRET_BYTES = 32;
/** Clock skew tolerated on `exp`/`nbf` between the server that signs and the one that verifies. */
export const CLOCK_SKEW_SECONDS = 30;
/**
 * Longest token accepted or created. A browser keeps at most ~4 KiB per cookie and servers cap a
 * header near 8–16 KiB; anything longer is not a token rvm issued and is refused unparsed.
 */
export const MAX_TOKEN_LENGTH = 8 * 1024;
/** Longest lifetime `jwt_create` gives: a credential meant to outlive a year should be an API key. */
export const MAX_TTL_SECONDS = 366 * 24 * 60 * 60;
/** Random bytes of the `jti` rvm gives a token: 128 bits, so two tokens never share one. */
const TOKEN_ID_BYTES = 16;
/** Nesting allowed in claims: deep enough for any real payload, and it stops a cyclic object. */
const MAX_CLAIMS_DEPTH = 32;
/** Registered claims (RFC 7519 §4.1) that must be text when given, or jose refuses the token later. */
const TEXT_CLAIMS = ['iss', 'sub', 'jti'] as const;

/** The verification options: never let the token's header choose the algorithm. */
const VERIFY_OPTIONS = { algorithms: [JWT_ALGORITHM], clockTolerance: CLOCK_SKEW_SECONDS, requiredClaims: ['exp'] };

/**
 * The bytes of an HS256 key given as text or a SecretText; `where` names it in errors
 * (`jwt_create()`). Throws RvmError `weak_secret` under 32 bytes, `type_error` for a non-text.
 */
export function keyBytes(where: string, secret: Value | undefined): Uint8Array {
  let text: string;
  if (secret instanceof SecretText) text = secret.reveal();
  else if (typeof secret === 'string') text = secret;
  else throw new RvmError(`${where} expects secret to be text, got ${typeName(secret)}`, RUNTIME.type_error);
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length < MIN_SECRET_BYTES) {
    throw new RvmError(
      // The message never tells the key's length: an error page or log line must not narrow down a secret.
      `${where}: the secret is too short: an HS256 key needs at least ${MIN_SECRET_BYTES} random bytes. ` +
        'A human password is not a key: generate one with secure_random(32) and keep it in .secrets/ or the environment.',
      RUNTIME.weak_secret,
    );
  }
  return bytes;
}

/** Seconds since the epoch, as JWT NumericDates count them. */
function seconds(nowMs: number): number {
  return Math.floor(nowMs / 1000);
}

/** Copies language claims to plain JSON, refusing what a JWT cannot carry (secrets, host values, NaN, cycles). */
function plainClaims(value: Value, path: string, depth: number): unknown {
  if (depth > MAX_CLAIMS_DEPTH) throw new RvmError(`jwt_create(): claims nest deeper than ${MAX_CLAIMS_DEPTH} levels at ${path}`, RUNTIME.invalid_claims);
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new RvmError(`jwt_create(): claim ${path} is not a finite number`, RUNTIME.invalid_claims);
    return value;
  }
  if (value instanceof SecretText) {
    throw new RvmError(`jwt_create(): claim ${path} is a secret; a JWT payload is readable by anyone who holds the token`, RUNTIME.invalid_claims);
  }
  if (value instanceof HostObject) throw new RvmError(`jwt_create(): claim ${path} is a ${value.typeName}, not JSON data`, RUNTIME.invalid_claims);
  if (Array.isArray(value)) return value.map((v, i) => plainClaims(v, `${path}[${i}]`, depth + 1));
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    Object.defineProperty(out, key, { value: plainClaims(value[key]!, `${path}.${key}`, depth + 1), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** Checks the types of registered claims a caller gave, so a token rvm signs is one it can verify. */
function checkRegisteredClaims(claims: Record<string, unknown>): void {
  for (const name of TEXT_CLAIMS) {
    if (claims[name] !== undefined && typeof claims[name] !== 'string') {
      throw new RvmError(`jwt_create(): claim '${name}' must be text (RFC 7519 §4.1)`, RUNTIME.invalid_claims);
    }
  }
  const aud = claims.aud;
  if (aud !== undefined && typeof aud !== 'string' && !(Array.isArray(aud) && aud.every((a) => typeof a === 'string'))) {
    throw new RvmError("jwt_create(): claim 'aud' must be text or a list of texts (RFC 7519 §4.1.3)", RUNTIME.invalid_claims);
  }
  if (claims.nbf !== undefined && typeof claims.nbf !== 'number') {
    throw new RvmError("jwt_create(): claim 'nbf' must be a number of Unix seconds", RUNTIME.invalid_claims);
  }
}

/**
 * Signs `claims` with HS256 for `ttlSeconds`; `iat` and `exp` are set here and replace any given.
 * Throws RvmError `invalid_claims`, `invalid_argument` (ttl), `weak_secret`, `type_error`.
 */
export async function createJwt(
  claims: Value | undefined,
  secret: Value | undefined,
  ttlSeconds: Value | undefined,
  nowMs: number = Date.now(),
): Promise<string> {
  if (claims === null || claims === undefined || typeof claims !== 'object' || Array.isArray(claims) || claims instanceof HostObject) {
    throw new RvmError(`jwt_create() expects claims to be an object, got ${typeName(claims)}`, RUNTIME.type_error);
  }
  if (typeof ttlSeconds !== 'number' || !Number.isInteger(ttlSeconds) || ttlSeconds <= 0 || ttlSeconds > MAX_TTL_SECONDS) {
    throw new RvmError(
      `jwt_create() expects ttl_seconds to be a whole number of seconds from 1 to ${MAX_TTL_SECONDS}, got ${JSON.stringify(ttlSeconds ?? null)}`,
      RUNTIME.invalid_argument,
    );
  }
  const key = keyBytes('jwt_create()', secret);
  const payload = plainClaims(claims, 'claims', 0) as Record<string, unknown>;
  checkRegisteredClaims(payload);
  const iat = seconds(nowMs);
  payload.iat = iat;
  payload.exp = iat + ttlSeconds;
  // An id makes the token revocable (jwt_revoke, auth_logout); a given one is kept.
  payload.jti ??= randomBytes(TOKEN_ID_BYTES).toString('base64url');
  const { SignJWT } = await loadJose();
  const token = await new SignJWT(payload).setProtectedHeader({ alg: JWT_ALGORITHM, typ: 'JWT' }).sign(key);
  if (token.length > MAX_TOKEN_LENGTH) {
    throw new RvmError(
      `jwt_create(): the token would be ${token.length} characters, over the ${MAX_TOKEN_LENGTH} rvm accepts; put less in the claims`,
      RUNTIME.invalid_claims,
    );
  }
  return token;
}

/**
 * The verified claims of `token` as plain JSON, or null when it is not a valid HS256 token for
 * `key` (bad signature, expired beyond the skew, no `exp`, another or no algorithm, malformed,
 * too long). Never throws for a bad token.
 */
export async function verifyJwtClaims(token: unknown, key: Uint8Array, nowMs: number = Date.now()): Promise<Record<string, unknown> | null> {
  if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_LENGTH) return null;
  const { jwtVerify } = await loadJose();
  try {
    const { payload } = await jwtVerify(token, key, { ...VERIFY_OPTIONS, currentDate: new Date(nowMs) });
    return payload as Record<string, unknown>;
  } catch {
    // jose's errors (ERR_JWS_*, ERR_JWT_*, ERR_JOSE_ALG_NOT_ALLOWED) all mean the same here: not valid.
    return null;
  }
}

/**
 * True when the token's (unverified) `exp` has passed, or the token cannot be read; false when
 * it has no `exp`. A client-side hint for refreshing, never a substitute for `jwt_verify`.
 */
export function isJwtExpired(token: Value | undefined, nowMs: number = Date.now()): boolean {
  if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_LENGTH) return true;
  let exp: unknown;
  try {
    exp = decodeJwt(token).exp;
  } catch {
    return true;
  }
  if (exp === undefined) return false;
  return typeof exp !== 'number' || seconds(nowMs) >= exp;
}

/** Where a revoked token's `jti` is kept. */
export const REVOKED_TOKEN_PREFIX = `${SECURITY_KEY_PREFIX}jwt:revoked:`;

/** The token id of verified claims, or null when the token carries none (it cannot be revoked). */
function tokenId(claims: ValueObject): string | null {
  const jti = claims.jti;
  return typeof jti === 'string' && jti !== '' ? jti : null;
}

/** Whether the token of verified `claims` was revoked; synchronous when the store answers so. */
export function isRevoked(store: KeyValueStore, claims: ValueObject): boolean | Promise<boolean> {
  const jti = tokenId(claims);
  // A token without an id was never put on the list: nothing to ask the store.
  if (jti === null) return false;
  const mark = store.get(REVOKED_TOKEN_PREFIX + jti);
  return mark instanceof Promise ? mark.then((m) => m !== undefined) : mark !== undefined;
}

/**
 * Puts the token of verified `claims` on the deny list until its `exp` plus the skew verification
 * allows (then it is refused anyway and the entry goes). False when it cannot be revoked: it has
 * no `jti` (tokens rvm signs always have one) or no `exp`. Throws StoreFullError (503 `store_full`)
 * when the store's security budget is full.
 */
export function revoke(store: KeyValueStore, claims: ValueObject, nowMs: number = Date.now()): boolean | Promise<boolean> {
  const jti = tokenId(claims);
  const exp = claims.exp;
  if (jti === null || typeof exp !== 'number') return false;
  const ttlMs = (exp + CLOCK_SKEW_SECONDS) * 1000 - nowMs;
  // Past that moment no verification accepts it: it is as good as revoked.
  if (ttlMs <= 0) return true;
  const written = store.set(REVOKED_TOKEN_PREFIX + jti, true, ttlMs);
  return written instanceof Promise ? written.then(() => true) : true;
}

/** The OpenAPI name of the scheme of a JWT sent as Authorization: Bearer (session.ts's BEARER_SCHEME). */
export const BEARER_SCHEME_NAME = 'bearerAuth';

/** Registers jwt_create, jwt_verify and jwt_is_expired. */
export function registerJwt(rvm: PluginApi): void {
  rvm.native('jwt_create', (_ctx, claims, secret, ttl) => createJwt(claims, secret, ttl), {
    params: [
      { name: 'claims', type: 'object', doc: 'JSON data to sign; iat and exp are set by rvm' },
      { name: 'secret', type: 'any', doc: 'the HS256 key: text or a secret of at least 32 bytes' },
      // createJwt checks it: a lifetime out of range, of whatever type, is invalid_argument.
      { name: 'ttl_seconds', type: 'int', selfChecked: true, doc: `lifetime in seconds, 1 to ${MAX_TTL_SECONDS}` },
    ],
    returns: 'text',
    // The token a client then sends as Bearer: the OpenAPI document names the routes that issue it.
    issues: [BEARER_SCHEME_NAME],
    doc: `Signs the claims as an HS256 JWT that expires after ttl_seconds; rvm sets iat and exp (over any given) and a random jti (unless one is given), which jwt_revoke and auth_logout put on the deny list. A key under ${MIN_SECRET_BYTES} bytes is a weak_secret error: use secure_random(32), never a password. Claims that are not JSON data (secrets included) are an invalid_claims error.`,
  });

  rvm.native(
    'jwt_verify',
    async (ctx, token, secret) => {
      const key = keyBytes('jwt_verify()', secret);
      const payload = await verifyJwtClaims(token, key);
      if (payload === null) return null;
      const claims = fromJson(payload) as ValueObject;
      return (await isRevoked(ctx.store, claims)) ? null : claims;
    },
    {
      params: [
        // What is not a valid token (null, a number) verifies to null, never an error.
        { name: 'token', type: 'text', selfChecked: true },
        { name: 'secret', type: 'any', doc: 'the HS256 key: text or a secret of at least 32 bytes' },
      ],
      returns: 'object?',
      doc: `The verified claims of an HS256 token, or null when the signature is wrong, it was revoked (jwt_revoke, auth_logout), it has expired (${CLOCK_SKEW_SECONDS} s skew allowed) or has no exp, its header names another algorithm or none, or it is malformed or longer than ${MAX_TOKEN_LENGTH} characters. A key under ${MIN_SECRET_BYTES} bytes is a weak_secret error.`,
    },
  );

  rvm.native('jwt_is_expired', (_ctx, token) => isJwtExpired(token), {
    // What is not a readable token counts as expired, never an error.
    params: [{ name: 'token', type: 'text', selfChecked: true }],
    returns: 'bool',
    doc: "True when the token's exp has passed or the token cannot be read, false when it has none; it does not check the signature (use jwt_verify for that).",
  });
}
