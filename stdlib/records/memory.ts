/**
 * The in-memory record store: the reference model of the storage contract (store.ts), and the
 * model property tests compare the databases with. Every input is checked by the same code as
 * the SQL stores' (a query by query.ts, a written row by columns.ts, the schema planner of
 * schema.ts, ids and cursors of uuid.ts and cursor.ts), so it refuses, names and plans exactly as
 * they do; it evaluates the checked query, and what it answers is spelled out plainly here:
 *
 * - filters: a field compared with null is `is_null`; every other comparison with a null field
 *   is false (as in SQL), `not_in: []` matches every row; text compares by code point (SQLite's
 *   BINARY collation, PostgreSQL's "C"), date-times by instant (their canonical UTC text);
 *   `contains` is a substring of a text or an item of a list.
 * - order: the effective order (cursor.ts), id last; null sorts first ascending, last descending.
 * - `after`: rows strictly after the cursor's key values under that order; then offset, limit.
 * - writes are serialised (one writer at a time, as `BEGIN IMMEDIATE` does); a transaction
 *   works on private copies of the tables it touches, so nobody sees its writes before commit.
 *
 * Both forms of the operations: the synchronous one answers a read at once, and a write at once
 * unless a writer (a transaction) holds the lock, then LATER; the asynchronous one waits its turn.
 */
import {
  ConflictError,
  InvalidQueryError,
  own,
  put,
  LATER,
  type Filter,
  type FilterOp,
  type Later,
  type Query,
  type RecordOpsNow,
  type RecordStore,
  type Row,
  type SchemaPlan,
  type StoredValue,
  type TableSpec,
  type Transaction,
} from './store.js';
import { insertedRow, tableOf, updatedFields, type StoredType, type Table } from './columns.js';
import { checkFilter, checkQuery, type Condition, type OrderColumn } from './query.js';
import { indexNames, planSchema, syncSteps, type LiveSchema } from './schema.js';
import { resultTooLarge } from './ops.js';
import { rowBytes } from './row-bytes.js';
import { sqliteDialect } from './sqlite.js';
import { isoTimestamp, uuidv7At, UUID_PATTERN } from './uuid.js';

/** One table: its declared shape as last synced, its shape as stored (for the schema planner), its rows by id in insertion order. */
interface MemoryTable {
  table: Table;
  columns: Map<string, StoredType>;
  indexes: Set<string>;
  rows: Map<string, Row>;
}

/** One writer at a time: each acquire resolves to its release once the previous holder released. */
class WriteLock {
  #tail: Promise<void> = Promise.resolve();
  /** Writers holding the lock or waiting for it. */
  #writers = 0;

  acquire(): Promise<() => void> {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const previous = this.#tail;
    this.#tail = previous.then(() => held);
    this.#writers++;
    return previous.then(() => () => {
      this.#writers--;
      release();
    });
  }

  /** Whether nobody holds the lock or waits for it: a write may run at once (it ends before anyone else can ask). */
  get free(): boolean {
    return this.#writers === 0;
  }
}

/** A copy of a row: rows handed out never alias the stored ones. */
function copy<T extends StoredValue | Row>(value: T): T {
  return structuredClone(value);
}

/** An id as the stores keep it (lowercase), or null when it cannot be one. */
function idOf(id: unknown): string | null {
  return typeof id === 'string' && UUID_PATTERN.test(id) ? id.toLowerCase() : null;
}

/**
 * The operations on a set of tables, each answering at once; the store and a transaction differ
 * only in which tables they see.
 */
class TableOps implements RecordOpsNow {
  constructor(
    /** The table named `name`, for reading. */
    protected readonly read: (name: string) => MemoryTable,
    /** The table named `name`, for writing (a transaction copies it first). */
    protected readonly write: (name: string) => MemoryTable,
  ) {}

  insert(table: string, fields: Row): Row {
    const t = this.write(table);
    // The id's millisecond is the creation time, as the SQL stores write it.
    const { id, ms } = uuidv7At();
    const row = insertedRow(t.table, fields, id, isoTimestamp(ms));
    checkUnique(t, row, null);
    t.rows.set(id, row);
    return copy(row);
  }

  update(table: string, id: string, changes: Row): Row | null {
    const t = this.write(table);
    const key = idOf(id);
    // Changes are refused as such even when no row has this id, as the SQL stores refuse them.
    const checked = updatedFields(t.table, changes);
    const old = key === null ? undefined : t.rows.get(key);
    if (old === undefined) return null;
    const row: Row = { ...old };
    for (const [name, value] of Object.entries(checked)) put(row, name, value);
    row.updated_at = isoTimestamp(Date.now());
    checkUnique(t, row, key);
    t.rows.set(key!, row);
    return copy(row);
  }

  delete(table: string, id: string): boolean {
    const t = this.write(table);
    const key = idOf(id);
    return key !== null && t.rows.delete(key);
  }

  find(table: string, id: string): Row | null {
    const t = this.read(table);
    const key = idOf(id);
    const row = key === null ? undefined : t.rows.get(key);
    return row === undefined ? null : copy(row);
  }

