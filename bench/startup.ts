/**
 * Start-up benchmark: an app of generated route files (bench/corpus.ts) loaded with loadApp from
 * an empty cache (cold: every file compiled and its artefact written) and from the cache the cold
 * run filled (warm: artefacts read and checked). Every run is a fresh child process, so nothing
 * is cached in memory; the child times loadApp itself, the parent the whole process.
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

/** Runs of each kind; the median of 5 shrugs off one slow start. */
const DEFAULT_RUNS = 5;
/** The design's target: a warm start at least this many times faster than a cold one. */
const TARGET_WARM_SPEEDUP = 5;
/** A child that takes longer than this has hung. */
const CHILD_TIMEOUT_MS = 120_000;

const CHILD = join(REPO_ROOT, 'dist/bench/startup-child.js');

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
  runStartupBench(positiveEnv('BENCH_FILES', DEFAULT_FILE_COUNT)).catch((err: unknown) => {
    console.error(`start-up benchmark failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  });
}
