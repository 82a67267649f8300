/**
 * A worker process for the IPC store tests: forked with an IPC channel, it builds an IpcStore on
 * `process` and runs the load its parent (the primary) asks for, answering `{ harness: … }`
 * messages on the same channel the store's own requests use.
 */
import { IpcStore } from '../../vm/runtime/stores/ipc.js';

/** What the parent asks of a worker. */
export type WorkerCommand =
  | { cmd: 'hits'; key: string; n: number; limit: number; windowMs: number }
  | { cmd: 'cas'; keys: string[]; me: string }
  | { cmd: 'increment'; key: string; times: number }
  | { cmd: 'load'; key: string; limit: number; windowMs: number; inFlight: number }
  | { cmd: 'stop' }
  | { cmd: 'bench'; n: number; inFlight: number };

const store = new IpcStore();
const reply = (m: object): void => void process.send!({ harness: true, ...m });
let loading: { stop: boolean; allowed: number; done: Promise<unknown> } | null = null;

/** Runs `n` calls of `op`, at most `inFlight` at a time. */
async function pool(n: number, inFlight: number, op: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < n) await op(next++);
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, n) }, lane));
}

process.on('message', async (m: WorkerCommand & { harness?: unknown }) => {
  if (typeof m !== 'object' || m === null || !('cmd' in m)) return;
  switch (m.cmd) {
    case 'hits': {
      const results = await Promise.all(Array.from({ length: m.n }, () => store.hit(m.key, m.limit, m.windowMs)));
      return reply({ done: 'hits', allowed: results.filter((r) => r.allowed).length });
    }
    case 'cas': {
      const results = await Promise.all(m.keys.map((k) => store.compareAndSet(k, undefined, m.me)));
      return reply({ done: 'cas', won: m.keys.filter((_, i) => results[i]) });
    }
    case 'increment': {
      // Read, then swap only if nobody wrote in between: the pattern compareAndSet exists for.
      let retries = 0;
      for (let i = 0; i < m.times; i++) {
        for (;;) {
          const seen = (await store.get(m.key)) as number | undefined;
          if (await store.compareAndSet(m.key, seen, (seen ?? 0) + 1)) break;
          retries++;
        }
      }
      return reply({ done: 'increment', retries });
    }
    case 'load': {
      const state = { stop: false, allowed: 0, done: Promise.resolve() as Promise<unknown> };
      const lane = async (): Promise<void> => {
        while (!state.stop) if ((await store.hit(m.key, m.limit, m.windowMs)).allowed) state.allowed++;
      };
      state.done = Promise.all(Array.from({ length: m.inFlight }, lane));
      loading = state;
      return reply({ done: 'load-started' });
    }
    case 'stop': {
      const state = loading!;
      state.stop = true;
      await state.done;
      return reply({ done: 'stop', allowed: state.allowed });
    }
    case 'bench': {
      const started = process.hrtime.bigint();
      await pool(m.n, m.inFlight, (i) => store.hit(`bench-${process.pid}-${i % 64}`, 1_000_000, 60_000));
      return reply({ done: 'bench', ms: Number(process.hrtime.bigint() - started) / 1e6 });
    }
  }
});
process.on('disconnect', () => process.exit(0));
reply({ done: 'ready' });
