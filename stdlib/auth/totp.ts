/**
 * TOTP second factor (RFC 6238 as authenticator apps speak it: SHA-1, 6 digits, 30 s):
 * `totp_secret`, `totp_uri`, `totp_qr` and `totp_verify`. Each secret has one record in the app's
 * shared store, changed only with compareAndSet: the last accepted time step (a code is accepted
 * once: of two requests racing with one code exactly one is accepted) and its wrong codes
 * (attempts.ts: five in a row lock the secret out, the lockout growing).
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type * as otplib from 'otplib';
import type QRCode from 'qrcode';
import { HTTP, RUNTIME, RvmError, SECURITY_KEY_PREFIX, SecretText, onFirstUse, typeName } from '../../plugins/sdk.js';
import type { CallContext, KeyValueStore, PluginApi, Value } from '../../plugins/sdk.js';
import { HotpKey, decodeBase32Secret, timeStep } from './one-time-password.js';
import {
  FIRST_LOCKOUT_MS,
  MAX_LOCKOUT_MS,
  MAX_WRONG_CODES,
  WRONG_CODE_WINDOW_MS,
  afterRightCode,
  answerGuess,
  attemptsOf,
  countedGuess,
  type AttemptState,
  type GuessRules,
  type Lockout,
} from './attempts.js';

/** otplib and qrcode, loaded by the first secret, link or QR code made: most apps make none. */
const loadOtplib = onFirstUse(() => createRequire(import.meta.url)('otplib') as typeof otplib);
const loadQrcode = onFirstUse(() => createRequire(import.meta.url)('qrcode') as typeof QRCode);

/** Seconds per time step: what authenticator apps use (RFC 6238 §5.2 recommends 30 s). */
export const TOTP_PERIOD_SECONDS = 30;
/** Digits per code: what authenticator apps show. */
export const TOTP_DIGITS = 6;
/** A code's value is the truncated HMAC modulo this. */
const CODE_MODULUS = 10 ** TOTP_DIGITS;
/** Steps of clock drift accepted each side of now: one, as RFC 6238 §5.2 recommends. */
export const TOTP_DRIFT_STEPS = 1;
/** Bytes of a generated secret: 160 bits, RFC 4226 §4's recommendation. */
export const TOTP_SECRET_BYTES = 20;
/**
 * How long a replay mark is kept: a step accepted now is at most one step ahead, and its code
 * stays acceptable until two steps after that; four periods outlive it with room, after which
 * the clock alone refuses every step the mark would.
 */
export const TOTP_REPLAY_MARK_TTL_MS = 4 * TOTP_PERIOD_SECONDS * 1000;
/**
 * Longest `otpauth://` URI made: a QR code holds 2,331 bytes at error correction M; 2 KiB leaves
 * room and keeps the code scannable from a screen.
 */
export const MAX_OTPAUTH_URI_CHARS = 2048;
/** Width of the PNG QR code in pixels: scannable from a phone held to a screen, a few KiB. */
export const TOTP_QR_WIDTH_PX = 256;
/** The store key prefix of a secret's record (its replay mark and wrong codes): security state. */
const MARK_PREFIX = `${SECURITY_KEY_PREFIX}totp:`;

/** Milliseconds since the epoch; tests pass their own clock. */
export type Clock = () => number;

/** The secret's text when it is text or a secret value; null otherwise. */
function secretText(secret: Value | undefined): string | null {
  if (secret instanceof SecretText) return secret.reveal();
  return typeof secret === 'string' ? secret : null;
}

/**
 * The store key of a secret's record: a SHA-256 of its key bytes, never the secret, and the same
 * for every spelling of one secret (case, padding), so a lowercase copy of a code's secret can
 * neither replay it nor start a fresh count of wrong codes.
 */
export function replayMarkKey(key: Uint8Array): string {
  return MARK_PREFIX + createHash('sha256').update(key).digest('base64url');
}

