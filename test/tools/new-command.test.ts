/**
 * `rvm new DIR`: the app it writes compiles with no diagnostic, serves its routes, passes its own
 * test with `node --test`, and a folder that is not empty is refused with nothing in it changed.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildApp, loadApp } from '../../tools/host.js';
import { inject } from '../../vm/runtime/http/inject.js';
import { captureLogger } from '../../vm/runtime/log.js';
import { AppExistsError, createApp } from '../../tools/commands/new.js';
import { NEW_APP_VERSION } from '../../tools/new-app-files.js';
import { rvm, rvmProcess } from '../support/rvm-command.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CLI = join(ROOT, 'dist', 'tools', 'cli.js');
const PACKAGE_NAME = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string }).name;
const EXPECTED_FILES = ['.gitignore', 'README.md', '_middleware.rvm', 'hello.rvm', 'rvm.config.json', 'test/app.test.mjs'];

/** Every file under `dir` (relative, `/` separators) with its text: what "unchanged" compares. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (folder: string): void => {
    for (const name of readdirSync(folder).sort()) {
      const path = join(folder, name);
      if (statSync(path).isDirectory()) walk(path);
      else out[relative(dir, path).split('\\').join('/')] = readFileSync(path, 'utf8');
    }
  };
  walk(dir);
  return out;
}

async function withTemp(fn: (tmp: string) => Promise<void> | void): Promise<void> {
  const tmp = mkdtempSync(join(tmpdir(), 'rvm-new-'));
  try {
    await fn(tmp);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

describe('rvm new: the app it writes', () => {
  test('writes every file, named after its folder, at version 0.1.0', () =>
    withTemp((tmp) => {
      const dir = join(tmp, 'notes');
      assert.deepEqual([...createApp(dir)].sort(), EXPECTED_FILES);
      assert.deepEqual(Object.keys(snapshot(dir)).sort(), EXPECTED_FILES);
      assert.deepEqual(JSON.parse(readFileSync(join(dir, 'rvm.config.json'), 'utf8')), { name: 'notes', version: NEW_APP_VERSION });
      const ignored = readFileSync(join(dir, '.gitignore'), 'utf8').split('\n');
      for (const entry of ['.rvm/', '.secrets/', '.env']) assert.ok(ignored.includes(entry), entry);
      // The generated test and README name the runtime's package as package.json does.
      assert.ok(readFileSync(join(dir, 'test', 'app.test.mjs'), 'utf8').includes(`const RUNTIME = ${JSON.stringify(PACKAGE_NAME)};`));
      assert.ok(readFileSync(join(dir, 'README.md'), 'utf8').includes(`npm install -D ${PACKAGE_NAME}`));
    }));

  test('compiles and links with no diagnostic, not even a warning', () =>
    withTemp(async (tmp) => {
      const dir = join(tmp, 'app');
      createApp(dir);
      const build = await buildApp(dir, { cache: false });
      assert.deepEqual(
        build.diagnostics.map((d) => `${d.code} ${d.file}:${d.line} ${d.message}`),
        [],
      );
      assert.ok(build.linked !== null);
      assert.deepEqual(build.linked.routes.map((r) => `${r.meta.method} ${r.meta.path}`).sort(), ['GET /hello', 'POST /hello']);
    }));

  test('serves GET /hello and the validated POST /hello through its middleware', () =>
    withTemp(async (tmp) => {
      const dir = join(tmp, 'app');
      createApp(dir);
      const logger = captureLogger();
      const app = await loadApp(dir, { dev: true, cache: false, logger });
      try {
        const hello = await inject(app, { url: '/hello' });
        assert.equal(hello.status, 200);
        assert.deepEqual(hello.json(), { message: 'Hello, world!' });
        assert.equal(hello.headers['cache-control'], 'no-store', 'set by _middleware.rvm');
        assert.deepEqual(logger.lines.filter((l) => l.includes('/hello')).length, 1, `the request is logged once: ${logger.lines.join(' | ')}`);
        const missing = await inject(app, { url: '/nowhere' });
        assert.equal(missing.status, 404);
        assert.equal(missing.headers['cache-control'], 'no-store', 'a 404 runs the middleware too');
        const greeted = await inject(app, { method: 'POST', url: '/hello', body: { name: 'Ada', admin: true } });
        assert.equal(greeted.status, 200);
        assert.deepEqual(greeted.json(), { message: 'Hello, Ada!' });
        const refused = await inject(app, { method: 'POST', url: '/hello', body: { name: '' } });
        assert.equal(refused.status, 422);
        const body = refused.json() as { code: string; details: { field: string; rule: string }[] };
        assert.equal(body.code, 'validation_failed');
        assert.deepEqual(
          body.details.map((d) => d.field),
          ['name'],
        );
        const reference = (await inject(app, { url: '/_app/rest-api/openapi.json' })).json() as { info: { title: string; version: string } };
        assert.deepEqual(reference.info, { ...reference.info, title: 'app', version: NEW_APP_VERSION });
      } finally {
        await app.close();
      }
    }));

  test('rvm check says ok with no problems; its own test passes with node --test against rvm run', () =>
    withTemp(async (tmp) => {
      // The binary, in the folder that gets the app: the name is printed as given.
      const made = rvmProcess(['new', 'hello-app'], { cwd: tmp });
      assert.equal(made.status, 0, made.stderr);
      assert.match(made.stdout, /^created hello-app: /);
      const dir = join(tmp, 'hello-app');
      const before = snapshot(dir);
      const check = await rvm(['check', dir]);
      assert.equal(check.status, 0, check.stdout);
      assert.equal(check.stdout, 'ok: no problems in 2 files (2 routes)\n');
      // A test runner inside a test runner reports to its parent unless told it is on its own.
      const env: NodeJS.ProcessEnv = { ...process.env, RVM_CLI: CLI, RVM_DEBUG: '' };
      delete env.NODE_TEST_CONTEXT;
      const run = spawnSync(process.execPath, ['--test', '--test-reporter=tap'], { cwd: dir, encoding: 'utf8', env, timeout: 60_000 });
      assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
      assert.match(run.stdout, /# pass 3\b/);
      assert.match(run.stdout, /# fail 0\b/);
      // rvm run leaves the files alone (its .gitignore already ignores the cache it writes).
      const after = snapshot(dir);
      for (const [path, text] of Object.entries(before)) assert.equal(after[path], text, path);
    }));

  test('an empty existing folder is fine', () =>
    withTemp((tmp) => {
      const dir = join(tmp, 'empty');
      mkdirSync(dir);
      assert.equal(createApp(dir).length, EXPECTED_FILES.length);
    }));
});

describe('rvm new: refusal', () => {
  test('a non-empty folder is refused with E_APP_EXISTS and nothing in it changes', () =>
    withTemp((tmp) => {
      const dir = join(tmp, 'taken');
      mkdirSync(dir);
      writeFileSync(join(dir, 'hello.rvm'), 'route GET /mine { response.ok(1) }\n');
      const before = snapshot(dir);
      assert.throws(
        () => createApp(dir),
        (e: unknown) => e instanceof AppExistsError && e.code === 'E_APP_EXISTS' && /not empty/.test(e.message),
      );
      assert.deepEqual(snapshot(dir), before);
    }));

  test('running it twice refuses the second time and keeps every edit (exit 1, one line)', () =>
    withTemp(async (tmp) => {
      const dir = join(tmp, 'app');
      assert.equal((await rvm(['new', dir])).status, 0);
      writeFileSync(join(dir, 'hello.rvm'), 'route GET /edited { response.ok(1) }\n');
      rmSync(join(dir, 'README.md'));
      const before = snapshot(dir);
      const again = await rvm(['new', dir]);
      assert.equal(again.status, 1, again.stderr);
      assert.equal(again.stdout, '');
      assert.ok(again.stderr.startsWith(`rvm: refusing to create an app in ${dir}: `), again.stderr);
      assert.match(again.stderr, /: the folder is not empty \(.*\); nothing was written\n$/);
      assert.deepEqual(snapshot(dir), before, 'no file rewritten, none restored');
    }));

  test('a path that is a file is refused and left as it was', () =>
    withTemp((tmp) => {
      const file = join(tmp, 'app');
      writeFileSync(file, 'mine');
      assert.throws(
        () => createApp(file),
        (e: unknown) => e instanceof AppExistsError && e.code === 'E_APP_EXISTS',
      );
      assert.equal(readFileSync(file, 'utf8'), 'mine');
    }));

  test('DIR is required (usage error, exit 2)', () =>
    withTemp(async (tmp) => {
      const r = await rvm(['new']);
      assert.equal(r.status, 2);
      assert.match(r.stderr, /^rvm: 'rvm new' needs DIR/);
      assert.deepEqual(readdirSync(tmp), []);
    }));
});
