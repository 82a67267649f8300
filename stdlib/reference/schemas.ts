/**
 * JSON Schemas of the OpenAPI document: the shared error bodies, field properties with their
 * validators' keywords and `x-rvm-decorators`, and the small normalisations every emitted schema
 * gets so that a standard validator accepts it.
 */
import {
  RECORD_TYPE_KEYWORD,
  SCHEMA_LISTS,
  SCHEMA_VALUED,
  isObject,
  objectSchema,
  storedFieldSchema,
  walkSchema,
  type FieldInfo,
  type JsonSchema,
  type TypeInfo,
} from '../../plugins/sdk.js';

/** Where the shared schemas live in the document. */
export const SCHEMAS_PATH = '#/components/schemas/';
export const ERROR_REF = `${SCHEMAS_PATH}Error`;
export const VALIDATION_ERROR_REF = `${SCHEMAS_PATH}ValidationError`;
/** The names of the shared schemas: a `type` of the same name gets another (see recordComponentNames). */
const SHARED_SCHEMAS: readonly string[] = ['Error', 'ValidationError'];

/** The body of every error the runtime, a guard or `fail` answers with. */
export const ERROR_SCHEMA: JsonSchema = {
  type: 'object',
  description: 'The error body every rvm error response has.',
  required: ['error', 'code'],
  properties: {
    error: { type: 'string', description: 'A human-readable message.' },
    code: { type: 'string', description: 'A stable, machine-readable code (lower_snake_case).' },
  },
};

/** The media type a file field's content has unless a decorator says more (`@image`). */
export const FILE_MEDIA_TYPE = 'application/octet-stream';

/** Deep copy of plain JSON data (schemas are shared with the runtime: never mutate them). */
export function cloneJson<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/**
 * A copy of `schema` ready for the document: lists without `items` get `items: {}` (validators
 * refuse an array schema without one) and an empty `required` list is dropped. One recursive
 * copy, without the intermediate text of a JSON round trip: the export copies thousands of these.
 */
export function documentSchema(schema: JsonSchema): JsonSchema {
  const copy: JsonSchema = {};
  for (const key of Object.keys(schema)) {
    const value = schema[key];
    if (key === 'required' && Array.isArray(value) && value.length === 0) continue;
    copy[key] = key === 'properties' && isObject(value) ? mapValues(value) : copyValue(value, key);
  }
  const isArray = copy.type === 'array' || (Array.isArray(copy.type) && copy.type.includes('array'));
  if (isArray && copy.items === undefined && copy.prefixItems === undefined) copy.items = {};
  return copy;
}

/** A property map: each value a schema. */
function mapValues(props: JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  for (const name of Object.keys(props)) {
    const value = props[name];
    out[name] = isObject(value) ? documentSchema(value) : value;
  }
  return out;
}

/** A keyword's value: schemas under schema keywords, plain data (enum, const, default, examples) copied as is. */
function copyValue(value: unknown, key: string): unknown {
  if (SCHEMA_VALUED.includes(key)) return isObject(value) ? documentSchema(value) : value;
  if (SCHEMA_LISTS.includes(key)) return Array.isArray(value) ? value.map((v) => (isObject(v) ? documentSchema(v) : v)) : value;
  return value !== null && typeof value === 'object' ? cloneJson(value) : value;
}

/**
 * The schema of one `validate {}` / `query {}` field: its type, every validator's keywords,
 * its doc, `x-rvm-type` (the rvm field type) and `x-rvm-decorators` as written. A `file` is a
 * string whose `contentMediaType` is the upload's type (OpenAPI 3.1's way to describe files).
 */
export function fieldSchema(field: FieldInfo): JsonSchema {
  const schema = documentSchema(field.schema);
  if (field.type === 'file') {
    if (schema.format === 'binary') delete schema.format;
    if (schema.contentMediaType === undefined) schema.contentMediaType = FILE_MEDIA_TYPE;
  }
  schema['x-rvm-type'] = field.type;
  schema['x-rvm-decorators'] = field.decorators.map((d) => ({ name: d.name, args: [...d.args], message: d.message }));
  return schema;
}

/** The object schema of a body: one property per field, `required` listing the fields that must be sent. */
export function bodySchema(fields: readonly FieldInfo[]): JsonSchema {
  return objectSchema(fields, fieldSchema);
}

