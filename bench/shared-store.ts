/**
 * What sharing the rate-limit state costs over HTTP: GET /limited (`guard
 * rate_limit(100000, 1)`, never refusing at these rates) on `rvm run --prod` (bench/apps/
 * shared-store) with (a) the in-process store, one process; (b) the primary's store over IPC,
 * `--workers 1` (one worker, so the comparison is the store, not the core count); (c) Redis
 * (REDIS_URL, one process, a throwaway redis-server). Side by side in rotating rounds as
 * bench/http.ts; req/s and the paired ratios to in-process. Targets: IPC ≥ 0.7×, Redis ≥ 0.5×.
 * Then Redis stopped, and Redis hung (SIGSTOP): the p99 latency of the route on the Redis server
 * must stay under REDIS_COMMAND_TIMEOUT_MS + 50 ms (it answers 503 store_unavailable, never
 * waits longer). The servers, their workers and redis-server share core 0 when pinned.
 * Env: as bench/http.ts (BENCH_DURATION, BENCH_ROUNDS, BENCH_WARMUP, BENCH_CONNECTIONS,
 * BENCH_PIPELINING, BENCH_PIN), and BENCH_OUTAGE_S (seconds of load per outage, default 5).
 * Prints PASS/MISS; always exits 0.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import { REDIS_COMMAND_TIMEOUT_MS } from '../vm/runtime/stores/redis.js';
import { startRedis, type RedisServer } from '../test/support/redis-server.js';
import { childPids } from '../test/support/rvm-cluster.js';
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
  type Results,
  type ServerChild,
} from './util.js';

const { durationS: DURATION_S, warmupS: WARMUP_S, rounds: ROUNDS, connections: CONNECTIONS, pipelining: PIPELINING } = HTTP_LOAD;
const OUTAGE_S = positiveEnv('BENCH_OUTAGE_S', 5);
/** The outage target: a command gives up after REDIS_COMMAND_TIMEOUT_MS; 50 ms for the rest of the request. */
const OUTAGE_P99_BOUND_MS = REDIS_COMMAND_TIMEOUT_MS + 50;
/** How long the Redis server may take to answer 200 again once Redis is back (reconnection backs off to at most 500 ms). */
const RECOVERY_TIMEOUT_MS = 10_000;
const PIN = pinning();
const CLI = join(REPO_ROOT, 'dist/tools/cli.js');
const APP = join(REPO_ROOT, 'bench/apps/shared-store');
const ROUTE = { name: 'GET /limited', path: '/limited' };
/** Targets of the stores against the in-process one (bench/README.md). */
const TARGETS: Readonly<Record<string, number>> = { 'IPC (--workers 1)': 0.7, Redis: 0.5 };

// The in-process and IPC servers must not pick up a Redis from the caller's environment.
delete process.env.REDIS_URL;

/** Pins a process (all its threads) to the servers' core, when the run is pinned. */
function pinToServerCore(pid: number | null): void {
  if (PIN.serverCores !== null && pid !== null) spawnSync('taskset', ['-a', '-cp', PIN.serverCores, String(pid)], { stdio: 'ignore' });
}

async function load(base: string, seconds: number): Promise<Omit<Measurement, 'rounds'>> {
  const result = await autocannon({ url: base + ROUTE.path, connections: CONNECTIONS, pipelining: PIPELINING, duration: seconds });
  return { reqPerSec: result.requests.average, p99: result.latency.p99, errors: result.errors, non2xx: result.non2xx };
}

/** Status and store of one answer: 200 with the rate-limit headers, else what went wrong. */
async function check(base: string): Promise<string | null> {
  const res = await fetch(base + ROUTE.path);
  const text = await res.text();
  if (res.status !== 200 || res.headers.get('ratelimit-limit') === null) return `status ${res.status}, body ${text.slice(0, 200)}`;
  return null;
}

/** Load on the Redis server while `outage` holds: p99 and the answers. */
async function outageRow(name: string, base: string): Promise<string[]> {
  const result = await autocannon({ url: base + ROUTE.path, connections: CONNECTIONS, pipelining: PIPELINING, duration: OUTAGE_S });
  const p99 = result.latency.p99;
  const verdict = p99 < OUTAGE_P99_BOUND_MS && result.errors === 0 && result.timeouts === 0 ? 'PASS' : 'MISS';
  return [
    name,
    fmt(result.requests.average),
    String(p99),
    String(result.latency.max),
    `2xx ${result['2xx']}, 5xx ${result['5xx']}, errors ${result.errors}, timeouts ${result.timeouts}`,
    `${verdict} p99 < ${OUTAGE_P99_BOUND_MS} ms`,
  ];
}

