import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { truncateSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_BODY_LIMIT } from '../../../vm/runtime/limits.js';
import { CONFIG_FILE, ConfigError, MAX_CONFIG_BYTES, NO_OUTBOUND, loadSettings, parseSize } from '../../../vm/runtime/config.js';
import { DEFAULT_LIMITS } from '../../../vm/runtime/limits.js';
import { plantSpecial } from '../special-files.js';
import { tempApp, type TestCleanup } from '../../support/temp-app.js';

/** An app folder with `config` as its rvm.config.json (none when null), removed after the test. */
function appWith(t: TestCleanup, config: string | null): string {
  return tempApp(t, config === null ? {} : { [CONFIG_FILE]: config });
}

describe('loadSettings', () => {
  test('defaults without a file', (t) => {
    const dir = appWith(t, null);
    const s = loadSettings(dir, { env: {} });
    const { secrets, ...plain } = s;
    assert.deepEqual(
      { ...plain, config: { ...plain.config } },
      { dir, dev: false, bodyLimit: DEFAULT_BODY_LIMIT, trustProxy: false, limits: DEFAULT_LIMITS, outbound: NO_OUTBOUND, config: {}, workers: 1 },
    );
    assert.equal(secrets.read('missing'), null);
    assert.equal(loadSettings(null, { env: {}, dev: true }).dev, true);
  });

  test('workers: how many processes serve the app (rvm run --workers N), a whole number of at least 1', () => {
    assert.equal(loadSettings(null, { env: {}, workers: 4 }).workers, 4);
    for (const workers of [0, -1, 1.5, NaN]) assert.throws(() => loadSettings(null, { env: {}, workers }), ConfigError);
  });

  test('limits: each over its default, sizes in text, anything else a one-line error', (t) => {
    const dir = appWith(
      t,
      JSON.stringify({ limits: { wallTimeMs: 5000, maxBodyMemory: '64mb', maxResultMemory: '256mb', maxResponseBytes: 1000, maxConnectionsPerClient: 8 } }),
    );
    const s = loadSettings(dir, { env: {} });
    assert.deepEqual(s.limits, {
      ...DEFAULT_LIMITS,
      wallTimeMs: 5000,
      maxBodyMemory: 64 * 1024 * 1024,
      maxResultMemory: 256 * 1024 * 1024,
      maxResponseBytes: 1000,
      maxConnectionsPerClient: 8,
    });
    assert.equal(DEFAULT_LIMITS.maxResultMemory, 128 * 1024 * 1024);
    assert.equal(DEFAULT_LIMITS.maxResponseBytes, 16 * 1024 * 1024);
    assert.equal(loadSettings(dir, { env: {}, limits: { maxInFlight: 3 } }).limits.maxInFlight, 3);
    for (const limits of [
      { wallTimeMs: 0 },
      { maxResponseBytes: 0 },
      { maxResultMemory: 'lots' },
      { maxInFlight: -1 },
      { maxInFlight: 1.5 },
      { maxInFlight: '10' },
      { cpu: 1 },
      [],
      'x',
    ]) {
      assert.throws(
        () => loadSettings(appWith(t, JSON.stringify({ limits })), { env: {} }),
        (e: Error & { code?: string }) => e.code === 'E_CONFIG' && /limits/.test(e.message) && !e.message.includes('\n'),
      );
    }
  });

  test('file values, unknown keys kept in config', (t) => {
    const dir = appWith(t, JSON.stringify({ bodyLimit: '2mb', trustProxy: true, plugins: ['./p.js'], reference: { enabled: true }, redisUrl: 'x' }));
    const s = loadSettings(dir, { env: {} });
    assert.equal(s.bodyLimit, 2 * 1024 * 1024);
    assert.equal(s.trustProxy, true);
    assert.deepEqual(s.config.plugins, ['./p.js']);
    assert.equal(s.config.redisUrl, 'x');
  });

  test('env overrides the file; overrides win over env', (t) => {
    const dir = appWith(t, JSON.stringify({ bodyLimit: 100, trustProxy: true }));
    const s = loadSettings(dir, { env: { RVM_BODY_LIMIT: '1kb', RVM_TRUST_PROXY: 'false' } });
    assert.equal(s.bodyLimit, 1024);
    assert.equal(s.trustProxy, false);
    const o = loadSettings(dir, { env: { RVM_BODY_LIMIT: '1kb' }, bodyLimit: 5, trustProxy: false });
    assert.equal(o.bodyLimit, 5);
  });

  test('a given config (from a bundle) replaces the file and is validated the same way', (t) => {
    const dir = appWith(t, JSON.stringify({ bodyLimit: 100 }));
    const s = loadSettings(dir, { env: {}, config: { bodyLimit: '3kb', plugins: ['x'] } });
    assert.equal(s.bodyLimit, 3072);
    assert.deepEqual(s.config.plugins, ['x']);
    assert.throws(() => loadSettings(null, { env: {}, config: { trustProxy: 1.5 } }), /trustProxy/);
  });

  test('trustProxy: false, true, a hop count or a list, from the file, RVM_TRUST_PROXY or overrides', (t) => {
    assert.equal(loadSettings(appWith(t, JSON.stringify({ trustProxy: 2 })), { env: {} }).trustProxy, 2);
    assert.deepEqual(loadSettings(appWith(t, JSON.stringify({ trustProxy: ['10.0.0.0/8', 'loopback'] })), { env: {} }).trustProxy, ['10.0.0.0/8', 'loopback']);
    assert.equal(loadSettings(null, { env: { RVM_TRUST_PROXY: 'true' } }).trustProxy, true);
    assert.equal(loadSettings(null, { env: { RVM_TRUST_PROXY: '3' } }).trustProxy, 3);
    assert.equal(loadSettings(null, { env: { RVM_TRUST_PROXY: '0' } }).trustProxy, false);
    assert.deepEqual(loadSettings(null, { env: { RVM_TRUST_PROXY: '10.0.0.1, fd00::/8' } }).trustProxy, ['10.0.0.1', 'fd00::/8']);
    assert.equal(loadSettings(null, { env: { RVM_TRUST_PROXY: '2' }, trustProxy: false }).trustProxy, false);
    for (const bad of [{ trustProxy: 99 }, { trustProxy: ['10.0.0.0/33'] }, { trustProxy: [] }, { trustProxy: 'proxy.internal' }]) {
      assert.throws(
        () => loadSettings(null, { env: {}, config: bad }),
        (e: Error) => e instanceof ConfigError && /trustProxy/.test(e.message) && !e.message.includes('\n'),
        JSON.stringify(bad),
      );
    }
    assert.throws(() => loadSettings(null, { env: { RVM_TRUST_PROXY: '99' } }), /RVM_TRUST_PROXY: trustProxy must be a whole number of hops/);
    assert.throws(() => loadSettings(null, { env: {}, trustProxy: -1 }), ConfigError);
  });

  test('outbound.allow: host names, addresses and CIDR ranges; a bad entry is an error at its file:line', (t) => {
    const dir = appWith(t, JSON.stringify({ outbound: { allow: ['API.Internal.', '127.0.0.1', 'fd00::/8'] } }));
    assert.deepEqual(loadSettings(dir, { env: {} }).outbound.allow, ['api.internal', '127.0.0.1', 'fd00::/8']);
    const written = '{\n  "outbound": {\n    "allow": [\n      "127.0.0.1",\n      "http://x/"\n    ]\n  }\n}\n';
    assert.throws(
      () => loadSettings(appWith(t, written), { env: {} }),
      (e: Error) =>
        e instanceof ConfigError && /rvm\.config\.json:5: outbound\.allow 'http:\/\/x\/' is neither a host name/.test(e.message) && !e.message.includes('\n'),
    );
    const unknownKey = '{\n  "outbound": {\n    "deny": []\n  }\n}\n';
    assert.throws(() => loadSettings(appWith(t, unknownKey), { env: {} }), /rvm\.config\.json:3: outbound has no setting 'deny'/);
    for (const bad of [
      { outbound: ['127.0.0.1'] },
      { outbound: { allow: '127.0.0.1' } },
      { outbound: { allow: ['10.0.0.0/33'] } },
      { outbound: { allow: ['a..b'] } },
      { outbound: { allow: Array(257).fill('a.b') } },
    ]) {
      assert.throws(
        () => loadSettings(null, { env: {}, config: bad }),
        (e: Error) => e instanceof ConfigError && /outbound/.test(e.message) && !e.message.includes('\n'),
        JSON.stringify(bad).slice(0, 80),
      );
    }
    assert.deepEqual(loadSettings(null, { env: {} }).outbound.allow, []);
  });

  test('a config file that is a FIFO or a directory, or over MAX_CONFIG_BYTES, is a one-line error, never read', (t) => {
    for (const kind of ['fifo', 'directory'] as const) {
      const dir = appWith(t, null);
      plantSpecial(dir, CONFIG_FILE, kind);
      assert.throws(
        () => loadSettings(dir, { env: {} }),
        (e: Error) => e instanceof ConfigError && /rvm\.config\.json: cannot read: not a regular file/.test(e.message),
        kind,
      );
    }
    const dir = appWith(t, JSON.stringify({ bodyLimit: 10 }) + ' '.repeat(MAX_CONFIG_BYTES - 16));
    assert.equal(loadSettings(dir, { env: {} }).bodyLimit, 10);
    truncateSync(join(dir, CONFIG_FILE), MAX_CONFIG_BYTES + 1);
    assert.throws(
      () => loadSettings(dir, { env: {} }),
      (e: Error) => e instanceof ConfigError && e.message.includes(`larger than ${MAX_CONFIG_BYTES} bytes`),
    );
  });

  test('malformed file → one-line error naming the file', (t) => {
    const dir = appWith(t, '{ "bodyLimit": ');
    assert.throws(
      () => loadSettings(dir, { env: {} }),
      (e: Error) => e.message.includes('rvm.config.json') && e.message.includes('invalid JSON') && !e.message.includes('\n'),
    );
  });

  test('invalid values → errors', (t) => {
    for (const bad of ['[]', '{"bodyLimit":"lots"}', '{"bodyLimit":-1}', '{"trustProxy":"yes"}', '{"plugins":"x"}', '{"reference":3}']) {
      assert.throws(() => loadSettings(appWith(t, bad), { env: {} }), /rvm\.config\.json/, bad);
    }
    assert.throws(() => loadSettings(null, { env: { RVM_TRUST_PROXY: 'maybe' } }), /RVM_TRUST_PROXY/);
    assert.throws(() => loadSettings(null, { env: { RVM_BODY_LIMIT: '5 parsecs' } }), /RVM_BODY_LIMIT/);
  });
});

test('parseSize', () => {
  assert.equal(parseSize(512), 512);
  assert.equal(parseSize('512'), 512);
  assert.equal(parseSize('100kb'), 102400);
  assert.equal(parseSize('1.5 MB'), 1572864);
  assert.equal(parseSize('1g'), 1073741824);
  assert.equal(parseSize('ten'), null);
  assert.equal(parseSize(-5), null);
  assert.equal(parseSize(null), null);
});
