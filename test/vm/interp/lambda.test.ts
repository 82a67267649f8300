/**
 * Lambdas a native calls (`ctx.call`): on the request's budget and call depth, unable to wait for
 * I/O, ending the request when they answer, and only while their request runs.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { definePlugin, Lambda, RUNTIME, RvmError } from '../../../plugins/sdk.js';
import { fakeContext, testApp, type TestApp } from '../../../plugins/testing.js';
import { MAX_CALL_DEPTH } from '../../../vm/interp/interpreter.js';

/** `later(x)`: x, after a turn of the event loop; `calls(f, n)`: how many of n calls of f returned truthy. */
const helpers = definePlugin({
  name: 'lambda-helpers',
  version: '1.0.0',
  setup(rvm) {
    rvm.native('later', (_ctx, x) => new Promise((resolve) => setImmediate(() => resolve(x ?? null))), {
      params: [{ name: 'x', type: 'any' }],
      doc: 'x, later.',
    });
    rvm.native(
      'calls',
      (ctx, f, n) => {
        let truthy = 0;
        for (let i = 0; i < n; i++) if (ctx.call(f, i)) truthy++;
        return truthy;
      },
      {
        params: [
          { name: 'f', type: 'lambda' },
          { name: 'n', type: 'int' },
        ],
        doc: 'Calls f n times.',
      },
    );
  },
});

const APP = `fn each(xs, f) {
  return map(xs, f)
}

fn deny(x) {
  fail 403 'not this one'
}

fn down(n) {
  if n == 0 {
    return 0
  }
  return reduce([1], (acc, x) => down(n - 1), 0)
}

route GET /waits {
  response.ok(each([1, 2], x => later(x)))
}

route GET /waits-inline {
  response.ok(map([1, 2], x => later(x)))
}

route GET /answers {
  response.ok(sort_by([2, 1], x => deny(x)))
}

route GET /deep {
  response.ok(down(${MAX_CALL_DEPTH}))
}

route GET /shallow {
  response.ok(down(20))
}

route GET /many {
  limit = 500
  response.ok(calls(i => i < limit, 1000))
}
`;

describe('lambdas called by natives', () => {
  let app: TestApp;
  before(async () => {
    app = await testApp({ files: { 'app.rvm': APP }, plugins: [helpers] });
  });
  after(() => app.close());

  test('a lambda a native calls cannot wait for I/O: lambda_cannot_wait at its line', async () => {
    const r = await app.inject({ url: '/waits' });
    assert.equal(r.status, 500);
    assert.deepEqual([r.json().code, r.json().at], [RUNTIME.lambda_cannot_wait, 'app.rvm:17']);
  });

  test('map with a literal lambda is a loop of the handler, which may wait', async () => {
    const r = await app.inject({ url: '/waits-inline' });
    assert.deepEqual([r.status, r.json()], [200, [1, 2]]);
  });

  test('a lambda that calls a fn which fails ends the request with that answer', async () => {
    const r = await app.inject({ url: '/answers' });
    assert.deepEqual([r.status, r.json().error], [403, 'not this one']);
  });

  test('recursion through lambdas counts every call level', async () => {
    const deep = await app.inject({ url: '/deep' });
    assert.deepEqual([deep.status, deep.json().code], [500, RUNTIME.call_depth_exceeded]);
    const shallow = await app.inject({ url: '/shallow' });
    assert.deepEqual([shallow.status, shallow.json()], [200, 0]);
  });

  test('a plugin native calls a lambda through ctx.call, which reads the locals it captured', async () => {
    const r = await app.inject({ url: '/many' });
    assert.deepEqual([r.status, r.json()], [200, 500]);
  });

  test('ctx.call takes a lambda, and only while its request runs', () => {
    const ctx = fakeContext();
    assert.throws(
      () => ctx.call(3),
      (e: unknown) => e instanceof RvmError && e.code === RUNTIME.type_error,
    );
    const lambda = new Lambda({ data: { arity: 0, name: 'lambda at 1:1' } }, []);
    assert.throws(
      () => ctx.call(lambda),
      (e: unknown) => e instanceof RvmError && e.code === RUNTIME.not_callable,
    );
  });
});
