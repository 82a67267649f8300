/**
 * A real PostgreSQL server per test file (postgres-server.ts): `usePostgres()` starts one before
 * the file's tests and destroys it after them (also when they fail, and at exit).
 */
import { after, before } from 'node:test';
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
