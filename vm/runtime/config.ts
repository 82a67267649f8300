/**
 * App settings: optional `rvm.config.json` in the app dir, overridden by env vars, overridden by
 * what the CLI passes. A malformed file is one clear error naming the file.
 */
import { join } from 'node:path';
import type { AppSettings } from '../host/context.js';
import { createSecretSource } from './secrets.js';
import { DEFAULT_BODY_LIMIT, DEFAULT_LIMITS } from './limits.js';
import type { Limits, OutboundSettings } from '../host/context.js';
import { parseTrustProxy, type TrustProxy } from './http/client-address.js';
import { parseOutboundAllow } from './http/outbound-allow.js';
import { readRegularFile } from '../regular-file.js';
import { DIAG } from '../errors.js';

/** A bad rvm.config.json or config env var: a user error with a one-line message. */
export class ConfigError extends Error {
  readonly code = DIAG.E_CONFIG;
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** The config file's name inside the app dir. */
export const CONFIG_FILE = 'rvm.config.json';

/** Largest config file read: settings, not data; a bigger one (or a device) is refused, never read whole. */
export const MAX_CONFIG_BYTES = 1024 * 1024;

/** Largest body limit accepted: bodies are buffered in memory, and a Buffer this size is still safe to allocate. */
export const MAX_BODY_LIMIT = 1024 * 1024 * 1024;

/** No `outbound` setting: only public addresses are reached. */
export const NO_OUTBOUND: OutboundSettings = Object.freeze({ allow: Object.freeze([]) });

/** What the CLI (or a test) fixes regardless of file and env. */
export interface SettingsOverrides {
  dev?: boolean;
  bodyLimit?: number;
  trustProxy?: TrustProxy;
  /** Limits over those of the file (tests), checked the same way. */
  limits?: Partial<Limits>;
  /** Environment to read `RVM_*` from (default process.env). */
  env?: Record<string, string | undefined>;
  /** Processes serving the app (`rvm run --workers N`); default 1. */
  workers?: number;
  /** Config to use instead of reading `rvm.config.json` (a deploy bundle carries its own); validated the same way. */
  config?: Record<string, unknown>;
}

const UNITS: Record<string, number> = { b: 1, kb: 1024, k: 1024, mb: 1024 ** 2, m: 1024 ** 2, gb: 1024 ** 3, g: 1024 ** 3 };

/** Parses a byte size: a number, or text like `512`, `100kb`, `2mb`, `1.5 MB` (binary units). Null when malformed. */
export function parseSize(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? Math.floor(value) : null;
  if (typeof value !== 'string') return null;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(value);
  if (m === null) return null;
  const unit = UNITS[m[2].toLowerCase() || 'b'];
  return unit === undefined ? null : Math.floor(Number(m[1]) * unit);
}

function parseBool(value: string): boolean | null {
  const v = value.trim().toLowerCase();
  if (v === '1' || v === 'true' || v === 'yes' || v === 'on') return true;
  if (v === '0' || v === 'false' || v === 'no' || v === 'off' || v === '') return false;
  return null;
}

/** A checked trustProxy setting; `where` names the file or variable in the one-line error. */
function trustProxyFrom(value: unknown, where: string): TrustProxy {
  try {
    return parseTrustProxy(value);
  } catch (err) {
    throw new ConfigError(`${where}: trustProxy ${(err as Error).message} (got ${JSON.stringify(value)})`);
  }
}

/** `RVM_TRUST_PROXY` as a setting: a boolean word, digits (a hop count), else a comma-separated list. */
function envTrustValue(text: string): unknown {
  const b = parseBool(text);
  if (b !== null) return b;
  return /^\s*[0-9]+\s*$/.test(text) ? Number(text) : text;
}

function bodyLimitFrom(value: unknown, where: string): number {
  const n = parseSize(value);
  if (n === null || n <= 0 || n > MAX_BODY_LIMIT) {
    throw new ConfigError(`${where}: bodyLimit must be a positive size up to 1gb (a number of bytes or text like "2mb"), got ${JSON.stringify(value)}`);
  }
  return n;
}

/** Reads the file (if any), then env (`RVM_BODY_LIMIT`, `RVM_TRUST_PROXY`), then `overrides`. Throws one-line errors. */
export function loadSettings(appDir: string | null, overrides: SettingsOverrides = {}): AppSettings {
  const env = overrides.env ?? process.env;
  const file = appDir === null ? CONFIG_FILE : join(appDir, CONFIG_FILE);
  const text = overrides.config !== undefined || appDir === null ? null : readConfigText(file);
  const config = overrides.config !== undefined ? { ...overrides.config } : text === null ? {} : parseConfig(file, text);

  let bodyLimit = DEFAULT_BODY_LIMIT;
  if (config.bodyLimit !== undefined) bodyLimit = bodyLimitFrom(config.bodyLimit, file);
  let trustProxy: TrustProxy = false;
  if (config.trustProxy !== undefined) trustProxy = trustProxyFrom(config.trustProxy, file);
  const outbound = outboundFrom(config.outbound, file, text);
  let limits = parseLimits(config.limits, DEFAULT_LIMITS);
  if (typeof limits === 'string') throw new ConfigError(`${file}: ${limits}`);
  if (config.plugins !== undefined && !(Array.isArray(config.plugins) && config.plugins.every((p) => typeof p === 'string'))) {
    throw new ConfigError(`${file}: plugins must be a list of package names or paths`);
  }
  if (
    config.reference !== undefined &&
    typeof config.reference !== 'boolean' &&
    (typeof config.reference !== 'object' || config.reference === null || Array.isArray(config.reference))
  ) {
    throw new ConfigError(`${file}: reference must be true, false or an object`);
  }

  const envLimit = env.RVM_BODY_LIMIT;
  if (envLimit !== undefined && envLimit !== '') bodyLimit = bodyLimitFrom(envLimit, 'RVM_BODY_LIMIT');
  const envTrust = env.RVM_TRUST_PROXY;
  if (envTrust !== undefined) trustProxy = trustProxyFrom(envTrustValue(envTrust), 'RVM_TRUST_PROXY');

  if (overrides.bodyLimit !== undefined) bodyLimit = bodyLimitFrom(overrides.bodyLimit, 'bodyLimit');
  if (overrides.trustProxy !== undefined) trustProxy = trustProxyFrom(overrides.trustProxy, 'trustProxy');
  if (overrides.limits !== undefined) {
    limits = parseLimits(overrides.limits, limits);
    if (typeof limits === 'string') throw new ConfigError(limits);
  }
  const workers = overrides.workers ?? 1;
  if (!Number.isInteger(workers) || workers < 1) throw new ConfigError(`workers must be a whole number of at least 1, got ${JSON.stringify(workers)}`);
  return Object.freeze({
    dir: appDir,
    dev: overrides.dev ?? false,
    bodyLimit,
    trustProxy,
    limits,
    outbound,
    config: Object.freeze(config),
    secrets: createSecretSource(appDir, env),
    workers,
  });
}

/** The config file's text; null when the file does not exist. */
function readConfigText(file: string): string | null {
  try {
    return readRegularFile(file, MAX_CONFIG_BYTES).toString('utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new ConfigError(`${file}: cannot read: ${(err as Error).message}`);
  }
}

/** The config object the file's text holds. */
function parseConfig(file: string, text: string): Record<string, unknown> {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`${file}: invalid JSON: ${(err as Error).message}`);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new ConfigError(`${file}: must hold a JSON object`);
  return data as Record<string, unknown>;
}

/** Keys of the `outbound` object. */
const OUTBOUND_KEYS: readonly string[] = ['allow'];

/**
 * The checked `outbound` setting (`{"allow": [...]}`, spec/plugins/fetch.md). Its error names the
 * file and the line of the bad entry, found in the file's text (`text`; null for a bundle's config).
 */
function outboundFrom(value: unknown, file: string, text: string | null): OutboundSettings {
  if (value === undefined) return NO_OUTBOUND;
  const fail = (message: string, near: unknown): never => {
    const line = text === null ? 0 : lineOf(text, JSON.stringify(near));
    throw new ConfigError(`${file}${line === 0 ? '' : `:${line}`}: ${message}`);
  };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail('outbound must be an object like {"allow": ["127.0.0.1"]}', 'outbound');
  for (const key of Object.keys(value)) if (!OUTBOUND_KEYS.includes(key)) fail(`outbound has no setting '${key}' (known: ${OUTBOUND_KEYS.join(', ')})`, key);
  const allow = (value as { allow?: unknown }).allow;
  if (allow === undefined) return NO_OUTBOUND;
  try {
    return Object.freeze({ allow: parseOutboundAllow(allow) });
  } catch (err) {
    // The error's cause is the entry it refused, when it is one entry.
    return fail(`outbound.allow ${(err as Error).message}`, (err as Error).cause ?? 'allow');
  }
}

/** The 1-based line of the first occurrence of `needle` in `text`, 0 when absent. */
function lineOf(text: string, needle: string): number {
  const at = text.indexOf(needle);
  if (at === -1) return 0;
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < at; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

/** Names of the limits that are byte sizes (`"256mb"` is accepted); the others are counts or milliseconds. */
const SIZES: ReadonlySet<keyof Limits> = new Set(['maxBodyMemory', 'maxResultMemory', 'maxResponseBytes']);

/**
 * The limits of `value` (the config's `limits` object) over `base`: each a positive whole
 * number (sizes may be written `"256mb"`). Returns a message for the first bad entry.
 */
export function parseLimits(value: unknown, base: Limits = DEFAULT_LIMITS): Limits | string {
  if (value === undefined) return base;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'limits must be an object';
  const out: Record<string, number> = { ...base };
  for (const [key, raw] of Object.entries(value)) {
    if (!Object.hasOwn(base, key)) return `limits.${key} is not a limit (known: ${Object.keys(base).join(', ')})`;
    const n = SIZES.has(key as keyof Limits) ? parseSize(raw) : typeof raw === 'number' ? raw : null;
    if (n === null || !Number.isSafeInteger(n) || n <= 0)
      return `limits.${key} must be a positive whole number${SIZES.has(key as keyof Limits) ? ' of bytes (or text like "256mb")' : ''}, got ${JSON.stringify(raw)}`;
    out[key] = n;
  }
  return Object.freeze(out) as unknown as Limits;
}
