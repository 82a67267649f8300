/**
 * The state plugins keep between requests (`ctx.store`), as the host defines it: values with a
 * TTL, compare-and-set, and exact sliding windows. Implemented in vm/runtime/stores/memory.ts (one
 * process), vm/runtime/stores/ipc.ts (the primary's, under workers) and stores/redis.ts.
 */
import type { Value } from '../values.js';

/** The outcome of a sliding-window `hit` or `peek`. */
export interface WindowResult {
  /** Whether this request is (for `peek`: would be) allowed. */
  allowed: boolean;
  /** How many more requests the key may make right now. */
  remaining: number;
  /** Epoch ms at which the oldest counted request leaves the window (one more becomes allowed); `now` when none is counted. */
  resetAt: number;
}

/**
 * The prefix of security state in a KeyValueStore: replay marks, attempt counters, one-time
 * codes. Such keys are held apart from other values with a budget of their own and are never
 * evicted to make room for other keys; when that budget is full a new one is refused (503
 * `store_full`) rather than a live one forgotten (spec/stores.md). Give every such key a TTL.
 */
export const SECURITY_KEY_PREFIX = 'rvm.security:';

/**
 * The state plugins keep between requests, behind `ctx.store`: values with a TTL, and exact
 * sliding windows (rate limits). In process for one process, held by the primary under
 * `--workers N`, on Redis for many machines (spec/stores.md); each method answers a value or a
 * Promise. A store that cannot be reached rejects with code `store_unavailable` (answered 503).
 */
export interface KeyValueStore {
  get(key: string): Value | undefined | Promise<Value | undefined>;
  set(key: string, value: Value, ttlMs?: number): void | Promise<void>;
  delete(key: string): void | Promise<void>;
  /**
   * Sets `key` to `next` (removes it when `next` is undefined) only if its value is still
   * `expected` (undefined: absent or expired), as one atomic step; true when it did. Values are
   * compared as JSON. Single-use facts (a TOTP step accepted, a code's attempts) rest on it:
   * of two requests racing on one key, exactly one wins, in one process or across many.
   */
  compareAndSet(key: string, expected: Value | undefined, next: Value | undefined, ttlMs?: number): boolean | Promise<boolean>;
  /**
   * Checks and, when allowed, counts one request of `key` in an exact sliding window: allowed iff
   * fewer than `limit` requests were allowed in `(now - windowMs, now]`; a refused one is not
   * counted. Windows live apart from values (`delete` never touches one). `now` is the caller's
   * clock; a shared store runs on its own (the primary's, the Redis server's), one for all.
   */
  hit(key: string, limit: number, windowMs: number, now: number): WindowResult | Promise<WindowResult>;
  /** Like `hit`, without counting. */
  peek(key: string, limit: number, windowMs: number, now: number): WindowResult | Promise<WindowResult>;
  /** Forgets every request counted in `key`'s window. */
  reset(key: string): void | Promise<void>;
}
