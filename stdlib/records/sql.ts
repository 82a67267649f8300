/**
 * SQL for records, shared by the SQLite and PostgreSQL stores: a Dialect holds what differs
 * (placeholders, column types, how values are bound and read back, list membership), this module
 * the rest. Every name is checked against the table before any SQL is built and written quoted;
 * every value is checked against its field's type and bound as a parameter. The SQL text of a
 * statement depends only on the query's shape (fields, operators, which cursor values are null),
 * never on its values, so a store can prepare each shape once.
 */
import { InvalidQueryError, put, MAX_QUERY_ROWS, type Filter, type FilterOp, type OrderKey, type Query, type Row, type StoredValue } from './store.js';
import { checkStorableText, checkValue, clip, fieldOf, hint, holdsNoNull, type Field, type FieldType, type Table } from './columns.js';
import { effectiveOrder } from './cursor.js';

/** What differs between SQL databases. */
export interface Dialect {
  readonly name: 'sqlite' | 'postgres';
  /** The placeholder of the n-th parameter (1-based). */
  param(n: number): string;
  /** The column type (with collation) a field is created with. */
  columnType(type: FieldType): string;
  /** A checked, canonical value as the driver binds it. */
  encode(type: FieldType, value: StoredValue): unknown;
  /** A value as the driver returns it, back to JSON data. */
  decode(type: FieldType, raw: unknown): StoredValue;
  /** `column IN (the values bound at param)`, and how that list is bound. */
  inList(column: string, param: string, type: FieldType): string;
  encodeList(type: FieldType, values: StoredValue[]): unknown;
  /** A list column holds a scalar equal to the needle bound at `param`. */
  listContains(column: string, param: string, needle: 'text' | 'number' | 'bool'): string;
  encodeNeedle(needle: string | number | boolean): unknown;
  /** A constant in DDL (a `@default`): declared values only, never request data. */
  literal(type: FieldType, value: StoredValue): string;
}

/** A statement: its text (also its shape) and the values bound to it. */
export interface Statement {
  sql: string;
  params: unknown[];
  /** A SELECT's LIMIT: the most rows it answers (how a store may read them). */
  limit?: number;
  /**
   * The most rows a read walks when its plan is an index seek: limit + offset (1 for a lookup
   * by id). Absent when nothing bounds it (a count). The SQLite store runs a read on its event
   * loop only when this is small.
   */
  reach?: number;
}

/** The most values of one `in`/`not_in` list: beyond that a query is a bulk export, not a filter. */
export const MAX_IN_VALUES = 1000;
/** The largest offset: deep offsets scan and discard rows; `page` with a cursor is the way through a big table. */
export const MAX_OFFSET = 1_000_000;

/** Every filter operator, in the order of spec/plugins/records.md. */
export const FILTER_OPS: readonly FilterOp[] = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'not_in', 'contains', 'starts_with', 'is_null'];

const COMPARE: Record<string, string> = { gt: '>', gte: '>=', lt: '<', lte: '<=' };

