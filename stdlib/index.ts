/**
 * The standard plugins every app loads, in load order (dependencies are ordered by the registry).
 */
import type { PluginDefinition } from '../plugins/sdk.js';
import { core } from './core/index.js';
import { validation } from './validation/index.js';
import { crypto } from './crypto/index.js';
import { headers } from './headers/index.js';
import { auth } from './auth/index.js';
import { ratelimit } from './ratelimit/index.js';
import { secrets } from './secrets/index.js';
import { reference } from './reference/index.js';
import { records } from './records/index.js';
import { fetch } from './fetch/index.js';

/** The standard library: the plugins loaded before any plugin an app lists. */
export const STANDARD_PLUGINS: PluginDefinition[] = [core, validation, crypto, headers, auth, ratelimit, secrets, fetch, records, reference];
