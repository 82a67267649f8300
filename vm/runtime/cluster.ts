/**
 * The process model of `rvm run --workers N` (spec/deploy.md, "One machine"). The primary only
 * supervises: it forks the workers, restarts one that dies (at most MAX_RESTARTS_PER_MINUTE a
 * minute, then it stops rather than spin), holds the state they share (the primary-held store,
 * spec/stores.md), announces the start once every worker listens, and turns a signal into one
 * graceful shutdown of them all. A worker serves, tells the primary where, and shuts down on its
 * word.
 *
 * Both sides are written against what they need of node:cluster and of their process
 * (PrimaryHost, WorkerHost), so tests drive them with fake channels; NODE_PRIMARY and NODE_WORKER
 * are the real ones. What a worker serves, and how the start is announced, is the caller's.
 */
import cluster from 'node:cluster';
import { createSecretSource } from './secrets.js';
import { IpcStore, PrimaryStore, type IpcChannel, type PrimaryStoreOptions } from './stores/ipc.js';
import type { WorkerStore } from './stores/open.js';

/** A supervisor that restarts crashing workers more often than this per minute gives up instead of spinning. */
export const MAX_RESTARTS_PER_MINUTE = 10;

/** A start line a plugin announced (`PluginApi.announce`). */
export interface Announced {
  label: string;
  text: string;
}

/** What a worker tells the primary once it listens: what the start's announcement says. */
export interface Listening {
  url: string;
  /** Whether the API reference is served. */
  reference: boolean;
  /** Which store serves `ctx.store` (App.storeDescription). */
  store: string;
  /** The start lines the plugins announced (App.announcements). */
  announced: Announced[];
}

/** The messages between the primary and its workers (the store's own are ipc-codec.ts's). */
export type ClusterMessage = { rvm: 'listening'; listening: Listening } | { rvm: 'shutdown' };

/** The kind of cluster message `m` is, if it is one. */
const kindOf = (m: unknown): ClusterMessage['rvm'] | undefined => (m as ClusterMessage | null)?.rvm;

/** One worker, as the primary sees it. */
export interface WorkerProcess {
  /** Its IPC channel: the store's requests and replies, and the cluster's messages. */
  readonly channel: IpcChannel;
  readonly pid: number | undefined;
  /** Calls `listener` once it has exited, with its exit code or the signal that ended it. */
  onExit(listener: (code: number | null, signal: string | null) => void): void;
  kill(signal: 'SIGTERM' | 'SIGKILL'): void;
}

/** What the supervisor needs of node:cluster and of its own process. */
export interface PrimaryHost {
  /** Starts a worker with `env` laid over this process's environment (a variable `env` leaves undefined is unset). */
  fork(env: Record<string, string | undefined>): WorkerProcess;
  /** Calls `listener` on each SIGINT and SIGTERM. */
  onSignal(listener: () => void): void;
  exit(code: number): void;
  /** Epoch ms, for the restart cap. */
  now(): number;
}

export interface SuperviseOptions {
  workers: number;
  /** The workers' environment; APP_SECRET is laid over it. */
  env: Record<string, string | undefined>;
  /** The app folder whose `.secrets/` keeps a generated APP_SECRET; null for a bundle, which has none. */
  appDir: string | null;
  /** The shared store's key caps (rvm.config.json's `store`). */
  store?: PrimaryStoreOptions['state'];
  /** Announces the start, once, with what the worker that completes it said. */
  announce(listening: Listening): void;
  /** Says what happened to a worker, a line at a time. */
  log(line: string): void;
}

