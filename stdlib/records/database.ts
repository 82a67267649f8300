/**
 * Which database an app's records live in, and its one open store per process: SQLite at
 * `<app>/.rvm/data.sqlite` by default (elsewhere with `SQLITE_PATH`, else `rvm.config.json`
 * `database.sqlite`), PostgreSQL when `DATABASE_URL` is set (the environment, else
 * `rvm.config.json` `database.url`), with the timeouts `database.connectTimeoutMs` and
 * `database.statementTimeoutMs` (PG_CONNECT_TIMEOUT_MS, PG_STATEMENT_TIMEOUT_MS by default). A dev reload links a new version of the app while the
 * previous one may still be answering, so both share the store: it closes with its last user.
 */
import { isAbsolute, join, relative } from 'node:path';
import type { AppSettings } from '../../plugins/sdk.js';
import { PG_CONNECT_TIMEOUT_MS, PG_POOL_SIZE, PG_STATEMENT_TIMEOUT_MS, PostgresStore } from './postgres.js';
import { SqliteStore } from './sqlite.js';
import type { RecordStore } from './store.js';

/** The largest `database.pool`: PostgreSQL's default allows 100 connections in all, for every process. */
export const MAX_PG_POOL_SIZE = 100;

/**
 * The fewest connections a worker's pool gets, whatever `database.pool / workers` comes to: a
 * `transaction { }` block holds one connection across its awaits, and with a pool of one every
 * other request of that worker would wait behind it.
 */
export const MIN_PG_POOL_PER_WORKER = 2;

/**
 * The pool of each of `workers` processes sharing `pool` connections (`database.pool`, what one
 * machine opens in all): an even share, rounded down so the total stays within `pool`, and
 * never under MIN_PG_POOL_PER_WORKER (then the total is `workers` × that floor, and the
 * announce line says so). One process keeps the whole pool.
 */
export function poolPerWorker(pool: number, workers: number): number {
  return workers <= 1 ? pool : Math.max(MIN_PG_POOL_PER_WORKER, Math.floor(pool / workers));
}

/** Where the SQLite file lives by default, relative to the app folder. */
export const SQLITE_PATH = join('.rvm', 'data.sqlite');
/** SQLite's name for a database held in memory: nothing is written, and it ends with the process (tests, throwaway runs). */
export const SQLITE_IN_MEMORY = ':memory:';

/** The environment variable that puts the SQLite file elsewhere (over `database.sqlite`, as `DATABASE_URL` over `database.url`). */
export const SQLITE_PATH_ENV = 'SQLITE_PATH';

/**
 * The database of an app: `shown` names it in logs and `rvm db`, `line` is what `rvm run`
 * prints after `Database:` (neither ever holds a password); `pool` is this process's.
 */
export type DatabaseTarget =
  | { kind: 'sqlite'; path: string; shown: string; line: string }
  | { kind: 'postgres'; url: string; pool: number; connectTimeoutMs: number; statementTimeoutMs: number; shown: string; line: string };

