/**
 * fast-check arbitraries shared by the validators: any value of a field type (what presence
 * rules accept) and dates / date-times inside an interval (what `@before`/`@after` accept).
 */
import type { Arbitrary, FastCheck, FieldType } from '../../plugins/sdk.js';
import { DAY_MS, MAX_INSTANT, MIN_INSTANT, dateInstant, formatDate, formatDatetime, unstorableText } from '../../plugins/sdk.js';
import { anyFileSample } from './file-samples.js';
import { builtOnce } from './common.js';

/** Longest generated text and list: enough to vary, small enough to keep runs fast. */
const MAX_SAMPLE_LENGTH = 24;
/** Largest time-zone offset written (minutes): RFC 3339 allows up to ±23:59. */
const MAX_OFFSET_MINUTES = 23 * 60 + 59;
/**
 * Generated dates prefer years from 1000 on: every consumer (JS Date, JSON Schema validators,
 * databases) reads those without surprise. Earlier years are used only when an interval needs them.
 */
const PREFERRED_MIN_INSTANT = dateInstant('1000-01-01')!;

/** Any JSON-like value, small: list items and object members. */
export function smallJson(fc: FastCheck): Arbitrary<unknown> {
  return fc.jsonValue({ maxDepth: 2 });
}

/**
 * Whether a generated text is one a `text` field accepts at all: no NUL and no lone surrogate,
 * which every text field refuses before its decorators (422 `no_nul`, `well_formed`; no database
 * could store them). Text arbitraries that mean to be accepted keep to these.
 */
export const storableText = (text: string): boolean => unstorableText(text) === null;

/** Any text, including astral and unusual characters (storableText). */
export const anyText = builtOnce((fc) =>
  fc.oneof(fc.string({ maxLength: MAX_SAMPLE_LENGTH }), fc.string({ unit: 'binary', maxLength: MAX_SAMPLE_LENGTH })).filter(storableText),
);

/** Any value of the field type, as validation hands it to a check (a FileSample for `file`). */
export function anyValueOf(fc: FastCheck, type: FieldType): Arbitrary<unknown> {
  switch (type) {
    case 'text':
      return anyText(fc);
    case 'int':
      return fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.maxSafeInteger());
    case 'number':
      return fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.double({ noNaN: true, noDefaultInfinity: true }));
    case 'bool':
      return fc.boolean();
    case 'list':
      return fc.array(smallJson(fc), { maxLength: MAX_SAMPLE_LENGTH });
    case 'object':
      return fc.dictionary(fc.string({ maxLength: 8 }), smallJson(fc), { maxKeys: 6 });
    case 'date':
      return instantText(fc, 'date', MIN_INSTANT, MAX_INSTANT)!;
    case 'datetime':
      return instantText(fc, 'datetime', MIN_INSTANT, MAX_INSTANT)!;
    case 'file':
      return anyFileSample(fc);
  }
}

/** Narrows [lo, hi] to the preferred years when that leaves something. */
function preferred(lo: number, hi: number): [number, number] {
  const plo = Math.max(lo, PREFERRED_MIN_INSTANT);
  return plo <= hi ? [plo, hi] : [lo, hi];
}

function dateIn(fc: FastCheck, lo: number, hi: number): Arbitrary<string> | null {
  const first = Math.ceil(lo / DAY_MS);
  const last = Math.floor(hi / DAY_MS);
  if (first > last) return null;
  return fc.integer({ min: first, max: last }).map((day) => formatDate(day * DAY_MS));
}

function datetimeIn(fc: FastCheck, lo: number, hi: number): Arbitrary<string> | null {
  if (lo > hi) return null;
  return fc
    .tuple(fc.integer({ min: lo, max: hi }), fc.oneof(fc.constant(0), fc.integer({ min: -MAX_OFFSET_MINUTES, max: MAX_OFFSET_MINUTES })), fc.boolean())
    .map(([ms, offset, fraction]) => formatDatetime(ms, offset, fraction));
}

/**
 * Texts naming an instant in [lo, hi] (milliseconds, inclusive): `YYYY-MM-DD` for `date`, a
 * date-time for `datetime`, either for `text`. Null when no such text exists.
 */
export function instantText(fc: FastCheck, type: FieldType, lo: number, hi: number): Arbitrary<string> | null {
  const [a, b] = preferred(Math.max(lo, MIN_INSTANT), Math.min(hi, MAX_INSTANT));
  const dates = type === 'datetime' ? null : dateIn(fc, a, b);
  const datetimes = type === 'date' ? null : datetimeIn(fc, a, b);
  if (dates && datetimes) return fc.oneof(dates, datetimes);
  return dates ?? datetimes;
}
