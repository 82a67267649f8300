/**
 * The Redis store: `ctx.store`'s key/value methods and the rate-limit window methods over one
 * ioredis 5 client, for state shared by many processes and machines. Each operation that must be
 * atomic (compare-and-set, a sliding-window check) is one Lua script, so every client sees it as
 * one step; the window reads the server's clock (`TIME`), the one clock all machines share.
 *
 * Failure policy (spec/stores.md, "When the store cannot be reached"): no offline queue and a command timeout, so a Redis
 * that is down or hung fails each command within REDIS_COMMAND_TIMEOUT_MS instead of holding the
 * request; the client reconnects by itself, and the same store works again once Redis is back.
 */
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import type * as Ioredis from 'ioredis';
import type { Redis } from 'ioredis';
import { RUNTIME } from '../../errors.js';
import { RvmError, type Value } from '../../values.js';
import { onFirstUse } from '../../on-first-use.js';
import { OutageLog, StoreUnavailableError, storeOutageLines, type OutageLogTarget } from './unavailable.js';
import { TurnBatch } from './turn-batch.js';
import type { KeyValueStore, WindowResult } from '../../host/stores.js';

/** Prefix of every key the store writes, so rvm shares a Redis with other users without clashes. */
export const DEFAULT_REDIS_KEY_PREFIX = 'rvm:';
/** How long opening the TCP connection may take: loopback and LAN connect in well under a second. */
export const REDIS_CONNECT_TIMEOUT_MS = 2_000;
/**
 * How long close() waits for a Redis it disconnects from to end the connection before cutting it
 * (ioredis's default is 2 s). It disconnects only from one that is unreachable or not answering,
 * which is not going to end it politely; a healthy one gets QUIT.
 */
export const REDIS_DISCONNECT_TIMEOUT_MS = 100;
/** How long one command may wait for its answer: a healthy Redis answers in < 1 ms, so 1 s means hung, and a request waiting on it answers 503 soon. */
export const REDIS_COMMAND_TIMEOUT_MS = 1_000;
/** Longest pause between reconnection attempts while Redis is down: recovery is noticed within it. */
export const REDIS_RECONNECT_MAX_DELAY_MS = 500;

export interface RedisStoreOptions {
  /** `redis://[user:password@]host:port[/db]` (or `rediss://` for TLS). */
  url: string;
  /** Prefix of every key (default DEFAULT_REDIS_KEY_PREFIX). */
  keyPrefix?: string;
  /** Default REDIS_CONNECT_TIMEOUT_MS. */
  connectTimeoutMs?: number;
  /** Default REDIS_COMMAND_TIMEOUT_MS. */
  commandTimeoutMs?: number;
  /** Where the start and end of an outage are logged, once each, and an evicting Redis once (default: nowhere). */
  log?: (line: string) => void;
}

/**
 * The warning for a Redis that may evict rvm's keys: every security key and window carries a TTL,
 * so `volatile-*` policies evict them as readily as `allkeys-*` ones (spec/stores.md).
 */
export function evictionWarning(address: string, policy: string): string {
  return `store: Redis at ${address} has a maxmemory with maxmemory-policy ${policy}: when full it may evict replay marks, attempt counters and rate-limit windows (a code replayed or guessed afresh, a limit reset); set maxmemory-policy noeviction`;
}

/**
 * GET, compare with the expected JSON text (ARGV[1] '1' when a value is expected, then ARGV[2]
 * its text; absent is nil), then SET (PX when ARGV[5] is not empty) or DEL (ARGV[3] '0').
 */
const COMPARE_AND_SET = `
local current = redis.call('GET', KEYS[1])
if ARGV[1] == '1' then
  if current ~= ARGV[2] then return 0 end
elseif current then
  return 0
end
if ARGV[3] == '0' then
  redis.call('DEL', KEYS[1])
elseif ARGV[5] ~= '' then
  redis.call('SET', KEYS[1], ARGV[4], 'PX', ARGV[5])
else
  redis.call('SET', KEYS[1], ARGV[4])
end
return 1`;

