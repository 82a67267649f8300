/**
 * A declared table as the stores see it: its fields (declared plus the implicit `id`,
 * `created_at`, `updated_at`), the check of every value against its field's type, and the
 * canonical form a value is stored and returned in. Both SQL stores (and the SQL builder) rely on
 * these checks so a value reaches the database only when it fits its column; a value that does not
 * is an InvalidQueryError naming the field, the same on every database.
 */
import { InvalidQueryError, UnstorableValueError, type ColumnSpec, type ColumnType, type StoredValue, type TableSpec } from './store.js';
import { UUID_PATTERN } from './uuid.js';
import { unstorableText } from '../../plugins/sdk.js';

/** A field's type: a declared column type, or `uuid` for the implicit id. */
export type FieldType = ColumnType | 'uuid';

/** One field of a table, declared or implicit. */
export interface Field {
  name: string;
  type: FieldType;
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
    if (column.default !== undefined && column.default !== null) checkValue(column.type, column.default, column.name);
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
  throw new InvalidQueryError(`unknown field '${clip(name)}' of ${table.name}${hint(name, table.order)}`);
}

/** ` (did you mean 'x'?)` for the nearest of `names`, or '' when none is near. */
export function hint(name: string, names: readonly string[]): string {
  let best = '';
  let bestDistance = Infinity;
  for (const candidate of names) {
    const d = distance(name.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best && bestDistance <= Math.max(1, Math.floor(best.length / 3)) ? ` (did you mean '${best}'?)` : '';
}

/** Edit distance (Levenshtein with swaps), cut short for long input (a hint is for typos, not essays). */
function distance(a: string, b: string): number {
  if (a.length > 64 || b.length > 64) return Infinity;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  let beforePrevious = previous;
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      // A swap of neighbours counts as one edit (optimal string alignment).
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) current[j] = Math.min(current[j]!, beforePrevious[j - 2]! + 1);
    }
    beforePrevious = previous;
    previous = current;
  }
  return previous[b.length]!;
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
 * MAX_INDEXED_TEXT_BYTES in an `@unique`/`@index` field. Other checks are checkValue's.
 */
export function checkStorableText(field: Field, text: string): void {
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
export function checkValue(type: FieldType, value: StoredValue, field: string): StoredValue {
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