  select(table: string, query: Query): Row[] {
    const t = this.read(table);
    const { conditions, order, after, limit, offset } = checkQuery(t.table, query);
    let rows = matching(t, conditions).sort((a, b) => compareRows(order, a, b));
    if (after !== null) {
      const position: Row = {};
      order.forEach((k, i) => put(position, k.field.name, after[i] ?? null));
      rows = rows.filter((row) => compareRows(order, row, position) > 0);
    }
    const page = rows.slice(offset, offset + limit);
    const charge = query.charge;
    if (charge !== undefined) for (const row of page) if (!charge(rowBytes(Object.values(row)))) throw resultTooLarge();
    return page.map(copy);
  }

  count(table: string, filter: Filter): number {
    const t = this.read(table);
    return matching(t, checkFilter(t.table, filter ?? {})).length;
  }
}

/** The reference store: tables in memory, gone with the process. */
export class MemoryStore implements RecordStore {
  readonly kind = 'memory';
  readonly now: RecordOpsNow;
  readonly #tables = new Map<string, MemoryTable>();
  readonly #lock = new WriteLock();
  readonly #ops: TableOps;

  constructor() {
    const get = (name: string): MemoryTable => tableNamed(this.#tables, name);
    const ops = new TableOps(get, get);
    this.#ops = ops;
    // A write outside a transaction runs at once when no writer (a transaction) holds the lock or
    // waits for it; else LATER, and the asynchronous form waits its turn, as in SQLite.
    const whenFree = <T>(write: () => T): T | Later => (this.#lock.free ? write() : LATER);
    this.now = {
      insert: (table, fields) => whenFree(() => ops.insert(table, fields)),
      update: (table, id, changes) => whenFree(() => ops.update(table, id, changes)),
      delete: (table, id) => whenFree(() => ops.delete(table, id)),
      find: (table, id) => ops.find(table, id),
      select: (table, query) => ops.select(table, query),
      count: (table, filter) => ops.count(table, filter),
    };
  }

  insert(table: string, fields: Row): Promise<Row> {
    return this.#exclusive(() => this.#ops.insert(table, fields));
  }
  update(table: string, id: string, changes: Row): Promise<Row | null> {
    return this.#exclusive(() => this.#ops.update(table, id, changes));
  }
  delete(table: string, id: string): Promise<boolean> {
    return this.#exclusive(() => this.#ops.delete(table, id));
  }
  async find(table: string, id: string): Promise<Row | null> {
    return this.#ops.find(table, id);
  }
  async select(table: string, query: Query): Promise<Row[]> {
    return this.#ops.select(table, query);
  }
  async count(table: string, filter: Filter): Promise<number> {
    return this.#ops.count(table, filter);
  }

  async #exclusive<T>(work: () => T): Promise<T> {
    const release = await this.#lock.acquire();
    try {
      return work();
    } finally {
      release();
    }
  }

  /** The stored shape of the declared tables that exist, as the schema planner reads a database. */
  #live(specs: readonly TableSpec[]): LiveSchema {
    const live: LiveSchema = new Map();
    for (const spec of specs) {
      const t = this.#tables.get(spec.name);
      if (t !== undefined) live.set(spec.name, { columns: new Map(t.columns), indexes: new Set(t.indexes), hasRows: t.rows.size > 0 });
    }
    return live;
  }

  async sync(specs: readonly TableSpec[], options: { allowDestructive: boolean }): Promise<SchemaPlan> {
    return this.#exclusive(() => {
      const checked = specs.map(tableOf);
      const { run, withheld } = syncSteps(planSchema(sqliteDialect, specs, this.#live(specs)), options.allowDestructive);
      // A table with withheld changes keeps the shape it had: its declared one does not exist yet.
      for (const table of checked) if (!withheld.some((c) => c.table === table.name)) this.#reshape(table);
      return { applied: run.map((s) => s.description), withheld };
    });
  }

