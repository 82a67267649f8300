/**
 * Core text natives: case, trimming, splitting, literal replacement and prefix/suffix tests.
 * Each charges the request's budget for the text it scans, and refuses before building a text
 * over MAX_TEXT_LENGTH or a list over MAX_LIST_LENGTH.
 */
import { RUNTIME, MAX_LIST_LENGTH, RvmError, checkLength, codePointLength } from '../../plugins/sdk.js';
import type { NativeBudget, PluginApi } from '../../plugins/sdk.js';

/** Registers lower, upper, trim, split, replace, starts_with and ends_with. */
export function registerText(rvm: PluginApi): void {
  rvm.native('lower', (ctx, s) => checkLength('lower', scanned(ctx.budget, s).toLowerCase()), {
    params: [{ name: 's', type: 'text' }],
    returns: 'text',
    doc: 'Returns the text in lower case (Unicode rules, locale-independent).',
  });

  // Upper case can be longer than the text ('ß' is 'SS'), so its length is checked too.
  rvm.native('upper', (ctx, s) => checkLength('upper', scanned(ctx.budget, s).toUpperCase()), {
    params: [{ name: 's', type: 'text' }],
    returns: 'text',
    doc: 'Returns the text in upper case (Unicode rules, locale-independent).',
  });

  rvm.native('trim', (ctx, s) => scanned(ctx.budget, s).trim(), {
    params: [{ name: 's', type: 'text' }],
    returns: 'text',
    doc: 'Returns the text without leading and trailing white space (spaces, tabs, line breaks, Unicode spaces).',
  });

  rvm.native(
    'split',
    (ctx, text, separator) => {
      scanned(ctx.budget, text);
      // An empty separator splits into characters (code points, so emoji stay whole).
      const items = separator === '' ? codePointLength(text) : occurrences(text, separator, MAX_LIST_LENGTH) + 1;
      if (items > MAX_LIST_LENGTH) {
        throw new RvmError(`split() would build a list of more than ${MAX_LIST_LENGTH} items`, RUNTIME.list_too_long);
      }
      ctx.budget.chargeItems(items);
      return separator === '' ? [...text] : text.split(separator);
    },
    {
      params: [
        { name: 's', type: 'text' },
        { name: 'sep', type: 'text' },
      ],
      returns: 'list',
      doc: "Splits the text at every occurrence of the literal separator into a list of texts; an empty separator splits into characters (code points): split('a,b', ',') is ['a', 'b']. A list over 4 Mi items is a list_too_long error.",
    },
  );

  rvm.native(
    'replace',
    (ctx, text, search, replacement) => {
      scanned(ctx.budget, text);
      if (search === '') return text;
      // The result's length follows from the number of matches, counted without building anything.
      const matches = occurrences(text, search, Infinity);
      const length = text.length + matches * (replacement.length - search.length);
      checkLength('replace', length);
      ctx.budget.chargeItems(matches);
      ctx.budget.chargeText(length);
      // Split and join: literal both ways (a text replacement would read `$&` and `$1` as
      // patterns), and without a function call per match, four times faster on large texts.
      return matches === 0 ? text : text.split(search).join(replacement);
    },
    {
      params: [
        { name: 's', type: 'text' },
        { name: 'from', type: 'text' },
        { name: 'to', type: 'text' },
      ],
      returns: 'text',
      doc: 'Replaces every occurrence of the literal text `from` (not a pattern) with `to`; an empty `from` leaves the text unchanged; a result over 16 Mi characters is a text_too_long error.',
    },
  );

  rvm.native('starts_with', (_ctx, s, prefix) => s.startsWith(prefix), {
    params: [
      { name: 's', type: 'text' },
      { name: 'prefix', type: 'text' },
    ],
    returns: 'bool',
    doc: 'True when the text begins with the given prefix (case-sensitive).',
  });

  rvm.native('ends_with', (_ctx, s, suffix) => s.endsWith(suffix), {
    params: [
      { name: 's', type: 'text' },
      { name: 'suffix', type: 'text' },
    ],
    returns: 'bool',
    doc: 'True when the text ends with the given suffix (case-sensitive).',
  });
}

/** Charges the budget for scanning `text` once; returns it. */
function scanned(budget: NativeBudget, text: string): string {
  budget.chargeText(text.length);
  return text;
}

/** Non-overlapping occurrences of a non-empty `search` in `text`, counting stops past `limit`. */
export function occurrences(text: string, search: string, limit: number): number {
  let n = 0;
  for (let at = text.indexOf(search); at !== -1 && n <= limit; at = text.indexOf(search, at + search.length)) n++;
  return n;
}
