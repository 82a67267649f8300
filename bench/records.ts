/**
 * The records benchmark: rvm (bench/apps/records through the CLI, production mode,
 * records in its SQLite file) against Fastify + better-sqlite3 with hand-written prepared
 * statements and the same validation (bench/servers/fastify-records.ts), side by side in one run
 * and pinned as bench/http.ts is. With BENCH_DB=postgres, both keep their users on one throwaway
 * PostgreSQL server (test/support/postgres-server.ts), each in a database of its own: rvm through
 * DATABASE_URL, against Fastify + pg (bench/servers/fastify-records-pg.ts), both pools
 * PG_POOL_SIZE connections; the PostgreSQL processes are pinned with the servers. Routes: POST /api/users (validate + create, a fresh e-mail per
 * request), GET /api/users/:id (find) and GET /api/users?role=user (where + order + limit 20).
 * Before loading, each server gets the same SEED_USERS users through its own POST route, so the
 * queries run on tables of one size, and on PostgreSQL the planner's statistics are gathered then;
 * the create route is measured last, as it grows the table.
 *
 * Env: as bench/http.ts (BENCH_DURATION, BENCH_ROUNDS, BENCH_WARMUP, BENCH_CONNECTIONS,
 * BENCH_PIPELINING), plus BENCH_SEED_USERS and BENCH_DB (`sqlite`, the default, or `postgres`). Always exits 0: it measures, it does not test.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { PG_POOL_SIZE } from '../stdlib/records/postgres.js';
import { startPostgres, type PostgresServer } from '../test/support/postgres-server.js';
import {
  HTTP_LOAD,
  REPO_ROOT,
  cpuCell,
  fmt,
  formatTable,
  machineDescription,
  measureSideBySide,
  measurement,
  pairedRatio,
  pinning,
  positiveEnv,
  serverCpuSeconds,
  spawnServer,
  stopServer,
  type Measurement,
  type ServerChild,
  type Results,
} from './util.js';

const PIN = pinning();

const { durationS: DURATION_S, warmupS: WARMUP_S, rounds: ROUNDS, connections: CONNECTIONS, pipelining: PIPELINING } = HTTP_LOAD;
/** Users created before loading: a table where role=user matches far more than one page. */
const SEED_USERS = Math.floor(positiveEnv('BENCH_SEED_USERS', 2000));

/** Where both servers keep their users (BENCH_DB): their own SQLite files, or databases of one throwaway PostgreSQL server. */
const DB: 'sqlite' | 'postgres' = process.env.BENCH_DB === 'postgres' ? 'postgres' : 'sqlite';
const PEER = DB === 'postgres' ? 'Fastify + pg' : 'Fastify + better-sqlite3';

/** The targets (bench/README.md): rvm's req/s over the peer's (on PostgreSQL, ≥ 0.9× on every route). */
const TARGETS: Record<string, number> =
  DB === 'postgres'
    ? { 'POST /api/users': 0.9, 'GET /api/users/:id': 0.9, 'GET /api/users?role=user': 0.9 }
    : { 'POST /api/users': 0.95, 'GET /api/users/:id': 0.95, 'GET /api/users?role=user': 0.9 };

const USER_FIELDS = ['id', 'email', 'name', 'role', 'created_at', 'updated_at'];

/** The databases of the servers on the throwaway PostgreSQL server (BENCH_DB=postgres). */
interface PostgresDatabases {
  server: PostgresServer;
  /** A connection URL per server name. */
  urls: Record<string, string>;
}

interface ServerCase {
  name: string;
  /** Arguments to `node`, given the port, a fresh working directory and the PostgreSQL databases (null on SQLite). */
  args(port: number, dir: string, pgDbs: PostgresDatabases | null): string[];
  /** Environment over this process's. */
  env(pgDbs: PostgresDatabases | null): NodeJS.ProcessEnv;
  /** Why the seeded users are not where this server should keep them, or null. */
  misplaced(dir: string, pgDbs: PostgresDatabases | null): Promise<string | null>;
  note: string;
}

/** `work` on a connection of its own to the database at `url`, closed after. */
async function onDatabase<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** How many rows `table` holds in the database at `url`. */
async function countRows(url: string, table: string): Promise<number> {
  return onDatabase(url, async (client) => Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]!.n));
}

/**
 * Gathers the planner's statistics in every server's database once seeding is done. Without them
 * PostgreSQL guesses a handful of rows per role, sorts all 1,500 of a role for each listing, and
 * switches to walking the role's index only when autovacuum happens to analyze that table: one
 * database at one minute, the other at another, mid-measurement (listing ratios of 0.57–1.04 in
 * four runs on 2026-11-28, before this).
 */
