/**
 * The HTTP macro benchmark: the same four routes served by rvm (bench/apps/hello through the
 * CLI, production mode), raw node:http and Fastify, each in its own child process on loopback,
 * measured one at a time by autocannon from this process. Prints req/s and p99 per
 * route and server, the ratio to node:http, and whether rvm meets its targets.
 *
 * Env: BENCH_DURATION (measured s per route per server, default 12), BENCH_ROUNDS (default 12),
 * BENCH_WARMUP (s, default 2), BENCH_CONNECTIONS (default 64), BENCH_PIPELINING (default 10),
 * BENCH_ROUTES (only these routes), BENCH_SERVERS (only these servers; node:http, the reference
 * of every ratio, always runs). Always exits 0: it measures, it does not test.
 */
import { join } from 'node:path';
import autocannon from 'autocannon';
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
  serverCpuSeconds,
  spawnServer,
  stopServer,
  type Measurement,
  type ServerChild,
  type Results,
} from './util.js';

const PIN = pinning();

const { durationS: DURATION_S, warmupS: WARMUP_S, rounds: ROUNDS, connections: CONNECTIONS, pipelining: PIPELINING } = HTTP_LOAD;

/** Targets from the design: rvm GET /hello against node:http and Fastify, p99 against Fastify. */
const TARGET_VS_NODE = 0.85;
/** The POST path's target: POST /echo against node:http, in req/s and in CPU per request. */
const TARGET_POST_VS_NODE = 0.9;
const TARGET_P99_VS_FASTIFY = 1.2;

const ECHO_BODY = JSON.stringify({ name: 'rvm', tags: ['fast', 'small'], count: 3, nested: { ok: true } });
/** A valid user-creation body (the README's example): validated, `role` defaulted, answered 201. */
const USER_BODY = JSON.stringify({ email: 'ada.lovelace@example.com', name: 'Ada Lovelace' });

interface RouteCase {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  /** The status every server must answer with; default 200. */
  status?: number;
  /** The body every server must answer with (checked once before loading). */
  expect: unknown;
}

const ALL_ROUTES: RouteCase[] = [
  { name: 'GET /hello', method: 'GET', path: '/hello', expect: { message: 'hello' } },
  { name: 'GET /users/:id', method: 'GET', path: '/users/42', expect: { id: 42, name: 'user 42' } },
  { name: 'POST /echo', method: 'POST', path: '/echo', body: ECHO_BODY, expect: JSON.parse(ECHO_BODY) },
  { name: 'POST /api/users', method: 'POST', path: '/api/users', body: USER_BODY, status: 201, expect: { ...JSON.parse(USER_BODY), role: 'user' } },
];

/** BENCH_ROUTES (comma-separated route names, e.g. `POST /api/users`) measures only those. */
const ROUTES: RouteCase[] = process.env.BENCH_ROUTES ? ALL_ROUTES.filter((r) => listEnv('BENCH_ROUTES').includes(r.name)) : ALL_ROUTES;

interface ServerCase {
  name: string;
  /** Arguments to `node`, with the port filled in. */
  args(port: number): string[];
  note: string;
}

const ALL_SERVERS: ServerCase[] = [
  {
    name: 'rvm',
    args: (port) => [join(REPO_ROOT, 'dist/tools/cli.js'), 'run', join(REPO_ROOT, 'bench/apps/hello'), '--port', String(port), '--host', '127.0.0.1', '--prod'],
    note: 'rvm run --prod, default logging: one line per request, stdout to /dev/null',
  },
  { name: 'node:http', args: (port) => [join(REPO_ROOT, 'dist/bench/servers/node-http.js'), String(port)], note: 'hand-written routing' },
  { name: 'fastify', args: (port) => [join(REPO_ROOT, 'dist/bench/servers/fastify.js'), String(port)], note: 'Fastify defaults, logger off' },
];

