/**
 * A real Redis server per test file (redis-server.ts): `useRedis()` starts one before the file's
 * tests and destroys it after them (also when they fail, and at exit).
 */
import { after, before } from 'node:test';
import { startRedis, type RedisServer } from './redis-server.js';

export { startRedis, type RedisServer } from './redis-server.js';

/**
 * Starts a server before this file's tests and destroys it after them; the returned getter
 * gives it to the tests (it throws when asked before `before` ran).
 */
export function useRedis(): () => RedisServer {
  let server: RedisServer | null = null;
  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    await server?.destroy();
    server = null;
  });
  return () => {
    if (!server) throw new Error('the Redis server is not running (useRedis() starts it in before())');
    return server;
  };
}
