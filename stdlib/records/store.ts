/**
 * The storage contract of records (spec/plugins/records.md): what the records plugin asks of a database, and
 * nothing about the language. One implementation per database (SQLite by default, PostgreSQL when
 * `DATABASE_URL` is set) and an in-memory model for property tests; all three answer the same
 * conformance suite. Every value reaches SQL as a bound parameter; table and column names come
 * only from declared types, never from a request.
 */
import { OVERLOADED_RETRY_AFTER_S, type FieldType } from '../../plugins/sdk.js';

/**
 * What a declared field's column holds: the language's field types (spec/plugins/records.md
 * maps them), but `file`, which a record stores as its text (columnTypeOf).
 */
export type ColumnType = Exclude<FieldType, 'file'>;

/** One declared field of a record type, as the store needs it. */
export interface ColumnSpec {
  name: string;
  type: ColumnType;
  /** Absent or null allowed (`name?:`). */
  optional: boolean;
  /** The `@default(...)` value, applied by the store on insert when the field is absent. */
  default?: StoredValue;
  /** `@unique`: a unique index; a clash is a ConflictError. */
  unique: boolean;
  /** `@index`: a plain index. */
  index: boolean;
}

/** A record type: table `name`; `id`, `created_at`, `updated_at` are implicit and not listed. */
export interface TableSpec {
  name: string;
  columns: ColumnSpec[];
  /** Where it is declared, for schema diagnostics. */
  file: string;
  line: number;
  col: number;
}

/** A value as stored and returned: JSON data; dates and datetimes as ISO-8601 text (UTC, milliseconds). */
export type StoredValue = null | boolean | number | string | StoredValue[] | { [key: string]: StoredValue };

/** A row: the declared fields plus `id` (UUIDv7 text), `created_at`, `updated_at` (ISO-8601 UTC, ms). */
export type Row = Record<string, StoredValue>;

/**
 * Sets a field of a row (or any plain object of fields) as its own property. Plain assignment,
 * which keeps objects fast to build and to serialise, except for `__proto__`: assigned, it would
 * set the prototype; defined, it is a field like any other.
 */
export function put(row: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(row, key, { value, enumerable: true, writable: true, configurable: true });
  else row[key] = value;
}

/** An own field of a row, or null: never an Object.prototype member (`constructor`). */
export function own(row: Row, key: string): StoredValue {
  return Object.hasOwn(row, key) ? row[key]! : null;
}

/** Operators of a filter (spec/plugins/records.md). */
export type FilterOp = 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'in' | 'not_in' | 'contains' | 'starts_with' | 'is_null';

/** field → value (equality) or field → { op: value, ... } (all must hold). Field names are checked against the table before any SQL is built. */
export type Filter = Record<string, StoredValue | Partial<Record<FilterOp, StoredValue>>>;

/** One sort key: a field name, descending when `desc`. `id` is always appended as the last key (a total order for cursors). */
export interface OrderKey {
  field: string;
  desc: boolean;
}

export interface Query {
  filter: Filter;
  order: OrderKey[];
  /** 1..MAX_QUERY_ROWS (the language's default DEFAULT_LIMIT, its most MAX_LIMIT). */
  limit: number;
  offset: number;
  /** Keyset position: the order-key values and id of the last row of the previous page, decoded from a cursor. */
  after?: StoredValue[];
  /** Charges the rows' memory as they are read (`CallContext.chargeMemory`); absent, nothing is charged. */
  charge?: ChargeMemory;
}

/**
 * Charges `bytes` of rows read to the process-wide result budget; false when that would pass it:
 * the store then stops reading and fails the query with ResultMemoryError.
 */
export interface ChargeMemory {
  (bytes: number): boolean;
  /**
   * The budget's size: a query's rows charged more could never be held. A SQLite reader process
   * stops reading there and answers no rows, so the server never receives (and pays the event
   * loop's time to copy) rows it would refuse.
   */
  readonly most?: number;
}

/** Rows `where` and `page` return when no limit is given. */
export const DEFAULT_LIMIT = 50;
/** The most rows `where` and `page` return. */
export const MAX_LIMIT = 1000;
/** The most rows a store reads for one query: `page` reads one past its limit to learn whether another page follows. */
export const MAX_QUERY_ROWS = MAX_LIMIT + 1;

/** A change the schema sync will not make by itself (a field removed or renamed, a type changed, a new required field without default on a non-empty table). */
export interface SchemaChange {
  table: string;
  /** Human text: "field 'age' was removed", "field 'age' changed from int to text". */
  description: string;
  destructive: boolean;
  /** The SQL that applies it (shown by `rvm db diff`). */
  sql: string[];
  /**
   * Set when no flag can apply it, only a change to the data or the code: what to do. Such a
   * change stays withheld under `allowDestructive` too (its SQL would fail).
   */
  remedy?: string;
  file: string;
  line: number;
  col: number;
}

