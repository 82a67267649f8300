/**
 * The arithmetic of time-based one-time passwords: a Base32 secret read into key bytes, the
 * RFC 4226 code (HMAC-SHA-1, dynamic truncation) at a counter, and the RFC 6238 time step.
 *
 * otplib computes the same codes, and the tests hold this module to otplib, to node:crypto's
 * HMAC and to the RFC 6238 vectors; verification runs here because otplib's `verify` costs about
 * 35 µs per call on this machine (its option checks and generic SHA-1), twice a whole guarded
 * request, and three HMACs through node:crypto about 5 µs (bench/second-factor.ts).
 */
import { createHash } from 'node:crypto';

/** RFC 4648 Base32 alphabet, the one authenticator apps read. */
const BASE32_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
/** Each character's 5-bit value, by char code; -1 for characters outside the alphabet. */
const BASE32_VALUES = (() => {
  const values = new Int8Array(128).fill(-1);
  for (let i = 0; i < BASE32_ALPHABET.length; i++) {
    values[BASE32_ALPHABET.charCodeAt(i)] = i;
    values[BASE32_ALPHABET.toLowerCase().charCodeAt(i)] = i;
  }
  return values;
})();

/**
 * Shortest secret accepted, in bytes: RFC 4226 §4 R6 asks for at least 128 bits (otplib's
 * guardrail refuses less too). A shorter secret verifies false rather than weakly.
 */
export const MIN_SECRET_BYTES = 16;
/**
 * Longest secret read, in Base32 characters (640 bits, four times the 160 bits generated): bounds
 * the work hostile input can ask for before it is refused.
 */
export const MAX_SECRET_CHARS = 128;
/** 2^32, to write a counter as two 32-bit halves. */
const TWO_POW_32 = 0x1_0000_0000;

/**
 * The bytes a Base32 secret stands for: letters in either case, `=` padding at the end allowed.
 * Null when it is not Base32, decodes to under MIN_SECRET_BYTES, or is longer than MAX_SECRET_CHARS.
 */
export function decodeBase32Secret(text: string): Buffer | null {
  if (text.length > MAX_SECRET_CHARS) return null;
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 61 /* = */) end--;
  const out = Buffer.allocUnsafe(Math.floor((end * 5) / 8));
  let bits = 0;
  let buffer = 0;
  let at = 0;
  for (let i = 0; i < end; i++) {
    const code = text.charCodeAt(i);
    const value = code < 128 ? BASE32_VALUES[code]! : -1;
    if (value < 0) return null;
    buffer = ((buffer << 5) | value) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out[at++] = (buffer >>> bits) & 0xff;
    }
  }
  return at < MIN_SECRET_BYTES ? null : out;
}

/** SHA-1's initial hash value (FIPS 180-4 §5.3.1). */
const SHA1_INIT = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0];
/** The message schedule of one compression, and a block and state to work in: reused, as nothing here runs two at once. */
const SCHEDULE = new Int32Array(80);
const BLOCK = new Int32Array(16);
const STATE = new Int32Array(5);

/**
 * One SHA-1 compression (FIPS 180-4 §6.1.2) of the 16 big-endian words of `block` into `state`.
 * Only additions, rotations and bitwise operations: no branch or table lookup depends on the key.
 * The four rounds are four loops, so none chooses its function per step.
 */
function compress(state: Int32Array, block: Int32Array): void {
  const w = SCHEDULE;
  for (let t = 0; t < 16; t++) w[t] = block[t]!;
  for (let t = 16; t < 80; t++) {
    const x = w[t - 3]! ^ w[t - 8]! ^ w[t - 14]! ^ w[t - 16]!;
    w[t] = (x << 1) | (x >>> 31);
  }
  let a = state[0]!;
  let b = state[1]!;
  let c = state[2]!;
  let d = state[3]!;
  let e = state[4]!;
  let t = 0;
  for (; t < 20; t++) {
    const next = (((a << 5) | (a >>> 27)) + ((b & c) | (~b & d)) + e + w[t]! + 0x5a827999) | 0;
    e = d;
    d = c;
    c = (b << 30) | (b >>> 2);
    b = a;
    a = next;
  }
  for (; t < 40; t++) {
    const next = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e + w[t]! + 0x6ed9eba1) | 0;
    e = d;
    d = c;
    c = (b << 30) | (b >>> 2);
    b = a;
    a = next;
  }
  for (; t < 60; t++) {
    const next = (((a << 5) | (a >>> 27)) + ((b & c) | (b & d) | (c & d)) + e + w[t]! + 0x8f1bbcdc) | 0;
    e = d;
    d = c;
    c = (b << 30) | (b >>> 2);
    b = a;
    a = next;
  }
  for (; t < 80; t++) {
    const next = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e + w[t]! + 0xca62c1d6) | 0;
    e = d;
    d = c;
    c = (b << 30) | (b >>> 2);
    b = a;
    a = next;
  }
  state[0] = (state[0]! + a) | 0;
  state[1] = (state[1]! + b) | 0;
  state[2] = (state[2]! + c) | 0;
  state[3] = (state[3]! + d) | 0;
  state[4] = (state[4]! + e) | 0;
}

