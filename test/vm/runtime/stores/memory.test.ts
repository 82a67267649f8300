import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_SECURITY_KEYS, MAX_STORE_KEYS, createInProcessStore } from '../../../../vm/runtime/stores/memory.js';
import { SECURITY_KEY_PREFIX } from '../../../../vm/host/stores.js';
import { RvmError } from '../../../../vm/values.js';

describe('createInProcessStore', () => {
  test('get, set, delete', () => {
    const s = createInProcessStore();
    assert.equal(s.get('a'), undefined);
    s.set('a', { n: 1 });
    assert.deepEqual(s.get('a'), { n: 1 });
    s.delete('a');
    assert.equal(s.get('a'), undefined);
    s.close();
  });

  test('TTL: present before, gone at expiry (lazily on read)', () => {
    let t = 1000;
    const s = createInProcessStore({ now: () => t });
    s.set('k', 'v', 500);
    t = 1499;
    assert.equal(s.get('k'), 'v');
    t = 1500;
    assert.equal(s.size, 1);
    assert.equal(s.get('k'), undefined);
    assert.equal(s.size, 0);
    s.close();
  });

  test('sweep removes expired keys nobody reads', () => {
    let t = 0;
    const s = createInProcessStore({ now: () => t });
    s.set('short', 1, 10);
    s.set('long', 2, 1000);
    s.set('forever', 3);
    t = 100;
    s.sweep();
    assert.equal(s.size, 2);
    assert.equal(s.get('long'), 2);
    s.close();
  });

  test('the periodic sweep runs on its own, for values and idle windows', async () => {
    const s = createInProcessStore({ sweepIntervalMs: 5 });
    s.set('k', 1, 1);
    s.hit('idle', 5, 1, Date.now());
    s.hit('busy', 5, 60_000, Date.now());
    await new Promise((r) => setTimeout(r, 40));
    assert.equal(s.size, 0);
    assert.equal(s.windowCount, 1, 'the window still counting a request stays');
    s.close();
  });

  test('bounded: the oldest write is evicted first', () => {
    const s = createInProcessStore({ maxKeys: 3 });
    s.set('a', 1);
    s.set('b', 2);
    s.set('c', 3);
    s.set('a', 10); // rewriting makes `a` the newest
    s.set('d', 4);
    assert.equal(s.size, 3);
    assert.equal(s.get('b'), undefined);
    assert.equal(s.get('a'), 10);
    assert.equal(s.get('d'), 4);
    s.close();
    assert.ok(MAX_STORE_KEYS >= 10_000);
  });

  test('security keys are never evicted by other keys: a flood past maxKeys leaves every mark', () => {
    const s = createInProcessStore({ maxKeys: 10, sweepIntervalMs: 0 });
    for (let i = 0; i < 5; i++) s.set(`${SECURITY_KEY_PREFIX}mark${i}`, i, 60_000);
    for (let i = 0; i < 1000; i++) s.set(`ratelimit-ish:${i}`, i);
    for (let i = 0; i < 5; i++) assert.equal(s.get(`${SECURITY_KEY_PREFIX}mark${i}`), i);
    assert.equal(s.securityKeyCount, 5);
    assert.equal(s.size, 15);
    s.close();
  });

  test(`security keys have their own budget (MAX_SECURITY_KEYS = ${MAX_SECURITY_KEYS}): full of live ones, a new one is refused 503 store_full and none is forgotten`, () => {
    let t = 0;
    const s = createInProcessStore({ sweepIntervalMs: 0, now: () => t });
    const key = (i: number) => `${SECURITY_KEY_PREFIX}${i}`;
    for (let i = 0; i < MAX_SECURITY_KEYS; i++) s.set(key(i), i, 60_000);
    const full = (e: unknown) => e instanceof RvmError && e.code === 'store_full';
    assert.throws(() => s.set(key(-1), 'new', 60_000), full);
    assert.throws(() => s.compareAndSet(key(-1), undefined, 'new', 60_000), full);
    assert.equal(s.get(key(0)), 0, 'the oldest mark is kept');
    assert.equal(s.securityKeyCount, MAX_SECURITY_KEYS);
    // Keys held may change, other keys are not limited by it.
    s.set(key(5), 'changed', 60_000);
    assert.equal(s.compareAndSet(key(6), 6, 'swapped', 60_000), true);
    s.set('plain', 1);
    // Once the least recently written mark has expired, it makes room.
    t = 60_000;
    s.set(key(-1), 'new', 60_000);
    assert.equal(s.get(key(-1)), 'new');
    s.close();
  });

  test('an invalid ttl → invalid_ttl', () => {
    const s = createInProcessStore();
    for (const ttl of [0, -1, NaN, Infinity]) {
      assert.throws(
        () => s.set('k', 1, ttl),
        (e: unknown) => e instanceof RvmError && e.code === 'invalid_ttl',
      );
    }
    s.close();
  });

  test('compareAndSet swaps only an unchanged value, compared as JSON; undefined means absent', () => {
    let t = 1_000;
    const s = createInProcessStore({ now: () => t });
    assert.equal(s.compareAndSet('step', undefined, 10, 100), true, 'absent → set');
    assert.equal(s.compareAndSet('step', undefined, 11), false, 'present: an absent expectation loses');
    assert.equal(s.compareAndSet('step', 9, 11), false, 'another value loses');
    assert.equal(s.get('step'), 10);
    assert.equal(s.compareAndSet('code', undefined, { hmac: 'x', tries: 0 }), true);
    assert.equal(s.compareAndSet('code', { hmac: 'x', tries: 0 }, { hmac: 'x', tries: 1 }), true, 'equal as JSON, a different object');
    assert.equal(s.compareAndSet('code', { hmac: 'x', tries: 0 }, { hmac: 'x', tries: 2 }), false, 'the old value is stale');
    assert.equal(s.compareAndSet('code', { hmac: 'x', tries: 1 }, undefined), true, 'undefined next removes');
    assert.equal(s.get('code'), undefined);
    t += 100;
    assert.equal(s.compareAndSet('step', undefined, 12), true, 'an expired key is absent');
    assert.equal(s.get('step'), 12);
    s.close();
  });
});