  /** Brings a table to `table`: a column that is new or changed type holds its default (or null) in every row, as ADD COLUMN leaves it. */
  #reshape(table: Table): void {
    const existing = this.#tables.get(table.name);
    const columns = new Map<string, StoredType>([...table.fields.values()].map((f) => [f.name, f.type]));
    const indexes = indexNames(table);
    const rows = new Map<string, Row>();
    for (const [id, old] of existing?.rows ?? []) {
      const row: Row = {};
      for (const name of table.order) {
        const field = table.fields.get(name)!;
        const kept = existing!.columns.get(name) === field.type;
        put(row, name, kept ? own(old, name) : copy(field.spec?.default ?? null));
      }
      rows.set(id, row);
    }
    this.#tables.set(table.name, { table, columns, indexes, rows });
  }

  async diff(specs: readonly TableSpec[]): Promise<SchemaPlan> {
    const steps = planSchema(sqliteDialect, specs, this.#live(specs));
    return { applied: steps.apply.map((s) => s.description), withheld: steps.withheld };
  }

  async begin(): Promise<Transaction> {
    const release = await this.#lock.acquire();
    return new MemoryTransaction(this.#tables, release);
  }

  async close(): Promise<void> {}
}

/** A transaction: private copies of the tables it writes, put in place by commit. It holds the write lock: its writes answer at once. */
class MemoryTransaction implements Transaction {
  readonly now: TableOps;
  #done = false;

  constructor(
    private readonly tables: Map<string, MemoryTable>,
    private readonly release: () => void,
    private readonly copies = new Map<string, MemoryTable>(),
  ) {
    const open = (): void => {
      if (this.#done) throw new Error('the transaction has already finished');
    };
    this.now = new TableOps(
      (name) => {
        open();
        return copies.get(name) ?? tableNamed(tables, name);
      },
      (name) => {
        open();
        let t = copies.get(name);
        if (t === undefined) {
          const base = tableNamed(tables, name);
          t = { ...base, rows: new Map([...base.rows].map(([id, row]) => [id, copy(row)])) };
          copies.set(name, t);
        }
        return t;
      },
    );
  }

  async insert(table: string, fields: Row): Promise<Row> {
    return this.now.insert(table, fields);
  }
  async update(table: string, id: string, changes: Row): Promise<Row | null> {
    return this.now.update(table, id, changes);
  }
  async delete(table: string, id: string): Promise<boolean> {
    return this.now.delete(table, id);
  }
  async find(table: string, id: string): Promise<Row | null> {
    return this.now.find(table, id);
  }
  async select(table: string, query: Query): Promise<Row[]> {
    return this.now.select(table, query);
  }
  async count(table: string, filter: Filter): Promise<number> {
    return this.now.count(table, filter);
  }

  async commit(): Promise<void> {
    this.#finish();
    for (const [name, table] of this.copies) this.tables.set(name, table);
  }

  async rollback(): Promise<void> {
    this.#finish();
  }

  #finish(): void {
    if (this.#done) throw new Error('the transaction has already finished');
    this.#done = true;
    this.release();
  }
}

function tableNamed(tables: ReadonlyMap<string, MemoryTable>, name: string): MemoryTable {
  const t = tables.get(name);
  if (t === undefined) throw new InvalidQueryError(`no record type '${name}' has been synced`);
  return t;
}

/** A `@unique` clash of `row` with another row of the table. */
function checkUnique(t: MemoryTable, row: Row, self: string | null): void {
  for (const column of t.table.spec.columns) {
    if (!column.unique) continue;
    const value = own(row, column.name);
    if (value === null) continue;
    for (const [id, other] of t.rows) {
      if (id !== self && compareValues(own(other, column.name), value) === 0) {
        throw new ConflictError(`a record with this ${column.name} already exists`, column.name);
      }
    }
  }
}

function matching(t: MemoryTable, conditions: readonly Condition[]): Row[] {
  return [...t.rows.values()].filter((row) => conditions.every((c) => holds(c.op, own(row, c.field.name), c.value)));
}

/** One condition on one stored value. */
function holds(op: FilterOp, a: StoredValue, b: StoredValue): boolean {
  switch (op) {
    case 'is_null':
      return (a === null) === b;
    case 'eq':
      return b === null ? a === null : a !== null && compareValues(a, b) === 0;
    case 'ne':
      return b === null ? a !== null : a !== null && compareValues(a, b) !== 0;
    case 'in':
      return a !== null && (b as StoredValue[]).some((x) => compareValues(a, x) === 0);
    case 'not_in':
      // NOT (x IN ()) holds for every row, null ones too; otherwise a null field compares false.
      return (b as StoredValue[]).length === 0 || (a !== null && !(b as StoredValue[]).some((x) => compareValues(a, x) === 0));
    case 'contains':
      if (typeof a === 'string') return typeof b === 'string' && a.includes(b);
      return Array.isArray(a) && a.some((x) => typeof x === typeof b && x === b);
    case 'starts_with':
      return typeof a === 'string' && typeof b === 'string' && a.startsWith(b);
    default: {
      if (a === null || b === null) return false;
      const c = compareValues(a, b);
      return op === 'gt' ? c > 0 : op === 'gte' ? c >= 0 : op === 'lt' ? c < 0 : c <= 0;
    }
  }
}

/**
 * Orders two stored values of one column: null first, numbers by value, false before true, text
 * by code point (canonical date-times and dates too, so by instant and by day).
 */
function compareValues(a: StoredValue, b: StoredValue): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? -1 : 1;
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (typeof a === 'string' && typeof b === 'string') return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
  const x = JSON.stringify(a);
  const y = JSON.stringify(b);
  return x === y ? 0 : x < y ? -1 : 1;
}

/** Rows under an effective order; null first ascending, last descending. */
function compareRows(order: readonly OrderColumn[], a: Row, b: Row): number {
  for (const key of order) {
    const c = compareValues(own(a, key.field.name), own(b, key.field.name));
    if (c !== 0) return key.desc ? -c : c;
  }
  return 0;
}
