/**
 * Wrong second-factor codes counted per secret, so guessing one stops paying (spec/plugins/auth.md): after
 * MAX_WRONG_CODES wrong codes within WRONG_CODE_WINDOW_MS, further tries are refused for a lockout
 * that starts at FIRST_LOCKOUT_MS and doubles with each lockout that follows within
 * LOCKOUT_MEMORY_MS of the last, up to MAX_LOCKOUT_MS. A right code resets the count.
 *
 * The count lives in the shared store (security state: SECURITY_KEY_PREFIX, never evicted), so it
 * holds across workers and machines, and a guess is counted *before* it is answered: every answer
 * but a refusal is the one compareAndSet that recorded it. Guesses racing on one secret cannot
 * slip past the count: one that keeps losing the race is refused, not judged.
 */
import { HTTP, type CallContext, type Halt, type KeyValueStore, type Value, type ValueObject } from '../../plugins/sdk.js';

/** Wrong codes for one secret before further tries are refused: a TOTP guess succeeds once in 10⁶/3. */
export const MAX_WRONG_CODES = 5;
/** Wrong codes count together when they fall within this time of the first. */
export const WRONG_CODE_WINDOW_MS = 15 * 60_000;
/** The first lockout; each next one within LOCKOUT_MEMORY_MS of the last doubles it. */
export const FIRST_LOCKOUT_MS = 60_000;
/** The longest lockout: an attacker gets MAX_WRONG_CODES guesses an hour, a user waits an hour at worst. */
export const MAX_LOCKOUT_MS = 60 * 60_000;
/** How long after a lockout ended the next one still doubles it. */
export const LOCKOUT_MEMORY_MS = MAX_LOCKOUT_MS;
/**
 * Read-then-compareAndSet rounds of one guess: another is needed only when a request for the same
 * secret changed the count in between; more than a few such races at once is a flood on one
 * secret, refused.
 */
export const MAX_GUESS_ROUNDS = 4;
/** What a guess refused for losing every round is told to wait. */
const RACE_RETRY_MS = 1000;

/** What the store keeps of one secret's guesses. */
export interface AttemptState extends ValueObject {
  /** Wrong codes counted since `since`. */
  wrong: number;
  /** Epoch ms of the first wrong code counted; 0 when none is. */
  since: number;
  /** Epoch ms until which every guess is refused; 0 when never locked. */
  locked_until: number;
  /** Lockouts in a row (each within LOCKOUT_MEMORY_MS of the last): the next is 2^lockouts × FIRST_LOCKOUT_MS. */
  lockouts: number;
}

/** A guess refused unjudged: the secret is locked (or flooded) for `waitMs` more. */
export class Lockout {
  constructor(readonly waitMs: number) {}
}

/** The state with no guess counted. */
export const NO_ATTEMPTS: Readonly<AttemptState> = Object.freeze({ wrong: 0, since: 0, locked_until: 0, lockouts: 0 });

/** The attempt fields of a stored value, or NO_ATTEMPTS when it holds none (absent, or not one). */
export function attemptsOf(held: Value | undefined): AttemptState {
  if (held === null || typeof held !== 'object' || Array.isArray(held)) return { ...NO_ATTEMPTS };
  const h = held as Record<string, unknown>;
  const n = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  return { wrong: n(h.wrong), since: n(h.since), locked_until: n(h.locked_until), lockouts: n(h.lockouts) };
}

/** The state after one more wrong code at `now`: counted, and locked when it is the MAX_WRONG_CODES-th in the window. */
export function afterWrongCode<S extends AttemptState>(state: S, now: number): S {
  const counting = state.wrong > 0 && now - state.since < WRONG_CODE_WINDOW_MS;
  const wrong = counting ? state.wrong + 1 : 1;
  if (wrong < MAX_WRONG_CODES) return { ...state, wrong, since: counting ? state.since : now };
  const lockouts = state.locked_until > 0 && now - state.locked_until < LOCKOUT_MEMORY_MS ? state.lockouts + 1 : 1;
  const lockMs = Math.min(FIRST_LOCKOUT_MS * 2 ** (lockouts - 1), MAX_LOCKOUT_MS);
  return { ...state, wrong: 0, since: 0, locked_until: now + lockMs, lockouts };
}

