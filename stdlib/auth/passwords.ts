/**
 * Password hashing with Argon2id through the `argon2` package, whose native code runs on
 * libuv's thread pool so hashing never blocks the event loop. Hashes are PHC strings
 * (`$argon2id$v=19$m=65536,t=3,p=4$<salt>$<hash>`); a hash that is not one verifies false.
 */
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import type argon2 from 'argon2';
import { RUNTIME, RvmError, SecretText, onFirstUse, typeName } from '../../plugins/sdk.js';
import type { AppSettings, PluginApi, Value } from '../../plugins/sdk.js';

/** The argon2 binding, loaded by the first hash or verification: an app without passwords never loads it. */
const loadArgon2 = onFirstUse(() => createRequire(import.meta.url)('argon2') as typeof argon2);

/**
 * The cost rvm hashes with: the `argon2` package's defaults (64 MiB, 3 passes, 4 lanes), above
 * OWASP's minimum for Argon2id (19 MiB, t=2, p=1). Spelled out so `argon2_needs_rehash` and the
 * docs name the same numbers.
 */
export const HASH_PARAMS = { memoryCost: 65536, timeCost: 3, parallelism: 4 } as const;
/**
 * The cost of `"passwords": {"cost": "test"}`: the smallest Argon2 allows (RFC 9106 §3.1: m ≥ 8·p
 * KiB, t ≥ 1, p ≥ 1), about a thousandth of HASH_PARAMS's CPU, so a test suite signing in dozens
 * of times does not spend its time hashing. Anyone can brute-force such hashes: `rvm run --prod`
 * refuses the setting.
 */
export const TEST_HASH_PARAMS = { memoryCost: 8, timeCost: 1, parallelism: 1 } as const;
/** The costs argon2_hash writes and argon2_needs_rehash expects. */
export type HashParams = typeof HASH_PARAMS | typeof TEST_HASH_PARAMS;
/** The Argon2 version rvm writes (1.3). */
export const ARGON2_VERSION = 19;
/**
 * Longest password accepted, in UTF-8 bytes. Far above any passphrase; it keeps a request from
 * making the server hash megabytes per login attempt.
 */
export const MAX_PASSWORD_BYTES = 4 * 1024;
/** Longest PHC string read: m/t/p, a 16–64 byte salt and hash in base64 fit well inside. */
export const MAX_HASH_LENGTH = 512;
/**
 * Costs a stored hash may ask for before verification refuses it: a planted hash with
 * m=4 GiB or t=10⁶ must not let one login tie up memory or a pool thread for minutes.
 */
export const MAX_MEMORY_KIB = 1024 * 1024;
export const MAX_TIME_COST = 32;
export const MAX_PARALLELISM = 16;

/**
 * Argon2 computations run at once; the rest wait their turn without blocking anything. Each one
 * occupies a libuv pool thread (four by default, shared with file system and DNS work) and starts
 * `parallelism` threads of its own: unbounded, 20 logins would run 16 busy threads on a small
 * machine, starving the event loop of CPU and the pool of threads. One per four cores, at least one.
 */
export const MAX_CONCURRENT_HASHES = Math.max(1, Math.floor(availableParallelism() / HASH_PARAMS.parallelism));