/**
 * HMAC-SHA-1 (RFC 2104) of 8-byte counters under one key, for the few codes of a verification:
 * the key's inner and outer pads are compressed once, then each counter costs two compressions
 * (node:crypto's createHmac sets the key up again per call; three codes cost about 5 µs there).
 * Held to createHmac by the tests, on random keys and counters.
 */
export class HotpKey {
  /** The states after the key's inner and outer pads: words 0–4 and 5–9 of one array. */
  private readonly pads = new Int32Array(10);

  constructor(key: Uint8Array) {
    // A key longer than SHA-1's block is hashed first (RFC 2104 §2).
    const k = key.length > 64 ? createHash('sha1').update(key).digest() : key;
    this.padded(k, 0x36, 0);
    this.padded(k, 0x5c, 5);
  }

  /** Compresses the key xor `pad`, zero-filled to a block, into `pads` from word `at`. */
  private padded(key: Uint8Array, pad: number, at: number): void {
    const block = BLOCK;
    for (let i = 0; i < 16; i++) {
      const j = i * 4;
      block[i] = (((key[j] ?? 0) ^ pad) << 24) | (((key[j + 1] ?? 0) ^ pad) << 16) | (((key[j + 2] ?? 0) ^ pad) << 8) | ((key[j + 3] ?? 0) ^ pad);
    }
    STATE.set(SHA1_INIT);
    compress(STATE, block);
    for (let i = 0; i < 5; i++) this.pads[at + i] = STATE[i]!;
  }

  /** RFC 4226's dynamically truncated 31-bit value at `counter` (a whole number ≥ 0): the code is it mod 10^digits. */
  truncated(counter: number): number {
    const block = BLOCK;
    const state = STATE;
    // Inner hash: the counter, padding, and the length of pad block + counter in bits.
    block.fill(0);
    block[0] = Math.floor(counter / TWO_POW_32);
    block[1] = counter % TWO_POW_32;
    block[2] = 0x80000000 | 0;
    block[15] = (64 + 8) * 8;
    for (let i = 0; i < 5; i++) state[i] = this.pads[i]!;
    compress(state, block);
    // Outer hash: the inner digest, padding, and the length of pad block + digest in bits.
    block.fill(0);
    block.set(state);
    block[5] = 0x80000000 | 0;
    block[15] = (64 + 20) * 8;
    for (let i = 0; i < 5; i++) state[i] = this.pads[5 + i]!;
    compress(state, block);
    // Dynamic truncation (RFC 4226 §5.3) over the 20 digest bytes, big-endian in the words.
    const byte = (i: number): number => (state[i >> 2]! >>> (24 - (i & 3) * 8)) & 0xff;
    const offset = byte(19) & 0x0f;
    return ((byte(offset) & 0x7f) << 24) | (byte(offset + 1) << 16) | (byte(offset + 2) << 8) | byte(offset + 3);
  }

  /** The RFC 4226 HOTP code at `counter` (a whole number ≥ 0), `digits` long, zero-padded. */
  code(counter: number, digits: number): string {
    return String(this.truncated(counter) % 10 ** digits).padStart(digits, '0');
  }
}

/** The RFC 4226 HOTP code of `key` at `counter` (a whole number ≥ 0), `digits` long, zero-padded. */
export function hotp(key: Uint8Array, counter: number, digits: number): string {
  return new HotpKey(key).code(counter, digits);
}

/** The RFC 6238 time step of `nowMs` for a period of `periodSeconds` (T0 = 0). */
export function timeStep(nowMs: number, periodSeconds: number): number {
  return Math.floor(nowMs / 1000 / periodSeconds);
}
