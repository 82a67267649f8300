/**
 * A bounded cache of verified tokens: token → claims, each entry dropped once its token expires.
 * It lets a hot route skip jose's asynchronous verification for a token it has already verified,
 * and answers synchronously. Eviction is second-chance (CLOCK), close to least-recently-used
 * without moving an entry on every hit: a hit only marks the entry, and when the cache is full the
 * oldest unmarked entry goes, marked ones being unmarked and moved to the back as they are passed.
 *
 * Entries are found by a fingerprint of the token's last characters (for a JWT, its signature),
 * then the whole token is compared: a Map keyed by the token itself hashes all of its ~150
 * characters on every request (the header's text is new each time), ~240 ns against ~70 ns.
 * Two tokens with one fingerprint share a slot, the later replacing the earlier: a miss, never
 * the wrong claims. Only verified tokens are stored, so a forged one cannot push out a real one.
 */
import type { ValueObject } from '../../plugins/sdk.js';

interface Entry {
  token: string;
  claims: ValueObject;
  /** Epoch milliseconds after which the entry is never served. */
  expiresAtMs: number;
  /** Used since eviction last passed over it. */
  recent: boolean;
}

/** Token → verified claims, at most `capacity` entries. */
export class TokenCache {
  // A Map iterates in insertion order: the first entry is the one eviction looks at next.
  private readonly entries = new Map<number, Entry>();

  constructor(readonly capacity: number) {}

  /** The claims cached for `token`, or undefined when absent or expired at `nowMs` (then dropped). */
  get(token: string, nowMs: number): ValueObject | undefined {
    const print = fingerprint(token);
    const entry = this.entries.get(print);
    if (entry === undefined || entry.token !== token) return undefined;
    if (nowMs >= entry.expiresAtMs) {
      this.entries.delete(print);
      return undefined;
    }
    entry.recent = true;
    return entry.claims;
  }

  /** Caches `claims` for `token` until `expiresAtMs`, evicting one entry when full. */
  set(token: string, claims: ValueObject, expiresAtMs: number): void {
    const print = fingerprint(token);
    this.entries.delete(print);
    if (this.entries.size >= this.capacity) this.evictOne();
    this.entries.set(print, { token, claims, expiresAtMs, recent: false });
  }

  /** Drops the oldest entry not used since it was last passed over; after one full pass, the oldest. */
  private evictOne(): void {
    for (let passed = 0; passed < this.entries.size; passed++) {
      const [print, entry] = this.entries.entries().next().value as [number, Entry];
      this.entries.delete(print);
      if (!entry.recent) return;
      entry.recent = false;
      this.entries.set(print, entry);
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

/** Characters of a token's end that its fingerprint reads. */
const PRINTED_CHARS = 8;

/** A small integer (a V8 Smi, cheap as a Map key) from a token's length and its last characters. */
function fingerprint(token: string): number {
  const n = token.length;
  let h = n;
  for (let i = Math.max(0, n - PRINTED_CHARS); i < n; i++) h = Math.imul(h ^ token.charCodeAt(i), 0x01000193);
  return h & 0x3fffffff;
}