/** Whether `code` is exactly TOTP_DIGITS ASCII digits. */
function wellFormedCode(code: Value | undefined): code is string {
  if (typeof code !== 'string' || code.length !== TOTP_DIGITS) return false;
  for (let i = 0; i < code.length; i++) {
    const c = code.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/** A secret's record: its wrong codes, and the last accepted time step (-1: none). */
interface TotpState extends AttemptState {
  step: number;
}

function readTotpState(held: Value | undefined): TotpState {
  const step = held !== null && typeof held === 'object' && !Array.isArray(held) ? (held as { step?: unknown }).step : undefined;
  return { ...attemptsOf(held), step: typeof step === 'number' && Number.isSafeInteger(step) ? step : -1 };
}

/**
 * True when `code` is the TOTP code of `secret` at a step within TOTP_DRIFT_STEPS of `nowMs`
 * that is later than the last step accepted for this secret, and this call is the one that
 * recorded it. False — never an error — for a code that is not six digits or a secret that is not
 * Base32 of at least 16 bytes (neither is counted), and for a wrong code or a replay (counted:
 * the MAX_WRONG_CODES-th locks the secret). A Lockout, unjudged, while the secret is locked or
 * when the guess kept losing races to others on the same secret.
 */
export async function verifyTotp(store: KeyValueStore, code: Value | undefined, secret: Value | undefined, nowMs: number): Promise<boolean | Lockout> {
  if (!wellFormedCode(code)) return false;
  const text = secretText(secret);
  const window = text === null ? null : windowCodes(text, timeStep(nowMs, TOTP_PERIOD_SECONDS));
  if (window === null) return false;
  // Every step of the window is compared, without stopping at a match.
  // Six digits as a number (wellFormedCode checked them), compared with each step's value.
  const submitted = Number(code);
  let matches: number[] | null = null;
  for (let i = 0; i < window.codes.length; i++) {
    if (window.codes[i] === submitted) (matches ??= []).push(window.first + i);
  }
  const rules: GuessRules<TotpState> = {
    read: readTotpState,
    // Earliest step after the mark: a code matching two steps (one in a million) takes the
    // earlier, leaving the later one usable. A match at or before the mark is a replay: wrong.
    right: (state) => {
      const matched = matches?.find((step) => step > state.step);
      return matched === undefined ? null : { ...afterRightCode(state), step: matched };
    },
    keepMs: (next) => (next.step >= 0 ? TOTP_REPLAY_MARK_TTL_MS : 0),
  };
  return countedGuess(store, window.stateKey, nowMs, rules);
}

/**
 * Secrets verified lately, with their codes around the step they were verified at. A brute force
 * against one account (the path an attacker makes hot) then costs a lookup per guess instead of
 * eight SHA-1 compressions; at most this many secrets are kept, the oldest dropped first. It holds
 * nothing the process does not already see on every verification of those secrets.
 */
export const TOTP_RECENT_SECRETS = 1024;

/** The codes (as numbers) of the steps `first`, `first + 1`, … around step `now`, and the secret's store key. */
interface WindowCodes {
  now: number;
  first: number;
  codes: number[];
  stateKey: string;
}

const recentWindows = new Map<string, WindowCodes>();

/** The codes of `text`'s window around step `now`, from the recent ones when they are current; null when `text` is not a Base32 secret. */
function windowCodes(text: string, now: number): WindowCodes | null {
  const known = recentWindows.get(text);
  if (known !== undefined && known.now === now) return known;
  const key = decodeBase32Secret(text);
  if (key === null) return null;
  const hmac = new HotpKey(key);
  const first = Math.max(now - TOTP_DRIFT_STEPS, 0);
  const codes: number[] = [];
  for (let step = first; step <= now + TOTP_DRIFT_STEPS; step++) codes.push(hmac.truncated(step) % CODE_MODULUS);
  // The store key is the same at every step: hashed once while the secret stays recent.
  const window = { now, first, codes, stateKey: known?.stateKey ?? replayMarkKey(key) };
  if (known === undefined && recentWindows.size >= TOTP_RECENT_SECRETS) recentWindows.delete(recentWindows.keys().next().value as string);
  recentWindows.set(text, window);
  return window;
}

/** A generated secret: TOTP_SECRET_BYTES from the CSPRNG, as 32 Base32 characters. */
export function newTotpSecret(): string {
  return loadOtplib().generateSecret({ length: TOTP_SECRET_BYTES });
}

/** Throws `invalid_argument` naming `fn` and `param` unless `value` is non-empty text without a colon. */
function uriPart(fn: string, param: string, value: string): string {
  if (value === '' || value.includes(':')) {
    throw new RvmError(`${fn}() expects ${param} to be non-empty text without ':' (the otpauth label separator)`, RUNTIME.invalid_argument);
  }
  return value;
}

/**
 * The `otpauth://totp/ISSUER:LABEL?secret=…&issuer=ISSUER` link authenticator apps scan. Throws
 * RvmError `invalid_argument` for a secret that is not Base32 of at least 16 bytes, an empty
 * label or issuer or one with ':', or a link over MAX_OTPAUTH_URI_CHARS; `type_error` for a
 * secret that is not text.
 */
export function totpUri(fn: string, secret: Value | undefined, label: string, issuer: string): string {
  const text = secretText(secret);
  if (text === null) throw new RvmError(`${fn}() expects secret to be text, got ${typeName(secret)}`, RUNTIME.type_error);
  if (decodeBase32Secret(text) === null) {
    throw new RvmError(`${fn}() expects secret to be Base32 of at least 16 bytes (totp_secret() makes one)`, RUNTIME.invalid_argument);
  }
  const uri = loadOtplib().generateURI({
    issuer: uriPart(fn, 'issuer', issuer),
    label: uriPart(fn, 'label', label),
    secret: text.replace(/=+$/, '').toUpperCase(),
  });
  if (uri.length > MAX_OTPAUTH_URI_CHARS) {
    throw new RvmError(
      `${fn}(): the otpauth link would be longer than ${MAX_OTPAUTH_URI_CHARS} characters; shorten the label or issuer`,
      RUNTIME.invalid_argument,
    );
  }
  return uri;
}

/** The QR code of the `otpauth://` link: a PNG data URL, or with `format` 'svg' the SVG text. */
export async function totpQr(ctx: CallContext, secret: Value | undefined, label: string, issuer: string, format: string | null | undefined): Promise<string> {
  const uri = totpUri('totp_qr', secret, label, issuer);
  // Encoding grows with the link: charge for it like any text work of the request.
  ctx.budget.chargeText(uri.length);
  if (format === 'svg') return loadQrcode().toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 4 });
  if (format === undefined || format === null || format === 'png')
    return loadQrcode().toDataURL(uri, { type: 'image/png', errorCorrectionLevel: 'M', margin: 4, width: TOTP_QR_WIDTH_PX });
  throw new RvmError(`totp_qr() expects format to be 'png' or 'svg', got '${format}'`, RUNTIME.invalid_argument);
}

