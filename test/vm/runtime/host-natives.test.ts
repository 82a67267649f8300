/** The runtime's own natives: `next()` is the host's, loaded by every app whatever plugins it is given. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadPlugins } from '../../../vm/host/registry.js';
import { RUNTIME_PLUGIN, RUNTIME_PLUGIN_NAME } from '../../../vm/runtime/host-natives.js';
import { appPlugins } from '../../../vm/runtime/app.js';
import { loadSettings } from '../../../vm/runtime/config.js';
import { RequestContext } from '../../../vm/runtime/context.js';
import { RvmError } from '../../../vm/values.js';
import { fakeContext, TEST_APP } from '../../../plugins/testing.js';
import { createLogger } from '../../../vm/runtime/log.js';
import { createInProcessStore } from '../../../vm/runtime/stores/memory.js';

describe('runtime natives', () => {
  test('next() is registered by the runtime, scoped to middleware, with its doc', async () => {
    const registry = await loadPlugins([RUNTIME_PLUGIN], TEST_APP);
    const next = registry.natives.get('next');
    assert.ok(next);
    assert.equal(next.plugin, RUNTIME_PLUGIN_NAME);
    assert.equal(next.meta.scope, 'middleware');
    assert.deepEqual(next.meta.params, []);
    assert.match(next.meta.doc, /^Runs the rest of the chain/);
    assert.deepEqual([...registry.natives.keys()], ['next']);
  });

  test('an app given no standard plugins still has next(), and only the runtime plugin', async () => {
    const registry = await appPlugins(loadSettings(null), null);
    assert.deepEqual(
      registry.plugins.map((p) => p.name),
      [RUNTIME_PLUGIN_NAME],
    );
    assert.ok(registry.natives.has('next'));
  });

  test('returns what ctx.next() gives', async () => {
    const registry = await loadPlugins([RUNTIME_PLUGIN], TEST_APP);
    let ran = false;
    const ctx = fakeContext({
      next: async () => {
        ran = true;
        return null;
      },
    });
    assert.equal(await registry.natives.get('next')!.fn(ctx), null);
    assert.equal(ran, true);
  });

  test('outside middleware it is next_outside_middleware', async () => {
    const registry = await loadPlugins([RUNTIME_PLUGIN], TEST_APP);
    const deps = { settings: loadSettings(null), store: createInProcessStore(), log: createLogger({ quiet: true }) };
    const ctx = new RequestContext({ method: 'GET', url: '/', headers: {}, remoteAddress: '127.0.0.1', encrypted: false, body: null }, '/', '', {}, deps);
    assert.throws(
      () => registry.natives.get('next')!.fn(ctx),
      (e: unknown) => e instanceof RvmError && e.code === 'next_outside_middleware',
    );
  });
});
