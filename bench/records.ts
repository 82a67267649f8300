/**
 * The records benchmark (issue 15): rvm (bench/apps/records through the CLI, production mode,
 * records in its SQLite file) against Fastify + better-sqlite3 with hand-written prepared
 * statements and the same validation (bench/servers/fastify-records.ts), side by side in one run
 * and pinned as bench/http.ts is. Routes: POST /api/users (validate + create, a fresh e-mail per
 * request), GET /api/users/:id (find) and GET /api/users?role=user (where + order + limit 20).
 * Before loading, each server gets the same SEED_USERS users through its own POST route, so the
 * queries run on tables of one size; the create route is measured last, as it grows the table.
 *
 * Env: as bench/http.ts (BENCH_DURATION, BENCH_ROUNDS, BENCH_WARMUP, BENCH_CONNECTIONS,
 * BENCH_PIPELINING), plus BENCH_SEED_USERS. Always exits 0: it measures, it does not test.
 */
import type { ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { HTTP_LOAD, REPO_ROOT, fmt, formatTable, machineDescription, measureSideBySide, measurement, pairedRatio, pinning, positiveEnv, spawnServer, stopServer, type Measurement, type ServerChild, type Results } from './util.js';

const PIN = pinning();

const { durationS: DURATION_S, warmupS: WARMUP_S, rounds: ROUNDS, connections: CONNECTIONS, pipelining: PIPELINING } = HTTP_LOAD;
/** Users created before loading: a table where role=user matches far more than one page. */
const SEED_USERS = Math.floor(positiveEnv('BENCH_SEED_USERS', 2000));

/** The issue's targets: rvm's req/s over Fastify + better-sqlite3's. */
const TARGETS: Record<string, number> = { 'POST /api/users': 0.95, 'GET /api/users/:id': 0.95, 'GET /api/users?role=user': 0.9 };

const USER_FIELDS = ['id', 'email', 'name', 'role', 'created_at', 'updated_at'];

interface ServerCase {
  name: string;
  /** Arguments to `node`, given the port and a fresh working directory. */
  args(port: number, dir: string): string[];
  /** The SQLite file this server keeps its users in, under its working directory. */
  database(dir: string): string;
  note: string;
}

const SERVERS: ServerCase[] = [
  {
    name: 'rvm',
    args: (port, dir) => [join(REPO_ROOT, 'dist/tools/cli.js'), 'run', join(dir, 'app'), '--port', String(port), '--host', '127.0.0.1', '--prod'],
    database: (dir) => join(dir, 'app', '.rvm', 'data.sqlite'),
    note: 'rvm run --prod on a fresh copy of bench/apps/records, default logging (stdout to /dev/null), records in app/.rvm/data.sqlite',
  },
  {
    name: 'fastify',
    args: (port, dir) => [join(REPO_ROOT, 'dist/bench/servers/fastify-records.js'), String(port), join(dir, 'data.sqlite')],
    database: (dir) => join(dir, 'data.sqlite'),
    note: 'Fastify defaults, logger off, ajv body schema, better-sqlite3 prepared statements, WAL + synchronous=NORMAL',
  },
];

interface Running {
  child: ChildProcess;
  base: string;
  dir: string;
  /** A seeded user, for the find route and its check. */
  known: Record<string, unknown>;
  /** Why this server's figures do not compare (rvm not storing in SQLite yet), or null. */
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
  return typeof a === 'object' && a !== null && JSON.stringify(Object.keys(a)) === JSON.stringify(USER_FIELDS) && USER_FIELDS.every((k) => (a as Record<string, unknown>)[k] === b[k]);
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
      return rows.every((r, i) => i === 0 || rows[i - 1]!.created_at! >= r.created_at!) ? null : 'not newest first';
    },
  },
  {
    name: 'POST /api/users',
    method: 'POST',
    path: () => '/api/users',
    body: JSON.stringify({ email: 'bench-[<id>]@example.com', name: 'Ada Lovelace' }),
    check(status, body) {
      const user = body as Record<string, unknown>;
      return status === 201 && JSON.stringify(Object.keys(user)) === JSON.stringify(USER_FIELDS) && user.role === 'user' && user.name === 'Ada Lovelace' ? null : 'not the created user';
    },
  },
];

