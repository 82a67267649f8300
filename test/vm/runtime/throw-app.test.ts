/** `throw` left uncaught in production: a 500 with the generic body, the code and message only in the log. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadApp } from '../../../tools/host.js';
import { inject } from '../../../vm/runtime/http/inject.js';
import { captureLogger } from '../../../vm/runtime/log.js';
import { tempApp } from '../../support/temp-app.js';

const APP = `route GET /order {
  throw 'out_of_stock', 'only 2 left of SKU-7'
}
`;

test('an uncaught throw in production answers the generic 500 and logs its code and message', async (t) => {
  const dir = tempApp(t, { 'app.rvm': APP });
  const logger = captureLogger();
  const app = await loadApp(dir, { cache: false, dev: false, logger });
  try {
    const res = await inject(app, { url: '/order' });
    assert.equal(res.status, 500);
    assert.deepEqual(res.json(), { error: 'Internal server error', code: 'internal_error' });
    assert.ok(!res.body.includes('SKU-7'), 'the message does not leave the server');
    const logged = logger.errors.join('\n');
    assert.match(logged, /out_of_stock/);
    assert.match(logged, /only 2 left of SKU-7/);
    assert.match(logged, /app\.rvm:2/);
  } finally {
    await app.close();
  }
});