/** BENCH_SERVERS (comma-separated names, e.g. `rvm`) measures only those, beside node:http. */
const SERVERS: ServerCase[] = process.env.BENCH_SERVERS
  ? ALL_SERVERS.filter((s) => s.name === 'node:http' || listEnv('BENCH_SERVERS').includes(s.name))
  : ALL_SERVERS;

/** A comma-separated environment variable as its trimmed items. */
function listEnv(name: string): string[] {
  return (process.env[name] ?? '').split(',').map((s) => s.trim());
}

/** Starts a server child and waits until it answers. */
function startServer(server: ServerCase): Promise<ServerChild> {
  return spawnServer(PIN, server.args);
}

/** Fetches the route once and checks the body, so a fast wrong answer is never measured. */
async function checkRoute(base: string, route: RouteCase): Promise<string | null> {
  const init: RequestInit = route.body ? { method: route.method, body: route.body, headers: { 'content-type': 'application/json' } } : { method: route.method };
  const res = await fetch(base + route.path, init);
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return `status ${res.status}, body not JSON: ${text.slice(0, 200)}`;
  }
  if (res.status !== (route.status ?? 200) || JSON.stringify(body) !== JSON.stringify(route.expect)) {
    return `status ${res.status}, body ${text.slice(0, 200)}`;
  }
  return null;
}

async function load(base: string, route: RouteCase, duration: number): Promise<Omit<Measurement, 'rounds'>> {
  const options: Parameters<typeof autocannon>[0] = {
    url: base + route.path,
    connections: CONNECTIONS,
    pipelining: PIPELINING,
    duration,
    method: route.method,
  };
  if (route.body) {
    options.body = route.body;
    options.headers = { 'content-type': 'application/json' };
  }
  const result = await autocannon(options);
  return { reqPerSec: result.requests.average, p99: result.latency.p99, errors: result.errors, non2xx: result.non2xx };
}

type Running = Awaited<ReturnType<typeof startServer>>;

/** Starts every server and checks its answers; a server that fails is recorded and left out. */
async function startAll(results: Results): Promise<Map<string, Running>> {
  const running = new Map<string, Running>();
  for (const server of SERVERS) {
    const row = new Map<string, Measurement | string>();
    results.set(server.name, row);
    try {
      running.set(server.name, await startServer(server));
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      for (const route of ROUTES) row.set(route.name, `did not start: ${message.split('\n')[0]}`);
      console.error(`[${server.name}] ${message}`);
    }
  }
  return running;
}

function report(results: Results): void {
  const rows: string[][] = [];
  for (const route of ROUTES) {
    for (const server of SERVERS) {
      const m = results.get(server.name)?.get(route.name);
      if (!m || typeof m === 'string') {
        rows.push([route.name, server.name, '-', '-', '-', '-', '-', m ?? 'not run']);
        continue;
      }
      const paired = pairedRatioOf(results, server.name, 'node:http', route.name);
      const ratio = paired === null ? '-' : `${paired.ratio.toFixed(2)}×`;
      const notes = [m.errors ? `${m.errors} errors` : '', m.non2xx ? `${m.non2xx} non-2xx` : ''].filter(Boolean).join(', ');
      const cpu = cpuRatioOf(results, server.name, 'node:http', route.name);
      rows.push([route.name, server.name, fmt(m.reqPerSec), String(m.p99), cpuCell(m), ratio, cpu === null ? '-' : `${cpu.toFixed(2)}×`, notes]);
    }
  }
  console.log(`\nHTTP benchmark — ${machineDescription()}`);
  console.log(
    `autocannon: ${CONNECTIONS} connections, ${PIPELINING} requests in flight on each, loopback; per route and server ${WARMUP_S} s warm-up, then ${DURATION_S} s measured in ${ROUNDS} rotating rounds (req/s: median of the rounds; ratios: median of the per-round ratios); ${PIN.note}\n`,
  );
  console.log(formatTable(['route', 'server', 'req/s', 'p99 ms', 'CPU µs/req', 'req/s vs node:http', 'CPU vs node:http', 'notes'], rows));
  console.log('');
  for (const s of SERVERS) console.log(`${s.name}: ${s.note}`);
  console.log('');
  for (const line of checks(results)) console.log(line);
}

