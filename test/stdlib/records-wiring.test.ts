/**
 * The records plugin wired to a real database: SQLite at `<app>/.rvm/data.sqlite` by default
 * (none opened for an app without types), the start line, schema sync when the app loads
 * (withheld changes stop the start, or a dev reload, with E_SCHEMA_WITHHELD at the type), the
 * store closed with the app, and which database the settings name.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadApp } from '../../tools/host.js';
import { inject } from '../../vm/runtime/http/inject.js';
import { captureLogger } from '../../vm/runtime/log.js';
import { DiagnosticError } from '../../vm/diagnostics.js';
import { loadSettings } from '../../vm/runtime/config.js';
import {
  MAX_PG_POOL_SIZE,
  MIN_PG_POOL_PER_WORKER,
  SQLITE_PATH,
  SQLITE_IN_MEMORY,
  SQLITE_PATH_ENV,
  databaseTarget,
  openStoreCount,
  poolPerWorker,
} from '../../stdlib/records/database.js';
import { PG_CONNECT_TIMEOUT_MS, PG_POOL_SIZE, PG_STATEMENT_TIMEOUT_MS } from '../../stdlib/records/postgres.js';
import { tempApp } from '../support/temp-app.js';

const USER = `type User {
  email: text @email @unique
  age?: int
}
`;
const ROUTES = `route POST /users {
  validate {
    email: text
    age?: int
  }
  response.created(User.create(body))
}
route GET /users/:id {
  u = User.find(params.id)
  if u == null { fail 404 'no such user' }
  response.ok(u)
}
route GET /users {
  response.ok(User.count())
}
`;

const NO_DATABASE = { env: {} };

test('an app with types keeps its records in <app>/.rvm/data.sqlite, across restarts, and says so at start', async (t) => {
  const dir = tempApp(t, { 'user.rvm': USER, 'routes.rvm': ROUTES });
  const logger = captureLogger();
  const app = await loadApp(dir, { cache: false, logger, settings: NO_DATABASE });
  try {
    assert.ok(existsSync(join(dir, '.rvm', 'data.sqlite')), 'the database file exists once the app has started');
    assert.deepEqual(app.announcements, [{ label: 'Database', text: `SQLite ${join(dir, '.rvm', 'data.sqlite')}` }]);
    assert.ok(!logger.lines.some((l) => l.includes('data.sqlite')), `named once, by the start line, not logged again: ${logger.lines.join('\n')}`);
    const created = await inject(app, { method: 'POST', url: '/users', body: { email: 'a@b.co', age: 3 } });
    assert.equal(created.status, 201, created.body);
    const id = created.json().id as string;
    await app.close();
    const again = await loadApp(dir, { cache: false, logger: captureLogger(), settings: NO_DATABASE });
    try {
      const found = await inject(again, { url: `/users/${id}` });
      assert.equal(found.status, 200);
      assert.equal(found.json().email, 'a@b.co');
    } finally {
      await again.close();
    }
  } finally {
    await app.close();
  }
  assert.equal(openStoreCount(), 0, 'closing the app closes its store');
});

test('an app without types opens no database', async (t) => {
  const dir = tempApp(t, { 'hello.rvm': "route GET /hi {\n  response.ok('hi')\n}\n" });
  const logger = captureLogger();
  const app = await loadApp(dir, { cache: false, logger, settings: NO_DATABASE });
  try {
    assert.equal((await inject(app, { url: '/hi' })).status, 200);
    assert.equal(existsSync(join(dir, '.rvm', 'data.sqlite')), false);
    assert.equal(openStoreCount(), 0);
    assert.ok(!logger.lines.some((l) => l.includes('records:')));
  } finally {
    await app.close();
  }
});

test('the schema is synced when the app loads, not at the first request', async (t) => {
  const dir = tempApp(t, { 'user.rvm': USER, 'routes.rvm': ROUTES });
  const app = await loadApp(dir, { cache: false, logger: captureLogger(), settings: NO_DATABASE });
  try {
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(join(dir, '.rvm', 'data.sqlite'), { readonly: true });
    try {
      const columns = (db.prepare('SELECT name FROM pragma_table_info(?)').all('User') as { name: string }[]).map((c) => c.name);
      assert.deepEqual(columns, ['id', 'email', 'age', 'created_at', 'updated_at']);
    } finally {
      db.close();
    }
  } finally {
    await app.close();
  }
});

/** Stores one User with an age, so changing that field's type is withheld. */
async function seedUser(dir: string): Promise<void> {
  const app = await loadApp(dir, { cache: false, logger: captureLogger(), settings: NO_DATABASE });
  try {
    assert.equal((await inject(app, { method: 'POST', url: '/users', body: { email: 'a@b.co', age: 3 } })).status, 201);
  } finally {
    await app.close();
  }
}

