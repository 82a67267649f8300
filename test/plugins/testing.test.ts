/** The test kit plugin authors get as `rvm/testing`: a fake context, plugins loaded as an app loads them, and an app to inject requests into. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { HALT, RvmError } from '../../plugins/sdk.js';
import { fakeContext, loadForTest, testApp } from '../../plugins/testing.js';
import slugs from '../../plugins/example-plugin/index.js';

test('fakeContext records answers, failures with their default message and code, and headers', () => {
  const ctx = fakeContext({ request: { method: 'POST', headers: { 'x-tenant': 'a' } } });
  assert.equal(ctx.request.method, 'POST');
  assert.equal(ctx.fail(403), HALT);
  assert.deepEqual(ctx.failures, [{ status: 403, message: 'Forbidden', code: undefined, headers: undefined }]);
  assert.deepEqual(ctx.answers, [{ status: 403, body: { error: 'Forbidden', code: 'forbidden' }, kind: 'json' }]);
  ctx.response.setHeader('X-A', '1');
  assert.equal(ctx.response.getHeader('x-a'), '1');
  ctx.log('hello');
  assert.deepEqual(ctx.logs, ['hello']);
  assert.throws(() => ctx.next(), /outside middleware/);
});

test('fakeContext runs what natives left for the end of the request, in order, once', async () => {
  const ctx = fakeContext();
  const ran: string[] = [];
  ctx.atEnd(() => void ran.push('first'));
  ctx.atEnd(async () => {
    await new Promise((r) => setTimeout(r, 1));
    ran.push('second');
  });
  assert.deepEqual(ran, []);
  await ctx.end();
  await ctx.end();
  assert.deepEqual(ran, ['first', 'second']);
});

test('loadForTest calls natives behind their argument checks and finds guards', async () => {
  const kit = await loadForTest([slugs]);
  assert.equal(kit.call('slugify', 'Hello World', '_'), 'hello_world');
  assert.throws(
    () => kit.call('slugify', 5),
    (e: unknown) => e instanceof RvmError && e.code === 'type_error',
  );
  assert.throws(() => kit.call('nope'), /no native 'nope'/);
  const guard = kit.guard('require_header');
  const ctx = fakeContext();
  assert.equal(guard.fn(ctx, ['X-Tenant'], { mode: 'required' }), HALT);
  assert.equal(ctx.failures[0]?.code, 'missing_header');
});

test('testApp serves route files with the plugin through inject, and close removes it', async () => {
  const app = await testApp({
    plugins: [slugs],
    files: { 'routes/posts.rvm': "route GET /slug/:title {\n  guard require_header('X-Tenant')\n  response.ok({ slug: slugify(params.title) })\n}" },
  });
  try {
    const ok = await app.inject({ url: '/slug/Cr%C3%A8me%20Br%C3%BBl%C3%A9e', headers: { 'X-Tenant': 'a' } });
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.json(), { slug: 'creme-brulee' });
    const refused = await app.inject({ url: '/slug/x' });
    assert.equal(refused.status, 400);
    assert.equal(refused.json().code, 'missing_header');
  } finally {
    await app.close();
  }
});

test('the kit is exported to plugin authors as rvm/testing', () => {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { exports: Record<string, string> };
  assert.equal(pkg.exports['./testing'], './dist/plugins/testing.js');
});