async function analyze(pgDbs: PostgresDatabases): Promise<void> {
  for (const url of Object.values(pgDbs.urls)) await onDatabase(url, (client) => client.query('ANALYZE'));
}

/** A problem when the database at `url` does not hold the seeded users in `table`. */
async function seededIn(url: string, table: string): Promise<string | null> {
  try {
    const n = await countRows(url, table);
    return n >= SEED_USERS ? null : `${n} rows in ${table}, not the ${SEED_USERS} seeded`;
  } catch (err) {
    return `no ${table} table in its PostgreSQL database (${String(err)})`;
  }
}

const SQLITE_SERVERS: ServerCase[] = [
  {
    name: 'rvm',
    args: (port, dir) => [join(REPO_ROOT, 'dist/tools/cli.js'), 'run', join(dir, 'app'), '--port', String(port), '--host', '127.0.0.1', '--prod'],
    env: () => ({ DATABASE_URL: '' }),
    misplaced: async (dir) => (existsSync(join(dir, 'app', '.rvm', 'data.sqlite')) ? null : `records not stored in ${join(dir, 'app', '.rvm', 'data.sqlite')}`),
    note: 'rvm run --prod on a fresh copy of bench/apps/records, default logging (stdout to /dev/null), records in app/.rvm/data.sqlite',
  },
  {
    name: 'fastify',
    args: (port, dir) => [join(REPO_ROOT, 'dist/bench/servers/fastify-records.js'), String(port), join(dir, 'data.sqlite')],
    env: () => ({}),
    misplaced: async (dir) => (existsSync(join(dir, 'data.sqlite')) ? null : `users not stored in ${join(dir, 'data.sqlite')}`),
    note: 'Fastify defaults, logger off, ajv body schema, better-sqlite3 prepared statements, WAL + synchronous=NORMAL',
  },
];

const POSTGRES_SERVERS: ServerCase[] = [
  {
    name: 'rvm',
    args: (port, dir) => [join(REPO_ROOT, 'dist/tools/cli.js'), 'run', join(dir, 'app'), '--port', String(port), '--host', '127.0.0.1', '--prod'],
    env: (dbs) => ({ DATABASE_URL: dbs!.urls.rvm }),
    misplaced: (_dir, dbs) => seededIn(dbs!.urls.rvm!, '"User"'),
    note: `rvm run --prod on a fresh copy of bench/apps/records, default logging (stdout to /dev/null), DATABASE_URL to its own database, its default pool of PG_POOL_SIZE = ${PG_POOL_SIZE} connections`,
  },
  {
    name: 'fastify',
    args: (port, _dir, dbs) => [join(REPO_ROOT, 'dist/bench/servers/fastify-records-pg.js'), String(port), dbs!.urls.fastify!, String(PG_POOL_SIZE)],
    env: () => ({}),
    misplaced: (_dir, dbs) => seededIn(dbs!.urls.fastify!, 'users'),
    note: `Fastify defaults, logger off, ajv body schema, a pg Pool of ${PG_POOL_SIZE} connections (as rvm's) with named (prepared) queries, in its own database`,
  },
];

const SERVERS = DB === 'postgres' ? POSTGRES_SERVERS : SQLITE_SERVERS;

interface Running {
  child: ChildProcess;
  base: string;
  dir: string;
  /** A seeded user, for the find route and its check. */
  known: Record<string, unknown>;
  /** Why this server's figures do not compare (its users are not in its database), or null. */
  caveat: string | null;
}

interface RouteCase {
  name: string;
  method: 'GET' | 'POST';
  path(server: Running): string;
  /** The body autocannon sends; `[<id>]` becomes a unique id per request. */
  body?: string;
  /** Checks one answer; a problem as text, or null. */
  check(status: number, body: unknown, server: Running): string | null;
}

function sameUser(a: unknown, b: Record<string, unknown>): boolean {
  return (
    typeof a === 'object' &&
    a !== null &&
    JSON.stringify(Object.keys(a)) === JSON.stringify(USER_FIELDS) &&
    USER_FIELDS.every((k) => (a as Record<string, unknown>)[k] === b[k])
  );
}

