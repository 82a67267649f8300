/**
 * Core object natives: merge, pick, omit, entries, from_entries and has. They read objects and host
 * objects with keys (request.headers) and build new plain objects, leaving their arguments
 * unchanged. Keys are written as data (setField), so a key named `__proto__` or `constructor` is an
 * ordinary key and never reaches a prototype. Each charges the request's budget for the keys it walks.
 */
import { RUNTIME, HostObject, RvmError, entriesOf, expectList, expectText, setField } from '../../plugins/sdk.js';
import type { NativeBudget, PluginApi, Value, ValueObject } from '../../plugins/sdk.js';
import { charged } from './lists.js';

/** Registers merge, pick, omit, entries, from_entries and has. */
export function registerObjects(rvm: PluginApi): void {
  rvm.native(
    'merge',
    (ctx, ...objects) => {
      const merged: ValueObject = {};
      for (const [i, object] of objects.entries()) {
        for (const [key, value] of charged(ctx.budget, entriesOf('merge', `objects[${i}]`, object))) setField(merged, key, value);
      }
      return merged;
    },
    {
      params: [{ name: 'objects', type: 'object', rest: true }],
      returns: 'object',
      doc: 'A new object with the keys of every object given, a later one winning over an earlier one (shallow: values are not merged themselves): merge({a: 1, b: 1}, {b: 2}) is {a: 1, b: 2}.',
    },
  );

  rvm.native(
    'pick',
    (ctx, o, keys) => {
      const wanted = keyList(ctx.budget, 'pick', keys);
      const picked: ValueObject = {};
      for (const key of wanted) if (hasKey(o, key)) setField(picked, key, fieldOf(o, key));
      return picked;
    },
    {
      params: [
        { name: 'o', type: 'object' },
        { name: 'keys', type: 'list' },
      ],
      returns: 'object',
      doc: "A new object with only the given keys of `o` that it has, in the order of `keys`: pick({a: 1, b: 2, c: 3}, ['c', 'a', 'z']) is {c: 3, a: 1}. A key that is not text is a type_error.",
    },
  );

  rvm.native(
    'omit',
    (ctx, o, keys) => {
      const unwanted = new Set(keyList(ctx.budget, 'omit', keys));
      const kept: ValueObject = {};
      for (const [key, value] of charged(ctx.budget, entriesOf('omit', 'o', o))) if (!unwanted.has(key)) setField(kept, key, value);
      return kept;
    },
    {
      params: [
        { name: 'o', type: 'object' },
        { name: 'keys', type: 'list' },
      ],
      returns: 'object',
      doc: "A new object with the keys of `o` but the given ones: omit({a: 1, password: 'x'}, ['password']) is {a: 1}. A key that is not text is a type_error.",
    },
  );

  rvm.native('entries', (ctx, o) => charged(ctx.budget, entriesOf('entries', 'o', o)), {
    params: [{ name: 'o', type: 'object' }],
    returns: 'list',
    doc: "The [key, value] pairs of an object, in key order: entries({a: 1}) is [['a', 1]].",
  });

  rvm.native(
    'from_entries',
    (ctx, pairs) => {
      const built: ValueObject = {};
      for (const [i, pair] of charged(ctx.budget, pairs).entries()) {
        const entry = expectList('from_entries', `pairs[${i}]`, pair);
        if (entry.length !== 2) {
          throw new RvmError(`from_entries() expects pairs[${i}] to be a [key, value] pair, got ${entry.length} items`, RUNTIME.invalid_argument);
        }
        setField(built, expectText('from_entries', `pairs[${i}][0]`, entry[0]), entry[1]!);
      }
      return built;
    },
    {
      params: [{ name: 'pairs', type: 'list' }],
      returns: 'object',
      doc: "The object of a list of [key, value] pairs, a later pair winning over an earlier one with the same key: from_entries([['a', 1]]) is {a: 1}, and from_entries(entries(o)) a copy of o. A pair that is not a list of two items is an invalid_argument error, a key that is not text a type_error.",
    },
  );

  rvm.native('has', (_ctx, o, key) => hasKey(o, key), {
    params: [
      { name: 'o', type: 'object' },
      { name: 'key', type: 'text' },
    ],
    returns: 'bool',
    doc: "True when the object has the key, even with a null value (has({a: null}, 'a') is true, has({}, 'constructor') false).",
  });
}

function hasKey(o: ValueObject | HostObject, key: string): boolean {
  return o instanceof HostObject ? o.get(key) !== undefined : Object.hasOwn(o, key);
}

function fieldOf(o: ValueObject | HostObject, key: string): Value {
  return o instanceof HostObject ? (o.get(key) ?? null) : o[key]!;
}

/** The texts of a `keys` argument; an item that is not text is a type_error. */
function keyList(budget: NativeBudget, fn: string, keys: Value[]): string[] {
  return charged(budget, keys).map((key, i) => expectText(fn, `keys[${i}]`, key));
}
