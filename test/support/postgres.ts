/**
 * A real PostgreSQL server per test file (postgres-server.ts): `usePostgres()` starts one before
 * the file's tests and destroys it after them (also when they fail, and at exit).
 */
import { after, before } from 'node:test';
import pg from 'pg';
import { startPostgres, type PostgresServer } from './postgres-server.js';

export { findPostgresBin, startPostgres, type PostgresServer } from './postgres-server.js';

/**
 * Starts a server before this file's tests and destroys it after them; the returned getter
 * gives it to the tests (it throws when asked before `before` ran).
 */
export function usePostgres(): () => PostgresServer {
  let server: PostgresServer | null = null;
  before(async () => {
    server = await startPostgres();
  });
  after(() => {
    server?.destroy();
    server = null;
  });
  return () => {
    if (!server) throw new Error('the PostgreSQL server is not running (usePostgres() starts it in before())');
    return server;
  };
}

/** Makes the empty database `name` (an identifier of the test's own) on `server`; its URL. */
export async function createDatabase(server: PostgresServer, name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(server.url);
  url.pathname = `/${name}`;
  return url.toString();
}