/**
 * The exact sliding window on a sorted set (score: the server's ms clock; member: unique per hit),
 * for a batch of hits and peeks at once: for each key, drop what left (now - window, now], count,
 * and when below the limit and its `add` is '1', add this hit and extend the key's life to one
 * window. ARGV holds four values per key: limit, window, add, member. Answers allowed, remaining
 * and resetAt for each key, in order. The whole batch runs as one atomic step on one `TIME`.
 */
const SLIDING_WINDOWS = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local out = {}
for i = 1, #KEYS do
  local key = KEYS[i]
  local limit = tonumber(ARGV[i * 4 - 3])
  local window = tonumber(ARGV[i * 4 - 2])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  local count = redis.call('ZCARD', key)
  local allowed = 0
  if count < limit then
    allowed = 1
    if ARGV[i * 4 - 1] == '1' then
      redis.call('ZADD', key, now, ARGV[i * 4])
      redis.call('PEXPIRE', key, window)
      count = count + 1
    end
  end
  local resetAt = now
  if count > 0 then
    resetAt = tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2]) + window
  end
  local remaining = limit - count
  if remaining < 0 then remaining = 0 end
  out[i * 3 - 2] = allowed
  out[i * 3 - 1] = remaining
  out[i * 3] = resetAt
end
return out`;

/**
 * Most hits one script call carries: a batch keeps Redis busy for its whole length (it is one
 * atomic step), so a burst is cut into calls of about a millisecond of Redis time each.
 */
export const MAX_WINDOW_BATCH = 256;

/** A hit or peek waiting for the batch of its event-loop turn. */
interface WindowCall {
  key: string;
  limit: number;
  windowMs: number;
  /** The member this hit adds, or '' for a peek. */
  member: string;
  resolve(result: WindowResult): void;
  reject(error: unknown): void;
}

/** The client with the two scripts defined (sent by SHA, the text only when Redis lacks it). */
type ScriptedRedis = Redis & {
  rvmCompareAndSet(key: string, hasExpected: string, expected: string, hasNext: string, next: string, ttl: string): Promise<number>;
  /** `numberOfKeys`, the keys, then four arguments per key (SLIDING_WINDOWS). */
  rvmWindows(numberOfKeys: number, ...keysThenArgs: (string | number)[]): Promise<number[]>;
};

/** ioredis, loaded when the first Redis store is made: an app without Redis never loads it. */
const loadIoredis = onFirstUse(() => createRequire(import.meta.url)('ioredis') as typeof Ioredis);

/** Server replies that mean "cannot serve now", as opposed to a mistake in the command. */
const UNAVAILABLE_REPLIES = /^(LOADING|MASTERDOWN|BUSY|TRYAGAIN|CLUSTERDOWN)\b/;

/** A failure to reach Redis (refused, closed, timed out, not connected) as StoreUnavailableError; other errors unchanged. */
function classify(error: unknown): unknown {
  if (error instanceof loadIoredis().ReplyError && !UNAVAILABLE_REPLIES.test((error as Error).message)) return error;
  const cause = error instanceof Error ? error.message : String(error);
  return new StoreUnavailableError(`Redis is unavailable: ${cause}`, { cause: error });
}

/** Where `url` points, without its user or password: what logs and `rvm run` may show. */
export function redisAddress(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname.length > 1 ? u.pathname : ''}`;
  } catch {
    return 'an unparsable REDIS_URL';
  }
}

/** The ttl as Redis's PX argument: a positive whole number of ms (rounded up), or invalid_ttl. */
function pxOf(ttlMs: number | undefined): string {
  if (ttlMs === undefined) return '';
  if (!(Number.isFinite(ttlMs) && ttlMs > 0)) {
    throw new RvmError(`store ttl must be a positive number of milliseconds, got ${ttlMs}`, RUNTIME.invalid_ttl);
  }
  return String(Math.ceil(ttlMs));
}

/**
 * A shared store on Redis: `KeyValueStore` (values as JSON text) and the rate-limit store's
 * `hit`/`peek`/`reset`. Every method answers a Promise; one that cannot reach Redis rejects with
 * StoreUnavailableError within the command timeout.
 */
