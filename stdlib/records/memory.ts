/**
 * The in-memory record store: the reference model of the storage contract (store.ts). It is
 * what the records plugin runs on until the SQLite and PostgreSQL stores land, and the model
 * the property tests compare them with, so it spells the semantics out plainly:
 *
 * - filters: a field compared with null is `is_null`; every other comparison with a null field
 *   is false (as in SQL); text compares by code point (SQLite's BINARY collation, PostgreSQL's
 *   "C"), datetimes by instant; `contains` is a substring of a text or an item of a list.
 * - order: the given keys, then `id` ascending; null sorts first ascending and last descending.
 * - `after`: rows strictly after the cursor's key values under that order; then offset, limit.
 * - writes are serialised (one writer at a time, as `BEGIN IMMEDIATE` does); a transaction
 *   works on private copies of the tables it touches, so nobody sees its writes before commit.
 */
import { ConflictError, InvalidQueryError, type ColumnSpec, type Filter, type FilterOp, type OrderKey, type Query, type RecordOps, type RecordStore, type Row, type SchemaPlan, type StoredValue, type TableSpec, type Transaction } from './store.js';
import { own, put } from './record.js';
import { effectiveOrder } from './cursor.js';
import { isoTimestamp, uuidv7At } from './uuid.js';

/** One table: its spec and its rows by id, in insertion order. */
interface Table {
  spec: TableSpec;
  columns: Map<string, ColumnSpec>;
  rows: Map<string, Row>;
}

/** One writer at a time: each acquire resolves to its release once the previous holder released. */
class WriteLock {
  #tail: Promise<void> = Promise.resolve();

  acquire(): Promise<() => void> {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const previous = this.#tail;
    this.#tail = previous.then(() => held);
    return previous.then(() => release);
  }
}

/** A copy of a row: rows handed out never alias the stored ones. */
function copy<T extends StoredValue | Row>(value: T): T {
  return structuredClone(value);
}

/** The store's own columns, as filters and order see them. */
const SYSTEM_COLUMNS: ReadonlyMap<string, ColumnSpec['type']> = new Map([
  ['id', 'text'],
  ['created_at', 'datetime'],
  ['updated_at', 'datetime'],
]);

/** The operations on a set of tables; the store and a transaction differ only in which tables they see. */
class TableOps implements RecordOps {
  constructor(
    /** The table named `name`, for reading. */
    protected readonly read: (name: string) => Table,
    /** The table named `name`, for writing (a transaction copies it first). */
    protected readonly write: (name: string) => Table,
  ) {}

  async insert(table: string, fields: Row): Promise<Row> {
    const t = this.write(table);
    // The id's millisecond is the creation time, as the SQL stores write it.
    const { id, ms } = uuidv7At();
    const now = isoTimestamp(ms);
    const row: Row = { id };
    for (const column of t.spec.columns) {
      const given = Object.hasOwn(fields, column.name) ? fields[column.name] : undefined;
      put(row, column.name, copy(given === undefined ? (column.default ?? null) : given));
    }
    row.created_at = now;
    row.updated_at = now;
    checkUnique(t, row, null);
    t.rows.set(row.id as string, row);
    return copy(row);
  }

  async update(table: string, id: string, changes: Row): Promise<Row | null> {
    const t = this.write(table);
    const old = t.rows.get(id);
    if (old === undefined) return null;
    const row: Row = { ...old };
    for (const [name, value] of Object.entries(changes)) {
      if (!t.columns.has(name)) throw new InvalidQueryError(`'${name}' is not a field of ${table}`);
      put(row, name, copy(value));
    }
    row.updated_at = isoTimestamp(Date.now());
    checkUnique(t, row, id);
    t.rows.set(id, row);
    return copy(row);
  }

  async delete(table: string, id: string): Promise<boolean> {
    return this.write(table).rows.delete(id);
  }

  async find(table: string, id: string): Promise<Row | null> {
    const row = this.read(table).rows.get(id);
    return row === undefined ? null : copy(row);
  }

