/**
 * Dates and times: `@date` and `@datetime` (text in those formats) and `@before(d)` / `@after(d)`
 * (strictly earlier / later than a date, a date-time or `'now'`). A date stands for midnight UTC
 * of its day; `'now'` is read when the request is validated.
 */
import type { Arbitrary, FastCheck, FieldType, Literal, Value } from '../../plugins/sdk.js';
import { anyText, instantText } from './arbitraries.js';
import { DAY_MS, MAX_INSTANT, MIN_INSTANT, instantOf, isDate, isDatetime } from '../../plugins/sdk.js';
import { showLiteral, textArg, textCheck, type ValidatorTable } from './common.js';

/** The argument meaning the moment of the request. */
const NOW = 'now';
/**
 * How far from the present generated values for `'now'` bounds stay, so a value generated as
 * "in the past" is still past (or future still future) when a test or the fuzzer checks it.
 */
const NOW_MARGIN_MS = 2 * DAY_MS;

const DATE_TYPES: readonly FieldType[] = ['date', 'datetime', 'text'];

/** The instant the argument names at the time of the call. */
function boundOf(arg: string): number | null {
  return arg === NOW ? Date.now() : instantOf(arg);
}

function checkBound(name: string) {
  return (args: readonly Literal[]): string | null => {
    const arg = args[0];
    if (typeof arg !== 'string' || (arg !== NOW && instantOf(arg) === null)) {
      return `@${name} needs a date ('2024-05-01'), a date-time with a time zone ('2024-05-01T12:00:00Z') or 'now', got ${showLiteral(arg ?? null)}`;
    }
    const at = instantOf(arg);
    if (name === 'before' && at !== null && at <= MIN_INSTANT) return `nothing is @before ${arg}`;
    if (name === 'after' && at !== null && at >= MAX_INSTANT) return `nothing is @after ${arg}`;
    return null;
  };
}

/** True when `value` (a date or date-time text) compares with the bound as `holds` says. */
function compareCheck(arg: string, holds: (value: number, bound: number) => boolean): (value: Value) => boolean {
  const fixed = arg === NOW ? null : instantOf(arg);
  return (value) => {
    if (typeof value !== 'string') return false;
    const at = instantOf(value);
    const bound = fixed ?? boundOf(arg);
    return at !== null && bound !== null && holds(at, bound);
  };
}

/** The bound's instant for generating values, and how far generated values keep from it. */
function generationBound(arg: string): { at: number; margin: number } {
  // For 'now', keep a margin so the comparison still holds when the value is checked later.
  return { at: boundOf(arg) ?? 0, margin: arg === NOW ? NOW_MARGIN_MS : 0 };
}

/** Texts of the field type naming an instant in [lo, hi]; an empty interval is a bug of checkArgs. */
function instants(fc: FastCheck, type: FieldType, lo: number, hi: number): Arbitrary<string> {
  const values = instantText(fc, type, lo, hi);
  if (values === null) throw new Error(`no ${type} value lies between the given bounds`);
  return values;
}

function describeBound(name: string, arg: string): string {
  if (arg === NOW) return name === 'before' ? 'must be in the past' : 'must be in the future';
  return `must be ${name} ${arg}`;
}

/** `@date`, `@datetime`, `@before` and `@after`. */
export const DATE_VALIDATORS: ValidatorTable = {
  date: {
    types: ['text'],
    params: [],
    doc: "A calendar date 'YYYY-MM-DD' (RFC 3339 full-date) naming a real day, e.g. '2024-02-29'.",
    build: () => textCheck(isDate),
    message: () => 'must be a date (YYYY-MM-DD)',
    schema: () => ({ format: 'date' }),
    arbitraries: {
      accepts: (fc) => instantText(fc, 'date', MIN_INSTANT, MAX_INSTANT)!,
      rejects: (fc) =>
        fc.oneof(
          fc.constantFrom(
            '',
            '2023-02-29',
            '2024-13-01',
            '2024-00-10',
            '2024-04-31',
            '2024-1-1',
            '24-01-01',
            '2024/01/01',
            '2024-01-01T00:00:00Z',
            ' 2024-01-01',
          ),
          anyText(fc).filter((s) => !isDate(s)),
        ),
    },
  },

  datetime: {
    types: ['text'],
    params: [],
    doc: "A date-time with a time zone (RFC 3339 / ISO 8601), e.g. '2024-05-01T12:30:00Z' or '2024-05-01 12:30+02:00'; seconds and fraction optional.",
    build: () => textCheck(isDatetime),
    message: () => 'must be an ISO 8601 date-time with a time zone',
    schema: () => ({ format: 'date-time' }),
    arbitraries: {
      accepts: (fc) => instantText(fc, 'datetime', MIN_INSTANT, MAX_INSTANT)!,
      rejects: (fc) =>
        fc.oneof(
          fc.constantFrom(
            '',
            '2024-05-01',
            '2024-05-01T12:30:00',
            '2024-05-01T24:00:00Z',
            '2024-05-01T12:60:00Z',
            '2023-02-29T00:00:00Z',
            '2024-05-01T12:30:00+24:00',
            '2024-05-01T12:30:00.Z',
            '2016-12-31T23:59:60Z',
          ),
          anyText(fc).filter((s) => !isDatetime(s)),
        ),
    },
  },

  before: {
    types: DATE_TYPES,
    params: [{ name: 'moment', type: 'text', doc: "A date, a date-time with a time zone, or 'now'." }],
    doc: "Strictly earlier than the given date, date-time or 'now' (a date counts as midnight UTC); on text fields the value must be a date or date-time.",
    checkArgs: checkBound('before'),
    build: (args) => compareCheck(textArg(args), (at, bound) => at < bound),
    message: (args) => describeBound('before', textArg(args)),
    schema: (args) => (textArg(args) === NOW ? { 'x-before': NOW } : { formatExclusiveMaximum: textArg(args) }),
    arbitraries: {
      accepts: (fc, args, type) => {
        const { at, margin } = generationBound(textArg(args));
        return instants(fc, type, MIN_INSTANT, at - 1 - margin);
      },
      rejects: (fc, args, type) => {
        const { at, margin } = generationBound(textArg(args));
        return instantText(fc, type, at + margin, MAX_INSTANT);
      },
    },
  },

  after: {
    types: DATE_TYPES,
    params: [{ name: 'moment', type: 'text', doc: "A date, a date-time with a time zone, or 'now'." }],
    doc: "Strictly later than the given date, date-time or 'now' (a date counts as midnight UTC); on text fields the value must be a date or date-time.",
    checkArgs: checkBound('after'),
    build: (args) => compareCheck(textArg(args), (at, bound) => at > bound),
    message: (args) => describeBound('after', textArg(args)),
    schema: (args) => (textArg(args) === NOW ? { 'x-after': NOW } : { formatExclusiveMinimum: textArg(args) }),
    arbitraries: {
      accepts: (fc, args, type) => {
        const { at, margin } = generationBound(textArg(args));
        return instants(fc, type, at + 1 + margin, MAX_INSTANT);
      },
      rejects: (fc, args, type) => {
        const { at, margin } = generationBound(textArg(args));
        return instantText(fc, type, MIN_INSTANT, at - margin);
      },
    },
  },
};
