/**
 * Resolves the plugins an app lists in `rvm.config.json` (`"plugins": ["rvm-plugin-x", "./plugins/y.js"]`)
 * to their definitions: package names are resolved from the app directory the way Node resolves
 * an `import` there, paths relative to the app directory.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PluginLoadError } from './registry.js';
import type { PluginDefinition } from './contract.js';

/** Conditions honoured in a package's `exports`, in the order an ESM `import` from Node honours them. */
const EXPORT_CONDITIONS: ReadonlySet<string> = new Set(['import', 'node', 'default']);

/** Imports each spec (package name or path) and returns its plugin definition, in the given order. */
export async function resolvePlugins(specs: string[], appDir: string): Promise<PluginDefinition[]> {
  const dir = resolve(appDir);
  const definitions: PluginDefinition[] = [];
  for (const spec of specs) {
    if (typeof spec !== 'string' || spec.trim() === '') {
      throw new PluginLoadError(`a plugin spec must be a package name or a path, got ${JSON.stringify(spec)}`, 'E_PLUGIN_INVALID');
    }
    const file = isPathSpec(spec) ? resolvePathSpec(spec, dir) : resolvePackageSpec(spec, dir);
    definitions.push(await importDefinition(spec, file));
  }
  return definitions;
}

/** `./x.js`, `../x.js`, `/abs/x.js` (and their Windows spellings) are paths; anything else is a package. */
function isPathSpec(spec: string): boolean {
  return spec.startsWith('./') || spec.startsWith('../') || spec.startsWith('.\\') || spec.startsWith('..\\') || isAbsolute(spec);
}

function notFound(spec: string, why: string): PluginLoadError {
  return new PluginLoadError(`plugin '${spec}' was not found: ${why}`, 'E_PLUGIN_NOT_FOUND');
}

function resolvePathSpec(spec: string, appDir: string): string {
  const file = resolve(appDir, spec);
  if (!existsSync(file) || !statSync(file).isFile()) throw notFound(spec, `no file ${file}`);
  return file;
}

/**
 * Finds a package the way `import` would from a module in the app directory: the nearest
 * `node_modules/<name>` up the tree, its `exports` (import conditions) when it has them,
 * else Node's CommonJS resolution (`main`, `index.js`).
 */
function resolvePackageSpec(spec: string, appDir: string): string {
  // The file need not exist: createRequire only uses it as the starting point of the lookup.
  const require = createRequire(join(appDir, 'rvm.config.json'));
  const { name, subpath } = splitPackageSpec(spec);
  for (const base of require.resolve.paths(name) ?? []) {
    const pkgDir = join(base, name);
    const manifest = join(pkgDir, 'package.json');
    if (!existsSync(manifest)) continue;
    let pkg: { exports?: unknown };
    try {
      pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { exports?: unknown };
    } catch (error) {
      throw new PluginLoadError(`plugin '${spec}' has an unreadable package.json: ${(error as Error).message}`, 'E_PLUGIN_INVALID');
    }
    if (pkg.exports === undefined || pkg.exports === null) break;
    const target = resolveExports(pkg.exports, subpath);
    if (!target) throw notFound(spec, `package '${name}' does not export '${subpath}' for import`);
    const file = resolve(pkgDir, target);
    if (!existsSync(file)) throw notFound(spec, `package '${name}' exports a missing file ${file}`);
    return file;
  }
  try {
    return require.resolve(spec);
  } catch {
    throw notFound(spec, `no package of that name is installed for ${appDir}`);
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
  const isSubpathMap =
    exports !== null && typeof exports === 'object' && !Array.isArray(exports) && Object.keys(exports).some((k) => k.startsWith('.'));
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

/** Imports the module and takes its default export (or named export `plugin`). */
async function importDefinition(spec: string, file: string): Promise<PluginDefinition> {
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (error) {
    throw new PluginLoadError(`plugin '${spec}' failed to load: ${(error as Error)?.message ?? String(error)}`, 'E_PLUGIN_INVALID');
  }
  let candidate = mod.default ?? mod.plugin;
  // A CommonJS module compiled from `export default` arrives as { default: definition }.
  if (isObject(candidate) && !('setup' in candidate) && isObject(candidate.default)) candidate = candidate.default;
  if (!isObject(candidate) || typeof candidate.name !== 'string' || typeof candidate.version !== 'string' || typeof candidate.setup !== 'function') {
    throw new PluginLoadError(
      `plugin '${spec}' does not export a plugin definition (default export or 'plugin': { name, version, setup })`,
      'E_PLUGIN_INVALID',
    );
  }
  return candidate as unknown as PluginDefinition;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object';
}