/** A name quoted for SQL (both dialects quote with `"`). */
export function quote(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

class Params {
  readonly values: unknown[] = [];
  constructor(private readonly dialect: Dialect) {}
  add(value: unknown): string {
    this.values.push(value);
    return this.dialect.param(this.values.length);
  }
}

function isPlainObject(value: unknown): value is Record<string, StoredValue> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function scalarOnly(field: Field, op: string): void {
  if (field.type === 'list' || field.type === 'object') throw new InvalidQueryError(`operator '${op}' does not apply to ${field.type} field '${field.name}'`);
}

function nonNull(field: Field, op: string, value: StoredValue): StoredValue {
  if (value === null) throw new InvalidQueryError(`operator '${op}' of field '${field.name}' needs a value, not null`);
  return checkValue(field.type, value, field.name);
}

/** Escapes `%`, `_` and the escape character itself for `LIKE … ESCAPE '\'`. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

function condition(dialect: Dialect, field: Field, op: FilterOp, value: StoredValue, params: Params): string {
  const column = quote(field.name);
  switch (op) {
    case 'eq':
    case 'ne':
      scalarOnly(field, op);
      if (value === null) return `${column} IS ${op === 'eq' ? '' : 'NOT '}NULL`;
      return `${column} ${op === 'eq' ? '=' : '<>'} ${params.add(dialect.encode(field.type, checkValue(field.type, value, field.name)))}`;
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      scalarOnly(field, op);
      return `${column} ${COMPARE[op]} ${params.add(dialect.encode(field.type, nonNull(field, op, value)))}`;
    case 'in':
    case 'not_in': {
      scalarOnly(field, op);
      if (!Array.isArray(value)) throw new InvalidQueryError(`operator '${op}' of field '${field.name}' needs a list`);
      if (value.length > MAX_IN_VALUES) throw new InvalidQueryError(`operator '${op}' of field '${field.name}' takes at most ${MAX_IN_VALUES} values`);
      const values = value.map((v) => nonNull(field, op, v));
      const sql = dialect.inList(column, params.add(dialect.encodeList(field.type, values)), field.type);
      return op === 'in' ? sql : `NOT (${sql})`;
    }
    case 'contains':
      if (field.type === 'text') {
        const text = nonNull(field, op, value) as string;
        return `${column} LIKE ${params.add(`%${escapeLike(text)}%`)} ESCAPE '\\'`;
      }
      if (field.type === 'list') {
        const needle = typeof value === 'string' ? 'text' : typeof value === 'number' ? 'number' : typeof value === 'boolean' ? 'bool' : null;
        if (needle === null) throw new InvalidQueryError(`operator 'contains' of list field '${field.name}' needs a text, number or bool`);
        checkValue(needle === 'text' ? 'text' : needle === 'number' ? 'number' : 'bool', value, field.name);
        return dialect.listContains(column, params.add(dialect.encodeNeedle(value as string | number | boolean)), needle);
      }
      throw new InvalidQueryError(`operator 'contains' applies to text and list fields, not ${field.type} field '${field.name}'`);
    case 'starts_with': {
      if (field.type !== 'text') throw new InvalidQueryError(`operator 'starts_with' applies to text fields, not ${field.type} field '${field.name}'`);
      const text = nonNull(field, op, value) as string;
      return `${column} LIKE ${params.add(`${escapeLike(text)}%`)} ESCAPE '\\'`;
    }
    case 'is_null':
      if (typeof value !== 'boolean') throw new InvalidQueryError(`operator 'is_null' of field '${field.name}' needs true or false`);
      return `${column} IS ${value ? '' : 'NOT '}NULL`;
  }
}

/** The conditions of a filter (all must hold), checked against the table. */
function filterConditions(dialect: Dialect, table: Table, filter: Filter, params: Params): string[] {
  if (!isPlainObject(filter)) throw new InvalidQueryError('a filter is an object of field → value or operators');
  const out: string[] = [];
  for (const [name, cond] of Object.entries(filter)) {
    const field = fieldOf(table, name);
    if (!isPlainObject(cond)) {
      out.push(condition(dialect, field, 'eq', cond, params));
      continue;
    }
    for (const [op, value] of Object.entries(cond)) {
      if (!(FILTER_OPS as readonly string[]).includes(op)) {
        throw new InvalidQueryError(`unknown operator '${clip(op)}' on field '${field.name}'${hint(op, FILTER_OPS)}`);
      }
      out.push(condition(dialect, field, op as FilterOp, value as StoredValue, params));
    }
  }
  return out;
}

/** The order keys checked against the table (list and object fields have no order). */
function checkedOrder(table: Table, order: readonly OrderKey[]): { field: Field; desc: boolean }[] {
  if (!Array.isArray(order)) throw new InvalidQueryError('order is a list of keys');
  for (const key of order) {
    if (typeof key !== 'object' || key === null || typeof key.field !== 'string') throw new InvalidQueryError('an order key names a field');
  }
  return effectiveOrder(order).map((key) => {
    const field = fieldOf(table, key.field);
    if (field.type === 'list' || field.type === 'object') throw new InvalidQueryError(`${field.type} field '${field.name}' cannot order a query`);
    return { field, desc: key.desc };
  });
}

/**
 * Rows after the cursor position `after` in `order`: the lexicographic comparison spelled out
 * key by key, because keys may mix directions and hold nulls (sorted first ascending, last
 * descending, on both databases).
 */
function keyset(dialect: Dialect, order: { field: Field; desc: boolean }[], after: StoredValue[], params: Params): string {
  if (!Array.isArray(after) || after.length !== order.length) throw new InvalidQueryError('invalid cursor: it does not fit this order');
  const values = order.map((key, i) => (after[i] === null && key.field.name !== 'id' ? null : checkValue(key.field.type, after[i]!, key.field.name)));
  // A bound on the first key alone, implied by the comparison below, that an index can seek to:
  // without it the OR of the comparison scans from the first row of the order to the cursor, and
  // page 10,000 costs 10,000 pages. Descending, nulls come after every value, so only a column
  // that holds no null (id, created_at, updated_at) takes the bound.
  const first = order[0]!;
  const seek =
    values[0] !== null && (!first.desc || holdsNoNull(first.field))
      ? `${quote(first.field.name)} ${first.desc ? '<=' : '>='} ${params.add(dialect.encode(first.field.type, values[0]!))} AND `
      : '';
  const disjuncts: string[] = [];
  for (let i = 0; i < order.length; i++) {
    const { field, desc } = order[i]!;
    const column = quote(field.name);
    const value = values[i]!;
    // Nothing sorts after null in a descending key (nulls last): this disjunct is empty.
    if (value === null && desc) continue;
    // Parameters are numbered in text order (SQLite's `?` are positional), so the equal prefix binds first.
    const equal = order.slice(0, i).map((key, j) => {
      const c = quote(key.field.name);
      const v = values[j]!;
      return v === null ? `${c} IS NULL` : `${c} = ${params.add(dialect.encode(key.field.type, v))}`;
    });
    let beyond: string;
    if (value === null) beyond = `${column} IS NOT NULL`;
    else {
      const p = params.add(dialect.encode(field.type, value));
      beyond = desc ? `(${column} < ${p} OR ${column} IS NULL)` : `${column} > ${p}`;
    }
    disjuncts.push([...equal, beyond].join(' AND '));
  }
  return `(${seek}(${disjuncts.map((d) => `(${d})`).join(' OR ')}))`;
}

/**
 * One order key's direction. Nulls sort first ascending and last descending on both databases
 * (SQLite's default, spelled out for PostgreSQL, whose default is the opposite). A column that
 * holds no null (id, created_at, updated_at) is left without the clause: the order is the same,
 * and PostgreSQL can then walk an index backwards for a descending key — with `DESC NULLS LAST`
 * it sorted every matching row instead (the showcase's newest-first listing of one role sorted
 * 1,500 rows a request, 0.52× Fastify's req/s on 2026-11-28).
 */
function direction(field: Field, desc: boolean): string {
  if (holdsNoNull(field)) return desc ? 'DESC' : 'ASC';
  return desc ? 'DESC NULLS LAST' : 'ASC NULLS FIRST';
}

function where(conditions: string[]): string {
  return conditions.length === 0 ? '' : ` WHERE ${conditions.join(' AND ')}`;
}

/** The SQL text of a table that never changes: worked out once per table, not per statement. */
interface TableText {
  /** The quoted table name. */
  name: string;
  /**
   * The quoted columns in row order: what INSERT writes and SELECT or RETURNING read. Drivers
   * answer reads as arrays, by position (never objects built by assignment, where a column named
   * `__proto__` would set the row's prototype), and decodeRow maps them back to fields.
   */
  columns: string;
  /** Each column's field type, in row order. */
  types: FieldType[];
  /** The INSERT of a whole row and the SELECT by id, by dialect name (and lock): the same text for every call. */
  insert: Record<string, string>;
  find: Record<string, string>;
}

const tableTexts = new WeakMap<Table, TableText>();

function textOf(table: Table): TableText {
  let text = tableTexts.get(table);
  if (text === undefined) {
    text = {
      name: quote(table.name),
      columns: table.order.map(quote).join(', '),
      types: table.order.map((name) => table.fields.get(name)!.type),
      insert: {},
      find: {},
    };
    tableTexts.set(table, text);
  }
  return text;
}

/**
 * What a read in a PostgreSQL transaction appends: it locks the rows it reads until the
 * transaction ends, so a write outside any transaction to a row the transaction read waits for
 * it instead of being overwritten by it (no lost update). SQLite needs none: its transactions
 * hold the database's write lock from BEGIN IMMEDIATE.
 */
export const LOCK_ROWS = ' FOR UPDATE';

/** SELECT for `where`/`page`: filter, keyset position, order (id last), limit and offset; `lock` is '' or LOCK_ROWS. */
export function selectStatement(dialect: Dialect, table: Table, query: Query, lock = ''): Statement {
  const params = new Params(dialect);
  const conditions = filterConditions(dialect, table, query.filter ?? {}, params);
  const order = checkedOrder(table, query.order ?? []);
  if (query.after !== undefined) conditions.push(keyset(dialect, order, query.after, params));
  const limit = query.limit;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_QUERY_ROWS) throw new InvalidQueryError(`limit must be an integer from 1 to ${MAX_QUERY_ROWS}`);
  const offset = query.offset ?? 0;
  if (!Number.isSafeInteger(offset) || offset < 0 || offset > MAX_OFFSET) throw new InvalidQueryError(`offset must be an integer from 0 to ${MAX_OFFSET}`);
  const orderBy = order.map(({ field, desc }) => `${quote(field.name)} ${direction(field, desc)}`).join(', ');
  // The limit is written into the text (a checked integer): SQLite plans a known limit better
  // (~15 % on a page of 20); the offset is bound, and left out when there is none.
  const skip = offset === 0 ? '' : ` OFFSET ${params.add(offset)}`;
  const sql = `SELECT ${textOf(table).columns} FROM ${textOf(table).name}${where(conditions)} ORDER BY ${orderBy} LIMIT ${limit}${skip}${lock}`;
  return { sql, params: params.values, limit, reach: limit + offset };
}