/** What registering TOTP takes: the clock, so tests can set the time. */
export interface TotpOptions {
  now?: Clock;
}

/** Registers totp_secret, totp_uri, totp_qr and totp_verify. */
export function registerTotp(rvm: PluginApi, options: TotpOptions = {}): void {
  const now = options.now ?? Date.now;

  rvm.native('totp_secret', () => newTotpSecret(), {
    params: [],
    returns: 'text',
    doc: `A new TOTP secret: ${TOTP_SECRET_BYTES} random bytes as ${(TOTP_SECRET_BYTES * 8) / 5} Base32 characters. Store it with the user (hidden from responses) and show it once as totp_qr().`,
  });

  rvm.native('totp_uri', (_ctx, secret, label, issuer) => totpUri('totp_uri', secret, label, issuer), {
    params: [
      // A secret value from secret() or env() is accepted too.
      { name: 'secret', type: 'text', selfChecked: true },
      { name: 'label', type: 'text', doc: 'The account, usually the e-mail address.' },
      { name: 'issuer', type: 'text', doc: 'The service name the app shows.' },
    ],
    returns: 'text',
    doc: `The otpauth://totp/ISSUER:LABEL?secret=…&issuer=ISSUER link authenticator apps scan (SHA-1, ${TOTP_DIGITS} digits, ${TOTP_PERIOD_SECONDS} s). A secret that is not Base32 of at least 16 bytes, a label or issuer that is empty or has ':', or a link over ${MAX_OTPAUTH_URI_CHARS} characters is an invalid_argument error.`,
  });

  rvm.native('totp_qr', (ctx, secret, label, issuer, format) => totpQr(ctx, secret, label, issuer, format), {
    params: [
      { name: 'secret', type: 'text', selfChecked: true },
      { name: 'label', type: 'text' },
      { name: 'issuer', type: 'text' },
      { name: 'format', type: 'text', optional: true, doc: "'png' (default) or 'svg'." },
    ],
    returns: 'text',
    doc: `The QR code of totp_uri(secret, label, issuer): a ${TOTP_QR_WIDTH_PX}×${TOTP_QR_WIDTH_PX} PNG as a data URL (data:image/png;base64,…), or with format 'svg' the SVG document as text. Errors as totp_uri; another format is invalid_argument.`,
  });

  rvm.native('totp_verify', (ctx, code, secret) => answerGuess(ctx, verifyTotp(ctx.store, code, secret, now())), {
    params: [
      // Anything that is not a six-digit code or a Base32 secret verifies false, never an error.
      { name: 'code', type: 'text', selfChecked: true },
      { name: 'secret', type: 'text', selfChecked: true },
    ],
    returns: 'bool',
    doc: `True when the code is the secret's ${TOTP_DIGITS}-digit TOTP code (SHA-1, ${TOTP_PERIOD_SECONDS} s, ±${TOTP_DRIFT_STEPS} step) at a time step later than the last one accepted for this secret; a code is accepted once, in every process sharing the store. Malformed input, a wrong code or a replay is false. Wrong codes and replays are counted per secret: after ${MAX_WRONG_CODES} within ${WRONG_CODE_WINDOW_MS / 60_000} minutes every try, a right code included, ends the request with 429 too_many_attempts and Retry-After for ${FIRST_LOCKOUT_MS / 60_000} minute, doubling with each lockout that follows up to ${MAX_LOCKOUT_MS / 60_000} minutes; a right code resets the count.`,
    responses: [
      {
        status: HTTP.too_many_attempts.status,
        code: HTTP.too_many_attempts.code,
        description: `${MAX_WRONG_CODES} wrong codes for this secret lately: locked out for Retry-After seconds.`,
        headers: ['Retry-After'],
      },
    ],
  });
}
