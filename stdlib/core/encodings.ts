/**
 * Core encoding natives: base64 and base64url (RFC 4648), hex, percent-encoding (RFC 3986) and
 * query strings. Texts are encoded as their UTF-8 bytes. Decoders answer null for input that is
 * not a canonical encoding or does not decode to UTF-8, so a handler can refuse bad input with
 * an ordinary `if`. The encoding of a secret is a secret: base64 and hex give it back to anyone.
 */
import {
  MAX_LIST_LENGTH,
  MAX_TEXT_LENGTH,
  RUNTIME,
  RvmError,
  SecretText,
  checkLength,
  decodeBase64,
  entriesOf,
  expectTextLike,
  keepSecret,
  parseQuery,
  revealText,
  strictUtf8,
  typeError,
} from '../../plugins/sdk.js';
import type { NativeBudget, PluginApi, Value } from '../../plugins/sdk.js';
import { occurrences } from './text.js';

/** Registers base64_encode, base64_decode, base64url_encode, base64url_decode, hex_encode, url_encode, url_decode, query_string and parse_query. */
export function registerEncodings(rvm: PluginApi): void {
  const secretOrText = { name: 's', type: 'any', doc: 'text, or a secret (the result is then a secret)' } as const;

  rvm.native('base64_encode', (ctx, s) => encodeBytes(ctx.budget, 'base64_encode', s, 'base64'), {
    params: [secretOrText],
    returns: 'any',
    doc: "The standard base64 (RFC 4648 §4, with `=` padding) of the text's UTF-8 bytes: base64_encode('é') is 'w6k='. A secret gives a secret.",
  });

  rvm.native('base64url_encode', (ctx, s) => encodeBytes(ctx.budget, 'base64url_encode', s, 'base64url'), {
    params: [secretOrText],
    returns: 'any',
    doc: "The URL-safe base64 (RFC 4648 §5: `-` and `_`, no padding, as in JWTs) of the text's UTF-8 bytes. A secret gives a secret.",
  });

  rvm.native('hex_encode', (ctx, s) => encodeBytes(ctx.budget, 'hex_encode', s, 'hex'), {
    params: [secretOrText],
    returns: 'any',
    doc: "The lower-case hex of the text's UTF-8 bytes: hex_encode('é') is 'c3a9'. A secret gives a secret.",
  });

  const base64Decode = (fn: string) => (ctx: { budget: NativeBudget }, s: Value) => {
    const bytes = decodeBase64(textArg(ctx.budget, fn, s));
    const text = bytes === null ? null : strictUtf8(bytes);
    return text === null ? null : keepSecret(s, text);
  };
  const decodeDoc =
    'either alphabet (standard or URL-safe, one per text), padding optional; null for anything else (stray characters, white space, non-canonical trailing bits) and for bytes that are not UTF-8 text. A secret gives a secret.';
  rvm.native('base64_decode', base64Decode('base64_decode'), {
    params: [secretOrText],
    returns: 'any',
    doc: `The UTF-8 text whose bytes the base64 encodes: ${decodeDoc}`,
  });
  rvm.native('base64url_decode', base64Decode('base64url_decode'), {
    params: [secretOrText],
    returns: 'any',
    doc: `The UTF-8 text whose bytes the URL-safe base64 encodes (the same decoder as base64_decode): ${decodeDoc}`,
  });

  rvm.native('url_encode', (ctx, s) => keepSecret(s, percentEncode(ctx.budget, 'url_encode', textArg(ctx.budget, 'url_encode', s))), {
    params: [secretOrText],
    returns: 'any',
    doc: "Percent-encodes the text's UTF-8 bytes, all but the RFC 3986 unreserved characters `A-Z a-z 0-9 - . _ ~`: url_encode('a b&c') is 'a%20b%26c'. A secret gives a secret.",
  });

  rvm.native(
    'url_decode',
    (ctx, s) => {
      const text = percentDecode(textArg(ctx.budget, 'url_decode', s));
      return text === null ? null : keepSecret(s, text);
    },
    {
      params: [secretOrText],
      returns: 'any',
      doc: "Decodes `%XX` escapes (RFC 3986); `+` stays `+` (parse_query reads it as a space, as forms send it). Null for a malformed escape or bytes that are not UTF-8: url_decode('%E2%82') is null. A secret gives a secret.",
    },
  );

  rvm.native(
    'query_string',
    (ctx, obj) => {
      let secret = false;
      const pairs: string[] = [];
      let length = 0;
      const add = (key: string, value: Value) => {
        if (value === null) return;
        if (value instanceof SecretText) secret = true;
        else if (typeof value === 'object') throw typeError('query_string', `obj.${key.slice(0, 40)}`, 'text, a number, a bool, null or a list of them', value);
        const pair = `${percentEncode(ctx.budget, 'query_string', key)}=${percentEncode(ctx.budget, 'query_string', revealText(value))}`;
        length += pair.length + 1;
        checkLength('query_string', length - 1);
        pairs.push(pair);
      };
      for (const [key, value] of entriesOf('query_string', 'obj', obj)) {
        if (Array.isArray(value)) {
          ctx.budget.chargeItems(value.length);
          for (const item of value) add(key, item);
        } else add(key, value);
      }
      const query = pairs.join('&');
      return secret ? new SecretText(query) : query;
    },
    {
      params: [{ name: 'obj', type: 'object' }],
      returns: 'any',
      doc: "The query string (no `?`) of an object's fields in order, keys and values percent-encoded as url_encode does: a list repeats its key, null fields are left out, numbers and bools are written as text. query_string({ q: 'a b', tag: ['x', 'y'], page: null }) is 'q=a%20b&tag=x&tag=y'. A secret value makes the whole result a secret.",
    },
  );

  rvm.native(
    'parse_query',
    (ctx, s) => {
      ctx.budget.chargeText(s.length);
      const raw = s.startsWith('?') ? s.slice(1) : s;
      // Every list the query holds has at most one item per `&`-separated part.
      const parts = occurrences(raw, '&', MAX_LIST_LENGTH) + 1;
      if (parts > MAX_LIST_LENGTH) throw new RvmError(`parse_query() would build a list of more than ${MAX_LIST_LENGTH} items`, RUNTIME.list_too_long);
      ctx.budget.chargeItems(parts);
      return parseQuery(raw);
    },
    {
      params: [{ name: 's', type: 'text' }],
      returns: 'object',
      doc: "Parses a query string as request.query does: `+` and `%20` are spaces, a repeated key gives a list of its values, a key without `=` the value ''; a leading `?` is skipped. parse_query('a=1&a=2&b') is { a: ['1', '2'], b: '' }.",
    },
  );
}

