/**
 * `rvm run [DIR|BUNDLE]`: load the app, serve it over HTTP and print its URLs. Dev mode (the
 * default) watches the folder and hot-reloads; `--workers N` runs N processes, the process model
 * of vm/runtime/cluster.ts: the primary compiles once up front, then only supervises.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { resolveBundlePlugins } from '../../vm/host/loader.js';
import { readBundle } from '../../vm/bytecode/bundle.js';
import { DiagnosticError } from '../../vm/diagnostics.js';
import { buildApp, loadApp } from '../host.js';
import type { Logger } from '../../vm/runtime/log.js';
import { installSignalHandlers, startServer, type RunningServer } from '../../vm/runtime/http/server.js';
import { sweepStaleUploads } from '../../vm/runtime/http/multipart.js';
import { isClusterWorker, NODE_PRIMARY, NODE_WORKER, supervise, work, type Listening } from '../../vm/runtime/cluster.js';
import { storeSettings, type WorkerStore } from '../../vm/runtime/stores/open.js';
import { referenceAccess } from '../../stdlib/reference/access.js';
import { passwordCost } from '../../stdlib/auth/passwords.js';
import { loadSettings } from '../../vm/runtime/config.js';
import type { AppSettings } from '../../vm/host/context.js';
import { CliError, UsageError, err, errorsOf, flagValue, out, plural, rvmVersion, type CliIo, type ParsedArgs } from './common.js';

export const DEFAULT_PORT = 3000;
export const DEFAULT_HOST = '127.0.0.1';
/** Upper bound of --workers: above any sensible core count, low enough to catch a typo like 1000. */
export const MAX_WORKERS = 256;
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
  listening: Listening;
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
    listening: { url: running.url, reference: referenceAccess(app.settings).enabled, store: app.storeDescription, announced: [...app.announcements] },
  };
}

/**
 * Prints where the app is, the reference's URL only when it is served (production turns it off
 * unless configured), which store it uses, then what the plugins announced (the database).
 */
function announce(o: RunOptions, io: CliIo, { url, reference, store, announced }: Listening): void {
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
  if (isClusterWorker()) {
    await work(NODE_WORKER, async (workerStore) => {
      const { running, listening } = await serve(o, io, workerStore);
      return { listening, close: running.close };
    });
    return null;
  }
  // Once per run, by the process that is not a worker, so workers don't race on the file.
  if (!o.isBundle) ensureGitignore(o.target);
  // Uploads a killed process was writing are never cleaned by it: the next start does.
  await sweepStaleUploads();
  if (o.workers !== null) {
    const settings = await checkOnce(o, io);
    refuseTestSettings(o, settings);
    const { maxKeys, maxWindowKeys, maxSecurityKeys } = storeSettings(settings);
    supervise(NODE_PRIMARY, {
      workers: o.workers,
      // The command's environment: a variable io.env leaves undefined is unset in the workers.
      env: io.env,
      appDir: o.isBundle ? null : o.target,
      store: { maxKeys, maxWindowKeys, maxSecurityKeys },
      announce: (listening) => announce(o, io, listening),
      log: (line) => err(io, `rvm: ${line}`),
    });
    return null;
  }
  const { running, log, listening } = await serve(o, io);
  installSignalHandlers(running, log);
  announce(o, io, listening);
  return null;
}

/**
 * Checks the app once, in the primary, before any worker loads it: errors are reported once
 * rather than once per worker, and the bytecode cache is warm; for a bundle, a missing or other
 * plugin is reported once too. Answers the app's settings.
 */
async function checkOnce(o: RunOptions, io: CliIo): Promise<AppSettings> {
  if (o.isBundle) {
    const bundle = readBundle(o.target);
    await resolveBundlePlugins(bundle.plugins, o.target);
    return loadSettings(null, { config: bundle.config ?? {}, env: io.env, workers: o.workers ?? 1 });
  }
  // As the workers will see it: a plugin that cannot serve under N workers says so here, once.
  const build = await buildApp(o.target, { settings: { env: io.env, workers: o.workers ?? 1 } });
  const errors = errorsOf(build.diagnostics);
  if (errors.length > 0) throw new DiagnosticError(errors);
  return build.settings;
}
