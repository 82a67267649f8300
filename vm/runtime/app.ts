/**
 * The app: finds the route files of a folder (or opens a bundle), compiles them through the
 * per-file cache, links them with the plugins, and runs each matched request through the
 * pipeline — middleware chain, outermost first → guards → validation → handler — on the VM.
 */
import { existsSync, readFileSync, statSync, watch, type FSWatcher } from 'node:fs';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { DIAG } from '../errors.js';
import { DiagnosticError, diagnostic, formatDiagnostic, lineOf, sortDiagnostics, type Diagnostic } from '../diagnostics.js';
import { compileSource, sourceHash } from '../compiler/compiler.js';
import { decodeModule, encodeModule } from '../bytecode/artefact.js';
import { hasLinkProof, linkKey, readCached, writeCached, writeLinkProof } from '../bytecode/cache.js';
import { readBundle } from '../bytecode/bundle.js';
import { execute, VmError } from '../interp/interpreter.js';
import { link } from '../interp/link.js';
import { assembleRoutes } from './routes.js';
import { SKIPPED_FOLDERS, findRouteFiles } from './app-files.js';
import type { CompiledModule } from '../bytecode/module.js';
import type { Program } from '../interp/program.js';
import { RvmError, type Value } from '../values.js';
import { COMPILER_VERSION } from '../lang.js';
import type { AppSettings, KeyValueStore, PluginDefinition } from '../../plugins/contract.js';
import { loadPlugins, type PluginRegistry } from '../../plugins/registry.js';
import { resolveBundlePlugins, resolvePlugins } from '../../plugins/loader.js';
import { RUNTIME_PLUGIN } from './host-natives.js';
import { loadSettings } from './config.js';
import { RequestContext } from './context.js';
import { answered } from './answer.js';
import { Introspection } from './introspection.js';
import { createLogger, describeError, type Logger } from './log.js';
import { HTTP, RUNTIME, type HttpErrorEntry } from '../errors.js';
import { catalogueBody, catalogueResponse, errorBody } from './response.js';
import { DuplicateRouteError, createRouter } from './router.js';
import { openStore, type OpenedStore, type WorkerStore } from './stores/open.js';
import { Admission } from './http/admission.js';
import { Watchdog } from './watchdog.js';
import { performance } from 'node:perf_hooks';
import { BUILTIN_PREFIX, type AppHandle, type IncomingRequest, type OutgoingResponse, type RouteTarget, type Router } from './types.js';
import { planTypes, planValidation, typeValidation, ValidationPlans } from './validate.js';

/** Files a plugin of the app may be made of. */
const PLUGIN_FILE = /\.(?:[cm]?js|ts)$/;
/** Changes to files are gathered for this long before one reload, so an editor's save burst compiles once. */
const RELOAD_DEBOUNCE_MS = 20;

/**
 * Errors that are limits of the machine (the request used too much): answered 500 with their own
 * code even in production, as they tell nothing secret.
 */
const LIMIT_ERRORS: ReadonlySet<string> = new Set([
  RUNTIME.cpu_budget_exceeded,
  RUNTIME.fuel_exhausted,
  RUNTIME.call_depth_exceeded,
  RUNTIME.text_too_long,
  RUNTIME.list_too_long,
]);

/**
 * Failures of a service the app depends on, answered with their own status and body rather than
 * 500: the request was fine, the service was not (a shared store that cannot be reached, or is full of security state: 503).
 */
const SERVICE_ERRORS: ReadonlyMap<string, HttpErrorEntry> = new Map<string, HttpErrorEntry>([
  [HTTP.store_unavailable.code, HTTP.store_unavailable],
  [HTTP.store_full.code, HTTP.store_full],
]);

/** Route and middleware chunks take no arguments; one shared empty list. */
const NO_ARGS: readonly Value[] = Object.freeze([]);

