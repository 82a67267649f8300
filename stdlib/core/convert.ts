/**
 * Core conversions between texts, numbers and booleans (int, number and text), and type_of.
 */
import { RUNTIME, HostObject, RvmError, SecretText, intFromText, numberFromText, toText, typeName } from '../../plugins/sdk.js';
import type { PluginApi, Value } from '../../plugins/sdk.js';

/** Registers int, number, text and type_of. */
export function registerConvert(rvm: PluginApi): void {
  rvm.native('int', (_ctx, x) => toInt(x), {
    params: [{ name: 'x', type: 'any' }],
    returns: 'int?',
    doc: "Converts to an int: a number is truncated toward zero; a text of digits with an optional sign and surrounding spaces is parsed (' 12 ' is 12; '12abc', '1.5', '' and integers beyond ±2^53 give null); true/false give 1/0; null stays null; lists and objects are a type_error.",
  });

  rvm.native('number', (_ctx, x) => toNumber(x), {
    params: [{ name: 'x', type: 'any' }],
    returns: 'number?',
    doc: "Converts to a number: numbers stay; a decimal text with optional sign, fraction, exponent and surrounding spaces is parsed ('1.5' is 1.5; '1.5kg', '0x10' and '' give null); true/false give 1/0; null stays null; lists and objects are a type_error.",
  });

  rvm.native(
    'text',
    (ctx, x) => {
      const text = toText(x ?? null);
      ctx.budget.chargeText(text.length);
      return text;
    },
    {
      params: [{ name: 'x', type: 'any' }],
      returns: 'text',
      doc: "The text form of any value, as interpolation shows it: texts unchanged, numbers and booleans as written, null as 'null', lists and objects as JSON.",
    },
  );

  rvm.native('type_of', (_ctx, v) => typeOf(v ?? null), {
    params: [{ name: 'v', type: 'any' }],
    returns: 'text',
    doc: "The type of a value as a text: 'null', 'bool', 'int' (a whole number: type_of(2.0) is 'int'), 'number', 'text', 'list', 'object', 'secret' or 'lambda'. Values the runtime provides with fields (request, its headers, a record, an uploaded file) are 'object'.",
  });
}

function typeOf(v: Value): string {
  if (v instanceof SecretText) return 'secret';
  // A lambda is the one host value that is no data; everything else with fields reads as an object.
  if (v instanceof HostObject) return v.typeName === 'lambda' ? 'lambda' : 'object';
  return typeName(v);
}

function toInt(x: Value | undefined): Value {
  if (x === null || x === undefined) return null;
  if (typeof x === 'number') return Number.isFinite(x) ? Math.trunc(x) + 0 : null;
  if (typeof x === 'boolean') return x ? 1 : 0;
  if (typeof x === 'string') return intFromText(x);
  throw new RvmError(`int() cannot convert ${typeName(x)}`, RUNTIME.type_error);
}

function toNumber(x: Value | undefined): Value {
  if (x === null || x === undefined) return null;
  if (typeof x === 'number') return Number.isFinite(x) ? x : null;
  if (typeof x === 'boolean') return x ? 1 : 0;
  if (typeof x === 'string') return numberFromText(x);
  throw new RvmError(`number() cannot convert ${typeName(x)}`, RUNTIME.type_error);
}
