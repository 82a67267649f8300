/**
 * Outside check: sha256, hmac_sha256 and the base64 natives agree with node:crypto and Buffer and
 * with Python's hashlib, hmac and base64 (/usr/bin/python3, one process for every case) on random
 * texts: ASCII, accents, CJK, emoji and other astral characters, as UTF-8 bytes. The decoders
 * read back what Python encoded, padding and all.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import fc from 'fast-check';
import { core } from '../../stdlib/core/index.js';
import { crypto } from '../../stdlib/crypto/index.js';
import { loadForTest, type LoadedPlugins } from '../../plugins/testing.js';

const PYTHON = '/usr/bin/python3';
const CASES = 300;

const PYTHON_DIGESTS = `import base64, hashlib, hmac, json, sys
out = []
for case in json.load(sys.stdin):
    data = case["data"].encode("utf-8")
    mac = hmac.new(case["key"].encode("utf-8"), data, hashlib.sha256).digest()
    out.append({
        "sha256": hashlib.sha256(data).hexdigest(),
        "hmac_hex": mac.hex(),
        "hmac_base64": base64.b64encode(mac).decode(),
        "base64": base64.b64encode(data).decode(),
        "base64url": base64.urlsafe_b64encode(data).decode(),
    })
json.dump(out, sys.stdout)
`;

interface PythonAnswer {
  sha256: string;
  hmac_hex: string;
  hmac_base64: string;
  base64: string;
  base64url: string;
}

/** Texts from every plane: ASCII, any code point, and mixes of both. */
const texts = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }), fc.constantFrom('', 'é', '😀', '𝄞 music', '日本語'));

let kit: LoadedPlugins;
let cases: { key: string; data: string }[];
let python: PythonAnswer[];

before(async () => {
  kit = await loadForTest([core, crypto]);
  cases = fc.sample(fc.record({ key: texts.filter((k) => k !== ''), data: texts }), { numRuns: CASES });
  cases.push({ key: '🔑 clé', data: 'a\u0000b\u{10FFFF}' });
  const run = spawnSync(PYTHON, ['-c', PYTHON_DIGESTS], { input: JSON.stringify(cases), encoding: 'utf8', timeout: 60_000 });
  assert.equal(run.status, 0, `${PYTHON} failed: ${run.error?.message ?? run.stderr}`);
  python = JSON.parse(run.stdout) as PythonAnswer[];
  assert.equal(python.length, cases.length);
});

describe("digests and base64 agree with node:crypto and Python's hashlib, hmac and base64", () => {
  test('sha256', () => {
    cases.forEach(({ data }, i) => {
      const digest = kit.call('sha256', data);
      assert.equal(digest, createHash('sha256').update(data, 'utf8').digest('hex'), JSON.stringify(data));
      assert.equal(digest, python[i]!.sha256, JSON.stringify(data));
    });
  });

  test('hmac_sha256 in hex and base64', () => {
    cases.forEach(({ key, data }, i) => {
      const hex = kit.call('hmac_sha256', key, data);
      assert.equal(hex, createHmac('sha256', key).update(data, 'utf8').digest('hex'));
      assert.equal(hex, python[i]!.hmac_hex, JSON.stringify({ key, data }));
      assert.equal(kit.call('hmac_sha256', key, data, 'base64'), python[i]!.hmac_base64, JSON.stringify({ key, data }));
    });
  });

  test('base64_encode and base64url_encode (unpadded), and both decoders read what Python wrote', () => {
    cases.forEach(({ data }, i) => {
      const answer = python[i]!;
      const standard = kit.call('base64_encode', data);
      assert.equal(standard, Buffer.from(data, 'utf8').toString('base64'));
      assert.equal(standard, answer.base64, JSON.stringify(data));
      assert.equal(kit.call('base64url_encode', data), answer.base64url.replace(/=+$/, ''), JSON.stringify(data));
      assert.equal(kit.call('base64_decode', answer.base64), data);
      assert.equal(kit.call('base64url_decode', answer.base64url), data);
      assert.equal(kit.call('base64url_decode', answer.base64url.replace(/=+$/, '')), data);
    });
  });
});
