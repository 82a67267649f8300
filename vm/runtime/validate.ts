/**
 * The validation engine behind `validate {}` (the body) and `query {}`.
 *
 * At load, every field's decorators are resolved against the validators plugins registered and
 * checked (unknown names, wrong field types, argument counts and types, contradictory bounds, a
 * `@default` its own field refuses): each is a compile diagnostic. What survives is a plan per
 * route — one compiled check per decorator use — so a request only runs closures.
 *
 * Per request: presence (`@required`, `@default`, `name?:`), the field type (JSON strict; query,
 * form and multipart text coerced), then every rule; the 422 lists every failing field.
 */
import { HALT, type BodyKind, type Halt, type RequestInfo } from '../host/context.js';
import type { ParamSpec } from '../host/natives.js';
import type { ValidatorSpec } from '../host/validators.js';
import type { PluginRegistry } from '../host/registry.js';
import { isLiteral, type Constant, type FieldType, type Literal } from '../lang.js';
import { diagnostic, didYouMean, type Diagnostic } from '../diagnostics.js';
import { DIAG, HTTP, type DiagnosticCode } from '../errors.js';
import type { DecoratorMeta, FieldMeta, RouteMeta, TypeMeta } from '../bytecode/module.js';
import type { TypeValidation } from '../interp/link-records.js';
import { fromJson, intFromText, numberFromText, RvmError, typeName, type Value, type ValueObject } from '../values.js';
import { catalogueBody } from './response.js';
import type { ParsedBodyKind, UploadSpec } from './types.js';
import { UploadedFile } from './http/upload.js';
import { compileFirstPass, type FirstPass } from './validate-compile.js';
import { arityMismatch, takesArguments } from '../arity.js';
import { isDate, isDatetime } from '../calendar.js';

/** Upload limit of a `file` field without `@max_size`: generous for documents and photos, small enough to bound disk use. */
export const DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024;

/** One failing field, as listed in the 422 body's `details`. */
export interface FieldError {
  field: string;
  rule: string;
  message: string;
}

/** One decorator use, compiled. */
interface Rule {
  name: string;
  check: (value: Value, input: ValueObject) => boolean;
  message: string;
}

/** One section (`validate {}` or `query {}`), compiled. */
export interface SectionPlan {
  fields: FieldPlan[];
  /** The fields' names: all a large JSON body needs parsed (RequestContext.bodyFields). */
  names: string[];
  /**
   * Presence, type and the single-field rules of every field, compiled (validate-compile.ts) on
   * first use, so starting an app of many routes does not pay for routes nobody has called yet.
   */
  firstPass: FirstPass | null;
  /** Some rule looks at other fields: a second pass runs those rules. */
  crossField: boolean;
  /** Declaration order, for sorting failures found in two passes. */
  order: ReadonlyMap<string, number>;
}

/** One field, compiled. */
interface FieldPlan {
  name: string;
  type: FieldType;
  required: boolean;
  /** Rules whose check declares the `input` parameter: they run after every field is typed. */
  crossRules: Rule[];
  /** The `@default` value (already of the field's type), or undefined. */
  fallback: Value | undefined;
  rules: Rule[];
  /** The name is also an Object.prototype member (`__proto__`, `toString`): read own, define, never assign. */
  inherited: boolean;
}

/** The compiled validation of one route. */
export interface RouteValidation {
  body: SectionPlan | null;
  query: SectionPlan | null;
  uploads: UploadSpec | undefined;
}

const PRESENCE = new Set(['required', 'default']);

/**
 * The value of a present field in its declared type, or undefined when it has another type.
 * `fromText`: query, form and multipart values arrive as text and are coerced; JSON is strict.
 */
