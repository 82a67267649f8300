/**
 * Digests and their comparison: sha256, hmac_sha256 (webhook signatures) and constant_time_equal.
 * Texts are hashed as their UTF-8 bytes, as Python's `hashlib.sha256(s.encode())` does.
 */
import { createHash, createHmac } from 'node:crypto';
import { RUNTIME, RvmError, constantTimeEqual, expectTextLike, keepSecret } from '../../plugins/sdk.js';
import type { NativeBudget, PluginApi, Value } from '../../plugins/sdk.js';

/** Registers sha256, hmac_sha256 and constant_time_equal. */
export function registerDigests(rvm: PluginApi): void {
  rvm.native(
    'sha256',
    (ctx, s) => {
      const text = textArg(ctx.budget, 'sha256', 's', s);
      return keepSecret(s, createHash('sha256').update(text, 'utf8').digest('hex'));
    },
    {
      params: [{ name: 's', type: 'any', doc: 'text, or a secret (the digest is then a secret)' }],
      returns: 'any',
      doc: "The SHA-256 of the text's UTF-8 bytes as 64 lower-case hex digits. The digest of a secret is a secret: a short or guessable one can be found again from its digest.",
    },
  );

  rvm.native(
    'hmac_sha256',
    (ctx, key, data, encoding) => {
      const keyText = textArg(ctx.budget, 'hmac_sha256', 'key', key);
      // An empty key is a missing configuration, not a key: a signature under it proves nothing.
      if (keyText === '') throw new RvmError('hmac_sha256(): the key is empty', RUNTIME.invalid_key);
      const format = encoding ?? 'hex';
      if (format !== 'hex' && format !== 'base64') {
        throw new RvmError(`hmac_sha256(): encoding must be 'hex' or 'base64', got '${format}'`, RUNTIME.invalid_argument);
      }
      const text = textArg(ctx.budget, 'hmac_sha256', 'data', data);
      return keepSecret(data, createHmac('sha256', keyText).update(text, 'utf8').digest(format));
    },
    {
      params: [
        { name: 'key', type: 'any', doc: "text or a secret, e.g. secret('webhook_key'); not empty" },
        { name: 'data', type: 'any', doc: 'the text to sign (its UTF-8 bytes); a secret gives a secret' },
        { name: 'encoding', type: 'text', optional: true, doc: "'hex' (the default) or 'base64'" },
      ],
      returns: 'any',
      doc: 'The HMAC-SHA256 (RFC 2104) of the data under the key, in lower-case hex or standard base64: what GitHub, Stripe and Shopify sign webhooks with. Compare a signature you received with constant_time_equal. An empty key is an invalid_key error; another encoding an invalid_argument error.',
    },
  );

  rvm.native(
    'constant_time_equal',
    (ctx, a, b) => constantTimeEqual(textArg(ctx.budget, 'constant_time_equal', 'a', a), textArg(ctx.budget, 'constant_time_equal', 'b', b)),
    {
      params: [
        { name: 'a', type: 'any', doc: 'text or a secret' },
        { name: 'b', type: 'any', doc: 'text or a secret' },
      ],
      returns: 'bool',
      doc: 'True when the two texts are equal, taking the same time wherever they differ (and whatever their lengths), so that comparing a received signature or token tells an attacker nothing about the expected one.',
    },
  );
}

/** A text-or-secret argument's text, charged for a pass over it; anything else is a type_error. */
function textArg(budget: NativeBudget, fn: string, param: string, value: Value | undefined): string {
  const text = expectTextLike(fn, param, value);
  budget.chargeText(text.length);
  return text;
}
