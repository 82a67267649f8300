/**
 * Start-up benchmark. First the CLI's own start: `rvm --version` (wall time) and `rvm check` of a
 * two-file app (CPU time of the whole process), beside node's own start, and which drivers
 * `rvm run` of that app (no records, no Redis) loads — none, as dependencies load on first use.
 * Then an app of generated route files (bench/corpus.ts) loaded with loadApp from an empty cache
 * (cold: every file compiled and its artefact written) and from the cache the cold run filled
 * (warm: artefacts read and checked). Every run is a fresh child process, so nothing is cached in
 * memory; the child times loadApp itself, the parent the whole process.
 *
 * Run alone: `node dist/bench/startup.js` (env BENCH_FILES, BENCH_STARTUP_RUNS).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { countLines, DEFAULT_FILE_COUNT, generateCorpus, writeCorpus } from './corpus.js';
import { REPO_ROOT, fmt, formatTable, machineDescription, median } from './util.js';
import { loadedModulesEnv, loadedPackages } from '../test/support/loaded-modules.js';
import { RVM_CLI, RVM_START_TIMEOUT_MS, startRvmServer } from '../test/support/rvm-cluster.js';

/** Runs of each kind; the median of 5 shrugs off one slow start. */
const DEFAULT_RUNS = 5;
/** The design's target: a warm start at least this many times faster than a cold one. */
const TARGET_WARM_SPEEDUP = 5;
/** A child that takes longer than this has hung. */
const CHILD_TIMEOUT_MS = 120_000;

const CHILD = join(REPO_ROOT, 'dist/bench/startup-child.js');

/** Targets of the CLI's start (bench/README.md): `rvm --version` wall time, `rvm check` of a two-file app CPU time. */
const TARGET_VERSION_WALL_MS = 100;
const TARGET_CHECK_CPU_MS = 300;
/** Drivers `rvm run` of an app without records or Redis must not load. */
const DRIVERS = ['pg', 'ioredis', 'better-sqlite3'];
/**
 * Preloaded into each measured process: writes the CPU time of the whole process (user + system,
 * node's own start included) to stderr as it exits, so the parent reads a child's CPU time
 * without a platform tool.
 */
const CPU_AT_EXIT =
  "data:text/javascript,import{writeSync}from'node:fs';process.on('exit',()=>{const u=process.cpuUsage();writeSync(2,'\\ncpu-us '+(u.user+u.system)+'\\n')})";

interface ProcessCost {
  wallMs: number;
  cpuMs: number;
}

interface Run {
  loadMs: number;
  processMs: number;
}

function positiveEnv(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? Math.floor(value) : fallback;
}

function runChild(dir: string): Run {
  const started = performance.now();
  const child = spawnSync(process.execPath, [CHILD, dir], { encoding: 'utf8', timeout: CHILD_TIMEOUT_MS });
  const processMs = performance.now() - started;
  if (child.status !== 0) throw new Error(`start-up child failed (${child.status ?? child.signal}): ${child.stderr.trim() || child.stdout.trim()}`);
  const { loadMs } = JSON.parse(child.stdout.trim().split('\n').pop() ?? '{}') as { loadMs: number };
  return { loadMs, processMs };
}

/** Runs `node ARGS` once; its wall time as the parent sees it and its own CPU time. */
function processCost(args: readonly string[]): ProcessCost {
  const started = performance.now();
  const child = spawnSync(process.execPath, ['--import', CPU_AT_EXIT, ...args], { encoding: 'utf8', timeout: CHILD_TIMEOUT_MS });
  const wallMs = performance.now() - started;
  const cpu = /cpu-us (\d+)\s*$/.exec(child.stderr);
  if (child.status !== 0 || cpu === null)
    throw new Error(`node ${args.join(' ')} failed (${child.status ?? child.signal}): ${child.stderr.trim() || child.stdout.trim()}`);
  return { wallMs, cpuMs: Number(cpu[1]) / 1000 };
}

/** The median wall and CPU time of `runs` fresh processes of `node ARGS`. */
function medianCost(args: readonly string[], runs: number): ProcessCost {
  const costs = Array.from({ length: runs }, () => processCost(args));
  return { wallMs: median(costs.map((c) => c.wallMs)), cpuMs: median(costs.map((c) => c.cpuMs)) };
}

/** The packages `rvm run DIR` loads by the time it has served one request. */
async function packagesOfRun(dir: string): Promise<string[]> {
  const record = join(dir, '.loaded-modules.txt');
  const server = await startRvmServer(dir, { env: { ...loadedModulesEnv(record), REDIS_URL: '', DATABASE_URL: '' } });
  try {
    await server.waitFor(/Store:/, RVM_START_TIMEOUT_MS);
    const res = await fetch(`${server.url}/hello`);
    if (res.status !== 200) throw new Error(`GET /hello answered ${res.status}`);
  } finally {
    await server.stop();
  }
  return loadedPackages(record);
}