export function coerce(type: FieldType, raw: unknown, fromText: boolean): Value | undefined {
  switch (type) {
    case 'text':
      return typeof raw === 'string' ? raw : undefined;
    case 'int':
      if (typeof raw === 'number') return Number.isSafeInteger(raw) ? raw : undefined;
      if (fromText && typeof raw === 'string') return intFromText(raw) ?? undefined;
      return undefined;
    case 'number':
      if (typeof raw === 'number') return Number.isFinite(raw) ? raw : undefined;
      if (fromText && typeof raw === 'string') return numberFromText(raw) ?? undefined;
      return undefined;
    case 'bool':
      if (typeof raw === 'boolean') return raw;
      if (fromText && typeof raw === 'string') {
        const t = raw.trim().toLowerCase();
        if (t === 'true' || t === '1' || t === 'on' || t === 'yes') return true;
        if (t === 'false' || t === '0' || t === 'off' || t === 'no') return false;
      }
      return undefined;
    case 'list':
      if (Array.isArray(raw)) return fromJson(raw);
      return fromText && typeof raw === 'string' ? [raw] : undefined;
    case 'object':
      return raw !== null && typeof raw === 'object' && !Array.isArray(raw) && !(raw instanceof UploadedFile) ? fromJson(raw) : undefined;
    case 'date':
      return typeof raw === 'string' && isDate(raw) ? raw : undefined;
    case 'datetime':
      return typeof raw === 'string' && isDatetime(raw) ? raw : undefined;
    case 'file':
      return raw instanceof UploadedFile ? raw : undefined;
  }
}

const TYPE_MESSAGES: Record<FieldType, string> = {
  text: 'must be text',
  int: 'must be an integer',
  number: 'must be a number',
  bool: 'must be true or false',
  list: 'must be a list',
  object: 'must be an object',
  date: 'must be a date (YYYY-MM-DD)',
  datetime: 'must be an ISO 8601 date-time with a time zone',
  file: 'must be a file upload (multipart/form-data)',
};

/**
 * What every `text` field refuses before its decorators run, as no database can store it as
 * written: NUL (PostgreSQL refuses it) and a lone UTF-16 surrogate (UTF-8 cannot encode it; the
 * drivers would store U+FFFD instead). A field error each, named like a decorator's.
 */
const TEXT_RULES: readonly Rule[] = [
  { name: 'no_nul', check: (v) => !(v as string).includes('\u0000'), message: 'must not contain NUL characters' },
  { name: 'well_formed', check: (v) => (v as string & { isWellFormed(): boolean }).isWellFormed(), message: 'must not contain a lone surrogate' },
];
const NO_FIELDS: ValueObject = Object.freeze({}) as ValueObject;

/** The first of TEXT_RULES `text` breaks (record writes check nested texts with it), or null. */
export function unstorableText(text: string): { rule: string; message: string } | null {
  for (const r of TEXT_RULES) if (!r.check(text, NO_FIELDS)) return { rule: r.name, message: r.message };
  return null;
}

/** Runs one section's plan; returns the declared fields only (after defaults) or every failure. */
export function validateFields(
  plan: SectionPlan,
  source: unknown,
  fromText: boolean,
): { value: ValueObject; errors: null } | { value: null; errors: FieldError[] } {
  const input = (source !== null && typeof source === 'object' && !Array.isArray(source) ? source : {}) as ValueObject;
  const fields = plan.fields;
  const first = (plan.firstPass ??= compileFirstPass(fields, coerce, TYPE_MESSAGES))(input, fromText);
  const out = first.out;
  let errors = first.errors;
  // Rules that look at other fields (`@same`) run once every field is typed.
  if (plan.crossField) {
    for (let f = 0; f < fields.length; f++) {
      const field = fields[f]!;
      const rules = field.crossRules;
      if (rules.length === 0 || !Object.hasOwn(out, field.name)) continue;
      const raw = Object.hasOwn(input, field.name) ? input[field.name] : undefined;
      if (raw === undefined || raw === null) continue;
      for (let r = 0; r < rules.length; r++) {
        const rule = rules[r]!;
        if (!rule.check(out[field.name]!, out)) (errors ??= []).push({ field: field.name, rule: rule.name, message: rule.message });
      }
    }
    if (errors !== null) errors.sort((a, b) => plan.order.get(a.field)! - plan.order.get(b.field)!);
  }
  return errors === null ? { value: out, errors: null } : { value: null, errors };
}

// ---------------------------------------------------------------------------------------------
// Load time: resolve and check every decorator use

function literalFits(value: Literal, type: ParamSpec['type']): boolean {
  switch (type) {
    case undefined:
    case 'any':
      return true;
    case 'text':
      return typeof value === 'string';
    case 'int':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'bool':
      return typeof value === 'boolean';
    default:
      return false;
  }
}

/** What @default takes: one constant (checked against the field's type apart). */
const DEFAULT_PARAMS: readonly ParamSpec[] = [{ name: 'value', type: 'any' }];

