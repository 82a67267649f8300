/**
 * One suite of behaviour every store runs, in process or shared: `keyValueConformance` for
 * `ctx.store` (KeyValueStore) and `windowConformance` for rate-limit windows. Answers may be values
 * or Promises: everything is awaited.
 *
 * Time comes from the clock `make` hands over with its store. The stores that read time through an
 * injected `now` (in-process, the IPC primary) get `fakeClock()`: time moves only when the suite
 * moves it, so their runs are exact, instant, and the same on a busy machine. Redis keeps TTLs and
 * windows on the server's own clock, so it gets `realClock`, and its checks assume no slack:
 * the server runs on this machine's clock, so the store's time of an operation lies between the
 * clock read just before it was sent and just after it answered, and each check is stated on those
 * readings. A check that needs operations to come *before* an edge (a key not yet expired) first
 * asks `within`: on a machine that stalled past the edge the attempt proves nothing, and it runs
 * again on a new store and new keys, rather than failing or passing by luck.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { KeyValueStore } from '../../../../vm/host/stores.js';
import type { Value } from '../../../../vm/values.js';

/** The concurrency figure of spec/stores.md ("Atomicity and the clock"): 400 hits racing for a limit of 100. */
const RACING_HITS = 400;
const RACING_LIMIT = 100;
/** How many two-way compare-and-set races to run (one would pass by luck). */
const CAS_RACES = 50;
/** The TTL of the expiry tests: long enough for a few round trips to Redis on a busy machine before it ends. */
const TTL_MS = 200;
/** A window that no test outlives: its checks do not depend on time. */
const LONG_WINDOW_MS = 60_000;
/** Attempts of a timed scenario, each on a new store, before its test fails for want of a machine quick enough. */
const MAX_ATTEMPTS = 5;
/** Where the fake clock starts (epoch ms): any fixed time, so a run is the same every time. */
const FAKE_EPOCH = Date.UTC(2026, 0, 1);

/** What a test's factory or close returns, made at once or later: the suite awaits it either way. */
type Awaitable<T> = T | Promise<T>;

/** The window methods of the store contract. */
export type WindowStore = Pick<KeyValueStore, 'hit' | 'peek' | 'reset'>;

/** The clock a store under test keeps time by, as the suite reads and moves it. */
export interface StoreClock {
  /** The store's time now (epoch ms). */
  now(): number;
  /** Resolves once `now()` has reached `t`. */
  until(t: number): Promise<void>;
}

/** A clock that moves only when the suite moves it; pass its `now` to the store. */
export function fakeClock(): StoreClock {
  let t = FAKE_EPOCH;
  return {
    now: () => t,
    until: async (target) => {
      t = Math.max(t, target);
    },
  };
}

/** The machine's clock, for a store that keeps its own: a Redis server on loopback reads this same clock. */
export const realClock: StoreClock = {
  now: () => Date.now(),
  async until(t) {
    // A timer may fire a millisecond early as Date.now counts it: wait again until the clock has reached t.
    while (Date.now() < t) await sleep(t - Date.now());
  },
};

/** A store under test, the clock it keeps time by, and how to let it go after. */
export interface Made<S> {
  store: S;
  clock: StoreClock;
  close(): Awaitable<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let unique = 0;
/** A key no other test of this process uses (shared stores outlive one test). */
const fresh = (name: string) => `${name}-${process.pid}-${unique++}`;
/**
 * When a value set with `ttlMs`, whose set answered at `answered`, is gone from every store:
 * Redis keeps a key through the last millisecond of its TTL.
 */
const goneAt = (answered: number, ttlMs: number) => answered + ttlMs + 1;

/** Runs `body` with a new store from `make`, closing it after. */
async function withStore<S>(make: () => Awaitable<Made<S>>, body: (store: S, clock: StoreClock) => Promise<void>): Promise<void> {
  const made = await make();
  try {
    await body(made.store, made.clock);
  } finally {
    await made.close();
  }
}

/** An attempt whose operations came too late for its checks to say anything (the machine stalled). */
class Late extends Error {}

/** Throws Late unless less than `ms` have passed on `clock` since `since`: the checks after it may assume they have not. */
function within(clock: StoreClock, since: number, ms: number, what: string): void {
  const passed = clock.now() - since;
  if (passed >= ms) throw new Late(`${what} ${passed} ms after, not within ${ms} ms`);
}

/** Runs `scenario` with a new store until an attempt keeps the timing its `within` calls state; it fails as soon as a check of such an attempt does. */
async function timed<S>(t: TestContext, make: () => Awaitable<Made<S>>, scenario: (store: S, clock: StoreClock) => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await withStore(make, scenario);
    } catch (error) {
      if (!(error instanceof Late)) throw error;
      if (attempt === MAX_ATTEMPTS) throw new Error(`all ${MAX_ATTEMPTS} attempts came too late to check anything, the last: ${error.message}`);
      t.diagnostic(`attempt ${attempt} came too late (${error.message}): run again`);
    }
  }
}

