/**
 * The in-process sliding windows (vm/runtime/stores/sliding-window.ts): the exact sliding window proved against a brute-force model
 * over generated arrival times, plus remaining/resetAt, reset, idle sweeping and the key cap.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createSlidingWindows } from '../../../../vm/runtime/stores/sliding-window.js';

/** Non-decreasing arrival times (ms), built from generated gaps, some of them zero (simultaneous requests). */
const arrivals = fc
  .array(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 2_000 })), { minLength: 1, maxLength: 200 })
  .map((gaps) => {
    let t = 1_700_000_000_000;
    return gaps.map((g) => (t += g));
  });
const policy = fc.record({ limit: fc.integer({ min: 1, max: 12 }), windowMs: fc.integer({ min: 1, max: 3_000 }) });

/** The reference: allowed iff fewer than `limit` allowed requests lie in (t - window, t]. */
function model(times: number[], limit: number, windowMs: number): { allowed: boolean[]; remaining: number[]; resetAt: number[] } {
  const allowedAt: number[] = [];
  const out = { allowed: [] as boolean[], remaining: [] as number[], resetAt: [] as number[] };
  for (const t of times) {
    const inWindow = allowedAt.filter((a) => a > t - windowMs && a <= t);
    const ok = inWindow.length < limit;
    if (ok) {
      inWindow.push(t);
      allowedAt.push(t);
    }
    out.allowed.push(ok);
    out.remaining.push(limit - inWindow.length);
    out.resetAt.push(Math.min(...inWindow) + windowMs);
  }
  return out;
}

describe('exact sliding window (properties)', () => {
  test('decisions, remaining and resetAt equal the brute-force model', () => {
    fc.assert(
      fc.property(arrivals, policy, (times, { limit, windowMs }) => {
        const store = createSlidingWindows();
        const expected = model(times, limit, windowMs);
        times.forEach((t, i) => {
          const r = store.hit('k', limit, windowMs, t);
          assert.equal(r.allowed, expected.allowed[i], `request ${i} at ${t}`);
          assert.equal(r.remaining, expected.remaining[i]);
          assert.equal(r.resetAt, expected.resetAt[i]);
        });
      }),
      { numRuns: 300 },
    );
  });

  test('no interval of one window length ever holds more than limit allowed requests', () => {
    fc.assert(
      fc.property(arrivals, policy, (times, { limit, windowMs }) => {
        const store = createSlidingWindows();
        const allowed = times.filter((t) => store.hit('k', limit, windowMs, t).allowed);
        // The fullest interval [a, a + window) starts at an allowed arrival.
        for (const a of allowed) {
          const inside = allowed.filter((t) => t >= a && t < a + windowMs).length;
          assert.ok(inside <= limit, `${inside} allowed in [${a}, ${a + windowMs})`);
        }
      }),
      { numRuns: 300 },
    );
  });

  test('a request is allowed whenever fewer than limit were allowed in the trailing window', () => {
    fc.assert(
      fc.property(arrivals, policy, (times, { limit, windowMs }) => {
        const store = createSlidingWindows();
        const allowed: number[] = [];
        for (const t of times) {
          const trailing = allowed.filter((a) => a > t - windowMs).length;
          const r = store.hit('k', limit, windowMs, t);
          if (trailing < limit) assert.equal(r.allowed, true, `refused at ${t} with ${trailing} in the window`);
          if (r.allowed) allowed.push(t);
        }
      }),
      { numRuns: 300 },
    );
  });

  test('peek answers what hit would, without counting', () => {
    fc.assert(
      fc.property(arrivals, policy, (times, { limit, windowMs }) => {
        const a = createSlidingWindows();
        const b = createSlidingWindows();
        for (const t of times) {
          const seen = a.peek('k', limit, windowMs, t);
          const again = a.peek('k', limit, windowMs, t);
          assert.deepEqual(again, seen);
          const real = b.hit('k', limit, windowMs, t);
          a.hit('k', limit, windowMs, t);
          assert.equal(seen.allowed, real.allowed);
        }
      }),
      { numRuns: 200 },
    );
  });

  test('keys are independent', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c'), fc.integer({ min: 0, max: 300 })), { maxLength: 150 }), (events) => {
        const shared = createSlidingWindows();
        const separate = new Map(['a', 'b', 'c'].map((k) => [k, createSlidingWindows()]));
        let t = 0;
        for (const [key, gap] of events) {
          t += gap;
          assert.deepEqual(shared.hit(key, 3, 1_000, t), separate.get(key)!.hit(key, 3, 1_000, t));
        }
      }),
    );
  });
});

