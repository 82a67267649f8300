/**
 * Small helpers the benchmarks share: where the repository is, free ports, waiting for a child
 * server, the machine description and plain-text tables.
 */
import { readFileSync } from 'node:fs';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { availableParallelism, cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/support/free-port.js';
import { childPids } from '../test/support/rvm-cluster.js';
export { freePort };

/** The repository root (this file runs as dist/bench/util.js). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** How often a starting server is polled, in ms: short enough not to inflate start-up waits. */
const POLL_INTERVAL_MS = 50;

/** Resolves once `url` answers any HTTP response; rejects after `timeoutMs` or when `alive()` turns false. */
export async function waitForServer(url: string, timeoutMs: number, alive: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown = null;
  while (Date.now() < deadline) {
    if (!alive()) throw new Error(`server for ${url} exited before it answered`);
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      return;
    } catch (err) {
      lastError = err;
    }
    await new Promise((r) => setTimeout(r, POLL_INTERVAL_MS));
  }
  throw new Error(`server for ${url} did not answer within ${timeoutMs} ms (${String(lastError)})`);
}

/** `node vX, CPU model × cores` for result headers. */
export function machineDescription(): string {
  let model = cpus()[0]?.model ?? 'unknown CPU';
  try {
    const match = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    if (match?.[1]) model = match[1].trim();
  } catch {
    // Not Linux: os.cpus() already gave the model.
  }
  return `node ${process.version}, ${model}, ${cpus().length} cores`;
}