  async select(table: string, query: Query): Promise<Row[]> {
    const t = this.read(table);
    const order = effectiveOrder(query.order);
    for (const key of order) typeOf(t, key.field);
    let rows = matching(t, query.filter).sort((a, b) => compareRows(t, order, a, b));
    const after = query.after;
    if (after !== undefined) {
      if (after.length !== order.length) throw new InvalidQueryError('malformed cursor');
      const position: Row = {};
      order.forEach((k, i) => put(position, k.field, after[i]!));
      rows = rows.filter((row) => compareRows(t, order, row, position) > 0);
    }
    return rows.slice(query.offset, query.offset + query.limit).map(copy);
  }

  async count(table: string, filter: Filter): Promise<number> {
    return matching(this.read(table), filter).length;
  }
}

/** The reference store: tables in memory, gone with the process. */
export class MemoryStore extends TableOps implements RecordStore {
  readonly kind = 'memory';
  readonly #tables: Map<string, Table>;
  readonly #lock = new WriteLock();

  constructor() {
    const tables = new Map<string, Table>();
    const get = (name: string): Table => tableNamed(tables, name);
    super(get, get);
    this.#tables = tables;
  }

  // Writes outside a transaction wait for the writer holding the lock, as in SQLite.
  override async insert(table: string, fields: Row): Promise<Row> {
    return this.#exclusive(() => super.insert(table, fields));
  }

  override async update(table: string, id: string, changes: Row): Promise<Row | null> {
    return this.#exclusive(() => super.update(table, id, changes));
  }

  override async delete(table: string, id: string): Promise<boolean> {
    return this.#exclusive(() => super.delete(table, id));
  }

  async #exclusive<T>(work: () => Promise<T>): Promise<T> {
    const release = await this.#lock.acquire();
    try {
      return await work();
    } finally {
      release();
    }
  }

  async sync(tables: readonly TableSpec[], _options: { allowDestructive: boolean }): Promise<SchemaPlan> {
    const plan = await this.diff(tables);
    for (const spec of tables) {
      const existing = this.#tables.get(spec.name);
      const columns = new Map(spec.columns.map((c) => [c.name, c]));
      if (existing === undefined) {
        this.#tables.set(spec.name, { spec, columns, rows: new Map() });
        continue;
      }
      // A column the new spec adds starts as its default (or null) in every stored row.
      for (const c of spec.columns) {
        if (existing.columns.has(c.name)) continue;
        for (const row of existing.rows.values()) put(row, c.name, copy(c.default ?? null));
      }
      existing.spec = spec;
      existing.columns = columns;
    }
    return plan;
  }

  async diff(tables: readonly TableSpec[]): Promise<SchemaPlan> {
    const applied: string[] = [];
    for (const spec of tables) {
      const existing = this.#tables.get(spec.name);
      if (existing === undefined) {
        applied.push(`create table ${spec.name}`);
        continue;
      }
      for (const c of spec.columns) if (!existing.columns.has(c.name)) applied.push(`add column ${spec.name}.${c.name}`);
    }
    // Memory holds nothing worth keeping across a change: nothing is ever withheld.
    return { applied, withheld: [] };
  }

  async begin(): Promise<Transaction> {
    const release = await this.#lock.acquire();
    return new MemoryTransaction(this.#tables, release);
  }

  async close(): Promise<void> {}
}

/** A transaction: private copies of the tables it writes, put in place by commit. */
class MemoryTransaction extends TableOps implements Transaction {
  #done = false;

  constructor(
    private readonly tables: Map<string, Table>,
    private readonly release: () => void,
    private readonly copies = new Map<string, Table>(),
  ) {
    super(
      (name) => copies.get(name) ?? tableNamed(tables, name),
      (name) => {
        let t = copies.get(name);
        if (t === undefined) {
          const base = tableNamed(tables, name);
          t = { spec: base.spec, columns: base.columns, rows: new Map([...base.rows].map(([id, row]) => [id, copy(row)])) };
          copies.set(name, t);
        }
        return t;
      },
    );
  }

  async commit(): Promise<void> {
    this.#finish();
    for (const [name, table] of this.copies) this.tables.set(name, table);
  }

  async rollback(): Promise<void> {
    this.#finish();
  }

