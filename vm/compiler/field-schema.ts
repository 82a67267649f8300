/**
 * JSON Schemas of declared fields (`validate`, `query`, `type` blocks). Only the field type and
 * presence are mapped here; the validation plugin adds each decorator's keywords later.
 */
import type { FieldType } from '../front/ast.js';
import { FIELD_TYPES } from '../lang.js';
import type { FieldMeta, JsonSchema } from '../bytecode/module.js';

/** The JSON Schema of one field type. */
export function fieldTypeSchema(type: FieldType): JsonSchema {
  switch (type) {
    case 'text':
      return { type: 'string' };
    case 'int':
      return { type: 'integer' };
    case 'number':
      return { type: 'number' };
    case 'bool':
      return { type: 'boolean' };
    case 'file':
      return { type: 'string', format: 'binary' };
    case 'list':
      return { type: 'array' };
    case 'object':
      return { type: 'object' };
    case 'date':
      return { type: 'string', format: 'date' };
    case 'datetime':
      return { type: 'string', format: 'date-time' };
  }
}

/** An object schema with one property per field, its schema from `schemaOf`; `required` lists the fields that must be sent. */
export function objectSchema<F extends { name: string; required: boolean }>(fields: readonly F[], schemaOf: (field: F) => JsonSchema): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const field of fields) {
    properties[field.name] = schemaOf(field);
    if (field.required) required.push(field.name);
  }
  const schema: JsonSchema = { type: 'object', properties };
  if (required.length > 0) schema.required = required;
  return schema;
}

/** The object schema of declared fields, by type and presence alone. */
export function fieldsSchema(fields: readonly FieldMeta[]): JsonSchema {
  return objectSchema(fields, (field) => fieldTypeSchema(field.type));
}

/**
 * `schema` that also allows null (JSON Schema 2020-12: `null` joins `type`, and `enum` if any;
 * the 3.0 rendering makes it `nullable`).
 */
export function orNull(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = { ...schema };
  if (typeof out.type === 'string') out.type = [out.type, 'null'];
  else if (Array.isArray(out.type) && !out.type.includes('null')) out.type = [...out.type, 'null'];
  if (Object.hasOwn(out, 'const')) {
    out.enum = [out.const, null];
    delete out.const;
  } else if (Array.isArray(out.enum) && !out.enum.includes(null)) {
    out.enum = [...out.enum, null];
  }
  return out;
}

/**
 * A field of a stored record as it is answered: always present (a stored record's JSON form
 * holds every field that is not `@hidden`), null when it has no value — any field that need not
 * be given (`name?:` without `@default` or `@required`).
 */
export function storedFieldSchema(field: { required: boolean; decorators: readonly { name: string }[] }, schema: JsonSchema): JsonSchema {
  return field.required || field.decorators.some((d) => d.name === 'default') ? schema : orNull(schema);
}

/**
 * The schema of a value that may be null: `type` lists `null` where it can, else `anyOf` (a
 * record, which the reference replaces by a `$ref`, keeps its own schema whole).
 */
export function nullable(schema: JsonSchema): JsonSchema {
  if (schema[RECORD_TYPE_KEYWORD] === undefined && (typeof schema.type === 'string' || Array.isArray(schema.type))) return orNull(schema);
  if (Object.keys(schema).length === 0 || schema.type === 'null') return schema;
  return { anyOf: [schema, NULL_SCHEMA] };
}

/** `schema` without the null it allows (after a check of the value): the reverse of `nullable`. */
export function withoutNull(schema: JsonSchema): JsonSchema {
  if (Array.isArray(schema.anyOf) && schema.anyOf.some(isNullSchema)) {
    const rest = (schema.anyOf as JsonSchema[]).filter((s) => !isNullSchema(s));
    return rest.length === 1 ? rest[0]! : { ...schema, anyOf: rest };
  }
  if (!Array.isArray(schema.type) || !schema.type.includes('null')) return schema;
  const types = (schema.type as string[]).filter((t) => t !== 'null');
  const out: JsonSchema = { ...schema, type: types.length === 1 ? types[0]! : types };
  if (Array.isArray(out.enum)) out.enum = out.enum.filter((v) => v !== null);
  return out;
}

export const NULL_SCHEMA: JsonSchema = { type: 'null' };

function isNullSchema(schema: JsonSchema): boolean {
  return schema.type === 'null' && Object.keys(schema).length === 1;
}

/**
 * The schema of a declared result type — a native's `returns`, a word of a `@returns` tag: a
 * field type, `any`, `null`, `secret` (answered as `"[secret]"`), `never` (it does not return),
 * each with a trailing `?` when it may also be null (`int?`). Null for a word outside these.
 */
