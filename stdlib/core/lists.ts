/**
 * Core collection natives that work across texts, lists and objects: len, keys, values,
 * contains, index_of, slice and join. Each charges the request's budget for the items and text
 * it walks.
 */
import {
  RUNTIME,
  HostObject,
  RvmError,
  SecretText,
  checkLength,
  codePointLength,
  entriesOf,
  expectText,
  isPlainObject,
  toText,
  typeName,
  valuesEqual,
} from '../../plugins/sdk.js';
import type { NativeBudget, PluginApi } from '../../plugins/sdk.js';
import { codePointOffset } from './text.js';

/** Registers len, keys, values, contains, index_of, slice and join. */
export function registerLists(rvm: PluginApi): void {
  rvm.native(
    'len',
    (ctx, x) => {
      if (typeof x === 'string') {
        ctx.budget.chargeText(x.length);
        return codePointLength(x);
      }
      if (Array.isArray(x)) return x.length;
      if (isPlainObject(x)) return Object.keys(x).length;
      // A secret's length is no secret (a key's size is public knowledge); its text stays hidden.
      if (x instanceof SecretText) return codePointLength(x.reveal());
      if (x instanceof HostObject) return x.keys().length;
      throw new RvmError(`len() expects text, a list or an object, got ${typeName(x)}`, RUNTIME.type_error);
    },
    {
      params: [{ name: 'x', type: 'any' }],
      returns: 'int',
      doc: "Length of a text in characters (Unicode code points, so len('é😀') is 2; a secret's too, its text stays hidden), of a list in items, or of an object in keys; anything else is a type_error.",
    },
  );

  rvm.native('keys', (ctx, obj) => charged(ctx.budget, entriesOf('keys', 'obj', obj)).map(([k]) => k), {
    params: [{ name: 'obj', type: 'object' }],
    returns: 'list',
    doc: 'The keys of an object (or of a host object such as request.headers) as a list of texts, in insertion order.',
  });

  rvm.native('values', (ctx, obj) => charged(ctx.budget, entriesOf('values', 'obj', obj)).map(([, v]) => v), {
    params: [{ name: 'obj', type: 'object' }],
    returns: 'list',
    doc: 'The values of an object (or of a host object such as request.headers) as a list, in key order.',
  });

  rvm.native(
    'contains',
    (ctx, haystack, needle) => {
      if (typeof haystack === 'string') {
        ctx.budget.chargeText(haystack.length);
        return haystack.includes(expectText('contains', 'needle', needle));
      }
      if (Array.isArray(haystack)) {
        ctx.budget.chargeItems(haystack.length);
        return haystack.some((item) => valuesEqual(item, needle ?? null));
      }
      if (isPlainObject(haystack)) return Object.hasOwn(haystack, expectText('contains', 'needle', needle));
      if (haystack instanceof HostObject) return charged(ctx.budget, haystack.keys()).includes(expectText('contains', 'needle', needle));
      throw new RvmError(`contains() expects text, a list or an object, got ${typeName(haystack)}`, RUNTIME.type_error);
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
    'index_of',
    (ctx, haystack, needle) => {
      if (typeof haystack === 'string') {
        ctx.budget.chargeText(haystack.length);
        const at = haystack.indexOf(expectText('index_of', 'needle', needle));
        return at === -1 ? -1 : codePointLength(haystack.slice(0, at));
      }
      if (Array.isArray(haystack)) {
        ctx.budget.chargeItems(haystack.length);
        return haystack.findIndex((item) => valuesEqual(item, needle ?? null));
      }
      throw new RvmError(`index_of() expects text or a list, got ${typeName(haystack)}`, RUNTIME.type_error);
    },
    {
      params: [
        { name: 'haystack', type: 'any' },
        { name: 'needle', type: 'any' },
      ],
      returns: 'int',
      doc: "Where `needle` first occurs, or -1: in a text, the index in characters (code points) of the text `needle` (index_of('héllo', 'l') is 2); in a list, the index of the first item equal to `needle` (structural equality).",
    },
  );

  rvm.native(
    'slice',
    (ctx, x, start, end) => {
      if (typeof x === 'string') {
        ctx.budget.chargeText(x.length);
        const [from, to] = sliceBounds(codePointLength(x), start, end ?? null);
        if (to <= from) return '';
        const offset = codePointOffset(x, from);
        return x.slice(offset, codePointOffset(x, to - from, offset));
      }
      if (Array.isArray(x)) {
        const [from, to] = sliceBounds(x.length, start, end ?? null);
        ctx.budget.chargeItems(Math.max(0, to - from));
        return x.slice(from, to);
      }
      throw new RvmError(`slice() expects text or a list, got ${typeName(x)}`, RUNTIME.type_error);
    },
    {
      params: [
        { name: 'x', type: 'any' },
        { name: 'start', type: 'int' },
        { name: 'end', type: 'int', optional: true },
      ],
      returns: 'any',
      doc: "The part of a text (in characters: code points) or list from `start` up to, not including, `end` (the end when left out or null); a negative index counts from the end, and indexes past either end stop there, as in Python and JavaScript: slice('hello', 1, 3) is 'el', slice([1, 2, 3], -2) is [2, 3].",
    },
  );

  rvm.native(
    'join',
    (ctx, list, sep) => {
      const values = charged(ctx.budget, list);
      const separator = sep ?? '';
      // Summed as the texts are made, so a list of long texts is refused at the first one too many.
      const items: string[] = [];
      let length = Math.max(0, values.length - 1) * separator.length;
      checkLength('join', length);
      for (const value of values) {
        const text = toText(value);
        length += text.length;
        checkLength('join', length);
        items.push(text);
      }
      ctx.budget.chargeText(length);
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

/** The `[from, to)` a slice takes of a sequence of `length`: negative indexes count from the end, and both stop at the ends. */
function sliceBounds(length: number, start: number, end: number | null): [number, number] {
  const clamp = (i: number) => Math.min(length, Math.max(0, i < 0 ? length + i : i));
  return [clamp(start), end === null ? length : clamp(end)];
}

/** Charges the budget for walking a list's items; returns the list. */
export function charged<T extends unknown[]>(budget: NativeBudget, items: T): T {
  budget.chargeItems(items.length);
  return items;
}
