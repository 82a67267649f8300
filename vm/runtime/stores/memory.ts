/**
 * The in-process store (the default behind `ctx.store`, and the primary's under `--workers N`):
 * values in a Map with per-key TTL, bounded in size, kept by reference as a single process shares
 * them anyway; and exact sliding windows (vm/runtime/stores/sliding-window.ts).
 *
 * Security state (keys under SECURITY_KEY_PREFIX: replay marks, attempt counters) lives in a Map
 * of its own with its own budget, so a flood of other keys cannot push a mark out: when that
 * budget is full, only an expired security key makes room, and a new one is refused
 * (StoreFullError, 503 `store_full`) rather than a live one forgotten.
 */
import { RvmError, type Value } from '../../values.js';
import { RUNTIME } from '../../errors.js';
import { SECURITY_KEY_PREFIX, type KeyValueStore, type WindowResult } from '../../host/stores.js';
import { createSlidingWindows } from './sliding-window.js';
import { StoreFullError } from './unavailable.js';

/** Most keys kept: bounds memory when clients can create keys (rate-limit keys per IP). Oldest are evicted first. */
export const MAX_STORE_KEYS = 100_000;
/**
 * Most security keys kept (SECURITY_KEY_PREFIX), apart from MAX_STORE_KEYS: a mark or counter is
 * a few hundred bytes, so the budget costs at most ~30 MB, while holding the marks of far more
 * sign-ins than one process sees within their TTLs (minutes to a day).
 */
export const MAX_SECURITY_KEYS = 100_000;
/** How often expired values and idle windows nobody reads are swept: often enough to free memory, rare enough to cost nothing. */
export const STORE_SWEEP_INTERVAL_MS = 30_000;

export interface InProcessStoreOptions {
  /** Most values held (default MAX_STORE_KEYS). */
  maxKeys?: number;
  /** Most rate-limit windows held (default MAX_WINDOW_KEYS). */
  maxWindowKeys?: number;
  /** Most security keys held (default MAX_SECURITY_KEYS). */
  maxSecurityKeys?: number;
  /** Period of the expiry sweeps; 0 turns the timers off (tests sweep by hand). */
  sweepIntervalMs?: number;
  /** Clock for tests (ms). */
  now?: () => number;
}

/** An in-process store; `close()` stops its sweep timer. */
export interface InProcessStore extends KeyValueStore {
  get(key: string): Value | undefined;
  set(key: string, value: Value, ttlMs?: number): void;
  delete(key: string): void;
  compareAndSet(key: string, expected: Value | undefined, next: Value | undefined, ttlMs?: number): boolean;
  hit(key: string, limit: number, windowMs: number, now: number): WindowResult;
  peek(key: string, limit: number, windowMs: number, now: number): WindowResult;
  reset(key: string): void;
  /** Values held now, security keys included. */
  readonly size: number;
  /** Security keys held now. */
  readonly securityKeyCount: number;
  /** Windows held now. */
  readonly windowCount: number;
  /** Removes expired values and idle windows now (the timers call this). */
  sweep(): void;
  close(): void;
}

interface Slot {
  value: Value;
  /** Epoch ms after which the key is gone; Infinity when it never expires. */
  expires: number;
}

/** Whether two stored values are equal as JSON (what a shared store, which keeps JSON text, compares). */
export function sameJson(a: Value | undefined, b: Value | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

/** Creates an in-process store with lazy expiry on read and a periodic, unref'd sweep. */
export function createInProcessStore(options: InProcessStoreOptions = {}): InProcessStore {
  const maxKeys = options.maxKeys ?? MAX_STORE_KEYS;
  const maxSecurityKeys = options.maxSecurityKeys ?? MAX_SECURITY_KEYS;
  const now = options.now ?? Date.now;
  const map = new Map<string, Slot>();
  const security = new Map<string, Slot>();
  const slotsOf = (key: string): Map<string, Slot> => (key.startsWith(SECURITY_KEY_PREFIX) ? security : map);

  const windows = createSlidingWindows({ maxKeys: options.maxWindowKeys });
  const sweep = (): void => {
    const t = now();
    for (const held of [map, security]) for (const [key, slot] of held) if (slot.expires <= t) held.delete(key);
    windows.sweep(t);
  };
  /** Room for one more security key: the least recently written one, if it has expired; else the key is refused. */
  const makeSecurityRoom = (key: string): void => {
    const [oldest, slot] = security.entries().next().value as [string, Slot];
    if (slot.expires > now()) {
      throw new StoreFullError(
        `the store holds ${maxSecurityKeys} live security keys (store.maxSecurityKeys); '${key}' is refused rather than one of them forgotten`,
      );
    }
    security.delete(oldest);
  };
  const interval = options.sweepIntervalMs ?? STORE_SWEEP_INTERVAL_MS;
  const timer = interval > 0 ? setInterval(sweep, interval) : null;
  timer?.unref();

  return {
    get(key) {
      const held = slotsOf(key);
      const slot = held.get(key);
      if (slot === undefined) return undefined;
      if (slot.expires <= now()) {
        held.delete(key);
        return undefined;
      }
      return slot.value;
    },
    set(key, value, ttlMs) {
      if (ttlMs !== undefined && !(Number.isFinite(ttlMs) && ttlMs > 0)) {
        throw new RvmError(`store ttl must be a positive number of milliseconds, got ${ttlMs}`, RUNTIME.invalid_ttl);
      }
      const held = slotsOf(key);
      // Re-inserting moves the key to the newest end, so eviction order is last-write order.
      held.delete(key);
      // No sweep here: at capacity that would cost O(keys) per write.
      if (held === security) {
        if (security.size >= maxSecurityKeys) makeSecurityRoom(key);
      } else {
        while (map.size >= maxKeys) map.delete(map.keys().next().value as string);
      }
      held.set(key, { value, expires: ttlMs === undefined ? Infinity : now() + ttlMs });
    },
    delete(key) {
      slotsOf(key).delete(key);
    },
    compareAndSet(key, expected, next, ttlMs) {
      if (!sameJson(this.get(key), expected)) return false;
      if (next === undefined) this.delete(key);
      else this.set(key, next, ttlMs);
      return true;
    },
    hit: (key, limit, windowMs, t) => windows.hit(key, limit, windowMs, t),
    peek: (key, limit, windowMs, t) => windows.peek(key, limit, windowMs, t),
    reset: (key) => windows.reset(key),
    get size() {
      return map.size + security.size;
    },
    get securityKeyCount() {
      return security.size;
    },
    get windowCount() {
      return windows.size;
    },
    sweep,
    close() {
      if (timer !== null) clearInterval(timer);
    },
  };
}