test('a withheld change stops the start with E_SCHEMA_WITHHELD at the type, saying what changed and what to run', async (t) => {
  const dir = tempApp(t, { 'user.rvm': USER, 'routes.rvm': ROUTES });
  await seedUser(dir);
  writeFileSync(join(dir, 'user.rvm'), `\n${USER.replace('age?: int', 'age?: text')}`);
  await assert.rejects(loadApp(dir, { cache: false, logger: captureLogger(), settings: NO_DATABASE }), (e: unknown) => {
    assert.ok(e instanceof DiagnosticError);
    assert.equal(e.diagnostics.length, 1);
    const d = e.diagnostics[0]!;
    assert.equal(d.code, 'E_SCHEMA_WITHHELD');
    assert.deepEqual([d.file, d.line, d.col], ['user.rvm', 2, 1]);
    assert.match(d.message, /field 'age' changed from int to text/);
    assert.match(d.hint ?? '', /rvm db diff.*rvm db apply --allow-destructive/);
    assert.equal(d.sourceLine, 'type User {');
    return true;
  });
  assert.equal(openStoreCount(), 0, 'a start refused releases the store');
});

test('in dev, a withheld change is a reload error and the previous version keeps serving', async (t) => {
  const dir = tempApp(t, { 'user.rvm': USER, 'routes.rvm': ROUTES });
  await seedUser(dir);
  const app = await loadApp(dir, { cache: false, dev: true, logger: captureLogger(), settings: NO_DATABASE });
  try {
    writeFileSync(join(dir, 'user.rvm'), USER.replace('age?: int', 'age?: text'));
    assert.equal(await app.reload(), false);
    assert.deepEqual(
      app.lastErrors.map((d) => [d.code, d.file, d.line]),
      [['E_SCHEMA_WITHHELD', 'user.rvm', 1]],
    );
    const count = await inject(app, { url: '/users' });
    assert.equal(count.status, 200);
    assert.equal(count.json(), 1);
    writeFileSync(join(dir, 'user.rvm'), USER.replace('age?: int', 'age?: int\n  nick?: text'));
    assert.equal(await app.reload(), true, 'an additive change reloads');
    assert.equal((await inject(app, { method: 'POST', url: '/users', body: { email: 'n@b.co', nick: 'n' } })).status, 201);
  } finally {
    await app.close();
  }
  assert.equal(openStoreCount(), 0, 'reloads share one store, closed with the app');
});

/** The settings of an app in `dir` with `config` and `env`. */
function settingsOf(t: { after(fn: () => void): void }, config: unknown, env: Record<string, string>, workers = 1) {
  const dir = tempApp(t, { 'rvm.config.json': JSON.stringify(config) });
  return { dir, settings: loadSettings(dir, { env, workers }) };
}

test('DATABASE_URL (the environment first, then database.url) chooses PostgreSQL; the start line never shows the password', (t) => {
  const fromEnv = databaseTarget(
    settingsOf(t, { database: { url: 'postgres://x@elsewhere/other' } }, { DATABASE_URL: 'postgres://app:s3cret@db.example:5433/shop' }).settings,
  );
  assert.deepEqual(fromEnv, {
    kind: 'postgres',
    url: 'postgres://app:s3cret@db.example:5433/shop',
    pool: PG_POOL_SIZE,
    connectTimeoutMs: PG_CONNECT_TIMEOUT_MS,
    statementTimeoutMs: PG_STATEMENT_TIMEOUT_MS,
    shown: 'postgres db.example:5433/shop',
    line: `PostgreSQL db.example:5433/shop, pool ${PG_POOL_SIZE}`,
  });
  const fromConfig = databaseTarget(settingsOf(t, { database: { url: 'postgres://u:pw@h/d', pool: 3 } }, {}).settings);
  assert.equal(fromConfig.kind, 'postgres');
  assert.equal(fromConfig.shown, 'postgres h/d');
  assert.equal((fromConfig as { pool: number }).pool, 3);
  const { dir, settings } = settingsOf(t, {}, {});
  const sqlite = databaseTarget(settings);
  assert.equal(sqlite.kind, 'sqlite');
  assert.equal((sqlite as { path: string }).path, join(dir, '.rvm', 'data.sqlite'));
});