const ROUTES: RouteCase[] = [
  {
    name: 'GET /api/users/:id',
    method: 'GET',
    path: (s) => `/api/users/${String(s.known.id)}`,
    check: (status, body, s) => (status === 200 && sameUser(body, s.known) ? null : 'not the seeded user'),
  },
  {
    name: 'GET /api/users?role=user',
    method: 'GET',
    path: () => '/api/users?role=user',
    check(status, body) {
      if (status !== 200 || !Array.isArray(body) || body.length !== 20) return 'not a list of 20';
      const rows = body as Record<string, string>[];
      if (!rows.every((r) => r.role === 'user' && JSON.stringify(Object.keys(r)) === JSON.stringify(USER_FIELDS))) return 'rows of another role or shape';
      // Newest first, ties of one instant by id descending (time-ordered ids): one order on both servers.
      const before = (a: Record<string, string>, b: Record<string, string>) =>
        a.created_at! > b.created_at! || (a.created_at === b.created_at && a.id! > b.id!);
      return rows.every((r, i) => i === 0 || before(rows[i - 1]!, r)) ? null : 'not newest first';
    },
  },
  {
    name: 'POST /api/users',
    method: 'POST',
    path: () => '/api/users',
    body: JSON.stringify({ email: 'bench-[<id>]@example.com', name: 'Ada Lovelace' }),
    check(status, body) {
      const user = body as Record<string, unknown>;
      return status === 201 && JSON.stringify(Object.keys(user)) === JSON.stringify(USER_FIELDS) && user.role === 'user' && user.name === 'Ada Lovelace'
        ? null
        : 'not the created user';
    },
  },
];

