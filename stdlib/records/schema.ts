/**
 * Schema sync, the part both SQL stores share: compare the declared tables with the live schema
 * (read from the database itself; rvm keeps no side file) and plan the DDL. Additive changes
 * (a missing table, an optional or defaulted column, an index) are applied; a removed field, a
 * changed type, or a new required field without default on a non-empty table is withheld as a
 * SchemaChange located at the type's declaration, applied only with `allowDestructive`.
 * Dropping an index rvm made for a decorator that is gone loses no data and is applied. Every
 * table also gets an index on its creation order (`created_at`, `id`).
 */
import type { SchemaChange, TableSpec } from './store.js';
import { tableOf, type StoredType, type Table } from './columns.js';
import { quote, type Dialect } from './sql.js';

/** One table as it is in the database. */
export interface LiveTable {
  /** Column name → field type, or the database's type name when it maps to none. */
  columns: Map<string, StoredType | string>;
  indexes: Set<string>;
  hasRows: boolean;
  /** Declared `@unique` columns whose unique index is missing and whose values repeat (duplicateValues). */
  duplicated?: Set<string>;
}

/**
 * A table named like a declared type but for letter case (`user` for `type User`): SQLite takes
 * the two names for one table, PostgreSQL for two, so neither creating the declared table nor
 * using the old one is safe.
 */
export interface CaseTwin {
  caseTwin: string;
}

/** The tables that exist, by declared name (only the declared ones are read). */
export type LiveSchema = Map<string, LiveTable | CaseTwin>;

/**
 * The declared `@unique` columns of `spec` that exist in `live` without their unique index: the
 * ones whose values a store checks for repeats (duplicateValues) before the index is planned.
 */
export function uniqueIndexesToMake(spec: TableSpec, live: LiveTable): string[] {
  return spec.columns.filter((c) => c.unique && live.columns.has(c.name) && !live.indexes.has(indexName(spec.name, c.name, true))).map((c) => c.name);
}

/**
 * The values `column` of `table` holds more than once, with their counts: what stops its unique
 * index (nulls never count: a unique index allows many). Stores ask it with `LIMIT 1`.
 */
export function duplicateValues(table: string, column: string): string {
  return `SELECT ${quote(column)}, count(*) FROM ${quote(table)} WHERE ${quote(column)} IS NOT NULL GROUP BY ${quote(column)} HAVING count(*) > 1`;
}

/** What a sync runs, and what it leaves withheld: a change with a remedy stays withheld even when destructive ones are allowed. */
export function syncSteps(steps: SchemaSteps, allowDestructive: boolean): { run: SchemaStep[]; withheld: SchemaChange[] } {
  if (!allowDestructive) return { run: steps.apply, withheld: steps.withheld };
  return { run: [...steps.withheld.filter((c) => c.remedy === undefined), ...steps.apply], withheld: steps.withheld.filter((c) => c.remedy !== undefined) };
}

/** A planned step: what it does (for the start line and `rvm db diff`) and its SQL. */
export interface SchemaStep {
  description: string;
  sql: string[];
}

/** The plan of a sync: steps to apply, changes withheld. */
export interface SchemaSteps {
  apply: SchemaStep[];
  withheld: SchemaChange[];
}

/** The longest index name PostgreSQL keeps whole. */
const MAX_INDEX_NAME = 63;

/** The name of the index rvm makes for `@unique` (`_key`) or `@index` (`_idx`) of a column; long names end in a hash so they stay unique. */
export function indexName(table: string, column: string, unique: boolean): string {
  const suffix = unique ? '_key' : '_idx';
  const full = `${table}_${column}${suffix}`;
  if (full.length <= MAX_INDEX_NAME) return full;
  let h = 0x811c9dc5;
  for (const c of full) h = Math.imul(h ^ c.charCodeAt(0), 0x01000193) >>> 0;
  return `${full.slice(0, MAX_INDEX_NAME - suffix.length - 9)}_${h.toString(16).padStart(8, '0')}${suffix}`;
}

function columnDefinition(dialect: Dialect, name: string, type: StoredType, defaultValue: unknown): string {
  const def = defaultValue === undefined || defaultValue === null ? '' : ` DEFAULT ${dialect.literal(type, defaultValue as never)}`;
  return `${quote(name)} ${dialect.columnType(type)}${def}`;
}

/**
 * The columns of the index rvm makes for a column: `@unique` indexes the column alone; `@index`
 * appends the creation order (`created_at`, then `id`), so a filter on the field listed newest
 * (or oldest) first walks the index instead of sorting every match; `created_at` itself is the
 * table's own index, serving listings of the whole table in creation order.
 */
function indexColumns(column: string, unique: boolean): string[] {
  return unique ? [column] : column === CREATED_AT ? [CREATED_AT, 'id'] : [column, CREATED_AT, 'id'];
}

/** The implicit column every table is indexed by. */
const CREATED_AT = 'created_at';

function createIndex(table: string, column: string, unique: boolean): string {
  const columns = indexColumns(column, unique).map(quote).join(', ');
  return `CREATE ${unique ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS ${quote(indexName(table, column, unique))} ON ${quote(table)} (${columns})`;
}

function dropIndex(table: string, column: string, unique: boolean): string {
  return `DROP INDEX IF EXISTS ${quote(indexName(table, column, unique))}`;
}

