/**
 * `rvm run [DIR|BUNDLE]`: load the app, serve it over HTTP and print its URLs. Dev mode (the
 * default) watches the folder and hot-reloads; `--workers N` runs N processes with node:cluster,
 * the primary only supervising: it compiles once up front, forks, and turns a signal into one
 * graceful shutdown of every worker.
 */
import cluster, { type Worker } from 'node:cluster';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { resolveBundlePlugins } from '../../vm/host/loader.js';
import { readBundle } from '../../vm/bytecode/bundle.js';
import { DiagnosticError } from '../../vm/diagnostics.js';
import { buildApp, loadApp } from '../host.js';
import type { Logger } from '../../vm/runtime/log.js';
import { installSignalHandlers, startServer, type RunningServer } from '../../vm/runtime/http/server.js';
import { sweepStaleUploads } from '../../vm/runtime/http/multipart.js';
import { IpcStore, PrimaryStore, type IpcChannel } from '../../vm/runtime/stores/ipc.js';
import { storeSettings, type WorkerStore } from '../../vm/runtime/stores/open.js';
import { createSecretSource } from '../../vm/runtime/secrets.js';
import { referenceAccess } from '../../stdlib/reference/access.js';
import { passwordCost } from '../../stdlib/auth/passwords.js';
import { loadSettings } from '../../vm/runtime/config.js';
import type { AppSettings } from '../../vm/host/context.js';
import { CliError, UsageError, err, errorsOf, flagValue, out, plural, rvmVersion, type CliIo, type ParsedArgs } from './common.js';

export const DEFAULT_PORT = 3000;
export const DEFAULT_HOST = '127.0.0.1';
/** Upper bound of --workers: above any sensible core count, low enough to catch a typo like 1000. */
export const MAX_WORKERS = 256;
/** A supervisor that restarts crashing workers more often than this per minute gives up instead of spinning. */
export const MAX_RESTARTS_PER_MINUTE = 10;
/** The path of the API reference under the app URL. */
export const REFERENCE_PATH = '/_app/rest-api';

/** Everything `rvm run` was asked to do, after flags, env and defaults. */
export interface RunOptions {
  target: string;
  isBundle: boolean;
  port: number;
  host: string;
  prod: boolean;
  /** null: one process, no cluster. */
  workers: number | null;
}

/** Folders of an app that must never be committed: the bytecode cache and data, and the secrets. */
export const IGNORED_FOLDERS = ['.rvm/', '.secrets/'];

