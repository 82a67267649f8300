/**
 * A declared table as the stores see it: its fields (declared plus the implicit `id`,
 * `created_at`, `updated_at`), the canonical form a value of each field is stored and returned in,
 * and the check of a written row. A value reaches a store only when it fits its column; one that
 * does not is an InvalidQueryError naming the field, the same on every database. (A query is
 * checked by query.ts, with these values.)
 */
import { InvalidQueryError, UnstorableValueError, put, type ColumnSpec, type ColumnType, type Row, type StoredValue, type TableSpec } from './store.js';
import { UUID_PATTERN } from './uuid.js';
import { didYouMean, unstorableText } from '../../plugins/sdk.js';

/** What a column holds: a declared field's ColumnType, or `uuid` for the implicit id. */
export type StoredType = ColumnType | 'uuid';

/** One field of a table, declared or implicit. */
export interface Field {
  name: string;
  type: StoredType;
  optional: boolean;
  implicit: boolean;
  spec: ColumnSpec | null;
}

/**
 * Whether a column can never hold null: the implicit ones (`id`, `created_at`, `updated_at`),
 * which schema sync creates NOT NULL. A declared field may hold null even when required (a row
 * written before the field existed), so queries that order or seek by it keep nulls in mind.
 */
export function holdsNoNull(field: Field): boolean {
  return field.implicit;
}

/** A TableSpec checked and indexed by field name. */
export interface Table {
  name: string;
  spec: TableSpec;
  fields: Map<string, Field>;
  /** Field names in row order: id, the declared fields, created_at, updated_at. */
  order: string[];
}

/** The longest table or column name: PostgreSQL cuts identifiers at 63 bytes. */
export const MAX_IDENTIFIER_LENGTH = 63;
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const IMPLICIT = ['id', 'created_at', 'updated_at'];

/** Checks a TableSpec's names (they are written into SQL, quoted) and indexes its fields. */
export function tableOf(spec: TableSpec): Table {
  checkIdentifier(spec.name, 'table');
  const fields = new Map<string, Field>();
  fields.set('id', { name: 'id', type: 'uuid', optional: false, implicit: true, spec: null });
  for (const column of spec.columns) {
    checkIdentifier(column.name, 'field');
    if (fields.has(column.name) || IMPLICIT.includes(column.name))
      throw new Error(`type ${spec.name}: field '${column.name}' is declared twice or is implicit`);
    if (column.default !== undefined && column.default !== null) canonicalValue(column.type, column.default, column.name);
    fields.set(column.name, { name: column.name, type: column.type, optional: column.optional, implicit: false, spec: column });
  }
  fields.set('created_at', { name: 'created_at', type: 'datetime', optional: false, implicit: true, spec: null });
  fields.set('updated_at', { name: 'updated_at', type: 'datetime', optional: false, implicit: true, spec: null });
  return { name: spec.name, spec, fields, order: [...fields.keys()] };
}

function checkIdentifier(name: string, what: string): void {
  if (!IDENTIFIER.test(name) || name.length > MAX_IDENTIFIER_LENGTH) {
    throw new Error(`${what} name '${name}' must be letters, digits and _ (at most ${MAX_IDENTIFIER_LENGTH}), not starting with a digit`);
  }
}

/** The field `name` of `table`, or an InvalidQueryError naming it with the nearest declared name. */
export function fieldOf(table: Table, name: string): Field {
  const field = table.fields.get(name);
  if (field) return field;
  throw new InvalidQueryError(`unknown field '${clip(name)}' of ${table.name}${suggestion(name, table.order)}`);
}

/** ` (did you mean 'x'?)` for the nearest of `names`, or '' when none is near. */
export function suggestion(name: string, names: readonly string[]): string {
  const near = didYouMean(name, names);
  return near === undefined ? '' : ` (${near})`;
}

/** A name or value quoted into an error message, shortened: messages are not a channel for request data. */
export function clip(text: string): string {
  const oneLine = text.replace(/[\u0000-\u001f\u007f]/g, '?');
  return oneLine.length > 40 ? `${oneLine.slice(0, 40)}…` : oneLine;
}

/**
 * The longest text, in bytes of UTF-8, an `@unique` or `@index` field stores: PostgreSQL refuses
 * an index row over 2704 bytes (error 54000), so past this a write is refused at validation, on
 * every database alike, instead of failing inside PostgreSQL.
 */
export const MAX_INDEXED_TEXT_BYTES = 2000;

/**
 * Refuses a text that a write to `field` could not store as given, the same on every database:
 * NUL (PostgreSQL refuses it), a lone surrogate (stored as U+FFFD), more than
 * MAX_INDEXED_TEXT_BYTES in an `@unique`/`@index` field. Other checks are canonicalValue's.
 */
