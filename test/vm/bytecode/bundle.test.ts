import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeEnvelope, encodeModule } from '../../../vm/bytecode/artefact.js';
import { ArtefactError } from '../../../vm/bytecode/codec.js';
import { MAX_BUNDLE_BYTES, decodeBundle, encodeBundle, readBundle, writeBundle } from '../../../vm/bytecode/bundle.js';
import { plantSpecial } from '../special-files.js';
import { BUNDLE_MAGIC, FORMAT_VERSION } from '../../../vm/bytecode/module.js';
import { Op } from '../../../vm/bytecode/opcodes.js';
import { handModule } from '../artefact-fixture.js';

function refusal(fn: () => unknown): ArtefactError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ArtefactError) return e;
    assert.fail(`expected ArtefactError, got ${String(e)}`);
  }
  assert.fail('expected the bundle to be refused');
}

describe('bundle', () => {
  let dir = '';
  let file = '';
  const config = { plugins: ['./my-plugin.js'], bodyLimit: 2048, reference: { enabled: true } };
  const plugins = [{ spec: './my-plugin.js', name: 'mine', version: '1.2.3', from: '../app/my-plugin.js' }];
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rvm-bundle-'));
    file = join(dir, 'app.rvmb');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('round trip: modules, config, plugin record and createdAt', () => {
    const modules = [handModule('index.rvm'), handModule('api/users.rvm')];
    const start = Date.now();
    writeBundle(file, { modules, config, plugins });
    const back = readBundle(file);
    assert.deepStrictEqual(back.modules, modules);
    assert.deepStrictEqual(back.config, config);
    assert.deepStrictEqual(back.plugins, plugins);
    assert.ok(back.modules[0]!.chunks[0]!.code instanceof Int32Array);
    const created = Date.parse(back.createdAt);
    assert.ok(created >= start - 1000 && created <= Date.now() + 1000);
    assert.equal(typeof back.compiler, 'string');
  });

  test('a null config and no modules round-trip', () => {
    const back = decodeBundle(encodeBundle({ modules: [], config: null, plugins: [] }, '9.9.9', '2024-01-01T00:00:00.000Z'), 'x.rvmb');
    assert.deepStrictEqual(back, { modules: [], config: null, plugins: [], createdAt: '2024-01-01T00:00:00.000Z', compiler: '9.9.9' });
  });

  test('a missing file is refused with E_ARTEFACT_UNREADABLE naming it', () => {
    const e = refusal(() => readBundle(join(dir, 'missing.rvmb')));
    assert.equal(e.code, 'E_ARTEFACT_UNREADABLE');
    assert.ok(e.message.includes('missing.rvmb'));
  });

  test('a FIFO, a symlink to /dev/zero, a directory or a file over MAX_BUNDLE_BYTES is refused at once, never read', () => {
    for (const [kind, why] of [
      ['fifo', 'a FIFO'],
      ['dev-zero', 'a device'],
      ['directory', 'a directory'],
    ] as const) {
      const path = plantSpecial(dir, `special-${kind}.rvmb`, kind);
      const e = refusal(() => readBundle(path));
      assert.equal(e.code, 'E_ARTEFACT_UNREADABLE', kind);
      assert.ok(e.message.includes(`cannot read bundle: not a regular file (${why})`) && e.message.includes(path), e.message);
    }
    const huge = join(dir, 'huge.rvmb');
    writeFileSync(huge, '');
    truncateSync(huge, MAX_BUNDLE_BYTES + 1);
    const e = refusal(() => readBundle(huge));
    assert.equal(e.code, 'E_ARTEFACT_UNREADABLE');
    assert.ok(e.message.includes(`larger than ${MAX_BUNDLE_BYTES} bytes`), e.message);
  });

  test('a truncated bundle is refused with E_ARTEFACT_CORRUPT, one line naming the file', () => {
    writeBundle(file, { modules: [handModule()], config, plugins });
    const bytes = readFileSync(file);
    for (const n of [0, 5, 20, bytes.length >> 1, bytes.length - 1]) {
      writeFileSync(file, bytes.subarray(0, n));
      const e = refusal(() => readBundle(file));
      assert.equal(e.code, 'E_ARTEFACT_CORRUPT', `truncated at ${n}`);
      assert.ok(e.message.startsWith(file), e.message);
      assert.doesNotMatch(e.message, /\n/);
    }
  });

  test('a damaged byte anywhere is refused', () => {
    const bytes = encodeBundle({ modules: [handModule()], config, plugins }, '0.1.0');
    for (let i = 0; i < bytes.length; i += 7) {
      const damaged = Uint8Array.from(bytes);
      damaged[i]! ^= 0x24;
      assert.ok(refusal(() => decodeBundle(damaged, 'app.rvmb')) instanceof ArtefactError, `byte ${i}`);
    }
  });

  test('a foreign file, or a module artefact, is E_ARTEFACT_FOREIGN', () => {
    writeFileSync(file, '#!/bin/sh\necho hi\n');
    assert.equal(refusal(() => readBundle(file)).code, 'E_ARTEFACT_FOREIGN');
    writeFileSync(file, encodeModule(handModule()));
    assert.equal(refusal(() => readBundle(file)).code, 'E_ARTEFACT_FOREIGN');
  });

  test('another format version is E_ARTEFACT_VERSION', () => {
    const bytes = Uint8Array.from(encodeBundle({ modules: [], config: null, plugins: [] }, '0.1.0'));
    const at = 1 + BUNDLE_MAGIC.length;
    assert.equal(bytes[at], FORMAT_VERSION);
    bytes[at] = FORMAT_VERSION + 1;
    assert.equal(refusal(() => decodeBundle(bytes, 'app.rvmb')).code, 'E_ARTEFACT_VERSION');
  });

  test('a structurally invalid module inside a valid envelope is refused', () => {
    const bad = handModule();
    bad.chunks[0]!.code[3] = 42;
    const bytes = encodeBundle({ modules: [bad], config: null, plugins: [] }, '0.1.0');
    const e = refusal(() => decodeBundle(bytes, 'app.rvmb'));
    assert.equal(e.code, 'E_ARTEFACT_CORRUPT');
    assert.match(e.message, /module 1/);
    assert.equal(Op.GET_FIELD, bad.chunks[0]!.code[2]);
  });

  test('a body of the wrong shape is refused', () => {
    for (const body of [
      null,
      [],
      { config: null, modules: [1] },
      { config: 'x', modules: [] },
      { config: [1], modules: [] },
      { config: null, modules: [42] },
    ]) {
      // The header claims as many modules as the body lists, except where the list is the damage.
      const count = Array.isArray(body) || body === null || body.modules[0] === 1 ? 0 : body.modules.length;
      const header = { compiler: '0.1.0', createdAt: '2024-01-01T00:00:00.000Z', modules: count };
      const e = refusal(() => decodeBundle(encodeEnvelope(BUNDLE_MAGIC, header, body), 'app.rvmb'));
      assert.equal(e.code, 'E_ARTEFACT_CORRUPT', JSON.stringify(body));
    }
  });

  test('a plugin record of the wrong shape is refused', () => {
    const header = { compiler: '0.1.0', createdAt: '2024-01-01T00:00:00.000Z', modules: 0 };
    const good = plugins[0]!;
    for (const record of [{}, 'x', [null], [{ ...good, version: 1 }], [{ ...good, from: '' }], [{ name: 'mine', version: '1', from: './x.js' }]]) {
      const e = refusal(() => decodeBundle(encodeEnvelope(BUNDLE_MAGIC, header, { config: null, plugins: record, modules: [] }), 'app.rvmb'));
      assert.equal(e.code, 'E_ARTEFACT_CORRUPT', JSON.stringify(record));
      assert.match(e.message, /plugin/);
    }
  });

  test('a bundle written before the plugin record still serves when its config lists no plugins', () => {
    const header = { compiler: '0.1.0', createdAt: '2024-01-01T00:00:00.000Z', modules: 0 };
    for (const old of [null, { bodyLimit: 2048 }, { plugins: [] }]) {
      const back = decodeBundle(encodeEnvelope(BUNDLE_MAGIC, header, { config: old, modules: [] }), 'old.rvmb');
      assert.deepStrictEqual(back.plugins, [], JSON.stringify(old));
    }
  });

  test('a bundle written before the plugin record whose config lists plugins is E_ARTEFACT_VERSION: rebuild it', () => {
    const header = { compiler: '0.0.9', createdAt: '2024-01-01T00:00:00.000Z', modules: 0 };
    const e = refusal(() => decodeBundle(encodeEnvelope(BUNDLE_MAGIC, header, { config, modules: [] }), 'old.rvmb'));
    assert.equal(e.code, 'E_ARTEFACT_VERSION');
    assert.ok(e.message.startsWith('old.rvmb'), e.message);
    assert.match(e.message, /0\.0\.9 .*no record of them.*rvm compile/);
  });

  test('an unwritable target is an ArtefactError, not a crash', () => {
    const e = refusal(() => writeBundle(join(dir, 'no', 'such', 'dir', 'x.rvmb'), { modules: [], config: null, plugins: [] }));
    assert.equal(e.code, 'E_ARTEFACT_UNREADABLE');
  });
});