export interface LoadOptions {
  /** Dev mode: runtime error details in responses, hot reload available. Default false. */
  dev?: boolean;
  /** Use `app/.rvm/cache`. Default true. */
  cache?: boolean;
  /** Send every module through msgpack encode/decode before linking (tests the artefact path). */
  roundTrip?: boolean;
  /** Overrides for settings read from rvm.config.json and env. */
  settings?: Record<string, unknown>;
  /**
   * The plugins every app of this host loads before those its config lists (the standard
   * library): the composition root's choice, as the runtime depends on no plugin but its own.
   */
  standard?: readonly PluginDefinition[];
  /** Extra plugins (after the standard ones and those the config lists). */
  plugins?: PluginDefinition[];
  logger?: Logger;
  /** The store behind `ctx.store`, fixed (tests); by default the settings choose (vm/runtime/stores/open.ts). */
  store?: KeyValueStore;
  /**
   * Under `rvm run --workers N`: the store reaching the primary, used when no Redis is configured,
   * so the primary holds one store for all the workers.
   */
  workerStore?: WorkerStore;
  /** Receives every line the app writes with `log()` (tests). */
  onAppLog?: (message: string) => void;
}

/** The result of compiling and linking an app folder without serving it. */
export interface AppBuild {
  dir: string | null;
  modules: CompiledModule[];
  /** Every diagnostic: errors and warnings. */
  diagnostics: Diagnostic[];
  settings: AppSettings;
  registry: PluginRegistry;
  /** Present when there was no error. */
  linked: {
    program: Program;
    routes: RouteTarget[];
    router: Router<RouteTarget>;
    /** The root `_middleware.rvm`'s chunk, or none: the chain of a request no route matches. */
    rootMiddleware: number[];
    validation: ValidationPlans;
  } | null;
}

function errorsIn(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  return diagnostics.filter((d) => d.severity === 'error');
}

/**
 * The plugins of an app, in load order: the runtime's own natives, the standard ones the
 * composition root gives (`options.standard`), those the app's config lists (resolved from `dir`),
 * then `options.plugins`.
 */
export async function appPlugins(settings: AppSettings, dir: string | null, options: Pick<LoadOptions, 'standard' | 'plugins'> = {}): Promise<PluginRegistry> {
  const specs = settings.config.plugins;
  const listed = dir !== null && Array.isArray(specs) ? await resolvePlugins(specs.map(String), dir) : [];
  return loadPlugins([RUNTIME_PLUGIN, ...(options.standard ?? []), ...listed, ...(options.plugins ?? [])], settings);
}

/** One compiled file: `module` when it compiled cleanly, else `partial` (what did, for its diagnostics only). */
interface CompiledFile {
  module: CompiledModule | null;
  partial: CompiledModule | null;
  /** Names of fns and guard_definitions whose declaration did not parse. */
  unparsed: string[];
  diagnostics: Diagnostic[];
  source: string;
}

/**
 * Compiles one file, through the cache when allowed. A freshly compiled module has its routes'
 * validation checked against the plugins here (a module with errors too: what of it compiled),
 * and only a module that passed is cached: so a module read back from the cache (same source,
 * compiler and plugin fingerprint) is proven, and its validation plans can wait for each route's
 * first request.
 */
function compileFile(dir: string, file: string, registry: PluginRegistry, options: LoadOptions): CompiledFile {
  const source = readFileSync(join(dir, file), 'utf8');
  const expect = { sourceHash: sourceHash(source), compiler: COMPILER_VERSION, plugins: registry.fingerprint };
  const useCache = options.cache !== false;
  const cached = useCache ? readCached(dir, file, expect) : null;
  if (cached) return { module: cached, partial: null, unparsed: [], diagnostics: [], source };
  const result = compileSource(file, source, {
    compilerVersion: COMPILER_VERSION,
    pluginsFingerprint: registry.fingerprint,
    recordMethods: registry.records?.methods,
  });
  const validation = checkValidation([result.module ?? result.partial], registry, new Map([[file, source]]));
  if (result.module !== null && useCache && errorsIn(validation).length === 0) writeCached(dir, file, result.module);
  const partial = result.module === null ? result.partial : null;
  return { module: result.module, partial, unparsed: result.unparsed, diagnostics: [...result.diagnostics, ...validation], source };
}

/** Every validation diagnostic of `modules` (unknown validators, bad arguments, contradictory bounds…), with source lines. */
function checkValidation(modules: readonly CompiledModule[], registry: PluginRegistry, sources: ReadonlyMap<string, string>): Diagnostic[] {
  const { diagnostics } = planValidation(
    modules.flatMap((m) => m.routes.map((meta) => ({ meta, file: m.file }))),
    registry,
  );
  diagnostics.push(
    ...planTypes(
      modules.flatMap((m) => m.types.map((meta) => ({ meta, file: m.file }))),
      registry,
    ),
  );
  return withSourceLines(diagnostics, sources);
}

