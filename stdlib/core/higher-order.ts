/**
 * Core list natives that take a lambda or a key: map, filter, find, any, all, reduce, sort_by,
 * group_by, count_by, min_by and max_by. Each charges the request's budget for the items it
 * walks; each lambda call costs a unit of fuel and a call level, as a call of a fn (`ctx.call`).
 * None changes its list: each returns a new one (or an item of it). The compiler writes `map` and
 * `filter` with a literal lambda as a comprehension (vm/compiler/chunk-compiler.ts), to the same effect.
 */
import { Lambda, RUNTIME, RvmError, getField, isTruthy, setField, toText, typeName } from '../../plugins/sdk.js';
import type { CallContext, PluginApi, Value, ValueObject } from '../../plugins/sdk.js';

const LIST = { name: 'xs', type: 'list' } as const;
const LAMBDA = { name: 'f', type: 'lambda', arity: 1, doc: 'A lambda of one parameter, the item: `x => x.price`.' } as const;
const KEY = {
  name: 'key',
  type: 'any',
  selfChecked: true,
  arity: 1,
  doc: "A field name (`'price'`: the item's field, null when missing) or a lambda of one parameter (`x => x.price * x.qty`).",
} as const;

/** Registers the natives of this file. */
export function registerHigherOrder(rvm: PluginApi): void {
  rvm.native(
    'map',
    (ctx, xs, f) => {
      ctx.budget.chargeItems(xs.length);
      // Over a copy, as a comprehension (and so map with a literal lambda, compiled as one) iterates.
      return xs.slice().map((x) => ctx.call(f, x));
    },
    { params: [LIST, LAMBDA], returns: 'list', doc: 'A new list of `f(x)` for each item: map([1, 2], x => x * 10) is [10, 20].' },
  );

  rvm.native(
    'filter',
    (ctx, xs, f) => {
      ctx.budget.chargeItems(xs.length);
      return xs.slice().filter((x) => isTruthy(ctx.call(f, x)));
    },
    { params: [LIST, LAMBDA], returns: 'list', doc: 'A new list of the items for which `f(x)` is truthy, in order: filter([1, 2, 3], x => x > 1) is [2, 3].' },
  );

  rvm.native(
    'find',
    (ctx, xs, f) => {
      ctx.budget.chargeItems(xs.length);
      return xs.find((x) => isTruthy(ctx.call(f, x))) ?? null;
    },
    { params: [LIST, LAMBDA], returns: 'any', doc: 'The first item for which `f(x)` is truthy, or null; the items after it are not visited.' },
  );

  rvm.native(
    'any',
    (ctx, xs, f) => {
      ctx.budget.chargeItems(xs.length);
      return xs.some((x) => isTruthy(ctx.call(f, x)));
    },
    { params: [LIST, LAMBDA], returns: 'bool', doc: 'True when `f(x)` is truthy for some item (false for an empty list); stops at the first.' },
  );

  rvm.native(
    'all',
    (ctx, xs, f) => {
      ctx.budget.chargeItems(xs.length);
      return xs.every((x) => isTruthy(ctx.call(f, x)));
    },
    { params: [LIST, LAMBDA], returns: 'bool', doc: 'True when `f(x)` is truthy for every item (true for an empty list); stops at the first that is not.' },
  );

  rvm.native(
    'reduce',
    (ctx, xs, f, init) => {
      ctx.budget.chargeItems(xs.length);
      let acc = init;
      for (let i = 0; i < xs.length; i++) acc = ctx.call(f, acc, xs[i]!);
      return acc;
    },
    {
      params: [
        LIST,
        { name: 'f', type: 'lambda', arity: 2, doc: 'A lambda of two parameters, the result so far and the item: `(total, x) => total + x`.' },
        { name: 'init', type: 'any' },
      ],
      returns: 'any',
      doc: 'Folds the list from the left: `init`, then `f(result, x)` for each item; reduce([1, 2, 3], (s, x) => s + x, 0) is 6.',
    },
  );

  rvm.native(
    'sort_by',
    (ctx, xs, key, desc) => {
      const keys = sortKeys(ctx, 'sort_by', xs, key);
      // Array.prototype.sort is stable (ES2019): equal keys keep their order, descending too.
      const order = xs.map((_, i) => i);
      ctx.budget.chargeItems(xs.length * Math.ceil(Math.log2(xs.length + 1)));
      // Numbers subtract (a comparator called n log n times is worth specialising); texts compare.
      const numbers = typeof keys[0] === 'number';
      const ascending = numbers ? (a: number, b: number) => (keys[a] as number) - (keys[b] as number) : (a: number, b: number) => compare(keys[a]!, keys[b]!);
      order.sort(desc === true ? (a, b) => ascending(b, a) : ascending);
      return order.map((i) => xs[i]!);
    },
    {
      params: [LIST, KEY, { name: 'desc', type: 'bool', optional: true, doc: 'Largest first; false by default.' }],
      returns: 'list',
      doc: "A new list of the items ordered by their key, smallest first (`desc`: largest first); items with equal keys keep their order. Keys are all numbers or all texts (texts in code-unit order, as `<` compares them); null or mixed keys are a type_error: sort_by(users, 'age'), sort_by(items, x => x.price * x.qty, true).",
    },
  );

  rvm.native('group_by', (ctx, xs, key) => grouped(ctx, 'group_by', xs, key, (group, x) => appended(group as Value[] | undefined, x)), {
    params: [LIST, KEY],
    returns: 'object',
    doc: "An object of lists: the items by the text form of their key (an int key 2024 groups under '2024', null under 'null'), keys in order of first appearance, items in order: group_by(tasks, 'status').",
  });

  rvm.native('count_by', (ctx, xs, key) => grouped(ctx, 'count_by', xs, key, (count) => ((count as number | undefined) ?? 0) + 1), {
    params: [LIST, KEY],
    returns: 'object',
    doc: "An object of ints: how many items have each key (as group_by names them): count_by(tasks, 'status') is {open: 2, done: 1}.",
  });

  rvm.native('min_by', (ctx, xs, key) => extreme(ctx, 'min_by', xs, key, -1), {
    params: [LIST, KEY],
    returns: 'any',
    doc: "The item whose key is smallest (the first of equals), or null for an empty list; keys compare as in sort_by: min_by(products, 'price').",
  });

  rvm.native('max_by', (ctx, xs, key) => extreme(ctx, 'max_by', xs, key, 1), {
    params: [LIST, KEY],
    returns: 'any',
    doc: 'The item whose key is largest (the first of equals), or null for an empty list; keys compare as in sort_by: max_by(users, u => len(u.posts)).',
  });
}

