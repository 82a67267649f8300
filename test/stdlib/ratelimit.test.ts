/**
 * The ratelimit plugin's natives, headers, keys and guard, called directly with a fake context and
 * an injected clock.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  RvmError,
  SecretText,
  type AppSettings,
  type GuardFn,
  type GuardMeta,
  type KeyValueStore,
  type NativeFn,
  type RequestInfo,
  type Value,
} from '../../plugins/sdk.js';
import { createRateLimitPlugin } from '../../stdlib/ratelimit/index.js';
import { rateLimitHeaders, secondsUntil } from '../../stdlib/ratelimit/headers.js';
import { GuardKeys, guardKey, ipKey, rawKey, userKey, MAX_KEY_LENGTH, MAX_REMEMBERED_GUARD_KEYS } from '../../stdlib/ratelimit/keys.js';
import { fakeContext, laggingStore, loadForTest, TEST_APP } from '../../plugins/testing.js';
import { createInProcessStore } from '../../vm/runtime/stores/memory.js';
import { StoreUnavailableError } from '../../vm/runtime/stores/unavailable.js';

interface Loaded {
  natives: Map<string, NativeFn>;
  guards: Map<string, { fn: GuardFn; meta: GuardMeta }>;
  /** The app's `ctx.store`, shared by every call of the test. */
  store: KeyValueStore;
}

/** Loads the plugin as an app does (natives behind their argument checks), with one in-process store. */
async function load(
  options: Parameters<typeof createRateLimitPlugin>[0],
  app: AppSettings = TEST_APP,
  store: KeyValueStore = createInProcessStore({ sweepIntervalMs: 0 }),
): Promise<Loaded> {
  const { registry } = await loadForTest([createRateLimitPlugin(options)], app);
  return { natives: new Map([...registry.natives].map(([name, n]) => [name, n.fn])), guards: new Map(registry.guards), store };
}

function call(l: Loaded, name: string, ...args: Value[]): any {
  return l.natives.get(name)!(fakeContext({ store: l.store }), ...args);
}

/** A store that cannot be reached: every window call rejects as Redis or the primary would. */
function unreachableStore(): KeyValueStore {
  const down = () => Promise.reject(new StoreUnavailableError('Redis is unavailable: connection refused'));
  return { get: down, set: down, delete: down, compareAndSet: down, hit: down, peek: down, reset: down };
}

function codeOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof RvmError, `expected RvmError, got ${e}`);
    return e.code;
  }
  assert.fail('did not throw');
}

