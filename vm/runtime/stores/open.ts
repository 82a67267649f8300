/**
 * Which store serves an app's `ctx.store` (spec/stores.md): Redis when `REDIS_URL` (or
 * `"store": {"redis": …}` in rvm.config.json) names one, shared by every process and machine that
 * uses it; else the primary's under `rvm run --workers N`; else one in this process.
 */
import type { AppSettings } from '../../host/context.js';
import type { KeyValueStore } from '../../host/stores.js';
import { ConfigError } from '../config.js';
import { MAX_SECURITY_KEYS, MAX_STORE_KEYS, createInProcessStore } from './memory.js';
import { RedisStore, redisAddress } from './redis.js';
import { MAX_WINDOW_KEYS } from './sliding-window.js';

/** The `store` section of rvm.config.json, checked. */
export interface StoreSettings {
  /** The Redis URL (`REDIS_URL` first), or null for none. */
  redis: string | null;
  /** Most values the in-process store holds. */
  maxKeys: number;
  /** Most rate-limit windows the in-process store holds. */
  maxWindowKeys: number;
  /** Most security keys (replay marks, attempt counters) the in-process store holds. */
  maxSecurityKeys: number;
}

const KNOWN = ['redis', 'maxKeys', 'maxWindowKeys', 'maxSecurityKeys'];

/** Whether `url` is one ioredis can connect with: a parsable redis:// or rediss:// URL, a port in range, a numeric db. */
function validRedisUrl(url: unknown): url is string {
  if (typeof url !== 'string') return false;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  return (parsed.protocol === 'redis:' || parsed.protocol === 'rediss:') && parsed.hostname !== '' && /^(\/\d*)?$/.test(parsed.pathname);
}

/** Reads and checks the store settings; a mistake is a one-line Error naming the setting. */
export function storeSettings(settings: AppSettings): StoreSettings {
  const raw = settings.config.store ?? {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new ConfigError(`rvm.config.json: store must be an object, got ${JSON.stringify(raw)}`);
  const section = raw as Record<string, unknown>;
  for (const key of Object.keys(section)) {
    if (!KNOWN.includes(key)) throw new ConfigError(`rvm.config.json: unknown setting store.${key} (known: ${KNOWN.join(', ')})`);
  }
  const count = (name: string, fallback: number): number => {
    const v = section[name] ?? fallback;
    if (!(typeof v === 'number' && Number.isInteger(v) && v >= 1))
      throw new ConfigError(`rvm.config.json: store.${name} must be a positive integer, got ${JSON.stringify(v)}`);
    return v;
  };
  const fromEnv = settings.secrets.env('REDIS_URL');
  const redis = fromEnv !== undefined && fromEnv !== '' ? fromEnv : (section.redis ?? null);
  if (redis !== null && !validRedisUrl(redis)) {
    throw new ConfigError(
      `${fromEnv ? 'REDIS_URL' : 'rvm.config.json: store.redis'} must be a redis:// or rediss:// URL: redis://[user:password@]host[:port][/db], port 1-65535, db a number`,
    );
  }
  return {
    redis,
    maxKeys: count('maxKeys', MAX_STORE_KEYS),
    maxWindowKeys: count('maxWindowKeys', MAX_WINDOW_KEYS),
    maxSecurityKeys: count('maxSecurityKeys', MAX_SECURITY_KEYS),
  };
}

/** An app's store, what `rvm run` says of it, and how to let it go. */
export interface OpenedStore {
  store: KeyValueStore;
  /** `in this process`, `held by the primary process…` or `Redis at redis://host:port…` (no password). */
  description: string;
  /**
   * Resolves once the store can answer, or once it is clear it cannot yet (the outage logged):
   * a server waits for it before taking requests, so its first ones do not fail while it connects.
   */
  ready(): Promise<void>;
  close(): void | Promise<void>;
}

/** A store reaching the primary process (a worker's), closed with the app. */
export type WorkerStore = (log: (line: string) => void) => KeyValueStore & { close(): void };

/**
 * Opens the store the settings choose; `worker` builds the primary-held one when this process is
 * a worker of `rvm run --workers N` and no Redis is configured. `log` receives the start and end of
 * each outage of a shared store.
 */
export function openKeyValueStore(settings: AppSettings, log: (line: string) => void, worker?: WorkerStore): OpenedStore {
  const chosen = storeSettings(settings);
  if (chosen.redis !== null) {
    const store = new RedisStore({ url: chosen.redis, log });
    return {
      store,
      description: `Redis at ${redisAddress(chosen.redis)} (shared by every process and machine using it)`,
      // Not reachable within the connect timeout: serve anyway, answering 503 until it is.
      ready: () => store.ready().catch(() => {}),
      close: () => store.close(),
    };
  }
  if (worker !== undefined) {
    const store = worker(log);
    return {
      store,
      description: `held by the primary process, shared by its ${settings.workers === 1 ? 'worker' : `${settings.workers} workers`} over IPC`,
      ready: async () => {},
      close: () => store.close(),
    };
  }
  const store = createInProcessStore({ maxKeys: chosen.maxKeys, maxWindowKeys: chosen.maxWindowKeys, maxSecurityKeys: chosen.maxSecurityKeys });
  return { store, description: 'in this process', ready: async () => {}, close: () => store.close() };
}