/** The indexes a table wants: one per `@unique` or `@index` column, and its creation-order index. */
function wantedIndexes(t: Table): { column: string; unique: boolean }[] {
  const out: { column: string; unique: boolean }[] = [];
  for (const column of t.spec.columns) {
    if (column.unique) out.push({ column: column.name, unique: true });
    if (column.index && !column.unique) out.push({ column: column.name, unique: false });
  }
  out.push({ column: CREATED_AT, unique: false });
  return out;
}

/** The names of the indexes sync gives a table (what the in-memory model reports as its live indexes). */
export function indexNames(t: Table): Set<string> {
  return new Set(wantedIndexes(t).map((i) => indexName(t.spec.name, i.column, i.unique)));
}

/** The steps that bring `live` to `specs`. */
export function planSchema(dialect: Dialect, specs: readonly TableSpec[], live: LiveSchema): SchemaSteps {
  const apply: SchemaStep[] = [];
  const withheld: SchemaChange[] = [];
  for (const spec of specs) {
    const t = tableOf(spec);
    const found = live.get(spec.name);
    const at = { table: spec.name, file: spec.file, line: spec.line, col: spec.col };
    if (found !== undefined && 'caseTwin' in found) {
      withheld.push({
        ...at,
        description: `the database holds a table '${found.caseTwin}', named like type ${spec.name} but for letter case (SQLite takes the two names for one table, PostgreSQL for two)`,
        destructive: false,
        sql: [],
        remedy: `name the type ${found.caseTwin} again, or rename the table in the database to ${spec.name} yourself`,
      });
      continue;
    }
    const existing = found;
    if (!existing) {
      const columns = t.order.map((name) => {
        const field = t.fields.get(name)!;
        if (name === 'id') return `${quote('id')} ${dialect.columnType('uuid')} PRIMARY KEY NOT NULL`;
        if (field.implicit) return `${quote(name)} ${dialect.columnType('datetime')} NOT NULL`;
        return columnDefinition(dialect, name, field.type, field.spec!.default);
      });
      const sql = [`CREATE TABLE ${quote(spec.name)} (${columns.join(', ')})`, ...wantedIndexes(t).map((i) => createIndex(spec.name, i.column, i.unique))];
      apply.push({ description: `create table ${spec.name}`, sql });
      continue;
    }
    for (const name of existing.columns.keys()) {
      if (t.fields.has(name)) continue;
      const sql = [dropIndex(spec.name, name, true), dropIndex(spec.name, name, false), `ALTER TABLE ${quote(spec.name)} DROP COLUMN ${quote(name)}`];
      withheld.push({ ...at, description: `field '${name}' was removed (its column and data would be dropped)`, destructive: true, sql });
    }
    for (const column of spec.columns) {
      const liveType = existing.columns.get(column.name);
      const add = `ALTER TABLE ${quote(spec.name)} ADD COLUMN ${columnDefinition(dialect, column.name, column.type, column.default)}`;
      const hasDefault = column.default !== undefined && column.default !== null;
      if (liveType === undefined) {
        if (column.optional || hasDefault || !existing.hasRows) apply.push({ description: `add column ${spec.name}.${column.name}`, sql: [add] });
        else {
          withheld.push({
            ...at,
            description: `field '${column.name}' is new and required without a default, and ${spec.name} has rows (they would hold null)`,
            destructive: false,
            sql: [add],
          });
        }
        continue;
      }
      if (liveType !== column.type) {
        const sql = [
          dropIndex(spec.name, column.name, true),
          dropIndex(spec.name, column.name, false),
          `ALTER TABLE ${quote(spec.name)} DROP COLUMN ${quote(column.name)}`,
          add,
        ];
        if (column.unique) sql.push(createIndex(spec.name, column.name, true));
        else if (column.index) sql.push(createIndex(spec.name, column.name, false));
        withheld.push({
          ...at,
          description: `field '${column.name}' changed from ${liveType} to ${column.type} (its values would be dropped)`,
          destructive: true,
          sql,
        });
      }
    }
    for (const column of spec.columns) {
      for (const unique of [true, false]) {
        const name = indexName(spec.name, column.name, unique);
        const wanted = unique ? column.unique : column.index && !column.unique;
        if (wanted && unique && existing.duplicated?.has(column.name)) {
          withheld.push({
            ...at,
            description: `field '${column.name}' is @unique, but values of it repeat in ${spec.name} (its unique index cannot be made)`,
            destructive: false,
            sql: [],
            remedy: `make the ${column.name} values of ${spec.name} distinct, or remove @unique; the repeated ones: ${duplicateValues(spec.name, column.name)}`,
          });
          continue;
        }
        if (wanted && !existing.indexes.has(name))
          apply.push({ description: `create ${unique ? 'unique ' : ''}index ${name}`, sql: [createIndex(spec.name, column.name, unique)] });
        if (!wanted && existing.indexes.has(name)) apply.push({ description: `drop index ${name}`, sql: [dropIndex(spec.name, column.name, unique)] });
      }
    }
    const byCreation = indexName(spec.name, CREATED_AT, false);
    if (!existing.indexes.has(byCreation)) apply.push({ description: `create index ${byCreation}`, sql: [createIndex(spec.name, CREATED_AT, false)] });
  }
  return { apply, withheld };
}
