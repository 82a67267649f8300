/**
 * Which database an app's records live in, and its one open store per process: SQLite at
 * `<app>/.rvm/data.sqlite` by default, PostgreSQL when `DATABASE_URL` is set (the environment,
 * else `rvm.config.json` `database.url`). A dev reload links a new version of the app while the
 * previous one may still be answering, so both share the store: it closes with its last user.
 */
import { isAbsolute, join, relative } from 'node:path';
import type { AppSettings } from '../../plugins/sdk.js';
import { PG_POOL_SIZE, PostgresStore } from './postgres.js';
import { SqliteStore } from './sqlite.js';
import type { RecordStore } from './store.js';

/** The largest `database.pool`: PostgreSQL's default allows 100 connections in all, for every process. */
export const MAX_PG_POOL_SIZE = 100;

/** Where the SQLite file lives, relative to the app folder. */
export const SQLITE_PATH = join('.rvm', 'data.sqlite');

/** The database of an app, with the name `rvm run` prints (never a password). */
export type DatabaseTarget = { kind: 'sqlite'; path: string; shown: string } | { kind: 'postgres'; url: string; pool: number; shown: string };

/** `host/db` of a PostgreSQL URL; `postgres` alone when it is not a URL (a key=value string). */
function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}${u.port ? `:${u.port}` : ''}/${decodeURIComponent(u.pathname.slice(1))}`;
  } catch {
    return 'postgres';
  }
}

/** The database `settings` name: see the header. A malformed `database` config throws. */
export function databaseTarget(settings: AppSettings): DatabaseTarget {
  const config = settings.config.database;
  if (config !== undefined && (config === null || typeof config !== 'object' || Array.isArray(config))) {
    throw new Error('rvm.config.json: "database" must be an object ({"url": …, "pool": …})');
  }
  const section = (config ?? {}) as Record<string, unknown>;
  if (section.url !== undefined && typeof section.url !== 'string') throw new Error('rvm.config.json: "database.url" must be text');
  const pool = section.pool ?? PG_POOL_SIZE;
  if (typeof pool !== 'number' || !Number.isInteger(pool) || pool < 1 || pool > MAX_PG_POOL_SIZE) {
    throw new Error(`rvm.config.json: "database.pool" must be an integer from 1 to ${MAX_PG_POOL_SIZE}`);
  }
  const url = settings.secrets.env('DATABASE_URL') || (section.url as string | undefined);
  if (url) return { kind: 'postgres', url, pool, shown: `postgres ${shownUrl(url)}` };
  const dir = settings.dir ?? process.cwd();
  const path = join(dir, SQLITE_PATH);
  const rel = relative(process.cwd(), path);
  return { kind: 'sqlite', path, shown: `sqlite ${rel === '' || rel.startsWith('..') || isAbsolute(rel) ? path : rel}` };
}

/** Opens a new store on `target`. */
export function openStore(target: DatabaseTarget): RecordStore {
  return target.kind === 'sqlite' ? new SqliteStore(target.path) : new PostgresStore({ connectionString: target.url, max: target.pool });
}

/** The open stores of this process by target, with how many providers use each. */
const shared = new Map<string, { store: RecordStore; users: number }>();

function keyOf(target: DatabaseTarget): string {
  return target.kind === 'sqlite' ? `sqlite:${target.path}` : `postgres:${target.pool}:${target.url}`;
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
