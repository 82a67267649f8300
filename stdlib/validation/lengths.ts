/**
 * Bounds: `@min`, `@max` and `@range` (numbers by value, text by length in characters, lists by
 * item count) and `@minLength`, `@maxLength`, `@length` (text and lists).
 */
import type { Arbitrary, Bounds, FastCheck, FieldType, Literal, ValidatorSpec, Value } from '../../plugins/sdk.js';
import { codePointLength } from '../../plugins/sdk.js';
import { smallJson, storableText } from './arbitraries.js';
import { count, numArg, type ValidatorTable } from './common.js';

/** What a bound measures on a field of some type. */
type Dimension = 'value' | 'length' | 'items';

/** Generated texts and lists run at most this far past a lower bound. */
const MAX_EXTRA_LENGTH = 16;

function dimensionOf(type: FieldType): Dimension {
  return type === 'text' ? 'length' : type === 'list' ? 'items' : 'value';
}

/** The check `lo <= measure(value) <= hi` (null: unbounded on that side). */
function within(lo: number | null, hi: number | null, type: FieldType): (value: Value) => boolean {
  switch (dimensionOf(type)) {
    case 'value':
      return (v) => typeof v === 'number' && (lo === null || v >= lo) && (hi === null || v <= hi);
    case 'items':
      return (v) => Array.isArray(v) && (lo === null || v.length >= lo) && (hi === null || v.length <= hi);
    case 'length':
      return (v) => {
        if (typeof v !== 'string') return false;
        // Code units bound code points from both sides (n/2 <= points <= n): count only when needed.
        const units = v.length;
        if (lo !== null && units < lo) return false;
        if ((hi === null || units <= hi) && (lo === null || (units + 1) >> 1 >= lo)) return true;
        const points = codePointLength(v);
        return (lo === null || points >= lo) && (hi === null || points <= hi);
      };
  }
}

/** The unit words of a length bound. */
function unit(type: FieldType, n: number): string {
  return type === 'text' ? count(n, 'character') : type === 'list' ? count(n, 'item') : String(n);
}

function atLeast(n: number, type: FieldType): string {
  return type === 'list' ? `must have at least ${unit(type, n)}` : `must be at least ${unit(type, n)}`;
}

function atMost(n: number, type: FieldType): string {
  return type === 'list' ? `must have at most ${unit(type, n)}` : `must be at most ${unit(type, n)}`;
}

function between(a: number, b: number, type: FieldType): string {
  const suffix = type === 'text' ? ' characters' : type === 'list' ? ' items' : '';
  return `${type === 'list' ? 'must have' : 'must be'} between ${a} and ${b}${suffix}`;
}

/** JSON Schema keywords of `lo <= measure <= hi`. */
function schemaOf(lo: number | null, hi: number | null, type: FieldType): Record<string, number> {
  const [minKey, maxKey] = { value: ['minimum', 'maximum'], length: ['minLength', 'maxLength'], items: ['minItems', 'maxItems'] }[dimensionOf(type)];
  const out: Record<string, number> = {};
  if (lo !== null) out[minKey!] = lo;
  if (hi !== null) out[maxKey!] = hi;
  return out;
}

function boundsOf(lo: number | null, hi: number | null, type: FieldType): Bounds {
  const b: { min?: number; max?: number } = {};
  if (lo !== null) b.min = lo;
  if (hi !== null) b.max = hi;
  return { [dimensionOf(type)]: b };
}

/** Why a bound cannot be used on a field of `type`, or null. */
function boundProblem(name: string, n: number, type: FieldType): string | null {
  if (!Number.isFinite(n)) return `@${name} needs a finite number`;
  if (dimensionOf(type) !== 'value' && (!Number.isInteger(n) || n < 0)) {
    return `@${name} on a ${type} field counts ${type === 'text' ? 'characters' : 'items'}: it needs a whole number >= 0, got ${n}`;
  }
  return null;
}

/** Why [lo, hi] admits no value of `type`, or null. */
function emptyProblem(name: string, lo: number | null, hi: number | null, type: FieldType): string | null {
  if (lo !== null && hi !== null && lo > hi) return `@${name} has its lower bound ${lo} above its upper bound ${hi}`;
  if (type === 'int') {
    const first = lo === null ? Number.MIN_SAFE_INTEGER : Math.max(Math.ceil(lo), Number.MIN_SAFE_INTEGER);
    const last = hi === null ? Number.MAX_SAFE_INTEGER : Math.min(Math.floor(hi), Number.MAX_SAFE_INTEGER);
    if (first > last) return `@${name} leaves no integer an int field could hold`;
  }
  return null;
}

/** Values of `type` with `lo <= measure <= hi` (the interval is not empty: checkArgs saw to that). */
function inside(fc: FastCheck, lo: number | null, hi: number | null, type: FieldType): Arbitrary<unknown> {
  switch (type) {
    case 'int':
      return fc.integer({
        min: lo === null ? Number.MIN_SAFE_INTEGER : Math.max(Math.ceil(lo), Number.MIN_SAFE_INTEGER),
        max: hi === null ? Number.MAX_SAFE_INTEGER : Math.min(Math.floor(hi), Number.MAX_SAFE_INTEGER),
      });
    case 'number':
      return fc.double({ min: lo ?? -Number.MAX_VALUE, max: hi ?? Number.MAX_VALUE, noNaN: true, noDefaultInfinity: true });
    case 'text': {
      const min = lo ?? 0;
      const max = Math.min(hi ?? min + MAX_EXTRA_LENGTH, min + MAX_EXTRA_LENGTH);
      return fc.oneof(fc.string({ minLength: min, maxLength: max }), fc.string({ unit: 'binary', minLength: min, maxLength: max })).filter(storableText);
    }
    default: {
      const min = lo ?? 0;
      return fc.array(smallJson(fc), { minLength: min, maxLength: Math.min(hi ?? min + MAX_EXTRA_LENGTH, min + MAX_EXTRA_LENGTH) });
    }
  }
}

