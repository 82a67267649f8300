/**
 * Core text natives: case, trimming, padding, splitting, literal replacement, prefix/suffix tests
 * and number formatting. Each charges the request's budget for the text it scans, and refuses
 * before building a text over MAX_TEXT_LENGTH or a list over MAX_LIST_LENGTH.
 */
import { RUNTIME, MAX_LIST_LENGTH, RvmError, checkLength, codePointLength, isPlainObject, toText, typeError } from '../../plugins/sdk.js';
import type { NativeBudget, PluginApi, Value, ValueObject } from '../../plugins/sdk.js';
import { MAX_ROUND_DIGITS, roundHalfAwayFromZero } from './math.js';

/** Registers the text natives. */
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

  rvm.native('trim_start', (ctx, s) => scanned(ctx.budget, s).trimStart(), {
    params: [{ name: 's', type: 'text' }],
    returns: 'text',
    doc: 'Returns the text without leading white space (as trim).',
  });

  rvm.native('trim_end', (ctx, s) => scanned(ctx.budget, s).trimEnd(), {
    params: [{ name: 's', type: 'text' }],
    returns: 'text',
    doc: 'Returns the text without trailing white space (as trim).',
  });

  const padParams = [
    { name: 's', type: 'text' },
    { name: 'n', type: 'int' },
    { name: 'fill', type: 'text', optional: true },
  ] as const;
  rvm.native('pad_start', (ctx, s, n, fill) => padded(ctx.budget, 'pad_start', s, n, fill ?? ' ', true), {
    params: padParams,
    returns: 'text',
    doc: "The text preceded by copies of `fill` (a space by default; the last copy cut) up to `n` characters (code points): pad_start('7', 3, '0') is '007'; a text of `n` characters or more is unchanged; an empty `fill` is an invalid_argument error.",
  });

  rvm.native('pad_end', (ctx, s, n, fill) => padded(ctx.budget, 'pad_end', s, n, fill ?? ' ', false), {
    params: padParams,
    returns: 'text',
    doc: "The text followed by copies of `fill` (a space by default; the last copy cut) up to `n` characters (code points): pad_end('ab', 4, '.') is 'ab..'; a text of `n` characters or more is unchanged; an empty `fill` is an invalid_argument error.",
  });

  rvm.native(
    'repeat',
    (ctx, s, n) => {
      if (n < 0) throw new RvmError(`repeat() expects n to be 0 or more, got ${n}`, RUNTIME.invalid_argument);
      ctx.budget.chargeText(checkLength('repeat', s.length * n));
      return s.repeat(n);
    },
    {
      params: [
        { name: 's', type: 'text' },
        { name: 'n', type: 'int' },
      ],
      returns: 'text',
      doc: "The text `n` times over: repeat('ab', 3) is 'ababab'; a negative `n` is an invalid_argument error, a result over 16 Mi characters a text_too_long error.",
    },
  );

  rvm.native(
    'lines',
    (ctx, s) => {
      scanned(ctx.budget, s);
      if (s === '') return [];
      // A final line break ends the last line rather than starting an empty one (Python's splitlines).
      const body = s.endsWith('\n') ? s.slice(0, s.endsWith('\r\n') ? -2 : -1) : s;
      const items = occurrences(body, '\n', MAX_LIST_LENGTH) + 1;
      if (items > MAX_LIST_LENGTH) throw new RvmError(`lines() would build a list of more than ${MAX_LIST_LENGTH} items`, RUNTIME.list_too_long);
      ctx.budget.chargeItems(items);
      return body.split(LINE_BREAK);
    },
    {
      params: [{ name: 's', type: 'text' }],
      returns: 'list',
      doc: "The lines of the text, split at \\n and \\r\\n, without their line breaks; a final line break ends the last line: lines('a\\r\\nb\\n') is ['a', 'b'], lines('') is [].",
    },
  );

  rvm.native('format_number', (ctx, x, decimals, options) => formatNumber(ctx.budget, x, decimals ?? null, options ?? null), {
    params: [
      { name: 'x', type: 'number' },
      { name: 'decimals', type: 'int', optional: true },
      { name: 'options', type: 'object', optional: true },
    ],
    returns: 'text',
    doc: `The number written with a thousands separator: format_number(1234567.891, 2) is '1,234,567.89'. With \`decimals\` (0 to ${MAX_ROUND_DIGITS}) it is rounded as round() does and shows exactly that many decimals; without, as many as text() shows (never an exponent). \`options\` {thousands, decimal} changes the separators (texts; thousands may be ''): format_number(1234.5, 2, {thousands: '.', decimal: ','}) is '1.234,50'.`,
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

/** A line break as `lines` reads one. */
const LINE_BREAK = /\r?\n/;

/** `s` padded with `fill` to `n` code points, at the start or the end, its length checked before it is built. */
function padded(budget: NativeBudget, fn: string, s: string, n: number, fill: string, atStart: boolean): string {
  if (fill === '') throw new RvmError(`${fn}() expects fill to be non-empty text`, RUNTIME.invalid_argument);
  const missing = n - codePointLength(scanned(budget, s));
  if (missing <= 0) return s;
  const fillLength = codePointLength(fill);
  const copies = Math.floor(missing / fillLength);
  const cut = fill.slice(0, codePointOffset(fill, missing % fillLength));
  budget.chargeText(checkLength(fn, s.length + copies * fill.length + cut.length));
  const padding = fill.repeat(copies) + cut;
  return atStart ? padding + s : s + padding;
}

const FORMAT_OPTIONS = ['thousands', 'decimal'];

/** format_number: the plain decimal form of `x` (rounded to `decimals` places when given), its digits grouped by three. */
function formatNumber(budget: NativeBudget, x: number, decimals: number | null, options: Value): string {
  if (decimals !== null && (decimals < 0 || decimals > MAX_ROUND_DIGITS)) {
    throw new RvmError(`format_number() takes between 0 and ${MAX_ROUND_DIGITS} decimals, got ${decimals}`, RUNTIME.invalid_argument);
  }
  const thousands = formatOption(options, 'thousands', ',');
  const point = formatOption(options, 'decimal', '.');
  const value = decimals === null ? x : roundHalfAwayFromZero(x, decimals);
  const [whole = '0', fraction = ''] = plainDecimal(Math.abs(value)).split('.');
  const shownFraction = decimals === null ? fraction : fraction.padEnd(decimals, '0');
  const groups: string[] = [];
  for (let end = whole.length; end > 0; end -= 3) groups.unshift(whole.slice(Math.max(0, end - 3), end));
  const length = (value < 0 ? 1 : 0) + whole.length + (groups.length - 1) * thousands.length + (shownFraction ? point.length + shownFraction.length : 0);
  budget.chargeText(checkLength('format_number', length));
  return (value < 0 ? '-' : '') + groups.join(thousands) + (shownFraction ? point + shownFraction : '');
}

/** A separator of format_number's options: text, or the default when the option is absent. */
function formatOption(options: Value, name: string, fallback: string): string {
  if (options === null) return fallback;
  if (!isPlainObject(options)) throw typeError('format_number', 'options', 'an object', options);
  const unknown = Object.keys(options).find((key) => !FORMAT_OPTIONS.includes(key));
  if (unknown !== undefined) {
    throw new RvmError(`format_number() has no option '${unknown}' (options: ${FORMAT_OPTIONS.join(', ')})`, RUNTIME.invalid_argument);
  }
  const value = (options as ValueObject)[name];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'string') throw typeError('format_number', `options.${name}`, 'text', value);
  return value;
}

/**
 * The shortest decimal form of a non-negative number (what text() shows), written out without an
 * exponent: 1e21 is '1000000000000000000000', 1e-7 is '0.0000001'.
 */
function plainDecimal(x: number): string {
  const shortest = toText(x);
  const exponential = /^(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(shortest);
  if (exponential === null) return shortest;
  const digits = exponential[1]! + (exponential[2] ?? '');
  const point = 1 + Number(exponential[3]);
  if (point <= 0) return `0.${'0'.repeat(-point)}${digits}`;
  return digits.length <= point ? digits.padEnd(point, '0') : `${digits.slice(0, point)}.${digits.slice(point)}`;
}

/**
 * The UTF-16 offset `n` code points after `from` in `text` (`text.length` at most): a surrogate
 * pair counts once, as codePointLength counts.
 */
export function codePointOffset(text: string, n: number, from = 0): number {
  let offset = from;
  for (let seen = 0; seen < n && offset < text.length; seen++) {
    const c = text.charCodeAt(offset);
    const pair = c >= 0xd800 && c <= 0xdbff && offset + 1 < text.length && (text.charCodeAt(offset + 1) & 0xfc00) === 0xdc00;
    offset += pair ? 2 : 1;
  }
  return offset;
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
