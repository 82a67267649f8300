/**
 * AES-256-GCM authenticated encryption as rvm's `encrypt`/`decrypt` use it: a base64 key of
 * exactly 32 bytes, a fresh random 96-bit IV per message, full 128-bit tags only, and the
 * envelope `base64(iv12 ‖ ciphertext ‖ tag16)`.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { RUNTIME, MAX_TEXT_LENGTH, RvmError, decodeBase64, isTextLike, revealText, strictUtf8, typeName } from '../../plugins/sdk.js';
import type { Value } from '../../plugins/sdk.js';

/** AES-256: 256-bit keys. */
export const KEY_BYTES = 32;
/** 96-bit IVs: the size GCM is specified for (NIST SP 800-38D §8.2); others are hashed into one. */
export const IV_BYTES = 12;
/**
 * 128-bit tags, and only those: Node accepts shorter tags on decryption unless told the length,
 * and a 4-byte tag can be forged (NIST SP 800-38D Appendix C).
 */
export const TAG_BYTES = 16;
/** The shortest envelope: an IV and a tag around an empty message. */
export const MIN_ENVELOPE_BYTES = IV_BYTES + TAG_BYTES;

const CIPHER = 'aes-256-gcm';

/** One sealed message: the ciphertext (as long as the plaintext) and its 16-byte tag. */
export interface Sealed {
  ciphertext: Buffer;
  tag: Buffer;
}

/** The raw AES-256-GCM core: encrypts `plaintext` under `key` with `iv` (no associated data). */
export function aesGcmSeal(key: Uint8Array, iv: Uint8Array, plaintext: Uint8Array): Sealed {
  const cipher = createCipheriv(CIPHER, key, iv, { authTagLength: TAG_BYTES });
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { ciphertext, tag: cipher.getAuthTag() };
}

/**
 * The raw AES-256-GCM core: the plaintext, or null when the tag does not verify (tampering, a
 * wrong key or IV) or is not exactly 16 bytes.
 */
export function aesGcmOpen(key: Uint8Array, iv: Uint8Array, ciphertext: Uint8Array, tag: Uint8Array): Buffer | null {
  if (tag.length !== TAG_BYTES) return null;
  const decipher = createDecipheriv(CIPHER, key, iv, { authTagLength: TAG_BYTES });
  decipher.setAuthTag(tag);
  try {
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]);
  } catch {
    return null;
  }
}

/**
 * The 32-byte key a language value names: base64 (standard or URL-safe, padding optional) text
 * or a SecretText holding it. Anything else is RvmError `invalid_key`.
 */
export function parseKey(value: Value | undefined): Buffer {
  if (!isTextLike(value)) {
    throw new RvmError(`the key must be base64 text of ${KEY_BYTES} bytes, got ${typeName(value)}`, RUNTIME.invalid_key);
  }
  const bytes = decodeBase64(revealText(value));
  // The message never shows the key: it may have been a secret.
  if (bytes === null || bytes.length !== KEY_BYTES) {
    throw new RvmError(`the key must be base64 text of exactly ${KEY_BYTES} bytes (secure_random(${KEY_BYTES}) makes one)`, RUNTIME.invalid_key);
  }
  return bytes;
}

/** Encrypts UTF-8 text under `key` with a fresh random IV; returns `base64(iv ‖ ciphertext ‖ tag)`. */
export function encryptText(data: string, key: Uint8Array): string {
  const iv = randomBytes(IV_BYTES);
  const { ciphertext, tag } = aesGcmSeal(key, iv, Buffer.from(data, 'utf8'));
  const envelopeBytes = IV_BYTES + ciphertext.length + TAG_BYTES;
  if (Math.ceil(envelopeBytes / 3) * 4 > MAX_TEXT_LENGTH) {
    throw new RvmError(`encrypt() would build a text over ${MAX_TEXT_LENGTH} characters`, RUNTIME.text_too_long);
  }
  return Buffer.concat([iv, ciphertext, tag]).toString('base64');
}

/**
 * Decrypts an envelope made by `encryptText`. Anything that is not one — bad base64, too short,
 * tampered, another key, plaintext that is not UTF-8 — is RvmError `decrypt_failed`, without
 * saying which, so the error is no oracle.
 */
export function decryptText(envelope: string, key: Uint8Array): string {
  const bytes = decodeBase64(envelope);
  if (bytes === null || bytes.length < MIN_ENVELOPE_BYTES) throw decryptFailed();
  const iv = bytes.subarray(0, IV_BYTES);
  const ciphertext = bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES);
  const tag = bytes.subarray(bytes.length - TAG_BYTES);
  const plain = aesGcmOpen(key, iv, ciphertext, tag);
  const text = plain === null ? null : strictUtf8(plain);
  if (text === null) throw decryptFailed();
  return text;
}

function decryptFailed(): RvmError {
  return new RvmError('decryption failed', RUNTIME.decrypt_failed);
}