  #finish(): void {
    if (this.#done) throw new Error('the transaction has already ended');
    this.#done = true;
    this.release();
  }
}

function tableNamed(tables: ReadonlyMap<string, Table>, name: string): Table {
  const t = tables.get(name);
  if (t === undefined) throw new InvalidQueryError(`no table '${name}' (the type is not synced)`);
  return t;
}

/** The column type of `field`, or InvalidQueryError. */
function typeOf(t: Table, field: string): ColumnSpec['type'] {
  const type = t.columns.get(field)?.type ?? SYSTEM_COLUMNS.get(field);
  if (type === undefined) throw new InvalidQueryError(`'${field}' is not a field of ${t.spec.name}`);
  return type;
}

/** A `@unique` clash of `row` with another row of the table. */
function checkUnique(t: Table, row: Row, self: string | null): void {
  for (const column of t.spec.columns) {
    if (!column.unique) continue;
    const value = own(row, column.name);
    if (value === null) continue;
    for (const [id, other] of t.rows) {
      if (id !== self && equal(own(other, column.name), value)) {
        throw new ConflictError(`another ${t.spec.name} has this ${column.name}`, column.name);
      }
    }
  }
}

function matching(t: Table, filter: Filter): Row[] {
  const tests = Object.entries(filter).flatMap(([field, condition]) => {
    const type = typeOf(t, field);
    const ops =
      condition !== null && typeof condition === 'object' && !Array.isArray(condition) ? Object.entries(condition) : [['eq', condition] as [string, StoredValue]];
    return ops.map(([op, value]) => ({ field, type, op: op as FilterOp, value: value ?? null }));
  });
  const rows: Row[] = [];
  for (const row of t.rows.values()) if (tests.every((c) => holds(c.op, c.type, own(row, c.field), c.value))) rows.push(row);
  return rows;
}

/** One condition on one stored value. */
function holds(op: FilterOp, type: ColumnSpec['type'], a: StoredValue, b: StoredValue): boolean {
  switch (op) {
    case 'is_null':
      return (a === null) === b;
    case 'eq':
      return b === null ? a === null : a !== null && compare(type, a, b) === 0;
    case 'ne':
      return b === null ? a !== null : a !== null && compare(type, a, b) !== 0;
    case 'in':
    case 'not_in': {
      if (a === null || !Array.isArray(b)) return false;
      const found = b.some((x) => x !== null && compare(type, a, x) === 0);
      return op === 'in' ? found : !found;
    }
    case 'contains':
      if (typeof a === 'string') return typeof b === 'string' && a.includes(b);
      return Array.isArray(a) && a.some((x) => equal(x, b));
    case 'starts_with':
      return typeof a === 'string' && typeof b === 'string' && a.startsWith(b);
    default: {
      if (a === null || b === null) return false;
      const c = compare(type, a, b);
      return op === 'gt' ? c > 0 : op === 'gte' ? c >= 0 : op === 'lt' ? c < 0 : c <= 0;
    }
  }
}

/** Orders two non-null values of one column: numbers by value, datetimes by instant, text by code point, false before true. */
function compare(type: ColumnSpec['type'], a: StoredValue, b: StoredValue): number {
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (typeof a === 'string' && typeof b === 'string') {
    if (type === 'datetime') {
      const x = Date.parse(a);
      const y = Date.parse(b);
      if (!Number.isNaN(x) && !Number.isNaN(y) && x !== y) return x < y ? -1 : 1;
      if (!Number.isNaN(x) && !Number.isNaN(y)) return 0;
    }
    return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
  }
  return equal(a, b) ? 0 : JSON.stringify(a) < JSON.stringify(b) ? -1 : 1;
}

/** Rows under a total order; null first ascending, last descending. */
function compareRows(t: Table, order: readonly OrderKey[], a: Row, b: Row): number {
  for (const key of order) {
    const x = own(a, key.field);
    const y = own(b, key.field);
    const c = x === null ? (y === null ? 0 : -1) : y === null ? 1 : compare(typeOf(t, key.field), x, y);
    if (c !== 0) return key.desc ? -c : c;
  }
  return 0;
}

function equal(a: StoredValue, b: StoredValue): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}