/** Renders rows as a left-aligned text table with a header rule. */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** A number with thousands separators and `digits` decimals. */
export function fmt(n: number, digits = 0): string {
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** Median of a non-empty list. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/**
 * `a`'s rate over `b`'s from rounds that ran back to back: the median of the per-round ratios
 * (pairing cancels the slow drifts of a shared machine that a ratio of two medians keeps), and
 * the rounds' range as text, so a near miss reads as one. Null when the rounds do not pair.
 */
export function pairedRatio(a: readonly number[], b: readonly number[]): { ratio: number; range: string } | null {
  if (a.length === 0 || a.length !== b.length) return null;
  const ratios = a.map((v, i) => v / b[i]!);
  return { ratio: median(ratios), range: `rounds ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}` };
}

/**
 * CPU pinning for the HTTP benchmarks: on a machine of two cores or more with `taskset`, servers
 * run on core 0 and the load generator (this process) on core 1, so neither steals the other's
 * core and ratios between servers stop depending on the scheduler. BENCH_PIN=0 turns it off.
 * Returns how to start a server (command and leading arguments), a line for the report, and the
 * servers' cores as taskset takes them (null when not pinned), for processes started otherwise.
 */
export function pinning(): { command: string; prefix: string[]; note: string; serverCores: string | null } {
  // Cores are counted before pinning: afterwards this process sees only its own.
  const wanted = process.env.BENCH_PIN !== '0' && availableParallelism() >= 2;
  if (!wanted || spawnSync('taskset', ['-cp', '1', String(process.pid)], { encoding: 'utf8' }).status !== 0) {
    return { command: process.execPath, prefix: [], note: 'servers and load generator share the cores', serverCores: null };
  }
  return { command: 'taskset', prefix: ['-c', '0', process.execPath], note: 'server pinned to core 0, load generator to core 1', serverCores: '0' };
}

/** One server on one route: median req/s and p99 over the rounds, and what went wrong. */
export interface Measurement {
  reqPerSec: number;
  p99: number;
  errors: number;
  non2xx: number;
  /** req/s of each round, in round order (a server's round i ran next to the others' round i). */
  rounds: number[];
  /**
   * The server's own CPU time per request, in µs (its processes, user + system; median of the
   * rounds), when the benchmark can read it. Unlike req/s it does not depend on whether the load
   * generator kept up: on a machine where autocannon saturates its core, req/s ratios are squeezed
   * toward 1 and this is the figure that still tells two servers apart.
   */
  cpuUsPerRequest?: number;
}

/** Figures by server, then by route name; text where a server could not be measured. */
export type Results = Map<string, Map<string, Measurement | string>>;

/** How a side-by-side benchmark checks and loads one server on one route. */
export interface SideBySide<S, R> {
  /** A problem with the server's answer (so a fast wrong answer is never measured), or null. */
  check(server: S, route: R): Promise<string | null>;
  load(server: S, route: R, seconds: number): Promise<Omit<Measurement, 'rounds'>>;
  /** The CPU seconds the server's processes have used so far (serverCpuSeconds), or null when unknown. */
  cpu?(server: S): number | null;
  warmupS: number;
  durationS: number;
  rounds: number;
}

/**
 * Measures route by route in rounds; within a round every server takes its turn, the order
 * rotating from round to round, so a slow patch of a shared machine does not land on one server
 * alone. Each figure is the median over the rounds. Idle servers cost nothing.
 */
export async function measureSideBySide<S, R extends { name: string }>(
  running: Map<string, S>,
  routes: readonly R[],
  results: Results,
  how: SideBySide<S, R>,
): Promise<void> {
  const names = [...running.keys()];
  for (const route of routes) {
    const live = new Set<string>();
    for (const name of names) {
      const problem = await how.check(running.get(name)!, route);
      if (problem === null) {
        live.add(name);
        await how.load(running.get(name)!, route, how.warmupS);
      } else {
        results.get(name)!.set(route.name, `wrong answer: ${problem}`);
        console.error(`[${name}] ${route.name}: wrong answer: ${problem}`);
      }
    }
    const samples = new Map<string, Omit<Measurement, 'rounds'>[]>([...live].map((name) => [name, []]));
    const seconds = how.durationS / how.rounds;
    for (let round = 0; round < how.rounds; round++) {
      const shift = round % names.length;
      for (const name of [...names.slice(shift), ...names.slice(0, shift)]) {
        if (!live.has(name)) continue;
        const server = running.get(name)!;
        const cpuBefore = how.cpu?.(server) ?? null;
        const m = await how.load(server, route, seconds);
        const cpuAfter = how.cpu?.(server) ?? null;
        if (cpuBefore !== null && cpuAfter !== null && m.reqPerSec > 0) m.cpuUsPerRequest = ((cpuAfter - cpuBefore) * 1e6) / (m.reqPerSec * seconds);
        samples.get(name)!.push(m);
        const cpu = m.cpuUsPerRequest === undefined ? '' : `, ${fmt(m.cpuUsPerRequest, 1)} µs CPU a request`;
        console.error(`[${name}] ${route.name} round ${round + 1}/${how.rounds}: ${fmt(m.reqPerSec)} req/s, p99 ${m.p99} ms${cpu}`);
      }
    }
    for (const [name, list] of samples) {
      const cpu = list.flatMap((m) => (m.cpuUsPerRequest === undefined ? [] : [m.cpuUsPerRequest]));
      results.get(name)!.set(route.name, {
        reqPerSec: median(list.map((m) => m.reqPerSec)),
        rounds: list.map((m) => m.reqPerSec),
        p99: median(list.map((m) => m.p99)),
        errors: list.reduce((n, m) => n + m.errors, 0),
        non2xx: list.reduce((n, m) => n + m.non2xx, 0),
        ...(cpu.length === list.length ? { cpuUsPerRequest: median(cpu) } : {}),
      });
    }
  }
}

/** Linux's USER_HZ, the unit of /proc/<pid>/stat's times: 100 on every architecture Node runs on. */
const CLOCK_TICKS_PER_SECOND = 100;

/**
 * CPU seconds (user + system) used so far by process `pid` and its children (a cluster's
 * workers, as the cluster tests find them: childPids), from Linux's /proc; null where that cannot
 * be read. Clock ticks are 10 ms, so a round of a second reads it to about 1 %.
 */
export function serverCpuSeconds(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  let ticks = 0;
  for (const p of [pid, ...childPids(pid)]) {
    try {
      // Fields after the command (which may hold spaces): utime and stime are the 12th and 13th.
      const fields = readFileSync(`/proc/${p}/stat`, 'utf8')
        .replace(/^.*\) /s, '')
        .split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      return null;
    }
  }
  return ticks / CLOCK_TICKS_PER_SECOND;
}

