/**
 * The storage form of a record type: the TableSpec a store creates and syncs, from the fields
 * and decorators of the `type` declaration (`@unique`, `@index`, `@default`).
 */
import type { FieldType, RecordType, RecordField } from '../../plugins/sdk.js';
import type { ColumnSpec, ColumnType, StoredValue, TableSpec } from './store.js';

/** The column type of a field type: a `file` field, which a record cannot hold, is kept as text. */
export function columnTypeOf(type: FieldType): ColumnType {
  return type === 'file' ? 'text' : type;
}

/** A field's column: its type, presence and indexes. */
function columnOf(field: RecordField): ColumnSpec {
  const has = (name: string) => field.decorators.some((d) => d.name === name);
  const fallback = field.decorators.find((d) => d.name === 'default');
  const column: ColumnSpec = {
    name: field.name,
    type: columnTypeOf(field.type),
    optional: field.optional,
    unique: has('unique'),
    index: has('index'),
  };
  if (fallback !== undefined) column.default = (fallback.args[0] ?? null) as StoredValue;
  return column;
}

/** The table of `type`: named like it, one column per declared field. */
export function tableSpecOf(type: RecordType): TableSpec {
  return { name: type.name, columns: type.fields.map(columnOf), file: type.file, line: type.line, col: type.col };
}
