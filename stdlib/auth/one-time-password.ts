/**
 * The arithmetic of time-based one-time passwords: a Base32 secret read into key bytes, the
 * RFC 4226 code (HMAC-SHA-1, dynamic truncation) at a counter, and the RFC 6238 time step.
 *
 * otplib computes the same codes, and the tests hold this module to otplib and to the RFC 6238
 * vectors; verification runs here because otplib's `verify` costs about 35 µs per call on this
 * machine (its option checks and pure-JS SHA-1), twice a whole guarded request, where three
 * HMACs through node:crypto cost about 5 µs (bench/second-factor.ts).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

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

/** The RFC 4226 HOTP code of `key` at `counter` (a whole number ≥ 0), `digits` long, zero-padded. */
export function hotp(key: Uint8Array, counter: number, digits: number): string {
  const message = Buffer.allocUnsafe(8);
  message.writeUInt32BE(Math.floor(counter / TWO_POW_32), 0);
  message.writeUInt32BE(counter % TWO_POW_32, 4);
  const mac = createHmac('sha1', key).update(message).digest();
  const offset = mac[19]! & 0x0f;
  const binary = ((mac[offset]! & 0x7f) << 24) | (mac[offset + 1]! << 16) | (mac[offset + 2]! << 8) | mac[offset + 3]!;
  return String(binary % 10 ** digits).padStart(digits, '0');
}

/** The RFC 6238 time step of `nowMs` for a period of `periodSeconds` (T0 = 0). */
export function timeStep(nowMs: number, periodSeconds: number): number {
  return Math.floor(nowMs / 1000 / periodSeconds);
}

/** Two codes of equal length compared without stopping at the first difference. */
export function sameCode(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a, 'latin1'), Buffer.from(b, 'latin1'));
}