/** What sync found: changes made (additive) and changes withheld (destructive or ambiguous). */
export interface SchemaPlan {
  applied: string[];
  withheld: SchemaChange[];
}

/**
 * How an operation learns that its request was abandoned (deadline passed, client gone): the
 * request's Budget. `signal` is read only by an operation that waits (a read in a reader process).
 */
export interface StopSignal {
  readonly signal: AbortSignal;
}

/**
 * The record operations on one table set, inside or outside a transaction: each one's arguments
 * and result. The two forms a store offers (RecordOps, RecordOpsNow) are derived from this table.
 */
export interface RecordOperations {
  insert: { args: [table: string, fields: Row]; result: Row };
  /** The updated row, or null when no row has that id. `updated_at` is set by the store. */
  update: { args: [table: string, id: string, changes: Row]; result: Row | null };
  /** True when a row was deleted. */
  delete: { args: [table: string, id: string]; result: boolean };
  find: { args: [table: string, id: string]; result: Row | null };
  /** `stop` ends a read still running when its request is abandoned (a store that can, SQLite's reader processes). */
  select: { args: [table: string, query: Query, stop?: StopSignal]; result: Row[] };
  count: { args: [table: string, filter: Filter, stop?: StopSignal]; result: number };
}

export type Operation = keyof RecordOperations;

/** The asynchronous form, which every store has: each operation settles with its result; a failure is a rejection. */
export type RecordOps = { [K in Operation]: (...args: RecordOperations[K]['args']) => Promise<RecordOperations[K]['result']> };

/** What an operation of RecordOpsNow answers when it cannot answer at once: ask the asynchronous form. */
export const LATER: unique symbol = Symbol('later');
export type Later = typeof LATER;

/**
 * The synchronous form, which a store that can often answer at once has (SQLite: its connection
 * is in this process): each operation answers its result, or LATER, decided before any statement
 * has run, when it cannot answer at once. A failure is thrown.
 */
export type RecordOpsNow = { [K in Operation]: (...args: RecordOperations[K]['args']) => RecordOperations[K]['result'] | Later };

/** Records on one table set: always the asynchronous form, and `now` when the store has the synchronous one (fixed when it is built). */
export interface Records extends RecordOps {
  readonly now?: RecordOpsNow;
}

/** A transaction in progress: commit or roll back exactly once. */
export interface Transaction extends Records {
  commit(): Promise<void>;
  rollback(): Promise<void>;
}

/** A database holding records. */
export interface RecordStore extends Records {
  /** `sqlite`, `postgres` or `memory`, for `rvm run`'s start line and errors. */
  readonly kind: string;
  /**
   * Brings the database to `tables` under a lock (one process syncs when several start at
   * once): creates missing tables, adds optional or defaulted columns, creates indexes;
   * withholds anything destructive or ambiguous unless `allowDestructive`.
   */
  sync(tables: readonly TableSpec[], options: { allowDestructive: boolean }): Promise<SchemaPlan>;
  /** What sync would do, without doing it (`rvm db diff`). */
  diff(tables: readonly TableSpec[]): Promise<SchemaPlan>;
  /** Starts a transaction; writes in it are serialised with other writers. */
  begin(): Promise<Transaction>;
  close(): Promise<void>;
}

/** The database could not be reached or failed to answer in time: 503 `database_unavailable`. */
export class DatabaseUnavailableError extends Error {
  readonly code = 'database_unavailable';
}

/**
 * Too many expensive reads are running or waiting in this process: 503 `overloaded`, with
 * `Retry-After` (as admission answers), so a flood of slow queries gets its share and no more.
 */
export class StoreOverloadedError extends Error {
  readonly code = 'overloaded';
  constructor(
    message: string,
    readonly retryAfterS: number,
  ) {
    super(message);
  }
}

/** A `@unique` field clashed: 409 `conflict`; `field` names it. */
export class ConflictError extends Error {
  readonly code = 'conflict';
  constructor(
    message: string,
    readonly field: string | null,
  ) {
    super(message);
  }
}

/** The rows of a query would pass the process-wide result budget (`limits.maxResultMemory`): 503 `overloaded`, like any store past its capacity. */
export class ResultMemoryError extends StoreOverloadedError {
  constructor(message: string) {
    // The client waits as admission tells one refused for bodies to.
    super(message, OVERLOADED_RETRY_AFTER_S);
  }
}

/**
 * A value a write cannot store as given, the same on every database: text with NUL or a lone
 * surrogate (it would not come back as written), a text too long for its field's index. The
 * provider answers it as a refused write, 422 `validation_failed` with one detail.
 */
export class UnstorableValueError extends Error {
  readonly code = 'validation_failed';
  constructor(
    readonly field: string,
    readonly rule: string,
    message: string,
  ) {
    super(message);
  }
}

/** A filter, order or cursor that names an unknown field or is malformed: 400 `invalid_query`. */
export class InvalidQueryError extends Error {
  readonly code = 'invalid_query';
}
