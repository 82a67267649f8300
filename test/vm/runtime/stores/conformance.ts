/**
 * One suite of behaviour every store runs, in process or shared: `keyValueConformance` for
 * `ctx.store` (KeyValueStore) and `windowConformance` for rate-limit windows. Time is real (a
 * shared store keeps its own clock), so windows and TTLs are short and the checks leave a margin
 * of SLACK_MS around each edge. Answers may be values or Promises: everything is awaited.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KeyValueStore } from '../../../../plugins/contract.js';
import type { Value } from '../../../../vm/values.js';

/** Scheduling slack around a time edge: timers and a loaded CI machine are late by a few ms, rarely tens. */
export const SLACK_MS = 60;
/** The concurrency figure of spec/stores.md ("Atomicity and the clock"): 400 hits racing for a limit of 100. */
const RACING_HITS = 400;
const RACING_LIMIT = 100;
/** How many two-way compare-and-set races to run (one would pass by luck). */
const CAS_RACES = 50;

type Answer<T> = T | Promise<T>;

/** The window methods of the store contract. */
export type WindowStore = Pick<KeyValueStore, 'hit' | 'peek' | 'reset'>;

/** A store under test and how to let it go after. */
export interface Made<S> {
  store: S;
  close(): Answer<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let unique = 0;
/** A key no other test of this process uses (shared stores outlive one test). */
const fresh = (name: string) => `${name}-${process.pid}-${unique++}`;

/** Runs `body` with a new store from `make`, closing it after. */
async function withStore<S>(make: () => Answer<Made<S>>, body: (store: S) => Promise<void>): Promise<void> {
  const made = await make();
  try {
    await body(made.store);
  } finally {
    await made.close();
  }
}

/** The key/value behaviour of `ctx.store`, for the store `make` builds (`name` titles the tests). */
export function keyValueConformance(name: string, make: () => Answer<Made<KeyValueStore>>): void {
  test(`${name}: get, set, delete; values come back equal as JSON`, () =>
    withStore(make, async (s) => {
      const k = fresh('kv');
      assert.equal(await s.get(k), undefined);
      const value: Value = { n: 1, list: [true, null, 'x', 1.5], nested: { a: 'é' } };
      await s.set(k, value);
      assert.deepEqual(await s.get(k), value);
      await s.set(k, 'replaced');
      assert.equal(await s.get(k), 'replaced');
      await s.delete(k);
      assert.equal(await s.get(k), undefined);
      await s.delete(k);
    }));

  test(`${name}: a ttl keeps the key until it expires, then it is absent`, () =>
    withStore(make, async (s) => {
      const k = fresh('ttl');
      await s.set(k, 'v', 200);
      await s.set(`${k}-forever`, 'w');
      assert.equal(await s.get(k), 'v');
      await sleep(200 + SLACK_MS);
      assert.equal(await s.get(k), undefined);
      assert.equal(await s.get(`${k}-forever`), 'w');
    }));

  test(`${name}: an invalid ttl → invalid_ttl`, () =>
    withStore(make, async (s) => {
      for (const ttl of [0, -1, NaN, Infinity]) {
        await assert.rejects(async () => s.set(fresh('bad'), 1, ttl), { code: 'invalid_ttl' });
        await assert.rejects(async () => s.compareAndSet(fresh('bad'), undefined, 1, ttl), { code: 'invalid_ttl' });
      }
    }));

  test(`${name}: compareAndSet swaps only an unchanged value, compared as JSON; undefined means absent`, () =>
    withStore(make, async (s) => {
      const step = fresh('step');
      const code = fresh('code');
      assert.equal(await s.compareAndSet(step, undefined, 10, 200), true, 'absent → set');
      assert.equal(await s.compareAndSet(step, undefined, 11), false, 'present: an absent expectation loses');
      assert.equal(await s.compareAndSet(step, 9, 11), false, 'another value loses');
      assert.equal(await s.compareAndSet(step, '10', 11), false, 'the text "10" is not the number 10');
      assert.equal(await s.get(step), 10);
      assert.equal(await s.compareAndSet(code, 1, 2), false, 'absent: an expected value loses');
      assert.equal(await s.get(code), undefined);
      assert.equal(await s.compareAndSet(code, undefined, { hmac: 'x', tries: 0 }), true);
      assert.equal(await s.compareAndSet(code, { hmac: 'x', tries: 0 }, { hmac: 'x', tries: 1 }), true, 'equal as JSON, a different object');
      assert.equal(await s.compareAndSet(code, { hmac: 'x', tries: 0 }, { hmac: 'x', tries: 2 }), false, 'the old value is stale');
      assert.deepEqual(await s.get(code), { hmac: 'x', tries: 1 });
      assert.equal(await s.compareAndSet(code, { hmac: 'x', tries: 1 }, undefined), true, 'undefined next removes');
      assert.equal(await s.get(code), undefined);
      await sleep(200 + SLACK_MS);
      assert.equal(await s.compareAndSet(step, undefined, 12), true, 'an expired key is absent');
      assert.equal(await s.get(step), 12);
    }));

  test(`${name}: ${CAS_RACES} races of two compareAndSet on one key: exactly one wins each`, () =>
    withStore(make, async (s) => {
      for (let race = 0; race < CAS_RACES; race++) {
        const k = fresh('race');
        // Half the races claim an absent key (a TOTP step), half advance a value (a code's attempts).
        const expected: Value | undefined = race % 2 === 0 ? undefined : { tries: race };
        if (expected !== undefined) await s.set(k, expected);
        const outcomes = await Promise.all([s.compareAndSet(k, expected, { by: 'a' }), s.compareAndSet(k, expected, { by: 'b' })]);
        assert.equal(outcomes.filter(Boolean).length, 1, `race ${race}: ${outcomes}`);
        assert.deepEqual(await s.get(k), { by: outcomes[0] ? 'a' : 'b' });
      }
    }));
}

/** The exact sliding window of rate limits, for the store `make` builds (`name` titles the tests). */
export function windowConformance(name: string, make: () => Answer<Made<WindowStore>>): void {
  test(`${name}: remaining counts down, refusals are not counted, resetAt is when the oldest leaves`, () =>
    withStore(make, async (s) => {
      const k = fresh('w');
      const before = Date.now();
      const first = await s.hit(k, 2, 400, Date.now());
      assert.equal(first.allowed, true);
      assert.equal(first.remaining, 1);
      assert.ok(first.resetAt >= before + 400 - SLACK_MS && first.resetAt <= Date.now() + 400 + SLACK_MS, `resetAt ${first.resetAt - before} ms after the hit`);
      await sleep(150);
      const second = await s.hit(k, 2, 400, Date.now());
      assert.deepEqual(second, { allowed: true, remaining: 0, resetAt: first.resetAt });
      const refused = await s.hit(k, 2, 400, Date.now());
      assert.deepEqual(refused, { allowed: false, remaining: 0, resetAt: first.resetAt });
      // Just after the first hit left, one more is allowed (the refusal did not count); the second still holds the window.
      await sleep(Math.max(0, first.resetAt - Date.now()) + SLACK_MS / 2);
      const third = await s.hit(k, 2, 400, Date.now());
      assert.equal(third.allowed, true, 'the oldest left the window');
      assert.equal(third.remaining, 0);
      assert.ok(third.resetAt > first.resetAt && third.resetAt <= first.resetAt + 150 + SLACK_MS, 'the second hit is now the oldest');
      assert.equal((await s.hit(k, 2, 400, Date.now())).allowed, false, 'sliding, not fixed: two still lie in the last 400 ms');
    }));

  test(`${name}: a burst is allowed exactly limit times, and the whole window is free again after it`, () =>
    withStore(make, async (s) => {
      const k = fresh('burst');
      const seen = [];
      for (let i = 0; i < 8; i++) seen.push(await s.hit(k, 5, 300, Date.now()));
      assert.deepEqual(
        seen.map((r) => [r.allowed, r.remaining]),
        [[true, 4], [true, 3], [true, 2], [true, 1], [true, 0], [false, 0], [false, 0], [false, 0]],
      );
      await sleep(300 + SLACK_MS);
      const again = await s.hit(k, 5, 300, Date.now());
      assert.deepEqual([again.allowed, again.remaining], [true, 4]);
    }));

  test(`${name}: peek answers what hit would, without counting; of an unknown key: allowed, full, resetAt now`, () =>
    withStore(make, async (s) => {
      const k = fresh('peek');
      const before = Date.now();
      const unknown = await s.peek(k, 3, 1_000, Date.now());
      assert.equal(unknown.allowed, true);
      assert.equal(unknown.remaining, 3);
      assert.ok(Math.abs(unknown.resetAt - before) <= SLACK_MS, `resetAt ${unknown.resetAt - before} ms from now`);
      for (let i = 0; i < 3; i++) {
        assert.equal((await s.peek(k, 3, 1_000, Date.now())).remaining, 3 - i);
        assert.equal((await s.hit(k, 3, 1_000, Date.now())).allowed, true);
      }
      const full = await s.peek(k, 3, 1_000, Date.now());
      assert.equal(full.allowed, false);
      assert.equal(full.remaining, 0);
      assert.equal((await s.peek(k, 0, 1_000, Date.now())).allowed, false, 'a limit of 0 allows nothing');
      assert.equal((await s.hit(fresh('zero'), 0, 1_000, Date.now())).allowed, false);
    }));

  test(`${name}: reset forgets a key; keys are independent; a lower limit takes effect at once`, () =>
    withStore(make, async (s) => {
      const a = fresh('a');
      const b = fresh('b');
      assert.equal((await s.hit(a, 1, 60_000, Date.now())).allowed, true);
      assert.equal((await s.hit(a, 1, 60_000, Date.now())).allowed, false);
      assert.equal((await s.hit(b, 1, 60_000, Date.now())).allowed, true, 'another key has its own window');
      await s.reset(a);
      assert.equal((await s.hit(a, 1, 60_000, Date.now())).allowed, true);
      await s.reset(fresh('never-seen'));
      const c = fresh('c');
      for (let i = 0; i < 5; i++) await s.hit(c, 10, 60_000, Date.now());
      assert.deepEqual([(await s.hit(c, 3, 60_000, Date.now())).allowed, (await s.hit(c, 3, 60_000, Date.now())).remaining], [false, 0]);
      assert.equal((await s.hit(c, 10, 60_000, Date.now())).allowed, true);
    }));

  test(`${name}: ${RACING_HITS} concurrent hits, limit ${RACING_LIMIT} → exactly ${RACING_LIMIT} allowed`, () =>
    withStore(make, async (s) => {
      const k = fresh('race');
      const results = await Promise.all(Array.from({ length: RACING_HITS }, () => s.hit(k, RACING_LIMIT, 60_000, Date.now())));
      assert.equal(results.filter((r) => r.allowed).length, RACING_LIMIT);
      assert.equal((await s.peek(k, RACING_LIMIT, 60_000, Date.now())).remaining, 0);
    }));

  test(`${name}: no interval of one window ever holds more than limit allowed hits (paced arrivals)`, () =>
    withStore(make, async (s) => {
      const k = fresh('pace');
      const limit = 3;
      const windowMs = 200;
      // Arrivals every ~20 ms for 1 s; each allowed hit is stamped by when its answer came (at or after the store's clock).
      const allowedAt: number[] = [];
      let refusedWithRoom = 0;
      const deadline = Date.now() + 1_000;
      while (Date.now() < deadline) {
        const sent = Date.now();
        const r = await s.hit(k, limit, windowMs, sent);
        if (r.allowed) allowedAt.push(sent);
        // Room for sure: fewer than limit allowed hits even counting back a margin further than the window.
        else if (allowedAt.filter((t) => t > sent - windowMs - SLACK_MS).length < limit) refusedWithRoom++;
        await sleep(20);
      }
      // The fullest interval starts at an allowed hit; the margin absorbs the gap between our stamp and the store's.
      for (const a of allowedAt) {
        const inside = allowedAt.filter((t) => t >= a && t < a + windowMs - SLACK_MS).length;
        assert.ok(inside <= limit, `${inside} allowed within ${windowMs - SLACK_MS} ms of ${a}`);
      }
      assert.ok(allowedAt.length >= limit * 3, `only ${allowedAt.length} allowed in 1 s: the window does not slide`);
      assert.equal(refusedWithRoom, 0, 'refused while the trailing window clearly had room');
    }));
}