/** A measurement's CPU µs per request as a table cell ('-' when it was not read). */
export function cpuCell(m: Measurement): string {
  return m.cpuUsPerRequest === undefined ? '-' : fmt(m.cpuUsPerRequest, 1);
}

/** A server's figure on a route, or null when it has none. */
export function measurement(results: Results, server: string, route: string): Measurement | null {
  const m = results.get(server)?.get(route);
  return m && typeof m === 'object' ? m : null;
}

/** A positive number from the environment variable `name`, else `fallback`. */
export function positiveEnv(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

/** The load the side-by-side HTTP benchmarks (bench/http.ts, bench/records.ts) put on each server; the environment overrides each. */
export const HTTP_LOAD = {
  /** Seconds of measured load per route and server, split into the rounds (BENCH_DURATION). */
  durationS: positiveEnv('BENCH_DURATION', 12),
  /** Seconds of unmeasured load first, so the JIT (and SQLite's page cache) are warm (BENCH_WARMUP). */
  warmupS: positiveEnv('BENCH_WARMUP', 2),
  /**
   * Rounds the measured time is split into: 1 s each (BENCH_ROUNDS). The shared machine's
   * disturbances come in bursts that can spoil a whole round (per-round ratios of 0.65–1.68 seen
   * on 2026-11-25), so more, shorter pairs let the median outvote them.
   */
  rounds: Math.max(1, Math.floor(positiveEnv('BENCH_ROUNDS', 12))),
  /** Concurrent connections: enough to keep one server core saturated on loopback (BENCH_CONNECTIONS). */
  connections: positiveEnv('BENCH_CONNECTIONS', 64),
  /**
   * Requests in flight per connection (BENCH_PIPELINING). Without pipelining autocannon needs a
   * whole core to keep up with a node server (measured on the 2-core machine: server 99 %,
   * autocannon 98 %), so the client bounds the rate and the servers' ratios are squeezed toward
   * 1. With 10 in flight the client idles a fifth of the time and the server's cost per request
   * decides, as in Fastify's own benchmarks (`autocannon -c 100 -p 10`).
   */
  pipelining: Math.max(1, Math.floor(positiveEnv('BENCH_PIPELINING', 10))),
};

/** How long a benchmarked server may take to start answering (rvm compiles its app first). */
const START_TIMEOUT_MS = 30_000;
/** How long a server may take to shut down on SIGTERM before it is killed. */
const STOP_GRACE_MS = 2000;
/** Tail of a server's stderr kept for the error when it fails to start. */
const STDERR_KEEP_CHARS = 4000;

/** A benchmarked server child and where it answers. */
export interface ServerChild {
  child: ChildProcess;
  base: string;
}

/**
 * Spawns `node args` (pinned by `pin`) on a free port, with `env` over this process's environment,
 * stdout discarded as in production, and waits until `/hello` answers; a server that fails to start is killed and its stderr reported.
 */
export async function spawnServer(
  pin: { command: string; prefix: string[] },
  args: (port: number) => string[],
  env: NodeJS.ProcessEnv = {},
): Promise<ServerChild> {
  const port = await freePort();
  const child = spawn(pin.command, [...pin.prefix, ...args(port)], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, ...env, NODE_ENV: 'production' },
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_KEEP_CHARS);
  });
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitForServer(`${base}/hello`, START_TIMEOUT_MS, () => child.exitCode === null && child.signalCode === null);
  } catch (err) {
    child.kill('SIGKILL');
    throw new Error(`${err instanceof Error ? err.message : String(err)}\n${stderr.trim()}`);
  }
  return { child, base };
}

/** Stops a server child: SIGTERM, then SIGKILL after STOP_GRACE_MS. */
export function stopServer(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS).unref();
  });
}