export class RedisStore implements KeyValueStore {
  private readonly client: ScriptedRedis;
  /** Key/value keys (strings) and window keys (sorted sets) live apart, so one name cannot hit the other's type. */
  private readonly kvPrefix: string;
  private readonly windowPrefix: string;
  /** Unique per store, so window members from different clients (machines) never collide. */
  private readonly memberPrefix = randomBytes(8).toString('base64url');
  private hits = 0;
  private readonly connectTimeoutMs: number;
  private readonly outage: OutageLog;
  /** Where the outage's lines go. */
  private readonly logTo: OutageLogTarget;

  /** Connects in the background; commands sent before the connection is ready fail fast as unavailable. */
  constructor(options: RedisStoreOptions) {
    const prefix = options.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX;
    this.kvPrefix = `${prefix}kv:`;
    this.windowPrefix = `${prefix}rl:`;
    this.connectTimeoutMs = options.connectTimeoutMs ?? REDIS_CONNECT_TIMEOUT_MS;
    const client = new (loadIoredis().Redis)(options.url, {
      connectTimeout: this.connectTimeoutMs,
      disconnectTimeout: REDIS_DISCONNECT_TIMEOUT_MS,
      commandTimeout: options.commandTimeoutMs ?? REDIS_COMMAND_TIMEOUT_MS,
      // Fail at once while disconnected rather than queue requests behind an outage.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: (attempt) => Math.min(attempt * 50, REDIS_RECONNECT_MAX_DELAY_MS),
    });
    // Without a listener ioredis prints every connection error; the commands report them, once per outage.
    client.on('error', () => {});
    this.outage = new OutageLog(storeOutageLines(`Redis at ${redisAddress(options.url)}`));
    this.logTo = { log: options.log ?? (() => {}) };
    const log = options.log;
    if (log !== undefined) client.once('ready', () => void this.warnIfEvicting(redisAddress(options.url), log));
    client.defineCommand('rvmCompareAndSet', { numberOfKeys: 1, lua: COMPARE_AND_SET });
    // No fixed key count: a batch names as many keys as it has hits.
    client.defineCommand('rvmWindows', { lua: SLIDING_WINDOWS });
    this.client = client as ScriptedRedis;
  }

