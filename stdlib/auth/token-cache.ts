/**
 * A bounded cache of verified tokens: token → claims, each entry dropped once its token expires.
 * It lets a hot route skip jose's asynchronous verification for a token it has already verified,
 * and answers synchronously. Eviction is second-chance (CLOCK), close to least-recently-used
 * without moving an entry on every hit: a hit only marks the entry, and when the cache is full the
 * oldest unmarked entry goes, marked ones being unmarked and moved to the back as they are passed.
 */
import type { ValueObject } from '../../plugins/sdk.js';

interface Entry {
  claims: ValueObject;
  /** Epoch milliseconds after which the entry is never served. */
  expiresAtMs: number;
  /** Used since eviction last passed over it. */
  recent: boolean;
}

/** Token → verified claims, at most `capacity` entries. */
export class TokenCache {
  // A Map iterates in insertion order: the first entry is the one eviction looks at next.
  private readonly entries = new Map<string, Entry>();

  constructor(readonly capacity: number) {}

  /** The claims cached for `token`, or undefined when absent or expired at `nowMs` (then dropped). */
  get(token: string, nowMs: number): ValueObject | undefined {
    const entry = this.entries.get(token);
    if (entry === undefined) return undefined;
    if (nowMs >= entry.expiresAtMs) {
      this.entries.delete(token);
      return undefined;
    }
    entry.recent = true;
    return entry.claims;
  }

  /** Caches `claims` for `token` until `expiresAtMs`, evicting one entry when full. */
  set(token: string, claims: ValueObject, expiresAtMs: number): void {
    this.entries.delete(token);
    if (this.entries.size >= this.capacity) this.evictOne();
    this.entries.set(token, { claims, expiresAtMs, recent: false });
  }

  /** Drops the oldest entry not used since it was last passed over; after one full pass, the oldest. */
  private evictOne(): void {
    for (let passed = 0; passed < this.entries.size; passed++) {
      const [token, entry] = this.entries.entries().next().value as [string, Entry];
      this.entries.delete(token);
      if (!entry.recent) return;
      entry.recent = false;
      this.entries.set(token, entry);
    }
    const oldest = this.entries.keys().next();
    if (!oldest.done) this.entries.delete(oldest.value);
  }

  /** Drops every entry (the key changed: what was verified with the old one no longer counts). */
  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
