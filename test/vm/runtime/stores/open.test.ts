/** Which store the settings choose (REDIS_URL over rvm.config.json, else the worker's, else in process), and the checks on the `store` section. */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { TEST_APP } from '../../../../plugins/testing.js';
import type { AppSettings } from '../../../../vm/host/context.js';
import { createSecretSource } from '../../../../vm/runtime/secrets.js';
import { ConfigError } from '../../../../vm/runtime/config.js';
import { openKeyValueStore, storeSettings } from '../../../../vm/runtime/stores/open.js';
import { RedisStore } from '../../../../vm/runtime/stores/redis.js';
import { MAX_SECURITY_KEYS, MAX_STORE_KEYS, createInProcessStore } from '../../../../vm/runtime/stores/memory.js';
import { MAX_WINDOW_KEYS } from '../../../../vm/runtime/stores/sliding-window.js';

const app = (store: unknown, env: Record<string, string> = {}): AppSettings => ({
  ...TEST_APP,
  config: store === undefined ? {} : { store },
  secrets: createSecretSource(null, env),
});
const noLog = () => {};

describe('store settings', () => {
  test('defaults: no Redis, the in-process caps', () => {
    assert.deepEqual(storeSettings(app(undefined)), {
      redis: null,
      maxKeys: MAX_STORE_KEYS,
      maxWindowKeys: MAX_WINDOW_KEYS,
      maxSecurityKeys: MAX_SECURITY_KEYS,
    });
  });

  test('REDIS_URL wins over store.redis; caps are read', () => {
    const s = storeSettings(app({ redis: 'redis://config:6379', maxKeys: 10, maxWindowKeys: 20, maxSecurityKeys: 30 }, { REDIS_URL: 'rediss://env:6380/2' }));
    assert.deepEqual(s, { redis: 'rediss://env:6380/2', maxKeys: 10, maxWindowKeys: 20, maxSecurityKeys: 30 });
    assert.equal(storeSettings(app({ redis: 'redis://config:6379' })).redis, 'redis://config:6379');
  });

  test('mistakes are one-line config errors naming the setting', () => {
    const cases: [unknown, Record<string, string>, RegExp][] = [
      [[], {}, /store must be an object/],
      [{ redis: 'http://x' }, {}, /store\.redis must be a redis:\/\//],
      [{}, { REDIS_URL: 'localhost:6379' }, /REDIS_URL must be a redis:\/\//],
      [{}, { REDIS_URL: 'redis://[bad' }, /REDIS_URL must be a redis:\/\//],
      [{}, { REDIS_URL: 'redis://127.0.0.1:99999' }, /REDIS_URL must be a redis:\/\//],
      [{}, { REDIS_URL: 'redis://h:1/notanumber' }, /REDIS_URL must be a redis:\/\//],
      [{ redis: 5 }, {}, /store\.redis must be a redis:\/\//],
      [{ maxKeys: 0 }, {}, /store\.maxKeys must be a positive integer/],
      [{ maxWindowKeys: 1.5 }, {}, /store\.maxWindowKeys must be a positive integer/],
      [{ maxSecurityKeys: -1 }, {}, /store\.maxSecurityKeys must be a positive integer/],
      [{ reddis: 'redis://x' }, {}, /unknown setting store\.reddis/],
    ];
    for (const [section, env, message] of cases) {
      assert.throws(
        () => storeSettings(app(section, env)),
        (e: unknown) => e instanceof ConfigError && message.test(e.message),
        JSON.stringify(section),
      );
    }
  });
});

describe('opening the store', () => {
  test('in process by default, with the configured caps', async () => {
    const opened = openKeyValueStore(app({ maxWindowKeys: 2 }), noLog);
    assert.equal(opened.description, 'in this process');
    for (const key of ['a', 'b', 'c']) await opened.store.hit(key, 1, 60_000, 0);
    assert.equal((opened.store as ReturnType<typeof createInProcessStore>).windowCount, 2);
    await opened.close();
  });

  test("a worker's store when clustered without Redis", async () => {
    const given = createInProcessStore();
    const opened = openKeyValueStore(app(undefined), noLog, () => given);
    assert.equal(opened.store, given);
    assert.match(opened.description, /held by the primary process/);
    await opened.close();
  });

  test('Redis when configured, even for a worker; the description shows no password', async () => {
    const opened = openKeyValueStore(app({ redis: 'redis://app:hunter2@127.0.0.1:1/3' }), noLog, () => createInProcessStore());
    assert.ok(opened.store instanceof RedisStore);
    assert.equal(opened.description, 'Redis at redis://127.0.0.1:1/3 (shared by every process and machine using it)');
    await opened.close();
  });
});
