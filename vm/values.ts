/**
 * Runtime values and their semantics, shared by the interpreter, the compiler's constant folder
 * and the plugins. Values are plain JS data: null, boolean, number, string, arrays, plain objects,
 * plus HostObjects (request, headers, response view, records, secrets) that natives provide.
 */
import { RUNTIME } from './errors.js';

export type Value = null | boolean | number | string | Value[] | ValueObject | HostObject;

export interface ValueObject {
  [key: string]: Value;
}

/**
 * A value backed by the host. The VM reads its fields through `get`, so a request view can
 * compute fields lazily and headers can ignore case. `toJSON` decides how it leaves in a response.
 */
export abstract class HostObject {
  /** The type name shown in error messages (`request`, `headers`, `secret`, ...). */
  abstract readonly typeName: string;
  /** A field or key; undefined reads as null. */
  abstract get(key: string): Value | undefined;
  /** Writes a field; the default refuses with a runtime error. */
  set(key: string, _value: Value): void {
    throw new RvmError(`cannot change field '${key}' of ${this.typeName}`, RUNTIME.read_only);
  }
  /** Own keys, for iteration. */
  keys(): string[] {
    return [];
  }
  /** The JSON form of this value (plain data). */
  abstract toJSON(): unknown;
  /** The text form used by concatenation and interpolation. */
  toText(): string {
    return JSON.stringify(this.toJSON());
  }
}

/**
 * A secret value (from `secret()`, `env()` of a secret, or text built from one). It shows as
 * `[secret]` in logs, error pages, JSON and concatenation with other text — concatenating keeps
 * it secret — and only natives that take keys `reveal` it.
 */
export class SecretText extends HostObject {
  readonly typeName = 'secret';
  readonly #value: string;

  constructor(value: string) {
    super();
    this.#value = value;
  }

  /** The real text; for natives that take keys, never for output. */
  reveal(): string {
    return this.#value;
  }

  get(_key: string): Value | undefined {
    return undefined;
  }

  toJSON(): unknown {
    return '[secret]';
  }

  override toText(): string {
    return '[secret]';
  }
}

/**
 * A lambda (`x => x * 2`): the chunk of its body, which the interpreter runs, and copies of the
 * enclosing locals it reads. It lives within its request and is no data: JSON (a response,
 * `json_stringify`, a record, a store) refuses it, and its text is `[lambda]`.
 */
export class Lambda extends HostObject {
  readonly typeName = 'lambda';

  constructor(
    /** The interpreter's chunk of its body; `data.arity` is its parameter count. */
    readonly chunk: { readonly data: { readonly arity: number; readonly name: string } },
    readonly captures: readonly Value[],
  ) {
    super();
  }

  get(_key: string): Value | undefined {
    return undefined;
  }

  toJSON(): never {
    throw new RvmError('a lambda is not data: it cannot be sent or stored as JSON', RUNTIME.not_data);
  }

  override toText(): string {
    return '[lambda]';
  }
}

/** The real text of a secret, or the text form of any other value. */
export function revealText(v: Value | undefined): string {
  return v instanceof SecretText ? v.reveal() : toText(v);
}

/** A runtime error raised by an operation or a native. `code` ends up in logs and dev bodies. */
export class RvmError extends Error {
  constructor(
    message: string,
    readonly code: string = RUNTIME.runtime_error,
  ) {
    super(message);
    this.name = 'RvmError';
  }
}

/**
 * Longest text (UTF-16 units) an operation builds: far above any sane response, far below V8's
 * string limit, so `s = s + s` in a loop fails cleanly instead of exhausting memory.
 */
export const MAX_TEXT_LENGTH = 16 * 1024 * 1024;
/** Longest list `+` builds, for the same reason (`l = l + l` doubles per iteration). */
export const MAX_LIST_LENGTH = 4 * 1024 * 1024;

/** Falsy: null, false, 0, '' (and NaN); everything else is truthy. */
export function isTruthy(v: Value | undefined): boolean {
  return v !== null && v !== undefined && v !== false && v !== 0 && v !== '' && !(typeof v === 'number' && Number.isNaN(v));
}

/**
 * `a ** b` on two numbers. An int to a non-negative int power is exact while the result is a safe
 * integer (squaring, not `Math.pow`, whose last bit may differ); past that it is the nearest
 * double. `0 ** -1` divides by zero; a negative base to a fractional power has no real value.
 */
export function power(base: number, exponent: number): number {
  if (base === 0 && exponent < 0) throw new RvmError('division by zero (0 to a negative power)', RUNTIME.division_by_zero);
  if (base < 0 && !Number.isInteger(exponent)) {
    throw new RvmError(`${base} ** ${exponent} has no real value (a negative base to a fractional power)`, RUNTIME.invalid_argument);
  }
  if (!Number.isInteger(base) || !Number.isInteger(exponent) || exponent < 0) return base ** exponent;
  let result = 1;
  let square = base;
  for (let e = exponent; ; ) {
    if (e % 2 === 1) {
      result *= square;
      if (!Number.isSafeInteger(result)) return base ** exponent;
    }
    e = Math.floor(e / 2);
    if (e === 0) return result;
    square *= square;
    if (!Number.isSafeInteger(square)) return base ** exponent;
  }
}

