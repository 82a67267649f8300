/**
 * Core list natives that need no lambda: push, sort, reverse, unique, sum, avg, flatten, range,
 * chunk, zip, first and last. All but push leave their arguments unchanged and build a new list.
 * Each charges the request's budget for the items it walks or builds and refuses, before building
 * it, a list over MAX_LIST_LENGTH.
 */
import { RUNTIME, HostObject, MAX_JSON_VALUE_DEPTH, MAX_LIST_LENGTH, RvmError, SecretText, expectNumber, typeName } from '../../plugins/sdk.js';
import type { NativeBudget, PluginApi, Value } from '../../plugins/sdk.js';
import { charged } from './lists.js';

/** Registers push, sort, reverse, unique, sum, avg, flatten, range, chunk, zip, first and last. */
export function registerSequences(rvm: PluginApi): void {
  rvm.native(
    'push',
    (ctx, xs, v) => {
      refuseLongerThanLimit('push', xs.length + 1);
      ctx.budget.chargeItems(1);
      xs.push(v ?? null);
      return xs;
    },
    {
      params: [
        { name: 'xs', type: 'list' },
        { name: 'v', type: 'any' },
      ],
      returns: 'list',
      doc: 'Appends `v` to the list itself (the list changes, as `xs[len(xs)] = v` would) and returns that list; a list already of 4 Mi items is a list_too_long error.',
    },
  );

  rvm.native('sort', (ctx, xs, desc) => sorted(ctx.budget, xs, desc === true), {
    params: [
      { name: 'xs', type: 'list' },
      { name: 'desc', type: 'bool', optional: true },
    ],
    returns: 'list',
    doc: "A new list of the items in ascending order (descending when `desc` is true), stable: equal items keep their order. The items must be all numbers or all texts (texts compare by code point, so 'B' comes before 'a'); anything else, or a mix, is a type_error.",
  });

  rvm.native(
    'reverse',
    (ctx, x) => {
      if (typeof x === 'string') {
        ctx.budget.chargeText(x.length);
        return reversedText(x);
      }
      if (Array.isArray(x)) return charged(ctx.budget, x).toReversed();
      throw new RvmError(`reverse() expects a list or text, got ${typeName(x)}`, RUNTIME.type_error);
    },
    {
      params: [{ name: 'x', type: 'any' }],
      returns: 'any',
      doc: "A new list of the items in reverse order, or the text with its characters (code points) in reverse order: reverse('abc') is 'cba'.",
    },
  );

  rvm.native('unique', (ctx, xs) => unique(ctx.budget, xs), {
    params: [{ name: 'xs', type: 'list' }],
    returns: 'list',
    doc: 'A new list without repeated items, the first of equal items kept in its place; items compare by structural equality, as `==` does ({a: 1, b: 2} equals {b: 2, a: 1}).',
  });

  rvm.native('sum', (ctx, xs) => total(ctx.budget, 'sum', xs), {
    params: [{ name: 'xs', type: 'list' }],
    returns: 'number',
    doc: 'The sum of a list of numbers; 0 for an empty list; an item that is not a number is a type_error.',
  });

  rvm.native('avg', (ctx, xs) => (xs.length === 0 ? null : total(ctx.budget, 'avg', xs) / xs.length), {
    params: [{ name: 'xs', type: 'list' }],
    returns: 'number?',
    doc: 'The arithmetic mean of a list of numbers; null for an empty list; an item that is not a number is a type_error.',
  });

  rvm.native(
    'flatten',
    (ctx, xs) => {
      const length = xs.reduce<number>((n, x) => n + (Array.isArray(x) ? x.length : 1), 0);
      refuseLongerThanLimit('flatten', length);
      ctx.budget.chargeItems(xs.length + length);
      return xs.flat(1) as Value[];
    },
    {
      params: [{ name: 'xs', type: 'list' }],
      returns: 'list',
      doc: 'A new list with the items of the lists inside spread one level (as lodash flatten): flatten([1, [2, [3]]]) is [1, 2, [3]].',
    },
  );

  rvm.native(
    'range',
    (ctx, start, end, step) => {
      const by = step ?? 1;
      if (by === 0) throw new RvmError('range() expects step to be non-zero', RUNTIME.invalid_argument);
      const count = Math.max(0, Math.ceil((end - start) / by));
      refuseLongerThanLimit('range', count);
      ctx.budget.chargeItems(count);
      return Array.from({ length: count }, (_, i) => start + i * by);
    },
    {
      params: [
        { name: 'start', type: 'int' },
        { name: 'end', type: 'int' },
        { name: 'step', type: 'int', optional: true },
      ],
      returns: 'list',
      doc: 'The ints from `start` up to, not including, `end`, `step` apart (1 by default; negative counts down): range(0, 5, 2) is [0, 2, 4], range(3, 0, -1) is [3, 2, 1]. A step of 0 is an invalid_argument error, more than 4 Mi items a list_too_long error.',
    },
  );

  rvm.native(
    'chunk',
    (ctx, xs, n) => {
      if (n < 1) throw new RvmError(`chunk() expects n to be 1 or more, got ${n}`, RUNTIME.invalid_argument);
      charged(ctx.budget, xs);
      const chunks: Value[] = [];
      for (let at = 0; at < xs.length; at += n) chunks.push(xs.slice(at, at + n));
      return chunks;
    },
    {
      params: [
        { name: 'xs', type: 'list' },
        { name: 'n', type: 'int' },
      ],
      returns: 'list',
      doc: 'The list cut into lists of `n` items, the last one shorter when the items run out: chunk([1, 2, 3], 2) is [[1, 2], [3]]. An `n` under 1 is an invalid_argument error.',
    },
  );

  rvm.native(
    'zip',
    (ctx, ...lists) => {
      const length = lists.length === 0 ? 0 : Math.min(...lists.map((list) => list.length));
      ctx.budget.chargeItems(length * (lists.length + 1));
      return Array.from({ length }, (_, i) => lists.map((list) => list[i]!));
    },
    {
      params: [{ name: 'lists', type: 'list', rest: true }],
      returns: 'list',
      doc: 'Pairs up the items of several lists by position, as long as the shortest: zip([1, 2, 3], [a, b]) is [[1, a], [2, b]].',
    },
  );

  rvm.native('first', (_ctx, xs) => (xs.length === 0 ? null : xs[0]!), {
    params: [{ name: 'xs', type: 'list' }],
    returns: 'any',
    doc: 'The first item of the list, or null when it is empty.',
  });

  rvm.native('last', (_ctx, xs) => (xs.length === 0 ? null : xs[xs.length - 1]!), {
    params: [{ name: 'xs', type: 'list' }],
    returns: 'any',
    doc: 'The last item of the list, or null when it is empty.',
  });
}

