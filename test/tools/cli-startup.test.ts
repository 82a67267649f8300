/**
 * A CLI that starts at once: heavy dependencies load on first use, so `rvm --version` loads no
 * package, and `rvm run` of an app without records or Redis never loads a database or Redis
 * driver; an app with records loads its driver when it starts, before any request. What a process
 * loads is recorded by test/support/loaded-modules.ts.
 */
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadedModulesEnv, loadedOwnModules, loadedPackages } from '../support/loaded-modules.js';
import { RVM_CLI, RVM_START_TIMEOUT_MS, startRvmServer } from '../support/rvm-cluster.js';
import { tempApp, type TestCleanup } from '../support/temp-app.js';

const VERSION = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
/** What `rvm --version` may load of rvm itself: the CLI, its command table and help (7 today). */
const VERSION_OWN_MODULES_AT_MOST = 10;
/** Dependencies only some apps use: none of them loads for an app that does not. */
const ON_FIRST_USE = ['argon2', 'better-sqlite3', 'busboy', 'ioredis', 'oauth4webapi', 'otplib', 'pg', 'qrcode', 're2js', 'undici'];

const records = tempApp({ after });
let recorded = 0;
/** A fresh file for one process to record what it loads into. */
const recordFile = (): string => join(records, `${++recorded}.txt`);

const HELLO = "route GET /hello {\n  response.ok({ message: 'hello' })\n}\n";

/** Serves `files` with `rvm run`, sends GET /hello when asked, stops the server and answers the packages it loaded. */
async function packagesOfRun(t: TestCleanup, files: Record<string, string>, request: boolean): Promise<string[]> {
  const file = recordFile();
  const server = await startRvmServer(tempApp(t, files), { env: { ...loadedModulesEnv(file), REDIS_URL: '', DATABASE_URL: '' } });
  try {
    await server.waitFor(/Store:/, RVM_START_TIMEOUT_MS);
    if (request) assert.equal((await fetch(`${server.url}/hello`)).status, 200);
  } finally {
    await server.stop();
  }
  assert.equal(server.child.exitCode, 0, server.output());
  return loadedPackages(file);
}

describe('rvm: dependencies load on first use', () => {
  test('--version prints the version and loads no package and almost none of rvm', () => {
    const file = recordFile();
    const r = spawnSync(process.execPath, [RVM_CLI, '--version'], { encoding: 'utf8', env: { ...process.env, ...loadedModulesEnv(file) } });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `rvm ${VERSION}\n`);
    assert.deepEqual(loadedPackages(file), []);
    const own = loadedOwnModules(file);
    assert.ok(own > 0 && own <= VERSION_OWN_MODULES_AT_MOST, `${own} modules of rvm loaded`);
  });

  test('run of an app without records or Redis loads no database or Redis driver, nor any other dependency it does not use', async (t) => {
    const loaded = await packagesOfRun(t, { 'hello.rvm': HELLO }, true);
    assert.ok(loaded.includes('moo'), `the recorder saw the packages: ${loaded.join(', ')}`);
    assert.deepEqual(
      ON_FIRST_USE.filter((name) => loaded.includes(name)),
      [],
    );
  });

  test('run of an app with records loads its SQLite driver as it starts, before any request, and no other driver', async (t) => {
    const loaded = await packagesOfRun(t, { 'hello.rvm': HELLO, 'types.rvm': 'type Note {\n  title: text\n}\n' }, false);
    assert.ok(loaded.includes('better-sqlite3'), loaded.join(', '));
    assert.ok(!loaded.includes('pg') && !loaded.includes('ioredis'), loaded.join(', '));
  });
});