/** SELECT COUNT(*) of the rows a filter matches, as column `n`. */
export function countStatement(dialect: Dialect, table: Table, filter: Filter): Statement {
  const params = new Params(dialect);
  const conditions = filterConditions(dialect, table, filter ?? {}, params);
  return { sql: `SELECT COUNT(*) AS "n" FROM ${textOf(table).name}${where(conditions)}`, params: params.values };
}

/** SELECT of one row by id; `lock` is '' or LOCK_ROWS. */
export function findStatement(dialect: Dialect, table: Table, id: string, lock = ''): Statement {
  const text = textOf(table);
  // Keyed by the dialect alone when not locking: the plain lookup builds no key per call.
  const key = lock === '' ? dialect.name : dialect.name + lock;
  const sql = (text.find[key] ??= `SELECT ${text.columns} FROM ${text.name} WHERE "id" = ${dialect.param(1)}${lock}`);
  return { sql, params: [dialect.encode('uuid', id)], reach: 1 };
}

/** DELETE of one row by id. */
export function deleteStatement(dialect: Dialect, table: Table, id: string): Statement {
  return { sql: `DELETE FROM ${textOf(table).name} WHERE "id" = ${dialect.param(1)}`, params: [dialect.encode('uuid', id)] };
}

function writableField(table: Table, name: string): Field {
  const field = fieldOf(table, name);
  if (field.implicit) throw new InvalidQueryError(`field '${name}' is set by the store`);
  return field;
}