export function resultTypeSchema(declared: string): JsonSchema | null {
  const maybeNull = declared.endsWith('?');
  const word = maybeNull ? declared.slice(0, -1) : declared;
  const schema = RESULT_WORDS.has(word)
    ? RESULT_WORDS.get(word)!
    : (FIELD_TYPES as readonly string[]).includes(word)
      ? fieldTypeSchema(word as FieldType)
      : null;
  if (schema === null) return null;
  return maybeNull ? nullable(schema) : schema;
}

/** The words of a declared result type, as a native's `returns` or a `@returns` tag takes them. */
export const RESULT_TYPES: readonly string[] = [...FIELD_TYPES, 'any', 'null', 'secret', 'never'];
/** The result types that are no field type. */
const RESULT_WORDS: ReadonlyMap<string, JsonSchema> = new Map([
  ['any', {}],
  ['never', {}],
  ['null', NULL_SCHEMA],
  ['secret', { type: 'string' }],
]);

/**
 * The keyword naming the `type` a response schema is a record of: the OpenAPI export replaces
 * such a schema by a `$ref` to the type's entry in `components/schemas`.
 */
export const RECORD_TYPE_KEYWORD = 'x-rvm-record';

/**
 * The schema of a stored record of the `type` named `name`, marked with RECORD_TYPE_KEYWORD: its
 * fields (minus `@hidden` ones, which never leave in a response; see storedFieldSchema) plus the
 * `id`, `created_at` and `updated_at` that saving assigns; the mark alone when its fields are not
 * known (null).
 */
export function recordSchema(name: string, fields: readonly FieldMeta[] | null): JsonSchema {
  if (fields === null) return { [RECORD_TYPE_KEYWORD]: name };
  const properties: Record<string, JsonSchema> = {
    id: { type: 'string', format: 'uuid' },
  };
  const required = ['id'];
  for (const field of fields) {
    if (field.decorators.some((d) => d.name === 'hidden')) continue;
    properties[field.name] = storedFieldSchema(field, fieldTypeSchema(field.type));
    required.push(field.name);
  }
  properties.created_at = { type: 'string', format: 'date-time' };
  properties.updated_at = { type: 'string', format: 'date-time' };
  required.push('created_at', 'updated_at');
  return { type: 'object', properties, required, [RECORD_TYPE_KEYWORD]: name };
}

/** The schema of `T.page(...)`: one page of records and the cursor of the next (null on the last). */
export function recordPageSchema(name: string, fields: readonly FieldMeta[] | null): JsonSchema {
  return {
    type: 'object',
    properties: { items: { type: 'array', items: recordSchema(name, fields) }, next: { type: ['string', 'null'] } },
    required: ['items', 'next'],
  };
}

/**
 * The words a record method may declare it returns (its `returns`) besides a result type:
 * `record`, `record?` (a record or null), `records` (a list of them), `page` (`{items, next}`).
 */
export const RECORD_RESULTS: readonly string[] = ['record', 'record?', 'records', 'page'];

/**
 * The schema of what `T.m(...)` answers for the `type` named `name` (its fields, or null when
 * not known), by what the method declares it returns: a RECORD_RESULTS word or a result type
 * (`int`, `bool`). Null for any other word.
 */
export function recordResultSchema(returns: string, name: string, fields: readonly FieldMeta[] | null): JsonSchema | null {
  switch (returns) {
    case 'record':
      return recordSchema(name, fields);
    case 'record?':
      return nullable(recordSchema(name, fields));
    case 'records':
      return { type: 'array', items: recordSchema(name, fields) };
    case 'page':
      return recordPageSchema(name, fields);
    default:
      return resultTypeSchema(returns);
  }
}

/** The schema keywords whose value is one schema. */
export const SCHEMA_VALUED: readonly string[] = ['items', 'not', 'additionalProperties', 'contains', 'if', 'then', 'else', 'propertyNames'];
/** The schema keywords whose value is a list of schemas. */
export const SCHEMA_LISTS: readonly string[] = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];

/**
 * Visits `schema` and every schema nested in it (properties, items, allOf, ...), innermost
 * first, letting `fix` rewrite each in place. Property names are never mistaken for keywords.
 */
export function walkSchema(schema: JsonSchema, fix: (s: JsonSchema) => void): void {
  const props = schema.properties;
  if (isObject(props)) for (const value of Object.values(props)) if (isObject(value)) walkSchema(value, fix);
  for (const key of SCHEMA_VALUED) {
    const value = schema[key];
    if (isObject(value)) walkSchema(value, fix);
  }
  for (const key of SCHEMA_LISTS) {
    const value = schema[key];
    if (Array.isArray(value)) for (const item of value) if (isObject(item)) walkSchema(item, fix);
  }
  fix(schema);
}

/** True for a plain object (not a list, not null). */
export function isObject(value: unknown): value is JsonSchema {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
