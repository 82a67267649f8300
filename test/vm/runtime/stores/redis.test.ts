/**
 * The Redis store against a real redis-server on loopback: the shared conformance suite, two
 * clients ("machines") sharing state, keys under their prefix, and outages (a stopped server, a
 * hung one, a restarted one) answered with StoreUnavailableError within the command timeout.
 */
import { after, test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { useRedis } from '../../../support/redis.js';
import {
  REDIS_COMMAND_TIMEOUT_MS,
  REDIS_RECONNECT_MAX_DELAY_MS,
  RedisStore,
  evictionWarning,
  redisAddress,
  type RedisStoreOptions,
} from '../../../../vm/runtime/stores/redis.js';
import { StoreUnavailableError } from '../../../../vm/runtime/stores/unavailable.js';
import { keyValueConformance, realClock, windowConformance } from './conformance.js';

/** What giving up at a timeout may take beyond the timer's own firing: our code and a few scheduling delays. */
const SLACK_MS = 60;
/** The connect timeout of the store built while Redis is down: short, so the test does not wait out the default. */
const SHORT_CONNECT_TIMEOUT_MS = 300;
/**
 * "At once" for a command while Redis is down: no round trip and no queue, only our own code
 * (< 1 ms, 200 commands a few ms) and scheduling, which on a machine whose cores are both busy
 * elsewhere adds tens of ms. A queued command would wait for the next attempt to reconnect, and
 * the test first lets those come REDIS_RECONNECT_MAX_DELAY_MS apart (twice this): of commands
 * sent one after another, every one after the first would wait about that long.
 */
const FAIL_FAST_MS = 250;

const redis = useRedis();
const open: RedisStore[] = [];
// A test that fails before closing its store leaves a connection that would keep this process running.
after(() => Promise.all(open.map((s) => s.close())));

/** A connected store on the test server; closed by the test (or after them all). */
async function connect(options: Partial<RedisStoreOptions> = {}): Promise<RedisStore> {
  const store = new RedisStore({ url: redis().url, ...options });
  open.push(store);
  await store.ready();
  return store;
}

const made = async () => {
  const store = await connect();
  // The server keeps TTLs and windows on its own clock, which on loopback is this machine's.
  return { store, clock: realClock, close: () => store.close() };
};

/** Whether `error` is the unavailable error with its 503 code. */
const unavailable = (error: unknown) => error instanceof StoreUnavailableError && error.code === 'store_unavailable';

/** How long `work` takes to reject, asserting it rejects with StoreUnavailableError. */
async function timeToUnavailable(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await assert.rejects(work, unavailable);
  return performance.now() - started;
}

/**
 * Runs `work` until it no longer fails as unavailable: Redis is back, and the store, reconnecting
 * by itself at most REDIS_RECONNECT_MAX_DELAY_MS apart, must reach it within that (and a second for
 * a loaded machine). Whether it did.
 */
async function recovers(work: () => Promise<unknown>): Promise<boolean> {
  const started = performance.now();
  while (performance.now() - started < REDIS_RECONNECT_MAX_DELAY_MS + 1_000) {
    try {
      await work();
      return true;
    } catch (error) {
      assert.ok(unavailable(error), String(error));
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  return false;
}

/**
 * How late a timer of `ms` set now fires: a loaded machine runs every timer late, the store's
 * own timeout as much as one set beside it, so a bound on when a command gave up adds this.
 */
function lateness(ms: number): Promise<number> {
  const started = performance.now();
  return new Promise((resolve) => setTimeout(() => resolve(Math.max(0, performance.now() - started - ms)), ms));
}

/** Asserts that what took `ms` gave up at `timeoutMs`: not before, and within SLACK_MS of a timer of that length set beside it (`late`). */
function assertGaveUpAt(ms: number, timeoutMs: number, late: number): void {
  assert.ok(ms >= timeoutMs - 5, `rejected after ${ms.toFixed(0)} ms, before the ${timeoutMs} ms timeout`);
  assert.ok(ms < timeoutMs + late + SLACK_MS, `rejected after ${ms.toFixed(0)} ms (a timer set beside it fired ${late.toFixed(0)} ms late)`);
}

describe('Redis store: conformance', () => {
  keyValueConformance('redis key/value store', made);
  windowConformance('redis rate-limit store', made);
});

describe('Redis store: shared by several clients', () => {
  test('two clients ("machines") see one state: values, compare-and-set, windows', async () => {
    const [a, b] = [await connect(), await connect()];
    await a.set('shared', { user: 7 });
    assert.deepEqual(await b.get('shared'), { user: 7 });
    assert.equal(await a.compareAndSet('totp-step', undefined, 1, 60_000), true);
    assert.equal(await b.compareAndSet('totp-step', undefined, 1, 60_000), false, 'a step accepted on one is refused on the other');
    for (let i = 0; i < 3; i++) assert.equal((await a.hit('login', 5, 60_000)).allowed, true);
    assert.deepEqual([(await b.peek('login', 5, 60_000)).remaining, (await b.hit('login', 5, 60_000)).remaining], [2, 1]);
    await b.reset('login');
    assert.equal((await a.peek('login', 5, 60_000)).remaining, 5);
    await Promise.all([a.close(), b.close()]);
  });

  test('400 hits racing from two clients for a limit of 100 → exactly 100 allowed', async () => {
    const clients = [await connect(), await connect()];
    const results = await Promise.all(Array.from({ length: 400 }, (_, i) => clients[i % 2]!.hit('spread', 100, 60_000)));
    assert.equal(results.filter((r) => r.allowed).length, 100);
    await Promise.all(clients.map((c) => c.close()));
  });

  test('keys live under the prefix, key/value and windows apart; another prefix is another namespace', async () => {
    const raw = new Redis(redis().url);
    const a = await connect();
    const other = await connect({ keyPrefix: 'other:' });
    await a.set('name', 'x', 60_000);
    await a.hit('name', 1, 60_000);
    assert.equal(await raw.get('rvm:kv:name'), '"x"');
    assert.ok((await raw.pttl('rvm:kv:name')) > 59_000);
    assert.equal(await raw.type('rvm:rl:name'), 'zset');
    assert.ok((await raw.pttl('rvm:rl:name')) > 59_000, 'a window key lives one window');
    assert.equal(await other.get('name'), undefined);
    assert.equal((await other.peek('name', 1, 60_000)).allowed, true);
    await Promise.all([a.close(), other.close(), raw.quit()]);
  });

  test('a Redis error that is not an outage passes through unchanged', async () => {
    const raw = new Redis(redis().url);
    const s = await connect();
    await raw.set('rvm:rl:wrong', 'not a sorted set');
    await assert.rejects(s.hit('wrong', 1, 1_000), (e: unknown) => !(e instanceof StoreUnavailableError) && /WRONGTYPE/.test(String(e)));
    await raw.set('rvm:kv:garbled', '{not json');
    await assert.rejects(s.get('garbled'), SyntaxError);
    await Promise.all([s.close(), raw.quit()]);
  });
});

describe('Redis store: eviction', () => {
  test('a Redis with a maxmemory and an evicting policy is warned about once at connect; noeviction or no maxmemory is not', async () => {
    const admin = new Redis(redis().url);
    try {
      const linesWith = async (maxmemory: string, policy: string): Promise<string[]> => {
        await admin.config('SET', 'maxmemory', maxmemory);
        await admin.config('SET', 'maxmemory-policy', policy);
        const lines: string[] = [];
        const store = await connect({ log: (line) => lines.push(line) });
        // The check runs after the connection is ready: a round trip or two.
        await store.get('settle');
        await store.get('settle');
        store.close();
        return lines;
      };
      assert.deepEqual(await linesWith('100mb', 'volatile-lru'), [evictionWarning(redisAddress(redis().url), 'volatile-lru')]);
      assert.deepEqual(await linesWith('100mb', 'allkeys-lru'), [evictionWarning(redisAddress(redis().url), 'allkeys-lru')]);
      assert.deepEqual(await linesWith('100mb', 'noeviction'), []);
      assert.deepEqual(await linesWith('0', 'volatile-lru'), []);
    } finally {
      await admin.config('SET', 'maxmemory', '0');
      await admin.config('SET', 'maxmemory-policy', 'noeviction');
      admin.disconnect();
    }
  });
});

describe('Redis store: outages', () => {
  test('Redis stopped: every command rejects with StoreUnavailableError at once; started again: the same store works', async () => {
    const s = await connect();
    await s.set('before', 1);
    await redis().stop();
    // Let the reconnection back-off reach its longest pause: a queued command would now wait up to it.
    await new Promise((r) => setTimeout(r, 2 * REDIS_RECONNECT_MAX_DELAY_MS));
    try {
      const commands = [
        () => s.get('k'),
        () => s.set('k', 1, 1_000),
        () => s.delete('k'),
        () => s.compareAndSet('k', undefined, 1),
        () => s.hit('k', 1, 1_000),
        () => s.peek('k', 1, 1_000),
        () => s.reset('k'),
      ];
      for (const command of commands) {
        const ms = await timeToUnavailable(command);
        assert.ok(ms < FAIL_FAST_MS, `${ms.toFixed(0)} ms: the command waited`);
      }
      // Many at once while down: none waits in a queue.
      const started = performance.now();
      const settled = await Promise.allSettled(Array.from({ length: 200 }, () => s.hit('k', 10, 1_000)));
      assert.ok(settled.every((r) => r.status === 'rejected' && unavailable(r.reason)));
      const took = performance.now() - started;
      assert.ok(took < FAIL_FAST_MS, `${took.toFixed(0)} ms: the commands waited`);
    } finally {
      await redis().start();
    }
    assert.ok(await recovers(() => s.set('after', 2)), 'the store did not reconnect');
    assert.equal(await s.get('after'), 2);
    assert.equal(await s.get('before'), undefined, 'the restarted server kept nothing');
    assert.equal((await s.hit('k', 1, 1_000)).allowed, true);
    await s.close();
  });

  test(`Redis hung: a command rejects with StoreUnavailableError at the command timeout (${REDIS_COMMAND_TIMEOUT_MS} ms), not before, never later than slack`, async () => {
    const s = await connect();
    redis().pause();
    try {
      const late = lateness(REDIS_COMMAND_TIMEOUT_MS);
      const [hit, get] = await Promise.all([timeToUnavailable(() => s.hit('hung', 1, 1_000)), timeToUnavailable(() => s.get('hung'))]);
      for (const ms of [hit, get]) assertGaveUpAt(ms, REDIS_COMMAND_TIMEOUT_MS, await late);
    } finally {
      redis().resume();
    }
    await s.close();
  });

  test('a shorter command timeout is honoured', async () => {
    const s = await connect({ commandTimeoutMs: 150 });
    redis().pause();
    try {
      const late = lateness(150);
      const ms = await timeToUnavailable(() => s.compareAndSet('hung', undefined, 1));
      assertGaveUpAt(ms, 150, await late);
    } finally {
      redis().resume();
    }
    await s.close();
  });

  test('a store built while Redis is down fails fast, then connects by itself', async () => {
    await redis().stop();
    const s = new RedisStore({ url: redis().url, connectTimeoutMs: SHORT_CONNECT_TIMEOUT_MS });
    open.push(s);
    try {
      assert.ok((await timeToUnavailable(() => s.get('k'))) < FAIL_FAST_MS);
      // ready() gives up at the connect timeout (the store keeps trying in the background).
      const late = lateness(SHORT_CONNECT_TIMEOUT_MS);
      const ms = await timeToUnavailable(() => s.ready());
      assertGaveUpAt(ms, SHORT_CONNECT_TIMEOUT_MS, await late);
    } finally {
      await redis().start();
    }
    assert.ok(await recovers(() => s.ready()), 'the store did not connect');
    assert.equal(await s.get('k'), undefined);
    await s.close();
  });

  test('after close, commands reject as unavailable', async () => {
    const s = await connect();
    await s.close();
    await assert.rejects(s.get('k'), unavailable);
    await s.close();
  });
});
