// JSON Schema helpers for the page: local $ref resolution, type labels, constraint text and
// valid example values for Try It. No DOM, so node tests can import it.

/** Nesting shown in a schema tree or walked for an example; deeper (or cyclic) schemas are cut. */
export const MAX_SCHEMA_DEPTH = 8;

/** Follows a local `#/...` reference in `doc`; anything else comes back as it is. */
export function deref(doc, schema, seen = 0) {
  if (!schema || typeof schema !== 'object' || typeof schema.$ref !== 'string' || seen > MAX_SCHEMA_DEPTH) return schema ?? {};
  if (!schema.$ref.startsWith('#/')) return schema;
  let node = doc;
  for (const raw of schema.$ref.slice(2).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    node = node && typeof node === 'object' ? node[key] : undefined;
  }
  return node === undefined ? schema : deref(doc, node, seen + 1);
}

/**
 * `allOf` merged into one schema (properties, required, the other keywords; later parts win),
 * references resolved: what a reader needs to see of `Error` narrowed to some codes.
 */
export function flatten(doc, raw, depth = 0) {
  const schema = deref(doc, raw);
  if (!schema || typeof schema !== 'object' || !Array.isArray(schema.allOf) || depth > MAX_SCHEMA_DEPTH) return schema ?? {};
  const { allOf, ...rest } = schema;
  const out = { properties: {}, required: [] };
  for (const part of [...allOf.map((p) => flatten(doc, p, depth + 1)), rest]) {
    for (const [key, value] of Object.entries(part)) {
      if (key === 'properties') {
        for (const [name, prop] of Object.entries(value ?? {})) {
          const before = out.properties[name];
          out.properties[name] = before ? { ...deref(doc, before), ...deref(doc, prop) } : prop;
        }
      } else if (key === 'required' && Array.isArray(value)) out.required = [...new Set([...out.required, ...value])];
      else out[key] = value;
    }
  }
  if (Object.keys(out.properties).length === 0) delete out.properties;
  if (out.required.length === 0) delete out.required;
  if (out.type === undefined && out.properties) out.type = 'object';
  return out;
}

/** The name of a `$ref` target (`Error` for `#/components/schemas/Error`), or null. */
export function refName(schema) {
  return schema && typeof schema.$ref === 'string' ? schema.$ref.split('/').pop() : null;
}

/** The declared type, with OpenAPI 3.1 `["string", "null"]` read as nullable. */
export function schemaType(schema) {
  const t = schema?.type;
  if (Array.isArray(t)) return t.filter((x) => x !== 'null')[0] ?? 'null';
  if (typeof t === 'string') return t;
  if (schema?.properties) return 'object';
  if (schema?.items) return 'array';
  return null;
}

