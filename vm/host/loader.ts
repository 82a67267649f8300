/**
 * Resolves the plugins an app lists in `rvm.config.json` (`"plugins": ["rvm-plugin-x", "./plugins/y.js"]`)
 * to their definitions: package names are resolved from the app directory the way Node resolves
 * an `import` there, paths relative to the app directory. A bundle records each of them
 * (recordPlugins) and is served with the same plugins, found from the bundle's folder
 * (resolveBundlePlugins). Every plugin imports the SDK by the runtime's package name, mapped to
 * this runtime (sdk-hook.ts).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BundlePlugin } from '../bytecode/bundle.js';
import { PluginLoadError } from './registry.js';
import { PLUGIN } from '../errors.js';
import type { PluginDefinition } from './plugin.js';

/** Conditions honoured in a package's `exports`, in the order an ESM `import` from Node honours them. */
const EXPORT_CONDITIONS: ReadonlySet<string> = new Set(['import', 'node', 'default']);

/** Imports each spec (package name or path) and returns its plugin definition, in the given order. */
export async function resolvePlugins(specs: string[], appDir: string): Promise<PluginDefinition[]> {
  const dir = resolve(appDir);
  const definitions: PluginDefinition[] = [];
  for (const spec of specs) {
    checkSpec(spec);
    const what = `plugin '${spec}'`;
    definitions.push(await importDefinition(what, locate(spec, dir, what)));
  }
  return definitions;
}

/**
 * What a bundle written to `bundleFile` records of the plugins an app lists: each spec with the
 * name and version of the definition it loads now, and where the server will find it: a relative
 * path spec rebased onto the bundle's folder, an absolute path or a package name as written.
 */
export async function recordPlugins(specs: string[], appDir: string, bundleFile: string): Promise<BundlePlugin[]> {
  const dir = resolve(appDir);
  const bundleDir = dirname(resolve(bundleFile));
  const definitions = await resolvePlugins(specs, dir);
  return specs.map((spec, i) => ({ spec, name: definitions[i]!.name, version: definitions[i]!.version, from: rebase(spec, dir, bundleDir) }));
}

/**
 * Loads the plugins a bundle recorded, from the bundle's folder, in the recorded order. A plugin
 * that is missing is E_PLUGIN_NOT_FOUND, one that loads with another name or version than it was
 * compiled with is E_PLUGIN_MISMATCH; both name the plugin, the bundle and what was expected.
 */
export async function resolveBundlePlugins(records: readonly BundlePlugin[], bundleFile: string): Promise<PluginDefinition[]> {
  const bundleDir = dirname(resolve(bundleFile));
  const definitions: PluginDefinition[] = [];
  for (const record of records) {
    const expected = `${record.name} ${record.version}`;
    const what = `plugin '${record.name}' (${record.version}, listed as '${record.spec}') of bundle ${bundleFile}, expected at '${record.from}'`;
    const definition = await importDefinition(what, locate(record.from, bundleDir, what));
    if (definition.name !== record.name || definition.version !== record.version) {
      throw new PluginLoadError(
        `plugin '${record.name}' of bundle ${bundleFile} does not match: compiled against ${expected}, '${record.from}' is ${definition.name} ${definition.version}; ship that version with the bundle or rebuild it with 'rvm compile'`,
        PLUGIN.E_PLUGIN_MISMATCH,
      );
    }
    definitions.push(definition);
  }
  return definitions;
}

function checkSpec(spec: unknown): void {
  if (typeof spec !== 'string' || spec.trim() === '') {
    throw new PluginLoadError(`a plugin spec must be a package name or a path, got ${JSON.stringify(spec)}`, PLUGIN.E_PLUGIN_INVALID);
  }
}

/** The file a spec names, from `dir`; `what` names the plugin in errors. */
function locate(spec: string, dir: string, what: string): string {
  return isPathSpec(spec) ? resolvePathSpec(spec, dir, what) : resolvePackageSpec(spec, dir, what);
}

