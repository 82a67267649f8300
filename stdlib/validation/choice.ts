/**
 * Choices: `@one_of(v1, ...)` (alias `@oneOf`) and `@not_one_of(v1, ...)`, compared exactly
 * (case-sensitive text, numbers by value).
 */
import type { Arbitrary, FastCheck, FieldType, Literal, ValidatorSpec } from '../../plugins/sdk.js';
import { anyValueOf } from './arbitraries.js';
import { DAY_MS, dateInstant, formatDate, isDate, isDatetime } from '../../plugins/sdk.js';
import { TYPE_NOUNS, literalFits, showLiteral, type ValidatorTable } from './common.js';

const CHOICE_TYPES: readonly FieldType[] = ['text', 'int', 'number', 'bool', 'date'];

function checkChoices(name: string) {
  return (args: readonly Literal[], type: FieldType): string | null => {
    if (args.length === 0) return `@${name} needs at least one value`;
    const bad = args.find((v) => !literalFits(v, type, isDate, isDatetime));
    return bad === undefined ? null : `@${name} on a ${type} field needs values that are ${TYPE_NOUNS[type]}, got ${showLiteral(bad)}`;
  };
}

function listed(args: readonly Literal[]): string {
  return args.map(showLiteral).join(', ');
}

/** A value of `type` that is none of `args`, derived from `seed` (a value of the type). */
function avoid(type: FieldType, args: readonly Literal[], seed: unknown): unknown {
  const taken = new Set<unknown>(args);
  switch (type) {
    case 'text': {
      let s = seed as string;
      while (taken.has(s)) s += '~';
      return s;
    }
    case 'int':
    case 'number': {
      let n = seed as number;
      // Stepping by one never revisits a value (within the safe range), so this ends after at most args.length steps.
      while (taken.has(n)) n = Math.abs(n) < Number.MAX_SAFE_INTEGER ? n + 1 : 0;
      return n;
    }
    case 'date': {
      let d = seed as string;
      while (taken.has(d)) d = formatDate(dateInstant(d)! + (d < '5000' ? DAY_MS : -DAY_MS));
      return d;
    }
    default:
      return seed;
  }
}

function outsideOf(fc: FastCheck, args: readonly Literal[], type: FieldType): Arbitrary<unknown> | null {
  if (type === 'bool') {
    const rest = [true, false].filter((b) => !args.includes(b));
    return rest.length === 0 ? null : fc.constantFrom(...rest);
  }
  return anyValueOf(fc, type).map((v) => avoid(type, args, v));
}

const VALUES: ValidatorSpec['params'] = [{ name: 'values', type: 'any', rest: true, doc: 'The listed values, literals of the field type.' }];

/** `@one_of` and `@not_one_of`. */
export const CHOICE_VALIDATORS: ValidatorTable = {
  one_of: {
    types: CHOICE_TYPES,
    params: VALUES,
    aliases: ['oneOf'],
    doc: 'The value is one of the listed values (text compared case-sensitively, numbers by value).',
    checkArgs: checkChoices('one_of'),
    build: (args) => {
      const allowed = new Set<unknown>(args);
      return (value) => allowed.has(value);
    },
    message: (args) => `must be one of ${listed(args)}`,
    schema: (args) => ({ enum: [...args] }),
    arbitraries: {
      accepts: (fc, args) => fc.constantFrom(...args),
      rejects: (fc, args, type) => outsideOf(fc, args, type),
    },
  },

  not_one_of: {
    types: CHOICE_TYPES,
    params: VALUES,
    doc: 'The value is none of the listed values (text compared case-sensitively, numbers by value), e.g. reserved names.',
    checkArgs: (args, type) =>
      checkChoices('not_one_of')(args, type) ??
      (type === 'bool' && args.includes(true) && args.includes(false) ? '@not_one_of(true, false) leaves no value a bool field could hold' : null),
    build: (args) => {
      const refused = new Set<unknown>(args);
      return (value) => !refused.has(value);
    },
    message: (args) => `must not be one of ${listed(args)}`,
    schema: (args) => ({ not: { enum: [...args] } }),
    arbitraries: {
      accepts: (fc, args, type) => {
        const values = outsideOf(fc, args, type);
        if (values === null) throw new Error('@not_one_of lists every value of the field type');
        return values;
      },
      rejects: (fc, args) => fc.constantFrom(...args),
    },
  },
};