function writeValue(field: Field, value: StoredValue): StoredValue {
  if (value === null) {
    if (!field.optional) throw new InvalidQueryError(`field '${field.name}' is required`);
    return null;
  }
  if (field.type === 'text' && typeof value === 'string') checkStorableText(field, value);
  return checkValue(field.type, value, field.name);
}

/**
 * The row an insert stores: every declared field (given, else its default, else null when
 * optional), checked, plus id and timestamps; and the INSERT that stores it.
 */
export function insertStatement(dialect: Dialect, table: Table, fields: Row, id: string, now: string): { row: Row; statement: Statement } {
  if (!isPlainObject(fields)) throw new InvalidQueryError('a record is an object of fields');
  for (const name of Object.keys(fields)) writableField(table, name);
  const row: Row = {};
  for (const name of table.order) {
    const field = table.fields.get(name)!;
    if (name === 'id') put(row, name, id);
    else if (field.implicit) put(row, name, now);
    else {
      const given = Object.hasOwn(fields, name) ? fields[name] : undefined;
      const value = given === undefined ? (field.spec?.default ?? null) : given;
      put(row, name, writeValue(field, value as StoredValue));
    }
  }
  const text = textOf(table);
  const params = text.types.map((type, i) => dialect.encode(type, row[table.order[i]!]!));
  return {
    row,
    statement: {
      sql: (text.insert[dialect.name] ??= `INSERT INTO ${text.name} (${text.columns}) VALUES (${text.types.map((_, i) => dialect.param(i + 1)).join(', ')})`),
      params,
    },
  };
}