/** A relative path spec as seen from `bundleDir` (`/` separators, `./` or `../` first); other specs unchanged. */
function rebase(spec: string, appDir: string, bundleDir: string): string {
  if (!isPathSpec(spec) || isAbsolute(spec)) return spec;
  const path = relative(bundleDir, resolve(appDir, spec));
  // On Windows, a plugin on another drive than the bundle has no relative path.
  if (isAbsolute(path)) return path;
  const posix = path.split(sep).join('/');
  return posix.startsWith('../') ? posix : `./${posix}`;
}

/** `./x.js`, `../x.js`, `/abs/x.js` (and their Windows spellings) are paths; anything else is a package. */
function isPathSpec(spec: string): boolean {
  return spec.startsWith('./') || spec.startsWith('../') || spec.startsWith('.\\') || spec.startsWith('..\\') || isAbsolute(spec);
}

function notFound(what: string, why: string): PluginLoadError {
  return new PluginLoadError(`${what} was not found: ${why}`, PLUGIN.E_PLUGIN_NOT_FOUND);
}

function resolvePathSpec(spec: string, dir: string, what: string): string {
  const file = resolve(dir, spec);
  if (!existsSync(file) || !statSync(file).isFile()) throw notFound(what, `no file ${file}`);
  return file;
}

/**
 * Finds a package the way `import` would from a module in `dir` (the app's or the bundle's
 * folder): the nearest `node_modules/<name>` up the tree, its `exports` (import conditions) when
 * it has them, else Node's CommonJS resolution (`main`, `index.js`).
 */
function resolvePackageSpec(spec: string, dir: string, what: string): string {
  // The file need not exist: createRequire only uses it as the starting point of the lookup.
  const require = createRequire(join(dir, 'rvm.config.json'));
  const { name, subpath } = splitPackageSpec(spec);
  for (const base of require.resolve.paths(name) ?? []) {
    const pkgDir = join(base, name);
    const manifest = join(pkgDir, 'package.json');
    if (!existsSync(manifest)) continue;
    let pkg: { exports?: unknown };
    try {
      pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { exports?: unknown };
    } catch (error) {
      throw new PluginLoadError(`${what} has an unreadable package.json: ${(error as Error).message}`, PLUGIN.E_PLUGIN_INVALID);
    }
    if (pkg.exports === undefined || pkg.exports === null) break;
    const target = resolveExports(pkg.exports, subpath);
    if (!target) throw notFound(what, `package '${name}' does not export '${subpath}' for import`);
    const file = resolve(pkgDir, target);
    if (!existsSync(file)) throw notFound(what, `package '${name}' exports a missing file ${file}`);
    return file;
  }
  try {
    return require.resolve(spec);
  } catch {
    throw notFound(what, `no package of that name is installed for ${dir}`);
  }
}

/** `@scope/pkg/sub/x` → name `@scope/pkg`, subpath `./sub/x`; `pkg` → subpath `.`. */
function splitPackageSpec(spec: string): { name: string; subpath: string } {
  const parts = spec.split('/');
  const count = spec.startsWith('@') ? 2 : 1;
  const rest = parts.slice(count);
  return { name: parts.slice(0, count).join('/'), subpath: rest.length ? `./${rest.join('/')}` : '.' };
}

/** Resolves `exports` for one exact subpath (no `*` patterns) under the import conditions. */
function resolveExports(exports: unknown, subpath: string): string | null {
  const isSubpathMap = exports !== null && typeof exports === 'object' && !Array.isArray(exports) && Object.keys(exports).some((k) => k.startsWith('.'));
  if (!isSubpathMap) return subpath === '.' ? pickTarget(exports) : null;
  const entry = (exports as Record<string, unknown>)[subpath];
  return entry === undefined ? null : pickTarget(entry);
}

function pickTarget(target: unknown): string | null {
  if (typeof target === 'string') return target.startsWith('./') ? target : null;
  if (Array.isArray(target)) {
    for (const each of target) {
      const found = pickTarget(each);
      if (found) return found;
    }
    return null;
  }
  if (target !== null && typeof target === 'object') {
    for (const [condition, value] of Object.entries(target)) {
      if (!EXPORT_CONDITIONS.has(condition)) continue;
      const found = pickTarget(value);
      if (found) return found;
    }
  }
  return null;
}

