/**
 * The record operations on top of SQL, shared by the SQLite and PostgreSQL stores and by their
 * transactions: each store supplies an Executor (how a statement runs there, and how driver
 * errors become the three coded errors); this class has its input checked (a query by query.ts,
 * a written row by columns.ts), builds the statements, sets ids and timestamps, and turns rows
 * back into JSON data.
 */
import {
  InvalidQueryError,
  ResultMemoryError,
  answerOf,
  andThen,
  type Answer,
  type ChargeMemory,
  type Filter,
  type Query,
  type RecordOps,
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

/** How statements run on one connection (or pool): rows as arrays, or the number of rows changed. */
export interface Executor {
  /**
   * The rows a statement answers, each an array of its columns in order. With `charge`, each row
   * is charged (rowBytes) as it arrives, before the next is read; once refused, no more rows are
   * kept and the statement fails with ResultMemoryError. `stop` ends a read whose request was abandoned.
   */
  rows(statement: Statement, write: boolean, charge?: ChargeMemory, stop?: StopSignal): Answer<unknown[][]>;
  /** The first row a read answers, or undefined (a lookup by key: no list to build). */
  first(statement: Statement, stop?: StopSignal): Answer<unknown[] | undefined>;
  /**
   * Runs a write and answers `answer` of the rows it changed: applied by the executor itself, so
   * a network database settles the statement and its caller's answer in one step.
   */
  run<T>(statement: Statement, answer: (changed: number) => T): Answer<T>;
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

/**
 * RecordOps over one Executor; each answers as its executor does (at once on a free SQLite
 * connection). With `lockReads` (a PostgreSQL transaction), `find` and `select` lock the rows
 * they read (LOCK_ROWS); `count` cannot lock and does not.
 */
export class SqlOps implements RecordOps {
  private readonly lock: string;

  constructor(
    private readonly dialect: Dialect,
    private readonly tables: Tables,
    private readonly executor: Executor,
    lockReads = false,
  ) {
    this.lock = lockReads ? LOCK_ROWS : '';
  }

  private table(name: string): Table {
    const table = this.tables.get(name);
    if (!table) throw new InvalidQueryError(`no record type '${name}' has been synced`);
    return table;
  }

  insert(table: string, fields: Row): Answer<Row> {
    return answerOf(() => {
      const { id, ms } = uuidv7At();
      const t = this.table(table);
      const row = insertedRow(t, fields, id, isoTimestamp(ms));
      return this.executor.run(insertStatement(this.dialect, t, row), () => row);
    });
  }

  update(table: string, id: string, changes: Row): Answer<Row | null> {
    return answerOf(() => {
      const t = this.table(table);
      const key = idOf(id);
      // Changes are refused as such even when no row could have this id.
      const checked = updatedFields(t, changes);
      if (key === null) return null;
      return andThen(this.executor.rows(updateStatement(this.dialect, t, key, checked, isoTimestamp(Date.now())), true), ([raw]) =>
        raw ? decodeRow(this.dialect, t, raw) : null,
      );
    });
  }

  delete(table: string, id: string): Answer<boolean> {
    return answerOf(() => {
      const t = this.table(table);
      const key = idOf(id);
      if (key === null) return false;
      return this.executor.run(deleteStatement(this.dialect, t, key), (changed) => changed > 0);
    });
  }

  find(table: string, id: string): Answer<Row | null> {
    return answerOf(() => {
      const t = this.table(table);
      const key = idOf(id);
      if (key === null) return null;
      return andThen(this.executor.first(findStatement(this.dialect, t, key, this.lock)), (raw) => (raw ? decodeRow(this.dialect, t, raw) : null));
    });
  }

  select(table: string, query: Query, stop?: StopSignal): Answer<Row[]> {
    return answerOf(() => {
      const t = this.table(table);
      return andThen(this.executor.rows(selectStatement(this.dialect, t, checkQuery(t, query), this.lock), false, query.charge, stop), (raws) =>
        raws.map((raw) => decodeRow(this.dialect, t, raw)),
      );
    });
  }

  count(table: string, filter: Filter, stop?: StopSignal): Answer<number> {
    return answerOf(() => {
      const t = this.table(table);
      return andThen(this.executor.first(countStatement(this.dialect, t, checkFilter(t, filter ?? {})), stop), (raw) => Number(raw?.[0] ?? 0));
    });
  }
}

/** RecordOps handed on to `ops`: a store and its transactions differ only in where their statements run. */
export abstract class DelegatedOps implements RecordOps {
  protected abstract readonly ops: RecordOps;

  insert(table: string, fields: Row): Answer<Row> {
    return this.ops.insert(table, fields);
  }
  update(table: string, id: string, changes: Row): Answer<Row | null> {
    return this.ops.update(table, id, changes);
  }
  delete(table: string, id: string): Answer<boolean> {
    return this.ops.delete(table, id);
  }
  find(table: string, id: string): Answer<Row | null> {
    return this.ops.find(table, id);
  }
  select(table: string, query: Query, stop?: StopSignal): Answer<Row[]> {
    return this.ops.select(table, query, stop);
  }
  count(table: string, filter: Filter, stop?: StopSignal): Answer<number> {
    return this.ops.count(table, filter, stop);
  }
}
