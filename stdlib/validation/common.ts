/**
 * What the validator modules share: the table type they export, literal helpers for messages
 * and argument checks, and text measured the way JSON Schema measures it (code points).
 */
import type { Arbitrary, FastCheck, FieldType, Literal, ValidatorSpec, Value } from '../../plugins/sdk.js';

/** Validators by name, as each theme module exports them. */
export type ValidatorTable = Record<string, ValidatorSpec>;

/** Every field type. */
export const ALL_TYPES: readonly FieldType[] = ['text', 'int', 'number', 'bool', 'file', 'list', 'object', 'date', 'datetime'];

/** Every field type but `file`: the types a literal argument can stand for. */
export const NON_FILE_TYPES: readonly FieldType[] = ['text', 'int', 'number', 'bool', 'list', 'object', 'date', 'datetime'];

/** A literal as a message or listing shows it: text in single quotes, the rest as written. */
export function showLiteral(v: Literal): string {
  return typeof v === 'string' ? `'${v}'` : String(v);
}

/** "1 character", "8 characters". */
export function count(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** Argument `i` as a number, NaN when it is not one (callers run after the engine checked types). */
export function numArg(args: readonly Literal[], i = 0): number {
  const v = args[i];
  return typeof v === 'number' ? v : Number.NaN;
}

/** Argument `i` as text, '' when it is not text. */
export function textArg(args: readonly Literal[], i = 0): string {
  const v = args[i];
  return typeof v === 'string' ? v : '';
}

/** A check that applies `test` to text values and fails anything else. */
export function textCheck(test: (s: string) => boolean): (value: Value) => boolean {
  return (value) => typeof value === 'string' && test(value);
}

/**
 * Escapes `text` for a regular expression (JSON Schema `pattern`). Only syntax characters are
 * escaped: in Unicode mode, which ajv uses, escaping anything else (`\-`) is a syntax error.
 */
export function escapeRegex(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
}

/** Whether a literal can stand for a value of a field of `type` (for `one_of`, `default`, ...). */
export function literalFits(v: Literal, type: FieldType, isDate: (s: string) => boolean, isDatetime: (s: string) => boolean): boolean {
  switch (type) {
    case 'text':
      return typeof v === 'string';
    case 'int':
      return typeof v === 'number' && Number.isSafeInteger(v);
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    case 'bool':
      return typeof v === 'boolean';
    case 'date':
      return typeof v === 'string' && isDate(v);
    case 'datetime':
      return typeof v === 'string' && isDatetime(v);
    case 'list':
    case 'object':
    case 'file':
      return false;
  }
}

/** What a field type is called in argument-check messages. */
export const TYPE_NOUNS: Record<FieldType, string> = {
  text: 'text',
  int: 'an integer',
  number: 'a number',
  bool: 'true or false',
  file: 'a file',
  list: 'a list',
  object: 'an object',
  date: "a date ('YYYY-MM-DD')",
  datetime: "an ISO 8601 date-time with a time zone ('2024-05-01T12:00:00Z')",
};

/**
 * `build` made once per fast-check instance and reused: building some arbitraries costs more than
 * drawing many samples (fast-check tokenises its dictionary of biased strings for every
 * `string` or `stringMatching` built, ~0.1 s), and arbitraries are immutable, so one serves all.
 */
export function builtOnce<T>(build: (fc: FastCheck) => Arbitrary<T>): (fc: FastCheck) => Arbitrary<T> {
  const built = new WeakMap<FastCheck, Arbitrary<T>>();
  return (fc) => {
    let arbitrary = built.get(fc);
    if (arbitrary === undefined) {
      arbitrary = build(fc);
      built.set(fc, arbitrary);
    }
    return arbitrary;
  };
}
