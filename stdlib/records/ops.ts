/**
 * The record operations on top of SQL, shared by the SQLite and PostgreSQL stores and by their
 * transactions. SqlPlans makes each operation a plan: its input checked (a query by query.ts, a
 * written row by columns.ts), its statement built, ids and timestamps set, and how the raw result
 * becomes JSON data. Each store supplies an Executor, which runs a plan's statement there (and
 * makes driver errors the three coded errors): at once (`now`, SQLite) or later (`later`, both).
 * The operations of both forms are derived from the plans and an executor (laterOps, nowOps).
 */
import {
  InvalidQueryError,
  ResultMemoryError,
  type ChargeMemory,
  type Filter,
  type Later,
  type Operation,
  type Query,
  type RecordOperations,
  type RecordOps,
  type RecordOpsNow,
  type Row,
  type StopSignal,
} from './store.js';
import { insertedRow, updatedFields, type Table } from './columns.js';
import { checkFilter, checkQuery } from './query.js';
import {
  LOCK_ROWS,
  countStatement,
  decodeRow,
  deleteStatement,
  findStatement,
  insertStatement,
  selectStatement,
  updateStatement,
  type Dialect,
  type Statement,
} from './sql.js';
import { isoTimestamp, uuidv7At, UUID_PATTERN } from './uuid.js';
import { rowBytes } from './row-bytes.js';

/**
 * A statement to run and how its raw result becomes the operation's: `rows` answers every row
 * (each an array of its columns in order; a `write` changes rows too); with `charge`, each row is
 * charged (rowBytes) as it arrives, before the next is read, and once refused no more are kept and
 * the statement fails with ResultMemoryError; `stop` ends a read whose request was abandoned.
 * `first` answers the first row or undefined (a lookup by key: no list to build); `changes` the
 * number of rows a write changed.
 */
export type StatementPlan<T> =
  | {
      readonly how: 'rows';
      readonly statement: Statement;
      readonly write: boolean;
      readonly charge?: ChargeMemory;
      readonly stop?: StopSignal;
      readonly answer: (rows: unknown[][]) => T;
    }
  | { readonly how: 'first'; readonly statement: Statement; readonly stop?: StopSignal; readonly answer: (row: unknown[] | undefined) => T }
  | { readonly how: 'changes'; readonly statement: Statement; readonly answer: (changed: number) => T };

/** An operation planned: a statement to run, or its result known without one (an id that cannot be one). */
export type Plan<T> = StatementPlan<T> | { readonly how: 'known'; readonly result: T };

/** How plans run on one connection (or pool), driver errors made the store's coded errors. */
export interface Executor {
  /**
   * The plan's result at once, or LATER when the statement cannot run at once (it has not run):
   * `later` then answers it. Failures are thrown. Absent on a database that always answers later.
   */
  readonly now?: <T>(plan: StatementPlan<T>) => T | Later;
  /** The plan's result once its statement has run. */
  readonly later: <T>(plan: StatementPlan<T>) => Promise<T>;
}

/** The error of a query whose rows the result budget refused. */
export function resultTooLarge(): ResultMemoryError {
  return new ResultMemoryError('query results in memory would pass limits.maxResultMemory');
}

/** The rows of `rows` (a driver's row iterator), each charged before it is kept; stops reading at the first refusal. */
export function chargedRows(rows: Iterable<unknown[]>, charge: ChargeMemory): unknown[][] {
  const kept: unknown[][] = [];
  // Leaving the loop by the throw closes the iterator: the statement stops stepping.
  for (const raw of rows) {
    if (!charge(rowBytes(raw))) throw resultTooLarge();
    kept.push(raw);
  }
  return kept;
}

/** The declared tables a store knows, by name (set by sync). */
export type Tables = Map<string, Table>;

/** An id as the store keeps it (lowercase), or null when it cannot be one. */
function idOf(id: unknown): string | null {
  return typeof id === 'string' && UUID_PATTERN.test(id) ? id.toLowerCase() : null;
}

/** Each operation as a plan. */
type RecordPlans = { [K in Operation]: (...args: RecordOperations[K]['args']) => Plan<RecordOperations[K]['result']> };

/**
 * The plans of the record operations on a store's tables. With `lockReads` (a PostgreSQL
 * transaction), `find` and `select` lock the rows they read (LOCK_ROWS); `count` cannot lock and
 * does not. Input errors are thrown as the plan is made, before any statement runs.
 */
export class SqlPlans implements RecordPlans {
  private readonly lock: string;

  constructor(
    private readonly dialect: Dialect,
    private readonly tables: Tables,
    lockReads = false,
  ) {
    this.lock = lockReads ? LOCK_ROWS : '';
  }

