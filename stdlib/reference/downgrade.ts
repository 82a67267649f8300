/**
 * The OpenAPI 3.0 rendering of a 3.1 document, for generators that predate 3.1: JSON Schema
 * 2020-12 keywords rewritten into the 3.0 schema dialect (`nullable`, boolean exclusive bounds,
 * `format: binary` files, a single `example`), and keywords 3.0 has no word for dropped.
 */
import { isObject, walkSchema, type JsonSchema } from '../../plugins/sdk.js';

/** The version string of the 3.0 rendering (the last 3.0.x every validator knows). */
const OPENAPI_30 = '3.0.3';

/** Where SPDX lists each license by its identifier. */
const SPDX_LICENSES = 'https://spdx.org/licenses/';

/** The keywords of a 3.0 Schema Object; anything else but `x-` extensions is dropped. */
const SCHEMA_30_KEYWORDS = new Set([
  '$ref',
  'title',
  'multipleOf',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'maxProperties',
  'minProperties',
  'required',
  'enum',
  'type',
  'allOf',
  'oneOf',
  'anyOf',
  'not',
  'items',
  'properties',
  'additionalProperties',
  'description',
  'format',
  'default',
  'nullable',
  'discriminator',
  'readOnly',
  'writeOnly',
  'xml',
  'externalDocs',
  'example',
  'deprecated',
]);

/**
 * Rewrites a 3.1 document built by `buildOpenApi` into 3.0.3, in place (the builder hands it a
 * fresh document; copying 1 MB of JSON would cost more than building it again). Each rewrite
 * is idempotent, so a schema object the document shares between two places is safe.
 */
export function downgradeTo30(doc: Record<string, unknown>): Record<string, unknown> {
  const out = doc;
  out.openapi = OPENAPI_30;
  delete out.jsonSchemaDialect;
  delete out.webhooks;
  // An SPDX `identifier` is 3.1's; 3.0 knows a license by name and url: the SPDX page of the identifier.
  const license = isObject(out.info) ? out.info.license : undefined;
  if (isObject(license) && typeof license.identifier === 'string') {
    license.url ??= `${SPDX_LICENSES}${encodeURIComponent(license.identifier)}.html`;
    delete license.identifier;
  }
  const components = out.components;
  if (isObject(components) && isObject(components.schemas)) for (const s of Object.values(components.schemas)) if (isObject(s)) downgradeSchema(s);
  if (isObject(out.paths)) {
    for (const item of Object.values(out.paths)) {
      if (!isObject(item)) continue;
      for (const op of Object.values(item)) if (isObject(op)) downgradeOperation(op);
    }
  }
  return out;
}

function downgradeOperation(op: JsonSchema): void {
  if (Array.isArray(op.parameters)) for (const p of op.parameters) if (isObject(p) && isObject(p.schema)) downgradeSchema(p.schema);
  const body = op.requestBody;
  if (isObject(body)) downgradeContent(body.content);
  if (isObject(op.responses)) {
    for (const r of Object.values(op.responses)) {
      if (!isObject(r)) continue;
      downgradeContent(r.content);
      if (isObject(r.headers)) for (const h of Object.values(r.headers)) if (isObject(h) && isObject(h.schema)) downgradeSchema(h.schema);
    }
  }
}

function downgradeContent(content: unknown): void {
  if (!isObject(content)) return;
  for (const media of Object.values(content)) if (isObject(media) && isObject(media.schema)) downgradeSchema(media.schema);
}

/** Rewrites one schema (and every schema nested in it) in place into the 3.0 dialect. */
export function downgradeSchema(schema: JsonSchema): void {
  walkSchema(schema, downgradeOne);
}

function downgradeOne(s: JsonSchema): void {
  if (Array.isArray(s.type)) typeList(s, s.type.map(String));
  else if (s.type === 'null') typeList(s, ['null']);
  if ('const' in s) {
    if (s.enum === undefined) s.enum = [s.const];
    delete s.const;
  }
  if (Array.isArray(s.examples)) {
    if (s.example === undefined && s.examples.length > 0) s.example = s.examples[0];
    delete s.examples;
  }
  exclusiveBound(s, 'exclusiveMinimum', 'minimum', (a, b) => a >= b);
  exclusiveBound(s, 'exclusiveMaximum', 'maximum', (a, b) => a <= b);
  if (s['x-rvm-type'] === 'file') {
    s.type = 'string';
    s.format = 'binary';
  } else if (s.contentEncoding === 'base64' && s.format === undefined) {
    s.format = 'byte';
  }
  if (isObject(s.items) === false && Array.isArray(s.prefixItems)) s.items = {};
  nullableAlternatives(s);
  for (const key of Object.keys(s)) if (!key.startsWith('x-') && !SCHEMA_30_KEYWORDS.has(key)) delete s[key];
}

/** `type: [t, 'null']` → `type: t, nullable: true`; several types → `anyOf`; only null → `nullable` with `enum: [null]`. */
function typeList(s: JsonSchema, types: string[]): void {
  const nullable = types.includes('null');
  const rest = types.filter((t) => t !== 'null');
  delete s.type;
  if (rest.length === 1) s.type = rest[0];
  else if (rest.length > 1) s.anyOf = [...(Array.isArray(s.anyOf) ? (s.anyOf as JsonSchema[]) : []), ...rest.map((t) => ({ type: t }))];
  else if (s.enum === undefined) s.enum = [null];
  if (nullable) s.nullable = true;
}

/**
 * `anyOf: [X, {type: null}]` (a record that may be null, already downgraded inside out): 3.0 has
 * no null type, and `nullable` needs a `type` beside it, so it becomes `type: t, nullable: true`
 * with the alternatives left (one `$ref` as `allOf`, 3.0's way to add to a reference). A `$ref`
 * names a component schema, an object in every rvm document. Alternatives of several types stay.
 */
function nullableAlternatives(s: JsonSchema): void {
  if (!Array.isArray(s.anyOf)) return;
  const isNull = (m: unknown) =>
    isObject(m) && m.type === undefined && m.nullable === true && Array.isArray(m.enum) && m.enum.length === 1 && m.enum[0] === null;
  const rest = (s.anyOf as unknown[]).filter((m) => !isNull(m)) as JsonSchema[];
  if (rest.length === s.anyOf.length || rest.length === 0) return;
  const types = new Set(rest.map((m) => (typeof m.$ref === 'string' ? 'object' : m.type)));
  const [type] = types;
  if (types.size !== 1 || typeof type !== 'string') return;
  delete s.anyOf;
  if (rest.length === 1 && typeof rest[0]!.$ref === 'string') s.allOf = rest;
  else s.anyOf = rest;
  s.type = type;
  s.nullable = true;
}

/** A 2020-12 numeric `exclusiveMinimum` as 3.0's `minimum` + `exclusiveMinimum: true` (the tighter bound wins). */
function exclusiveBound(
  s: JsonSchema,
  exclusive: 'exclusiveMinimum' | 'exclusiveMaximum',
  inclusive: 'minimum' | 'maximum',
  tighter: (a: number, b: number) => boolean,
): void {
  const bound = s[exclusive];
  if (typeof bound !== 'number') return;
  const current = s[inclusive];
  if (typeof current !== 'number' || tighter(bound, current)) {
    s[inclusive] = bound;
    s[exclusive] = true;
  } else {
    delete s[exclusive];
  }
}
