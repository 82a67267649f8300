/**
 * Core collection natives that work across texts, lists and objects: len, keys, values,
 * contains and join.
 */
import { HostObject, RvmError, toText, typeName, valuesEqual } from '../../plugins/sdk.js';
import type { PluginApi } from '../../plugins/sdk.js';
import { absent, checkLength, entriesOf, expectList, expectText, isPlainObject } from './args.js';

/** Registers len, keys, values, contains and join. */
export function registerLists(rvm: PluginApi): void {
  rvm.native(
    'len',
    (_ctx, x) => {
      if (typeof x === 'string') return countCodePoints(x);
      if (Array.isArray(x)) return x.length;
      if (isPlainObject(x)) return Object.keys(x).length;
      if (x instanceof HostObject) return x.keys().length;
      throw new RvmError(`len() expects text, a list or an object, got ${typeName(x)}`, 'type_error');
    },
    {
      params: [{ name: 'x', type: 'any' }],
      returns: 'int',
      doc: "Length of a text in characters (Unicode code points, so len('é😀') is 2), of a list in items, or of an object in keys; anything else is a type_error.",
    },
  );

  rvm.native('keys', (_ctx, obj) => entriesOf('keys', 'obj', obj).map(([k]) => k), {
    params: [{ name: 'obj', type: 'object' }],
    returns: 'list',
    doc: 'The keys of an object (or of a host object such as request.headers) as a list of texts, in insertion order.',
  });

  rvm.native('values', (_ctx, obj) => entriesOf('values', 'obj', obj).map(([, v]) => v), {
    params: [{ name: 'obj', type: 'object' }],
    returns: 'list',
    doc: 'The values of an object (or of a host object such as request.headers) as a list, in key order.',
  });

  rvm.native(
    'contains',
    (_ctx, haystack, needle) => {
      if (typeof haystack === 'string') return haystack.includes(expectText('contains', 'needle', needle));
      if (Array.isArray(haystack)) return haystack.some((item) => valuesEqual(item, needle ?? null));
      if (isPlainObject(haystack)) return Object.hasOwn(haystack, expectText('contains', 'needle', needle));
      if (haystack instanceof HostObject) return haystack.keys().includes(expectText('contains', 'needle', needle));
      throw new RvmError(`contains() expects text, a list or an object, got ${typeName(haystack)}`, 'type_error');
    },
    {
      params: [
        { name: 'haystack', type: 'any' },
        { name: 'needle', type: 'any' },
      ],
      returns: 'bool',
      doc: 'True when a text contains the text `needle`, a list holds an item equal to `needle` (structural equality), or an object has the key `needle`; other haystacks are a type_error.',
    },
  );

  rvm.native(
    'join',
    (_ctx, list, sep) => {
      const items = expectList('join', 'list', list).map((item) => toText(item));
      const separator = absent(sep) ? '' : expectText('join', 'sep', sep);
      const length = items.reduce((sum, s) => sum + s.length, 0) + Math.max(0, items.length - 1) * separator.length;
      checkLength('join', length);
      return items.join(separator);
    },
    {
      params: [
        { name: 'list', type: 'list' },
        { name: 'sep', type: 'text', optional: true },
      ],
      returns: 'text',
      doc: "Joins the text form of each item (as in interpolation: null is 'null') with the separator, '' by default: join([1, 'a'], '-') is '1-a'.",
    },
  );
}

function countCodePoints(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++, n++) {
    const c = s.charCodeAt(i);
    // A high surrogate followed by a low one is one code point.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
  }
  return n;
}