/** Runs Argon2 jobs at most MAX_CONCURRENT_HASHES at a time, first come first served. */
export class HashQueue {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  /** Jobs waiting for a slot. */
  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Runs `job` once a slot is free; the slot is released however the job ends. A job whose
   * request is abandoned (`signal`) while it waits leaves the queue without running: a client
   * that gave up costs no hash.
   */
  async run<T>(job: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    signal?.throwIfAborted();
    if (this.running >= this.limit) await this.wait(signal);
    else this.running++;
    try {
      return await job();
    } finally {
      // Hand the slot straight to the next waiter, or free it.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  /** Resolves when a slot is handed over; rejects (and leaves the queue) when `signal` aborts first. */
  private wait(signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal === undefined) {
        this.waiting.push(resolve);
        return;
      }
      const onAbort = (): void => {
        const at = this.waiting.indexOf(take);
        if (at !== -1) this.waiting.splice(at, 1);
        reject(signal.reason);
      };
      const take = (): void => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      this.waiting.push(take);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}

const hashQueue = new HashQueue(MAX_CONCURRENT_HASHES);

/**
 * Runs a deliberately slow hash (Argon2 here, scrypt for backup codes) in the one queue of the
 * auth plugin, so all of them together hold at most MAX_CONCURRENT_HASHES pool threads.
 */
export function runHashJob<T>(job: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  return hashQueue.run(job, signal);
}

/** The fields of an Argon2 PHC string. */
export interface PhcHash {
  id: 'argon2id' | 'argon2i' | 'argon2d';
  /** 19 (1.3) or 16 (1.0, written without `v=`). */
  version: number;
  m: number;
  t: number;
  p: number;
  salt: string;
  hash: string;
}

const PHC = /^\$(argon2id|argon2i|argon2d)(?:\$v=(\d{1,3}))?\$([a-z]=\d{1,10}(?:,[a-z]=\d{1,10}){2})\$([A-Za-z0-9+/]{11,})\$([A-Za-z0-9+/]{6,})$/;

/** Parses an Argon2 PHC string; null when it is not one or its costs are out of bounds. */
export function parsePhc(text: string): PhcHash | null {
  if (text.length > MAX_HASH_LENGTH) return null;
  const match = PHC.exec(text);
  if (match === null) return null;
  const version = match[2] === undefined ? 16 : Number(match[2]);
  if (version !== 16 && version !== 19) return null;
  const params: Record<string, number> = {};
  for (const pair of match[3]!.split(',')) {
    const [name, value] = pair.split('=') as [string, string];
    if (name in params || !['m', 't', 'p'].includes(name)) return null;
    params[name] = Number(value);
  }
  const { m, t, p } = params as { m: number; t: number; p: number };
  if (p < 1 || p > MAX_PARALLELISM || t < 1 || t > MAX_TIME_COST || m < 8 * p || m > MAX_MEMORY_KIB) return null;
  return { id: match[1] as PhcHash['id'], version, m, t, p, salt: match[4]!, hash: match[5]! };
}

/**
 * The PHC string of `phc` in the canonical form of the PHC and C2SP specs: parameters in the order
 * m, t, p. The `argon2` package writes m, p, t, which libargon2-based verifiers (argon2-cffi, PHP,
 * Go) refuse to decode.
 */
export function formatPhc(phc: PhcHash): string {
  const version = phc.version === 16 ? '' : `$v=${phc.version}`;
  return `$${phc.id}${version}$m=${phc.m},t=${phc.t},p=${phc.p}$${phc.salt}$${phc.hash}`;
}

/** `hash` (a PHC string the `argon2` package wrote) with its parameters in canonical order. */
export function canonicalPhc(hash: string): string {
  const phc = parsePhc(hash);
  if (phc === null) throw new Error('argon2 produced a hash rvm cannot read');
  return formatPhc(phc);
}

/** A password argument as text; null when it is not text (or a secret). */
function passwordText(password: Value | undefined): string | null {
  if (password instanceof SecretText) return password.reveal();
  return typeof password === 'string' ? password : null;
}

/**
 * The Argon2id PHC hash of `password`. Throws RvmError `type_error` for a non-text password and
 * `password_too_long` past MAX_PASSWORD_BYTES.
 */
export async function hashPassword(password: Value | undefined, signal?: AbortSignal, params: HashParams = HASH_PARAMS): Promise<string> {
  const text = passwordText(password);
  if (text === null) throw new RvmError(`argon2_hash() expects password to be text, got ${typeName(password)}`, RUNTIME.type_error);
  if (Buffer.byteLength(text, 'utf8') > MAX_PASSWORD_BYTES) {
    throw new RvmError(`argon2_hash(): the password is longer than ${MAX_PASSWORD_BYTES} bytes`, RUNTIME.password_too_long);
  }
  return canonicalPhc(await hashQueue.run(() => loadArgon2().hash(text, { type: loadArgon2().argon2id, ...params }), signal));
}

/**
 * True when `password` matches the PHC `hash` (argon2id, or the older argon2i/argon2d so imported
 * hashes keep working). False — never an error — for a malformed or non-Argon2 hash, costs out
 * of bounds, a non-text password or one past MAX_PASSWORD_BYTES.
 */
export async function verifyPassword(password: Value | undefined, hash: Value | undefined, signal?: AbortSignal): Promise<boolean> {
  const text = passwordText(password);
  if (text === null || Buffer.byteLength(text, 'utf8') > MAX_PASSWORD_BYTES) return false;
  if (typeof hash !== 'string' || parsePhc(hash) === null) return false;
  try {
    return await hashQueue.run(() => loadArgon2().verify(hash, text), signal);
  } catch {
    // A salt or digest the native code refuses (too short, wrong padding) is just not a match.
    return false;
  }
}

/** True when `hash` should be replaced at the next login: not argon2id 1.3 with the costs `params` (those argon2_hash writes), or unreadable. */
export function needsRehash(hash: Value | undefined, params: HashParams = HASH_PARAMS): boolean {
  const phc = typeof hash === 'string' ? parsePhc(hash) : null;
  if (phc === null) return true;
  return phc.id !== 'argon2id' || phc.version !== ARGON2_VERSION || phc.m !== params.memoryCost || phc.t !== params.timeCost || phc.p !== params.parallelism;
}

/** The password-hashing cost an app asks for: `"passwords": {"cost": "production" | "test"}`, production when absent. */
export type PasswordCost = 'production' | 'test';

/** Reads `passwords` from the app's config; throws an Error naming the bad key (a plugin setup error). */
export function passwordCost(app: AppSettings): PasswordCost {
  const section = app.config.passwords;
  if (section === undefined) return 'production';
  if (section === null || typeof section !== 'object' || Array.isArray(section))
    throw new Error(`rvm.config.json: passwords must be an object, got ${JSON.stringify(section)}`);
  for (const key of Object.keys(section)) if (key !== 'cost') throw new Error(`rvm.config.json: unknown setting passwords.${key} (known: cost)`);
  const cost = (section as Record<string, unknown>).cost ?? 'production';
  if (cost !== 'production' && cost !== 'test') throw new Error(`rvm.config.json: passwords.cost must be "production" or "test", got ${JSON.stringify(cost)}`);
  return cost;
}

/** Registers argon2_hash, argon2_verify and argon2_needs_rehash, hashing at the cost the app's config asks for. */
export function registerPasswords(rvm: PluginApi): void {
  const params = passwordCost(rvm.app) === 'test' ? TEST_HASH_PARAMS : HASH_PARAMS;
  if (params === TEST_HASH_PARAMS)
    rvm.announce('Passwords', `test cost (Argon2id m=${params.memoryCost},t=${params.timeCost},p=${params.parallelism}), refused by --prod`);
  rvm.native('argon2_hash', (ctx, password) => hashPassword(password, ctx.budget.signal, params), {
    // hashPassword checks it: a secret is hashed as its text.
    params: [{ name: 'password', type: 'text', selfChecked: true }],
    returns: 'text',
    doc: `The Argon2id hash of the password as a PHC string ($argon2id$v=19$m=${HASH_PARAMS.memoryCost},t=${HASH_PARAMS.timeCost},p=${HASH_PARAMS.parallelism}$salt$hash), with a fresh random salt; computed off the event loop. With "passwords": {"cost": "test"} in rvm.config.json, m=${TEST_HASH_PARAMS.memoryCost},t=${TEST_HASH_PARAMS.timeCost},p=${TEST_HASH_PARAMS.parallelism} (for tests: rvm run --prod refuses it). A password over ${MAX_PASSWORD_BYTES} bytes is a password_too_long error.`,
  });

  rvm.native('argon2_verify', (ctx, password, hash) => verifyPassword(password, hash, ctx.budget.signal), {
    params: [
      // What is not a password (text or a secret) and a PHC hash verifies false, never an error.
      { name: 'password', type: 'text', selfChecked: true },
      { name: 'hash', type: 'text', selfChecked: true },
    ],
    returns: 'bool',
    doc: `True when the password matches the PHC hash (argon2id; argon2i and argon2d hashes verify too). A malformed or non-Argon2 hash, one asking for more than ${MAX_MEMORY_KIB} KiB, ${MAX_TIME_COST} passes or ${MAX_PARALLELISM} lanes, or a password over ${MAX_PASSWORD_BYTES} bytes verifies false.`,
  });

  rvm.native('argon2_needs_rehash', (_ctx, hash) => needsRehash(hash, params), {
    // What is not a readable hash needs a rehash, never an error.
    params: [{ name: 'hash', type: 'text', selfChecked: true }],
    returns: 'bool',
    doc: 'True when the hash is not argon2id v=19 with the costs argon2_hash uses now (or cannot be read): rehash the password after a successful argon2_verify and store the new hash.',
  });
}
