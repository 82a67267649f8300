/**
 * The primary's sliding windows answer exactly what the in-process rate-limit store answers (its
 * own properties are proved against a brute-force model in test/stdlib/ratelimit-store.test.ts),
 * for any arrivals, keys and limits; plus sweeping and the key cap.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createMemoryRateLimitStore } from '../../../../stdlib/ratelimit/store.js';
import { MAX_WINDOW_KEYS, createSlidingWindows } from '../../../../vm/runtime/stores/sliding-window.js';

/** One call: which method, key, limit, window and gap to the previous call (often zero). */
const call = fc.record({
  op: fc.constantFrom('hit', 'hit', 'hit', 'peek', 'reset'),
  key: fc.constantFrom('a', 'b', 'c'),
  limit: fc.integer({ min: 0, max: 8 }),
  windowMs: fc.constantFrom(1, 50, 1_000, 3_000),
  gap: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 60 }), fc.integer({ min: 0, max: 2_000 })),
});

describe('sliding windows of the primary', () => {
  test('hit, peek and reset equal the in-process store for any sequence', () => {
    fc.assert(
      fc.property(fc.array(call, { minLength: 1, maxLength: 250 }), (calls) => {
        const ours = createSlidingWindows({ sweepIntervalMs: 0 });
        const theirs = createMemoryRateLimitStore({ sweepIntervalMs: 0 });
        let t = 1_700_000_000_000;
        calls.forEach(({ op, key, limit, windowMs, gap }, i) => {
          t += gap;
          if (op === 'reset') {
            ours.reset(key);
            theirs.reset(key);
          } else assert.deepEqual(ours[op](key, limit, windowMs, t), theirs[op](key, limit, windowMs, t), `call ${i}: ${op} ${key} at ${t}`);
        });
        assert.equal(ours.size, theirs.size, 'the same keys are held');
      }),
      { numRuns: 400 },
    );
  });

  test('sweep drops keys whose newest request left the window and keeps the others', () => {
    const w = createSlidingWindows({ sweepIntervalMs: 0 });
    w.hit('old', 5, 1_000, 0);
    w.hit('long', 5, 10_000, 0);
    w.hit('fresh', 5, 1_000, 900);
    w.sweep(1_000);
    assert.equal(w.size, 2);
    assert.equal(w.peek('long', 5, 10_000, 1_000).remaining, 4);
    w.sweep(1_900);
    assert.equal(w.size, 1);
  });

  test('the sweep timer runs on its own', async () => {
    let now = 0;
    const w = createSlidingWindows({ sweepIntervalMs: 5, now: () => now });
    w.hit('k', 1, 10, 0);
    now = 100;
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(w.size, 0);
    w.close();
  });

  test('at the key cap the least recently used key is dropped', () => {
    const w = createSlidingWindows({ maxKeys: 3, sweepIntervalMs: 0 });
    w.hit('a', 1, 60_000, 0);
    w.hit('b', 1, 60_000, 1);
    w.hit('c', 1, 60_000, 2);
    w.hit('a', 1, 60_000, 3); // refused, but now the most recently used
    w.hit('d', 1, 60_000, 4); // drops b
    assert.equal(w.size, 3);
    assert.equal(w.peek('a', 1, 60_000, 5).allowed, false);
    assert.equal(w.peek('b', 1, 60_000, 5).allowed, true);
    assert.ok(MAX_WINDOW_KEYS >= 100_000);
  });
});
