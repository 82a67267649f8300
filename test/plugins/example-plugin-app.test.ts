/**
 * The example plugin end to end: listed in an app's rvm.config.json, loaded by path, and used
 * from route files through its native, its guard and its validator.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { App } from '../../vm/runtime/app.js';
import { buildApp, loadApp } from '../../tools/host.js';
import { inject } from '../../vm/runtime/http/inject.js';
import { captureLogger } from '../../vm/runtime/log.js';

const PLUGIN = fileURLToPath(new URL('../../plugins/example-plugin/index.js', import.meta.url));

describe('example plugin in an app', () => {
  let dir: string;
  let app: App;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rvm-plugin-'));
    writeFileSync(join(dir, 'rvm.config.json'), JSON.stringify({ plugins: [PLUGIN] }));
    writeFileSync(
      join(dir, 'posts.rvm'),
      `route POST /posts {
  guard require_header('X-Tenant')
  validate {
    title: text
    slug?: text @slug_case
  }
  response.created({ slug: body.slug ?? slugify(body.title) })
}`,
    );
    app = await loadApp(dir, { cache: false, logger: captureLogger() });
  });

  after(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('its native runs', async () => {
    const res = await inject(app, { method: 'POST', url: '/posts', headers: { 'x-tenant': 'a' }, body: { title: 'Crème Brûlée!' } });
    assert.equal(res.status, 201);
    assert.deepEqual(res.json(), { slug: 'creme-brulee' });
  });

  test('its guard rejects', async () => {
    const res = await inject(app, { method: 'POST', url: '/posts', body: { title: 'x' } });
    assert.equal(res.status, 400);
    assert.equal(res.json().code, 'missing_header');
  });

  test('its validator rejects with 422 and the rule name', async () => {
    const res = await inject(app, { method: 'POST', url: '/posts', headers: { 'x-tenant': 'a' }, body: { title: 'x', slug: 'Not A Slug' } });
    assert.equal(res.status, 422);
    assert.deepEqual(
      res.json().details.map((d: { field: string; rule: string }) => [d.field, d.rule]),
      [['slug', 'slug_case']],
    );
  });

  test('without the plugin, its names are unknown with a located diagnostic', async () => {
    writeFileSync(join(dir, 'rvm.config.json'), JSON.stringify({ plugins: [] }));
    try {
      const build = await buildApp(dir, { cache: false });
      const errors = build.diagnostics.filter((d) => d.severity === 'error').map((d) => `${d.code}@${d.line}:${d.col}`);
      assert.deepEqual(errors.sort(), ['E_UNKNOWN_FUNCTION@7:41', 'E_UNKNOWN_GUARD@2:9', 'E_UNKNOWN_VALIDATOR@5:17']);
    } finally {
      writeFileSync(join(dir, 'rvm.config.json'), JSON.stringify({ plugins: [PLUGIN] }));
    }
  });
});