function withSourceLines(diagnostics: Diagnostic[], sources: ReadonlyMap<string, string>): Diagnostic[] {
  for (const d of diagnostics) {
    const source = sources.get(d.file);
    if (source !== undefined && d.sourceLine === undefined) d.sourceLine = lineOf(source, d.line);
  }
  return diagnostics;
}

/**
 * Links modules into a program and a router; diagnostics carry source lines when sources are
 * given. The modules' validation must already be checked (compileFile, or loadApp for a bundle).
 * `proven`: the same app linked cleanly before (the cache's link proof), so calls bind lazily and
 * the checks that need every file (a `@returns` tag's type) passed then.
 */
function linkModules(
  modules: CompiledModule[],
  registry: PluginRegistry,
  sources: Map<string, string>,
  options: { proven?: boolean; unparsed?: ReadonlySet<string> } = {},
): { diagnostics: Diagnostic[]; linked: AppBuild['linked'] } {
  const plans = new ValidationPlans(registry);
  const linked = link(modules, registry, options.proven ?? false, options.unparsed, typeValidation(registry));
  const { program, diagnostics } = linked;
  const assembled = assembleRoutes(modules, linked, registry, options.proven ?? false);
  const routes = assembled.routes;
  diagnostics.push(...assembled.diagnostics);
  for (const r of routes) {
    // The body is read before the route runs, so a route taking files needs its upload limits now.
    if (r.meta.body?.some((f) => f.type === 'file')) r.uploads = plans.uploadsOf(r.meta);
  }
  const router = createRouter<RouteTarget>();
  for (const r of routes) {
    try {
      router.add(r.meta.method, r.meta.segments, r);
    } catch (e) {
      // Both places: the one added first is named in the message.
      const first = e instanceof DuplicateRouteError ? ` (first at ${(e.existing as RouteTarget).file}:${(e.existing as RouteTarget).meta.line})` : '';
      diagnostics.push(diagnostic(DIAG.E_DUPLICATE_ROUTE, `${(e as Error).message}${first}`, { file: r.file, line: r.meta.line, col: r.meta.col }));
    }
  }
  withSourceLines(diagnostics, sources);
  return {
    diagnostics,
    linked: errorsIn(diagnostics).length === 0 ? { program, routes, router, rootMiddleware: assembled.rootMiddleware, validation: plans } : null,
  };
}

/**
 * Compiles and links the app in `dir` (no server). Every phase runs over all it has: a file with
 * errors still has what of it compiled linked, so one build reports every diagnostic of every
 * file, sorted by file and position; but any error leaves the app unlinked (never runnable).
 */
export async function buildApp(dir: string, options: LoadOptions = {}): Promise<AppBuild> {
  const root = resolve(dir);
  const settings = loadSettings(root, { ...options.settings, dev: options.dev ?? false });
  const registry = await appPlugins(settings, root, options);
  const modules: CompiledModule[] = [];
  /** In file order, the partial modules of files with errors among the clean ones. */
  const linkable: CompiledModule[] = [];
  const unparsed = new Set<string>();
  const diagnostics: Diagnostic[] = [];
  const sources = new Map<string, string>();
  const found = findRouteFiles(root);
  diagnostics.push(...found.warnings);
  for (const file of found.files) {
    const result = compileFile(root, file, registry, options);
    sources.set(file, result.source);
    diagnostics.push(...result.diagnostics);
    for (const name of result.unparsed) unparsed.add(name);
    if (result.module) {
      const module = options.roundTrip ? decodeModule(encodeModule(result.module)) : result.module;
      modules.push(module);
      linkable.push(module);
    } else if (result.partial) {
      linkable.push(result.partial);
    }
  }
  const complete = linkable.length === modules.length;
  const proof = complete && options.cache !== false ? linkKey(modules, COMPILER_VERSION, registry.fingerprint) : null;
  const proven = proof !== null && hasLinkProof(root, proof);
  const linked = linkModules(linkable, registry, sources, { proven, unparsed });
  const all = sortDiagnostics([...diagnostics, ...linked.diagnostics]);
  const ok = complete && errorsIn(all).length === 0 && linked.linked !== null;
  if (ok && proof !== null && !proven) writeLinkProof(root, proof);
  return { dir: root, modules, diagnostics: all, settings, registry, linked: ok ? linked.linked : null };
}

