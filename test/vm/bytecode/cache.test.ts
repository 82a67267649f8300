import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeEnvelope } from '../../../vm/bytecode/artefact.js';
import { MAX_ARTEFACT_BYTES, cachePath, hasLinkProof, readCached, writeCached, writeLinkProof } from '../../../vm/bytecode/cache.js';
import { compileSource, sourceHash } from '../../../vm/compiler/compiler.js';
import { BUNDLE_MAGIC } from '../../../vm/bytecode/module.js';
import { handModule } from '../artefact-fixture.js';
import { plantSpecial } from '../special-files.js';

const FILE = 'api/users.rvm';
const KEY = { sourceHash: 'a'.repeat(64), compiler: '0.1.0', plugins: 'core@0.1.0' };

describe('cache', () => {
  let dir = '';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rvm-cache-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('cachePath mirrors the relative path under .rvm/cache with .rvmc', () => {
    assert.equal(cachePath('app', 'api/users.rvm'), join('app', '.rvm', 'cache', 'api', 'users.rvm.rvmc'));
    assert.equal(cachePath('app', 'index.rvm'), join('app', '.rvm', 'cache', 'index.rvm.rvmc'));
  });

  test('cachePath refuses paths leaving the app', () => {
    assert.throws(() => cachePath('app', '../x.rvm'), RangeError);
    assert.throws(() => cachePath('app', '/etc/x.rvm'), RangeError);
    assert.throws(() => cachePath('app', 'a/../../x.rvm'), RangeError);
  });

  test('a missing artefact reads as null', () => {
    assert.equal(readCached(dir, 'nothing.rvm', KEY), null);
  });

  test('write then read returns the module', () => {
    assert.equal(writeCached(dir, FILE, handModule(FILE)), true);
    assert.ok(existsSync(join(dir, '.rvm', 'cache', 'api', 'users.rvm.rvmc')));
    assert.deepStrictEqual(readCached(dir, FILE, KEY), handModule(FILE));
    const leftovers = readdirSync(join(dir, '.rvm', 'cache', 'api')).filter((f) => f.endsWith('.tmp'));
    assert.deepEqual(leftovers, []);
  });

  test('responses read from the cache are unpacked on first read, equal to what was written', () => {
    writeCached(dir, FILE, handModule(FILE));
    const route = readCached(dir, FILE, KEY)!.routes[0]!;
    assert.equal(typeof Object.getOwnPropertyDescriptor(route, 'responses')?.get, 'function');
    assert.deepStrictEqual(route.responses, handModule(FILE).routes[0]!.responses);
    assert.equal(Object.getOwnPropertyDescriptor(route, 'responses')?.get, undefined);
    assert.equal(route.responses, route.responses);
  });

  test('the responses of a guard_definition and a fn come back from the cache', () => {
    const source = 'guard_definition staff {\n  fail 403 "staff only"\n}\nfn twice(x) {\n  return x * 2\n}\nfn gone() {\n  fail 410\n}\n';
    const compiled = compileSource('guards.rvm', source, { compilerVersion: KEY.compiler, pluginsFingerprint: KEY.plugins }).module!;
    assert.equal(compiled.guards[0]!.responses?.[0]?.status, 403);
    writeCached(dir, 'guards.rvm', compiled);
    const cached = readCached(dir, 'guards.rvm', { ...KEY, sourceHash: sourceHash(source) })!;
    assert.deepStrictEqual(cached.guards[0]!.responses, compiled.guards[0]!.responses);
    // A fn that answers nothing has an empty list; one that fails carries it.
    assert.deepStrictEqual(cached.functions[0]!.responses, []);
    assert.equal(cached.functions[1]!.responses?.[0]?.status, 410);
    assert.deepStrictEqual(cached.functions[1]!.responses, compiled.functions[1]!.responses);
  });

  test('a different source hash, compiler version or plugin fingerprint makes it stale', () => {
    writeCached(dir, FILE, handModule(FILE));
    assert.equal(readCached(dir, FILE, { ...KEY, sourceHash: 'b'.repeat(64) }), null);
    assert.equal(readCached(dir, FILE, { ...KEY, compiler: '0.2.0' }), null);
    assert.equal(readCached(dir, FILE, { ...KEY, plugins: 'core@0.1.0,extra@1.0.0' }), null);
    assert.notEqual(readCached(dir, FILE, KEY), null);
  });

  test('an artefact recorded for another file is stale', () => {
    writeCached(dir, 'other.rvm', handModule(FILE));
    assert.equal(readCached(dir, 'other.rvm', KEY), null);
  });

  test('corrupt, truncated and foreign files read as null', () => {
    const path = cachePath(dir, 'bad.rvm');
    mkdirSync(join(dir, '.rvm', 'cache'), { recursive: true });
    writeFileSync(path, 'not an artefact at all');
    assert.equal(readCached(dir, 'bad.rvm', KEY), null);
    writeFileSync(path, new Uint8Array(0));
    assert.equal(readCached(dir, 'bad.rvm', KEY), null);
    writeFileSync(path, encodeEnvelope(BUNDLE_MAGIC, {}, {}));
    assert.equal(readCached(dir, 'bad.rvm', KEY), null);
    writeCached(dir, 'bad.rvm', handModule('bad.rvm'));
    const full = readCached(dir, 'bad.rvm', KEY);
    assert.notEqual(full, null);
  });

  test('a directory where the artefact should be reads as null', () => {
    mkdirSync(cachePath(dir, 'dir.rvm'), { recursive: true });
    assert.equal(readCached(dir, 'dir.rvm', KEY), null);
    assert.equal(writeCached(dir, 'dir.rvm', handModule('dir.rvm')), false);
  });

  test('an entry that is a symlink to /dev/zero, a FIFO or over MAX_ARTEFACT_BYTES is damaged: null, then written over', () => {
    const folder = join(dir, '.rvm', 'cache');
    mkdirSync(folder, { recursive: true });
    for (const kind of ['dev-zero', 'fifo'] as const) {
      const file = `${kind}.rvm`;
      plantSpecial(folder, file + '.rvmc', kind);
      assert.equal(readCached(dir, file, KEY), null, kind);
      assert.equal(writeCached(dir, file, handModule(file)), true, kind);
      assert.ok(lstatSync(cachePath(dir, file)).isFile(), kind);
      assert.notEqual(readCached(dir, file, KEY), null, kind);
    }
    writeCached(dir, 'huge.rvm', handModule('huge.rvm'));
    truncateSync(cachePath(dir, 'huge.rvm'), MAX_ARTEFACT_BYTES + 1);
    assert.equal(readCached(dir, 'huge.rvm', KEY), null);
  });

  test('a link proof that is not a regular file is no proof', () => {
    const other = mkdtempSync(join(tmpdir(), 'rvm-proof-'));
    try {
      assert.equal(writeLinkProof(other, 'k'.repeat(64)), true);
      assert.equal(hasLinkProof(other, 'k'.repeat(64)), true);
      rmSync(join(other, '.rvm', 'cache', 'app.linked'));
      plantSpecial(join(other, '.rvm', 'cache'), 'app.linked', 'fifo');
      assert.equal(hasLinkProof(other, 'k'.repeat(64)), false);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  test('an escaping path reads as null and is not written', () => {
    assert.equal(readCached(dir, '../x.rvm', KEY), null);
    assert.equal(writeCached(dir, '../x.rvm', handModule('x.rvm')), false);
  });

  test('an unwritable app dir makes writeCached return false without throwing', (t) => {
    if (process.getuid?.() === 0) {
      // root ignores permissions: make the cache path's parent a file instead.
      const ro = mkdtempSync(join(tmpdir(), 'rvm-ro-'));
      writeFileSync(join(ro, '.rvm'), 'a file, not a directory');
      assert.equal(writeCached(ro, FILE, handModule(FILE)), false);
      assert.equal(readCached(ro, FILE, KEY), null);
      rmSync(ro, { recursive: true, force: true });
      return;
    }
    const ro = mkdtempSync(join(tmpdir(), 'rvm-ro-'));
    chmodSync(ro, 0o555);
    t.after(() => {
      chmodSync(ro, 0o755);
      rmSync(ro, { recursive: true, force: true });
    });
    assert.equal(writeCached(ro, FILE, handModule(FILE)), false);
    assert.equal(readCached(ro, FILE, KEY), null);
  });
});
