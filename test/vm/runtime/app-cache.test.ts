/**
 * What the cache vouches for. A module enters `app/.rvm/cache` only once its routes' validation
 * compiled against the plugins, so a start from the cache compiles each route's validation plan
 * on first request; an app that linked cleanly leaves a link proof, so the next start with the
 * same sources and plugins binds each chunk when it first runs. Should a plugin change under the
 * same name@version, the route answers 500 rather than run with a rule or a call left out; a
 * bundle is always checked whole.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, lstatSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildApp, loadApp } from '../../../tools/host.js';
import { inject } from '../../../vm/runtime/http/inject.js';
import { captureLogger } from '../../../vm/runtime/log.js';
import { CACHE_DIR, cachePath } from '../../../vm/bytecode/cache.js';
import { writeBundle } from '../../../vm/bytecode/bundle.js';
import { DiagnosticError } from '../../../vm/diagnostics.js';
import { definePlugin, type PluginDefinition } from '../../../plugins/sdk.js';
import { plantSpecial } from '../special-files.js';
import { tempApp } from '../../support/temp-app.js';

/** A third-party plugin; `withEven: false` is the same name@version with its validator and native gone. */
function parity(withEven: boolean): PluginDefinition {
  return definePlugin({
    name: 'parity',
    version: '1.0.0',
    setup(rvm) {
      if (!withEven) return;
      rvm.native('halve', (_ctx, n) => (typeof n === 'number' ? n / 2 : null), {
        params: [{ name: 'n', type: 'number' }],
        returns: 'number',
        doc: 'Half of n.',
      });
      rvm.validator('even', {
        types: ['int'],
        params: [],
        doc: 'An even number.',
        build: () => (value) => typeof value === 'number' && value % 2 === 0,
        message: () => 'must be even',
      });
    },
  });
}

const EVEN_ROUTE = `route POST /pairs {
  validate {
    count: int @even
  }
  response.created(body)
}`;
const PLAIN_ROUTE = `route GET /ping { response.ok('pong') }`;

