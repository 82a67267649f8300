/**
 * `rvm db diff` and `rvm db apply`: the schema plan of an app's records against its SQLite file,
 * withheld changes listed with their type's place and SQL, applied only with
 * `--allow-destructive`; after which the app starts again.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadApp } from '../../tools/host.js';
import { inject } from '../../vm/runtime/http/inject.js';
import { captureLogger } from '../../vm/runtime/log.js';
import { rvm, type RvmResult } from '../support/rvm-command.js';
import { tempApp } from '../support/temp-app.js';

const USER = 'type User {\n  email: text @unique\n  age?: int\n}\n';
const ROUTES =
  'route POST /users {\n  validate {\n    email: text\n    age?: int\n  }\n  response.created(User.create(body))\n}\nroute GET /users {\n  response.ok(User.count())\n}\n';

/** Runs `rvm db ...args` without DATABASE_URL (the app's SQLite file). */
function db(...args: string[]): Promise<RvmResult> {
  return rvm(['db', ...args], { DATABASE_URL: undefined });
}

/** The app whose records the tests plan: User and its routes. */
const USER_APP = { 'user.rvm': USER, 'routes.rvm': ROUTES };

const NO_DATABASE = { env: {} };

test('rvm db diff with no SQLite file yet plans every table against an empty schema and creates no file', async (t) => {
  const dir = tempApp(t, USER_APP);
  const r = await db('diff', dir);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^database: sqlite .*data\.sqlite \(no database yet: every table would be created\)$/m);
  assert.match(r.stdout, /^would apply:\n {2}create table User$/m);
  assert.doesNotMatch(r.stdout, /withheld/);
  assert.equal(existsSync(join(dir, '.rvm', 'data.sqlite')), false, 'a read-only command made the database file');
  assert.equal(existsSync(join(dir, '.rvm')), false, 'a read-only command made the .rvm folder');
  assert.match((await db('diff', dir)).stdout, /^ {2}create table User$/m, 'a second diff plans the same');
});

test('rvm db diff on an existing SQLite file plans against it and changes nothing', async (t) => {
  const dir = tempApp(t, USER_APP);
  const app = await loadApp(dir, { cache: false, logger: captureLogger(), settings: NO_DATABASE });
  await app.close();
  writeFileSync(join(dir, 'user.rvm'), USER.replace('age?: int', 'age?: int\n  nick?: text'));
  const r = await db('diff', dir);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^database: sqlite .*data\.sqlite$/m);
  assert.match(r.stdout, /^would apply:\n {2}.*nick.*$/m);
  assert.doesNotMatch(r.stdout, /create table User/);
  assert.match((await db('diff', dir)).stdout, /^would apply:\n {2}.*nick.*$/m, 'a second diff plans the same: the first added no column');
});

test('rvm db diff lists a withheld change at its type with its SQL; apply without the flag withholds it (exit 1), with it applies it', async (t) => {
  const dir = tempApp(t, USER_APP);
  const app = await loadApp(dir, { cache: false, logger: captureLogger(), settings: NO_DATABASE });
  try {
    assert.equal((await inject(app, { method: 'POST', url: '/users', body: { email: 'a', age: 1 } })).status, 201);
  } finally {
    await app.close();
  }
  writeFileSync(join(dir, 'user.rvm'), USER.replace('age?: int', 'age?: text'));

  const diff = await db('diff', dir);
  assert.equal(diff.status, 0, diff.stderr);
  assert.match(diff.stdout, /^would apply: nothing$/m);
  assert.match(
    diff.stdout,
    /^withheld \(rvm db apply --allow-destructive applies them\):\n {2}user\.rvm:1:1 User: field 'age' changed from int to text .*\(destructive\)$/m,
  );
  assert.match(diff.stdout, /^ {4}ALTER TABLE "User" DROP COLUMN "age";$/m);

  const withheld = await db('apply', dir);
  assert.equal(withheld.status, 1);
  assert.match(withheld.stdout, /field 'age' changed from int to text/);
  await assert.rejects(loadApp(dir, { cache: false, logger: captureLogger(), settings: NO_DATABASE }), /E_SCHEMA_WITHHELD|does not match/);

  const applied = await db('apply', dir, '--allow-destructive');
  assert.equal(applied.status, 0, applied.stderr);
  assert.match(applied.stdout, /^applied:\n {2}field 'age' changed from int to text/m);
  assert.doesNotMatch(applied.stdout, /withheld/);

  const again = await loadApp(dir, { cache: false, logger: captureLogger(), settings: NO_DATABASE });
  try {
    const count = await inject(again, { url: '/users' });
    assert.equal(count.json(), 1, 'the row stays; only its age column was dropped');
  } finally {
    await again.close();
  }
});

test('rvm db refuses an unknown action and --allow-destructive with diff (exit 2); an app without types has no database', async (t) => {
  const dir = tempApp(t, USER_APP);
  assert.equal((await db('drop', dir)).status, 2);
  assert.equal((await db('diff', dir, '--allow-destructive')).status, 2);
  const plain = tempApp(t, { 'a.rvm': 'route GET /a {\n  response.ok(1)\n}\n' });
  const r = await db('diff', plain);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /no record types/);
  assert.equal(existsSync(join(plain, '.rvm', 'data.sqlite')), false);
});
