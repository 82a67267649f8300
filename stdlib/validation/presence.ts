/**
 * Presence rules and cross-field equality: `@required` and `@default` (applied by the validation
 * engine itself before any check runs; their checks always pass) and `@same`.
 */
import { anyValueOf } from './arbitraries.js';
import { isDate, isDatetime } from '../../plugins/sdk.js';
import { ALL_TYPES, NON_FILE_TYPES, TYPE_NOUNS, literalFits, showLiteral, textArg, type ValidatorTable } from './common.js';
import { valuesEqual, type Literal, type FieldType, type Value, type ValueObject } from '../../plugins/sdk.js';

/** A field name `@same` may point at: what the language accepts as a field name. */
const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const PASS = (): boolean => true;

/** Whether a `@default` literal fits a field of `type`; null always does (absent stays null). */
function defaultFits(v: Literal, type: FieldType): boolean {
  return v === null || literalFits(v, type, isDate, isDatetime);
}

/** The other field's value, read as an own member only (never from the prototype chain). */
function otherField(input: ValueObject, name: string): Value | undefined {
  return input !== null && typeof input === 'object' && Object.hasOwn(input, name) ? input[name] : undefined;
}

/** `@required`, `@default` and `@same`. */
export const PRESENCE_VALIDATORS: ValidatorTable = {
  required: {
    types: ALL_TYPES,
    params: [],
    doc: 'The field must be sent (a null counts as missing); fields without `?` and without @default are required anyway.',
    build: () => PASS,
    message: () => 'is required',
    schema: () => ({}),
    arbitraries: {
      accepts: (fc, _args, type) => anyValueOf(fc, type),
      rejects: () => null,
    },
  },

  default: {
    types: NON_FILE_TYPES,
    params: [{ name: 'value', type: 'any', doc: 'The value used when the field is missing; a literal of the field type, or null.' }],
    doc: 'Value the field takes when the request leaves it out or sends null; it makes the field optional.',
    checkArgs: (args, type) =>
      defaultFits(args[0] ?? null, type) ? null : `@default needs ${TYPE_NOUNS[type]} (or null) for a ${type} field, got ${showLiteral(args[0] ?? null)}`,
    build: () => PASS,
    message: () => 'is required',
    schema: (args) => ({ default: args[0] ?? null }),
    arbitraries: {
      accepts: (fc, _args, type) => anyValueOf(fc, type),
      rejects: () => null,
    },
  },

  same: {
    types: NON_FILE_TYPES,
    params: [{ name: 'field', type: 'text', doc: 'Name of the other field of the same body, e.g. password.' }],
    doc: "The value must equal the value of another field of the same body (e.g. password_confirmation @same('password')).",
    checkArgs: (args) => (FIELD_NAME.test(textArg(args)) ? null : `@same needs the name of another field, got ${showLiteral(args[0] ?? null)}`),
    build: (args) => {
      const name = textArg(args);
      return (value, input) => {
        const other = otherField(input, name);
        return other !== undefined && valuesEqual(value, other);
      };
    },
    message: (args) => `must match the field '${textArg(args)}'`,
    schema: (args) => ({ 'x-same-as': textArg(args) }),
    // Whether a value passes depends on the other field: accepted values pass when that field
    // holds the same value; there is no value that fails on its own.
    arbitraries: {
      accepts: (fc, _args, type) => anyValueOf(fc, type),
      rejects: () => null,
    },
  },
};
