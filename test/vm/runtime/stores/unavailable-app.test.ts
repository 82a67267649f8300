/**
 * A shared store that cannot be reached fails the request with 503 `store_unavailable`, in
 * production and in development alike: the request was fine, the service was not (not a 500).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { definePlugin } from '../../../../plugins/sdk.js';
import { testApp } from '../../../../plugins/testing.js';
import { StoreUnavailableError } from '../../../../vm/runtime/stores/unavailable.js';

/** A native reading a store that is down, as a shared store answers then. */
const DOWN = definePlugin({
  name: 'down-store',
  version: '1.0.0',
  setup(rvm) {
    rvm.native('read_shared', () => Promise.reject(new StoreUnavailableError('the shared store did not answer within 1000 ms')), { params: [], doc: 'Reads a store that is down.' });
  },
});

for (const dev of [false, true]) {
  test(`a store that cannot be reached answers 503 store_unavailable (${dev ? 'development' : 'production'}), and the cause is logged`, async () => {
    const t = await testApp({ dev, plugins: [DOWN], files: { 'r.rvm': 'route GET /shared {\n  response.ok({ value: read_shared() })\n}\n' } });
    try {
      const res = await t.inject({ method: 'GET', url: '/shared' });
      assert.equal(res.status, 503);
      assert.deepEqual(res.json(), { error: 'The shared store is unavailable', code: 'store_unavailable' });
      assert.ok(t.logger.errors.some((l: string) => l.includes('store_unavailable') && l.includes('did not answer')), 'the cause goes to the error log, not the client');
    } finally {
      await t.close();
    }
  });
}