/**
 * Starts the record provider of a linked build (opens and syncs its database): the database's
 * name for the start line, or the changes it withheld as E_SCHEMA_WITHHELD diagnostics at each
 * type, its database then released.
 */
async function startRecords(build: AppBuild): Promise<{ database: string | null; errors: Diagnostic[] }> {
  const provider = build.registry.records?.provider;
  if (provider?.start === undefined) return { database: null, errors: [] };
  const { database, problems } = await provider.start();
  if (problems.length === 0) return { database, errors: [] };
  await provider.close?.();
  const sources = new Map<string, string>();
  for (const p of problems) {
    if (build.dir === null || sources.has(p.file)) continue;
    try {
      sources.set(p.file, readFileSync(join(build.dir, p.file), 'utf8'));
    } catch {
      // A file gone since the build: the diagnostic goes without its source line.
    }
  }
  const errors = problems.map((p) => diagnostic(DIAG.E_SCHEMA_WITHHELD, p.message, p, p.hint === undefined ? {} : { hint: p.hint }));
  return { database, errors: withSourceLines(errors, sources) };
}

/**
 * Starts the records of a build about to serve its first request, or DiagnosticError. The
 * database is named once, by the plugin's start line (`Database:`, App.announcements), not
 * logged a second time.
 */
async function startServing(build: AppBuild): Promise<void> {
  const { errors } = await startRecords(build);
  if (errors.length > 0) throw new DiagnosticError(errors);
}

/** `app` once its store is ready (connected, or known unreachable for now). */
async function ready(app: App): Promise<App> {
  await app.storeReady();
  return app;
}

/** Loads an app folder or a `.rvmb` bundle, ready to serve. Throws DiagnosticError when it does not compile or link. */
export async function loadApp(target: string, options: LoadOptions = {}): Promise<App> {
  const logger = options.logger ?? createLogger();
  if (existsSync(target) && statSync(target).isFile()) {
    const bundle = readBundle(target);
    const settings = loadSettings(null, { ...options.settings, config: bundle.config ?? {}, dev: options.dev ?? false });
    // The plugins it was compiled against, found from the bundle's folder, not from its config.
    const recorded = await resolveBundlePlugins(bundle.plugins, target);
    const registry = await appPlugins(settings, null, { ...options, plugins: [...recorded, ...(options.plugins ?? [])] });
    // A bundle comes from outside and may meet other plugins than it was compiled with: check it all.
    const validation = checkValidation(bundle.modules, registry, new Map());
    const { diagnostics, linked } = linkModules(bundle.modules, registry, new Map());
    diagnostics.unshift(...validation);
    if (linked === null || errorsIn(validation).length > 0) throw new DiagnosticError(errorsIn(diagnostics));
    const build: AppBuild = { dir: null, modules: bundle.modules, diagnostics, settings, registry, linked };
    await startServing(build);
    return ready(new App(null, build, logger, options));
  }
  if (!existsSync(target)) throw new DiagnosticError([diagnostic(DIAG.E_NO_APP, `no such app folder or bundle: ${target}`, { file: target, line: 1, col: 1 })]);
  const build = await buildApp(target, options);
  if (build.linked === null) throw new DiagnosticError(errorsIn(build.diagnostics));
  // A diagnostic shows its source line under a caret: one log line per line of it.
  for (const w of build.diagnostics) for (const line of formatDiagnostic(w).split('\n')) logger.info(line);
  await startServing(build);
  return ready(new App(build.dir, build, logger, options));
}

