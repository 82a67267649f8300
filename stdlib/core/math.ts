/**
 * Core math natives: rounding, absolute value, minimum and maximum, square root, clamping and
 * random integers.
 */
import { randomBytes } from 'node:crypto';
import { RUNTIME, RvmError, expectNumber } from '../../plugins/sdk.js';
import type { NativeBudget, PluginApi, Value } from '../../plugins/sdk.js';

/**
 * Most decimal places `round` accepts either way. A double carries about 17 significant digits,
 * so rounding to more places than this changes nothing.
 */
export const MAX_ROUND_DIGITS = 20;

/** Registers round, floor, ceil, abs, min, max, sqrt, clamp and random_int. */
export function registerMath(rvm: PluginApi): void {
  rvm.native(
    'round',
    (_ctx, x, digits) => {
      const d = digits ?? 0;
      if (Math.abs(d) > MAX_ROUND_DIGITS) {
        throw new RvmError(`round() takes between ${-MAX_ROUND_DIGITS} and ${MAX_ROUND_DIGITS} digits, got ${d}`, RUNTIME.invalid_argument);
      }
      return roundHalfAwayFromZero(x, d);
    },
    {
      params: [
        { name: 'x', type: 'number' },
        { name: 'digits', type: 'int', optional: true },
      ],
      returns: 'number',
      doc: 'Rounds to `digits` decimal places (default 0; negative rounds to tens, hundreds, ...), halves away from zero on the decimal value as written: round(1.005, 2) is 1.01, round(-2.5) is -3.',
    },
  );

  rvm.native('floor', (_ctx, x) => Math.floor(x) + 0, {
    params: [{ name: 'x', type: 'number' }],
    returns: 'int',
    doc: 'The largest integer less than or equal to the number.',
  });

  rvm.native('ceil', (_ctx, x) => Math.ceil(x) + 0, {
    params: [{ name: 'x', type: 'number' }],
    returns: 'int',
    doc: 'The smallest integer greater than or equal to the number.',
  });

  rvm.native('abs', (_ctx, x) => Math.abs(x), {
    params: [{ name: 'x', type: 'number' }],
    returns: 'number',
    doc: 'The absolute value of the number.',
  });

  rvm.native('min', (ctx, ...args) => extreme(ctx.budget, 'min', args, (a, b) => a < b), {
    params: [{ name: 'values', type: 'any', rest: true }],
    returns: 'number?',
    doc: 'The smallest of several numbers, or of the numbers in one list argument: min(3, 1) and min([3, 1]) are 1; no numbers gives null; a non-number is a type_error.',
  });

  rvm.native('max', (ctx, ...args) => extreme(ctx.budget, 'max', args, (a, b) => a > b), {
    params: [{ name: 'values', type: 'any', rest: true }],
    returns: 'number?',
    doc: 'The largest of several numbers, or of the numbers in one list argument: max(3, 1) and max([3, 1]) are 3; no numbers gives null; a non-number is a type_error.',
  });

  rvm.native(
    'sqrt',
    (_ctx, x) => {
      if (x < 0) throw new RvmError(`sqrt() of a negative number (${x})`, RUNTIME.invalid_argument);
      return Math.sqrt(x);
    },
    {
      params: [{ name: 'x', type: 'number' }],
      returns: 'number',
      doc: 'The square root of the number: sqrt(9) is 3; a negative number is an invalid_argument error.',
    },
  );

  rvm.native(
    'clamp',
    (_ctx, x, lo, hi) => {
      if (lo > hi) throw new RvmError(`clamp() expects lo <= hi, got ${lo} and ${hi}`, RUNTIME.invalid_argument);
      return Math.min(Math.max(x, lo), hi);
    },
    {
      params: [
        { name: 'x', type: 'number' },
        { name: 'lo', type: 'number' },
        { name: 'hi', type: 'number' },
      ],
      returns: 'number',
      doc: 'The number brought within [lo, hi]: clamp(15, 0, 10) is 10, clamp(-1, 0, 10) is 0; lo over hi is an invalid_argument error.',
    },
  );

  rvm.native(
    'random_int',
    (_ctx, lo, hi) => {
      if (!Number.isSafeInteger(lo) || !Number.isSafeInteger(hi) || lo > hi) {
        throw new RvmError(`random_int() expects lo <= hi, both within ±(2^53 - 1), got ${lo} and ${hi}`, RUNTIME.invalid_argument);
      }
      return randomIntBetween(lo, hi);
    },
    {
      params: [
        { name: 'lo', type: 'int' },
        { name: 'hi', type: 'int' },
      ],
      returns: 'int',
      doc: "A random int from lo to hi, both included (random_int(1, 6) is a die roll), drawn uniformly from the operating system's cryptographic generator, so fit for codes and tokens. lo over hi, or a bound beyond ±(2^53 - 1), is an invalid_argument error.",
    },
  );
}

/** 2^64: the draws random_int makes are 64-bit. */
const TWO_TO_64 = 1n << 64n;

/**
 * A uniform random int in [lo, hi] from crypto.randomBytes. The span can reach 2^54, past
 * crypto.randomInt's 2^48, so 64-bit draws are reduced modulo the span, drawing again when a
 * draw falls in the incomplete last span (rejection sampling: no value is more likely).
 */
function randomIntBetween(lo: number, hi: number): number {
  const span = BigInt(hi) - BigInt(lo) + 1n;
  const usable = TWO_TO_64 - (TWO_TO_64 % span);
  for (;;) {
    const draw = randomBytes(8).readBigUInt64BE();
    if (draw < usable) return Number(BigInt(lo) + (draw % span));
  }
}

function extreme(budget: NativeBudget, fn: string, args: Value[], better: (a: number, b: number) => boolean): Value {
  const items = args.length === 1 && Array.isArray(args[0]) ? args[0] : args;
  budget.chargeItems(items.length);
  let best: number | null = null;
  for (const item of items) {
    const n = expectNumber(fn, 'values', item);
    if (best === null || better(n, best)) best = n;
  }
  return best;
}

/**
 * Rounds on the shortest decimal form of the number (what `text(x)` shows), not on its binary
 * value, so 1.005 rounds up like a person expects. Shifting the exponent in text is exact.
 */
export function roundHalfAwayFromZero(x: number, digits: number): number {
  // An integer has no decimals to round, and shifting a large one (1e300 by 20 places) would overflow.
  if (x === 0 || (digits >= 0 && Number.isInteger(x))) return x + 0;
  const sign = x < 0 ? -1 : 1;
  const [mantissa, exponent] = Math.abs(x).toExponential().split('e');
  const shifted = Number(`${mantissa}e${Number(exponent) + digits}`);
  const rounded = Math.round(shifted);
  const [m2, e2] = rounded.toExponential().split('e');
  return sign * Number(`${m2}e${Number(e2) - digits}`) + 0;
}
