/**
 * The primary-held store's cost per operation: window hits through IPC from forked workers (the
 * test suite's worker, test/support/ipc-store-worker.ts) to a PrimaryStore in this process, with
 * BENCH_IN_FLIGHT in flight per worker, from one worker and from four at once; the in-process
 * window beside it.
 *
 * Env: BENCH_HITS (hits per worker, default 100000), BENCH_IN_FLIGHT (requests each worker keeps
 * waiting, default 50; a loaded HTTP worker batches about 400).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { PrimaryStore, type IpcChannel } from '../vm/runtime/stores/ipc.js';
import { createSlidingWindows } from '../vm/runtime/stores/sliding-window.js';
import { positiveEnv } from './util.js';

const HITS = positiveEnv('BENCH_HITS', 100_000);
/** Requests each worker keeps waiting: about what a worker serving 50 concurrent connections has. */
const IN_FLIGHT = positiveEnv('BENCH_IN_FLIGHT', 50);
const WORKER = fileURLToPath(new URL('../test/support/ipc-store-worker.js', import.meta.url));

const next = (child: ChildProcess, done: string): Promise<{ ms: number }> =>
  new Promise((resolve) => {
    const on = (m: { harness?: unknown; done?: string; ms: number }): void => {
      if (m?.harness !== true || m.done !== done) return;
      child.off('message', on);
      resolve(m);
    };
    child.on('message', on);
  });

async function run(workers: number): Promise<number> {
  const primary = new PrimaryStore();
  const children = Array.from({ length: workers }, () => {
    const c = fork(WORKER, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    primary.attach(c as unknown as IpcChannel);
    return c;
  });
  await Promise.all(children.map((c) => next(c, 'ready')));
  const started = performance.now();
  await Promise.all(
    children.map((c) => {
      c.send({ cmd: 'bench', n: HITS, inFlight: IN_FLIGHT });
      return next(c, 'bench');
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  for (const c of children) c.disconnect();
  primary.close();
  return (HITS * workers) / seconds;
}

const windows = createSlidingWindows();
const t0 = performance.now();
for (let i = 0; i < 1_000_000; i++) windows.hit(`bench-${i % 64}`, 1_000_000, 60_000, Date.now());
const inProcess = 1_000_000 / ((performance.now() - t0) / 1000);
const one = await run(1);
const four = await run(4);
const k = (n: number): string => `${Math.round(n / 1000)}k`;
console.log(`window hits/s: in process ${k(inProcess)}; over IPC, ${IN_FLIGHT} in flight per worker: 1 worker ${k(one)}, 4 workers ${k(four)} in total`);
