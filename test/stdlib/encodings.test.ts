/**
 * The encoding natives (base64, hex, percent-encoding, query strings), the digests (sha256,
 * hmac_sha256, constant_time_equal) and json_stringify's indent: known answers, secrets kept
 * secret, malformed input, and results held to MAX_TEXT_LENGTH before they are built.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { MAX_TEXT_LENGTH, RvmError, SecretText } from '../../plugins/sdk.js';
import type { Value } from '../../plugins/sdk.js';
import { core } from '../../stdlib/core/index.js';
import { crypto } from '../../stdlib/crypto/index.js';
import { indentedLength } from '../../stdlib/core/json.js';
import { CHARS_PER_UNIT } from '../../vm/interp/budget.js';
import { fakeContext, loadForTest, type LoadedPlugins } from '../../plugins/testing.js';

let kit: LoadedPlugins;

before(async () => {
  kit = await loadForTest([core, crypto]);
});

function call(name: string, ...args: (Value | undefined)[]): unknown {
  return kit.call(name, ...args);
}

function throwsCode(fn: () => unknown, code: string): void {
  assert.throws(fn, (e: unknown) => e instanceof RvmError && e.code === code, `expected ${code}`);
}

describe('base64 and hex', () => {
  test('RFC 4648 §10 test vectors, standard and URL-safe', () => {
    const vectors = ['', 'Zg==', 'Zm8=', 'Zm9v', 'Zm9vYg==', 'Zm9vYmE=', 'Zm9vYmFy'];
    ['', 'f', 'fo', 'foo', 'foob', 'fooba', 'foobar'].forEach((text, i) => {
      assert.equal(call('base64_encode', text), vectors[i]);
      assert.equal(call('base64url_encode', text), vectors[i]!.replace(/=+$/, ''));
      assert.equal(call('base64_decode', vectors[i]), text);
      assert.equal(call('base64url_decode', vectors[i]!.replace(/=+$/, '')), text);
    });
  });

  test('texts are UTF-8: accents, emoji and the URL-safe alphabet', () => {
    assert.equal(call('base64_encode', 'é'), 'w6k=');
    assert.equal(call('base64_encode', '😀?>'), '8J+YgD8+');
    assert.equal(call('base64url_encode', '😀?>'), '8J-YgD8-');
    assert.equal(call('base64_decode', '8J+YgD8+'), '😀?>');
    assert.equal(call('base64url_decode', '8J-YgD8-'), '😀?>');
    // Python's urlsafe_b64encode pads; JWTs do not: both decode.
    assert.equal(call('base64url_decode', '8J-YgA=='), '😀');
    assert.equal(call('base64url_decode', '8J-YgA'), '😀');
    assert.equal(call('hex_encode', 'é😀'), 'c3a9f09f9880');
  });

  test('decoding answers null for what is not canonical base64 of UTF-8 text', () => {
    for (const bad of ['Zg=', 'Zm9v YmFy', 'Zm9v\n', '@@@@', 'Zh==', 'Z', '8J+YgD8-', '/w==', 'gA']) {
      assert.equal(call('base64_decode', bad), null, bad);
      assert.equal(call('base64url_decode', bad), null, bad);
    }
  });

  test('a secret encodes and decodes to a secret, never to its text', () => {
    for (const name of ['base64_encode', 'base64url_encode', 'hex_encode', 'url_encode']) {
      const out = call(name, new SecretText('hunter2 é'));
      assert.ok(out instanceof SecretText, name);
      assert.equal(out.toText(), '[secret]');
    }
    const decoded = call('base64_decode', new SecretText('aHVudGVyMg=='));
    assert.ok(decoded instanceof SecretText);
    assert.equal(decoded.reveal(), 'hunter2');
    assert.equal((call('base64_encode', new SecretText('hunter2')) as SecretText).reveal(), 'aHVudGVyMg==');
  });

  test('other values are type errors', () => {
    for (const name of ['base64_encode', 'base64_decode', 'hex_encode', 'url_encode', 'url_decode']) {
      for (const bad of [1, null, ['a'], { a: 1 }]) throwsCode(() => call(name, bad), 'type_error');
    }
  });

  test('an encoding past MAX_TEXT_LENGTH is refused before it is built', () => {
    const atLimit = 'a'.repeat((MAX_TEXT_LENGTH / 4) * 3);
    assert.equal((call('base64_encode', atLimit) as string).length, MAX_TEXT_LENGTH);
    throwsCode(() => call('base64_encode', `${atLimit}a`), 'text_too_long');
    throwsCode(() => call('hex_encode', 'é'.repeat(MAX_TEXT_LENGTH / 4 + 1)), 'text_too_long');
    throwsCode(() => call('url_encode', '€'.repeat(MAX_TEXT_LENGTH / 9 + 1)), 'text_too_long');
    // Unreserved characters stay one character each: a long plain text is not refused.
    assert.equal((call('url_encode', 'a'.repeat(MAX_TEXT_LENGTH)) as string).length, MAX_TEXT_LENGTH);
  });
});

describe('percent-encoding and query strings', () => {
  test("url_encode leaves only RFC 3986's unreserved characters, and url_decode reverses it", () => {
    assert.equal(call('url_encode', "a b&c=d/e?f#g!'()*~-._é😀+"), 'a%20b%26c%3Dd%2Fe%3Ff%23g%21%27%28%29%2A~-._%C3%A9%F0%9F%98%80%2B');
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        const encoded = call('url_encode', text) as string;
        assert.match(encoded, /^[A-Za-z0-9\-._~%]*$/);
        assert.equal(call('url_decode', encoded), text);
        assert.equal(
          encoded,
          encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`),
        );
      }),
    );
  });

  test('a lone surrogate is encoded as U+FFFD; malformed escapes and non-UTF-8 bytes decode to null', () => {
    assert.equal(call('url_encode', '\ud800x'), '%EF%BF%BDx');
    assert.equal(call('url_decode', 'a+b%20c'), 'a+b c');
    for (const bad of ['%', '%2', '%zz', '%E2%82', '%ED%A0%80', '%FF']) assert.equal(call('url_decode', bad), null, bad);
  });

  test("query_string writes fields in order, repeats a list's key, leaves out nulls", () => {
    assert.equal(
      call('query_string', { q: 'a b&c', tag: ['x', 'y'], page: null, n: 1.5, ok: true, 'k é': 'v' }),
      'q=a%20b%26c&tag=x&tag=y&n=1.5&ok=true&k%20%C3%A9=v',
    );
    assert.equal(call('query_string', {}), '');
    assert.equal(call('query_string', { a: [] }), '');
    throwsCode(() => call('query_string', { a: { b: 1 } }), 'type_error');
    throwsCode(() => call('query_string', { a: [[1]] }), 'type_error');
    const secret = call('query_string', { user: 'ada', key: new SecretText('k3y') });
    assert.ok(secret instanceof SecretText);
    assert.equal(secret.reveal(), 'user=ada&key=k3y');
  });

  test('parse_query reads a query as request.query does, and round-trips query_string', () => {
    assert.deepEqual(call('parse_query', '?a=1&a=2&b&c=x+y%20z&d=%zz'), { a: ['1', '2'], b: '', c: 'x y z', d: '%zz' });
    assert.deepEqual(call('parse_query', ''), {});
    const proto = call('parse_query', '__proto__=1') as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(proto), Object.prototype);
    assert.equal(Object.getOwnPropertyDescriptor(proto, '__proto__')?.value, '1');
    fc.assert(
      fc.property(fc.dictionary(fc.string({ minLength: 1 }), fc.oneof(fc.string(), fc.array(fc.string(), { minLength: 2, maxLength: 3 }))), (fields) => {
        // fast-check's dictionaries have no prototype; the language's objects do.
        assert.deepEqual(call('parse_query', call('query_string', fields) as string), Object.fromEntries(Object.entries(fields)));
      }),
    );
  });
});

describe('digests', () => {
  test('sha256: FIPS 180-2 vectors, and UTF-8 bytes', () => {
    assert.equal(call('sha256', ''), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    assert.equal(call('sha256', 'abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    assert.equal(
      call('sha256', 'é'),
      createHash('sha256')
        .update(Buffer.from([0xc3, 0xa9]))
        .digest('hex'),
    );
    const digest = call('sha256', new SecretText('hunter2'));
    assert.ok(digest instanceof SecretText, 'the digest of a secret is a secret');
    assert.equal(digest.reveal(), 'f52fbd32b2b3b86ff88ef6c490628285f482af15ddcb29541f94bcf526a3f6c7');
  });

  test('hmac_sha256: RFC 4231 test case 2, hex and base64, a secret key', () => {
    const expected = '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843';
    assert.equal(call('hmac_sha256', 'Jefe', 'what do ya want for nothing?'), expected);
    assert.equal(call('hmac_sha256', new SecretText('Jefe'), 'what do ya want for nothing?', 'hex'), expected);
    assert.equal(call('hmac_sha256', 'Jefe', 'what do ya want for nothing?', 'base64'), Buffer.from(expected, 'hex').toString('base64'));
    assert.ok(call('hmac_sha256', 'Jefe', new SecretText('data')) instanceof SecretText, 'signed secret data stays secret');
  });

  test('hmac_sha256 refuses an empty key, another encoding, non-text', () => {
    throwsCode(() => call('hmac_sha256', '', 'data'), 'invalid_key');
    throwsCode(() => call('hmac_sha256', new SecretText(''), 'data'), 'invalid_key');
    throwsCode(() => call('hmac_sha256', 'k', 'data', 'base64url'), 'invalid_argument');
    throwsCode(() => call('hmac_sha256', 1, 'data'), 'type_error');
    throwsCode(() => call('hmac_sha256', 'k', null), 'type_error');
  });

  test('constant_time_equal compares texts and secrets', () => {
    assert.equal(call('constant_time_equal', 'abc', 'abc'), true);
    assert.equal(call('constant_time_equal', 'abc', 'abd'), false);
    assert.equal(call('constant_time_equal', 'abc', 'abcd'), false);
    assert.equal(call('constant_time_equal', '', ''), true);
    assert.equal(call('constant_time_equal', new SecretText('s3'), 's3'), true);
    throwsCode(() => call('constant_time_equal', 'a', 1), 'type_error');
  });
});

describe('json_stringify with an indent', () => {
  test('writes as JSON.stringify does, and refuses indents outside 0..10', () => {
    const value = { a: [1, { b: 'x:,[]"\\{' }], c: {}, d: [], 'k"': null };
    assert.equal(call('json_stringify', value, 2), JSON.stringify(value, null, 2));
    assert.equal(call('json_stringify', value, 0), JSON.stringify(value));
    assert.equal(call('json_stringify', value, null), JSON.stringify(value));
    throwsCode(() => call('json_stringify', value, 11), 'invalid_argument');
    throwsCode(() => call('json_stringify', value, -1), 'invalid_argument');
    throwsCode(() => call('json_stringify', value, 1.5), 'type_error');
  });

  test('the indented length is counted exactly on the compact text', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: 1, max: 10 }), (value, indent) => {
        assert.equal(indentedLength(JSON.stringify(value), indent), JSON.stringify(value, null, indent).length);
      }),
    );
  });

  test('a small deep value whose indentation would pass MAX_TEXT_LENGTH is refused before it is built', () => {
    // 2,000 levels: 4 KB compact, about 40 MB indented by ten.
    let deep: Value = [1];
    for (let i = 0; i < 2000; i++) deep = [deep, 1];
    assert.ok((call('json_stringify', deep) as string).length < 10_000);
    const heapBefore = process.memoryUsage().heapUsed;
    throwsCode(() => call('json_stringify', deep, 10), 'text_too_long');
    assert.ok(process.memoryUsage().heapUsed - heapBefore < 32 * 1024 * 1024, 'the indented text was not built');
  });
});

test('every encoding and digest charges the budget in proportion to its input', () => {
  const text = 'é a&b\n'.repeat(100_000);
  const encoded = Buffer.from(text).toString('base64');
  for (const [name, args] of [
    ['base64_encode', [text]],
    ['base64url_encode', [text]],
    ['hex_encode', [text]],
    ['base64_decode', [encoded]],
    ['base64url_decode', [encoded]],
    ['url_encode', [text]],
    ['url_decode', [encodeURIComponent(text)]],
    ['query_string', [{ q: text }]],
    ['parse_query', [`q=${encodeURIComponent(text)}`]],
    ['sha256', [text]],
    ['hmac_sha256', ['key', text]],
    ['constant_time_equal', [text, text]],
    ['json_stringify', [[text], 2]],
  ] as [string, Value[]][]) {
    const ctx = fakeContext();
    kit.callIn(ctx, name, ...args);
    assert.ok(ctx.budget.charged >= text.length / CHARS_PER_UNIT, `${name} charged ${ctx.budget.charged}`);
  }
});