/** `a`'s req/s over `b`'s on one route, from their paired rounds; null when either is missing. */
function pairedRatioOf(results: Results, a: string, b: string, route: string): ReturnType<typeof pairedRatio> {
  const ra = measurement(results, a, route)?.rounds;
  const rb = measurement(results, b, route)?.rounds;
  return ra === undefined || rb === undefined ? null : pairedRatio(ra, rb);
}

/**
 * `b`'s CPU per request over `a`'s on one route (medians of their rounds): like the req/s ratio,
 * above 1 when `a` is the cheaper; null when either was not read.
 */
function cpuRatioOf(results: Results, a: string, b: string, route: string): number | null {
  const ca = measurement(results, a, route)?.cpuUsPerRequest;
  const cb = measurement(results, b, route)?.cpuUsPerRequest;
  return ca === undefined || cb === undefined ? null : cb / ca;
}

function checks(results: Results): string[] {
  const lines: string[] = [];
  const verdict = (ok: boolean | null) => (ok === null ? 'n/a ' : ok ? 'PASS' : 'MISS');
  /** A req/s target: the median of the paired ratios to three places, and the rounds' range, so a near miss reads as one. */
  const ratioCheck = (label: string, route: string, peer: string, target: number): void => {
    const paired = pairedRatioOf(results, 'rvm', peer, route);
    if (paired === null) {
      lines.push(`${verdict(null)}  ${label} (-)`);
      return;
    }
    lines.push(`${verdict(paired.ratio >= target)}  ${label} (${paired.ratio.toFixed(3)}×, ${paired.range})`);
  };
  ratioCheck(`rvm GET /hello ≥ ${TARGET_VS_NODE}× node:http req/s`, 'GET /hello', 'node:http', TARGET_VS_NODE);
  ratioCheck('rvm GET /hello ≥ Fastify req/s', 'GET /hello', 'fastify', 1);
  ratioCheck('rvm POST /api/users (validated) ≥ Fastify req/s', 'POST /api/users', 'fastify', 1);
  ratioCheck(`rvm POST /echo ≥ ${TARGET_POST_VS_NODE}× node:http req/s`, 'POST /echo', 'node:http', TARGET_POST_VS_NODE);
  const echoCpu = cpuRatioOf(results, 'rvm', 'node:http', 'POST /echo');
  lines.push(
    `${verdict(echoCpu === null ? null : echoCpu >= TARGET_POST_VS_NODE)}  rvm POST /echo ≥ ${TARGET_POST_VS_NODE}× node:http in CPU per request (${echoCpu === null ? '-' : `${echoCpu.toFixed(3)}×`})`,
  );
  for (const route of ROUTES) {
    const r = measurement(results, 'rvm', route.name);
    const f = measurement(results, 'fastify', route.name);
    const ratio = r && f ? r.p99 / Math.max(f.p99, 1) : null;
    lines.push(
      `${verdict(ratio === null ? null : ratio <= TARGET_P99_VS_FASTIFY)}  rvm ${route.name} p99 ≤ ${TARGET_P99_VS_FASTIFY}× Fastify's (${r ? r.p99 : '-'} ms vs ${f ? f.p99 : '-'} ms)`,
    );
  }
  return lines;
}

async function main(): Promise<void> {
  const results: Results = new Map();
  const running = await startAll(results);
  try {
    await measureSideBySide(running, ROUTES, results, {
      check: (server, route) => checkRoute(server.base, route),
      load: (server, route, seconds) => load(server.base, route, seconds),
      cpu: (server) => serverCpuSeconds(server.child.pid),
      warmupS: WARMUP_S,
      durationS: DURATION_S,
      rounds: ROUNDS,
    });
  } finally {
    await Promise.all([...running.values()].map((r) => stopServer(r.child)));
  }
  report(results);
}

main().catch((err: unknown) => {
  console.error(`http benchmark failed: ${String(err)}`);
});
