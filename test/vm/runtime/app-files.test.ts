import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findRouteFiles } from '../../../vm/runtime/app-files.js';

const CLI = fileURLToPath(new URL('../../../tools/cli.js', import.meta.url));

/** The link and reason of each W_LINK_SKIPPED warning. */
function skipped(dir: string): string[] {
  return findRouteFiles(dir).warnings.map((w) => `${w.severity} ${w.code} ${w.file}: ${w.message.replace(/^.* is not followed: /, '')}`);
}

describe('findRouteFiles', () => {
  let root = '';
  let app = '';
  before(() => {
    root = mkdtempSync(join(tmpdir(), 'rvm-find-'));
    app = join(root, 'app');
    const files = [
      'index.rvm',
      'b/z.rvm',
      'b/a.rvm',
      'a/deep/er/x.rvm',
      'notes.txt',
      'node_modules/dep/x.rvm',
      '.rvm/cache/x.rvm',
      '.hidden/x.rvm',
      '.secrets/x.rvm',
    ];
    for (const f of files) {
      mkdirSync(join(app, f, '..'), { recursive: true });
      writeFileSync(join(app, f), 'route GET /x { response.ok(1) }');
    }
    mkdirSync(join(root, 'shared'));
    writeFileSync(join(root, 'shared', 'routes.rvm'), '');
    writeFileSync(join(root, 'outside.rvm'), '');
    symlinkSync(join(root, 'outside.rvm'), join(app, 'alias.rvm'));
    symlinkSync(join(app, 'a', 'deep'), join(app, 'b', 'inner'));
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  test('lists .rvm files relative with / separators, sorted, skipping dependency, cache and hidden folders, following links that stay inside', () => {
    const found = findRouteFiles(app);
    assert.deepEqual(found.files, ['a/deep/er/x.rvm', 'alias.rvm', 'b/a.rvm', 'b/inner/er/x.rvm', 'b/z.rvm', 'index.rvm']);
    assert.deepEqual(found.warnings, []);
  });

  test('a folder link out of the app, to a folder holding it, in a cycle or to nowhere is skipped with one warning naming it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rvm-links-'));
    try {
      const own = join(dir, 'app');
      mkdirSync(join(own, 'x'), { recursive: true });
      mkdirSync(join(own, 'y'));
      writeFileSync(join(own, 'index.rvm'), '');
      writeFileSync(join(own, 'x', 'x.rvm'), '');
      symlinkSync('/etc', join(own, 'etc-link'));
      symlinkSync('..', join(own, 'up'));
      symlinkSync(join(own, 'x'), join(own, 'x', 'self'));
      symlinkSync(join(own, 'y'), join(own, 'x', 'to-y'));
      symlinkSync(join(own, 'x'), join(own, 'y', 'to-x'));
      symlinkSync(join(dir, 'missing'), join(own, 'gone.rvm'));
      const found = findRouteFiles(own);
      // y/to-x/ is x/ walked again through an inside link; its links back into the walk are not followed.
      assert.deepEqual(found.files, ['index.rvm', 'x/x.rvm', 'y/to-x/x.rvm']);
      assert.deepEqual(skipped(own), [
        'warning W_LINK_SKIPPED etc-link: it leads outside the app (to /etc)',
        'warning W_LINK_SKIPPED gone.rvm: it leads nowhere',
        `warning W_LINK_SKIPPED up: it leads outside the app (to ${realpathSync(dir)})`,
        'warning W_LINK_SKIPPED x/self: it leads to a folder that holds it (the walk would loop)',
        'warning W_LINK_SKIPPED x/to-y/to-x: it leads to a folder that holds it (the walk would loop)',
        'warning W_LINK_SKIPPED y/to-x/self: it leads to a folder that holds it (the walk would loop)',
        'warning W_LINK_SKIPPED y/to-x/to-y: it leads to a folder that holds it (the walk would loop)',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('rvm check and rvm run on an app holding links to /etc and to ..', () => {
  let dir = '';
  let app = '';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rvm-links-cli-'));
    app = join(dir, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'hello.rvm'), "route GET /hello {\n  response.ok({ hello: 'world' })\n}\n");
    symlinkSync('/etc', join(app, 'etc-link'));
    symlinkSync('..', join(app, 'up'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('rvm check names each link once as a warning and passes', () => {
    const r = spawnSync(process.execPath, [CLI, 'check', app], { encoding: 'utf8', env: { ...process.env, RVM_DEBUG: '' }, timeout: 60_000 });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^etc-link:1:1: warning W_LINK_SKIPPED: the symbolic link 'etc-link' is not followed: it leads outside the app/m);
    assert.match(r.stdout, /^up:1:1: warning W_LINK_SKIPPED: the symbolic link 'up' is not followed: it leads outside the app/m);
    assert.doesNotMatch(r.stdout + r.stderr, /internal error|ENOENT|ELOOP/);
  });

  test('rvm run (dev, watching) warns once per link and serves', async () => {
    const child = spawn(process.execPath, [CLI, 'run', app, '--port', '0'], { env: { ...process.env, HOST: '127.0.0.1', RVM_DEBUG: '' } });
    let output = '';
    child.stdout.on('data', (b: Buffer) => (output += b.toString()));
    child.stderr.on('data', (b: Buffer) => (output += b.toString()));
    try {
      const started = Date.now();
      while (!/App:\s+http:\/\/\S+/.test(output)) {
        if (child.exitCode !== null || Date.now() - started > 15_000) assert.fail(`no URL printed: ${output}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      const url = /App:\s+(http:\/\/\S+)/.exec(output)![1];
      const res = await fetch(`${url}/hello`);
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { hello: 'world' });
      // The warnings go to stderr, the URL to stdout: two pipes, read in either order.
      const warned = Date.now();
      while ((output.match(/W_LINK_SKIPPED/g)?.length ?? 0) < 2 && Date.now() - warned < 5_000) await new Promise((r) => setTimeout(r, 50));
      assert.equal(output.match(/W_LINK_SKIPPED/g)?.length, 2, output);
      assert.doesNotMatch(output, /internal error|ENOENT|ELOOP/);
    } finally {
      child.kill('SIGTERM');
    }
  });
});
