/**
 * Backup codes for when the authenticator is lost: `backup_codes_generate`, `backup_codes_hash`
 * and `backup_code_use`. Ten codes of 50 random bits, shown once, kept only as scrypt hashes
 * with a salt per list; a code is used once: `backup_code_use` answers the list without it, and
 * a mark in the shared store refuses a second, concurrent use before the app saved that list.
 *
 * Why scrypt and not a fast salted SHA-256: a code carries 50 bits, under the 112 bits below which
 * NIST SP 800-63B §5.1.2 requires a salted password-hashing scheme. A leaked list hashed with
 * SHA-256 falls to a GPU in about a day per code (2^50 hashes at ~10^10/s); with scrypt at 16 MiB
 * it costs years. One salt per list keeps a use to one scrypt (~40 ms) instead of ten.
 *
 * Wrong codes are counted per list as TOTP's are per secret (attempts.ts): five in a row lock
 * the list out, and a locked list is refused before any scrypt runs.
 */
import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { HTTP, RUNTIME, RvmError, SECURITY_KEY_PREFIX } from '../../plugins/sdk.js';
import type { CallContext, KeyValueStore, PluginApi, Value } from '../../plugins/sdk.js';
import { MAX_WRONG_CODES, afterRightCode, answerGuess, attemptsOf, countedGuess, lockoutOf, type Lockout } from './attempts.js';
import { runHashJob } from './passwords.js';

/** Codes per list: enough for a year of lost phones, few enough to print. */
export const BACKUP_CODE_COUNT = 10;
/** Characters per code, five bits each: 50 bits, above the 20 bits of a TOTP code many times over. */
export const BACKUP_CODE_CHARS = 10;
/**
 * Most hashed codes `backup_code_use` reads: two lists of ten (one being replaced). It bounds the
 * scrypt work a planted list can ask for (one scrypt per distinct salt).
 */
export const MAX_STORED_BACKUP_CODES = 2 * BACKUP_CODE_COUNT;
/** scrypt cost as log2(N): 16 MiB and about 40 ms here, years of GPU time for a 50-bit code. */
export const BACKUP_SCRYPT_LOG_N = 14;
/** scrypt block size and parallelism: the usual r=8, p=1. */
export const BACKUP_SCRYPT_R = 8;
export const BACKUP_SCRYPT_P = 1;
/** Salt and hash lengths in bytes. */
const SALT_BYTES = 16;
const HASH_BYTES = 32;
/** Node's default scrypt memory ceiling (32 MiB) is close to 128·N·r; this leaves room. */
const SCRYPT_MAXMEM = 64 * 1024 * 1024;
/**
 * How long a used code stays refused by the store alone: the app saves the shortened list right
 * after the call; a day covers a slow database without keeping marks forever.
 */
export const BACKUP_CODE_USE_MARK_TTL_MS = 24 * 60 * 60 * 1000;
/** Longest code text read before normalising: a code with generous spacing fits many times. */
export const MAX_BACKUP_CODE_INPUT_CHARS = 64;

/** The codes' alphabet: RFC 4648 Base32 in lower case (no 0, 1, 8 or 9 to confuse with letters). */
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';
const PARAMS = `ln=${BACKUP_SCRYPT_LOG_N},r=${BACKUP_SCRYPT_R},p=${BACKUP_SCRYPT_P}`;
/** A stored code: `$scrypt$ln=14,r=8,p=1$<salt>$<hash>`, unpadded base64 as PHC strings write it. */
const STORED = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/]{22})\$([A-Za-z0-9+/]{43})$/;
const CODE = /^[a-z2-7]{10}$/;
const USE_MARK_PREFIX = `${SECURITY_KEY_PREFIX}backup:used:`;
/** The store key prefix of a list's wrong codes. */
const ATTEMPTS_PREFIX = `${SECURITY_KEY_PREFIX}backup:tries:`;