  /**
   * Resolves once the connection is ready; rejects with StoreUnavailableError when it is not
   * within the connect timeout (the store keeps trying in the background either way).
   */
  ready(): Promise<void> {
    if (this.client.status === 'ready') return Promise.resolve();
    return new Promise((resolve, reject) => {
      const onReady = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.client.off('ready', onReady);
        const error = new StoreUnavailableError(`Redis is unavailable: not connected within ${this.connectTimeoutMs} ms`);
        this.outage.failed(error, this.logTo);
        reject(error);
      }, this.connectTimeoutMs);
      this.client.once('ready', onReady);
    });
  }

  /** Logs evictionWarning when the server has a maxmemory and a policy other than noeviction. */
  private async warnIfEvicting(address: string, log: (line: string) => void): Promise<void> {
    try {
      const [, maxmemory] = (await this.client.config('GET', 'maxmemory')) as string[];
      const [, policy] = (await this.client.config('GET', 'maxmemory-policy')) as string[];
      if (maxmemory !== undefined && maxmemory !== '0' && policy !== undefined && policy !== 'noeviction') log(evictionWarning(address, policy));
    } catch {
      // CONFIG may be renamed or refused (managed Redis): nothing can be told, nothing is wrong with the store.
    }
  }

  /** Runs one command, with a failure to reach Redis as StoreUnavailableError. */
  private async run<T>(command: () => Promise<T>): Promise<T> {
    let answer: T;
    try {
      answer = await command();
    } catch (error) {
      const e = classify(error);
      if (e instanceof StoreUnavailableError) this.outage.failed(e, this.logTo);
      throw e;
    }
    this.outage.reached(this.logTo);
    return answer;
  }

  /** The value of `key` (parsed from its JSON text), undefined when absent or expired. */
  async get(key: string): Promise<Value | undefined> {
    const text = await this.run(() => this.client.get(this.kvPrefix + key));
    return text === null ? undefined : (JSON.parse(text) as Value);
  }

  /** Stores `value` as JSON text, expiring after `ttlMs` (PX) when given. */
  async set(key: string, value: Value, ttlMs?: number): Promise<void> {
    const px = pxOf(ttlMs);
    const text = JSON.stringify(value);
    await this.run(() => (px === '' ? this.client.set(this.kvPrefix + key, text) : this.client.set(this.kvPrefix + key, text, 'PX', px)));
  }

  /** Removes `key`. */
  async delete(key: string): Promise<void> {
    await this.run(() => this.client.del(this.kvPrefix + key));
  }

  /**
   * One script: sets `key` to `next` (removes it when undefined) only if its JSON text is still
   * `expected`'s (undefined: absent), the comparison `sameJson` makes in process.
   */
  async compareAndSet(key: string, expected: Value | undefined, next: Value | undefined, ttlMs?: number): Promise<boolean> {
    const px = next === undefined ? '' : pxOf(ttlMs);
    const hasExpected = expected === undefined ? '0' : '1';
    const expectedText = expected === undefined ? '' : JSON.stringify(expected);
    const hasNext = next === undefined ? '0' : '1';
    const nextText = next === undefined ? '' : JSON.stringify(next);
    const swapped = await this.run(() => this.client.rvmCompareAndSet(this.kvPrefix + key, hasExpected, expectedText, hasNext, nextText, px));
    return swapped === 1;
  }

  /**
   * Checks and, when allowed, counts one request of `key` in an exact sliding window of `windowMs`
   * holding at most `limit`. `_now` is ignored: the window runs on the Redis server's clock, the one
   * clock every machine sharing it agrees on (resetAt is on that clock too).
   */
  hit(key: string, limit: number, windowMs: number, _now?: number): Promise<WindowResult> {
    return this.window(key, limit, windowMs, true);
  }

  /** Like `hit`, without counting (`_now` ignored likewise). */
  peek(key: string, limit: number, windowMs: number, _now?: number): Promise<WindowResult> {
    return this.window(key, limit, windowMs, false);
  }

  /** Forgets every request counted for `key`. */
  async reset(key: string): Promise<void> {
    await this.run(() => this.client.del(this.windowPrefix + key));
  }

  /** Hits and peeks of this event-loop turn, sent as script calls when it ends. */
  private readonly windowCalls = new TurnBatch<WindowCall>((calls) => this.flushWindows(calls));

  /**
   * Queues a hit (`add`) or peek for this turn's batch: under load many requests share one
   * script call and one round trip, as the IPC store batches its messages.
   */
  private window(key: string, limit: number, windowMs: number, add: boolean): Promise<WindowResult> {
    return new Promise((resolve, reject) => {
      const member = add ? `${this.memberPrefix}:${this.hits++}` : '';
      this.windowCalls.add({ key: this.windowPrefix + key, limit, windowMs, member, resolve, reject });
    });
  }

  /** Sends a turn's window calls, at most MAX_WINDOW_BATCH per script call. */
  private flushWindows(calls: WindowCall[]): void {
    for (let from = 0; from < calls.length; from += MAX_WINDOW_BATCH) this.sendWindows(calls.slice(from, from + MAX_WINDOW_BATCH));
  }

  private sendWindows(calls: WindowCall[]): void {
    const keys: string[] = [];
    const args: (string | number)[] = [];
    for (const c of calls) {
      keys.push(c.key);
      args.push(c.limit, c.windowMs, c.member === '' ? '0' : '1', c.member);
    }
    this.run(() => this.client.rvmWindows(keys.length, ...keys, ...args)).then(
      (out) => {
        for (let i = 0; i < calls.length; i++) calls[i]!.resolve({ allowed: out[i * 3] === 1, remaining: out[i * 3 + 1]!, resetAt: out[i * 3 + 2]! });
      },
      (error: unknown) => {
        for (const c of calls) c.reject(error);
      },
    );
  }

  /** Closes the connection (QUIT, or at once when Redis is unreachable). */
  async close(): Promise<void> {
    if (this.client.status === 'ready') {
      try {
        await this.client.quit();
        return;
      } catch {
        // Fall through: the connection is gone either way.
      }
    }
    this.client.disconnect();
  }
}