/** True for an uploaded file (`format: binary`, or 3.1's `contentMediaType`). */
export function isFileSchema(schema) {
  if (!schema || typeof schema !== 'object') return false;
  if (typeof schema['x-rvm-type'] === 'string') return schema['x-rvm-type'] === 'file';
  // JSON or text content in a string (`@json`) is typed, not uploaded.
  const media = typeof schema.contentMediaType === 'string' ? schema.contentMediaType : '';
  return schema.format === 'binary' || (schema.type === 'string' && media !== '' && !/json|^text\//.test(media));
}

/** A short type label: `string (email)`, `array of integer`, `file`, `any`. */
export function typeLabel(doc, raw) {
  const schema = flatten(doc, raw);
  if (isFileSchema(schema)) return 'file';
  const named = refName(raw) ?? (Array.isArray(raw?.allOf) ? (raw.allOf.map(refName).find(Boolean) ?? null) : null);
  const type = schemaType(schema);
  if (type === 'array') {
    const items = schema.items ? typeLabel(doc, schema.items) : 'any';
    return `array of ${items}`;
  }
  if (type === null) {
    const alts = schema.anyOf ?? schema.oneOf;
    if (Array.isArray(alts)) return alts.map((s) => typeLabel(doc, s)).join(' | ');
    return named ?? 'any';
  }
  const base = named && type === 'object' ? named : type;
  return schema.format ? `${base} (${schema.format})` : base;
}

const CONSTRAINT_WORDS = [
  ['minLength', (v) => `at least ${v} characters`],
  ['maxLength', (v) => `at most ${v} characters`],
  ['minimum', (v) => `≥ ${v}`],
  ['maximum', (v) => `≤ ${v}`],
  ['exclusiveMinimum', (v) => `> ${v}`],
  ['exclusiveMaximum', (v) => `< ${v}`],
  ['multipleOf', (v) => `multiple of ${v}`],
  ['minItems', (v) => `at least ${v} items`],
  ['maxItems', (v) => `at most ${v} items`],
  ['pattern', (v) => `matches /${v}/`],
  ['enum', (v) => `one of ${v.map((x) => JSON.stringify(x)).join(', ')}`],
  ['const', (v) => `exactly ${JSON.stringify(v)}`],
];

/** Human words for the keywords of a schema (`at least 8 characters`, `one of "a", "b"`). */
export function constraints(schema) {
  const out = [];
  if (!schema || typeof schema !== 'object') return out;
  for (const [key, say] of CONSTRAINT_WORDS) if (schema[key] !== undefined && schema[key] !== null) out.push(say(schema[key]));
  return out;
}

/** `@min(8)` as written: string arguments quoted. */
export function decoratorText(d) {
  const args = Array.isArray(d.args) ? d.args : [];
  if (args.length === 0) return `@${d.name}`;
  return `@${d.name}(${args.map((a) => (typeof a === 'string' ? `'${a.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'` : JSON.stringify(a))).join(', ')})`;
}

/** Examples for text validators whose keywords alone don't say what passes. */
const TEXT_BY_DECORATOR = {
  email: () => 'user@example.com',
  url: () => 'https://example.com/',
  phone: () => '+14155550123',
  uuid: () => '3fa85f64-5717-4562-b3fc-2c963f66afa6',
  credit_card: () => '4111111111111111',
  ip: () => '192.0.2.1',
  ipv4: () => '192.0.2.1',
  ipv6: () => '2001:db8::1',
  slug: () => 'my-item',
  alphanumeric: () => 'abc123',
  alpha: () => 'example',
  numeric: () => '12345',
  lowercase: () => 'example',
  uppercase: () => 'EXAMPLE',
  hex: () => 'c0ffee',
  base64: () => 'aGVsbG8=',
  json: () => '{}',
  hostname: () => 'example.com',
  date: () => '2024-01-15',
  datetime: () => '2024-01-15T09:30:00Z',
  starts_with: (args) => `${args[0] ?? ''}example`,
  ends_with: (args) => `example${args[0] ?? ''}`,
  contains: (args) => `example${args[0] ?? ''}`,
};

/** Examples by format, for schemas without decorators (responses, plugin schemas). */
const TEXT_BY_FORMAT = {
  email: 'user@example.com',
  uri: 'https://example.com/',
  url: 'https://example.com/',
  uuid: '3fa85f64-5717-4562-b3fc-2c963f66afa6',
  date: '2024-01-15',
  'date-time': '2024-01-15T09:30:00Z',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
  hostname: 'example.com',
  byte: 'aGVsbG8=',
};

/** Guesses from a field name when nothing else tells: readable examples, all plain text. */
const TEXT_BY_NAME = [
  [/e-?mail/i, 'user@example.com'],
  [/password|secret|pass$/i, 'correct-horse-42'],
  [/^(first_?)?name$|^full_?name$/i, 'Ada Lovelace'],
  [/title/i, 'Hello world'],
  [/phone/i, '+14155550123'],
  [/(^|_)id$|Id$/, '1'],
  [/token|code/i, '123456'],
];

function decoratorArgs(schema, name) {
  const list = Array.isArray(schema?.['x-rvm-decorators']) ? schema['x-rvm-decorators'] : [];
  const found = list.find((d) => d && d.name === name);
  return found ? (Array.isArray(found.args) ? found.args : []) : null;
}

function hasDecorator(schema, name) {
  return decoratorArgs(schema, name) !== null;
}

/** Pads or cuts `text` to the length bounds of `schema`. */
function fitLength(text, schema) {
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : Infinity;
  let out = text;
  while (out.length < min) out += out.length === 0 ? 'x' : out;
  if (out.length > max) out = out.slice(0, Math.max(max, 0));
  return out.length < min ? out.padEnd(min, 'x') : out;
}

/** Moves a date or date-time example inside `@after` / `@before` bounds (a day past or before them). */
function withinDates(text, schema) {
  const after = decoratorArgs(schema, 'after')?.[0];
  const before = decoratorArgs(schema, 'before')?.[0];
  const DAY = 86400000;
  const shift = (bound, days) => {
    const t = Date.parse(String(bound));
    if (!Number.isFinite(t)) return null;
    const iso = new Date(t + days * DAY).toISOString();
    return text.length <= 10 ? iso.slice(0, 10) : `${iso.slice(0, 19)}Z`;
  };
  let out = text;
  if (after !== undefined && !(Date.parse(out) > Date.parse(String(after)))) out = shift(after, 1) ?? out;
  if (before !== undefined && !(Date.parse(out) < Date.parse(String(before)))) out = shift(before, -1) ?? out;
  return out;
}

/** Changes an example that `@not_one_of` excludes. */
function notExcluded(text, schema) {
  const excluded = decoratorArgs(schema, 'not_one_of') ?? [];
  let out = text;
  for (let n = 2; excluded.includes(out); n++) out = `${text}${n}`;
  return out;
}

function textExample(schema, name) {
  return notExcluded(withinDates(baseText(schema, name), schema), schema);
}

function baseText(schema, name) {
  const decorators = Array.isArray(schema['x-rvm-decorators']) ? schema['x-rvm-decorators'] : [];
  for (const d of decorators) {
    const make = d && TEXT_BY_DECORATOR[d.name];
    if (make) return fitLength(make(Array.isArray(d.args) ? d.args : []), schema);
  }
  if (schema.format && TEXT_BY_FORMAT[schema.format]) return TEXT_BY_FORMAT[schema.format];
  if (hasDecorator(schema, 'length')) {
    const n = Number(decoratorArgs(schema, 'length')[0]);
    if (Number.isFinite(n)) return 'x'.repeat(Math.max(0, n));
  }
  const byName = TEXT_BY_NAME.find(([re]) => re.test(name ?? ''));
  return fitLength(byName ? byName[1] : 'example', schema);
}

function numberExample(schema, integer) {
  let lo =
    typeof schema.minimum === 'number' ? schema.minimum : typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum + (integer ? 1 : 0.5) : null;
  const hi =
    typeof schema.maximum === 'number' ? schema.maximum : typeof schema.exclusiveMaximum === 'number' ? schema.exclusiveMaximum - (integer ? 1 : 0.5) : null;
  let value = lo ?? (hi !== null ? Math.min(hi, 1) : 1);
  if (integer) value = Math.ceil(value);
  const step = typeof schema.multipleOf === 'number' && schema.multipleOf > 0 ? schema.multipleOf : null;
  if (step !== null) value = Math.ceil(value / step) * step;
  if (hi !== null && value > hi) value = hi;
  if (lo === null && hi === null && step === null) lo = value;
  return value;
}

/**
 * A value `schema` accepts, for prefilling Try It: `example`, `default`, the first `enum`, else
 * built from the type, format, decorators and bounds. Files have no example (null).
 */
export function exampleFor(doc, raw, name = '', depth = 0) {
  const schema = deref(doc, raw);
  if (depth > MAX_SCHEMA_DEPTH || !schema || typeof schema !== 'object') return null;
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if (isFileSchema(schema)) return null;
  const alts = schema.anyOf ?? schema.oneOf;
  switch (schemaType(schema)) {
    case 'string':
      return textExample(schema, name);
    case 'integer':
      return numberExample(schema, true);
    case 'number':
      return numberExample(schema, false);
    case 'boolean':
      return true;
    case 'array': {
      const min = typeof schema.minItems === 'number' ? schema.minItems : typeof schema.minLength === 'number' ? schema.minLength : 1;
      const fromItems = schema.items ? exampleFor(doc, schema.items, name, depth + 1) : null;
      const item = fromItems ?? 'example';
      return Array.from({ length: Math.max(min, 1) }, () => item);
    }
    case 'object': {
      const out = {};
      for (const [key, prop] of Object.entries(schema.properties ?? {})) out[key] = exampleFor(doc, prop, key, depth + 1);
      return out;
    }
    default:
      return Array.isArray(alts) && alts.length > 0 ? exampleFor(doc, alts[0], name, depth + 1) : null;
  }
}

/**
 * Examples for every field of an object schema: a field with `@same('other')` copies the
 * other's example, so a prefilled form passes as a whole.
 */
export function fieldExamples(doc, objectSchema) {
  const schema = deref(doc, objectSchema);
  const out = {};
  const props = schema?.properties ?? {};
  for (const [key, prop] of Object.entries(props)) out[key] = exampleFor(doc, prop, key);
  for (const [key, prop] of Object.entries(props)) {
    const same = decoratorArgs(deref(doc, prop), 'same');
    if (same && typeof same[0] === 'string' && same[0] in out) out[key] = out[same[0]];
  }
  return out;
}