/** The cluster primary: forks `o.workers` workers and supervises them until a signal or a failure; answers the store they share. */
export function supervise(host: PrimaryHost, o: SuperviseOptions): PrimaryStore {
  // Read or generated here, once, and handed to every worker (and every replacement) in its
  // environment: a bundle has no `.secrets/` to share it through, and workers generating their own
  // would refuse each other's CSRF tokens, cookies and codes.
  const env = { ...o.env, APP_SECRET: createSecretSource(o.appDir, o.env).appSecret() };
  // The state the workers share (ctx.store) when no Redis is configured: held here, so it
  // outlives any one worker.
  const shared = new PrimaryStore({ state: o.store });
  const alive = new Set<WorkerProcess>();
  /** The live workers that listen: the start is announced once they are `o.workers`. */
  const listening = new Set<WorkerProcess>();
  /** When each restart of the last minute happened. */
  const restarts: number[] = [];
  let announced = false;
  let shuttingDown = false;
  let exitCode = 0;

  const exit = (code: number): void => {
    shared.close();
    host.exit(code);
  };

  const shutdown = (code: number): void => {
    if (shuttingDown) {
      // A second signal: stop waiting for graceful closes.
      for (const w of alive) w.kill('SIGKILL');
      return exit(1);
    }
    shuttingDown = true;
    exitCode = code;
    if (alive.size === 0) return exit(exitCode);
    for (const w of alive) {
      w.channel.send({ rvm: 'shutdown' } satisfies ClusterMessage, (error) => {
        if (error) w.kill('SIGTERM');
      });
    }
  };

  const exited = (w: WorkerProcess, code: number | null, signal: string | null): void => {
    alive.delete(w);
    const hasListened = listening.delete(w);
    if (shuttingDown) {
      if (alive.size === 0) exit(exitCode);
      return;
    }
    const how = signal ? `signal ${signal}` : `code ${code}`;
    if (!hasListened) {
      o.log(`a worker failed to start (${how}); stopping`);
      return shutdown(1);
    }
    const now = host.now();
    restarts.push(now);
    while (restarts[0]! < now - 60_000) restarts.shift();
    if (restarts.length > MAX_RESTARTS_PER_MINUTE) {
      o.log(`workers keep crashing (${restarts.length} in a minute); stopping`);
      return shutdown(1);
    }
    o.log(`worker ${w.pid} exited (${how}); starting another`);
    fork();
  };

  const fork = (): void => {
    const w = host.fork(env);
    alive.add(w);
    const detach = shared.attach(w.channel);
    w.channel.on('message', (m) => {
      if (kindOf(m) !== 'listening') return;
      listening.add(w);
      if (!announced && listening.size === o.workers) {
        announced = true;
        o.announce((m as ClusterMessage & { rvm: 'listening' }).listening);
      }
    });
    w.onExit((code, signal) => {
      detach();
      exited(w, code, signal);
    });
  };

  host.onSignal(() => shutdown(0));
  for (let i = 0; i < o.workers; i++) fork();
  return shared;
}

/** What a worker needs of its process. */
export interface WorkerHost {
  /** The channel to the primary (in a worker: `process`). */
  readonly channel: IpcChannel;
  /** Calls `listener` on each SIGINT and SIGTERM. */
  onSignal(listener: () => void): void;
  exit(code: number): void;
}

/** What a worker serves: what it tells the primary, and how it stops serving. */
export interface WorkerServing {
  listening: Listening;
  close(): Promise<void>;
}

/**
 * A cluster worker: serves with the store `serve` is given (the primary's, over the channel),
 * tells the primary once it listens, and shuts down once, on the primary's word, a signal, or
 * the loss of the primary. A `serve` that fails rejects: the process ends and the primary stops
 * the run.
 */
export async function work(host: WorkerHost, serve: (store: WorkerStore) => Promise<WorkerServing>): Promise<void> {
  // Unless Redis is configured, `ctx.store` is the primary's: rate limits, one-time codes and
  // replay marks hold across the workers.
  const { listening, close } = await serve((log) => new IpcStore(host.channel, { log }));
  let closing = false;
  const shutdown = (): void => {
    if (closing) return;
    closing = true;
    close().then(
      () => host.exit(0),
      () => host.exit(1),
    );
  };
  // A terminal's Ctrl-C reaches every process of the group and the primary forwards it too:
  // both lead to the same single graceful close.
  host.onSignal(shutdown);
  host.channel.on('disconnect', shutdown);
  host.channel.on('message', (m) => {
    if (kindOf(m) === 'shutdown') shutdown();
  });
  // A primary gone meanwhile is its disconnect, above.
  host.channel.send({ rvm: 'listening', listening } satisfies ClusterMessage, () => {});
}

/** Whether this process is a worker node:cluster forked (`rvm run --workers`). */
export const isClusterWorker = (): boolean => cluster.isWorker;

const onTerminationSignal = (listener: () => void): void => {
  process.on('SIGINT', listener);
  process.on('SIGTERM', listener);
};

/** The primary's host: node:cluster and this process. */
export const NODE_PRIMARY: PrimaryHost = {
  fork(env) {
    const w = cluster.fork(env);
    return {
      channel: w,
      pid: w.process.pid,
      onExit: (listener) => void w.once('exit', listener),
      kill: (signal) => void w.process.kill(signal),
    };
  },
  onSignal: onTerminationSignal,
  exit: (code) => process.exit(code),
  now: Date.now,
};

/** A worker's host: this process and its channel to the primary. */
export const NODE_WORKER: WorkerHost = {
  channel: process as unknown as IpcChannel,
  onSignal: onTerminationSignal,
  exit: (code) => process.exit(code),
};