describe('in-process sliding windows', () => {
  test('remaining counts down, refusals are not counted, resetAt is when the oldest leaves', () => {
    const s = createSlidingWindows();
    assert.deepEqual(s.hit('k', 2, 1_000, 10_000), { allowed: true, remaining: 1, resetAt: 11_000 });
    assert.deepEqual(s.hit('k', 2, 1_000, 10_500), { allowed: true, remaining: 0, resetAt: 11_000 });
    assert.deepEqual(s.hit('k', 2, 1_000, 10_999), { allowed: false, remaining: 0, resetAt: 11_000 });
    // At 11_000 the first request left (t - window < 10_000 is false: it is out); the refusal at 10_999 was not counted.
    assert.deepEqual(s.hit('k', 2, 1_000, 11_000), { allowed: true, remaining: 0, resetAt: 11_500 });
  });

  test('peek of an unknown key: allowed, full remaining, resetAt now, and no key created', () => {
    const s = createSlidingWindows();
    assert.deepEqual(s.peek('nobody', 5, 1_000, 42), { allowed: true, remaining: 5, resetAt: 42 });
    assert.equal(s.size, 0);
  });

  test('reset forgets a key', () => {
    const s = createSlidingWindows();
    s.hit('k', 1, 60_000, 0);
    assert.equal(s.hit('k', 1, 60_000, 1).allowed, false);
    s.reset('k');
    assert.equal(s.hit('k', 1, 60_000, 2).allowed, true);
    s.reset('never-seen');
  });

  test('the ring grows past its first slot and keeps order across wrap-around', () => {
    const s = createSlidingWindows();
    let t = 0;
    // limit 5, window 100: bursts of five, then a pause that empties the window, many times.
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i < 5; i++) assert.equal(s.hit('k', 5, 100, t + i).allowed, true, `round ${round} #${i}`);
      assert.equal(s.hit('k', 5, 100, t + 5).allowed, false);
      assert.equal(s.hit('k', 5, 100, t + 100).allowed, true);
      t += 250;
    }
  });

  test('a lower limit for the same key takes effect at once', () => {
    const s = createSlidingWindows();
    for (let i = 0; i < 5; i++) s.hit('k', 10, 1_000, i);
    assert.deepEqual(s.hit('k', 3, 1_000, 10), { allowed: false, remaining: 0, resetAt: 1_000 });
    assert.equal(s.hit('k', 10, 1_000, 11).allowed, true);
  });

  test('sweep drops keys whose newest request left the window and keeps the others', () => {
    const s = createSlidingWindows();
    s.hit('old', 5, 1_000, 0);
    s.hit('long', 5, 10_000, 0);
    s.hit('fresh', 5, 1_000, 900);
    s.sweep(1_000);
    assert.equal(s.size, 2);
    assert.equal(s.peek('long', 5, 10_000, 1_000).remaining, 4);
    assert.equal(s.peek('fresh', 5, 1_000, 1_000).remaining, 4);
    s.sweep(1_900);
    assert.equal(s.size, 1);
  });

  test('at maxKeys the least recently used window makes room only once it has ended; while all are live a new key is refused', () => {
    const s = createSlidingWindows({ maxKeys: 3 });
    s.hit('a', 1, 60_000, 0);
    s.hit('b', 1, 60_000, 1);
    s.hit('c', 1, 60_000, 2);
    s.hit('a', 1, 60_000, 3); // refused, but a is now the most recently used
    const refused = s.hit('d', 1, 60_000, 4); // b, the least recently used, is still live: d is refused
    assert.deepEqual(refused, { allowed: false, remaining: 0, resetAt: 60_001 });
    assert.equal(s.size, 3);
    for (const key of ['a', 'b', 'c']) assert.equal(s.peek(key, 1, 60_000, 5).allowed, false, key);
    assert.equal(s.hit('d', 1, 60_000, 60_001).allowed, true); // b's window has ended: it makes room
    assert.equal(s.size, 3);
    assert.equal(s.peek('b', 1, 60_000, 60_002).allowed, true);
    assert.equal(s.peek('d', 1, 60_000, 60_002).allowed, false);
  });

  test('for any sequence of keys the count stays bounded and no live window is forgotten', () => {
    const LIMIT = 2;
    const WINDOW_MS = 1_000;
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.array(fc.tuple(fc.string({ maxLength: 3 }), fc.integer({ min: 0, max: 400 })), { maxLength: 300 }),
        (maxKeys, steps) => {
          const s = createSlidingWindows({ maxKeys });
          // The allowed requests per key, as the windows answered them.
          const allowed = new Map<string, number[]>();
          let now = 0;
          for (const [key, gap] of steps) {
            now += gap;
            if (s.hit(key, LIMIT, WINDOW_MS, now).allowed) allowed.set(key, [...(allowed.get(key) ?? []), now]);
            assert.ok(s.size <= maxKeys);
            for (const [k, times] of allowed) {
              const live = times.filter((t) => t > now - WINDOW_MS).length;
              assert.equal(s.peek(k, LIMIT, WINDOW_MS, now).remaining, LIMIT - live, `${JSON.stringify(k)} at ${now}`);
            }
          }
        },
      ),
    );
  });

  test('a bad maxKeys is refused', () => {
    assert.throws(() => createSlidingWindows({ maxKeys: 0 }));
    assert.throws(() => createSlidingWindows({ maxKeys: 1.5 }));
  });
});
