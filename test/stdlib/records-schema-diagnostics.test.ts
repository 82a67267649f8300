/**
 * Schema changes the database cannot take stop with a diagnostic naming the problem, never an
 * internal error (spec/plugins/records.md, "Schema at start"): `@unique` added over values that repeat, and a type renamed only in
 * letter case (`type user` → `type User`: one table to SQLite, two to PostgreSQL). Both at start
 * (E_SCHEMA_WITHHELD at the type) and in `rvm db diff`, on SQLite and on a real PostgreSQL;
 * `rvm db apply --allow-destructive` does not force them either, and the rows are kept.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadApp } from '../../tools/host.js';
import { inject } from '../../vm/runtime/http/inject.js';
import { captureLogger } from '../../vm/runtime/log.js';
import { DiagnosticError } from '../../vm/diagnostics.js';
import { rvm, type RvmResult } from '../support/rvm-command.js';
import { usePostgres } from '../support/postgres.js';
import { tempApp, type TestCleanup } from '../support/temp-app.js';

const server = usePostgres();
let databases = 0;

/** Where an app's records live: its own SQLite file, or a fresh PostgreSQL database. */
type Backend = { name: string; env(): Promise<Record<string, string>> };

const BACKENDS: Backend[] = [
  { name: 'SQLite', env: async () => ({}) },
  {
    name: 'PostgreSQL',
    async env() {
      return { DATABASE_URL: await server().createDatabase(`schema_diag_${++databases}`) };
    },
  },
];

const ROUTES = `
route POST /people {
  validate {
    email: text
  }
  response.created(TYPE.create(body))
}
route GET /people/count {
  response.ok(TYPE.count())
}
`;

/** An app folder with one type (`decl`, named `type`) and routes on it. */
function appDir(t: TestCleanup, type: string, decl: string): string {
  return tempApp(t, { 'people.rvm': decl, 'routes.rvm': ROUTES.replaceAll('TYPE', type) });
}

/** `rvm db ACTION DIR` (in this process) against the database of `env` (SQLite without DATABASE_URL). */
function db(env: Record<string, string>, ...args: string[]): Promise<RvmResult> {
  return rvm(['db', ...args], { DATABASE_URL: undefined, ...env });
}

/** Starts the app in `dir`, adds `people`, and closes it. */
async function seed(dir: string, env: Record<string, string>, people: Record<string, unknown>[]): Promise<void> {
  const app = await loadApp(dir, { cache: false, logger: captureLogger(), settings: { env } });
  try {
    for (const body of people) assert.equal((await inject(app, { method: 'POST', url: '/people', body })).status, 201);
  } finally {
    await app.close();
  }
}

/** Asserts the start of `dir` fails with one E_SCHEMA_WITHHELD at people.rvm:1:1 whose message matches `message` and hint `hint`. */
async function assertStartStops(dir: string, env: Record<string, string>, message: RegExp, hint: RegExp): Promise<void> {
  await assert.rejects(loadApp(dir, { cache: false, logger: captureLogger(), settings: { env } }), (e: unknown) => {
    assert.ok(e instanceof DiagnosticError, String(e));
    assert.deepEqual(
      e.diagnostics.map((d) => [d.code, d.file, d.line, d.col]),
      [['E_SCHEMA_WITHHELD', 'people.rvm', 1, 1]],
    );
    assert.match(e.diagnostics[0]!.message, message);
    assert.match(e.diagnostics[0]!.hint ?? '', hint);
    return true;
  });
}

for (const backend of BACKENDS) {
  test(`${backend.name}: @unique added over repeated values stops the start and db diff with a diagnostic naming the field, apply --allow-destructive too; without it again, every row is there`, {
    timeout: 60_000,
  }, async (t) => {
    const env = await backend.env();
    const dir = appDir(t, 'Person', 'type Person {\n  email: text\n  nick?: text\n}\n');
    await seed(dir, env, [{ email: 'a@example.com' }, { email: 'a@example.com' }, { email: 'b@example.com' }]);
    writeFileSync(join(dir, 'people.rvm'), 'type Person {\n  email: text @unique\n  nick?: text @unique\n}\n');

    const problem = /field 'email' is @unique, but values of it repeat in Person \(its unique index cannot be made\)/;
    await assertStartStops(
      dir,
      env,
      problem,
      /make the email values of Person distinct, or remove @unique; the repeated ones: SELECT "email", count\(\*\) FROM "Person"/,
    );
    const diff = await db(env, 'diff', dir);
    assert.equal(diff.status, 0, diff.stderr);
    assert.match(
      diff.stdout,
      new RegExp(`^ {2}people\\.rvm:1:1 Person: ${problem.source}.*\\(not applied by --allow-destructive either: make the email values`, 'm'),
    );
    assert.doesNotMatch(diff.stdout, /nick/, 'nulls never repeat: the index on nick is made');
    const forced = await db(env, 'apply', dir, '--allow-destructive');
    assert.equal(forced.status, 1, `${forced.stdout}${forced.stderr}`);
    assert.doesNotMatch(forced.stderr, /internal/i);
    assert.match(forced.stdout, problem);

    // Nothing was dropped or half made on the way.
    writeFileSync(join(dir, 'people.rvm'), 'type Person {\n  email: text\n  nick?: text\n}\n');
    const app = await loadApp(dir, { cache: false, logger: captureLogger(), settings: { env } });
    try {
      assert.equal((await inject(app, { url: '/people/count' })).json(), 3, 'no row was lost');
    } finally {
      await app.close();
    }
  });

  test(`${backend.name}: a type renamed only in letter case (user → User) stops the start and db diff naming the table; renamed back, its rows are there`, {
    timeout: 60_000,
  }, async (t) => {
    const env = await backend.env();
    const dir = appDir(t, 'user', 'type user {\n  email: text\n}\n');
    await seed(dir, env, [{ email: 'a@example.com' }]);
    writeFileSync(join(dir, 'people.rvm'), 'type User {\n  email: text\n}\n');
    writeFileSync(join(dir, 'routes.rvm'), ROUTES.replaceAll('TYPE', 'User'));

    const problem = /the database holds a table 'user', named like type User but for letter case/;
    await assertStartStops(dir, env, problem, /name the type user again, or rename the table in the database to User yourself/);
    const diff = await db(env, 'diff', dir);
    assert.equal(diff.status, 0, diff.stderr);
    assert.match(diff.stdout, new RegExp(`^ {2}people\\.rvm:1:1 User: ${problem.source}`, 'm'));
    assert.doesNotMatch(diff.stdout, /create table User/, 'no second, empty table is planned');

    writeFileSync(join(dir, 'people.rvm'), 'type user {\n  email: text\n}\n');
    writeFileSync(join(dir, 'routes.rvm'), ROUTES.replaceAll('TYPE', 'user'));
    const app = await loadApp(dir, { cache: false, logger: captureLogger(), settings: { env } });
    try {
      assert.equal((await inject(app, { url: '/people/count' })).json(), 1);
    } finally {
      await app.close();
    }
  });
}
