/**
 * The crypto helpers of spec/plugins/crypto.md other than CSRF: secure_random, encrypt, decrypt, generate_uuid.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { RUNTIME, RvmError, expectTextLike } from '../../plugins/sdk.js';
import type { NativeBudget, PluginApi, Value } from '../../plugins/sdk.js';
import { decryptText, encryptText, KEY_BYTES, parseKey } from './aes-gcm.js';

/** Most bytes one secure_random call returns: keys and tokens are tens of bytes, not bulk data. */
export const MAX_RANDOM_BYTES = 1024;

/** Registers secure_random, encrypt, decrypt and generate_uuid. */
export function registerCryptoNatives(rvm: PluginApi): void {
  rvm.native(
    'secure_random',
    (_ctx, count) => {
      if (count < 1 || count > MAX_RANDOM_BYTES) {
        throw new RvmError(`secure_random() takes a byte count from 1 to ${MAX_RANDOM_BYTES}, got ${count}`, RUNTIME.invalid_argument);
      }
      return randomBytes(count).toString('base64');
    },
    {
      params: [{ name: 'n', type: 'int', doc: `number of bytes, 1 to ${MAX_RANDOM_BYTES}` }],
      returns: 'text',
      doc: `n cryptographically secure random bytes, base64-encoded; secure_random(${KEY_BYTES}) is a 256-bit key for encrypt(). n outside 1..${MAX_RANDOM_BYTES} is an invalid_argument error.`,
    },
  );

  rvm.native('encrypt', (ctx, data, key) => encryptText(textArg(ctx.budget, 'encrypt', 'data', data), parseKey(key)), {
    params: [
      { name: 'data', type: 'any', doc: 'the text to encrypt (UTF-8)' },
      { name: 'key', type: 'any', doc: `base64 of exactly ${KEY_BYTES} bytes, text or secret()` },
    ],
    returns: 'text',
    doc: `AES-256-GCM: encrypts the text under the key with a fresh random 96-bit IV and returns base64(iv ‖ ciphertext ‖ 16-byte tag). A key that is not base64 of exactly ${KEY_BYTES} bytes is an invalid_key error.`,
  });

  rvm.native('decrypt', (ctx, ciphertext, key) => decryptText(textArg(ctx.budget, 'decrypt', 'ciphertext', ciphertext), parseKey(key)), {
    params: [
      { name: 'ciphertext', type: 'any', doc: 'what encrypt() returned' },
      { name: 'key', type: 'any', doc: 'the key it was encrypted with' },
    ],
    returns: 'text',
    doc: 'Decrypts what encrypt() returned and gives back the text. Tampered or truncated input, another key, or anything that is not an encrypt() result is a decrypt_failed error (catch it with try/catch); a malformed key is invalid_key.',
  });

  rvm.native('generate_uuid', () => randomUUID(), {
    params: [],
    returns: 'text',
    doc: 'A random UUID version 4, e.g. 3b241101-e2bb-4255-8caf-4136c566a962.',
  });
}

/**
 * A text argument, accepting secret text (revealed): encrypting a secret is a fair use. Charged
 * to the budget: encoding, the cipher and base64 each pass over it.
 */
function textArg(budget: NativeBudget, fn: string, param: string, value: Value | undefined): string {
  const text = expectTextLike(fn, param, value);
  budget.chargeText(3 * text.length);
  return text;
}