/**
 * The position `index` names in a sequence of `length` items: from the start when it is 0 or
 * more, from the end when negative (`-1` is the last, as in Python); null when outside.
 */
export function sequenceIndex(index: number, length: number): number | null {
  const at = index < 0 ? length + index : index;
  return at >= 0 && at < length ? at : null;
}

/** The language's name for a value's type, for error messages. */
export function typeName(v: Value | undefined): string {
  if (v === null || v === undefined) return 'null';
  switch (typeof v) {
    case 'boolean':
      return 'bool';
    case 'number':
      return Number.isInteger(v) ? 'int' : 'number';
    case 'string':
      return 'text';
  }
  if (Array.isArray(v)) return 'list';
  if (v instanceof HostObject) return v.typeName;
  return 'object';
}

/** A decimal with optional sign, fraction and exponent (no hex, no Infinity, no `1_000`). */
const NUMBER_TEXT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/**
 * The int a text spells — an optionally signed run of ASCII digits, surrounding spaces allowed —
 * or null (`'12abc'`, `'1.5'`, `''`, beyond ±2^53). One reading for `int()` and for query, form
 * and multipart `int` fields.
 */
export function intFromText(text: string): number | null {
  const s = text.trim();
  const length = s.length;
  const first = length > 0 ? s.charCodeAt(0) : 0;
  let i = first === 43 || first === 45 ? 1 : 0; // + or -
  if (i === length) return null;
  for (; i < length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return null;
  }
  const n = Number(s);
  return Number.isSafeInteger(n) ? n + 0 : null; // + 0: '-0' is 0
}

/** The finite number a decimal text spells (see NUMBER_TEXT; surrounding spaces allowed), or null. For `number()` and `number` fields. */
export function numberFromText(text: string): number | null {
  const s = text.trim();
  if (!NUMBER_TEXT.test(s)) return null;
  const n = Number(s);
  return Number.isFinite(n) ? n + 0 : null;
}

/** Text form of a value for concatenation, interpolation and logs. */
/**
 * Characters of a text as the language counts them: code points, a surrogate pair once (a lone
 * surrogate counts as one), as `len()`, `split(s, '')` and JSON Schema's `minLength` do. Builds nothing.
 */
export function codePointLength(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

export function toText(v: Value | undefined): string {
  if (v === null || v === undefined) return 'null';
  switch (typeof v) {
    case 'string':
      return v;
    case 'number':
    case 'boolean':
      return String(v);
  }
  if (v instanceof HostObject) return v.toText();
  // Host objects inside lists and objects serialise through their toJSON, which JSON.stringify calls.
  return JSON.stringify(v);
}

/** Structural equality: primitives by value, lists and objects field by field. */
export function valuesEqual(a: Value | undefined, b: Value | undefined): boolean {
  if (a === b) return true;
  if (a === null || b === null || a === undefined || b === undefined) return false;
  if (a instanceof SecretText || b instanceof SecretText) {
    return (typeof a === 'string' || a instanceof SecretText) && (typeof b === 'string' || b instanceof SecretText) && revealText(a) === revealText(b);
  }
  if (typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!valuesEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  if (a instanceof HostObject || b instanceof HostObject) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const key of ka) if (!Object.hasOwn(b, key) || !valuesEqual(a[key], b[key])) return false;
  return true;
}

/** Reads `key` of a value the way `.` and `[]` with a text key do. */
export function getField(obj: Value | undefined, key: string): Value {
  if (obj === null || obj === undefined) throw new RvmError(`cannot read field '${key}' of null`, RUNTIME.null_field);
  if (obj instanceof HostObject) return obj.get(key) ?? null;
  if (typeof obj === 'object' && !Array.isArray(obj)) {
    // Own properties only: `__proto__` and `constructor` are ordinary missing fields.
    return Object.hasOwn(obj, key) ? (obj[key] as Value) : null;
  }
  if (Array.isArray(obj) && key === 'length') return obj.length;
  if (typeof obj === 'string' && key === 'length') return obj.length;
  throw new RvmError(`cannot read field '${key}' of ${typeName(obj)}`, RUNTIME.type_error);
}

/** Writes `key` of an object the way `a.b = v` does. */
export function setField(obj: Value | undefined, key: string, value: Value): void {
  if (obj instanceof HostObject) return obj.set(key, value);
  if (obj === null || obj === undefined || typeof obj !== 'object' || Array.isArray(obj)) {
    throw new RvmError(`cannot set field '${key}' of ${typeName(obj)}`, RUNTIME.type_error);
  }
  // defineProperty, not assignment: a key named __proto__ must become data, never a prototype.
  Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
}

/** Deep-copies plain data from JSON.parse or a native into a language value (no prototypes, no cycles expected). */
export function fromJson(data: unknown): Value {
  if (data === null || data === undefined) return null;
  switch (typeof data) {
    case 'string':
    case 'number':
    case 'boolean':
      return data as Value;
    case 'object':
      if (Array.isArray(data)) return data.map(fromJson);
      if (data instanceof HostObject) return data;
      {
        const out: ValueObject = {};
        for (const key of Object.keys(data)) {
          const value = fromJson((data as Record<string, unknown>)[key]);
          // Only `__proto__` needs defining as data; plain assignment is the fast path for the rest.
          if (key === '__proto__') setField(out, key, value);
          else out[key] = value;
        }
        return out;
      }
    default:
      return null;
  }
}