  private table(name: string): Table {
    const table = this.tables.get(name);
    if (!table) throw new InvalidQueryError(`no record type '${name}' has been synced`);
    return table;
  }

  insert(table: string, fields: Row): Plan<Row> {
    const { id, ms } = uuidv7At();
    const t = this.table(table);
    const row = insertedRow(t, fields, id, isoTimestamp(ms));
    return { how: 'changes', statement: insertStatement(this.dialect, t, row), answer: () => row };
  }

  update(table: string, id: string, changes: Row): Plan<Row | null> {
    const t = this.table(table);
    const key = idOf(id);
    // Changes are refused as such even when no row could have this id.
    const checked = updatedFields(t, changes);
    if (key === null) return { how: 'known', result: null };
    return {
      how: 'rows',
      statement: updateStatement(this.dialect, t, key, checked, isoTimestamp(Date.now())),
      write: true,
      answer: ([raw]) => (raw ? decodeRow(this.dialect, t, raw) : null),
    };
  }

  delete(table: string, id: string): Plan<boolean> {
    const t = this.table(table);
    const key = idOf(id);
    if (key === null) return { how: 'known', result: false };
    return { how: 'changes', statement: deleteStatement(this.dialect, t, key), answer: (changed) => changed > 0 };
  }

  find(table: string, id: string): Plan<Row | null> {
    const t = this.table(table);
    const key = idOf(id);
    if (key === null) return { how: 'known', result: null };
    return { how: 'first', statement: findStatement(this.dialect, t, key, this.lock), answer: (raw) => (raw ? decodeRow(this.dialect, t, raw) : null) };
  }

  select(table: string, query: Query, stop?: StopSignal): Plan<Row[]> {
    const t = this.table(table);
    return {
      how: 'rows',
      statement: selectStatement(this.dialect, t, checkQuery(t, query), this.lock),
      write: false,
      charge: query.charge,
      stop,
      answer: (raws) => raws.map((raw) => decodeRow(this.dialect, t, raw)),
    };
  }

  count(table: string, filter: Filter, stop?: StopSignal): Plan<number> {
    const t = this.table(table);
    return { how: 'first', statement: countStatement(this.dialect, t, checkFilter(t, filter ?? {})), stop, answer: (raw) => Number(raw?.[0] ?? 0) };
  }
}

/** The result of the plan `make` makes, once run by `executor`; anything thrown on the way is the rejection (one failure path). */
function later<T>(executor: Executor, make: () => Plan<T>): Promise<T> {
  try {
    const plan = make();
    return plan.how === 'known' ? Promise.resolve(plan.result) : executor.later(plan);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** The asynchronous form of the operations: `plans` run by `executor.later`. */
export function laterOps(plans: SqlPlans, executor: Executor): RecordOps {
  return {
    insert: (table, fields) => later(executor, () => plans.insert(table, fields)),
    update: (table, id, changes) => later(executor, () => plans.update(table, id, changes)),
    delete: (table, id) => later(executor, () => plans.delete(table, id)),
    find: (table, id) => later(executor, () => plans.find(table, id)),
    select: (table, query, stop) => later(executor, () => plans.select(table, query, stop)),
    count: (table, filter, stop) => later(executor, () => plans.count(table, filter, stop)),
  };
}

/** The synchronous form of the operations: `plans` run by `now`. */
export function nowOps(plans: SqlPlans, now: NonNullable<Executor['now']>): RecordOpsNow {
  const at = <T>(plan: Plan<T>): T | Later => (plan.how === 'known' ? plan.result : now(plan));
  return {
    insert: (table, fields) => at(plans.insert(table, fields)),
    update: (table, id, changes) => at(plans.update(table, id, changes)),
    delete: (table, id) => at(plans.delete(table, id)),
    find: (table, id) => at(plans.find(table, id)),
    select: (table, query, stop) => at(plans.select(table, query, stop)),
    count: (table, filter, stop) => at(plans.count(table, filter, stop)),
  };
}

/** RecordOps handed on to `ops`: a store and its transactions differ only in where their statements run. */
export abstract class DelegatedOps implements RecordOps {
  protected abstract readonly ops: RecordOps;

  insert(table: string, fields: Row): Promise<Row> {
    return this.ops.insert(table, fields);
  }
  update(table: string, id: string, changes: Row): Promise<Row | null> {
    return this.ops.update(table, id, changes);
  }
  delete(table: string, id: string): Promise<boolean> {
    return this.ops.delete(table, id);
  }
  find(table: string, id: string): Promise<Row | null> {
    return this.ops.find(table, id);
  }
  select(table: string, query: Query, stop?: StopSignal): Promise<Row[]> {
    return this.ops.select(table, query, stop);
  }
  count(table: string, filter: Filter, stop?: StopSignal): Promise<number> {
    return this.ops.count(table, filter, stop);
  }
}