async function post(base: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${base}/api/users`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  return { status: res.status, body: await res.json() };
}

/** Starts a server in a fresh directory, waits until it answers, and seeds its users. */
async function startServer(server: ServerCase, pgDbs: PostgresDatabases | null): Promise<Running> {
  const dir = mkdtempSync(join(tmpdir(), `rvm-bench-records-${server.name}-`));
  if (server.name === 'rvm') cpSync(join(REPO_ROOT, 'bench/apps/records'), join(dir, 'app'), { recursive: true });
  let started: ServerChild;
  try {
    started = await spawnServer(PIN, (port) => server.args(port, dir, pgDbs), server.env(pgDbs));
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const { child, base } = started;
  try {
    let known: Record<string, unknown> | null = null;
    for (let i = 0; i < SEED_USERS; i++) {
      const answer = await post(base, { email: `seed-${i}@example.com`, name: `User ${i}`, role: i % 4 === 3 ? 'admin' : 'user' });
      if (answer.status !== 201) throw new Error(`seeding user ${i}: status ${answer.status}, ${JSON.stringify(answer.body).slice(0, 200)}`);
      if (i === SEED_USERS >> 1) known = answer.body as Record<string, unknown>;
    }
    const misplaced = await server.misplaced(dir, pgDbs);
    const caveat = misplaced === null ? null : `${misplaced}: figures do not compare`;
    return { child, base, dir, known: known!, caveat };
  } catch (err) {
    await stopServer(child);
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/** Stops a server and removes its directory. */
function stopRunning(running: Running): Promise<void> {
  return stopServer(running.child).finally(() => rmSync(running.dir, { recursive: true, force: true }));
}

/** Sends the route once and checks the answer, so a fast wrong answer is never measured. */
async function checkRoute(server: Running, route: RouteCase): Promise<string | null> {
  const init: RequestInit = route.body
    ? { method: route.method, body: route.body.replace('[<id>]', 'check'), headers: { 'content-type': 'application/json' } }
    : { method: route.method };
  const res = await fetch(server.base + route.path(server), init);
  const text = await res.text();
  try {
    const problem = route.check(res.status, JSON.parse(text), server);
    return problem === null ? null : `${problem}: status ${res.status}, body ${text.slice(0, 200)}`;
  } catch {
    return `status ${res.status}, body not JSON: ${text.slice(0, 200)}`;
  }
}

async function load(server: Running, route: RouteCase, duration: number): Promise<Omit<Measurement, 'rounds'>> {
  const options: Parameters<typeof autocannon>[0] = {
    url: server.base + route.path(server),
    connections: CONNECTIONS,
    pipelining: PIPELINING,
    duration,
    method: route.method,
  };
  if (route.body) {
    options.body = route.body;
    options.headers = { 'content-type': 'application/json' };
    options.idReplacement = true;
  }
  const result = await autocannon(options);
  return { reqPerSec: result.requests.average, p99: result.latency.p99, errors: result.errors, non2xx: result.non2xx };
}

/** Starts every server; one that fails is recorded and left out. */
async function startAll(results: Results, pgDbs: PostgresDatabases | null): Promise<Map<string, Running>> {
  const running = new Map<string, Running>();
  for (const server of SERVERS) {
    const row = new Map<string, Measurement | string>();
    results.set(server.name, row);
    try {
      const started = await startServer(server, pgDbs);
      running.set(server.name, started);
      if (started.caveat) console.error(`[${server.name}] ${started.caveat}`);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      for (const route of ROUTES) row.set(route.name, `did not start: ${message.split('\n')[0]}`);
      console.error(`[${server.name}] ${message}`);
    }
  }
  return running;
}

function report(results: Results, running: Map<string, Running>): void {
  const rows: string[][] = [];
  for (const route of ROUTES) {
    for (const server of SERVERS) {
      const m = results.get(server.name)?.get(route.name);
      if (!m || typeof m === 'string') {
        rows.push([route.name, server.name, '-', '-', '-', '-', m ?? 'not run']);
        continue;
      }
      const f = measurement(results, 'fastify', route.name);
      const paired = f ? pairedRatio(m.rounds, f.rounds) : null;
      const notes = [
        m.errors ? `${m.errors} errors` : '',
        m.non2xx ? `${m.non2xx} non-2xx` : '',
        running.get(server.name)?.caveat ? `not in its ${DB === 'postgres' ? 'PostgreSQL' : 'SQLite'} database` : '',
      ]
        .filter(Boolean)
        .join(', ');
      rows.push([route.name, server.name, fmt(m.reqPerSec), String(m.p99), cpuCell(m), paired ? `${paired.ratio.toFixed(2)}×` : '-', notes]);
    }
  }
  console.log(
    `\nRecords benchmark on ${DB === 'postgres' ? `PostgreSQL ${pgVersion} (a throwaway server on loopback, fsync off, a database per server; ${PIN.serverCores === null ? 'unpinned' : 'pinned with the servers'})` : 'SQLite'} — ${machineDescription()}`,
  );
  console.log(
    `autocannon: ${CONNECTIONS} connections, ${PIPELINING} requests in flight on each, loopback; ${SEED_USERS} users seeded per server; per route and server ${WARMUP_S} s warm-up, then ${DURATION_S} s measured in ${ROUNDS} rotating rounds (req/s: median of the rounds; ratios: median of the per-round ratios); ${PIN.note}\n`,
  );
  console.log(formatTable(['route', 'server', 'req/s', 'p99 ms', 'CPU µs/req', 'vs fastify', 'notes'], rows));
  console.log('');
  for (const s of SERVERS) console.log(`${s.name}: ${s.note}`);
  console.log('');
  const caveat = running.get('rvm')?.caveat ?? null;
  for (const route of ROUTES) {
    const target = TARGETS[route.name]!;
    const r = measurement(results, 'rvm', route.name);
    const f = measurement(results, 'fastify', route.name);
    const paired = r && f ? pairedRatio(r.rounds, f.rounds) : null;
    const verdict = paired === null || caveat ? 'n/a ' : paired.ratio >= target ? 'PASS' : 'MISS';
    console.log(
      `${verdict}  rvm ${route.name} ≥ ${target}× ${PEER} req/s (${paired ? `${paired.ratio.toFixed(3)}×, ${paired.range}` : '-'})${caveat ? ` — ${caveat}` : ''}`,
    );
  }
}

/** PostgreSQL's version, for the report header (BENCH_DB=postgres). */
let pgVersion = '';

/**
 * Pins the PostgreSQL server's processes to the servers' cores: the postmaster and its children
 * now; the backends it forks for the pools later inherit its affinity.
 */
function pinPostgres(server: PostgresServer): void {
  const pid = server.pid();
  if (PIN.serverCores === null || pid === null) return;
  let children: string[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  } catch {
    // No /proc children list: the postmaster alone is pinned, and what it forks from now on.
  }
  for (const p of [String(pid), ...children]) spawnSync('taskset', ['-a', '-cp', PIN.serverCores, p], { stdio: 'ignore' });
}

/** Starts the throwaway PostgreSQL server and makes a database per server. */
async function startDatabases(): Promise<PostgresDatabases> {
  const server = await startPostgres();
  try {
    pinPostgres(server);
    return await onDatabase(server.url, async (admin) => {
      pgVersion = (await admin.query<{ server_version: string }>('SHOW server_version')).rows[0]!.server_version;
      const urls: Record<string, string> = {};
      for (const s of SERVERS) {
        await admin.query(`CREATE DATABASE bench_${s.name}`);
        urls[s.name] = server.url.replace(/\/postgres$/, `/bench_${s.name}`);
      }
      return { server, urls };
    });
  } catch (err) {
    server.destroy();
    throw err;
  }
}

async function main(): Promise<void> {
  const results: Results = new Map();
  const pgDbs = DB === 'postgres' ? await startDatabases() : null;
  try {
    const running = await startAll(results, pgDbs);
    try {
      if (pgDbs !== null) await analyze(pgDbs);
      await measureSideBySide(running, ROUTES, results, {
        check: checkRoute,
        load: load,
        cpu: (r) => serverCpuSeconds(r.child.pid),
        warmupS: WARMUP_S,
        durationS: DURATION_S,
        rounds: ROUNDS,
      });
    } finally {
      await Promise.all([...running.values()].map(stopRunning));
    }
    report(results, running);
  } finally {
    pgDbs?.server.destroy();
  }
}

main().catch((err: unknown) => {
  console.error(`records benchmark failed: ${String(err)}`);
});
