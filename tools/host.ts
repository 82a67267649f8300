/**
 * The composition root: the runtime with the standard library plugged in. The CLI, the tests and
 * the benchmarks load and build apps through here; the runtime itself knows no standard plugin.
 */
import { STANDARD_PLUGINS } from '../stdlib/index.js';
import { appPlugins, buildApp as buildWith, type AppBuild, type LoadOptions } from '../vm/runtime/build.js';
import type { App } from '../vm/runtime/app.js';
import { loadSettings } from '../vm/runtime/config.js';
import type { PluginRegistry } from '../vm/host/registry.js';

/**
 * Loads an app folder or bundle with the standard plugins (see the runtime's `loadApp`). The
 * serving runtime is imported here, on first use: `rvm check` and the other commands that only
 * build never load it.
 */
export async function loadApp(target: string, options: LoadOptions = {}): Promise<App> {
  const { loadApp: loadWith } = await import('../vm/runtime/app.js');
  return loadWith(target, { ...options, standard: STANDARD_PLUGINS });
}

/** Compiles and links the app in `dir` with the standard plugins (see the runtime's `buildApp`). */
export function buildApp(dir: string, options: LoadOptions = {}): Promise<AppBuild> {
  return buildWith(dir, { ...options, standard: STANDARD_PLUGINS });
}

/** The registry an app of this host loads: the runtime's and standard plugins, and those `dir`'s config lists when a folder is given. */
export function hostPlugins(dir: string | null, settings = loadSettings(dir)): Promise<PluginRegistry> {
  return appPlugins(settings, dir, { standard: STANDARD_PLUGINS });
}
