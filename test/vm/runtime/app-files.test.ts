import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findRouteFiles } from '../../../vm/runtime/app.js';

describe('findRouteFiles', () => {
  let root = '';
  let app = '';
  before(() => {
    root = mkdtempSync(join(tmpdir(), 'rvm-find-'));
    app = join(root, 'app');
    const files = ['index.rvm', 'b/z.rvm', 'b/a.rvm', 'a/deep/er/x.rvm', 'notes.txt', 'node_modules/dep/x.rvm', '.rvm/cache/x.rvm', '.hidden/x.rvm', '.secrets/x.rvm'];
    for (const f of files) {
      mkdirSync(join(app, f, '..'), { recursive: true });
      writeFileSync(join(app, f), 'route GET /x { response.ok(1) }');
    }
    mkdirSync(join(root, 'shared'));
    writeFileSync(join(root, 'shared', 'routes.rvm'), '');
    writeFileSync(join(root, 'outside.rvm'), '');
    symlinkSync(join(root, 'shared'), join(app, 'linked'));
    symlinkSync(join(root, 'outside.rvm'), join(app, 'alias.rvm'));
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  test('lists .rvm files relative with / separators, sorted, skipping dependency, cache and hidden folders, following symbolic links', () => {
    assert.deepEqual(findRouteFiles(app), ['a/deep/er/x.rvm', 'alias.rvm', 'b/a.rvm', 'b/z.rvm', 'index.rvm', 'linked/routes.rvm']);
  });
});