/** Adds IGNORED_FOLDERS to `dir/.gitignore` where missing (creating it); a failure only loses the reminder. */
export function ensureGitignore(dir: string): void {
  const file = join(dir, '.gitignore');
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    // No .gitignore yet: it is created below.
  }
  const present = new Set(text.split(/\r?\n/).map((l) => l.trim().replace(/^\//, '').replace(/\/?$/, '/')));
  const missing = IGNORED_FOLDERS.filter((f) => !present.has(f));
  if (missing.length === 0) return;
  try {
    writeFileSync(file, `${text}${text === '' || text.endsWith('\n') ? '' : '\n'}${missing.join('\n')}\n`);
  } catch {
    // A read-only app folder still serves.
  }
}

/**
 * Said once at start by `--prod` on a bundle without APP_SECRET: there is no `.secrets/` to keep a
 * generated secret in, so what it signs dies with the process.
 */
export const EPHEMERAL_SECRET_WARNING =
  'rvm: warning: no APP_SECRET and no app folder to keep a generated one in: sessions, CSRF tokens and sign-in codes will not survive a restart (set APP_SECRET)';

/**
 * Refuses what only tests may use: `--prod` does not start with passwords hashed at test cost,
 * which anyone can brute-force.
 */
function refuseTestSettings(o: RunOptions, settings: AppSettings): void {
  if (o.prod && passwordCost(settings) === 'test') {
    throw new CliError(
      'rvm.config.json: "passwords": {"cost": "test"} hashes passwords at the smallest Argon2 cost, for tests only: --prod refuses it (remove the setting)',
    );
  }
}

/** A start line a plugin announced (`PluginApi.announce`). */
type Announced = { label: string; text: string };

/** Messages between the primary and its workers. */
type ClusterMessage = { rvm: 'listening'; url: string; reference: boolean; store: string; announced: Announced[] } | { rvm: 'shutdown' };

function parsePort(text: string, from: string): number {
  const n = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
  if (!(n >= 0 && n <= 65_535)) throw new UsageError(`${from}: port must be a whole number from 0 to 65535, got '${text}'`);
  return n;
}

/** Resolves flags over env (PORT, HOST) over defaults, and checks the target exists. */
export function runOptions(args: ParsedArgs, env: CliIo['env']): RunOptions {
  const portFlag = flagValue(args, 'port');
  const port = portFlag !== undefined ? parsePort(portFlag, '--port') : env.PORT ? parsePort(env.PORT, 'PORT') : DEFAULT_PORT;
  const host = flagValue(args, 'host') ?? (env.HOST || DEFAULT_HOST);
  const workersFlag = flagValue(args, 'workers');
  let workers: number | null = null;
  if (workersFlag !== undefined) {
    workers = /^\d{1,4}$/.test(workersFlag) ? Number(workersFlag) : NaN;
    if (!(workers >= 1 && workers <= MAX_WORKERS)) throw new UsageError(`--workers must be a whole number from 1 to ${MAX_WORKERS}, got '${workersFlag}'`);
  }
  const target = args.positionals[0] ?? '.';
  let isBundle: boolean;
  try {
    isBundle = statSync(target).isFile();
  } catch {
    throw new CliError(`no such app folder or bundle: ${target}`);
  }
  return { target, isBundle, port, host, prod: args.flags.has('prod'), workers };
}

/** Turns a listen failure the user can fix into one clear line. */
function listenError(e: unknown, o: RunOptions): unknown {
  switch ((e as NodeJS.ErrnoException | null)?.code) {
    case 'EADDRINUSE':
      return new CliError(`port ${o.port} on ${o.host} is already in use (choose another with --port)`);
    case 'EACCES':
      return new CliError(`not allowed to listen on ${o.host}:${o.port} (ports below 1024 need privileges)`);
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new CliError(`cannot listen on host '${o.host}': not an address of this machine`);
    default:
      return e;
  }
}

/** What `serve` started, and what `announce` prints of it. */
interface Served {
  running: RunningServer;
  log: Logger;
  reference: boolean;
  /** Which store serves `ctx.store` (App.storeDescription). */
  store: string;
  /** The start lines the plugins announced (App.announcements). */
  announced: Announced[];
}

/** Loads the app and starts listening; closing the result closes the server, then the app. */
async function serve(o: RunOptions, io: CliIo, workerStore?: WorkerStore): Promise<Served> {
  const app = await loadApp(o.target, { dev: !o.prod, workerStore, settings: { workers: o.workers ?? 1, env: io.env } });
  let running: RunningServer;
  try {
    refuseTestSettings(o, app.settings);
    running = await startServer(app, { port: o.port, host: o.host });
  } catch (e) {
    await app.close();
    throw listenError(e, o);
  }
  if (!o.prod && !o.isBundle) app.watch();
  const close = async (): Promise<void> => {
    await running.close();
    await app.close();
  };
  return {
    running: { url: running.url, port: running.port, server: running.server, close },
    log: app.log,
    reference: referenceAccess(app.settings).enabled,
    store: app.storeDescription,
    announced: [...app.announcements],
  };
}

/**
 * Prints where the app is, the reference's URL only when it is served (production turns it off
 * unless configured), which store it uses, then what the plugins announced (the database).
 */
function announce(o: RunOptions, io: CliIo, url: string, reference: boolean, store: string, announced: readonly Announced[]): void {
  // Said once the app serves (a start that fails has more to say), by the one process that announces.
  if (o.prod && o.isBundle && !io.env.APP_SECRET) err(io, EPHEMERAL_SECRET_WARNING);
  const mode = o.prod ? 'production' : o.isBundle ? 'dev mode, bundle' : 'dev mode, watching for changes';
  const workers = o.workers === null ? '' : `, ${plural(o.workers, 'worker')}`;
  out(io, `rvm ${rvmVersion()} serving ${o.target} (${mode}${workers})`);
  out(io, `  App:           ${url}`);
  out(io, reference ? `  API reference: ${url}${REFERENCE_PATH}` : '  API reference: off in production (set "reference": true in rvm.config.json to serve it)');
  out(io, `  Store:         ${store}`);
  for (const line of announced) out(io, `  ${`${line.label}:`.padEnd(15)}${line.text}`);
}

/** Runs `rvm run`; resolves to null once serving (the process then lives until a signal). */
export async function runCommand(args: ParsedArgs, io: CliIo): Promise<null> {
  const o = runOptions(args, io.env);
  // Once per run, by the process that is not a worker, so workers don't race on the file.
  if (!o.isBundle && cluster.isPrimary) ensureGitignore(o.target);
  // Uploads a killed process was writing are never cleaned by it: the next start does.
  if (cluster.isPrimary) await sweepStaleUploads();
  if (o.workers !== null && cluster.isPrimary) return supervise(o, io);
  if (cluster.isWorker) return work(o, io);
  const { running, log, reference, store, announced } = await serve(o, io);
  installSignalHandlers(running, log);
  announce(o, io, running.url, reference, store, announced);
  return null;
}

/** A cluster worker: serve, tell the primary where, and shut down once on its word or a signal. */
async function work(o: RunOptions, io: CliIo): Promise<null> {
  // Unless Redis is configured, `ctx.store` is the primary's: rate limits, one-time codes and
  // replay marks hold across the workers.
  const { running, reference, store, announced } = await serve(o, io, (log) => new IpcStore(process as unknown as IpcChannel, { log }));
  let closing = false;
  const shutdown = (): void => {
    if (closing) return;
    closing = true;
    running.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  // A terminal's Ctrl-C reaches every process of the group and the primary forwards it too:
  // both lead to the same single graceful close.
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
  process.on('disconnect', shutdown);
  process.on('message', (m: ClusterMessage) => {
    if (m?.rvm === 'shutdown') shutdown();
  });
  process.send?.({ rvm: 'listening', url: running.url, reference, store, announced } satisfies ClusterMessage);
  return null;
}

/** The cluster primary: compile once, fork the workers, restart crashed ones, forward signals. */
async function supervise(o: RunOptions, io: CliIo): Promise<null> {
  // Compiling here reports errors once rather than once per worker, and warms the cache; for a
  // bundle, a missing or other plugin is reported once too.
  let caps = {};
  if (o.isBundle) {
    const bundle = readBundle(o.target);
    await resolveBundlePlugins(bundle.plugins, o.target);
    refuseTestSettings(o, loadSettings(null, { config: bundle.config ?? {} }));
  } else {
    const build = await buildApp(o.target, { settings: { env: io.env } });
    const errors = errorsOf(build.diagnostics);
    if (errors.length > 0) throw new DiagnosticError(errors);
    refuseTestSettings(o, build.settings);
    const { maxKeys, maxWindowKeys, maxSecurityKeys } = storeSettings(build.settings);
    caps = { maxKeys, maxWindowKeys, maxSecurityKeys };
  }
  // Read or generated here, once, and handed to every worker (and every replacement) in its
  // environment: a bundle has no `.secrets/` to share it through, and workers generating their own
  // would refuse each other's CSRF tokens, cookies and codes.
  const appSecret = createSecretSource(o.isBundle ? null : o.target, io.env).appSecret();
  const alive = new Map<number, Worker>();
  // The state the workers share (ctx.store) when no Redis is configured: held here, so it
  // outlives any one worker.
  const shared = new PrimaryStore({ state: caps });
  const started = new Set<number>();
  const restarts: number[] = [];
  let announced = false;
  let shuttingDown = false;
  let exitCode = 0;

  const shutdown = (code: number): void => {
    if (shuttingDown) {
      // A second signal: stop waiting for graceful closes.
      for (const w of alive.values()) w.process.kill('SIGKILL');
      process.exit(1);
    }
    shuttingDown = true;
    exitCode = code;
    if (alive.size === 0) process.exit(exitCode);
    for (const w of alive.values()) {
      try {
        w.send({ rvm: 'shutdown' } satisfies ClusterMessage);
      } catch {
        w.process.kill('SIGTERM');
      }
    }
  };

  const fork = (): void => {
    // The command's environment: cluster.fork lays it over this process's (a variable io.env leaves undefined is unset).
    const w = cluster.fork({ ...io.env, APP_SECRET: appSecret });
    alive.set(w.id, w);
    const detach = shared.attach(w);
    w.once('exit', detach);
    w.on('message', (m: ClusterMessage) => {
      if (m?.rvm !== 'listening') return;
      started.add(w.id);
      if (!announced && started.size >= o.workers!) {
        announced = true;
        announce(o, io, m.url, m.reference, m.store, m.announced);
      }
    });
  };

  cluster.on('exit', (w, code, signal) => {
    alive.delete(w.id);
    if (shuttingDown) {
      if (alive.size === 0) process.exit(exitCode);
      return;
    }
    const how = signal ? `signal ${signal}` : `code ${code}`;
    if (!started.has(w.id)) {
      err(io, `rvm: a worker failed to start (${how}); stopping`);
      return shutdown(1);
    }
    const now = Date.now();
    restarts.push(now);
    while (restarts[0]! < now - 60_000) restarts.shift();
    if (restarts.length > MAX_RESTARTS_PER_MINUTE) {
      err(io, `rvm: workers keep crashing (${restarts.length} in a minute); stopping`);
      return shutdown(1);
    }
    err(io, `rvm: worker ${w.process.pid} exited (${how}); starting another`);
    fork();
  });
  process.on('SIGINT', () => shutdown(0));
  process.on('SIGTERM', () => shutdown(0));
  for (let i = 0; i < o.workers!; i++) fork();
  return null;
}
