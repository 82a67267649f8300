/**
 * A real, throwaway Redis server for tests and benchmarks: Debian's `redis-server` on loopback
 * only, a free port, a temporary working directory, no persistence, protected mode on; killed at
 * exit if nobody destroyed it. A machine without Redis fails loudly: the suites must run. No
 * node:test here, so bench/ can use it too (test/support/redis.ts wraps it in a file's hooks).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';

/** Where Debian's redis-server package installs the server. */
export const REDIS_SERVER_BIN = '/usr/bin/redis-server';
/** How long a starting server may take to answer PING: a cold start takes ~20 ms; 10 s covers a loaded CI machine. */
export const REDIS_START_TIMEOUT_MS = 10_000;
/** How long a stopping server may take to exit before it is killed: it saves nothing, so it exits at once. */
const REDIS_STOP_TIMEOUT_MS = 5_000;
/** Pause between PING attempts while the server starts. */
const PING_RETRY_MS = 10;

/** A running (or stopped) throwaway server. */
export interface RedisServer {
  /** `redis://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
  /** Stops the server (SIGTERM, no save): open connections are cut, and the data is lost. */
  stop(): Promise<void>;
  /** Starts it again on the same port (empty: nothing is persisted). */
  start(): Promise<void>;
  /** Freezes the process (SIGSTOP): connections stay open and nothing answers, as a hung server. */
  pause(): void;
  /** Lets a paused server run again (SIGCONT). */
  resume(): void;
  /** Stops it and removes its directory. */
  destroy(): Promise<void>;
  /** The server's process id while it runs, else null (a benchmark pins it to a core). */
  pid(): number | null;
}

/** Whether a Redis server answers PING on `port` (one attempt). */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    let reply = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('error', () => done(false));
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1');
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
    socket.once('connect', () => socket.write('PING\r\n'));
  });
}

/** Starts and returns a throwaway server. */
export async function startRedis(): Promise<RedisServer> {
  if (!existsSync(REDIS_SERVER_BIN)) {
    throw new Error(
      `Redis is not installed (no ${REDIS_SERVER_BIN}): run .ci/run, which installs Debian's redis-server package, or apt-get install redis-server`,
    );
  }
  const dir = mkdtempSync(join(tmpdir(), 'rvm-redis-'));
  const port = await freePort();
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '',
    '--appendonly',
    'no',
    '--protected-mode',
    'yes',
    '--daemonize',
    'no',
    '--logfile',
    join(dir, 'log'),
  ];
  let child: ChildProcess | null = null;

  const start = async (): Promise<void> => {
    if (child) return;
    const proc = spawn(REDIS_SERVER_BIN, args, { stdio: 'ignore' });
    child = proc;
    let exited = false;
    proc.once('exit', () => {
      exited = true;
      if (child === proc) child = null;
    });
    const deadline = Date.now() + REDIS_START_TIMEOUT_MS;
    while (!(await ping(port))) {
      if (exited) throw new Error(`redis-server exited while starting on port ${port} (log: ${join(dir, 'log')})`);
      if (Date.now() > deadline) {
        proc.kill('SIGKILL');
        throw new Error(`redis-server did not answer PING on port ${port} within ${REDIS_START_TIMEOUT_MS} ms`);
      }
      await new Promise((r) => setTimeout(r, PING_RETRY_MS));
    }
  };

  const stop = async (): Promise<void> => {
    const proc = child;
    if (!proc) return;
    child = null;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    // A paused server would not act on SIGTERM until continued.
    proc.kill('SIGCONT');
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), REDIS_STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  };

  const atExit = () => {
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', atExit);

  const server: RedisServer = {
    url: `redis://127.0.0.1:${port}`,
    port,
    start,
    stop,
    pause() {
      child?.kill('SIGSTOP');
    },
    resume() {
      child?.kill('SIGCONT');
    },
    pid: () => child?.pid ?? null,
    async destroy() {
      try {
        await stop();
      } finally {
        process.off('exit', atExit);
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
  try {
    await start();
  } catch (error) {
    await server.destroy();
    throw error;
  }
  return server;
}
