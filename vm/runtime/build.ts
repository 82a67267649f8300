/**
 * Building an app: finds the route files of a folder, compiles them through the per-file cache,
 * checks their validation against the plugins and links them into a program and a router (or
 * reads a bundle and links it). Every diagnostic of every file comes out of one build; nothing
 * here serves (app.ts does).
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DIAG } from '../errors.js';
import { DiagnosticError, diagnostic, lineOf, sortDiagnostics, type Diagnostic } from '../diagnostics.js';
import { compileSource, sourceHash } from '../compiler/compiler.js';
import { decodeModule, encodeModule } from '../bytecode/artefact.js';
import { hasLinkProof, linkKey, readCached, writeCached, writeLinkProof } from '../bytecode/cache.js';
import { readBundle } from '../bytecode/bundle.js';
import { link } from '../interp/link.js';
import type { CompiledModule } from '../bytecode/module.js';
import type { Program } from '../interp/program.js';
import { COMPILER_VERSION } from '../lang.js';
import type { AppSettings } from '../host/context.js';
import type { KeyValueStore } from '../host/stores.js';
import type { PluginDefinition } from '../host/plugin.js';
import { loadPlugins, type PluginRegistry } from '../host/registry.js';
import { resolveBundlePlugins, resolvePlugins } from '../host/loader.js';
import { RUNTIME_PLUGIN } from './host-natives.js';
import { loadSettings } from './config.js';
import { assembleRoutes } from './routes.js';
import { findRouteFiles } from './app-files.js';
import type { Logger } from './log.js';
import { DuplicateRouteError, createRouter } from './router.js';
import type { WorkerStore } from './stores/open.js';
import type { RouteTarget, Router } from './types.js';
import { planTypes, planValidation, typeValidation, ValidationPlans } from './validate.js';

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

export function errorsIn(diagnostics: readonly Diagnostic[]): Diagnostic[] {
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

export function withSourceLines(diagnostics: Diagnostic[], sources: ReadonlyMap<string, string>): Diagnostic[] {
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
 * Links a `.rvmb` bundle with the plugins it was compiled against (found from the bundle's
 * folder, not from its config), or DiagnosticError: a bundle comes from outside and may meet
 * other plugins than it was compiled with, so its validation and links are checked in full.
 */
export async function buildBundle(target: string, options: LoadOptions = {}): Promise<AppBuild> {
  const bundle = readBundle(target);
  const settings = loadSettings(null, { ...options.settings, config: bundle.config ?? {}, dev: options.dev ?? false });
  const recorded = await resolveBundlePlugins(bundle.plugins, target);
  const registry = await appPlugins(settings, null, { ...options, plugins: [...recorded, ...(options.plugins ?? [])] });
  const validation = checkValidation(bundle.modules, registry, new Map());
  const { diagnostics, linked } = linkModules(bundle.modules, registry, new Map());
  diagnostics.unshift(...validation);
  if (linked === null || errorsIn(validation).length > 0) throw new DiagnosticError(errorsIn(diagnostics));
  return { dir: null, modules: bundle.modules, diagnostics, settings, registry, linked };
}