/** The state after a right code: the count starts again (the lockouts in a row are kept until they are forgotten). */
export function afterRightCode<S extends AttemptState>(state: S): S {
  return { ...state, wrong: 0, since: 0 };
}

/** How long to keep `state` from `now`: while its count, its lockout or its memory of lockouts matters (≤ 0: nothing to keep). */
export function attemptsTtl(state: AttemptState, now: number): number {
  const counting = state.wrong > 0 ? state.since + WRONG_CODE_WINDOW_MS : 0;
  const remembered = state.locked_until > 0 ? state.locked_until + LOCKOUT_MEMORY_MS : 0;
  return Math.max(counting, remembered) - now;
}

/** How one kind of code is judged against its stored state. */
export interface GuessRules<S extends AttemptState> {
  /** The state a stored value holds (absent or malformed: a fresh one). */
  read(held: Value | undefined): S;
  /** The state to store after this code when it is right; null when it is wrong for `state`. */
  right(state: S): S | null;
  /** How long to keep `next` at least, beyond what its count needs (TOTP: the replay mark's TTL). */
  keepMs?(next: S): number;
}

/**
 * Judges one guess, counted: reads the state at `key` (or starts from `read.held`, read already),
 * refuses it while locked, else stores the state after it (right or wrong) with compareAndSet and
 * answers whether it was right. A Lockout when locked, or when it lost MAX_GUESS_ROUNDS races.
 */
export async function countedGuess<S extends AttemptState>(
  store: KeyValueStore,
  key: string,
  now: number,
  rules: GuessRules<S>,
  read?: { held: Value | undefined },
): Promise<boolean | Lockout> {
  let held = read === undefined ? await store.get(key) : read.held;
  for (let round = 0; ; round++) {
    const state = rules.read(held);
    if (state.locked_until > now) return new Lockout(state.locked_until - now);
    const right = rules.right(state);
    const next = right ?? afterWrongCode(state, now);
    const ttl = Math.max(attemptsTtl(next, now), rules.keepMs?.(next) ?? 0);
    // A state with nothing left to remember is removed rather than kept (and counted) for nothing.
    if (await store.compareAndSet(key, held, ttl > 0 ? next : undefined, ttl > 0 ? ttl : undefined)) return right !== null;
    if (round + 1 >= MAX_GUESS_ROUNDS) return new Lockout(RACE_RETRY_MS);
    held = await store.get(key);
  }
}

/** Whether the secret at `key`'s state (as read) refuses guesses at `now`: the Lockout, or null. */
export function lockoutOf(held: Value | undefined, now: number): Lockout | null {
  const lockedUntil = attemptsOf(held).locked_until;
  return lockedUntil > now ? new Lockout(lockedUntil - now) : null;
}

/** The 429 `too_many_attempts` of a refused guess, with Retry-After in whole seconds. */
export function tooManyAttempts(ctx: CallContext, lockout: Lockout): Halt {
  const seconds = Math.max(1, Math.ceil(lockout.waitMs / 1000));
  const entry = HTTP.too_many_attempts;
  return ctx.fail(entry.status, `${entry.message} (retry in ${seconds} s)`, entry.code, { 'Retry-After': String(seconds) });
}

/** A verification's answer for code: its value, or the request answered 429 when it was refused. */
export async function answerGuess<T extends Value>(ctx: CallContext, answer: Promise<T | Lockout>): Promise<T | Halt> {
  const judged = await answer;
  return judged instanceof Lockout ? tooManyAttempts(ctx, judged) : judged;
}