/** Measures the CLI's start (`rvm --version`, `rvm check`, the drivers `rvm run` loads) and prints the result. */
export async function runCliStartupBench(runs: number = positiveEnv('BENCH_STARTUP_RUNS', DEFAULT_RUNS)): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'rvm-bench-cli-'));
  try {
    // The two files `rvm new` writes: hello.rvm (GET and a validated POST /hello) and _middleware.rvm.
    const created = spawnSync(process.execPath, [RVM_CLI, 'new', dir], { encoding: 'utf8' });
    if (created.status !== 0) throw new Error(`rvm new failed: ${created.stderr}`);
    const node = medianCost(['-e', '0'], runs);
    const version = medianCost([RVM_CLI, '--version'], runs);
    const check = medianCost([RVM_CLI, 'check', dir], runs);
    const loaded = await packagesOfRun(dir);
    const drivers = DRIVERS.filter((name) => loaded.includes(name));
    console.log(`\nCLI start-up — ${machineDescription()}`);
    console.log(`median of ${runs} fresh processes each; CPU is the whole process's (user + system), node's own start included\n`);
    console.log(
      formatTable(
        ['command', 'wall ms', 'CPU ms'],
        [
          ['node -e 0 (node alone)', fmt(node.wallMs, 1), fmt(node.cpuMs, 1)],
          ['rvm --version', fmt(version.wallMs, 1), fmt(version.cpuMs, 1)],
          ['rvm check (two-file app)', fmt(check.wallMs, 1), fmt(check.cpuMs, 1)],
        ],
      ),
    );
    console.log(
      `\n${version.wallMs <= TARGET_VERSION_WALL_MS ? 'PASS' : 'MISS'}  rvm --version ≤ ${TARGET_VERSION_WALL_MS} ms wall (${fmt(version.wallMs, 1)} ms)`,
    );
    console.log(`${check.cpuMs <= TARGET_CHECK_CPU_MS ? 'PASS' : 'MISS'}  rvm check ≤ ${TARGET_CHECK_CPU_MS} ms CPU (${fmt(check.cpuMs, 1)} ms)`);
    console.log(
      `${drivers.length === 0 ? 'PASS' : 'FAIL'}  rvm run without records or Redis loads none of ${DRIVERS.join(', ')} (loaded: ${drivers.join(', ') || 'none'}; ${loaded.length} packages in all: ${loaded.join(', ')})`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Measures cold and warm loadApp on a generated app of `fileCount` route files and prints the result. */
export async function runStartupBench(fileCount: number = DEFAULT_FILE_COUNT, runs: number = positiveEnv('BENCH_STARTUP_RUNS', DEFAULT_RUNS)): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'rvm-bench-startup-'));
  const corpus = generateCorpus(fileCount);
  writeCorpus(dir, corpus);
  const cold: Run[] = [];
  const warm: Run[] = [];
  try {
    for (let i = 0; i < runs; i++) {
      rmSync(join(dir, '.rvm'), { recursive: true, force: true });
      cold.push(runChild(dir));
      warm.push(runChild(dir));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const coldLoad = median(cold.map((r) => r.loadMs));
  const warmLoad = median(warm.map((r) => r.loadMs));
  const ratio = coldLoad / warmLoad;
  console.log(`\nStart-up — ${machineDescription()}`);
  console.log(`app: ${corpus.length} files, ${fmt(countLines(corpus))} lines; median of ${runs} fresh processes each\n`);
  console.log(
    formatTable(
      ['start', 'loadApp ms', 'whole process ms'],
      [
        ['cold (empty cache)', fmt(coldLoad, 1), fmt(median(cold.map((r) => r.processMs)), 1)],
        ['warm (cache filled)', fmt(warmLoad, 1), fmt(median(warm.map((r) => r.processMs)), 1)],
      ],
    ),
  );
  console.log(`\n${ratio >= TARGET_WARM_SPEEDUP ? 'PASS' : 'MISS'}  warm loadApp ≥ ${TARGET_WARM_SPEEDUP}× faster than cold (${ratio.toFixed(1)}×)`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runCliStartupBench()
    .then(() => runStartupBench(positiveEnv('BENCH_FILES', DEFAULT_FILE_COUNT)))
    .catch((err: unknown) => {
      console.error(`start-up benchmark failed: ${err instanceof Error ? err.message : String(err)}`);
      process.exitCode = 1;
    });
}