/** The key of each item: its field `key` names, or what the lambda `key` returns for it. */
function keysOf(ctx: CallContext, fn: string, xs: Value[], key: Value): Value[] {
  ctx.budget.chargeItems(xs.length);
  if (typeof key === 'string') return xs.map((x) => getField(x, key));
  if (key instanceof Lambda) return xs.map((x) => ctx.call(key, x));
  throw new RvmError(`${fn}() expects key to be a field name (text) or a lambda, got ${typeName(key)}`, RUNTIME.type_error);
}

/** The keys, checked to be all numbers or all texts: what `<` compares. */
function sortKeys(ctx: CallContext, fn: string, xs: Value[], key: Value): (number | string)[] {
  const keys = keysOf(ctx, fn, xs, key);
  const first = keys[0];
  const kind = typeof first;
  for (const k of keys) {
    if ((typeof k !== 'number' && typeof k !== 'string') || typeof k !== kind) {
      const found = keys.find((other) => typeof other !== kind) ?? k;
      throw new RvmError(`${fn}() compares keys that are all numbers or all texts, found ${typeName(first)} and ${typeName(found)}`, RUNTIME.type_error);
    }
  }
  return keys as (number | string)[];
}

function compare(a: number | string, b: number | string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The item with the smallest (`sign` -1) or largest (1) key, the first of equals; null for an empty list. */
function extreme(ctx: CallContext, fn: string, xs: Value[], key: Value, sign: 1 | -1): Value {
  if (xs.length === 0) return null;
  const keys = sortKeys(ctx, fn, xs, key);
  let best = 0;
  for (let i = 1; i < keys.length; i++) if (sign * compare(keys[i]!, keys[best]!) > 0) best = i;
  return xs[best]!;
}

function appended(group: Value[] | undefined, x: Value): Value[] {
  if (group === undefined) return [x];
  group.push(x);
  return group;
}

/** An object with an entry per key (its text form), each entry `add` folded over the items of that key. */
function grouped(ctx: CallContext, fn: string, xs: Value[], key: Value, add: (entry: Value | undefined, x: Value) => Value): ValueObject {
  const keys = keysOf(ctx, fn, xs, key);
  const groups = new Map<string, Value>();
  xs.forEach((x, i) => {
    const k = keys[i]!;
    if (k !== null && typeof k === 'object') throw new RvmError(`${fn}() groups by texts, numbers or bools, got ${typeName(k)}`, RUNTIME.type_error);
    const name = toText(k);
    groups.set(name, add(groups.get(name), x));
  });
  const out: ValueObject = {};
  // setField keeps a key named __proto__ an ordinary key.
  for (const [name, entry] of groups) setField(out, name, entry);
  return out;
}
