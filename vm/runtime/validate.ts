/**
 * Field validation for `validate {}` (the body) and `query {}`: presence, `@default` and the field
 * type, with JSON strict and query/form text coerced. Decorators beyond `@default`/`@required`
 * are applied by validators that plugins register (see PluginRegistry.validators).
 */
import { HALT, type Halt, type Literal } from '../../plugins/sdk.js';
import type { FieldMeta, RouteMeta } from '../module.js';
import type { PluginRegistry } from '../../plugins/registry.js';
import type { VmHost } from '../program.js';
import { fromJson, setField, type Value, type ValueObject } from '../values.js';
import type { RequestContext } from './context.js';
import { errorBody } from './response.js';

/** One failing field, as listed in the 422 body's `details`. */
export interface FieldError {
  field: string;
  rule: string;
  message: string;
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const ISO_DATETIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?([Zz]|[+-]\d{2}:?\d{2})$/;
const INT_TEXT = /^[+-]?\d+$/;
const NUMBER_TEXT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

function validDate(text: string): boolean {
  const m = ISO_DATE.exec(text);
  if (!m) return false;
  const d = new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!));
  return d.getUTCFullYear() === +m[1]! && d.getUTCMonth() === +m[2]! - 1 && d.getUTCDate() === +m[3]!;
}

/** Checks (and for text sources coerces) a present value against the field type; undefined = wrong type. */
function typed(field: FieldMeta, raw: unknown, fromText: boolean): Value | undefined {
  const text = typeof raw === 'string' ? raw : null;
  switch (field.type) {
    case 'text':
      return typeof raw === 'string' ? raw : undefined;
    case 'int':
      if (typeof raw === 'number' && Number.isSafeInteger(raw)) return raw;
      return fromText && text !== null && INT_TEXT.test(text.trim()) && Number.isSafeInteger(Number(text)) ? Number(text) : undefined;
    case 'number':
      if (typeof raw === 'number' && Number.isFinite(raw)) return raw;
      return fromText && text !== null && NUMBER_TEXT.test(text.trim()) ? Number(text) : undefined;
    case 'bool':
      if (typeof raw === 'boolean') return raw;
      if (fromText && text !== null) {
        const t = text.trim().toLowerCase();
        if (t === 'true' || t === '1' || t === 'on' || t === 'yes') return true;
        if (t === 'false' || t === '0' || t === 'off' || t === 'no') return false;
      }
      return undefined;
    case 'list':
      if (Array.isArray(raw)) return fromJson(raw);
      return fromText && text !== null ? [text] : undefined;
    case 'object':
      return raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? fromJson(raw) : undefined;
    case 'date':
      return text !== null && validDate(text) ? text : undefined;
    case 'datetime':
      return text !== null && ISO_DATETIME.test(text) && !Number.isNaN(Date.parse(text.replace(' ', 'T'))) ? text : undefined;
    case 'file':
      return undefined;
  }
}

const TYPE_MESSAGES: Record<string, string> = {
  text: 'must be text',
  int: 'must be an integer',
  number: 'must be a number',
  bool: 'must be true or false',
  list: 'must be a list',
  object: 'must be an object',
  date: 'must be a date (YYYY-MM-DD)',
  datetime: 'must be an ISO 8601 date-time',
  file: 'must be a file upload (multipart/form-data)',
};

/** Validates `source` against `fields`; returns the declared fields only (after defaults) or the failures. */
export function validateFields(
  fields: readonly FieldMeta[],
  source: unknown,
  fromText: boolean,
  registry: PluginRegistry,
): { value: ValueObject; errors: null } | { value: null; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const out: ValueObject = {};
  const input = source !== null && typeof source === 'object' && !Array.isArray(source) ? (source as Record<string, unknown>) : {};
  for (const field of fields) {
    const present = Object.hasOwn(input, field.name) && input[field.name] !== null && input[field.name] !== undefined;
    if (!present) {
      const dflt = field.decorators.find((d) => d.name === 'default');
      if (dflt) setField(out, field.name, fromJson(dflt.args[0] ?? null));
      else if (field.required) errors.push({ field: field.name, rule: 'required', message: 'is required' });
      continue;
    }
    const value = typed(field, input[field.name], fromText);
    if (value === undefined) {
      errors.push({ field: field.name, rule: 'type', message: TYPE_MESSAGES[field.type] ?? 'has the wrong type' });
      continue;
    }
    for (const d of field.decorators) {
      const validator = registry.validators.get(d.name)?.spec;
      if (!validator || validator.check(value, d.args as Literal[], field.type)) continue;
      errors.push({ field: field.name, rule: d.name, message: validator.message(d.args as Literal[], field.type) });
    }
    setField(out, field.name, value);
  }
  return errors.length === 0 ? { value: out, errors: null } : { value: null, errors };
}

/** The VM's VALIDATE hook: section 0 validates the body into `body`, section 1 the query into `query`. */
export function createValidateHook(registry: PluginRegistry) {
  return (host: VmHost, route: RouteMeta, section: number): void | Halt => {
    const ctx = host as unknown as RequestContext;
    const fields = section === 0 ? route.body : route.query;
    if (fields === null) return;
    const fromText = section === 1 || ctx.bodyKind === 'form';
    const source = section === 0 ? ctx.request.body : ctx.request.query;
    if (section === 0 && source !== null && (typeof source !== 'object' || Array.isArray(source))) {
      return reject(ctx, [{ field: '', rule: 'type', message: 'the body must be an object' }]);
    }
    const result = validateFields(fields, source, fromText, registry);
    if (result.errors !== null) return reject(ctx, result.errors.map((e) => (section === 1 ? { ...e, field: `query.${e.field}` } : e)));
    if (section === 0) ctx.body = result.value;
    else ctx.setQueryValue(result.value);
  };
}

function reject(ctx: RequestContext, details: FieldError[]): Halt {
  ctx.respond(422, errorBody('Validation failed', 'validation_failed', details) as unknown as Value, 'json');
  return HALT;
}