/** A loaded app: what the transport dispatches to. */
export class App implements AppHandle {
  readonly settings: AppSettings;
  readonly store: KeyValueStore;
  /** Which store `ctx.store` is, for `rvm run` to print. */
  readonly storeDescription: string;
  /** The store this app opened (and closes); null when it was given one. */
  private readonly opened: OpenedStore | null;
  readonly log: Logger;
  readonly onAppLog: ((message: string) => void) | undefined;
  readonly admission: Admission;
  readonly watchdog = new Watchdog(() => performance.now());
  private build: AppBuild & { linked: NonNullable<AppBuild['linked']> };
  private pending: Promise<void> | null = null;
  private watcher: FSWatcher | null = null;
  private reloadTimer: NodeJS.Timeout | null = null;
  private releasePending: (() => void) | null = null;
  /** Plugin files whose change was announced (once each: editors write a file several times a save). */
  private readonly changedPlugins = new Set<string>();
  /** Diagnostics of the last failed reload (the last good version keeps serving); empty when the app compiles. */
  lastErrors: Diagnostic[] = [];
  /** What built-in endpoints (the API reference) see of this app. */
  readonly introspection: Introspection;
  /** Abort reasons already logged and answered (see runtimeError). */
  private readonly reportedAborts = new WeakSet<RvmError>();

  constructor(
    readonly dir: string | null,
    build: AppBuild,
    logger: Logger,
    private readonly options: LoadOptions,
  ) {
    this.build = build as AppBuild & { linked: NonNullable<AppBuild['linked']> };
    this.settings = build.settings;
    const app = this;
    this.introspection = new Introspection({
      // The last good build's: a reload re-reads rvm.config.json (the reference's name and version).
      get settings() {
        return app.build.settings;
      },
      current: () => ({ routes: this.build.linked.routes, registry: this.build.registry, modules: this.build.modules }),
      lastErrors: () => this.lastErrors,
      restartNeeded: () => [...this.changedPlugins].sort(),
    });
    this.log = logger;
    this.opened = options.store === undefined ? openStore(build.settings, (line) => logger.error(line), options.workerStore) : null;
    this.store = this.opened?.store ?? options.store!;
    this.storeDescription = this.opened?.description ?? 'given by the host';
    this.admission = new Admission(build.settings.limits);
    this.onAppLog = options.onAppLog;
  }

  /** The start lines the plugins announced (`PluginApi.announce`), in the order first announced: `rvm run` prints them. */
  get announcements(): readonly { label: string; text: string }[] {
    return [...this.build.registry.announcements.values()].map(({ label, text }) => ({ label, text }));
  }

  /** Resolves once `ctx.store` can answer, or is known unreachable for now (its outage logged). */
  storeReady(): Promise<void> {
    return this.opened?.ready() ?? Promise.resolve();
  }

  get router(): Router<RouteTarget> {
    return this.build.linked.router;
  }

  get rootMiddleware(): readonly number[] {
    return this.build.linked.rootMiddleware;
  }

  get modules(): readonly CompiledModule[] {
    return this.build.modules;
  }

  /** The current build's validation of its routes (VALIDATE). */
  get validation(): ValidationPlans {
    return this.build.linked.validation;
  }

  get program(): Program {
    return this.build.linked.program;
  }

  /** Every route with its file, in file order. */
  routes(): readonly RouteTarget[] {
    return this.build.linked.routes;
  }

  ready(): void | Promise<void> {
    return this.pending ?? undefined;
  }

  builtin(request: IncomingRequest, path: string, rawQuery: string): OutgoingResponse | Promise<OutgoingResponse> | null {
    const endpoint = this.build.registry.endpoints.get(path.slice(BUILTIN_PREFIX.length));
    if (endpoint === undefined) return null;
    const methods = endpoint.meta.methods ?? ['GET'];
    if (!methods.includes(request.method) && !(request.method === 'HEAD' && methods.includes('GET'))) {
      return catalogueResponse(HTTP.method_not_allowed, `Method ${request.method} not allowed`, { allow: methods.join(', ') });
    }
    const ctx = new RequestContext(request, path, rawQuery, {}, this);
    const failed = (e: unknown): OutgoingResponse => {
      this.log.error(`[${ctx.request.id}] built-in ${path} failed: ${describeError(e)}`);
      return catalogueResponse(HTTP.internal_error);
    };
    try {
      const out = answered(this, ctx, endpoint.fn(ctx, this.introspection) as void | Promise<unknown>);
      return out instanceof Promise ? out.catch(failed) : out;
    } catch (e) {
      return failed(e);
    }
  }

