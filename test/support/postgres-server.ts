/**
 * A real, throwaway PostgreSQL server for tests and benchmarks: Debian's binaries
 * (/usr/lib/postgresql/<version>/bin), run as the unprivileged `postgres` user when we run as
 * root (PostgreSQL refuses root), on a throwaway data directory, listening on loopback only on a
 * free port, trust auth, fsync off; destroyed at exit if nobody did. A machine without
 * PostgreSQL fails loudly: the suites must run. No node:test here, so bench/ can use it too
 * (test/support/postgres.ts wraps it in a file's before/after hooks). tools/run-tests.mjs starts
 * one for the whole run with startRunPostgres().
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';

const PG_ROOT = '/usr/lib/postgresql';
/** How long pg_ctl waits for the server to start or stop. */
const PG_CTL_WAIT_SECONDS = 60;

/** A running (or stopped) throwaway server. */
export interface PostgresServer {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`. */
  readonly url: string;
  readonly port: number;
  /** Stops the server (fast shutdown: open connections are cut), keeping its data. */
  stop(): void;
  /** Starts it again on the same port and data. */
  start(): void;
  /** As stop(), without blocking this process's event loop (load it generates keeps running meanwhile). */
  stopAsync(): Promise<void>;
  /** As start(), without blocking the event loop. */
  startAsync(): Promise<void>;
  /** Stops it and removes its data directory. */
  destroy(): void;
  /** The postmaster's process id while it runs (from its postmaster.pid), else null. */
  pid(): number | null;
}

/** The bin directory of the newest installed PostgreSQL, or an error saying how to install one. */
export function findPostgresBin(): string {
  const versions = existsSync(PG_ROOT) ? readdirSync(PG_ROOT).filter((v) => existsSync(join(PG_ROOT, v, 'bin', 'initdb')) && existsSync(join(PG_ROOT, v, 'bin', 'pg_ctl'))) : [];
  versions.sort((a, b) => Number(b) - Number(a));
  if (versions.length === 0) {
    throw new Error(`PostgreSQL is not installed (no ${PG_ROOT}/*/bin/initdb): run .ci/run, which installs Debian's postgresql package, or apt-get install postgresql`);
  }
  return join(PG_ROOT, versions[0]!, 'bin');
}

const asRoot = process.getuid?.() === 0;

/** The command line of a PostgreSQL program, as `postgres` when we are root. */
function pgCommand(bin: string, program: string, args: string[]): [string, string[]] {
  return asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, program), ...args]] : [join(bin, program), args];
}

/** How long a PostgreSQL program may run before it is killed. */
const PG_RUN_TIMEOUT_MS = (PG_CTL_WAIT_SECONDS + 10) * 1000;

/** Runs a PostgreSQL program, as `postgres` when we are root. */
function pgRun(bin: string, program: string, args: string[]): void {
  const [command, argv] = pgCommand(bin, program, args);
  const result = spawnSync(command, argv, { encoding: 'utf8', timeout: PG_RUN_TIMEOUT_MS });
  if (result.status !== 0) throw new Error(`${program} ${args.join(' ')} failed (${result.status ?? result.signal}): ${result.stderr || result.stdout || result.error}`);
}

/** As pgRun, without blocking the event loop. */
function pgRunAsync(bin: string, program: string, args: string[]): Promise<void> {
  const [command, argv] = pgCommand(bin, program, args);
  return new Promise((resolve, reject) => {
    execFile(command, argv, { encoding: 'utf8', timeout: PG_RUN_TIMEOUT_MS }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${program} ${args.join(' ')} failed (${error.code ?? error.signal}): ${stderr || stdout || error.message}`));
      else resolve();
    });
  });
}

/**
 * The environment variable that hands the run's server to the test files: the URL of its
 * `postgres` database. Each file makes a database of its own there (test/support/postgres.ts).
 */
export const RUN_POSTGRES_ENV = 'RVM_TEST_POSTGRES_URL';

/**
 * Connections the run's server accepts: the files running at once share it, each with pools of
 * up to PG_POOL_SIZE per process (and several processes under --workers); 100, the default, is
 * one app's budget, not a whole run's.
 */
const RUN_MAX_CONNECTIONS = 300;

/**
 * Starts the one server of a test run (tools/run-tests.mjs, before any test file): the caller
 * sets RUN_POSTGRES_ENV to its `url` in the files' environment and destroys it after them (at
 * exit it is destroyed anyway). One initdb and start per run instead of one per file.
 */
export function startRunPostgres(): Promise<PostgresServer> {
  return startPostgres({ maxConnections: RUN_MAX_CONNECTIONS });
}

/** Creates, starts and returns a throwaway server. */
export async function startPostgres(options: { maxConnections?: number } = {}): Promise<PostgresServer> {
  const bin = findPostgresBin();
  const dir = mkdtempSync(join(tmpdir(), 'rvm-pg-'));
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
  }
  const data = join(dir, 'data');
  pgRun(bin, 'initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync']);
  const port = await freePort();
  const serverOptions = `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off -c synchronous_commit=off -c full_page_writes=off${options.maxConnections ? ` -c max_connections=${options.maxConnections}` : ''}`;
  let running = false;
  const startArgs = ['-D', data, '-l', join(dir, 'log'), '-w', '-t', String(PG_CTL_WAIT_SECONDS), '-o', serverOptions, 'start'];
  const stopArgs = ['-D', data, '-m', 'fast', '-w', '-t', String(PG_CTL_WAIT_SECONDS), 'stop'];
  const server: PostgresServer = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    start() {
      pgRun(bin, 'pg_ctl', startArgs);
      running = true;
    },
    stop() {
      if (!running) return;
      pgRun(bin, 'pg_ctl', stopArgs);
      running = false;
    },
    async startAsync() {
      await pgRunAsync(bin, 'pg_ctl', startArgs);
      running = true;
    },
    async stopAsync() {
      if (!running) return;
      await pgRunAsync(bin, 'pg_ctl', stopArgs);
      running = false;
    },
    pid() {
      if (!running) return null;
      try {
        const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
        return Number.isInteger(pid) && pid > 0 ? pid : null;
      } catch {
        return null;
      }
    },
    destroy() {
      try {
        server.stop();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
  const atExit = () => {
    try {
      server.destroy();
    } catch {
      // Best effort at exit: the data directory is under the temporary directory anyway.
    }
  };
  process.once('exit', atExit);
  try {
    server.start();
  } catch (error) {
    process.off('exit', atExit);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return server;
}
