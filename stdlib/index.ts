/**
 * The standard plugins every app loads, in load order (dependencies are ordered by the registry).
 */
import type { PluginDefinition } from '../plugins/sdk.js';
import { core } from './core/index.js';
import { validation } from './validation/index.js';

/** The standard library: the plugins loaded before any plugin an app lists. */
export const STANDARD_PLUGINS: PluginDefinition[] = [core, validation];
