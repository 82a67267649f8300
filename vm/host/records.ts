/**
 * Records: the one plugin that answers `type` declarations, `save`, `delete` and `transaction`
 * (the record provider), and how other plugins read stored records.
 */
import type { Constant, FieldType, Literal } from '../lang.js';
import type { Value, ValueObject } from '../values.js';
import type { CallContext, Halt } from './context.js';
import type { ErrorResponseSpec, ParamSpec } from './natives.js';

/** A declared field of a record type (`type User { email: text @email @unique }`). */
export interface RecordField {
  readonly name: string;
  readonly type: FieldType;
  /** Written `name?:`. */
  readonly optional: boolean;
  /** Neither optional nor defaulted. */
  readonly required: boolean;
  /** As written, arguments folded: validators and the provider's own decorators (`@hidden`). */
  readonly decorators: readonly { readonly name: string; readonly args: readonly Constant[] }[];
  readonly doc: string | null;
}

/** One failing field of a write, as the 422 body's `details` lists it (request validation's shape). */
export interface FieldProblem {
  field: string;
  rule: string;
  message: string;
}

/** A `type` declaration of the app, as the record provider receives it. */
export interface RecordType {
  readonly name: string;
  readonly fields: readonly RecordField[];
  readonly doc: string | null;
  /** Where it is declared (relative to the app). */
  readonly file: string;
  readonly line: number;
  readonly col: number;
  /**
   * Runs the fields' validators on a whole record as request validation runs them (presence,
   * type, every decorator; JSON strictness): the declared fields after defaults, or every failure.
   */
  validate(input: ValueObject): { value: ValueObject; errors: null } | { value: null; errors: FieldProblem[] };
}

/** Stands for an argument value the compiler could not know (`{ role: query.role }` knows the key only). */
export const UNKNOWN: unique symbol = Symbol('rvm.unknown');

/**
 * Stands for an argument the compiler saw is the request's data as the client sent it:
 * `request.body`, `request.query`, `request.params`, `request.headers`, `request.cookies`, or
 * `body` and `query` in a route that does not validate them. `source` is how the code wrote it.
 */
export class RawRequestArg {
  constructor(readonly source: string) {}
}

/** What the compiler knew of one call argument: a constant, request data, or a list or object literal holding UNKNOWN values. */
export type KnownArg = Literal | typeof UNKNOWN | RawRequestArg | KnownArg[] | { [key: string]: KnownArg };

/** A method every record type answers: `User.create(body)` calls `fn(ctx, User, body)`. */
export interface RecordMethod {
  /** Receives the type, then the call's arguments, checked against `params` as a native's are. */
  fn(ctx: CallContext, type: RecordType, ...args: Value[]): Value | Halt | Promise<Value | Halt>;
  params: ParamSpec[];
  /** What a call answers, read by the compiler's inference: `record`, `record?`, `records`, `page`, or a result type as a native's (`int`). */
  returns?: string;
  doc: string;
  /** Error responses calling it can end the request with (a write's 409 `conflict`), for the reference. */
  responses?: ErrorResponseSpec[];
}

/** Why a call's known arguments are refused at compile time, with the nearest name. */
export interface RecordCallProblem {
  message: string;
  hint?: string;
}

/** A change the record provider will not make by itself at start, at the type's declaration. */
export interface RecordStartProblem {
  message: string;
  hint?: string;
  file: string;
  line: number;
  col: number;
}

/**
 * The record provider: `T.m(...)` for every `type T` and provider method `m`, and the statements
 * `save r`, `delete r` and `transaction { }`. One plugin of an app may register it.
 */
export interface RecordProvider {
  /** By name (lower-case words): `create`, `find`, `where`… */
  methods: Readonly<Record<string, RecordMethod>>;
  /** Decorators only type fields take (`hidden`, `unique`, `index`); the validators plan every other one. */
  decorators: readonly string[];
  /** Told the app's record types whenever the app is linked, before any call. */
  declare?(types: readonly RecordType[]): void;
  /**
   * Called once the app is linked, before it serves (at start and at each dev reload): opens the
   * database when the app declares types and brings it to them. `database` names it for the start
   * line (`sqlite .rvm/data.sqlite`, never a password), null when none was opened; each problem
   * is a change the provider will not make by itself, and stops the start (or the reload).
   */
  start?(): Promise<{ database: string | null; problems: readonly RecordStartProblem[] }>;
  /** Releases what `start` opened (the app closed, or a reload replaced this version). */
  close?(): Promise<void>;
  /**
   * Checks what the compiler knew of a call's arguments (constant filters, option names): a
   * problem is a compile error at the call (`E_RECORD_QUERY`); null accepts.
   */
  checkCall?(type: RecordType, method: string, args: readonly KnownArg[]): RecordCallProblem | null;
  /** `save r`: inserts a record made by `T.new`, or updates a stored one. */
  save(ctx: CallContext, record: Value): Value | Halt | Promise<Value | Halt>;
  /** `delete r`. */
  delete(ctx: CallContext, record: Value): Value | Halt | Promise<Value | Halt>;
  /** Before a `transaction` block. */
  begin(ctx: CallContext): Value | Halt | Promise<Value | Halt>;
  /** After a `transaction` block that ran to its end. */
  commit(ctx: CallContext): Value | Halt | Promise<Value | Halt>;
  /** The block raised `error` (`{message, code}`): rolls back, then throws it again as an RvmError. */
  rollback(ctx: CallContext, error: Value): Value | Halt | Promise<Value | Halt>;
}

/** Stored records as a plugin other than the record provider reads them. */
export interface StoredRecords {
  /**
   * What `T.find(id)` answers for the app's `type` named `type` (a record value, or null), or
   * null when the app declares no such type or no plugin provides records.
   */
  find(ctx: CallContext, type: string, id: string): Value | Halt | Promise<Value | Halt>;
  /** Whether the app declares a type named `type` and a plugin provides records (so `find` reads a store). */
  declares(type: string): boolean;
}
