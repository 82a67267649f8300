/**
 * Strict base64 decoding, one parser for every native that reads base64 (keys, ciphertexts,
 * base64_decode): Buffer.from skips characters it does not know, silently.
 */

/** Standard or URL-safe base64, padding optional (Python pads URL-safe base64, JWTs do not); canonical form is checked by re-encoding. */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const BASE64URL = /^[A-Za-z0-9_-]*={0,2}$/;

/**
 * The bytes of standard (RFC 4648 §4) or URL-safe (§5) base64, padded or not, one alphabet per
 * text; null for anything else, including non-zero trailing bits (not canonical).
 */
export function decodeBase64(text: string): Buffer | null {
  const url = BASE64URL.test(text);
  if (!url && !BASE64.test(text)) return null;
  const unpadded = text.replace(/=+$/, '');
  if (unpadded.length % 4 === 1) return null;
  if (text.length !== unpadded.length && text.length % 4 !== 0) return null;
  const bytes = Buffer.from(unpadded, url ? 'base64url' : 'base64');
  // Re-encoding gives back the input only when no bits were dropped (non-canonical trailing bits).
  const again = bytes.toString(url ? 'base64url' : 'base64').replace(/=+$/, '');
  return again === unpadded ? bytes : null;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The text that `bytes` encode in UTF-8, or null when they are not UTF-8 (no U+FFFD substitution). */
export function strictUtf8(bytes: Uint8Array): string | null {
  try {
    return UTF8.decode(bytes);
  } catch {
    return null;
  }
}