describe('the cache and validation', () => {
  test('a module whose validation does not compile is reported with its location and never cached', async (t) => {
    const dir = tempApp(t, { 'bad.rvm': `route POST /v {\n  validate {\n    n: int @min()\n  }\n  response.ok(body)\n}`, 'ping.rvm': PLAIN_ROUTE });
    const build = await buildApp(dir);
    assert.equal(build.linked, null);
    const [problem] = build.diagnostics;
    assert.equal(problem?.code, 'E_VALIDATOR_ARGS');
    assert.deepEqual([problem.file, problem.line, problem.col], ['bad.rvm', 3, 12]);
    assert.equal(problem.sourceLine, '    n: int @min()');
    assert.equal(existsSync(cachePath(dir, 'bad.rvm')), false, 'the failing module is not cached');
    assert.equal(existsSync(cachePath(dir, 'ping.rvm')), true, 'the clean module is');
    // Fixed, the file compiles and is cached; the validation error no longer stops anything.
    writeFileSync(join(dir, 'bad.rvm'), `route POST /v {\n  validate {\n    n: int @min(1)\n  }\n  response.ok(body)\n}`);
    assert.notEqual((await buildApp(dir)).linked, null);
    assert.equal(existsSync(cachePath(dir, 'bad.rvm')), true);
  });

  test('validation and link errors of different files are reported in one run', async (t) => {
    const dir = tempApp(t, {
      'a.rvm': `route POST /a {\n  validate {\n    n: int @bogus\n  }\n  response.ok(body)\n}`,
      'b.rvm': `route GET /b { response.ok(nope(1)) }`,
    });
    const build = await buildApp(dir, { cache: false });
    assert.deepEqual(build.diagnostics.map((d) => d.code).sort(), ['E_UNKNOWN_FUNCTION', 'E_UNKNOWN_VALIDATOR']);
  });

  test('a cached artefact that is a symlink to /dev/zero or a FIFO is damaged: recompiled and replaced, never read', async (t) => {
    for (const kind of ['dev-zero', 'fifo'] as const) {
      const dir = tempApp(t, { 'ping.rvm': PLAIN_ROUTE });
      await (await loadApp(dir, { logger: captureLogger() })).close();
      const entry = cachePath(dir, 'ping.rvm');
      rmSync(entry);
      plantSpecial(join(dir, CACHE_DIR), 'ping.rvm.rvmc', kind);
      const rss = process.memoryUsage().rss;
      const instance = await loadApp(dir, { logger: captureLogger() });
      try {
        assert.equal((await inject(instance, { url: '/ping' })).body, '"pong"', kind);
        assert.ok(lstatSync(entry).isFile(), `${kind}: the entry was written over`);
        assert.ok(process.memoryUsage().rss - rss < 256 * 1024 * 1024, `${kind}: nothing big was read`);
      } finally {
        await instance.close();
      }
    }
  });

  test('a route served from the cache validates as one compiled fresh', async (t) => {
    const dir = tempApp(t, { 'pairs.rvm': EVEN_ROUTE });
    for (const start of ['cold', 'warm']) {
      const instance = await loadApp(dir, { logger: captureLogger(), plugins: [parity(true)] });
      try {
        assert.equal(existsSync(cachePath(dir, 'pairs.rvm')), true);
        assert.equal((await inject(instance, { method: 'POST', url: '/pairs', body: { count: 4 } })).status, 201, start);
        const refused = await inject(instance, { method: 'POST', url: '/pairs', body: { count: 3 } });
        assert.equal(refused.status, 422, start);
        assert.deepEqual((refused.json() as { details: unknown[] }).details, [{ field: 'count', rule: 'even', message: 'must be even' }]);
      } finally {
        await instance.close();
      }
    }
  });

  test('a plugin changed under the same name@version: the cached route answers 500 and never runs without its rule', async (t) => {
    const dir = tempApp(t, { 'pairs.rvm': EVEN_ROUTE, 'ping.rvm': PLAIN_ROUTE });
    const first = await loadApp(dir, { logger: captureLogger(), plugins: [parity(true)] });
    await first.close();
    const logger = captureLogger();
    const instance = await loadApp(dir, { logger, plugins: [parity(false)] });
    try {
      const res = await inject(instance, { method: 'POST', url: '/pairs', body: { count: 3 } });
      assert.equal(res.status, 500);
      assert.deepEqual(res.json(), { error: 'Internal server error', code: 'internal_error' });
      assert.match(logger.errors.join('\n'), /validation of POST \/pairs does not compile against the loaded plugins: unknown validator '@even'/);
      assert.equal((await inject(instance, { url: '/ping' })).status, 200, 'the other routes keep serving');
    } finally {
      await instance.close();
    }
    // Without the cache the same change is a load error at the decorator.
    await assert.rejects(
      loadApp(dir, { cache: false, logger: captureLogger(), plugins: [parity(false)] }),
      (e: unknown) => e instanceof DiagnosticError && e.diagnostics[0]?.code === 'E_UNKNOWN_VALIDATOR',
    );
  });

  test('a bundle is checked whole when opened: a validator its plugins lack is a load error', async (t) => {
    const dir = tempApp(t, { 'pairs.rvm': EVEN_ROUTE });
    const build = await buildApp(dir, { cache: false, plugins: [parity(true)] });
    assert.notEqual(build.linked, null);
    const bundle = join(dir, 'app.rvmb');
    writeBundle(bundle, { modules: build.modules, config: null, plugins: [] });
    const served = await loadApp(bundle, { logger: captureLogger(), plugins: [parity(true)] });
    assert.equal((await inject(served, { method: 'POST', url: '/pairs', body: { count: 3 } })).status, 422);
    await served.close();
    await assert.rejects(
      loadApp(bundle, { logger: captureLogger(), plugins: [parity(false)] }),
      (e: unknown) =>
        e instanceof DiagnosticError &&
        e.diagnostics.length === 1 &&
        e.diagnostics[0]!.code === 'E_UNKNOWN_VALIDATOR' &&
        e.diagnostics[0]!.file === 'pairs.rvm',
    );
  });

  test('an app that linked cleanly links lazily on the next start: each chunk, with all it can call, is bound on first run', async (t) => {
    const dir = tempApp(t, {
      'math.rvm': `fn even(n) {
  if n == 0 { return true }
  return odd(n - 1)
}
fn odd(n) {
  if n == 0 { return false }
  return even(n - 1)
}
fn unused() { return 1 }`,
      'check.rvm': `route GET /even/:n { response.ok({ even: even(int(params.n)), half: halve(int(params.n)) }) }
route GET /ping { response.ok('pong') }`,
    });
    const cold = await loadApp(dir, { logger: captureLogger(), plugins: [parity(true)] });
    assert.ok(
      cold.program.chunks.every((c) => c.bound),
      'the first start binds everything',
    );
    assert.equal(existsSync(join(dir, CACHE_DIR, 'app.linked')), true, 'and leaves a link proof');
    const expected = (await inject(cold, { url: '/even/7' })).json();
    await cold.close();

    const warm = await loadApp(dir, { logger: captureLogger(), plugins: [parity(true)] });
    try {
      const bound = () =>
        warm.program.chunks
          .filter((c) => c.bound)
          .map((c) => c.data.name)
          .sort();
      assert.deepEqual(bound(), [], 'nothing is bound before a request');
      assert.deepEqual((await inject(warm, { url: '/even/7' })).json(), expected);
      assert.deepEqual(expected, { even: false, half: 3.5 });
      assert.deepEqual(bound(), ['fn even', 'fn odd', 'route GET /even/:n'], 'the route and the mutually recursive pair it reaches, nothing else');
    } finally {
      await warm.close();
    }

    // A changed file changes the key: everything is bound (and checked) at start again.
    writeFileSync(
      join(dir, 'math.rvm'),
      `fn even(n) { return n % 2 == 0 }
fn odd(n) { return !even(n) }`,
    );
    const changed = await loadApp(dir, { logger: captureLogger(), plugins: [parity(true)] });
    assert.ok(changed.program.chunks.every((c) => c.bound));
    await changed.close();
  });

  test('a plugin changed under the same name@version: a route of a proven app calling a vanished native answers 500, the rest serves', async (t) => {
    const dir = tempApp(t, { 'half.rvm': `route GET /half { response.ok(halve(9)) }`, 'ping.rvm': PLAIN_ROUTE });
    await (await loadApp(dir, { logger: captureLogger(), plugins: [parity(true)] })).close();
    const logger = captureLogger();
    const instance = await loadApp(dir, { logger, plugins: [parity(false)] });
    try {
      const res = await inject(instance, { url: '/half' });
      assert.equal(res.status, 500);
      assert.deepEqual(res.json(), { error: 'Internal server error', code: 'internal_error' });
      assert.match(logger.errors.join('\n'), /half\.rvm:1:\d+ does not link against the loaded plugins: unknown function 'halve'/);
      assert.equal((await inject(instance, { url: '/half' })).status, 500, 'and again on the next request: nothing half-bound runs');
      assert.equal((await inject(instance, { url: '/ping' })).status, 200);
    } finally {
      await instance.close();
    }
    await assert.rejects(
      loadApp(dir, { cache: false, logger: captureLogger(), plugins: [parity(false)] }),
      (e: unknown) => e instanceof DiagnosticError && e.diagnostics[0]?.code === 'E_UNKNOWN_FUNCTION',
    );
  });

  test('a vanished native deep in a called fn: no request runs the route, not even into its try/catch, and other routes keep what they share', async (t) => {
    const dir = tempApp(t, {
      'lib.rvm': `fn twice(n) { return n * 2 }\nfn half(n) { return halve(twice(n)) }`,
      'half.rvm': `route GET /half {\n  try {\n    response.ok(half(9))\n  } catch err {\n    response.ok('caught')\n  }\n}\nroute GET /twice { response.ok(twice(4)) }`,
    });
    await (await loadApp(dir, { logger: captureLogger(), plugins: [parity(true)] })).close();
    const instance = await loadApp(dir, { logger: captureLogger(), plugins: [parity(false)] });
    try {
      for (let i = 0; i < 2; i++) {
        const res = await inject(instance, { url: '/half' });
        assert.equal(res.status, 500, `request ${i + 1}`);
        assert.equal(res.json().code, 'internal_error');
      }
      const bound = instance.program.chunks.filter((c) => c.bound).map((c) => c.data.name);
      assert.deepEqual(bound, [], 'a failed bind marks nothing bound');
      assert.deepEqual((await inject(instance, { url: '/twice' })).json(), 8);
      assert.equal((await inject(instance, { url: '/half' })).status, 500, 'still refused once twice() is bound');
    } finally {
      await instance.close();
    }
  });
});
