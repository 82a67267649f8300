/**
 * The in-process key/value store (the default behind `ctx.store`): a Map with per-key TTL,
 * bounded in size. Values are kept by reference, as a single process shares them anyway.
 */
import { RvmError, type Value } from '../values.js';
import { RUNTIME } from '../errors.js';
import type { KeyValueStore } from '../../plugins/contract.js';

/** Most keys kept: bounds memory when clients can create keys (rate-limit keys per IP). Oldest are evicted first. */
export const MAX_STORE_KEYS = 100_000;
/** How often expired keys nobody reads are swept: often enough to free memory, rare enough to cost nothing. */
export const STORE_SWEEP_INTERVAL_MS = 60_000;

export interface MemoryStoreOptions {
  maxKeys?: number;
  sweepIntervalMs?: number;
  /** Clock for tests (ms). */
  now?: () => number;
}

/** An in-process store; `close()` stops its sweep timer. */
export interface MemoryStore extends KeyValueStore {
  get(key: string): Value | undefined;
  set(key: string, value: Value, ttlMs?: number): void;
  delete(key: string): void;
  compareAndSet(key: string, expected: Value | undefined, next: Value | undefined, ttlMs?: number): boolean;
  readonly size: number;
  /** Removes expired keys now (the timer calls this). */
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
export function createMemoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  const maxKeys = options.maxKeys ?? MAX_STORE_KEYS;
  const now = options.now ?? Date.now;
  const map = new Map<string, Slot>();

  const sweep = (): void => {
    const t = now();
    for (const [key, slot] of map) if (slot.expires <= t) map.delete(key);
  };
  const timer = setInterval(sweep, options.sweepIntervalMs ?? STORE_SWEEP_INTERVAL_MS);
  timer.unref();

  return {
    get(key) {
      const slot = map.get(key);
      if (slot === undefined) return undefined;
      if (slot.expires <= now()) {
        map.delete(key);
        return undefined;
      }
      return slot.value;
    },
    set(key, value, ttlMs) {
      if (ttlMs !== undefined && !(Number.isFinite(ttlMs) && ttlMs > 0)) {
        throw new RvmError(`store ttl must be a positive number of milliseconds, got ${ttlMs}`, RUNTIME.invalid_ttl);
      }
      // Re-inserting moves the key to the newest end, so eviction order is last-write order.
      map.delete(key);
      // No sweep here: at capacity that would cost O(keys) per write.
      while (map.size >= maxKeys) map.delete(map.keys().next().value as string);
      map.set(key, { value, expires: ttlMs === undefined ? Infinity : now() + ttlMs });
    },
    delete(key) {
      map.delete(key);
    },
    compareAndSet(key, expected, next, ttlMs) {
      if (!sameJson(this.get(key), expected)) return false;
      if (next === undefined) this.delete(key);
      else this.set(key, next, ttlMs);
      return true;
    },
    get size() {
      return map.size;
    },
    sweep,
    close() {
      clearInterval(timer);
    },
  };
}