/** Ten new codes, `xxxxx-xxxxx`, each character one of 32 from the CSPRNG. */
export function generateBackupCodes(): string[] {
  const codes: string[] = [];
  for (let n = 0; n < BACKUP_CODE_COUNT; n++) {
    // 256 is a multiple of 32: the low five bits of a random byte are uniform.
    const bytes = randomBytes(BACKUP_CODE_CHARS);
    let code = '';
    for (let i = 0; i < BACKUP_CODE_CHARS; i++) code += ALPHABET[bytes[i]! & 31];
    codes.push(`${code.slice(0, 5)}-${code.slice(5)}`);
  }
  return codes;
}

/** The code as hashed: lower case, spaces and dashes removed; null when it is not a code. */
export function normaliseBackupCode(code: Value | undefined): string | null {
  if (typeof code !== 'string' || code.length > MAX_BACKUP_CODE_INPUT_CHARS) return null;
  const plain = code.toLowerCase().replace(/[\s-]+/g, '');
  return CODE.test(plain) ? plain : null;
}

/** The scrypt hash of a normalised code with `salt`, on the auth plugin's hash queue. */
function hashCode(code: string, salt: Buffer, signal?: AbortSignal): Promise<Buffer> {
  return runHashJob(
    () =>
      new Promise<Buffer>((resolve, reject) => {
        scrypt(code, salt, HASH_BYTES, { N: 2 ** BACKUP_SCRYPT_LOG_N, r: BACKUP_SCRYPT_R, p: BACKUP_SCRYPT_P, maxmem: SCRYPT_MAXMEM }, (error, key) =>
          error ? reject(error) : resolve(key),
        );
      }),
    signal,
  );
}

function unpadded(bytes: Buffer): string {
  return bytes.toString('base64').replace(/=+$/, '');
}

/**
 * What to store for `codes` (each as `backup_codes_generate` gives it, any case and spacing): one
 * `$scrypt$ln=14,r=8,p=1$salt$hash` per code, one fresh salt for the list. Throws RvmError
 * `invalid_argument` for an empty list, one over MAX_STORED_BACKUP_CODES, or an item that is not a code.
 */
export async function hashBackupCodes(codes: Value[], signal?: AbortSignal): Promise<string[]> {
  if (codes.length === 0 || codes.length > MAX_STORED_BACKUP_CODES) {
    throw new RvmError(`backup_codes_hash() expects 1 to ${MAX_STORED_BACKUP_CODES} codes, got ${codes.length}`, RUNTIME.invalid_argument);
  }
  const plain = codes.map((code, i) => {
    const normal = normaliseBackupCode(code);
    if (normal === null)
      throw new RvmError(`backup_codes_hash(): item ${i} is not a backup code (${BACKUP_CODE_CHARS} characters a–z, 2–7)`, RUNTIME.invalid_argument);
    return normal;
  });
  const salt = randomBytes(SALT_BYTES);
  const prefix = `$scrypt$${PARAMS}$${unpadded(salt)}$`;
  const hashes = await Promise.all(plain.map((code) => hashCode(code, salt, signal)));
  return hashes.map((hash) => prefix + unpadded(hash));
}

/** A stored entry's salt and hash; null when it is not one rvm writes (other costs included). */
function parseStored(entry: Value): { salt: string; hash: Buffer } | null {
  if (typeof entry !== 'string') return null;
  const match = STORED.exec(entry);
  if (match === null) return null;
  if (Number(match[1]) !== BACKUP_SCRYPT_LOG_N || Number(match[2]) !== BACKUP_SCRYPT_R || Number(match[3]) !== BACKUP_SCRYPT_P) return null;
  return { salt: match[4]!, hash: Buffer.from(match[5]!, 'base64') };
}

/**
 * The store key of a list's wrong codes: a hash of its salts (one per list `backup_codes_hash`
 * made), so the count follows the list as codes are used from it, and the store holds no hash of a code.
 */
function attemptsKey(salts: Iterable<string>): string {
  return (
    ATTEMPTS_PREFIX +
    createHash('sha256')
      .update([...salts].sort().join('$'))
      .digest('base64url')
  );
}