describe('rate limit natives', () => {
  test('rate_limit counts and refuses; reset_at is Unix seconds when the oldest leaves', async () => {
    let now = 1_700_000_000_000;
    const l = await load({ now: () => now });
    assert.deepEqual(call(l, 'rate_limit', 'login:ann', 2, 60), { allowed: true, remaining: 1, reset_at: 1_700_000_060 });
    now += 1_500;
    assert.deepEqual(call(l, 'rate_limit', 'login:ann', 2, 60), { allowed: true, remaining: 0, reset_at: 1_700_000_060 });
    assert.deepEqual(call(l, 'rate_limit', 'login:ann', 2, 60), { allowed: false, remaining: 0, reset_at: 1_700_000_060 });
    now = 1_700_000_060_000;
    assert.equal(call(l, 'rate_limit', 'login:ann', 2, 60).allowed, true);
  });

  test('reset_at is rounded up to the next whole second, never earlier', async () => {
    const l = await load({ now: () => 1_700_000_000_250 });
    assert.equal(call(l, 'rate_limit', 'k', 1, 1).reset_at, 1_700_000_002);
  });

  test('rate_limit_check does not count', async () => {
    const l = await load({ now: () => 5_000 });
    for (let i = 0; i < 3; i++) assert.deepEqual(call(l, 'rate_limit_check', 'k', 1, 10), { allowed: true, remaining: 1, reset_at: 5 });
    call(l, 'rate_limit', 'k', 1, 10);
    assert.deepEqual(call(l, 'rate_limit_check', 'k', 1, 10), { allowed: false, remaining: 0, reset_at: 15 });
  });

  test('ip, user and raw keys never share a window', async () => {
    const l = await load({ now: () => 0 });
    assert.equal(call(l, 'rate_limit', '10.0.0.1', 1, 60).allowed, true);
    assert.equal(call(l, 'rate_limit_ip', '10.0.0.1', 1, 60).allowed, true);
    assert.equal(call(l, 'rate_limit_user', '10.0.0.1', 1, 60).allowed, true);
    assert.equal(call(l, 'rate_limit', 'ip:10.0.0.1', 1, 60).allowed, true);
    assert.equal(call(l, 'rate_limit_ip', '10.0.0.1', 1, 60).allowed, false);
    assert.equal(call(l, 'rate_limit_user', 10, 1, 60).allowed, true);
    assert.equal(call(l, 'rate_limit_user', '10', 1, 60).allowed, false);
  });

  test('rate_limit_ip counts an IPv6 /64 as one client', async () => {
    const l = await load({ now: () => 0 });
    assert.equal(call(l, 'rate_limit_ip', '2001:db8:1:2::1', 1, 60).allowed, true);
    assert.equal(call(l, 'rate_limit_ip', '2001:db8:1:2:ffff::9', 1, 60).allowed, false);
    assert.equal(call(l, 'rate_limit_ip', '2001:db8:1:3::1', 1, 60).allowed, true);
  });

  test('rate_limit_reset starts a fresh window', async () => {
    const l = await load({ now: () => 0 });
    call(l, 'rate_limit', 'k', 1, 60);
    assert.equal(call(l, 'rate_limit', 'k', 1, 60).allowed, false);
    assert.equal(call(l, 'rate_limit_reset', 'k'), null);
    assert.equal(call(l, 'rate_limit', 'k', 1, 60).allowed, true);
  });

  test('a secret key is accepted and counts as its value', async () => {
    const l = await load({ now: () => 0 });
    call(l, 'rate_limit', new SecretText('tok'), 1, 60);
    assert.equal(call(l, 'rate_limit', 'tok', 1, 60).allowed, false);
  });

  test('bad arguments are invalid_argument errors', async () => {
    const l = await load({ now: () => 0 });
    assert.equal(
      codeOf(() => call(l, 'rate_limit', 'k', 0, 60)),
      'invalid_argument',
    );
    assert.equal(
      codeOf(() => call(l, 'rate_limit', 'k', 1.5, 60)),
      'invalid_argument',
    );
    assert.equal(
      codeOf(() => call(l, 'rate_limit', 'k', 100_001, 60)),
      'invalid_argument',
    );
    assert.equal(
      codeOf(() => call(l, 'rate_limit', 'k', 5, 0)),
      'invalid_argument',
    );
    assert.equal(
      codeOf(() => call(l, 'rate_limit', 'k', 5, '60')),
      'invalid_argument',
    );
    assert.equal(
      codeOf(() => call(l, 'rate_limit', null, 5, 60)),
      'invalid_argument',
    );
    assert.equal(
      codeOf(() => call(l, 'rate_limit_user', [1], 5, 60)),
      'invalid_argument',
    );
    assert.equal(
      codeOf(() => call(l, 'rate_limit_headers', -1, 5, 0)),
      'invalid_argument',
    );
  });

  test('a store answering with Promises is accepted', async () => {
    const l = await load({ now: () => 0 }, TEST_APP, laggingStore());
    assert.deepEqual(await call(l, 'rate_limit', 'k', 1, 60), { allowed: true, remaining: 0, reset_at: 60 });
    assert.equal((await call(l, 'rate_limit_check', 'k', 1, 60)).allowed, false);
    assert.equal(await call(l, 'rate_limit_reset', 'k'), null);
    assert.equal((await call(l, 'rate_limit', 'k', 1, 60)).allowed, true);
  });

  test('an unreachable store fails the call with store_unavailable by default', async () => {
    const l = await load({ now: () => 0 }, TEST_APP, unreachableStore());
    for (const name of ['rate_limit', 'rate_limit_check', 'rate_limit_ip', 'rate_limit_user']) {
      await assert.rejects(call(l, name, 'k', 5, 60), (e: unknown) => e instanceof RvmError && e.code === 'store_unavailable', name);
    }
    await assert.rejects(call(l, 'rate_limit_reset', 'k'), (e: unknown) => e instanceof RvmError && e.code === 'store_unavailable');
  });

  test('failOpen: an unreachable store allows, counting nothing; other errors still fail', async () => {
    const app = { ...TEST_APP, config: { rateLimit: { failOpen: true } } };
    const l = await load({ now: () => 7_000 }, app, unreachableStore());
    assert.deepEqual(await call(l, 'rate_limit', 'k', 5, 60), { allowed: true, remaining: 5, reset_at: 7 });
    assert.deepEqual(await call(l, 'rate_limit_check', 'k', 5, 60), { allowed: true, remaining: 5, reset_at: 7 });
    assert.equal(await call(l, 'rate_limit_reset', 'k'), null);
    const broken: KeyValueStore = { ...unreachableStore(), hit: () => Promise.reject(new RvmError('bad ttl', 'invalid_ttl')) };
    const l2 = await load({ now: () => 0 }, app, broken);
    await assert.rejects(call(l2, 'rate_limit', 'k', 5, 60), (e: unknown) => e instanceof RvmError && e.code === 'invalid_ttl');
  });

  test('the rateLimit config section: failOpen a boolean, nothing else; maxKeys moved to the store', async () => {
    await load({}, { ...TEST_APP, config: { rateLimit: { failOpen: false } } });
    await assert.rejects(load({}, { ...TEST_APP, config: { rateLimit: { failOpen: 'yes' } } }), /failOpen must be true or false/);
    await assert.rejects(load({}, { ...TEST_APP, config: { rateLimit: { maxKeys: 10 } } }), /store\.maxWindowKeys/);
    await assert.rejects(load({}, { ...TEST_APP, config: { rateLimit: { failopen: true } } }), /unknown setting rateLimit\.failopen/);
    await assert.rejects(load({}, { ...TEST_APP, config: { rateLimit: 5 } }), /must be an object/);
  });
});

