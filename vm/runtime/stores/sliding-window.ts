/**
 * Exact sliding windows in process: the rate-limit state of `ctx.store` for one process, and the
 * primary's under `--workers N`. Per key the store keeps the timestamps of the allowed requests
 * still inside the window (at most `limit` of them, in a ring buffer), and a request is allowed
 * iff fewer than `limit` lie in `(now - window, now]`. Denied requests are not recorded.
 */
import type { WindowResult } from '../../host/stores.js';

/**
 * Keys the in-process store holds at most. Past it the least recently used key makes room only
 * when its window has ended; a window still counting is never dropped (that would hand its client
 * a fresh window: a flood of distinct keys would reset a guard's), so while every key is live a
 * new key's request is refused (not allowed, as over its limit) until one ends. At about 250 bytes per
 * one-hit key on a 64-bit Node (see bench/window-memory.ts) a flood
 * of distinct clients costs at most ~50 MB of heap; a deployment that needs more keys raises
 * `store.maxWindowKeys` or shares a Redis store.
 */
export const MAX_WINDOW_KEYS = 200_000;

/**
 * One key's allowed requests still in the window: a ring buffer of epoch-ms timestamps, oldest at
 * `head`. It is also a node of the store's recency list (`older`/`newer`), so touching and
 * evicting a key are O(1) without re-inserting it into the Map.
 */
class Window {
  times: number[];
  head = 0;
  count: number;
  older: Window | null = null;
  newer: Window | null = null;

  /** A window holding its first allowed request, at `first`. */
  constructor(
    readonly key: string,
    public windowMs: number,
    first: number,
  ) {
    // An array literal is allocated at its exact size: a one-hit key holds one double.
    this.times = [first];
    this.count = 1;
  }

  /** Drops timestamps that left the window `(now - windowMs, now]`. */
  expire(now: number, windowMs: number): void {
    const edge = now - windowMs;
    const times = this.times;
    while (this.count > 0 && times[this.head]! <= edge) {
      this.head = this.head + 1 === times.length ? 0 : this.head + 1;
      this.count--;
    }
  }

  /** Appends `now`; a full ring grows by doubling, at most to `limit` (callers push only below it). */
  push(now: number, limit: number): void {
    let times = this.times;
    if (this.count === times.length) {
      const capacity = Math.min(times.length * 2, limit);
      const grown = new Array<number>(capacity);
      for (let i = 0; i < capacity; i++) grown[i] = i < this.count ? times[(this.head + i) % times.length]! : 0;
      this.times = times = grown;
      this.head = 0;
    }
    const tail = this.head + this.count;
    times[tail >= times.length ? tail - times.length : tail] = now;
    this.count++;
  }

  oldest(): number {
    return this.times[this.head]!;
  }

  /** Whether no counted request is left in the window at `now`: dropping it then forgets nothing. */
  ended(now: number): boolean {
    return this.count === 0 || this.newest() <= now - this.windowMs;
  }

  newest(): number {
    const i = this.head + this.count - 1;
    return this.times[i >= this.times.length ? i - this.times.length : i]!;
  }
}

export interface SlidingWindowsOptions {
  /** Most keys held (default MAX_WINDOW_KEYS). */
  maxKeys?: number;
}

/** Exact sliding windows keyed by text, with what tests and the memory figures need to see. */
export interface SlidingWindows {
  hit(key: string, limit: number, windowMs: number, now: number): WindowResult;
  peek(key: string, limit: number, windowMs: number, now: number): WindowResult;
  reset(key: string): void;
  /** Keys held now. */
  readonly size: number;
  readonly maxKeys: number;
  /** Drops every key whose newest request left its window (the owning store's timer calls this). */
  sweep(now: number): void;
}

/** Creates an empty set of exact sliding windows: idle keys dropped lazily and by `sweep`, at most `maxKeys` keys (an ended one makes room, LRU). */
export function createSlidingWindows(options: SlidingWindowsOptions = {}): SlidingWindows {
  const maxKeys = options.maxKeys ?? MAX_WINDOW_KEYS;
  if (!(Number.isInteger(maxKeys) && maxKeys >= 1)) throw new Error(`store maxWindowKeys must be a positive integer, got ${maxKeys}`);
  const windows = new Map<string, Window>();
  // Recency list through the windows themselves: `oldest` is the least recently used key.
  let oldest: Window | null = null;
  let newest: Window | null = null;

  const unlink = (w: Window): void => {
    if (w.older === null) oldest = w.newer;
    else w.older.newer = w.newer;
    if (w.newer === null) newest = w.older;
    else w.newer.older = w.older;
    w.older = w.newer = null;
  };
  const append = (w: Window): void => {
    w.older = newest;
    if (newest === null) oldest = w;
    else newest.newer = w;
    newest = w;
  };
  const drop = (w: Window): void => {
    unlink(w);
    windows.delete(w.key);
  };

  const result = (w: Window | undefined, allowed: boolean, limit: number, now: number): WindowResult => {
    const count = w === undefined ? 0 : w.count;
    return { allowed, remaining: Math.max(0, limit - count), resetAt: count === 0 ? now : w!.oldest() + w!.windowMs };
  };

  const store: SlidingWindows = {
    maxKeys,
    get size() {
      return windows.size;
    },
    hit(key, limit, windowMs, now) {
      let w = windows.get(key);
      if (w === undefined) {
        if (limit < 1) return result(undefined, false, limit, now);
        if (windows.size >= maxKeys) {
          // Full of live windows: refused, until the least recently used one ends, rather than forget one.
          if (!oldest!.ended(now)) return { allowed: false, remaining: 0, resetAt: oldest!.newest() + oldest!.windowMs };
          drop(oldest!);
        }
        // Reading a character makes V8 flatten a key built by concatenation into one compact
        // string; kept as built, every piece would stay alive (about 3x the memory).
        key.charCodeAt(0);
        w = new Window(key, windowMs, now);
        windows.set(key, w);
        append(w);
        return result(w, true, limit, now);
      }
      if (w !== newest) {
        unlink(w);
        append(w);
      }
      w.expire(now, windowMs);
      w.windowMs = windowMs;
      if (w.count >= limit) return result(w, false, limit, now);
      w.push(now, limit);
      return result(w, true, limit, now);
    },
    peek(key, limit, windowMs, now) {
      const w = windows.get(key);
      if (w === undefined) return result(undefined, limit > 0, limit, now);
      w.expire(now, windowMs);
      if (w.count === 0) {
        drop(w);
        return result(undefined, limit > 0, limit, now);
      }
      return result(w, w.count < limit, limit, now);
    },
    reset(key) {
      const w = windows.get(key);
      if (w !== undefined) drop(w);
    },
    sweep(now) {
      for (let w = oldest; w !== null; ) {
        const next = w.newer;
        if (w.ended(now)) drop(w);
        w = next;
      }
    },
  };

  return store;
}
