/**
 * Argument checks for plugin code: each returns the argument with its JS type or raises a
 * `type_error` naming the native and the parameter. The registry checks declared parameters with
 * the same wording (plugins/checked-native.ts); these serve what a declaration cannot say: a
 * field of an options object, an item of a list, an argument of a guard.
 */
import { HostObject, MAX_TEXT_LENGTH, RvmError, SecretText, typeName } from '../values.js';
import type { Value, ValueObject } from '../values.js';
import { RUNTIME } from '../errors.js';

/** True when an optional argument was left out (the VM may pass undefined or null). */
export function absent(v: Value | undefined): v is null | undefined {
  return v === undefined || v === null;
}

/** The `type_error` for an argument of the wrong type: `lower() expects s to be text, got int`. */
export function typeError(fn: string, param: string, expected: string, v: Value | undefined): RvmError {
  return new RvmError(`${fn}() expects ${param} to be ${expected}, got ${typeName(v)}`, RUNTIME.type_error);
}

/** The argument as text, else a type_error. */
export function expectText(fn: string, param: string, v: Value | undefined): string {
  if (typeof v !== 'string') throw typeError(fn, param, 'text', v);
  return v;
}

/** The argument as a finite number, else a type_error. */
export function expectNumber(fn: string, param: string, v: Value | undefined): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw typeError(fn, param, 'a number', v);
  return v;
}

/** The argument as a whole number, else a type_error. */
export function expectInt(fn: string, param: string, v: Value | undefined): number {
  if (typeof v !== 'number' || !Number.isInteger(v)) throw typeError(fn, param, 'an int', v);
  return v;
}

/** The argument as a list, else a type_error. */
export function expectList(fn: string, param: string, v: Value | undefined): Value[] {
  if (!Array.isArray(v)) throw typeError(fn, param, 'a list', v);
  return v;
}

/** The argument as a bool, else a type_error. */
export function expectBool(fn: string, param: string, v: Value | undefined): boolean {
  if (typeof v !== 'boolean') throw typeError(fn, param, 'a bool', v);
  return v;
}

/** True for a value a text parameter that takes secrets accepts: text or a secret text. */
export function isTextLike(v: Value | undefined): v is string | SecretText {
  return typeof v === 'string' || v instanceof SecretText;
}

/** The text of a text or secret argument (revealed: for natives that take keys, or keep what they derive secret), else a type_error. */
export function expectTextLike(fn: string, param: string, v: Value | undefined): string {
  if (!isTextLike(v)) throw typeError(fn, param, 'text', v);
  return v instanceof SecretText ? v.reveal() : v;
}

/**
 * `text` as a secret when `input` was one: what is derived from a secret (its encoding, its
 * digest) can give it away, so it stays secret, as `secret + text` does.
 */
export function keepSecret(input: Value | undefined, text: string): string | SecretText {
  return input instanceof SecretText ? new SecretText(text) : text;
}

/** A plain language object (not a list, not a host object). */
export function isPlainObject(v: Value | undefined): v is ValueObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof HostObject);
}

/** Key/value pairs of an object or host object (e.g. request headers); anything else is a type_error. */
export function entriesOf(fn: string, param: string, v: Value | undefined): [string, Value][] {
  if (isPlainObject(v)) return Object.keys(v).map((k) => [k, v[k] as Value]);
  if (v instanceof HostObject) return v.keys().map((k) => [k, v.get(k) ?? null]);
  throw typeError(fn, param, 'an object', v);
}

/** Refuses a result longer than MAX_TEXT_LENGTH (before it is built, where the length is known first); returns what it checked. */
export function checkLength<T extends number | string>(fn: string, lengthOrText: T): T {
  const length: number = typeof lengthOrText === 'string' ? lengthOrText.length : (lengthOrText as number);
  if (length > MAX_TEXT_LENGTH) {
    throw new RvmError(`${fn}() would build a text of ${length} characters (limit ${MAX_TEXT_LENGTH})`, RUNTIME.text_too_long);
  }
  return lengthOrText;
}

/**
 * The message of the RvmError `check` throws, or null. Lets one argument parser serve both a
 * guard's `checkArgs` (load time) and its requests.
 */
export function argumentProblem(check: () => unknown): string | null {
  try {
    check();
    return null;
  } catch (e) {
    if (e instanceof RvmError) return e.message;
    throw e;
  }
}