/**
 * Arity and literal types of `args` against `params`; a message when they don't fit. Only a
 * @default (`data`) may be a list or object: validators take literals.
 */
function decoratorArgsProblem(name: string, params: readonly ParamSpec[], args: readonly Constant[], data: boolean): string | null {
  const expected = arityMismatch(params, args.length);
  if (expected !== null) return `@${name} ${takesArguments(expected)}, got ${args.length}`;
  for (let i = 0; i < args.length; i++) {
    const param = params[Math.min(i, params.length - 1)]!;
    const arg = args[i]!;
    if (isLiteral(arg) ? !literalFits(arg, param.type) : !data) {
      const wanted = param.type === 'int' ? 'an int' : param.type === 'any' || param.type === undefined ? 'a literal' : param.type;
      return `argument ${i + 1} (${param.name}) of @${name} must be ${wanted}, got ${typeName(arg)}`;
    }
  }
  return null;
}

interface PlanContext {
  registry: PluginRegistry;
  file: string;
  diagnostics: Diagnostic[];
}

function report(ctx: PlanContext, code: DiagnosticCode, message: string, at: { line: number; col: number }, hint?: string): void {
  ctx.diagnostics.push(diagnostic(code, message, { file: ctx.file, line: at.line, col: at.col }, { hint }));
}

/** Compiles one field's decorators, reporting every problem. */
function planField(field: FieldMeta, ctx: PlanContext, uploads: Record<string, number> | null): FieldPlan {
  const rules: Rule[] = field.type === 'text' ? [...TEXT_RULES] : [];
  const crossRules: Rule[] = [];
  const uses: { d: DecoratorMeta; args: readonly Literal[]; spec: ValidatorSpec; name: string }[] = [];
  let defaultAt: DecoratorMeta | null = null;
  for (const d of field.decorators) {
    const found = ctx.registry.validators.get(d.name);
    if (!found) {
      report(ctx, DIAG.E_UNKNOWN_VALIDATOR, `unknown validator '@${d.name}'`, d, didYouMean(d.name, ctx.registry.validators.keys()));
      continue;
    }
    const spec = found.spec;
    const name = found.aliasOf ?? found.name;
    if (!spec.types.includes(field.type)) {
      report(ctx, DIAG.E_VALIDATOR_TYPE, `@${d.name} does not apply to ${field.type} fields`, d, `it applies to ${spec.types.join(', ')}`);
      continue;
    }
    // Arguments that are not constants are E_NOT_CONSTANT's alone.
    if (d.unfolded) continue;
    const isDefault = name === 'default';
    // A @default list or object is checked against the field type below; validators see literals only.
    const args = d.args.every(isLiteral) ? d.args : null;
    const problem =
      decoratorArgsProblem(d.name, isDefault ? DEFAULT_PARAMS : spec.params, d.args, isDefault) ??
      (args === null ? null : (spec.checkArgs?.(args, field.type) ?? null));
    if (problem !== null) {
      const { message, hint } = typeof problem === 'string' ? { message: problem, hint: undefined } : problem;
      report(ctx, isDefault ? DIAG.E_BAD_DEFAULT : DIAG.E_VALIDATOR_ARGS, message, d, hint);
      continue;
    }
    if (isDefault) defaultAt = d;
    else if (args !== null) uses.push({ d, args, spec, name });
  }

  // Contradictory bounds: within one dimension, the largest minimum must not exceed the smallest maximum.
  const bounds = new Map<string, { min: number; max: number; minAt: DecoratorMeta | null; maxAt: DecoratorMeta | null }>();
  for (const { d, args, spec } of uses) {
    for (const [dimension, b] of Object.entries(spec.bounds?.(args, field.type) ?? {})) {
      const acc = bounds.get(dimension) ?? { min: -Infinity, max: Infinity, minAt: null, maxAt: null };
      if (b?.min !== undefined && b.min > acc.min) Object.assign(acc, { min: b.min, minAt: d });
      if (b?.max !== undefined && b.max < acc.max) Object.assign(acc, { max: b.max, maxAt: d });
      bounds.set(dimension, acc);
      if (acc.min > acc.max) {
        report(
          ctx,
          DIAG.E_CONTRADICTORY_BOUNDS,
          `@${d.name} contradicts @${(acc.minAt === d ? acc.maxAt : acc.minAt)!.name} on '${field.name}': no ${dimension} is at least ${acc.min} and at most ${acc.max}`,
          d,
        );
        break;
      }
    }
  }

  let fallback: Value | undefined;
  if (defaultAt !== null) {
    const value = defaultAt.args[0] ?? null;
    fallback = value === null ? null : coerce(field.type, value, false);
    if (fallback === undefined)
      report(ctx, DIAG.E_BAD_DEFAULT, `@default(${JSON.stringify(value)}) is not ${/^[aeiou]/.test(field.type) ? 'an' : 'a'} ${field.type}`, defaultAt);
  }
  for (const { d, args, spec, name } of uses) {
    if (PRESENCE.has(name)) continue;
    const check = spec.build(args, field.type);
    // A check that declares `input` compares with other fields, which must all be typed first.
    (check.length >= 2 ? crossRules : rules).push({ name: d.name, check, message: spec.message(args, field.type) });
    if (uploads !== null && spec.uploadLimit) uploads[field.name] = Math.min(uploads[field.name] ?? Infinity, spec.uploadLimit(args));
  }
  if (fallback !== undefined && fallback !== null && defaultAt !== null) {
    const refused = rules.find((r) => !r.check(fallback!, {})) ?? crossRules.find((r) => !r.check(fallback!, { [field.name]: fallback! }));
    if (refused)
      report(ctx, DIAG.E_BAD_DEFAULT, `@default(${JSON.stringify(defaultAt.args[0])}) fails @${refused.name} of its own field: ${refused.message}`, defaultAt);
  }
  if (uploads !== null && field.type === 'file' && uploads[field.name] === undefined) uploads[field.name] = DEFAULT_MAX_FILE_BYTES;
  return { name: field.name, type: field.type, required: field.required, fallback, rules, crossRules, inherited: field.name in Object.prototype };
}