  execute(ctx: RequestContext, target: RouteTarget): void | Promise<void> {
    if (target.middleware.length === 0) return this.run(ctx, target.chunk);
    return this.runMiddleware(ctx, target.middleware, 0, () => this.run(ctx, target.chunk));
  }

  around(ctx: RequestContext, chain: readonly number[], answer: () => void): void | Promise<void> {
    return this.runMiddleware(ctx, chain, 0, answer);
  }

  /** Middleware `level` of a chain; past the last level, `final` (the route, or the answer of a request no route takes). */
  private runMiddleware(ctx: RequestContext, chain: readonly number[], level: number, final: () => void | Promise<void>): void | Promise<void> {
    if (level === chain.length) return final();
    let called = false;
    const next = (): Value | Promise<Value> => {
      if (called) throw new RvmError('next() was already called in this middleware', RUNTIME.next_called_twice);
      called = true;
      const inner = this.runMiddleware(ctx, chain, level + 1, final);
      // The inner levels replaced ctx.nextHandler with their own; give this level its own back.
      const restore = (): Value => {
        ctx.nextHandler = next;
        return null;
      };
      return inner instanceof Promise ? inner.then(restore) : restore();
    };
    ctx.nextHandler = next;
    // A middleware that neither answers nor calls next() lets the request through.
    const after = (): void | Promise<void> => {
      ctx.nextHandler = null;
      if (!called && !ctx.response.answered) return this.runMiddleware(ctx, chain, level + 1, final);
    };
    const result = this.run(ctx, chain[level]!);
    return result instanceof Promise ? result.then(after) : after();
  }

  /** Runs one chunk; a runtime error answers 500 instead of escaping. */
  private run(ctx: RequestContext, chunk: number): void | Promise<void> {
    let result: ReturnType<typeof execute>;
    try {
      result = execute(this.build.linked.program, chunk, NO_ARGS, ctx);
    } catch (e) {
      this.runtimeError(ctx, e);
      return;
    }
    if (result instanceof Promise) return result.then(noop, (e: unknown) => this.runtimeError(ctx, e));
  }

  private runtimeError(ctx: RequestContext, e: unknown): void {
    // An abandoned request was answered and logged by the dispatcher; its abort reason ends here.
    if (ctx.abandoned !== null) return;
    const r = ctx.response;
    if (e instanceof VmError) {
      // An aborted request's reason reaches every execution still on its chain (the middleware
      // around a route that ran out of budget): the first logs and answers it, once.
      const reason = ctx.budget.reason;
      if (reason !== null && reason.code === e.code) {
        if (this.reportedAborts.has(reason)) return;
        this.reportedAborts.add(reason);
      }
      const service = SERVICE_ERRORS.get(e.code);
      if (service !== undefined) {
        // Not logged per request: the store logs each outage once, and the request line shows the 503.
        ctx.respond(service.status, catalogueBody(service) as unknown as Value, 'json');
        r.answered = true;
        return;
      }
      const trace = e.trace.length > 1 ? ` (via ${compactTrace(e.trace.slice(1))})` : '';
      this.log.error(`[${ctx.request.id}] runtime error ${e.code} at ${e.at}: ${e.message}${trace}`);
      const shown = this.settings.dev || LIMIT_ERRORS.has(e.code);
      const body = shown ? errorBody(e.message, e.code) : catalogueBody(HTTP.internal_error);
      ctx.respond(HTTP.internal_error.status, (this.settings.dev ? { ...body, at: e.at } : body) as unknown as Value, 'json');
    } else {
      this.log.error(`[${ctx.request.id}] internal error: ${describeError(e)}`);
      ctx.respond(HTTP.internal_error.status, catalogueBody(HTTP.internal_error) as unknown as Value, 'json');
    }
    r.answered = true;
  }

  /** Recompiles changed files and swaps the program in; on failure keeps serving the last good version. */
  async reload(): Promise<boolean> {
    if (this.dir === null) return false;
    try {
      return await this.rebuild(this.dir);
    } finally {
      this.introspection.reloaded();
    }
  }

