/**
 * Small helpers the benchmarks share: where the repository is, free ports, waiting for a child
 * server, the machine description and plain-text tables.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { spawnSync } from 'node:child_process';
import { availableParallelism, cpus } from 'node:os';
import { fileURLToPath } from 'node:url';

/** The repository root (this file runs as dist/bench/util.js). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** How often a starting server is polled, in ms: short enough not to inflate start-up waits. */
const POLL_INTERVAL_MS = 50;

/** A free TCP port on loopback, chosen by the kernel. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

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
  const line = (cells: readonly string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
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
 * Returns how to start a server (command and leading arguments) and a line for the report.
 */
export function pinning(): { command: string; prefix: string[]; note: string } {
  // Cores are counted before pinning: afterwards this process sees only its own.
  const wanted = process.env.BENCH_PIN !== '0' && availableParallelism() >= 2;
  if (!wanted || spawnSync('taskset', ['-cp', '1', String(process.pid)], { encoding: 'utf8' }).status !== 0) {
    return { command: process.execPath, prefix: [], note: 'servers and load generator share the cores' };
  }
  return { command: 'taskset', prefix: ['-c', '0', process.execPath], note: 'server pinned to core 0, load generator to core 1' };
}
