/**
 * `rvm run` as a real process for tests: one server (or a primary and its `--workers`) on an app
 * folder, on a free port of 127.0.0.1, with the environment a test gives (REDIS_URL,
 * DATABASE_URL, the WhatsApp fake's settings…). It resolves once the server has announced itself
 * (its `Store:` line, the last of the banner, printed by the primary once every worker listens),
 * keeps everything it writes on stdout and stderr for the test to read, finds its workers' pids,
 * and stops it with its workers. No node:test here, so bench/ can use it too.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort } from './free-port.js';

/** The CLI as built by `tsc` (test/ and tools/ are compiled side by side). */
export const RVM_CLI = fileURLToPath(new URL('../../tools/cli.js', import.meta.url));
/** How long a server may take to announce itself: compiling the app and forking 4 workers on a loaded 2-core CI machine takes seconds. */
export const RVM_START_TIMEOUT_MS = 30_000;
/** How long a server may take to exit on SIGTERM (graceful close of every worker) before it is killed. */
const RVM_STOP_GRACE_MS = 5_000;

/** How to start a server. */
export interface RvmOptions {
  /** `--workers N` (omitted: one process). */
  workers?: number;
  /** Variables set over this process's environment. */
  env?: NodeJS.ProcessEnv;
  /** The port to listen on (default: a free one). */
  port?: number;
  /** `--prod` (default true). */
  prod?: boolean;
  /** More arguments after the others. */
  args?: readonly string[];
}

/** A running `rvm run`. */
export interface RvmServer {
  /** The primary (or the only) process. */
  readonly child: ChildProcess;
  /** `http://127.0.0.1:PORT`, without a trailing slash. */
  readonly url: string;
  readonly port: number;
  /** Everything written to stdout and stderr so far, interleaved as it came. */
  output(): string;
  /** Resolves with the output once `pattern` matches it (rejects after `timeoutMs` or when the server exits). */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<string>;
  /** The pids of the primary's live children (its workers), in no particular order. */
  workerPids(): number[];
  /** Whether the primary is still running. */
  alive(): boolean;
  /** SIGTERM to the primary (it shuts its workers down), SIGKILL to all after a grace period; resolves once the primary exited. */
  stop(): Promise<void>;
}

/** The pids of `pid`'s children (none when it has none or is gone). */
export function childPids(pid: number): number[] {
  try {
    return execFileSync('ps', ['--ppid', String(pid), '-o', 'pid='], { encoding: 'utf8' })
      .split('\n')
      .map((l) => Number(l.trim()))
      .filter((n) => Number.isInteger(n) && n > 0);
  } catch {
    // ps exits 1 when nothing matched.
    return [];
  }
}

/** Starts `rvm run DIR` and resolves once it has announced itself. */
export async function startRvmServer(dir: string, options: RvmOptions = {}): Promise<RvmServer> {
  const port = options.port ?? (await freePort());
  const args = [RVM_CLI, 'run', dir, '--port', String(port)];
  if (options.prod !== false) args.push('--prod');
  if (options.workers !== undefined) args.push('--workers', String(options.workers));
  args.push(...(options.args ?? []));
  // Not detached: a session of its own changes how the scheduler shares the CPU with it (Linux
  // autogroups), and with it the timing the tests see. Its workers are reached through the primary
  // (SIGTERM: it shuts them down) or by their pids.
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...options.env } });
  let text = '';
  const listeners = new Set<() => void>();
  const read = (d: Buffer): void => {
    text += d.toString();
    for (const l of listeners) l();
  };
  child.stdout!.on('data', read);
  child.stderr!.on('data', read);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const alive = (): boolean => child.exitCode === null && child.signalCode === null;
  /** SIGKILL to the workers, then the primary (so it does not fork replacements). */
  const killAll = (): void => {
    for (const pid of [...childPids(child.pid!), child.pid!]) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
  };
  const atExit = (): void => killAll();
  process.once('exit', atExit);
  child.once('exit', () => process.off('exit', atExit));

  const waitFor = (pattern: RegExp, timeoutMs: number): Promise<string> =>
    new Promise((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        listeners.delete(check);
        child.off('exit', onExit);
      };
      const check = (): void => {
        if (pattern.test(text)) {
          done();
          resolve(text);
        }
      };
      const onExit = (code: number | null, signal: string | null): void => {
        done();
        reject(new Error(`rvm run exited (${signal ?? `code ${code}`}) before ${pattern} showed:\n${text}`));
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`${pattern} did not show within ${timeoutMs} ms:\n${text}`));
      }, timeoutMs);
      listeners.add(check);
      child.once('exit', onExit);
      check();
      if (!alive()) onExit(child.exitCode, child.signalCode);
    });

  const server: RvmServer = {
    child,
    url: `http://127.0.0.1:${port}`,
    port,
    output: () => text,
    waitFor,
    workerPids: () => (alive() ? childPids(child.pid!) : []),
    alive,
    async stop() {
      process.off('exit', atExit);
      if (!alive()) return;
      const workers = childPids(child.pid!);
      child.kill('SIGTERM');
      const timer = setTimeout(killAll, RVM_STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
      // Workers that outlived their primary (they should not) go too.
      for (const pid of workers) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Exited with the primary, as they should.
        }
      }
    },
  };
  try {
    await waitFor(/Store: +\S.*\n/, RVM_START_TIMEOUT_MS);
  } catch (error) {
    await server.stop();
    throw error;
  }
  return server;
}