/**
 * The text's code points in reverse order, a surrogate pair kept in its order. Written into a
 * UTF-16LE buffer (two bytes a unit) that Node decodes as it is, lone surrogates included, rather
 * than an array of one string per character.
 */
function reversedText(text: string): string {
  const bytes = Buffer.allocUnsafe(2 * text.length);
  const put = (at: number, unit: number) => {
    bytes[2 * at] = unit & 0xff;
    bytes[2 * at + 1] = unit >> 8;
  };
  for (let from = 0, to = text.length; from < text.length; ) {
    const c = text.charCodeAt(from);
    if (c >= 0xd800 && c <= 0xdbff && (text.charCodeAt(from + 1) & 0xfc00) === 0xdc00) {
      to -= 2;
      put(to, c);
      put(to + 1, text.charCodeAt(from + 1));
      from += 2;
    } else {
      put(--to, c);
      from++;
    }
  }
  return bytes.toString('utf16le');
}

/**
 * Orders two texts by code point. JavaScript's `<` compares UTF-16 units, which puts U+E000–U+FFFF
 * after the surrogates of U+10000 and beyond; moving the surrogates above them restores code point
 * order (the trick of ICU's u_strcmpCodePointOrder).
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

function codePointRank(unit: number): number {
  if (unit >= 0xe000) return unit - 0x800;
  if (unit >= 0xd800) return unit + 0x2000;
  return unit;
}

/** `xs` sorted (stably) as `sort` does: all numbers or all texts. */
function sorted(budget: NativeBudget, xs: Value[], desc: boolean): Value[] {
  // A comparison sort makes about n·log2(n) comparisons.
  budget.chargeItems(xs.length * Math.ceil(Math.log2(xs.length + 1)));
  const kind = typeof xs[0];
  const odd = xs.find((x) => typeof x !== kind || (kind !== 'number' && kind !== 'string'));
  if (odd !== undefined) {
    const got = typeof odd === kind ? typeName(odd) : `${typeName(xs[0])} and ${typeName(odd)}`;
    throw new RvmError(`sort() expects all numbers or all texts, got ${got}`, RUNTIME.type_error);
  }
  const ascending = kind === 'number' ? (a: Value, b: Value) => (a as number) - (b as number) : textOrder(budget, xs as string[]);
  return xs.toSorted(desc ? (a, b) => ascending(b, a) : ascending);
}

