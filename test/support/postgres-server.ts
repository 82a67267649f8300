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
import { basename, join } from 'node:path';
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
  const versions = existsSync(PG_ROOT)
    ? readdirSync(PG_ROOT).filter((v) => existsSync(join(PG_ROOT, v, 'bin', 'initdb')) && existsSync(join(PG_ROOT, v, 'bin', 'pg_ctl')))
    : [];
  versions.sort((a, b) => Number(b) - Number(a));
  if (versions.length === 0) {
    throw new Error(
      `PostgreSQL is not installed (no ${PG_ROOT}/*/bin/initdb): run .ci/run, which installs Debian's postgresql package, or apt-get install postgresql`,
    );
  }
  return join(PG_ROOT, versions[0]!, 'bin');
}

const asRoot = process.getuid?.() === 0;

/** The command line of a program (a PostgreSQL one, or cp of a data directory), as `postgres` when we are root. */
function pgCommand(program: string, args: string[]): [string, string[]] {
  return asRoot ? ['runuser', ['-u', 'postgres', '--', program, ...args]] : [program, args];
}

/** How long a PostgreSQL program may run before it is killed. */
const PG_RUN_TIMEOUT_MS = (PG_CTL_WAIT_SECONDS + 10) * 1000;

/** Runs a program as pgCommand says. */
function pgRun(program: string, args: string[]): void {
  const [command, argv] = pgCommand(program, args);
  const result = spawnSync(command, argv, { encoding: 'utf8', timeout: PG_RUN_TIMEOUT_MS });
  if (result.status !== 0)
    throw new Error(`${basename(program)} ${args.join(' ')} failed (${result.status ?? result.signal}): ${result.stderr || result.stdout || result.error}`);
}

/** As pgRun, without blocking the event loop. */
function pgRunAsync(program: string, args: string[]): Promise<void> {
  const [command, argv] = pgCommand(program, args);
  return new Promise((resolve, reject) => {
    execFile(command, argv, { encoding: 'utf8', timeout: PG_RUN_TIMEOUT_MS }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${basename(program)} ${args.join(' ')} failed (${error.code ?? error.signal}): ${stderr || stdout || error.message}`));
      else resolve();
    });
  });
}

/** A new folder under the temporary directory, owned by `postgres` when we are root. */
function pgTempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'rvm-pg-'));
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
  }
  return dir;
}

/** Makes the data directory `data`: a copy of `template` when given (~0.15 s of CPU), else initdb's (~1.4 s). */
function makeData(bin: string, data: string, template: string | undefined): void {
  if (template) pgRun('cp', ['-a', template, data]);
  else pgRun(join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync']);
}

/** Runs `cleanup` at exit, unless the function returned ran it before. */
function removedAtExit(cleanup: () => void): () => void {
  const atExit = () => {
    try {
      cleanup();
    } catch {
      // Best effort at exit: it is under the temporary directory anyway.
    }
  };
  process.once('exit', atExit);
  return () => {
    process.off('exit', atExit);
    cleanup();
  };
}

/**
 * The environment variable that hands the run's server to the test files: the URL of its
 * `postgres` database. Each file makes a database of its own there (test/support/postgres.ts).
 */
export const RUN_POSTGRES_ENV = 'RVM_TEST_POSTGRES_URL';

/**
 * The environment variable naming a data directory fresh from initdb, which the servers a file
 * starts for itself copy instead of running initdb.
 */
export const POSTGRES_TEMPLATE_ENV = 'RVM_TEST_POSTGRES_TEMPLATE';

/**
 * Connections the run's server accepts: the files running at once share it, each with pools of
 * up to PG_POOL_SIZE per process (and several processes under --workers); 100, the default, is
 * one app's budget, not a whole run's.
 */
const RUN_MAX_CONNECTIONS = 300;

/** The PostgreSQL of a test run: what its files' environment must hold, and how to end it. */
export interface RunPostgres {
  /** RUN_POSTGRES_ENV and POSTGRES_TEMPLATE_ENV, for every test file's environment. */
  readonly env: Readonly<Record<string, string>>;
  /** Stops the server and removes its data and the template (at exit, if nobody did). */
  destroy(): void;
}

/**
 * Starts the one server of a test run (tools/run-tests.mjs, before any test file) from one
 * initdb, kept as the template the files' own servers copy. One initdb per run, not one per file.
 */
export async function startRunPostgres(): Promise<RunPostgres> {
  const bin = findPostgresBin();
  const dir = pgTempDir();
  const removeTemplate = removedAtExit(() => rmSync(dir, { recursive: true, force: true }));
  try {
    const template = join(dir, 'template');
    makeData(bin, template, undefined);
    const server = await startPostgres({ maxConnections: RUN_MAX_CONNECTIONS, template });
    return {
      env: { [RUN_POSTGRES_ENV]: server.url, [POSTGRES_TEMPLATE_ENV]: template },
      destroy() {
        try {
          server.destroy();
        } finally {
          removeTemplate();
        }
      },
    };
  } catch (error) {
    removeTemplate();
    throw error;
  }
}

/**
 * Creates, starts and returns a throwaway server: its data a copy of `template` (by default
 * POSTGRES_TEMPLATE_ENV's, when set), else initdb's.
 */
export async function startPostgres(options: { maxConnections?: number; template?: string } = {}): Promise<PostgresServer> {
  const bin = findPostgresBin();
  const dir = pgTempDir();
  const data = join(dir, 'data');
  makeData(bin, data, options.template ?? process.env[POSTGRES_TEMPLATE_ENV]);
  const port = await freePort();
  const serverOptions = `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off -c synchronous_commit=off -c full_page_writes=off${options.maxConnections ? ` -c max_connections=${options.maxConnections}` : ''}`;
  let running = false;
  const startArgs = ['-D', data, '-l', join(dir, 'log'), '-w', '-t', String(PG_CTL_WAIT_SECONDS), '-o', serverOptions, 'start'];
  const pgCtl = join(bin, 'pg_ctl');
  const stopArgs = ['-D', data, '-m', 'fast', '-w', '-t', String(PG_CTL_WAIT_SECONDS), 'stop'];
  const server: PostgresServer = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    start() {
      pgRun(pgCtl, startArgs);
      running = true;
    },
    stop() {
      if (!running) return;
      pgRun(pgCtl, stopArgs);
      running = false;
    },
    async startAsync() {
      await pgRunAsync(pgCtl, startArgs);
      running = true;
    },
    async stopAsync() {
      if (!running) return;
      await pgRunAsync(pgCtl, stopArgs);
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
    destroy: removedAtExit(() => {
      try {
        server.stop();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }),
  };
  try {
    server.start();
  } catch (error) {
    server.destroy();
    throw error;
  }
  return server;
}
