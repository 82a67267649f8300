/**
 * Record ids and timestamps, set by the store: UUIDv7 (RFC 9562 §5.7) and ISO-8601 UTC with
 * milliseconds. Ids made by one process are strictly increasing, also within one millisecond and
 * when the clock steps back, so a table ordered by id is in creation order.
 */
import { randomFillSync } from 'node:crypto';

/** Random bytes drawn per refill: one syscall serves many ids. */
const RANDOM_POOL_BYTES = 4096;
/** The counter (rand_a's 12 bits and rand_b's top 30) restarts below 2^41 each millisecond, leaving 2^41 increments of headroom (RFC 9562 §6.2, method 1). */
const COUNTER_BITS = 42;
const COUNTER_LIMIT = 2 ** COUNTER_BITS;
const COUNTER_SEED_LIMIT = 2 ** (COUNTER_BITS - 1);
const LOW_BITS = 2 ** 30;

const pool = Buffer.alloc(RANDOM_POOL_BYTES);
let poolAt = RANDOM_POOL_BYTES;

function random32(): number {
  if (poolAt + 4 > RANDOM_POOL_BYTES) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const value = pool.readUInt32BE(poolAt);
  poolAt += 4;
  return value;
}

/** ASCII codes of the two hex digits of each byte value. */
const HEX_HIGH = Uint8Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0').charCodeAt(0));
const HEX_LOW = Uint8Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0').charCodeAt(1));
/** Where each of the 16 bytes' two digits go in the 36 characters (the hyphens stay put). */
const DIGIT_AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];
/** The id's text is written here, then read out as one flat string: concatenating 20 pieces made a rope of 20 nodes per id. */
const text = Buffer.from('00000000-0000-0000-0000-000000000000', 'latin1');

function putByte(index: number, byte: number): void {
  const at = DIGIT_AT[index]!;
  text[at] = HEX_HIGH[byte]!;
  text[at + 1] = HEX_LOW[byte]!;
}

/** Makes UUIDv7s (lowercase, hyphenated) with the millisecond each carries, strictly increasing among themselves. */
export type UuidV7Source = (now?: number) => { id: string; ms: number };

/** A source of UUIDv7s with its own clock state: the process has one (uuidv7At); a test makes its own. */
export function uuidv7Source(): UuidV7Source {
  let lastMs = -1;
  let counter = 0;
  return (now = Date.now()) => {
    if (now > lastMs) {
      lastMs = now;
      counter = (random32() % 2 ** 11) * LOW_BITS + (random32() % LOW_BITS);
    } else {
      counter += 1;
      // The counter ran out within one millisecond (or the clock went back that far): borrow the next millisecond.
      if (counter >= COUNTER_LIMIT) {
        lastMs += 1;
        counter = random32() % COUNTER_SEED_LIMIT;
      }
    }
    const ms = lastMs;
    const high = Math.floor(counter / LOW_BITS);
    const low = counter % LOW_BITS;
    const tail = random32();
    putByte(0, Math.floor(ms / 2 ** 40) & 0xff);
    putByte(1, Math.floor(ms / 2 ** 32) & 0xff);
    putByte(2, (ms >>> 24) & 0xff);
    putByte(3, (ms >>> 16) & 0xff);
    putByte(4, (ms >>> 8) & 0xff);
    putByte(5, ms & 0xff);
    putByte(6, 0x70 | (high >>> 8));
    putByte(7, high & 0xff);
    putByte(8, 0x80 | (low >>> 24));
    putByte(9, (low >>> 16) & 0xff);
    putByte(10, (low >>> 8) & 0xff);
    putByte(11, low & 0xff);
    putByte(12, tail >>> 24);
    putByte(13, (tail >>> 16) & 0xff);
    putByte(14, (tail >>> 8) & 0xff);
    putByte(15, tail & 0xff);
    const id = text.toString('latin1', 0, 36);
    return { id, ms };
  };
}

/** The process's UUIDv7s: ids made by one process are strictly increasing. `now` is for tests. */
export const uuidv7At: UuidV7Source = uuidv7Source();

/** A new UUIDv7. */
export function uuidv7(): string {
  return uuidv7At().id;
}

/** The millisecond isoTimestamp wrote last, and its text. */
let lastIsoMs = NaN;
let lastIso = '';

/** Milliseconds since the epoch as ISO-8601 UTC with milliseconds (`2025-01-02T03:04:05.678Z`). */
export function isoTimestamp(ms: number): string {
  // Writes under load come many to a millisecond: the text of the last one is kept.
  if (ms !== lastIsoMs) {
    lastIsoMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}

/** Any UUID in canonical text form (the store accepts ids of any version, lowercased). */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