/** Values of `type` outside [lo, hi], or null when every value of the type is inside. */
function outside(fc: FastCheck, lo: number | null, hi: number | null, type: FieldType): Arbitrary<unknown> | null {
  const sides: Arbitrary<unknown>[] = [];
  if (type === 'int') {
    if (lo !== null && Math.ceil(lo) - 1 >= Number.MIN_SAFE_INTEGER)
      sides.push(fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Math.min(Math.ceil(lo) - 1, Number.MAX_SAFE_INTEGER) }));
    if (hi !== null && Math.floor(hi) + 1 <= Number.MAX_SAFE_INTEGER)
      sides.push(fc.integer({ min: Math.max(Math.floor(hi) + 1, Number.MIN_SAFE_INTEGER), max: Number.MAX_SAFE_INTEGER }));
  } else if (type === 'number') {
    // fast-check orders -0 below 0, so an excluded bound of 0 may still yield -0: filter it out.
    if (lo !== null && lo > -Number.MAX_VALUE) sides.push(fc.double({ min: -Number.MAX_VALUE, max: lo, maxExcluded: true, noNaN: true }).filter((v) => v < lo));
    if (hi !== null && hi < Number.MAX_VALUE) sides.push(fc.double({ min: hi, minExcluded: true, max: Number.MAX_VALUE, noNaN: true }).filter((v) => v > hi));
  } else {
    if (lo !== null && lo > 0) sides.push(inside(fc, 0, lo - 1, type));
    if (hi !== null) sides.push(inside(fc, hi + 1, hi + 1 + MAX_EXTRA_LENGTH, type));
  }
  return sides.length === 0 ? null : fc.oneof(...sides);
}

/** A bound validator whose interval `limits(args)` gives. */
function bounded(
  name: string,
  types: readonly FieldType[],
  params: ValidatorSpec['params'],
  doc: string,
  limits: (args: readonly Literal[]) => [number | null, number | null],
  message: (lo: number | null, hi: number | null, type: FieldType) => string,
  aliases?: string[],
): ValidatorSpec {
  return {
    types,
    params,
    doc,
    ...(aliases ? { aliases } : {}),
    checkArgs: (args, type) => {
      const [lo, hi] = limits(args);
      for (const n of [lo, hi]) {
        const problem = n === null ? null : boundProblem(name, n, type);
        if (problem) return problem;
      }
      return emptyProblem(name, lo, hi, type);
    },
    build: (args, type) => within(...limits(args), type),
    message: (args, type) => message(...limits(args), type),
    schema: (args, type) => schemaOf(...limits(args), type),
    bounds: (args, type) => boundsOf(...limits(args), type),
    arbitraries: {
      accepts: (fc, args, type) => inside(fc, ...limits(args), type),
      rejects: (fc, args, type) => outside(fc, ...limits(args), type),
    },
  };
}

const MEASURED: readonly FieldType[] = ['text', 'int', 'number', 'list'];
const LENGTHS: readonly FieldType[] = ['text', 'list'];
const N = (doc: string): ValidatorSpec['params'] => [{ name: 'n', type: 'number', doc }];
const COUNT = (doc: string): ValidatorSpec['params'] => [{ name: 'n', type: 'int', doc }];

/** `@min`, `@max`, `@range`, `@minLength`, `@maxLength` and `@length`. */
export const LENGTH_VALIDATORS: ValidatorTable = {
  min: bounded(
    'min',
    MEASURED,
    N('The smallest value, length or item count allowed.'),
    'At least n: numbers by value, text by length in characters, lists by item count (inclusive).',
    (a) => [numArg(a), null],
    (lo, _hi, type) => atLeast(lo!, type),
  ),
  max: bounded(
    'max',
    MEASURED,
    N('The largest value, length or item count allowed.'),
    'At most n: numbers by value, text by length in characters, lists by item count (inclusive).',
    (a) => [null, numArg(a)],
    (_lo, hi, type) => atMost(hi!, type),
  ),
  range: bounded(
    'range',
    MEASURED,
    [
      { name: 'min', type: 'number', doc: 'Lower bound (inclusive).' },
      { name: 'max', type: 'number', doc: 'Upper bound (inclusive).' },
    ],
    'Between min and max inclusive: numbers by value, text by length in characters, lists by item count.',
    (a) => [numArg(a, 0), numArg(a, 1)],
    (lo, hi, type) => between(lo!, hi!, type),
  ),
  minLength: bounded(
    'minLength',
    LENGTHS,
    COUNT('The fewest characters or items allowed.'),
    'Text has at least n characters, a list at least n items.',
    (a) => [numArg(a), null],
    (lo, _hi, type) => atLeast(lo!, type),
    ['min_length'],
  ),
  maxLength: bounded(
    'maxLength',
    LENGTHS,
    COUNT('The most characters or items allowed.'),
    'Text has at most n characters, a list at most n items.',
    (a) => [null, numArg(a)],
    (_lo, hi, type) => atMost(hi!, type),
    ['max_length'],
  ),
  length: bounded(
    'length',
    LENGTHS,
    COUNT('The exact number of characters or items.'),
    'Text has exactly n characters, a list exactly n items.',
    (a) => [numArg(a), numArg(a)],
    (lo, _hi, type) => (type === 'list' ? `must have exactly ${unit(type, lo!)}` : `must be exactly ${unit(type, lo!)}`),
  ),
};
