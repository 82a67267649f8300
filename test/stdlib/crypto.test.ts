/**
 * The crypto plugin's AES-256-GCM core (McGrew–Viega vectors), encrypt/decrypt, secure_random
 * and generate_uuid.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RvmError, SecretText, decodeBase64 } from '../../plugins/sdk.js';
import type { SecuritySchemeSpec, Value } from '../../plugins/sdk.js';
import type { PluginRegistry } from '../../vm/host/registry.js';
import { core } from '../../stdlib/core/index.js';
import { crypto } from '../../stdlib/crypto/index.js';
import { aesGcmOpen, aesGcmSeal, decryptText, encryptText, IV_BYTES, MIN_ENVELOPE_BYTES, parseKey, TAG_BYTES } from '../../stdlib/crypto/aes-gcm.js';
import { MAX_RANDOM_BYTES } from '../../stdlib/crypto/natives.js';
import { loadForTest, type LoadedPlugins } from '../../plugins/testing.js';

let kit: LoadedPlugins;
let registry: PluginRegistry;

before(async () => {
  kit = await loadForTest([core, crypto]);
  registry = kit.registry;
});

function call(name: string, ...args: (Value | undefined)[]): unknown {
  return kit.call(name, ...args);
}

function throwsCode(fn: () => unknown, code: string): void {
  assert.throws(fn, (e: unknown) => e instanceof RvmError && e.code === code, `expected ${code}`);
}

const ZERO_KEY = Buffer.alloc(32);
const ZERO_IV = Buffer.alloc(12);
const KEY = Buffer.alloc(32, 7).toString('base64');
const OTHER_KEY = Buffer.alloc(32, 8).toString('base64');

describe('AES-256-GCM core: McGrew–Viega test vectors', () => {
  test('TC13: empty plaintext under the zero key and IV gives only the tag', () => {
    const { ciphertext, tag } = aesGcmSeal(ZERO_KEY, ZERO_IV, Buffer.alloc(0));
    assert.equal(ciphertext.toString('hex'), '');
    assert.equal(tag.toString('hex'), '530f8afbc74536b9a963b4f1c4cb738b');
    assert.deepEqual(aesGcmOpen(ZERO_KEY, ZERO_IV, Buffer.alloc(0), tag), Buffer.alloc(0));
  });

  test('TC14: 16 zero bytes under the zero key and IV', () => {
    const { ciphertext, tag } = aesGcmSeal(ZERO_KEY, ZERO_IV, Buffer.alloc(16));
    assert.equal(ciphertext.toString('hex'), 'cea7403d4d606b6e074ec5d3baf39d18');
    assert.equal(tag.toString('hex'), 'd0d1c8a799996bf0265b98b5d48ab919');
    const opened = aesGcmOpen(
      ZERO_KEY,
      ZERO_IV,
      Buffer.from('cea7403d4d606b6e074ec5d3baf39d18', 'hex'),
      Buffer.from('d0d1c8a799996bf0265b98b5d48ab919', 'hex'),
    );
    assert.deepEqual(opened, Buffer.alloc(16));
  });

  test("a truncated tag is refused, even the real tag's first bytes (Node would accept them by default)", () => {
    const ciphertext = Buffer.from('cea7403d4d606b6e074ec5d3baf39d18', 'hex');
    const tag = Buffer.from('d0d1c8a799996bf0265b98b5d48ab919', 'hex');
    for (const length of [4, 8, 12, 15]) assert.equal(aesGcmOpen(ZERO_KEY, ZERO_IV, ciphertext, tag.subarray(0, length)), null, `tag of ${length} bytes`);
  });

  test('a wrong tag, IV or key does not open', () => {
    const { ciphertext, tag } = aesGcmSeal(ZERO_KEY, ZERO_IV, Buffer.alloc(16));
    const badTag = Buffer.from(tag);
    badTag[0] ^= 1;
    assert.equal(aesGcmOpen(ZERO_KEY, ZERO_IV, ciphertext, badTag), null);
    assert.equal(aesGcmOpen(ZERO_KEY, Buffer.alloc(12, 1), ciphertext, tag), null);
    assert.equal(aesGcmOpen(Buffer.alloc(32, 1), ZERO_IV, ciphertext, tag), null);
  });
});

describe('encrypt / decrypt', () => {
  test('round trips text, including empty, Unicode and long text', () => {
    for (const text of ['', 'hello', 'žluťoučký kůň 🐎', 'x'.repeat(100_000)]) {
      const sealed = call('encrypt', text, KEY) as string;
      assert.equal(call('decrypt', sealed, KEY), text);
    }
  });

  test('the envelope is base64(iv12 ‖ ciphertext ‖ tag16) and the IV is fresh each time', () => {
    const a = call('encrypt', 'same text', KEY) as string;
    const b = call('encrypt', 'same text', KEY) as string;
    assert.notEqual(a, b);
    const bytes = Buffer.from(a, 'base64');
    assert.equal(bytes.toString('base64'), a, 'standard base64 with padding');
    assert.equal(bytes.length, IV_BYTES + Buffer.byteLength('same text') + TAG_BYTES);
    assert.notDeepEqual(bytes.subarray(0, IV_BYTES), Buffer.from(b, 'base64').subarray(0, IV_BYTES));
    // The envelope opens with the raw core: IV first, tag last.
    const opened = aesGcmOpen(Buffer.from(KEY, 'base64'), bytes.subarray(0, IV_BYTES), bytes.subarray(IV_BYTES, -TAG_BYTES), bytes.subarray(-TAG_BYTES));
    assert.equal(opened?.toString('utf8'), 'same text');
  });

  test('flipping any bit of the IV, ciphertext or tag is decrypt_failed', () => {
    const key = parseKey(KEY);
    const bytes = Buffer.from(encryptText('secret message', key), 'base64');
    for (let i = 0; i < bytes.length; i++) {
      for (const bit of [0x01, 0x80]) {
        const tampered = Buffer.from(bytes);
        tampered[i] ^= bit;
        throwsCode(() => decryptText(tampered.toString('base64'), key), 'decrypt_failed');
      }
    }
  });

  test('a wrong key is decrypt_failed', () => {
    const sealed = call('encrypt', 'for one key only', KEY);
    throwsCode(() => call('decrypt', sealed as string, OTHER_KEY), 'decrypt_failed');
  });

  test('input shorter than IV + tag, cut short, extended or not base64 is decrypt_failed', () => {
    const sealed = call('encrypt', 'abc', KEY) as string;
    const bytes = Buffer.from(sealed, 'base64');
    const cases = [
      '',
      Buffer.alloc(MIN_ENVELOPE_BYTES - 1).toString('base64'),
      bytes.subarray(0, bytes.length - 12).toString('base64'), // the tag truncated to 4 bytes
      bytes.subarray(0, bytes.length - 1).toString('base64'),
      Buffer.concat([bytes, Buffer.alloc(1)]).toString('base64'),
      'not base64 at all!',
      sealed.slice(0, -2) + '!!',
      sealed + 'A', // a length no base64 text has
    ];
    for (const input of cases) throwsCode(() => call('decrypt', input, KEY), 'decrypt_failed');
  });

  test('plaintext that is not UTF-8 is decrypt_failed', () => {
    const key = Buffer.alloc(32, 7);
    const iv = Buffer.alloc(IV_BYTES, 3);
    const { ciphertext, tag } = aesGcmSeal(key, iv, Buffer.from([0xff, 0xfe, 0x80]));
    throwsCode(() => call('decrypt', Buffer.concat([iv, ciphertext, tag]).toString('base64'), KEY), 'decrypt_failed');
  });

  test('keys: base64 of exactly 32 bytes, standard or URL-safe, padded or not, text or secret', () => {
    const raw = Buffer.from(Array.from({ length: 32 }, (_, i) => 250 - i));
    const forms = [raw.toString('base64'), raw.toString('base64').replace(/=$/, ''), raw.toString('base64url')];
    const sealed = call('encrypt', 'k', forms[0]) as string;
    for (const key of forms) assert.equal(call('decrypt', sealed, key), 'k', key);
    assert.equal(call('decrypt', sealed, new SecretText(forms[0])), 'k');
    assert.equal(call('decrypt', call('encrypt', 'k', new SecretText(forms[2])) as string, forms[0]), 'k');
  });

  test('anything else as a key is invalid_key, for encrypt and decrypt', () => {
    const sealed = call('encrypt', 'x', KEY) as string;
    const bad: Value[] = [
      null,
      32,
      true,
      [KEY],
      { key: KEY },
      '',
      Buffer.alloc(31).toString('base64'),
      Buffer.alloc(33).toString('base64'),
      Buffer.alloc(16).toString('hex'), // 32 hex characters are not 32 bytes
      KEY.slice(0, -2) + '$=',
      KEY + '\n',
      new SecretText('too short'),
    ];
    for (const key of bad) {
      throwsCode(() => call('encrypt', 'x', key), 'invalid_key');
      throwsCode(() => call('decrypt', sealed, key), 'invalid_key');
    }
  });

  test('the invalid_key message never shows the key', () => {
    const key = 'my-secret-password';
    assert.throws(
      () => call('encrypt', 'x', new SecretText(key)),
      (e: unknown) => e instanceof RvmError && !e.message.includes(key),
    );
    assert.throws(
      () => call('encrypt', 'x', key),
      (e: unknown) => e instanceof RvmError && !e.message.includes(key),
    );
  });

  test('data and ciphertext must be text (a secret is revealed)', () => {
    throwsCode(() => call('encrypt', 42, KEY), 'type_error');
    throwsCode(() => call('encrypt', null, KEY), 'type_error');
    throwsCode(() => call('decrypt', null, KEY), 'type_error');
    assert.equal(call('decrypt', call('encrypt', new SecretText('hidden'), KEY) as string, KEY), 'hidden');
  });
});

describe('strict base64', () => {
  test('accepts canonical standard and URL-safe base64, refuses the rest', () => {
    assert.deepEqual(decodeBase64('AQID'), Buffer.from([1, 2, 3]));
    assert.deepEqual(decodeBase64('AQI='), Buffer.from([1, 2]));
    assert.deepEqual(decodeBase64('AQI'), Buffer.from([1, 2]));
    assert.deepEqual(decodeBase64('-_8'), Buffer.from([0xfb, 0xff]));
    for (const bad of ['AQJ=', 'A', 'AQ I', 'AQ==A', '+_8=', 'AQ=', '@@@@']) assert.equal(decodeBase64(bad), null, bad);
  });
});

describe('secure_random and generate_uuid', () => {
  test('secure_random(n) is n random bytes in base64', () => {
    for (const n of [1, 16, 32, MAX_RANDOM_BYTES]) {
      const text = call('secure_random', n) as string;
      assert.equal(Buffer.from(text, 'base64').length, n);
      assert.equal(Buffer.from(text, 'base64').toString('base64'), text);
    }
    const seen = new Set(Array.from({ length: 50 }, () => call('secure_random', 32)));
    assert.equal(seen.size, 50);
  });

  test('secure_random refuses counts outside 1..MAX_RANDOM_BYTES and non-ints', () => {
    for (const n of [0, -1, MAX_RANDOM_BYTES + 1, 1e9]) throwsCode(() => call('secure_random', n), 'invalid_argument');
    for (const n of [1.5, '32', null, NaN]) throwsCode(() => call('secure_random', n as Value), 'type_error');
  });

  test('generate_uuid() is a version 4 UUID, different each time', () => {
    const ids = Array.from({ length: 100 }, () => call('generate_uuid') as string);
    for (const id of ids) assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(new Set(ids).size, ids.length);
  });

  test('every native and guard carries a doc; the csrf guard declares its scheme and response', () => {
    for (const name of ['secure_random', 'encrypt', 'decrypt', 'generate_uuid', 'csrf_token', 'csrf_verify']) {
      assert.ok(registry.natives.get(name)?.meta.doc, name);
    }
    const guard = registry.guards.get('csrf');
    assert.ok(guard);
    const security = guard.meta.security as SecuritySchemeSpec;
    const { description, ...scheme } = security.scheme;
    assert.deepEqual([security.name, scheme], ['csrfToken', { type: 'apiKey', in: 'header', name: 'X-CSRF-Token' }]);
    assert.match(String(description), /GET \/_app\/csrf/, 'the scheme says where the token comes from');
    assert.deepEqual(
      guard.meta.responses?.map((r) => [r.status, r.code]),
      [[403, 'csrf_invalid']],
    );
  });
});