test(`SQLITE_PATH=${SQLITE_IN_MEMORY} keeps the records in memory and writes no file; refused under workers`, async (t) => {
  const target = databaseTarget(settingsOf(t, {}, { SQLITE_PATH: SQLITE_IN_MEMORY }).settings);
  assert.deepEqual(target, { kind: 'sqlite', path: SQLITE_IN_MEMORY, shown: 'sqlite :memory:', line: 'SQLite in memory (gone when the process ends)' });
  assert.deepEqual(databaseTarget(settingsOf(t, { database: { sqlite: SQLITE_IN_MEMORY } }, {}).settings), target);
  assert.throws(() => databaseTarget(settingsOf(t, {}, { SQLITE_PATH: SQLITE_IN_MEMORY }, 2).settings), /:memory: cannot be shared by 2 workers/);
  const dir = tempApp(t, { 'user.rvm': USER, 'routes.rvm': ROUTES });
  const app = await loadApp(dir, { cache: false, logger: captureLogger(), settings: { env: { SQLITE_PATH: SQLITE_IN_MEMORY } } });
  try {
    assert.deepEqual(app.announcements, [{ label: 'Database', text: 'SQLite in memory (gone when the process ends)' }]);
    const created = await inject(app, { method: 'POST', url: '/users', body: { email: 'a@example.com', age: 3 } });
    assert.equal(created.status, 201, created.body);
    const found = await inject(app, { url: `/users/${created.json().id}` });
    assert.equal(found.json().email, 'a@example.com');
  } finally {
    await app.close();
  }
  assert.equal(existsSync(join(dir, '.rvm', 'data.sqlite')), false, 'no file was written');
});

test(`database.pool is what one machine opens: under N workers each gets an even share rounded down, at least MIN_PG_POOL_PER_WORKER (${MIN_PG_POOL_PER_WORKER})`, (t) => {
  assert.equal(poolPerWorker(10, 1), 10);
  assert.equal(poolPerWorker(10, 2), 5);
  assert.equal(poolPerWorker(10, 3), 3, 'rounded down: 9 in all, not 12');
  assert.equal(poolPerWorker(10, 8), MIN_PG_POOL_PER_WORKER, 'the floor: a transaction holds one connection, requests beside it need another');
  for (let pool = 1; pool <= 40; pool++) {
    for (let workers = 1; workers <= 16; workers++) {
      const each = poolPerWorker(pool, workers);
      assert.ok(each * workers <= Math.max(pool, MIN_PG_POOL_PER_WORKER * workers), `${pool} over ${workers}: ${each} each`);
    }
  }
  const url = 'postgres://app:s3cret@db.example:5433/shop';
  const four = databaseTarget(settingsOf(t, { database: { pool: 20 } }, { DATABASE_URL: url }, 4).settings);
  assert.equal((four as { pool: number }).pool, 5);
  assert.equal(four.line, 'PostgreSQL db.example:5433/shop, pool 5 per worker (20 in all)');
  const over = databaseTarget(settingsOf(t, { database: { pool: 4 } }, { DATABASE_URL: url }, 4).settings);
  assert.equal(over.line, 'PostgreSQL db.example:5433/shop, pool 2 per worker (8 in all: database.pool 4 is below 2 per worker)');
  assert.doesNotMatch(four.line + over.line, /s3cret|app@/);
  const { settings } = settingsOf(t, {}, {}, 3);
  assert.match(databaseTarget(settings).line, /^SQLite .*data\.sqlite, shared by the 3 workers$/);
});

test(`database.pool is 1 to MAX_PG_POOL_SIZE (${MAX_PG_POOL_SIZE}) per process`, (t) => {
  assert.equal(
    (databaseTarget(settingsOf(t, { database: { pool: MAX_PG_POOL_SIZE } }, { DATABASE_URL: 'postgres://h/d' }).settings) as { pool: number }).pool,
    MAX_PG_POOL_SIZE,
  );
  for (const pool of [MAX_PG_POOL_SIZE + 1, 0, 2.5, '4']) {
    assert.throws(() => databaseTarget(settingsOf(t, { database: { pool } }, {}).settings), /database\.pool/);
  }
  assert.throws(() => databaseTarget(settingsOf(t, { database: 'postgres://h/d' }, {}).settings), /"database" must be an object/);
});

