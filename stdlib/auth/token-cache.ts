/**
 * A bounded least-recently-used cache of verified tokens: token → claims, each entry dropped
 * once its token expires. It lets a hot route skip jose's asynchronous verification for a token
 * it has already verified, and answers synchronously.
 */
import type { ValueObject } from '../../plugins/sdk.js';

interface Entry {
  claims: ValueObject;
  /** Epoch milliseconds after which the entry is never served. */
  expiresAtMs: number;
}

/** Token → verified claims, at most `capacity` entries, least recently used evicted first. */
export class TokenCache {
  // A Map iterates in insertion order: re-inserting on every hit keeps the oldest entry first.
  private readonly entries = new Map<string, Entry>();

  constructor(readonly capacity: number) {}

  /** The claims cached for `token`, or undefined when absent or expired at `nowMs` (then dropped). */
  get(token: string, nowMs: number): ValueObject | undefined {
    const entry = this.entries.get(token);
    if (entry === undefined) return undefined;
    this.entries.delete(token);
    if (nowMs >= entry.expiresAtMs) return undefined;
    this.entries.set(token, entry);
    return entry.claims;
  }

  /** Caches `claims` for `token` until `expiresAtMs`, evicting the least recently used entry when full. */
  set(token: string, claims: ValueObject, expiresAtMs: number): void {
    this.entries.delete(token);
    if (this.entries.size >= this.capacity) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(token, { claims, expiresAtMs });
  }

  /** Drops every entry (the key changed: what was verified with the old one no longer counts). */
  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