/**
 * For the runtime's error body `{error, code}` as inference writes it: the literal code when the
 * source spelled one out (`response { json: { error: '…', code: 'x' } }`), else null (the code
 * `fail` and the helpers give for the status). Undefined for any other schema.
 */
export function errorBodyCode(schema: JsonSchema): string | null | undefined {
  if (shapeKeys(schema) !== 'code,error') return undefined;
  const code = (schema.properties as Record<string, JsonSchema>).code!;
  return typeof code.example === 'string' ? code.example : null;
}

/** True for the 422 body of a failed validation `{error, code, details}`. */
export function isValidationBody(schema: JsonSchema): boolean {
  return (
    shapeKeys(schema) === 'code,details,error' &&
    isObject(schema.properties) &&
    isObject(schema.properties.details) &&
    schema.properties.details.type === 'array'
  );
}

/** The sorted required keys of an object schema whose `error` and `code` are strings, or null. */
function shapeKeys(schema: JsonSchema): string | null {
  if (schema.type !== 'object' || !isObject(schema.properties) || !Array.isArray(schema.required)) return null;
  const props = schema.properties;
  if (!isObject(props.error) || props.error.type !== 'string' || !isObject(props.code) || props.code.type !== 'string') return null;
  const keys = Object.keys(props).sort().join(',');
  return [...(schema.required as string[])].sort().join(',') === keys ? keys : null;
}

/** True for a field marked `@hidden`: it never leaves in a response, so never in the reference either. */
export function isHiddenField(field: FieldInfo): boolean {
  return field.decorators.some((d) => d.name === 'hidden');
}

/**
 * The `components/schemas` name of each `type`, by type name: the type's own name, unless it is
 * one of the shared schemas' (`Error`), then with `Record` appended until free.
 */
export function recordComponentNames(types: readonly TypeInfo[]): Map<string, string> {
  const taken = new Set([...SHARED_SCHEMAS, ...types.map((t) => t.name)]);
  const names = new Map<string, string>();
  for (const type of types) {
    let name = type.name;
    if (SHARED_SCHEMAS.includes(name)) {
      while (taken.has(name)) name = `${name}Record`;
      taken.add(name);
    }
    names.set(type.name, name);
  }
  return names;
}

/**
 * The schema of a stored record of `type`: `id` (a UUID), every field but the `@hidden` ones with
 * its validators' keywords and doc, `created_at` and `updated_at` (date-times). Every field is
 * required (a stored record always holds it); one that need not be given also allows null.
 */
export function recordTypeSchema(type: TypeInfo): JsonSchema {
  const properties: Record<string, JsonSchema> = { id: { type: 'string', format: 'uuid', description: 'Set by the store: a UUID version 7 (time-ordered).' } };
  const required = ['id'];
  for (const field of type.fields) {
    if (isHiddenField(field)) continue;
    properties[field.name] = storedFieldSchema(field, fieldSchema(field));
    required.push(field.name);
  }
  properties.created_at = { type: 'string', format: 'date-time', description: 'Set by the store when the record is created (UTC, milliseconds).' };
  properties.updated_at = { type: 'string', format: 'date-time', description: 'Set by the store at every save (UTC, milliseconds).' };
  required.push('created_at', 'updated_at');
  const schema: JsonSchema = { type: 'object' };
  if (type.doc !== null) schema.description = type.doc;
  schema.properties = properties;
  schema.required = required;
  schema['x-rvm-source'] = `${type.file}:${type.line}`;
  return schema;
}

/**
 * A response schema ready for the document (see documentSchema), every record of a known type
 * in it (marked by inference with RECORD_TYPE_KEYWORD) replaced by a `$ref` to its component;
 * the mark of an unknown type is dropped, leaving the inferred schema inline.
 */
export function responseSchema(schema: JsonSchema, components: ReadonlyMap<string, string>): JsonSchema {
  const copy = documentSchema(schema);
  walkSchema(copy, (s) => {
    const type = s[RECORD_TYPE_KEYWORD];
    if (typeof type !== 'string') return;
    const name = components.get(type);
    if (name === undefined) {
      delete s[RECORD_TYPE_KEYWORD];
      return;
    }
    for (const key of Object.keys(s)) delete s[key];
    s.$ref = `${SCHEMAS_PATH}${name}`;
  });
  return copy;
}
