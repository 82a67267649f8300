/**
 * Exact sliding windows for the primary-held store: per key, the timestamps of the allowed
 * requests still inside the window; a request is allowed iff fewer than `limit` lie in
 * `(now - windowMs, now]`, and denied requests are not recorded. The semantics are those of
 * stdlib/ratelimit/store.ts's in-process store (its property tests run against this one too);
 * the runtime may not import stdlib, so the window is implemented again here, more simply
 * (a sorted array per key, least recently used key dropped first).
 */

/** The outcome of a hit or a peek; structurally stdlib/ratelimit's `RateLimitResult`. */
export interface WindowResult {
  /** Whether this request is (for `peek`: would be) allowed. */
  allowed: boolean;
  /** How many more requests the key may make right now. */
  remaining: number;
  /** Epoch ms at which the oldest counted request leaves the window; `now` when none is counted. */
  resetAt: number;
}

/** Most keys held: bounds the primary's memory when clients create keys (one per IP); the same cap as the in-process rate-limit store. */
export const MAX_WINDOW_KEYS = 200_000;
/** How often keys whose newest request left the window are swept: often enough to return memory, rare enough to cost nothing. */
export const WINDOW_SWEEP_INTERVAL_MS = 30_000;

interface Slot {
  /** Allowed requests still (possibly) in the window, oldest first. */
  times: number[];
  /** The window of the latest hit: how long the newest request keeps the key alive. */
  windowMs: number;
}

/** Exact sliding windows keyed by text, with `now` given by the caller. */
export interface SlidingWindows {
  hit(key: string, limit: number, windowMs: number, now: number): WindowResult;
  peek(key: string, limit: number, windowMs: number, now: number): WindowResult;
  reset(key: string): void;
  /** Keys held now. */
  readonly size: number;
  /** Drops every key whose newest request left its window. */
  sweep(now: number): void;
  /** Stops the sweep timer. */
  close(): void;
}

export interface SlidingWindowsOptions {
  maxKeys?: number;
  /** Period of the idle-key sweep; 0 turns the timer off. */
  sweepIntervalMs?: number;
  /** Clock of the timer's sweeps. */
  now?: () => number;
}

/** Creates an empty set of windows with a periodic, unref'd sweep. */
export function createSlidingWindows(options: SlidingWindowsOptions = {}): SlidingWindows {
  const maxKeys = options.maxKeys ?? MAX_WINDOW_KEYS;
  const clock = options.now ?? Date.now;
  // A Map iterates in insertion order: re-inserting a key on use keeps the least recently used first.
  const slots = new Map<string, Slot>();

  const expire = (slot: Slot, now: number, windowMs: number): void => {
    const edge = now - windowMs;
    let n = 0;
    while (n < slot.times.length && slot.times[n]! <= edge) n++;
    if (n > 0) slot.times.splice(0, n);
  };
  const result = (slot: Slot | undefined, allowed: boolean, limit: number, now: number): WindowResult => {
    const count = slot === undefined ? 0 : slot.times.length;
    return { allowed, remaining: Math.max(0, limit - count), resetAt: count === 0 ? now : slot!.times[0]! + slot!.windowMs };
  };

  const windows: SlidingWindows = {
    get size() {
      return slots.size;
    },
    hit(key, limit, windowMs, now) {
      let slot = slots.get(key);
      if (slot === undefined) {
        if (limit < 1) return result(undefined, false, limit, now);
        if (slots.size >= maxKeys) slots.delete(slots.keys().next().value as string);
        slot = { times: [now], windowMs };
        slots.set(key, slot);
        return result(slot, true, limit, now);
      }
      slots.delete(key);
      slots.set(key, slot);
      expire(slot, now, windowMs);
      slot.windowMs = windowMs;
      if (slot.times.length >= limit) return result(slot, false, limit, now);
      slot.times.push(now);
      return result(slot, true, limit, now);
    },
    peek(key, limit, windowMs, now) {
      const slot = slots.get(key);
      if (slot === undefined) return result(undefined, limit > 0, limit, now);
      expire(slot, now, windowMs);
      if (slot.times.length === 0) {
        slots.delete(key);
        return result(undefined, limit > 0, limit, now);
      }
      return result(slot, slot.times.length < limit, limit, now);
    },
    reset(key) {
      slots.delete(key);
    },
    sweep(now) {
      for (const [key, slot] of slots) {
        const newest = slot.times[slot.times.length - 1];
        if (newest === undefined || newest <= now - slot.windowMs) slots.delete(key);
      }
    },
    close() {
      if (timer !== null) clearInterval(timer);
    },
  };
  const interval = options.sweepIntervalMs ?? WINDOW_SWEEP_INTERVAL_MS;
  const timer = interval > 0 ? setInterval(() => windows.sweep(clock()), interval) : null;
  timer?.unref();
  return windows;
}
