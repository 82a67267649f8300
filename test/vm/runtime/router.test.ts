import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createRouter } from '../../../vm/runtime/router.js';
import type { RouteMatch } from '../../../vm/runtime/types.js';
import { segments } from './fake-app.js';

/** The routes every case runs against; the value is `METHOD path` as added. */
const ROUTES: Array<[string, string]> = [
  ['GET', '/'],
  ['GET', '/hello'],
  ['GET', '/users'],
  ['POST', '/users'],
  ['GET', '/users/me'],
  ['GET', '/users/:id'],
  ['DELETE', '/users/:id'],
  ['GET', '/users/:id/posts/:postId'],
  ['GET', '/users/me/settings'],
  ['GET', '/files/*path'],
  ['PUT', '/files/special'],
  ['ANY', '/any'],
  ['GET', '/any'],
  ['GET', '/a/:x/b'],
  ['GET', '/a/:y/c'],
  ['GET', '/deep/:a/static'],
  ['GET', '/deep/fixed/:b'],
  ['OPTIONS', '/opts'],
  ['HEAD', '/head-only'],
];

type Expect = { found: string; params?: Record<string, string> } | { allowed: string[] } | 'not_found';

/** [method, request path, expectation] — Hono's common-case style: one table, every rule. */
const CASES: Array<[string, string, Expect]> = [
  ['GET', '/', { found: 'GET /' }],
  ['GET', '/hello', { found: 'GET /hello' }],
  ['GET', '/hello/', { found: 'GET /hello' }],
  ['GET', '/Hello', 'not_found'],
  ['GET', '/nope', 'not_found'],
  ['POST', '/users', { found: 'POST /users' }],
  // static before param
  ['GET', '/users/me', { found: 'GET /users/me' }],
  ['GET', '/users/42', { found: 'GET /users/:id', params: { id: '42' } }],
  ['GET', '/users/42/', { found: 'GET /users/:id', params: { id: '42' } }],
  // backtracking by method: DELETE has only the param route
  ['DELETE', '/users/me', { found: 'DELETE /users/:id', params: { id: 'me' } }],
  ['GET', '/users/7/posts/9', { found: 'GET /users/:id/posts/:postId', params: { id: '7', postId: '9' } }],
  // backtracking by shape: /users/me/posts/1 leaves the static `me` branch for `:id`
  ['GET', '/users/me/posts/1', { found: 'GET /users/:id/posts/:postId', params: { id: 'me', postId: '1' } }],
  ['GET', '/users/me/settings', { found: 'GET /users/me/settings' }],
  // percent-decoding of params
  ['GET', '/users/a%20b', { found: 'GET /users/:id', params: { id: 'a b' } }],
  ['GET', '/users/%E2%9C%93', { found: 'GET /users/:id', params: { id: '✓' } }],
  ['GET', '/users/%E0%A4%A', 'not_found'],
  ['GET', '/users/%ZZ', 'not_found'],
  // wildcard: the rest of the path, one segment or more
  ['GET', '/files/a', { found: 'GET /files/*path', params: { path: 'a' } }],
  ['GET', '/files/a/b/c.txt', { found: 'GET /files/*path', params: { path: 'a/b/c.txt' } }],
  ['GET', '/files/a%2Fb/c', { found: 'GET /files/*path', params: { path: 'a/b/c' } }],
  ['GET', '/files/special', { found: 'GET /files/*path', params: { path: 'special' } }],
  ['PUT', '/files/special', { found: 'PUT /files/special' }],
  ['GET', '/files', 'not_found'],
  // ANY matches every method; a specific method wins at the same node
  ['PATCH', '/any', { found: 'ANY /any' }],
  ['GET', '/any', { found: 'GET /any' }],
  ['HEAD', '/any', { found: 'GET /any' }],
  // HEAD falls back to GET; an explicit HEAD route is used as is
  ['HEAD', '/hello', { found: 'GET /hello' }],
  ['HEAD', '/users/5', { found: 'GET /users/:id', params: { id: '5' } }],
  ['HEAD', '/head-only', { found: 'HEAD /head-only' }],
  // same param position, different names on different branches
  ['GET', '/a/1/b', { found: 'GET /a/:x/b', params: { x: '1' } }],
  ['GET', '/a/2/c', { found: 'GET /a/:y/c', params: { y: '2' } }],
  // priority is per segment, left to right: the static `fixed` wins over `:a`
  ['GET', '/deep/fixed/static', { found: 'GET /deep/fixed/:b', params: { b: 'static' } }],
  ['GET', '/deep/other/static', { found: 'GET /deep/:a/static', params: { a: 'other' } }],
  ['GET', '/deep/fixed/other', { found: 'GET /deep/fixed/:b', params: { b: 'other' } }],
  // 405 with the allowed methods: sorted, no duplicates, HEAD with GET
  ['PUT', '/hello', { allowed: ['GET', 'HEAD'] }],
  ['DELETE', '/users', { allowed: ['GET', 'HEAD', 'POST'] }],
  ['POST', '/users/me', { allowed: ['DELETE', 'GET', 'HEAD'] }],
  ['DELETE', '/files/special', { allowed: ['GET', 'HEAD', 'PUT'] }],
  ['POST', '/files/x/y', { allowed: ['GET', 'HEAD'] }],
  ['GET', '/opts', { allowed: ['OPTIONS'] }],
  ['GET', '/head-only', { allowed: ['HEAD'] }],
  ['GET', '/users//x', 'not_found'],
];

