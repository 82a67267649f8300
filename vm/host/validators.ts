/** Validators (`@email`, `@min(8)`) as plugins declare them: decided once per use, at load. */
import type { FieldType, Literal } from '../lang.js';
import type { JsonSchema } from '../bytecode/module.js';
import type { Value, ValueObject } from '../values.js';
import type { ParamSpec } from './natives.js';

/** fast-check, as the fuzzer and the property tests hand it to a validator's arbitraries. */
export type FastCheck = typeof import('fast-check').default;

export type Arbitrary<T> = import('fast-check').Arbitrary<T>;

/** What an arbitrary produces for a `file` field: a file name and the bytes to upload. */
export interface FileSample {
  name: string;
  bytes: Uint8Array;
}

/** Bounds one validator use puts on a value, per dimension: `@min(8)` on text → `{ length: { min: 8 } }`. */
export type Bounds = Partial<Record<'value' | 'length' | 'items' | 'size', { min?: number; max?: number }>>;

/**
 * Why a validator refuses its arguments, with a hint on what to write instead (shown under the
 * compile error). `checkArgs` may return this or just the message.
 */
export interface ArgsProblem {
  message: string;
  hint?: string;
}

/**
 * A validator (`@email`, `@min(8)`) registered by a plugin. Everything about one use is decided
 * once, at load: argument checks (compile errors), the check function, its message and schema.
 */
export interface ValidatorSpec {
  /** Field types it applies to; on another type it is a compile error. */
  types: readonly FieldType[];
  /** Arguments by name and type, checked at compile time (count and literal types). */
  params: ParamSpec[];
  /** One sentence for `rvm validators` and the reference. */
  doc: string;
  /** Other spellings (`min_length` for `minLength`); they don't count as validators. */
  aliases?: string[];
  /**
   * Checks beyond count and type (a regex that compiles, a size that parses): a message, or an
   * ArgsProblem with a hint, makes it a compile error at the decorator; null accepts.
   */
  checkArgs?(args: readonly Literal[], type: FieldType): string | ArgsProblem | null;
  /**
   * Builds the check for one use: true when `value` (already of the field's type; an
   * UploadedFile for `file`) passes. A check that compares with other fields (`@same`) declares
   * `input` as its second parameter; such checks run once every field is typed, and `input`
   * holds them all. Checks that don't declare it run in the first pass.
   */
  build(args: readonly Literal[], type: FieldType): (value: Value, input: ValueObject) => boolean;
  /** The message when a value fails, e.g. "must be at least 8 characters". */
  message(args: readonly Literal[], type: FieldType): string;
  /** JSON Schema / OpenAPI keywords this use adds to its field. */
  schema?(args: readonly Literal[], type: FieldType): JsonSchema;
  /** Bounds this use implies, so `@min(10) @max(5)` is a compile error. */
  bounds?(args: readonly Literal[], type: FieldType): Bounds;
  /** `file` fields: the most bytes an upload may have; reading stops there. */
  uploadLimit?(args: readonly Literal[]): number;
  /** Values it accepts and, where meaningful, rejects: for property tests and `rvm fuzz`. */
  arbitraries?: {
    accepts(fc: FastCheck, args: readonly Literal[], type: FieldType): Arbitrary<unknown>;
    rejects?(fc: FastCheck, args: readonly Literal[], type: FieldType): Arbitrary<unknown> | null;
  };
}