/** Imports the module and takes its default export (or named export `plugin`); `what` names it in errors. */
async function importDefinition(what: string, file: string): Promise<PluginDefinition> {
  mapRuntimePackage();
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (error) {
    const message = (error as Error)?.message ?? String(error);
    throw new PluginLoadError(`${what} failed to load: ${message}${withdrawnExportHint(message)}`, PLUGIN.E_PLUGIN_INVALID);
  }
  let candidate = mod.default ?? mod.plugin;
  // A CommonJS module compiled from `export default` arrives as { default: definition }.
  if (isObject(candidate) && !('setup' in candidate) && isObject(candidate.default)) candidate = candidate.default;
  if (!isObject(candidate) || typeof candidate.name !== 'string' || typeof candidate.version !== 'string' || typeof candidate.setup !== 'function') {
    throw new PluginLoadError(`${what} does not export a plugin definition (default export or 'plugin': { name, version, setup })`, PLUGIN.E_PLUGIN_INVALID);
  }
  return candidate as unknown as PluginDefinition;
}

/**
 * Names `rvm-runtime/sdk` exported once and no longer does (spec/plugins/sdk.md), with what a
 * plugin uses instead: a plugin written against the old SDK fails to load with this said.
 */
const WITHDRAWN_SDK_EXPORTS: Readonly<Record<string, string>> = {
  CPU_BUDGET_MS: "the VM's own limit: charge `ctx.budget` and read `ctx.app.limits.cpuTimeMs`",
  TIME_SLICE_MS: "the VM's own limit: read `ctx.app.limits.timeSliceMs`",
  FUEL_BUDGET: "the VM's own limit: charge `ctx.budget` (chargeText, chargeItems)",
  CHARS_PER_UNIT: "the VM's own accounting: charge `ctx.budget.chargeText(n)`",
  UNITS_PER_ITEM: "the VM's own accounting: charge `ctx.budget.chargeItems(n)`",
  readRegularFile: 'read files with node:fs; the runtime keeps its own reader',
  UnreadableFileError: 'read files with node:fs; the runtime keeps its own reader',
  sniffMime: 'declare a file field with @image or @document; `UploadedFile.type` is the type its bytes show',
  serializeCookie: 'use `setCookie(ctx, name, value, options)`',
  orNull: 'write `{ anyOf: [schema, { type: "null" }] }` (JSON Schema)',
  datetimeInstant: 'use `instantOf(text)` and `isDatetime(text)`',
  defaultErrorMessage: 'use `ctx.fail(status)`, which fills the message, or `HTTP.<code>.message`',
  Answer: 'a native may return its value or a Promise of it: write an async function that awaits, or return the value when it is known at once',
  andThen: 'a native may return its value or a Promise of it: write an async function that awaits, or return the value when it is known at once',
  answerOf: 'a native may return its value or a Promise of it: write an async function that awaits, or return the value when it is known at once',
};

/** The hint for a plugin that imports a name the SDK withdrew, from the import error's message; '' otherwise. */
function withdrawnExportHint(message: string): string {
  const name = /module '(?:rvm-runtime\/sdk|[^']*\/plugins\/sdk\.js)' does not provide an export named '(\w+)'/.exec(message)?.[1];
  const instead = name === undefined ? undefined : WITHDRAWN_SDK_EXPORTS[name];
  return instead === undefined ? '' : ` (rvm-runtime/sdk no longer exports ${name}: ${instead}; see spec/plugins/sdk.md)`;
}

let runtimePackageMapped = false;

/**
 * Registers the resolve hook (sdk-hook.ts) that maps `rvm-runtime` and its subpaths, imported
 * from any module, to this runtime's own files; once per process, before the first plugin loads.
 */
function mapRuntimePackage(): void {
  if (runtimePackageMapped) return;
  runtimePackageMapped = true;
  register(new URL('./sdk-hook.js', import.meta.url));
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object';
}
