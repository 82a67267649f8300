/**
 * `@multiple_of(n)`, decided in decimal: a number is compared as the shortest decimal that
 * writes it (what the client sent in JSON), so 0.3 is a multiple of 0.1 although 0.3 / 0.1 is
 * 2.9999999999999996 in binary floating point.
 */
import type { Arbitrary, FastCheck, FieldType } from '../../plugins/sdk.js';
import { numArg, type ValidatorTable } from './common.js';

/** Generated multiples use factors up to this size: varied, and far from float overflow. */
const MAX_FACTOR = 1_000_000;

/** `x` as `digits / 10^scale` with scale >= 0, exactly as String(x) writes it. */
function decimal(x: number): { digits: bigint; scale: number } {
  const [mantissa = '0', exponent] = String(x).toLowerCase().split('e');
  const negative = mantissa.startsWith('-');
  const [whole = '0', fraction = ''] = (negative ? mantissa.slice(1) : mantissa).split('.');
  let digits = BigInt(whole + fraction);
  let scale = fraction.length - (exponent === undefined ? 0 : Number(exponent));
  if (scale < 0) {
    digits *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return { digits: negative ? -digits : digits, scale };
}

/** True when `value` is an integer multiple of `n` (> 0), in decimal. */
export function isMultipleOf(value: number, n: number): boolean {
  if (!Number.isFinite(value)) return false;
  if (Number.isSafeInteger(value) && Number.isSafeInteger(n)) return value % n === 0;
  const a = decimal(value);
  const b = decimal(n);
  const scale = Math.max(a.scale, b.scale);
  return (a.digits * 10n ** BigInt(scale - a.scale)) % (b.digits * 10n ** BigInt(scale - b.scale)) === 0n;
}

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

/** The smallest positive integer that is a multiple of `n`; every integer multiple of n is a multiple of it. */
function integerStep(n: number): bigint {
  const { digits, scale } = decimal(n);
  const denominator = 10n ** BigInt(scale);
  return digits / gcd(digits, denominator);
}

/** `digits / 10^scale` as a number, through its decimal text. */
function fromDecimal(digits: bigint, scale: number): number {
  return Number(`${digits}e-${scale}`);
}

function accepts(fc: FastCheck, n: number, type: FieldType): Arbitrary<unknown> {
  if (type === 'int') {
    const step = integerStep(n);
    if (step > BigInt(Number.MAX_SAFE_INTEGER)) return fc.constant(0);
    const s = Number(step);
    const k = Math.min(MAX_FACTOR, Math.floor(Number.MAX_SAFE_INTEGER / s));
    return fc.integer({ min: -k, max: k }).map((i) => i * s);
  }
  const { digits, scale } = decimal(n);
  return fc
    .integer({ min: -MAX_FACTOR, max: MAX_FACTOR })
    .map((k) => fromDecimal(BigInt(k) * digits, scale))
    .filter((v) => Number.isFinite(v) && isMultipleOf(v, n));
}

function rejects(fc: FastCheck, n: number, type: FieldType): Arbitrary<unknown> | null {
  if (type === 'int') {
    const step = integerStep(n);
    if (step === 1n) return null;
    if (step > BigInt(Number.MAX_SAFE_INTEGER)) return fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER });
    const s = Number(step);
    const k = Math.max(0, Math.min(MAX_FACTOR, Math.floor((Number.MAX_SAFE_INTEGER - s) / s)));
    return fc.tuple(fc.integer({ min: -k, max: k }), fc.integer({ min: 1, max: s - 1 })).map(([i, r]) => i * s + r);
  }
  // Odd multiples of n/2 are never multiples of n.
  const { digits, scale } = decimal(n);
  return fc
    .integer({ min: -MAX_FACTOR, max: MAX_FACTOR })
    .map((k) => fromDecimal(BigInt(2 * k + 1) * digits * 5n, scale + 1))
    .filter((v) => Number.isFinite(v) && !isMultipleOf(v, n));
}

/** `@multiple_of`. */
export const NUMBER_VALIDATORS: ValidatorTable = {
  multiple_of: {
    types: ['int', 'number'],
    params: [{ name: 'n', type: 'number', doc: 'The step; greater than 0.' }],
    doc: 'The number is an integer multiple of n, compared in decimal as written (0.3 is a multiple of 0.1).',
    checkArgs: (args) => {
      const n = numArg(args);
      return Number.isFinite(n) && n > 0 ? null : `@multiple_of needs a number greater than 0, got ${String(args[0])}`;
    },
    build: (args) => {
      const n = numArg(args);
      return (value) => typeof value === 'number' && isMultipleOf(value, n);
    },
    message: (args) => `must be a multiple of ${numArg(args)}`,
    schema: (args) => ({ multipleOf: numArg(args) }),
    arbitraries: {
      accepts: (fc, args, type) => accepts(fc, numArg(args), type),
      rejects: (fc, args, type) => rejects(fc, numArg(args), type),
    },
  },
};