/** UPDATE of the given fields (checked) and `updated_at`, returning the row. */
export function updateStatement(dialect: Dialect, table: Table, id: string, changes: Row, now: string): Statement {
  if (!isPlainObject(changes)) throw new InvalidQueryError('changes are an object of fields');
  const params = new Params(dialect);
  const sets: string[] = [];
  for (const [name, value] of Object.entries(changes)) {
    if (value === undefined) continue;
    const field = writableField(table, name);
    sets.push(`${quote(name)} = ${params.add(dialect.encode(field.type, writeValue(field, value)))}`);
  }
  sets.push(`"updated_at" = ${params.add(dialect.encode('datetime', now))}`);
  const sql = `UPDATE ${textOf(table).name} SET ${sets.join(', ')} WHERE "id" = ${params.add(dialect.encode('uuid', id))} RETURNING ${textOf(table).columns}`;
  return { sql, params: params.values };
}

/** A row as the driver returned it (an array, columns in row order), back to JSON data, fields in row order. */
export function decodeRow(dialect: Dialect, table: Table, raw: readonly unknown[]): Row {
  const { types } = textOf(table);
  const row: Row = {};
  for (let i = 0; i < types.length; i++) {
    const value = raw[i];
    put(row, table.order[i]!, value === null || value === undefined ? null : dialect.decode(types[i]!, value));
  }
  return row;
}

/** The most prepared statements one store keeps: shapes beyond it are evicted oldest-first (or not prepared). */
export const STATEMENT_CACHE_SIZE = 500;

/** A bounded map of prepared statements by SQL text (its shape), least recently used evicted first. */
export class ShapeCache<T> {
  private readonly entries = new Map<string, T>();
  constructor(private readonly size: number = STATEMENT_CACHE_SIZE) {}

  /** The entry for `sql`, made by `make` on first use. */
  get(sql: string, make: () => T): T {
    const hit = this.entries.get(sql);
    if (hit !== undefined) {
      this.entries.delete(sql);
      this.entries.set(sql, hit);
      return hit;
    }
    const made = make();
    this.entries.set(sql, made);
    if (this.entries.size > this.size) this.entries.delete(this.entries.keys().next().value!);
    return made;
  }

  /** Whether `sql` is cached, without touching its recency. */
  has(sql: string): boolean {
    return this.entries.has(sql);
  }

  get count(): number {
    return this.entries.size;
  }

  get full(): boolean {
    return this.entries.size >= this.size;
  }
}
