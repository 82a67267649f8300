/**
 * Responses answered from a `fn` reach the reference of every route that calls it, through any
 * depth of calls and across files, recursion included; so do those of fns a guard_definition
 * calls (spec/plugins/reference.md, "Responses"; a `fn` doing `fail 404` once left 404 out of three routes' documents).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadApp } from '../../tools/host.js';
import { inject } from '../../vm/runtime/http/inject.js';
import { tempApp } from '../support/temp-app.js';

const FILES = {
  'helpers.rvm': `
/// The item, or 404.
fn item_or_404(id) {
  if id == '0' { fail 404 'No such item' }
  return { id: id }
}
/// Recursion: even and odd call each other; odd refuses a negative number.
fn even(n) {
  if n == 0 { return true }
  return odd(n - 1)
}
fn odd(n) {
  if n < 0 { fail 409 'Negative' }
  if n == 0 { return false }
  return even(n - 1)
}
/// Two calls deep.
fn outer(id) { return item_or_404(id) }
guard_definition paying {
  if request.headers['x-paid'] != 'yes' { pay() }
}
fn pay() { fail 402 'Payment required' }
`,
  'items.rvm': `
route GET /items/:id { response.ok(item_or_404(params.id)) }
route DELETE /items/:id {
  x = item_or_404(params.id)
  response.no_content()
}
route GET /deep/:id { response.ok(outer(params.id)) }
route GET /parity/:n { response.ok({ even: even(int(params.n)) }) }
route GET /paid {
  guard paying
  response.ok({ ok: true })
}
route GET /plain { response.ok({ plain: true }) }
`,
};

test('a fn that fails adds its status to every caller, transitively, once, recursion included', async (t) => {
  const dir = tempApp(t, FILES);
  const app = await loadApp(dir, { cache: false, dev: true });
  try {
    const res = await inject(app, { url: '/_app/rest-api/openapi.json' });
    assert.equal(res.status, 200);
    const doc = JSON.parse(res.body) as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
    // Every operation also lists the 4XX range of requests refused before any route runs.
    const statuses = (path: string, method: string) =>
      Object.keys(doc.paths[path]![method]!.responses)
        .filter((s) => s !== '4XX')
        .sort();
    assert.deepEqual(statuses('/items/{id}', 'get'), ['200', '404']);
    // A DELETE may carry a body: what reading it fails with is listed (openapi-responses.ts BODY_METHODS).
    assert.deepEqual(statuses('/items/{id}', 'delete'), ['204', '400', '404', '413', '415']);
    assert.deepEqual(statuses('/deep/{id}', 'get'), ['200', '404']);
    assert.deepEqual(statuses('/parity/{n}', 'get'), ['200', '409']);
    assert.ok(statuses('/paid', 'get').includes('402'), `paid: ${statuses('/paid', 'get').join(', ')}`);
    assert.deepEqual(statuses('/plain', 'get'), ['200']);
    // And the server answers what the document says.
    assert.equal((await inject(app, { url: '/items/0' })).status, 404);
    assert.equal((await inject(app, { url: '/deep/0' })).status, 404);
    assert.equal((await inject(app, { url: '/parity/-1' })).status, 409);
    assert.equal((await inject(app, { url: '/paid' })).status, 402);
  } finally {
    await app.close();
  }
});