/**
 * `stored` without the entry `code` matches, or null when none does. Every entry is compared in
 * constant time, without stopping at a match. Null — never an error — for a code that is not
 * one, a stored value that is not a list of at most MAX_STORED_BACKUP_CODES entries
 * `backup_codes_hash` wrote (neither is counted), a wrong code (counted), or a code another
 * request is using right now. A Lockout, unjudged, while the list is locked out.
 */
export async function useBackupCode(
  store: KeyValueStore,
  code: Value | undefined,
  stored: Value | undefined,
  signal?: AbortSignal,
  now: () => number = Date.now,
): Promise<string[] | null | Lockout> {
  const plain = normaliseBackupCode(code);
  if (plain === null || !Array.isArray(stored) || stored.length === 0 || stored.length > MAX_STORED_BACKUP_CODES) return null;
  const entries = stored.map(parseStored);
  if (entries.some((entry) => entry === null)) return null;
  const key = attemptsKey(new Set(entries.map((entry) => entry!.salt)));
  // A locked list costs no scrypt.
  const held = await store.get(key);
  const locked = lockoutOf(held, now());
  if (locked !== null) return locked;
  const bySalt = new Map<string, Buffer>();
  for (const entry of entries) {
    if (!bySalt.has(entry!.salt)) bySalt.set(entry!.salt, await hashCode(plain, Buffer.from(entry!.salt, 'base64'), signal));
  }
  let found = -1;
  entries.forEach((entry, i) => {
    if (timingSafeEqual(bySalt.get(entry!.salt)!, entry!.hash) && found < 0) found = i;
  });
  const judged = await countedGuess(store, key, now(), { read: attemptsOf, right: (state) => (found < 0 ? null : afterRightCode(state)) }, { held });
  if (judged !== true) return judged === false ? null : judged;
  const used = stored[found] as string;
  // A second request with this code, before the app saved the shortened list, loses here.
  const mark = USE_MARK_PREFIX + createHash('sha256').update(used).digest('base64url');
  if (!(await store.compareAndSet(mark, undefined, true, BACKUP_CODE_USE_MARK_TTL_MS))) return null;
  return (stored as string[]).filter((_, i) => i !== found);
}

/** Registers backup_codes_generate, backup_codes_hash and backup_code_use. */
export function registerBackupCodes(rvm: PluginApi, now: () => number = Date.now): void {
  rvm.native('backup_codes_generate', () => generateBackupCodes(), {
    params: [],
    returns: 'list',
    doc: `${BACKUP_CODE_COUNT} new single-use backup codes, each ${BACKUP_CODE_CHARS} random characters (a–z, 2–7; ${BACKUP_CODE_CHARS * 5} bits) written xxxxx-xxxxx. Show them once; store backup_codes_hash(codes).`,
  });

  rvm.native('backup_codes_hash', (ctx: CallContext, codes) => hashBackupCodes(codes, ctx.budget.signal), {
    params: [{ name: 'codes', type: 'list' }],
    returns: 'list',
    doc: `What to store for the codes: each as $scrypt$${PARAMS}$salt$hash (one salt per list), computed off the event loop. An empty list, one over ${MAX_STORED_BACKUP_CODES} codes or an item that is not a code is an invalid_argument error.`,
  });

  rvm.native('backup_code_use', (ctx, code, stored) => answerGuess(ctx, useBackupCode(ctx.store, code, stored, ctx.budget.signal, now)), {
    params: [
      // A code or list that is not what it should be answers null, never an error.
      { name: 'code', type: 'text', selfChecked: true },
      { name: 'stored', type: 'list', selfChecked: true },
    ],
    returns: 'list?',
    doc: `The stored list without the code, or null when the code is not in it (case, spaces and dashes ignored): store the list it answers, so the code is used once. A malformed code or list, or a code another request is using at the same moment, is null. Wrong codes are counted per list as totp_verify counts them per secret: after ${MAX_WRONG_CODES} every try ends the request with 429 too_many_attempts and Retry-After until the lockout ends.`,
    responses: [
      {
        status: HTTP.too_many_attempts.status,
        code: HTTP.too_many_attempts.code,
        description: `${MAX_WRONG_CODES} wrong codes for this list lately: locked out for Retry-After seconds.`,
        headers: ['Retry-After'],
      },
    ],
  });
}