describe('rate limit headers', () => {
  test('rate_limit_headers: both forms, reset as seconds remaining', async () => {
    const l = await load({ now: () => 1_700_000_000_000 });
    assert.deepEqual(call(l, 'rate_limit_headers', 42, 100, 1_700_000_017), {
      'RateLimit-Limit': '100',
      'RateLimit-Remaining': '42',
      'RateLimit-Reset': '17',
      RateLimit: '"default";r=42;t=17',
    });
    assert.deepEqual(call(l, 'rate_limit_headers', 42, 100, 1_700_000_017, 60)['RateLimit-Policy'], '"default";q=100;w=60');
    assert.equal(call(l, 'rate_limit_headers', 0, 100, 1_600_000_000)['RateLimit-Reset'], '0');
  });

  test('the values of a rate_limit result feed rate_limit_headers', async () => {
    const now = 1_700_000_000_400;
    const l = await load({ now: () => now });
    const r = call(l, 'rate_limit', 'k', 3, 30);
    const h = call(l, 'rate_limit_headers', r.remaining, 3, r.reset_at, 30);
    // 30 s away, reset_at rounded up to whole seconds: 30.6 s, announced as 31 (never early).
    assert.equal(h['RateLimit-Reset'], '31');
    assert.equal(h['RateLimit-Remaining'], '2');
  });

  test('secondsUntil rounds up and never goes below zero', () => {
    assert.equal(secondsUntil(10_001, 9_000), 2);
    assert.equal(secondsUntil(10_000, 9_000), 1);
    assert.equal(secondsUntil(5_000, 9_000), 0);
    assert.equal(rateLimitHeaders(5, 1, 3, 0.5)['RateLimit-Policy'], '"default";q=5;w=1');
  });
});

/** A request as the test kit makes one, with no route matched unless `over` names one. */
function request(over: Partial<RequestInfo>): RequestInfo {
  return fakeContext({ request: { route: null, ...over } }).request;
}