/** The key/value behaviour of `ctx.store`, for the store `make` builds (`name` titles the tests). */
export function keyValueConformance(name: string, make: () => Awaitable<Made<KeyValueStore>>): void {
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

  test(`${name}: a ttl keeps the key until it expires, then it is absent`, (t) =>
    timed(t, make, async (s, clock) => {
      const k = fresh('ttl');
      const sent = clock.now();
      await s.set(k, 'v', TTL_MS);
      const answered = clock.now();
      await s.set(`${k}-forever`, 'w');
      const early = await s.get(k);
      within(clock, sent, TTL_MS, 'the get answered');
      assert.equal(early, 'v');
      await clock.until(goneAt(answered, TTL_MS));
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

  test(`${name}: compareAndSet swaps only an unchanged value, compared as JSON; undefined means absent`, (t) =>
    timed(t, make, async (s, clock) => {
      const step = fresh('step');
      const code = fresh('code');
      const sent = clock.now();
      assert.equal(await s.compareAndSet(step, undefined, 10, TTL_MS), true, 'absent → set');
      const answered = clock.now();
      assert.equal(await s.compareAndSet(step, undefined, 11), false, 'present: an absent expectation loses');
      assert.equal(await s.compareAndSet(step, 9, 11), false, 'another value loses');
      assert.equal(await s.compareAndSet(step, '10', 11), false, 'the text "10" is not the number 10');
      const stepNow = await s.get(step);
      within(clock, sent, TTL_MS, 'the step was read');
      assert.equal(stepNow, 10);
      assert.equal(await s.compareAndSet(code, 1, 2), false, 'absent: an expected value loses');
      assert.equal(await s.get(code), undefined);
      assert.equal(await s.compareAndSet(code, undefined, { hmac: 'x', tries: 0 }), true);
      assert.equal(await s.compareAndSet(code, { hmac: 'x', tries: 0 }, { hmac: 'x', tries: 1 }), true, 'equal as JSON, a different object');
      assert.equal(await s.compareAndSet(code, { hmac: 'x', tries: 0 }, { hmac: 'x', tries: 2 }), false, 'the old value is stale');
      assert.deepEqual(await s.get(code), { hmac: 'x', tries: 1 });
      assert.equal(await s.compareAndSet(code, { hmac: 'x', tries: 1 }, undefined), true, 'undefined next removes');
      assert.equal(await s.get(code), undefined);
      await clock.until(goneAt(answered, TTL_MS));
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
export function windowConformance(name: string, make: () => Awaitable<Made<WindowStore>>): void {
  test(`${name}: remaining counts down, refusals are not counted, resetAt is when the oldest leaves`, (t) =>
    timed(t, make, async (s, clock) => {
      const k = fresh('w');
      const windowMs = 400;
      const firstSent = clock.now();
      const first = await s.hit(k, 2, windowMs, clock.now());
      const firstAnswered = clock.now();
      assert.equal(first.allowed, true);
      assert.equal(first.remaining, 1);
      assert.ok(
        first.resetAt >= firstSent + windowMs && first.resetAt <= firstAnswered + windowMs,
        `resetAt ${first.resetAt - firstSent} ms after the hit was sent`,
      );
      await clock.until(firstSent + 150);
      const secondSent = clock.now();
      const second = await s.hit(k, 2, windowMs, clock.now());
      const secondAnswered = clock.now();
      const refused = await s.hit(k, 2, windowMs, clock.now());
      within(clock, firstSent, windowMs, 'the refused hit answered');
      assert.deepEqual(second, { allowed: true, remaining: 0, resetAt: first.resetAt });
      assert.deepEqual(refused, { allowed: false, remaining: 0, resetAt: first.resetAt });
      // Once the first hit left, one more is allowed (the refusal did not count); the second still holds the window.
      await clock.until(first.resetAt);
      const third = await s.hit(k, 2, windowMs, clock.now());
      const fourth = await s.hit(k, 2, windowMs, clock.now());
      within(clock, secondSent, windowMs, 'the fourth hit answered');
      assert.equal(third.allowed, true, 'the oldest left the window');
      assert.equal(third.remaining, 0);
      assert.ok(third.resetAt >= secondSent + windowMs && third.resetAt <= secondAnswered + windowMs, 'the second hit is now the oldest');
      assert.equal(fourth.allowed, false, `sliding, not fixed: two still lie in the last ${windowMs} ms`);
    }));

  test(`${name}: a burst is allowed exactly limit times, and the whole window is free again after it`, (t) =>
    timed(t, make, async (s, clock) => {
      const k = fresh('burst');
      const windowMs = 300;
      const seen = [];
      const sent = clock.now();
      for (let i = 0; i < 8; i++) seen.push(await s.hit(k, 5, windowMs, clock.now()));
      const answered = clock.now();
      within(clock, sent, windowMs, 'the last hit of the burst answered');
      assert.deepEqual(
        seen.map((r) => [r.allowed, r.remaining]),
        [
          [true, 4],
          [true, 3],
          [true, 2],
          [true, 1],
          [true, 0],
          [false, 0],
          [false, 0],
          [false, 0],
        ],
      );
      await clock.until(answered + windowMs);
      const again = await s.hit(k, 5, windowMs, clock.now());
      assert.deepEqual([again.allowed, again.remaining], [true, 4]);
    }));

  test(`${name}: peek answers what hit would, without counting; of an unknown key: allowed, full, resetAt now`, () =>
    withStore(make, async (s, clock) => {
      const k = fresh('peek');
      const sent = clock.now();
      const unknown = await s.peek(k, 3, LONG_WINDOW_MS, clock.now());
      const answered = clock.now();
      assert.equal(unknown.allowed, true);
      assert.equal(unknown.remaining, 3);
      assert.ok(unknown.resetAt >= sent && unknown.resetAt <= answered, `resetAt ${unknown.resetAt - sent} ms after the peek was sent`);
      for (let i = 0; i < 3; i++) {
        assert.equal((await s.peek(k, 3, LONG_WINDOW_MS, clock.now())).remaining, 3 - i);
        assert.equal((await s.hit(k, 3, LONG_WINDOW_MS, clock.now())).allowed, true);
      }
      const full = await s.peek(k, 3, LONG_WINDOW_MS, clock.now());
      assert.equal(full.allowed, false);
      assert.equal(full.remaining, 0);
      assert.equal((await s.peek(k, 0, LONG_WINDOW_MS, clock.now())).allowed, false, 'a limit of 0 allows nothing');
      assert.equal((await s.hit(fresh('zero'), 0, LONG_WINDOW_MS, clock.now())).allowed, false);
    }));

  test(`${name}: reset forgets a key; keys are independent; a lower limit takes effect at once`, () =>
    withStore(make, async (s, clock) => {
      const a = fresh('a');
      const b = fresh('b');
      assert.equal((await s.hit(a, 1, LONG_WINDOW_MS, clock.now())).allowed, true);
      assert.equal((await s.hit(a, 1, LONG_WINDOW_MS, clock.now())).allowed, false);
      assert.equal((await s.hit(b, 1, LONG_WINDOW_MS, clock.now())).allowed, true, 'another key has its own window');
      await s.reset(a);
      assert.equal((await s.hit(a, 1, LONG_WINDOW_MS, clock.now())).allowed, true);
      await s.reset(fresh('never-seen'));
      const c = fresh('c');
      for (let i = 0; i < 5; i++) await s.hit(c, 10, LONG_WINDOW_MS, clock.now());
      assert.deepEqual([(await s.hit(c, 3, LONG_WINDOW_MS, clock.now())).allowed, (await s.hit(c, 3, LONG_WINDOW_MS, clock.now())).remaining], [false, 0]);
      assert.equal((await s.hit(c, 10, LONG_WINDOW_MS, clock.now())).allowed, true);
    }));

  test(`${name}: ${RACING_HITS} concurrent hits, limit ${RACING_LIMIT} → exactly ${RACING_LIMIT} allowed`, () =>
    withStore(make, async (s, clock) => {
      const k = fresh('race');
      const results = await Promise.all(Array.from({ length: RACING_HITS }, () => s.hit(k, RACING_LIMIT, LONG_WINDOW_MS, clock.now())));
      assert.equal(results.filter((r) => r.allowed).length, RACING_LIMIT);
      assert.equal((await s.peek(k, RACING_LIMIT, LONG_WINDOW_MS, clock.now())).remaining, 0);
    }));

  test(`${name}: no interval of one window ever holds more than limit allowed hits (paced arrivals)`, () =>
    withStore(make, async (s, clock) => {
      const k = fresh('pace');
      const limit = 3;
      const windowMs = 200;
      // Arrivals every 20 ms for 1 s; each allowed hit is kept with the clock read before it was
      // sent and after it answered, between which the store's clock counted it.
      const allowed: { sent: number; answered: number }[] = [];
      let refusedWithRoom = 0;
      const end = clock.now() + 1_000;
      while (clock.now() < end) {
        const sent = clock.now();
        const r = await s.hit(k, limit, windowMs, sent);
        if (r.allowed) allowed.push({ sent, answered: clock.now() });
        // Room for sure: fewer than limit allowed hits could still lie in the window when this one came.
        else if (allowed.filter((a) => a.answered > sent - windowMs).length < limit) refusedWithRoom++;
        await clock.until(sent + 20);
      }
      // Any limit + 1 allowed hits span at least a window on the store's clock, so surely on ours.
      for (let i = 0; i + limit < allowed.length; i++) {
        const span = allowed[i + limit]!.answered - allowed[i]!.sent;
        assert.ok(span >= windowMs, `${limit + 1} hits allowed within ${span} ms, from ${allowed[i]!.sent}`);
      }
      assert.ok(allowed.length >= limit * 3, `only ${allowed.length} allowed in 1 s: the window does not slide`);
      assert.equal(refusedWithRoom, 0, 'refused while the trailing window surely had room');
    }));
}