test('database.connectTimeoutMs and database.statementTimeoutMs replace the defaults; each is a whole number of milliseconds above 0', (t) => {
  const target = databaseTarget(settingsOf(t, { database: { connectTimeoutMs: 700, statementTimeoutMs: 300 } }, { DATABASE_URL: 'postgres://h/d' }).settings);
  assert.deepEqual([(target as { connectTimeoutMs: number }).connectTimeoutMs, (target as { statementTimeoutMs: number }).statementTimeoutMs], [700, 300]);
  for (const key of ['connectTimeoutMs', 'statementTimeoutMs']) {
    for (const value of [0, -5, 2.5, '300']) {
      assert.throws(
        () => databaseTarget(settingsOf(t, { database: { [key]: value } }, { DATABASE_URL: 'postgres://h/d' }).settings),
        new RegExp(`"database\\.${key}" must be a whole number of milliseconds above 0`),
      );
    }
  }
});

test('a malformed database config stops the start as E_PLUGIN_SETUP of records', async (t) => {
  const dir = tempApp(t, { 'user.rvm': USER, 'rvm.config.json': JSON.stringify({ database: { pool: 0 } }) });
  await assert.rejects(loadApp(dir, { cache: false, logger: captureLogger(), settings: NO_DATABASE }), (e: unknown) => {
    assert.equal((e as { code?: string }).code, 'E_PLUGIN_SETUP');
    assert.match((e as Error).message, /records.*database\.pool/);
    return true;
  });
});

test(`the SQLite file's path: ${SQLITE_PATH_ENV} first, then database.sqlite, else .rvm/data.sqlite; a relative one is under the app folder`, (t) => {
  const elsewhere = join(tmpdir(), 'rvm-elsewhere', 'app.db');
  const fromEnv = databaseTarget(settingsOf(t, { database: { sqlite: 'from-config.db' } }, { [SQLITE_PATH_ENV]: elsewhere }).settings);
  assert.equal((fromEnv as { path: string }).path, elsewhere, 'the environment wins over the file, as DATABASE_URL over database.url');
  const relative = settingsOf(t, { database: { sqlite: 'data/app.db' } }, {});
  assert.equal((databaseTarget(relative.settings) as { path: string }).path, join(relative.dir, 'data', 'app.db'));
  const relativeEnv = settingsOf(t, {}, { [SQLITE_PATH_ENV]: 'var/env.db' });
  assert.equal((databaseTarget(relativeEnv.settings) as { path: string }).path, join(relativeEnv.dir, 'var', 'env.db'));
  const empty = settingsOf(t, {}, { [SQLITE_PATH_ENV]: '' });
  assert.equal((databaseTarget(empty.settings) as { path: string }).path, join(empty.dir, SQLITE_PATH), 'an empty variable is unset');
  for (const sqlite of ['', 3, null]) {
    assert.throws(() => databaseTarget(settingsOf(t, { database: { sqlite } }, {}).settings), /"database\.sqlite" must be the path of a file/);
  }
  assert.equal(
    databaseTarget(settingsOf(t, { database: { sqlite: 'x.db' } }, { DATABASE_URL: 'postgres://h/d' }).settings).kind,
    'postgres',
    'DATABASE_URL still chooses PostgreSQL',
  );
});

test(`an app keeps its records in the file database.sqlite or ${SQLITE_PATH_ENV} names, and nothing in .rvm/data.sqlite`, async (t) => {
  const elsewhere = tempApp(t);
  const dir = tempApp(t, { 'user.rvm': USER, 'routes.rvm': ROUTES, 'rvm.config.json': JSON.stringify({ database: { sqlite: 'data/app.db' } }) });
  for (const [env, file] of [
    [{}, join(dir, 'data', 'app.db')],
    [{ [SQLITE_PATH_ENV]: join(elsewhere, 'env.db') }, join(elsewhere, 'env.db')],
  ] as const) {
    const app = await loadApp(dir, { cache: false, logger: captureLogger(), settings: { env } });
    try {
      assert.deepEqual(app.announcements, [{ label: 'Database', text: `SQLite ${file}` }]);
      assert.equal((await inject(app, { method: 'POST', url: '/users', body: { email: 'a@b.co' } })).status, 201);
    } finally {
      await app.close();
    }
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(file, { readonly: true });
    try {
      assert.deepEqual(db.prepare('SELECT email FROM "User"').all(), [{ email: 'a@b.co' }]);
    } finally {
      db.close();
    }
  }
  assert.equal(existsSync(join(dir, SQLITE_PATH)), false);
});