/** Waits until the server answers 200 again (Redis back). */
async function recovered(base: string): Promise<boolean> {
  const deadline = Date.now() + RECOVERY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if ((await fetch(base + ROUTE.path)).status === 200) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

async function main(): Promise<void> {
  const redis: RedisServer = await startRedis();
  pinToServerCore(redis.pid());
  const client = new Redis(redis.url, { lazyConnect: true });
  await client.connect();
  const servers: [string, string[], NodeJS.ProcessEnv][] = [
    ['in-process', [], {}],
    ['IPC (--workers 1)', ['--workers', '1'], {}],
    ['Redis', [], { REDIS_URL: redis.url }],
  ];
  const running = new Map<string, ServerChild>();
  const results: Results = new Map();
  try {
    for (const [name, extra, env] of servers) {
      const server = await spawnServer(PIN, (port) => [CLI, 'run', APP, '--prod', '--port', String(port), ...extra], env);
      // The workers inherit the primary's pinning; checked here so a wrong set-up is not measured.
      if (name.startsWith('IPC') && childPids(server.child.pid!).length !== 1)
        throw new Error(`${name}: expected one worker, found ${childPids(server.child.pid!).length}`);
      running.set(name, server);
      results.set(name, new Map());
      // Whether its check wrote to Redis tells which store served it.
      const keys = await client.dbsize();
      const problem = await check(server.base);
      if (problem) throw new Error(`${name}: ${problem}`);
      const wrote = (await client.dbsize()) > keys;
      if (wrote !== (name === 'Redis')) throw new Error(`${name}: its rate limit ${wrote ? 'wrote to' : 'did not write to'} Redis`);
    }
    // Not needed any more, and it would complain through the outages below.
    client.disconnect();
    await measureSideBySide(running, [ROUTE], results, {
      check: (s) => check(s.base),
      load: (s, _route, seconds) => load(s.base, seconds),
      cpu: (s) => serverCpuSeconds(s.child.pid),
      warmupS: WARMUP_S,
      durationS: DURATION_S,
      rounds: ROUNDS,
    });

    const base = measurement(results, 'in-process', ROUTE.name);
    const rows: string[][] = [];
    const verdicts: string[] = [];
    for (const [name] of servers) {
      const m = measurement(results, name, ROUTE.name);
      if (!m || !base) {
        rows.push([name, '-', '-', '-', '-', String(results.get(name)?.get(ROUTE.name) ?? 'not measured')]);
        continue;
      }
      const paired = pairedRatio(m.rounds, base.rounds);
      rows.push([
        name,
        fmt(m.reqPerSec),
        String(m.p99),
        cpuCell(m),
        paired ? `${paired.ratio.toFixed(3)}× (${paired.range})` : '-',
        m.errors + m.non2xx > 0 ? `${m.errors} errors, ${m.non2xx} non-2xx` : '',
      ]);
      const target = TARGETS[name];
      if (target !== undefined && paired)
        verdicts.push(`${paired.ratio >= target ? 'PASS' : 'MISS'}  ${name} ≥ ${target}× in-process req/s (${paired.ratio.toFixed(3)}×)`);
    }

    const redisBase = running.get('Redis')!.base;
    const outages: string[][] = [];
    await redis.stop();
    outages.push(await outageRow('Redis stopped', redisBase));
    await redis.start();
    pinToServerCore(redis.pid());
    if (!(await recovered(redisBase))) throw new Error(`the Redis server did not answer 200 within ${RECOVERY_TIMEOUT_MS} ms of Redis being back`);
    redis.pause();
    try {
      outages.push(await outageRow('Redis hung (SIGSTOP)', redisBase));
    } finally {
      redis.resume();
    }

    console.log(`\nShared store benchmark — ${machineDescription()}`);
    console.log(
      `autocannon: ${CONNECTIONS} connections, ${PIPELINING} requests in flight on each, loopback; ${WARMUP_S} s warm-up per server, then ${DURATION_S} s measured in ${ROUNDS} rotating rounds (req/s: median of the rounds; ratios: median of the per-round ratios); ${PIN.note}${PIN.serverCores !== null ? ', redis-server and the workers with the servers' : ''}\n`,
    );
    console.log(formatTable(['store (GET /limited)', 'req/s', 'p99 ms', 'CPU µs/req', 'vs in-process', 'notes'], rows));
    console.log(`\nThe Redis server with Redis down, ${OUTAGE_S} s of load each:\n`);
    console.log(formatTable(['outage', 'req/s', 'p99 ms', 'max ms', 'answers', 'target'], outages));
    console.log('');
    for (const line of verdicts) console.log(line);
    for (const row of outages) console.log(`${row[5]!.slice(0, 4)}  ${row[0]}: p99 ${row[2]} ms`);
  } finally {
    client.disconnect();
    await Promise.all([...running.values()].map((s) => stopServer(s.child)));
    await redis.destroy();
  }
}

await main();