function section(fields: FieldPlan[]): SectionPlan {
  return {
    fields,
    names: fields.map((f) => f.name),
    firstPass: null,
    crossField: fields.some((f) => f.crossRules.length > 0),
    order: new Map(fields.map((f, i) => [f.name, i])),
  };
}

/** Compiles the validation of one route (null when it has neither `validate {}` nor `query {}`), reporting every problem. */
function planRoute(meta: RouteMeta, ctx: PlanContext): RouteValidation | null {
  if (meta.body === null && meta.query === null) return null;
  const files: Record<string, number> = {};
  const body = meta.body ? section(meta.body.map((f) => planField(f, ctx, files))) : null;
  const query = meta.query ? section(meta.query.map((f) => planField(f, ctx, null))) : null;
  for (const f of meta.query ?? []) {
    if (f.type === 'file') report(ctx, DIAG.E_VALIDATOR_TYPE, `query field '${f.name}' cannot be a file`, f);
  }
  return { body, query, uploads: Object.keys(files).length > 0 ? { files } : undefined };
}

/** Compiles the validation of every route; diagnostics are compile errors. */
export function planValidation(
  routes: readonly { meta: RouteMeta; file: string }[],
  registry: PluginRegistry,
): { plans: Map<RouteMeta, RouteValidation>; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const plans = new Map<RouteMeta, RouteValidation>();
  for (const { meta, file } of routes) {
    const plan = planRoute(meta, { registry, file, diagnostics });
    if (plan !== null) plans.set(meta, plan);
  }
  return { plans, diagnostics };
}

/** The fields of a record type, planned like a `validate {}` block; the record provider's own decorators (`@hidden`) are its business. */
function planType(meta: TypeMeta, ctx: PlanContext): SectionPlan {
  const own = ctx.registry.records?.decorators;
  const fields = own === undefined ? meta.fields : meta.fields.map((f) => ({ ...f, decorators: f.decorators.filter((d) => !own.has(d.name)) }));
  return section(fields.map((f) => planField(f, ctx, null)));
}

/** Checks the decorators of every record type; diagnostics are compile errors. */
export function planTypes(types: readonly { meta: TypeMeta; file: string }[], registry: PluginRegistry): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  for (const { meta, file } of types) planType(meta, { registry, file, diagnostics });
  return diagnostics;
}

/**
 * Record writes validated as request bodies are (JSON strictness, presence, every decorator),
 * each type planned on first use; a type whose plan fails (a plugin changed under the same
 * name@version) refuses its writes with an internal error rather than skip a rule.
 */