function checkStorableText(field: Field, text: string): void {
  const problem = unstorableText(text);
  if (problem !== null) throw new UnstorableValueError(field.name, problem.rule, problem.message);
  // Each UTF-16 unit is at most 3 bytes of UTF-8: only a long text needs counting.
  if ((field.spec?.unique || field.spec?.index) && text.length * 3 > MAX_INDEXED_TEXT_BYTES && Buffer.byteLength(text) > MAX_INDEXED_TEXT_BYTES) {
    throw new UnstorableValueError(field.name, 'max_indexed_bytes', `must be at most ${MAX_INDEXED_TEXT_BYTES} bytes of UTF-8 (the field is indexed)`);
  }
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/;

/**
 * The canonical stored form of a non-null `value` for a field of type `type`, or an
 * InvalidQueryError naming `field`: text without NUL (PostgreSQL refuses it), safe integers,
 * finite numbers (-0 as 0), real calendar dates, date-times as ISO-8601 UTC with milliseconds
 * (years 1–9999), lists and objects of JSON data, lowercase UUIDs.
 */
export function canonicalValue(type: StoredType, value: StoredValue, field: string): StoredValue {
  const bad = (what: string): never => {
    throw new InvalidQueryError(`field '${field}' needs ${what}`);
  };
  switch (type) {
    case 'text':
      if (typeof value !== 'string') return bad('a text');
      if (value.includes('\u0000')) return bad('a text without NUL characters');
      return value;
    case 'int':
      if (typeof value !== 'number' || !Number.isSafeInteger(value)) return bad('an integer');
      return value === 0 ? 0 : value;
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) return bad('a finite number');
      return value === 0 ? 0 : value;
    case 'bool':
      if (typeof value !== 'boolean') return bad('a bool');
      return value;
    case 'date': {
      const m = typeof value === 'string' ? DATE.exec(value) : null;
      if (!m || !realDate(+m[1]!, +m[2]!, +m[3]!)) return bad('a date (YYYY-MM-DD)');
      return value;
    }
    case 'datetime': {
      const m = typeof value === 'string' ? DATETIME.exec(value) : null;
      const ms = m && realDate(+m[1]!, +m[2]!, +m[3]!) && +m[4]! < 24 && +m[5]! < 60 && +(m[6] ?? 0) < 60 ? Date.parse(value as string) : NaN;
      if (!Number.isFinite(ms)) return bad('a date-time (ISO-8601 with a zone)');
      const iso = new Date(ms).toISOString();
      if (!/^\d{4}-/.test(iso) || iso.startsWith('0000')) return bad('a date-time between the years 1 and 9999');
      return iso;
    }
    case 'list':
      if (!Array.isArray(value)) return bad('a list');
      checkJson(value, field);
      return value;
    case 'object':
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return bad('an object');
      checkJson(value, field);
      return value;
    case 'uuid':
      if (typeof value !== 'string' || !UUID_PATTERN.test(value)) return bad('a UUID');
      return value.toLowerCase();
  }
}

function realDate(year: number, month: number, day: number): boolean {
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const days = new Date(Date.UTC(2000, month, 0)).getUTCDate();
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= (month === 2 && !leap ? 28 : days);
}

/** JSON data only (what a Row may hold), texts storable as given (unstorableText), numbers finite. */
function checkJson(value: StoredValue, field: string): void {
  if (value === null || typeof value === 'boolean') return;
  if (typeof value === 'string') {
    const problem = unstorableText(value);
    if (problem !== null) throw new UnstorableValueError(field, problem.rule, `texts ${problem.message}`);
    return;
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new InvalidQueryError(`field '${field}' needs finite numbers`);
    return;
  }
  if (Array.isArray(value)) {
    for (const item of value) checkJson(item, field);
    return;
  }
  if (typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const problem = unstorableText(key);
      if (problem !== null) throw new UnstorableValueError(field, problem.rule, `keys ${problem.message}`);
      checkJson(item, field);
    }
    return;
  }
  throw new InvalidQueryError(`field '${field}' needs JSON data`);
}

/** An object of fields (a row, a filter), not a list. */
export function isPlainObject(value: unknown): value is Record<string, StoredValue> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A field a write may set: declared, not one the store sets. */
function writableField(table: Table, name: string): Field {
  const field = fieldOf(table, name);
  if (field.implicit) throw new InvalidQueryError(`field '${name}' is set by the store`);
  return field;
}

/** A written value in its stored form: null only in an optional field, text storable as given. */
function writtenValue(field: Field, value: StoredValue): StoredValue {
  if (value === null) {
    if (!field.optional) throw new InvalidQueryError(`field '${field.name}' is required`);
    return null;
  }
  if (field.type === 'text' && typeof value === 'string') checkStorableText(field, value);
  return canonicalValue(field.type, value, field.name);
}

/**
 * The row an insert stores, in row order: every declared field (given, else its default, else
 * null when optional) in its stored form, plus `id` and the time stamps.
 */
export function insertedRow(table: Table, fields: Row, id: string, now: string): Row {
  if (!isPlainObject(fields)) throw new InvalidQueryError('a record is an object of fields');
  for (const name of Object.keys(fields)) writableField(table, name);
  const row: Row = {};
  for (const name of table.order) {
    const field = table.fields.get(name)!;
    if (name === 'id') put(row, name, id);
    else if (field.implicit) put(row, name, now);
    else {
      const given = Object.hasOwn(fields, name) ? fields[name] : undefined;
      put(row, name, writtenValue(field, given === undefined ? (field.spec?.default ?? null) : given));
    }
  }
  return row;
}

/** The changes an update stores: declared fields the store does not set, each in its stored form (an undefined one is left out). */
export function updatedFields(table: Table, changes: Row): Row {
  if (!isPlainObject(changes)) throw new InvalidQueryError('changes are an object of fields');
  const out: Row = {};
  for (const [name, value] of Object.entries(changes)) {
    if (value !== undefined) put(out, name, writtenValue(writableField(table, name), value));
  }
  return out;
}