/** `host/db` of a PostgreSQL URL; `postgres` alone when it is not a URL (a key=value string). */
function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}${u.port ? `:${u.port}` : ''}/${decodeURIComponent(u.pathname.slice(1))}`;
  } catch {
    return 'postgres';
  }
}

/** `database.<key>`, a whole number of milliseconds above 0, else `fallback` when absent. */
function milliseconds(section: Record<string, unknown>, key: string, fallback: number): number {
  const value = section[key] ?? fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1)
    throw new Error(`rvm.config.json: "database.${key}" must be a whole number of milliseconds above 0`);
  return value;
}

/** The database `settings` name: see the header. A malformed `database` config throws. */
export function databaseTarget(settings: AppSettings): DatabaseTarget {
  const config = settings.config.database;
  if (config !== undefined && (config === null || typeof config !== 'object' || Array.isArray(config))) {
    throw new Error('rvm.config.json: "database" must be an object ({"url": …, "pool": …, "sqlite": …})');
  }
  const section = (config ?? {}) as Record<string, unknown>;
  if (section.url !== undefined && typeof section.url !== 'string') throw new Error('rvm.config.json: "database.url" must be text');
  if (section.sqlite !== undefined && (typeof section.sqlite !== 'string' || section.sqlite === ''))
    throw new Error('rvm.config.json: "database.sqlite" must be the path of a file');
  const pool = section.pool ?? PG_POOL_SIZE;
  if (typeof pool !== 'number' || !Number.isInteger(pool) || pool < 1 || pool > MAX_PG_POOL_SIZE) {
    throw new Error(`rvm.config.json: "database.pool" must be an integer from 1 to ${MAX_PG_POOL_SIZE}`);
  }
  const connectTimeoutMs = milliseconds(section, 'connectTimeoutMs', PG_CONNECT_TIMEOUT_MS);
  const statementTimeoutMs = milliseconds(section, 'statementTimeoutMs', PG_STATEMENT_TIMEOUT_MS);
  const url = settings.secrets.env('DATABASE_URL') || (section.url as string | undefined);
  const workers = settings.workers;
  if (url) {
    const mine = poolPerWorker(pool, workers);
    return {
      kind: 'postgres',
      url,
      pool: mine,
      connectTimeoutMs,
      statementTimeoutMs,
      shown: `postgres ${shownUrl(url)}`,
      line: `PostgreSQL ${shownUrl(url)}, ${poolText(pool, mine, workers)}`,
    };
  }
  // Relative to the app folder, as the default is (a bundle's: the working directory).
  const dir = settings.dir ?? process.cwd();
  const chosen = settings.secrets.env(SQLITE_PATH_ENV) || (section.sqlite as string | undefined) || SQLITE_PATH;
  if (chosen === SQLITE_IN_MEMORY) {
    // One connection's own database: workers would each have another, so none may share it.
    if (workers > 1) throw new Error(`${SQLITE_IN_MEMORY} cannot be shared by ${workers} workers: give SQLITE_PATH a file`);
    return { kind: 'sqlite', path: SQLITE_IN_MEMORY, shown: `sqlite ${SQLITE_IN_MEMORY}`, line: 'SQLite in memory (gone when the process ends)' };
  }
  const path = isAbsolute(chosen) ? chosen : join(dir, chosen);
  const rel = relative(process.cwd(), path);
  const file = rel === '' || rel.startsWith('..') || isAbsolute(rel) ? path : rel;
  return { kind: 'sqlite', path, shown: `sqlite ${file}`, line: workers > 1 ? `SQLite ${file}, shared by the ${workers} workers` : `SQLite ${file}` };
}

/** How the announce line states the pool: per worker under workers, with the total when the floor lifts it above `database.pool`. */
function poolText(pool: number, mine: number, workers: number): string {
  if (workers <= 1) return `pool ${pool}`;
  const total = mine * workers;
  return total > pool
    ? `pool ${mine} per worker (${total} in all: database.pool ${pool} is below ${MIN_PG_POOL_PER_WORKER} per worker)`
    : `pool ${mine} per worker (${total} in all)`;
}

/** Opens a new store on `target`. */
export function openStore(target: DatabaseTarget): RecordStore {
  if (target.kind === 'sqlite') return new SqliteStore(target.path);
  const { url, pool, connectTimeoutMs, statementTimeoutMs } = target;
  return new PostgresStore({ connectionString: url, max: pool, connectTimeoutMs, statementTimeoutMs });
}

/** The open stores of this process by target, with how many providers use each. */
const shared = new Map<string, { store: RecordStore; users: number }>();

function keyOf(target: DatabaseTarget): string {
  return target.kind === 'sqlite' ? `sqlite:${target.path}` : `postgres:${target.pool}:${target.connectTimeoutMs}:${target.statementTimeoutMs}:${target.url}`;
}

/** The store of `target`, opened on first use; every acquire is matched by one release. */
export function acquireStore(target: DatabaseTarget): RecordStore {
  const key = keyOf(target);
  let entry = shared.get(key);
  if (entry === undefined) {
    entry = { store: openStore(target), users: 0 };
    shared.set(key, entry);
  }
  entry.users++;
  return entry.store;
}

/** Gives back a store acquired for `target`; the last release closes it. */
export async function releaseStore(target: DatabaseTarget): Promise<void> {
  const key = keyOf(target);
  const entry = shared.get(key);
  if (entry === undefined) return;
  if (--entry.users > 0) return;
  shared.delete(key);
  await entry.store.close();
}

/** How many stores this process holds open (tests check nothing is left open). */
export function openStoreCount(): number {
  return shared.size;
}
