/**
 * Argument checks shared by the core natives: each returns the argument with its JS type or
 * raises a `type_error` naming the native and the parameter.
 */
import { HostObject, MAX_TEXT_LENGTH, RvmError, typeName } from '../../plugins/sdk.js';
import type { Value, ValueObject } from '../../plugins/sdk.js';


/** True when an optional argument was left out (the VM may pass undefined or null). */
export function absent(v: Value | undefined): v is null | undefined {
  return v === undefined || v === null;
}

function wrongType(fn: string, param: string, expected: string, v: Value | undefined): RvmError {
  return new RvmError(`${fn}() expects ${param} to be ${expected}, got ${typeName(v)}`, 'type_error');
}

export function expectText(fn: string, param: string, v: Value | undefined): string {
  if (typeof v !== 'string') throw wrongType(fn, param, 'text', v);
  return v;
}

export function expectNumber(fn: string, param: string, v: Value | undefined): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw wrongType(fn, param, 'a number', v);
  return v;
}

export function expectInt(fn: string, param: string, v: Value | undefined): number {
  if (typeof v !== 'number' || !Number.isInteger(v)) throw wrongType(fn, param, 'an int', v);
  return v;
}

export function expectList(fn: string, param: string, v: Value | undefined): Value[] {
  if (!Array.isArray(v)) throw wrongType(fn, param, 'a list', v);
  return v;
}

export function expectBool(fn: string, param: string, v: Value | undefined): boolean {
  if (typeof v !== 'boolean') throw wrongType(fn, param, 'a bool', v);
  return v;
}

/** A plain language object (not a list, not a host object). */
export function isPlainObject(v: Value | undefined): v is ValueObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof HostObject);
}

/** Key/value pairs of an object or host object (e.g. request headers); anything else is a type_error. */
export function entriesOf(fn: string, param: string, v: Value | undefined): [string, Value][] {
  if (isPlainObject(v)) return Object.keys(v).map((k) => [k, v[k] as Value]);
  if (v instanceof HostObject) return v.keys().map((k) => [k, v.get(k) ?? null]);
  throw wrongType(fn, param, 'an object', v);
}

/** Refuses a result longer than MAX_TEXT_LENGTH (before it is built, where the length is known first); returns what it checked. */
export function checkLength<T extends number | string>(fn: string, lengthOrText: T): T {
  const length: number = typeof lengthOrText === 'string' ? lengthOrText.length : (lengthOrText as number);
  if (length > MAX_TEXT_LENGTH) {
    throw new RvmError(`${fn}() would build a text of ${length} characters (limit ${MAX_TEXT_LENGTH})`, 'text_too_long');
  }
  return lengthOrText;
}