/** A surrogate: half of a code point beyond U+FFFF, the only unit `<` orders otherwise than its code point. */
const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * How `sort` orders texts: JavaScript's own comparison (twice as fast) when no text holds a
 * surrogate, else compareCodePoints.
 */
function textOrder(budget: NativeBudget, texts: string[]): (a: Value, b: Value) => number {
  let chars = 0;
  for (const text of texts) chars += text.length;
  budget.chargeText(chars);
  if (texts.some((text) => SURROGATE.test(text))) return (a, b) => compareCodePoints(a as string, b as string);
  return (a, b) => ((a as string) < (b as string) ? -1 : (a as string) > (b as string) ? 1 : 0);
}

/** The sum of a list of numbers; a non-number is a type_error of `fn`. */
function total(budget: NativeBudget, fn: string, xs: Value[]): number {
  budget.chargeItems(xs.length);
  let sum = 0;
  for (const x of xs) sum += expectNumber(fn, 'xs', x);
  return sum;
}

/**
 * `xs` without repeated items. Each item is reduced to a key that equal items share (the
 * canonical form `==` compares: object keys sorted, a secret as its text), so the work is linear
 * in the data, not quadratic in the items.
 */
function unique(budget: NativeBudget, xs: Value[]): Value[] {
  budget.chargeItems(xs.length);
  const seen = new Set<string>();
  const keys = new KeyMaker(budget);
  return xs.filter((x) => {
    const key = keys.of(x, 0);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Canonical keys of lists and objects for `unique`, each object's made once per call (a list may hold one object many times). */
class KeyMaker {
  // Maps, not WeakMaps: they live for one call, and a WeakMap of 200 000 objects costs a second.
  readonly #made = new Map<object, string>();
  readonly #hostIds = new Map<HostObject, number>();

  constructor(private readonly budget: NativeBudget) {}

  of(v: Value, depth: number): string {
    if (typeof v === 'string') return this.#quoted(v);
    if (v === null || typeof v !== 'object') return String(v);
    if (v instanceof SecretText) return this.#quoted(v.reveal());
    // Other host objects equal only themselves.
    if (v instanceof HostObject) return `#${this.#hostId(v)}`;
    const made = this.#made.get(v);
    if (made !== undefined) return made;
    if (depth >= MAX_JSON_VALUE_DEPTH) throw new RvmError(`unique() items nest deeper than ${MAX_JSON_VALUE_DEPTH} levels`, RUNTIME.invalid_argument);
    let key: string;
    if (Array.isArray(v)) {
      this.budget.chargeItems(v.length);
      key = `[${v.map((x) => this.of(x, depth + 1)).join(',')}]`;
    } else {
      const names = Object.keys(v).sort();
      this.budget.chargeItems(names.length);
      key = `{${names.map((name) => `${JSON.stringify(name)}:${this.of(v[name]!, depth + 1)}`).join(',')}}`;
    }
    this.budget.chargeText(key.length);
    this.#made.set(v, key);
    return key;
  }

  #quoted(text: string): string {
    this.budget.chargeText(text.length);
    return JSON.stringify(text);
  }

  #hostId(v: HostObject): number {
    let id = this.#hostIds.get(v);
    if (id === undefined) this.#hostIds.set(v, (id = this.#hostIds.size));
    return id;
  }
}

function refuseLongerThanLimit(fn: string, length: number): void {
  if (length > MAX_LIST_LENGTH) throw new RvmError(`${fn}() would build a list of more than ${MAX_LIST_LENGTH} items`, RUNTIME.list_too_long);
}