/** A text-or-secret argument's text, charged for a pass over it; anything else is a type_error. */
function textArg(budget: NativeBudget, fn: string, value: Value): string {
  const text = expectTextLike(fn, 's', value);
  budget.chargeText(text.length);
  return text;
}

/** The length of each encoding of so many bytes. */
const ENCODED_LENGTH = {
  base64: (bytes: number) => Math.ceil(bytes / 3) * 4,
  base64url: (bytes: number) => Math.ceil((bytes * 4) / 3),
  hex: (bytes: number) => bytes * 2,
};

/** Encodes the UTF-8 bytes of a text-or-secret argument, refusing a result over MAX_TEXT_LENGTH before building it. */
function encodeBytes(budget: NativeBudget, fn: string, value: Value, encoding: keyof typeof ENCODED_LENGTH): Value {
  const text = textArg(budget, fn, value);
  const length = checkLength(fn, ENCODED_LENGTH[encoding](Buffer.byteLength(text)));
  budget.chargeText(length);
  return keepSecret(value, Buffer.from(text, 'utf8').toString(encoding));
}

/**
 * Percent-encodes the UTF-8 bytes of `text` but the RFC 3986 unreserved characters, refusing a
 * result over MAX_TEXT_LENGTH before building it. encodeURIComponent also spares `!'()*`, which
 * RFC 3986 reserves, and throws on a lone surrogate, which is encoded as U+FFFD here, as UTF-8
 * everywhere else writes it.
 */
function percentEncode(budget: NativeBudget, fn: string, text: string): string {
  // Three characters per UTF-8 byte bounds the result; counting it exactly is for texts near the limit.
  if (Buffer.byteLength(text) * 3 > MAX_TEXT_LENGTH) checkLength(fn, percentEncodedLength(text));
  let encoded: string;
  try {
    encoded = encodeURIComponent(text);
  } catch {
    encoded = encodeURIComponent(Buffer.from(text, 'utf8').toString('utf8'));
  }
  encoded = encoded.replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  budget.chargeText(encoded.length);
  return encoded;
}

/** The length of `text` percent-encoded (see percentEncode), without building it. */
function percentEncodedLength(text: string): number {
  let length = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) length += UNRESERVED.test(text[i]!) ? 1 : 3;
    else if (c < 0x800) length += 6;
    else if (c >= 0xd800 && c <= 0xdbff && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      length += 12;
      i++;
    } else length += 9;
  }
  return length;
}

/** RFC 3986 unreserved characters: what percentEncode leaves as it is. */
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

/** The text `%XX` escapes encode, or null for a malformed escape or bytes that are not UTF-8. */
function percentDecode(text: string): string | null {
  if (text.indexOf('%') === -1) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}