describe('rate limit keys', () => {
  test('the guard key is the matched route as written, whatever the path', () => {
    const route = 'GET /users/:id';
    assert.equal(guardKey(request({ path: '/users/7', route }), 5, 60), guardKey(request({ path: '/users/8', route }), 5, 60));
    assert.notEqual(guardKey(request({ path: '/users/7', route }), 5, 60), guardKey(request({ path: '/users/7', route: 'GET /users/me' }), 5, 60));
  });

  test('guard keys separate routes, policies and clients, and group an IPv6 /64', () => {
    const base = request({ path: '/a', ip: '10.0.0.1' });
    assert.notEqual(guardKey(base, 5, 60), guardKey(request({ path: '/b', ip: '10.0.0.1' }), 5, 60));
    assert.notEqual(guardKey(base, 5, 60), guardKey(request({ method: 'POST', path: '/a', ip: '10.0.0.1' }), 5, 60));
    assert.notEqual(guardKey(base, 5, 60), guardKey(base, 5, 61));
    assert.notEqual(guardKey(base, 5, 60), guardKey(request({ path: '/a', ip: '10.0.0.2' }), 5, 60));
    assert.equal(guardKey(request({ ip: '2001:db8::1' }), 5, 60), guardKey(request({ ip: '2001:db8::ffff:1' }), 5, 60));
    assert.notEqual(guardKey(request({ ip: '2001:db8::1' }), 5, 60), guardKey(request({ ip: '2001:db8:0:1::1' }), 5, 60));
  });

  test('remembered guard keys are the guard keys, and their number stays bounded', () => {
    const keys = new GuardKeys(5, 60);
    const route = 'GET /users/:id';
    for (const r of [
      request({ path: '/users/7', route, ip: '10.0.0.1' }),
      request({ path: '/b', ip: '2001:db8::1' }),
      request({ path: '/b', ip: '10.0.0.1' }),
    ]) {
      assert.equal(keys.of(r), guardKey(r, 5, 60));
      assert.equal(keys.of(r), guardKey(r, 5, 60), 'the second time, from memory');
    }
    for (let i = 0; i < MAX_REMEMBERED_GUARD_KEYS * 2 + 5; i++) {
      const r = request({ path: '/a', ip: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` });
      assert.equal(keys.of(r), guardKey(r, 5, 60));
    }
    assert.ok(keys.size > 0 && keys.size <= MAX_REMEMBERED_GUARD_KEYS);
  });

  test('rate_limit_ip keys: one key per client however its address is written', () => {
    assert.deepEqual(new Set(['9.9.9.9', '9.9.9.9:1234', '::ffff:9.9.9.9', '[::ffff:9.9.9.9]:80'].map(ipKey)), new Set(['ip:9.9.9.9']));
    assert.equal(ipKey('2001:DB8:1:2::5'), ipKey('[2001:db8:1:2:ffff::9]:443'));
    assert.equal(ipKey('2001:db8:1:2::5'), 'ip:2001:db8:1:2::/64');
    // Text that is not an address stays its own key: it is the app's to choose.
    assert.equal(ipKey('009.9.9.9'), 'ip:009.9.9.9');
  });

  test('namespaces keep kinds apart and long keys are bounded', () => {
    assert.deepEqual(new Set([rawKey('x'), ipKey('x'), userKey('x')]).size, 3);
    assert.ok(rawKey('k'.repeat(10_000)).length < MAX_KEY_LENGTH + 16);
    assert.notEqual(rawKey('k'.repeat(10_000)), rawKey('k'.repeat(10_001)));
  });
});

describe('rate_limit guard', () => {
  /** The guard, and contexts sharing one store (one app's requests). */
  async function guard(now: () => number, app: AppSettings = TEST_APP, store?: KeyValueStore) {
    const l = await load({ now }, app, store);
    return { ...l.guards.get('rate_limit')!, ctx: () => fakeContext({ store: l.store }) };
  }

  test('sets both header forms when allowed, 429 with Retry-After when not', async () => {
    let now = 1_000_000;
    const g = await guard(() => now);
    const ok = g.ctx();
    assert.equal(g.fn(ok, [2, 10], { mode: 'required' }), undefined);
    assert.equal(ok.response.getHeader('ratelimit-limit'), '2');
    assert.equal(ok.response.getHeader('ratelimit-remaining'), '1');
    assert.equal(ok.response.getHeader('ratelimit-reset'), '10');
    assert.equal(ok.response.getHeader('ratelimit-policy'), '"default";q=2;w=10');
    assert.equal(ok.response.getHeader('ratelimit'), '"default";r=1;t=10');
    now += 4_500;
    g.fn(g.ctx(), [2, 10], { mode: 'required' });
    const refused = g.ctx();
    g.fn(refused, [2, 10], { mode: 'required' });
    assert.equal(refused.failures[0]?.status, 429);
    assert.equal(refused.failures[0]?.code, 'too_many_requests');
    assert.equal(refused.response.getHeader('retry-after'), '6');
    assert.equal(refused.response.getHeader('ratelimit-remaining'), '0');
    assert.equal(refused.response.getHeader('ratelimit'), '"default";r=0;t=6');
    // Waiting Retry-After seconds is enough.
    now += 6_000;
    assert.equal(g.fn(g.ctx(), [2, 10], { mode: 'required' }), undefined);
  });

  test('optional: counts and sends headers, never refuses', async () => {
    const g = await guard(() => 0);
    g.fn(g.ctx(), [1, 10], { mode: 'optional' });
    const ctx = g.ctx();
    assert.equal(g.fn(ctx, [1, 10], { mode: 'optional' }), undefined);
    assert.equal(ctx.failures.length, 0);
    assert.equal(ctx.response.getHeader('ratelimit-remaining'), '0');
  });

  test('two guards on one route: the headers show the tighter', async () => {
    const g = await guard(() => 0);
    const ctx = g.ctx();
    g.fn(ctx, [2, 10], { mode: 'required' });
    g.fn(ctx, [100, 3600], { mode: 'required' });
    assert.equal(ctx.response.getHeader('ratelimit-limit'), '2');
  });

  test('bad guard arguments are invalid_argument errors', async () => {
    const g = await guard(() => 0);
    assert.equal(
      codeOf(() => g.fn(g.ctx(), [0, 10], { mode: 'required' })),
      'invalid_argument',
    );
    assert.equal(
      codeOf(() => g.fn(g.ctx(), [5, -1], { mode: 'required' })),
      'invalid_argument',
    );
  });

  test('an unreachable store: 503 store_unavailable by default; failOpen lets the request through without headers', async () => {
    const g = await guard(() => 0, TEST_APP, unreachableStore());
    await assert.rejects(
      Promise.resolve(g.fn(g.ctx(), [2, 10], { mode: 'required' })),
      (e: unknown) => e instanceof RvmError && e.code === 'store_unavailable',
    );
    const open = await guard(() => 0, { ...TEST_APP, config: { rateLimit: { failOpen: true } } }, unreachableStore());
    const ctx = open.ctx();
    assert.equal(await open.fn(ctx, [2, 10], { mode: 'required' }), undefined);
    assert.equal(ctx.failures.length, 0);
    assert.equal(ctx.response.getHeader('ratelimit-remaining'), undefined);
  });

  test('a store answering with Promises: the same verdicts', async () => {
    const g = await guard(() => 0, TEST_APP, laggingStore());
    assert.equal(await g.fn(g.ctx(), [1, 10], { mode: 'required' }), undefined);
    const refused = g.ctx();
    await g.fn(refused, [1, 10], { mode: 'required' });
    assert.equal(refused.failures[0]?.status, 429);
  });

  test('meta documents 429 with its headers', async () => {
    const g = await guard(() => 0);
    assert.deepEqual(
      g.meta.params.map((p) => p.name),
      ['limit', 'window_seconds'],
    );
    const r = g.meta.responses!.find((x) => x.status === 429)!;
    assert.equal(r.code, 'too_many_requests');
    assert.ok(r.headers!.includes('Retry-After'));
    assert.ok(r.headers!.includes('RateLimit'));
  });
});
