/**
 * A shared store that cannot be reached fails the request with 503 `store_unavailable`, in
 * production and in development alike: the request was fine, the service was not (not a 500).
 * The outage is logged once, not once per request; rate limits may be configured to fail open.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { definePlugin } from '../../../../plugins/sdk.js';
import { testApp } from '../../../../plugins/testing.js';
import { StoreUnavailableError } from '../../../../vm/runtime/stores/unavailable.js';
import { REDIS_CONNECT_TIMEOUT_MS } from '../../../../vm/runtime/stores/redis.js';
import { freePort } from '../../../support/free-port.js';

/** A native reading a store that is down, as a shared store answers then. */
const DOWN = definePlugin({
  name: 'down-store',
  version: '1.0.0',
  setup(rvm) {
    rvm.native('read_shared', () => Promise.reject(new StoreUnavailableError('the shared store did not answer within 1000 ms')), {
      params: [],
      doc: 'Reads a store that is down.',
    });
  },
});

/** Requests sent while Redis is down: enough that a per-request log line would show. */
const REQUESTS = 6;
/** Scheduling slack over the store's own bound on a loaded machine. */
const SLACK_MS = 500;

for (const dev of [false, true]) {
  test(`a store that cannot be reached answers 503 store_unavailable (${dev ? 'development' : 'production'})`, async () => {
    const t = await testApp({ dev, plugins: [DOWN], files: { 'r.rvm': 'route GET /shared {\n  response.ok({ value: read_shared() })\n}\n' } });
    try {
      const res = await t.inject({ method: 'GET', url: '/shared' });
      assert.equal(res.status, 503);
      assert.deepEqual(res.json(), { error: 'The shared store is unavailable', code: 'store_unavailable' });
    } finally {
      await t.close();
    }
  });
}

/** An app whose store is a Redis nobody listens on (the password must never reach the log). */
async function downRedisApp(rateLimit: Record<string, unknown> = {}) {
  const port = await freePort();
  const config = { store: { redis: `redis://app:hunter2@127.0.0.1:${port}` }, rateLimit };
  const t = await testApp({
    files: { 'rvm.config.json': JSON.stringify(config), 'r.rvm': 'route GET /limited {\n  guard rate_limit(5, 60)\n  response.ok({ ok: true })\n}\n' },
  });
  return { t, port };
}

test('Redis down: a rate-limited route answers 503 within the connect timeout, and the outage is logged once', async () => {
  const { t, port } = await downRedisApp();
  try {
    for (let i = 0; i < REQUESTS; i++) {
      const started = performance.now();
      const res = await t.inject({ method: 'GET', url: '/limited' });
      assert.equal(res.status, 503, `request ${i}`);
      assert.equal(res.json().code, 'store_unavailable');
      assert.ok(performance.now() - started < REDIS_CONNECT_TIMEOUT_MS + SLACK_MS, `request ${i} took ${performance.now() - started} ms`);
    }
    const outage = t.logger.errors.filter((l: string) => l.includes('store unavailable'));
    assert.equal(outage.length, 1, t.logger.errors.join('\n'));
    assert.ok(outage[0]!.includes(`Redis at redis://127.0.0.1:${port}`), outage[0]);
    assert.ok(!t.logger.errors.join('\n').includes('hunter2'), 'no password in the log');
  } finally {
    await t.close();
  }
});

test('Redis down with rateLimit.failOpen: the route answers 200 without rate-limit headers', async () => {
  const { t } = await downRedisApp({ failOpen: true });
  try {
    for (let i = 0; i < REQUESTS; i++) {
      const res = await t.inject({ method: 'GET', url: '/limited' });
      assert.equal(res.status, 200, `request ${i}`);
      assert.equal(res.headers['ratelimit-remaining'], undefined);
    }
  } finally {
    await t.close();
  }
});
