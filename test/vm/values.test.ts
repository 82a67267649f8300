/** The shared semantics of vm/values.ts that the operators and the constant folder both use. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { power, RvmError, sequenceIndex } from '../../vm/values.js';

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof RvmError) return e.code;
    throw e;
  }
  return 'none';
}

describe('power (**)', () => {
  test('an int to a non-negative int power is exact whenever the result is a safe integer', () => {
    fc.assert(
      fc.property(fc.integer({ min: -100_000, max: 100_000 }), fc.integer({ min: 0, max: 60 }), (base, exponent) => {
        const exact = BigInt(base) ** BigInt(exponent);
        fc.pre(exact <= BigInt(Number.MAX_SAFE_INTEGER) && exact >= -BigInt(Number.MAX_SAFE_INTEGER));
        assert.equal(power(base, exponent), Number(exact));
      }),
    );
  });

  test('past the safe integers, fractions and negative exponents it is the double', () => {
    assert.equal(power(3, 34), 3 ** 34);
    assert.equal(power(2, -2), 0.25);
    assert.equal(power(2, 0.5), Math.SQRT2);
    assert.equal(power(-2, 3), -8);
    assert.equal(power(0, 0), 1);
  });

  test('0 to a negative power divides by zero; a negative base to a fraction has no real value', () => {
    assert.equal(
      code(() => power(0, -1)),
      'division_by_zero',
    );
    assert.equal(
      code(() => power(-8, 1 / 3)),
      'invalid_argument',
    );
  });
});

describe('sequenceIndex', () => {
  test('counts from the start, or from the end when negative; outside is null', () => {
    assert.deepEqual(
      [0, 2, 3, -1, -3, -4].map((i) => sequenceIndex(i, 3)),
      [0, 2, null, 2, 0, null],
    );
    assert.equal(sequenceIndex(-1, 0), null);
  });
});