  private async rebuild(dir: string): Promise<boolean> {
    try {
      const build = await buildApp(dir, { ...this.options, dev: this.settings.dev });
      const started = build.linked === null ? null : await startRecords(build);
      if (build.linked === null || started!.errors.length > 0) {
        this.lastErrors = build.linked === null ? errorsIn(build.diagnostics) : started!.errors;
        for (const d of this.lastErrors) for (const line of formatDiagnostic(d).split('\n')) this.log.error(line);
        this.log.error(`reload failed: keeping the last good version (${this.lastErrors.length} error${this.lastErrors.length === 1 ? '' : 's'})`);
        return false;
      }
      const previous = this.build;
      this.build = build as AppBuild & { linked: NonNullable<AppBuild['linked']> };
      this.lastErrors = [];
      // Requests already running on the previous version keep their records: the store is shared.
      await previous.registry.records?.provider.close?.();
      this.log.info(`reloaded ${build.modules.length} file${build.modules.length === 1 ? '' : 's'}`);
      return true;
    } catch (e) {
      this.log.error(`reload failed: ${(e as Error).message}`);
      return false;
    }
  }

  /** Dev mode: watch the folder and reload before the next request after a change. */
  watch(): void {
    if (this.dir === null || this.watcher) return;
    this.watcher = watch(this.dir, { recursive: true }, (_event, name) => {
      const file = String(name ?? '');
      if (file.split(/[\\/]/).some((part) => SKIPPED_FOLDERS.has(part))) return;
      // Node loads a module once per process: a plugin's new code needs a new process. Only an
      // app that lists plugins has any (a test script of the app is no plugin).
      if (PLUGIN_FILE.test(file) && this.isPluginFile(file) && !this.changedPlugins.has(file)) {
        this.changedPlugins.add(file);
        this.log.info(`${file} changed: plugins are loaded once per process; restart rvm run to use the new version`);
        // The reference shows the notice: its document is rebuilt and open pages are told.
        this.introspection.reloaded();
      }
      if (!file.endsWith('.rvm') && !file.endsWith('rvm.config.json')) return;
      this.scheduleReload();
    });
  }

  /**
   * Whether `file` (relative to the app) is plugin code: the file a listed path spec names, or
   * one in that file's folder below the app root (a plugin's own modules). Tests, scripts and
   * other files of the app are not, nor is anything of an installed package (node_modules is not
   * watched).
   */
  private isPluginFile(file: string): boolean {
    const plugins = this.build.settings.config.plugins;
    if (!Array.isArray(plugins) || this.dir === null) return false;
    const changed = resolve(this.dir, file);
    return plugins.some((spec) => {
      if (typeof spec !== 'string' || !(spec.startsWith('.') || isAbsolute(spec))) return false;
      const entry = resolve(this.dir!, spec);
      const folder = dirname(entry);
      return changed === entry || (folder !== this.dir && changed.startsWith(folder + sep));
    });
  }

  /** Debounces a burst of changes into one reload; requests wait on `pending` until it is done. */
  private scheduleReload(): void {
    if (this.reloadTimer) clearTimeout(this.reloadTimer);
    if (this.releasePending === null) this.pending = new Promise<void>((resolve) => (this.releasePending = resolve));
    this.reloadTimer = setTimeout(() => {
      this.reloadTimer = null;
      const release = this.releasePending!;
      this.releasePending = null;
      void this.reload().finally(() => {
        if (this.releasePending === null) this.pending = null;
        release();
      });
    }, RELOAD_DEBOUNCE_MS);
  }

  async close(): Promise<void> {
    this.watcher?.close();
    this.watcher = null;
    if (this.reloadTimer) clearTimeout(this.reloadTimer);
    this.reloadTimer = null;
    this.releasePending?.();
    this.releasePending = null;
    await this.pending;
    await this.build.registry.records?.provider.close?.();
    await this.opened?.close();
    this.log.flush();
  }
}

function noop(): void {}

/** `a.rvm:3 ← a.rvm:3 ← a.rvm:4` as `a.rvm:3 ×2 ← a.rvm:4`: recursion stays one readable line. */
function compactTrace(frames: readonly string[]): string {
  const parts: string[] = [];
  for (let i = 0; i < frames.length; ) {
    let j = i;
    while (j < frames.length && frames[j] === frames[i]) j++;
    parts.push(j - i > 1 ? `${frames[i]} ×${j - i}` : frames[i]!);
    i = j;
  }
  return parts.join(' ← ');
}
