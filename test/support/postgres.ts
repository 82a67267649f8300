/**
 * PostgreSQL for test files. `usePostgres()` gives a file a fresh database of its own: on the
 * run's one server when tools/run-tests.mjs started it (RUN_POSTGRES_ENV), else on a server the
 * file starts for itself (a file run alone with `node --test`); the file's databases are dropped
 * after its tests. `useOwnPostgres()` gives a file a whole server of its own, for the tests that
 * stop, restart or freeze it.
 */
import { after, before } from 'node:test';
import pg from 'pg';
import { RUN_POSTGRES_ENV, startPostgres, type PostgresServer } from './postgres-server.js';

export { findPostgresBin, startPostgres, type PostgresServer } from './postgres-server.js';

/** A database of a test file's own, on a server it shares with other files (or not). */
export interface PostgresDatabase {
  /** `postgres://postgres@127.0.0.1:<port>/<name>`. */
  readonly url: string;
  readonly port: number;
  readonly name: string;
  /** Makes another empty database on the same server, named `<name>_<suffix>`, dropped with this one; its URL. */
  createDatabase(suffix: string): Promise<string>;
}

/** Runs `sql` on the `postgres` database of the server at `url`. */
async function adminQuery(url: string, sql: string): Promise<void> {
  const admin = new pg.Client({ connectionString: withDatabase(url, 'postgres') });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

/** `url` with its database set to `name`. */
function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

let files = 0;

/**
 * Makes this file's database before its tests (and its server, when the run has none) and drops
 * it after them; the returned getter gives it to the tests (it throws when asked before `before` ran).
 */
export function usePostgres(): () => PostgresDatabase {
  // Unique among the files running at once on the run's server: their process ids differ.
  const name = `rvm_test_${process.pid}_${++files}`;
  let own: PostgresServer | null = null;
  let database: PostgresDatabase | null = null;
  const made: string[] = [];
  before(async () => {
    const runUrl = process.env[RUN_POSTGRES_ENV];
    if (!runUrl) own = await startPostgres();
    const serverUrl = runUrl || own!.url;
    const create = async (db: string): Promise<string> => {
      await adminQuery(serverUrl, `CREATE DATABASE ${db}`);
      made.push(db);
      return withDatabase(serverUrl, db);
    };
    database = { url: await create(name), port: Number(new URL(serverUrl).port), name, createDatabase: (suffix) => create(`${name}_${suffix}`) };
  });
  after(async () => {
    database = null;
    if (own) {
      own.destroy();
      own = null;
      return;
    }
    // FORCE: a connection a failed test left open must not keep its database.
    const runUrl = process.env[RUN_POSTGRES_ENV]!;
    for (const db of made.splice(0)) await adminQuery(runUrl, `DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
  });
  return () => {
    if (!database) throw new Error("this file's PostgreSQL database is not ready (usePostgres() makes it in before())");
    return database;
  };
}

/**
 * Starts a server of this file's own before its tests and destroys it after them (also when they
 * fail, and at exit): for tests that stop, restart or freeze the server, which would break
 * every other file on a shared one.
 */
export function useOwnPostgres(): () => PostgresServer {
  let server: PostgresServer | null = null;
  before(async () => {
    server = await startPostgres();
  });
  after(() => {
    server?.destroy();
    server = null;
  });
  return () => {
    if (!server) throw new Error('the PostgreSQL server is not running (useOwnPostgres() starts it in before())');
    return server;
  };
}