export function typeValidation(registry: PluginRegistry): TypeValidation {
  return (meta, file) => {
    let plan: SectionPlan | string | null = null;
    return (input) => {
      if (plan === null) {
        const diagnostics: Diagnostic[] = [];
        const planned = planType(meta, { registry, file, diagnostics });
        plan = diagnostics.length > 0 ? diagnostics[0]!.message : planned;
      }
      if (typeof plan === 'string')
        throw new RvmError(`validation of type ${meta.name} does not compile against the loaded plugins: ${plan}`, HTTP.internal_error.code);
      return validateFields(plan, input, false);
    };
  };
}

// ---------------------------------------------------------------------------------------------
// Request time

/** What validating a request needs of its context (the runtime's RequestContext has it). */
export interface ValidationTarget {
  readonly request: Pick<RequestInfo, 'query'>;
  /** How the body arrived: form text is coerced, JSON is not. */
  readonly bodyKind: ParsedBodyKind;
  /** The body's fields `names` (a large JSON body parses only those). */
  bodyFields(names: readonly string[]): unknown;
  /** Hands over the validated body. */
  validated(value: Value): void;
  /** Hands over the validated query. */
  setQueryValue(value: Value): void;
  respond(status: number, body: Value, kind?: BodyKind): Halt;
}

/**
 * The validation plans of an app's routes, each compiled on first use, so a start does not pay
 * for routes nobody calls. Loading has already proved that every route plans without a
 * diagnostic (when its file was compiled, before its artefact was cached, or when a bundle was
 * opened); should planning here find one all the same (a plugin changed under an unchanged
 * name@version), the request fails with 500 rather than run with a rule left out.
 */
export class ValidationPlans {
  /** Each route's plan once built: null when it validates nothing, a text when it does not compile (why). */
  private readonly plans = new Map<RouteMeta, RouteValidation | null | string>();

  constructor(private readonly registry: PluginRegistry) {}

  /** The plan of `route`, or null when it validates nothing; throws when it does not compile. */
  of(route: RouteMeta): RouteValidation | null {
    const plan = this.planOf(route);
    if (typeof plan === 'string')
      throw new RvmError(`validation of ${route.method} ${route.path} does not compile against the loaded plugins: ${plan}`, HTTP.internal_error.code);
    return plan;
  }

  /**
   * The upload limits of `route`, read before its body: undefined when it takes no files or its
   * validation does not compile (the load reports that, or the route's VALIDATE answers 500).
   */
  uploadsOf(route: RouteMeta): UploadSpec | undefined {
    const plan = this.planOf(route);
    return typeof plan === 'string' ? undefined : plan?.uploads;
  }

  /** Plans `route` on first use, keeping the outcome: a failure is not retried on every request. */
  private planOf(route: RouteMeta): RouteValidation | null | string {
    let plan = this.plans.get(route);
    if (plan === undefined) {
      const diagnostics: Diagnostic[] = [];
      plan = planRoute(route, { registry: this.registry, file: route.path, diagnostics });
      if (diagnostics.length > 0) plan = diagnostics[0]!.message;
      this.plans.set(route, plan);
    }
    return plan;
  }

  /** VALIDATE for the request of `ctx`: section 0 validates the body into `body`, section 1 the query into `query`. */
  run(ctx: ValidationTarget, route: RouteMeta, section: number): void | Halt {
    const plan = this.of(route);
    const fields = section === 0 ? plan?.body : plan?.query;
    if (!fields) return;
    if (section === 0) {
      const source = ctx.bodyFields(fields.names);
      if (source !== null && (typeof source !== 'object' || Array.isArray(source))) {
        return reject(ctx, [{ field: 'body', rule: 'type', message: 'must be an object' }]);
      }
      const result = validateFields(fields, source, ctx.bodyKind === 'form' || ctx.bodyKind === 'multipart');
      if (result.errors !== null) return reject(ctx, result.errors);
      ctx.validated(result.value);
    } else {
      const result = validateFields(fields, ctx.request.query, true);
      if (result.errors !== null)
        return reject(
          ctx,
          result.errors.map((e) => ({ ...e, field: `query.${e.field}` })),
        );
      ctx.setQueryValue(result.value);
    }
  }
}

function reject(ctx: ValidationTarget, details: FieldError[]): Halt {
  ctx.respond(HTTP.validation_failed.status, catalogueBody(HTTP.validation_failed, HTTP.validation_failed.message, details) as unknown as Value, 'json');
  return HALT;
}