function build() {
  const router = createRouter<string>();
  for (const [method, path] of ROUTES) router.add(method, segments(path), `${method} ${path}`);
  return router;
}

function check(m: RouteMatch<string>, expect: Expect): void {
  if (expect === 'not_found') return assert.deepEqual(m, { kind: 'not_found' });
  if ('allowed' in expect) return assert.deepEqual(m, { kind: 'method_not_allowed', allowed: expect.allowed });
  assert.equal(m.kind, 'found');
  if (m.kind !== 'found') return;
  assert.equal(m.value, expect.found);
  assert.deepEqual({ ...m.params }, expect.params ?? {});
}

describe('router: common cases', () => {
  const router = build();
  for (const [method, path, expect] of CASES) {
    test(`${method} ${path}`, () => check(router.match(method, path), expect));
  }
});

describe('router: adding routes', () => {
  test('a duplicate route of the same shape throws, naming both', () => {
    const router = createRouter<number>();
    router.add('GET', segments('/a/:x'), 1);
    assert.throws(() => router.add('GET', segments('/a/:y'), 2), /duplicate route.*\/a\/:y.*\/a\/:x/);
    assert.throws(() => router.add('GET', segments('/a/:x'), 3), /duplicate route/);
  });

  test('the same shape with another method is not a duplicate', () => {
    const router = createRouter<number>();
    router.add('GET', segments('/a/:x'), 1);
    router.add('POST', segments('/a/:y'), 2);
    const m = router.match('POST', '/a/7');
    assert.equal(m.kind === 'found' && m.value, 2);
    assert.deepEqual(m.kind === 'found' && { ...m.params }, { y: '7' });
  });

  test('duplicate static and wildcard routes throw', () => {
    const router = createRouter<number>();
    router.add('GET', segments('/s'), 1);
    assert.throws(() => router.add('GET', segments('/s'), 2), /duplicate route/);
    router.add('GET', segments('/w/*a'), 1);
    assert.throws(() => router.add('GET', segments('/w/*b'), 2), /duplicate route/);
  });

  test('a wildcard that is not last throws', () => {
    const router = createRouter<number>();
    assert.throws(
      () =>
        router.add(
          'GET',
          [
            { kind: 'wildcard', value: 'a' },
            { kind: 'static', value: 'b' },
          ],
          1,
        ),
      /last segment/,
    );
  });

  test('a param named __proto__ is plain data', () => {
    const router = createRouter<number>();
    router.add('GET', segments('/p/:__proto__'), 1);
    const m = router.match('GET', '/p/x');
    assert.equal(m.kind, 'found');
    if (m.kind !== 'found') return;
    assert.equal(Object.getPrototypeOf(m.params), Object.prototype);
    assert.equal(Object.getOwnPropertyDescriptor(m.params, '__proto__')?.value, 'x');
  });
});