async function post(base: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${base}/api/users`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  return { status: res.status, body: await res.json() };
}

/** Starts a server in a fresh directory, waits until it answers, and seeds its users. */
async function startServer(server: ServerCase): Promise<Running> {
  const dir = mkdtempSync(join(tmpdir(), `rvm-bench-records-${server.name}-`));
  if (server.name === 'rvm') cpSync(join(REPO_ROOT, 'bench/apps/records'), join(dir, 'app'), { recursive: true });
  let started: ServerChild;
  try {
    started = await spawnServer(PIN, (port) => server.args(port, dir));
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
    const caveat = existsSync(server.database(dir)) ? null : `records not stored in ${server.database(dir)} (the records plugin is not on SQLite yet): figures do not compare`;
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
  const options: Parameters<typeof autocannon>[0] = { url: server.base + route.path(server), connections: CONNECTIONS, pipelining: PIPELINING, duration, method: route.method };
  if (route.body) {
    options.body = route.body;
    options.headers = { 'content-type': 'application/json' };
    options.idReplacement = true;
  }
  const result = await autocannon(options);
  return { reqPerSec: result.requests.average, p99: result.latency.p99, errors: result.errors, non2xx: result.non2xx };
}

/** Starts every server; one that fails is recorded and left out. */
async function startAll(results: Results): Promise<Map<string, Running>> {
  const running = new Map<string, Running>();
  for (const server of SERVERS) {
    const row = new Map<string, Measurement | string>();
    results.set(server.name, row);
    try {
      const started = await startServer(server);
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
        rows.push([route.name, server.name, '-', '-', '-', m ?? 'not run']);
        continue;
      }
      const f = measurement(results, 'fastify', route.name);
      const paired = f ? pairedRatio(m.rounds, f.rounds) : null;
      const notes = [m.errors ? `${m.errors} errors` : '', m.non2xx ? `${m.non2xx} non-2xx` : '', running.get(server.name)?.caveat ? 'not on SQLite' : ''].filter(Boolean).join(', ');
      rows.push([route.name, server.name, fmt(m.reqPerSec), String(m.p99), paired ? `${paired.ratio.toFixed(2)}×` : '-', notes]);
    }
  }
  console.log(`\nRecords benchmark — ${machineDescription()}`);
  console.log(`autocannon: ${CONNECTIONS} connections, ${PIPELINING} requests in flight on each, loopback; ${SEED_USERS} users seeded per server; per route and server ${WARMUP_S} s warm-up, then ${DURATION_S} s measured in ${ROUNDS} rotating rounds (req/s: median of the rounds; ratios: median of the per-round ratios); ${PIN.note}\n`);
  console.log(formatTable(['route', 'server', 'req/s', 'p99 ms', 'vs fastify', 'notes'], rows));
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
    console.log(`${verdict}  rvm ${route.name} ≥ ${target}× Fastify + better-sqlite3 req/s (${paired ? `${paired.ratio.toFixed(3)}×, ${paired.range}` : '-'})${caveat ? ` — ${caveat}` : ''}`);
  }
}

async function main(): Promise<void> {
  const results: Results = new Map();
  const running = await startAll(results);
  try {
    await measureSideBySide(running, ROUTES, results, { check: checkRoute, load: load, warmupS: WARMUP_S, durationS: DURATION_S, rounds: ROUNDS });
  } finally {
    await Promise.all([...running.values()].map(stopRunning));
  }
  report(results, running);
}

main().catch((err: unknown) => {
  console.error(`records benchmark failed: ${String(err)}`);
});
