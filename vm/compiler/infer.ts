/**
 * Response schema inference: from the response helpers, `response {}` statements and `fail`s of
 * a route body, the statuses the route can answer with and a JSON Schema of each body; whatever
 * cannot be inferred is the empty schema `{}`. A call of a `fn` or native is left as a mark
 * naming it (CALL_KEYWORD): files compile alone, so the routes code resolves it once the app is
 * linked (vm/runtime/routes.ts), to the fn's inferred `returns` or the native's declared type.
 */
import type { Block, Expr, IfStmt, Literal, RouteDecl, Stmt } from '../front/ast.js';
import { fieldsSchema, fieldTypeSchema, NULL_SCHEMA, nullable, recordResultSchema, withoutNull } from './field-schema.js';
import { namesType } from './compile-meta.js';
import { fold } from './fold.js';
import type { FieldMeta, JsonSchema, ResponseMeta } from '../bytecode/module.js';
import { helperStatus, statusHelpers } from '../http-status.js';
import { HTTP } from '../errors.js';

/** What inference needs to know beyond the route itself. */
export interface InferContext {
  /** Fields of each `type` declared in the same file. */
  types: ReadonlyMap<string, readonly FieldMeta[]>;
  /** The route's `validate` fields (null without a validate block). */
  body: readonly FieldMeta[] | null;
  /** The route's `query` fields (null without a query block). */
  query: readonly FieldMeta[] | null;
  /** The record provider's methods by name, with what each declares it returns (CompileOptions.recordMethods). */
  recordMethods: RecordMethods;
}

/** What the compiler reads of the record provider's methods: by name, what each declares it returns (a RECORD_RESULTS word or a result type). */
export type RecordMethods = ReadonlyMap<string, { readonly returns?: string }>;

/** The body every error response of the runtime has: `{error, code}`. */
export const ERROR_BODY_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['error', 'code'],
  properties: { error: { type: 'string' }, code: { type: 'string' } },
};

/** The 422 body of a failed `validate {}` or `query {}`: every failing field. */
export const VALIDATION_ERROR_SCHEMA: JsonSchema = {
  type: 'object',
  description: 'A failed validation: one entry per failing field and rule.',
  required: ['error', 'code', 'details'],
  properties: {
    error: { type: 'string' },
    code: { type: 'string', enum: [HTTP.validation_failed.code] },
    details: {
      type: 'array',
      items: {
        type: 'object',
        required: ['field', 'rule', 'message'],
        properties: {
          field: { type: 'string', description: 'The field name; a query field is named with the prefix `query.` (for example `query.page`).' },
          rule: { type: 'string', description: 'The decorator that failed (`email`, `min`, ...), or `required` / `type`.' },
          message: { type: 'string' },
        },
      },
    },
  },
};

/** What a response helper's arguments mean for the response it makes. */
export type HelperKind = 'value' | 'empty' | 'error' | 'redirect' | 'json' | 'text' | 'html';

/** What the arguments of the status table's helper mean, by its status. */
function helperKind(status: number): HelperKind {
  if (status === 204) return 'empty';
  if (status >= 300 && status < 400) return 'redirect';
  return status >= 400 ? 'error' : 'value';
}

/**
 * Each `response.*` helper: its (default) status and what its arguments mean. The status helpers
 * come from the one status table (vm/http-status.ts), then the body helpers that answer with
 * `ok`'s status. The compiler infers responses from it, the core plugin registers the helpers
 * from it (through the SDK).
 */
export const RESPONSE_HELPERS: Readonly<Record<string, { status: number; kind: HelperKind }>> = {
  ...Object.fromEntries(statusHelpers().map(({ helper, status }) => [helper, { status, kind: helperKind(status) }])),
  json: { status: helperStatus('ok'), kind: 'json' },
  text: { status: helperStatus('ok'), kind: 'text' },
  html: { status: helperStatus('ok'), kind: 'html' },
};

/**
 * The keyword of the mark a call `name(...)` leaves in a schema: `{ "x-rvm-call": "name" }`,
 * resolved when the app is linked (resolveCalls in vm/runtime/routes.ts).
 */
export const CALL_KEYWORD = 'x-rvm-call';

/** The inferred responses of a route, one per status, sorted by status. */
export function inferResponses(route: RouteDecl, context: InferContext): ResponseMeta[] {
  const walker = new Walker(context);
  walker.block(route.body);
  const entries = walker.entries;
  if (!endsHandler(route.body)) {
    entries.push({ status: 204, source: 'end of handler', contentType: null, schema: {}, line: route.line });
  }
  const section = route.validate ?? route.query;
  if (section) {
    entries.push({ status: 422, source: 'validate', contentType: 'application/json', schema: VALIDATION_ERROR_SCHEMA, line: section.line });
  }
  return mergeResponses(entries);
}

/**
 * What a `guard_definition` or `fn` body can answer with (its `fail`s and response helpers), and
 * the schema of what it returns: every `return`'s value, null for a bare `return` or for falling
 * off the end.
 */
export function inferCallable(body: readonly Stmt[], context: InferContext): { responses: ResponseMeta[]; returns: JsonSchema } {
  const walker = new Walker(context);
  walker.block(body);
  if (!endsHandler(body, true)) walker.returns.push(NULL_SCHEMA);
  return { responses: mergeResponses(walker.entries), returns: unionSchema(walker.returns) };
}

/**
 * Whether control can never fall off the end of these statements (judged on the last one); with
 * `returning`, a `return` ends them too (a fn's body).
 */
function endsHandler(body: readonly Stmt[], returning = false): boolean {
  const last = body[body.length - 1];
  return last !== undefined && stmtEnds(last, returning);
}

function stmtEnds(stmt: Stmt | IfStmt, returning: boolean): boolean {
  switch (stmt.kind) {
    case 'Return':
      return returning;
    case 'Fail':
    case 'Throw':
    case 'Response':
      return true;
    case 'ExprStmt':
      return helperName(stmt.expr) !== null;
    case 'If':
      return (
        endsHandler(stmt.then.body, returning) &&
        stmt.otherwise !== null &&
        (stmt.otherwise.kind === 'If' ? stmtEnds(stmt.otherwise, returning) : endsHandler(stmt.otherwise.body, returning))
      );
    case 'Try':
      return endsHandler(stmt.body.body, returning) && endsHandler(stmt.handler.body, returning);
    default:
      return false;
  }
}

/** `ok` for a call `response.ok(...)` of a known helper, else null. */
function helperName(expr: Expr): string | null {
  if (expr.kind !== 'Call' || expr.callee.kind !== 'Member') return null;
  const object = expr.callee.object;
  if (object.kind !== 'Name' || object.name !== 'response') return null;
  return Object.hasOwn(RESPONSE_HELPERS, expr.callee.name) ? expr.callee.name : null;
}

/**
 * One response per status and media type, sorted by status; the schemas of one answered several
 * ways are its `anyOf`. A status answered as JSON and as text (`response.ok` and `response.text`
 * in two branches) keeps both: a client must accept either.
 */
export function mergeResponses(entries: readonly ResponseMeta[]): ResponseMeta[] {
  const groups = new Map<string, { meta: ResponseMeta; schemas: JsonSchema[]; keys: Set<string> }>();
  for (const entry of entries) {
    const key = canonical(entry.schema);
    const groupKey = `${entry.status} ${entry.contentType}`;
    const group = groups.get(groupKey);
    if (!group) {
      groups.set(groupKey, { meta: { ...entry }, schemas: [entry.schema], keys: new Set([key]) });
      continue;
    }
    if (!group.keys.has(key)) {
      group.keys.add(key);
      group.schemas.push(entry.schema);
    }
  }
  return [...groups.values()]
    .sort((a, b) => a.meta.status - b.meta.status)
    .map((g) => ({ ...g.meta, schema: g.schemas.length === 1 ? g.schemas[0]! : { anyOf: g.schemas } }));
}

/** JSON text with sorted keys, so equal schemas compare equal whatever their key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    return `{${Object.keys(obj)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(obj[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function sameSchema(a: JsonSchema, b: JsonSchema): boolean {
  return canonical(a) === canonical(b);
}

/** One schema for values that may be any of `schemas`: the one they share, else their `anyOf` (null allowed as `nullable` does). */
function unionSchema(schemas: readonly JsonSchema[]): JsonSchema {
  const distinct: JsonSchema[] = [];
  for (const schema of schemas) if (!distinct.some((d) => sameSchema(d, schema))) distinct.push(schema);
  const values = distinct.filter((s) => !sameSchema(s, NULL_SCHEMA));
  if (values.length === 0) return distinct[0] ?? {};
  const bare = withoutExample(values[0]!);
  // Values of one type differing only in their example (`return 'a'`, `return 'b'`) are that type.
  const one = values.length === 1 ? values[0]! : values.every((v) => sameSchema(withoutExample(v), bare)) ? bare : { anyOf: values };
  return values.length === distinct.length ? one : nullable(one);
}

/** The schema of a literal value, with the value as its example. */
export function literalSchema(value: Literal): JsonSchema {
  if (value === null) return { type: 'null' };
  switch (typeof value) {
    case 'string':
      return { type: 'string', example: value };
    case 'boolean':
      return { type: 'boolean', example: value };
    default:
      return { type: Number.isInteger(value) ? 'integer' : 'number', example: value };
  }
}

function withoutExample(schema: JsonSchema): JsonSchema {
  const { example: _example, ...rest } = schema;
  return rest;
}

/** A constant integer status, or null. */
function constantStatus(expr: Expr | undefined): number | null {
  if (!expr) return null;
  const folded = fold(expr);
  return folded && typeof folded.value === 'number' && Number.isInteger(folded.value) ? folded.value : null;
}

/** The media type a `headers: { 'Content-Type': '…' }` literal sets (parameters dropped), or null. */
function declaredContentType(headers: Expr | undefined): string | null {
  if (headers?.kind !== 'Object') return null;
  const entry = headers.entries.findLast((e) => e.key.toLowerCase() === 'content-type');
  const value = entry ? fold(entry.value)?.value : undefined;
  return typeof value === 'string' && value.trim() !== '' ? value.split(';')[0]!.trim().toLowerCase() : null;
}

/** Walks a route body in source order, tracking local schemas and collecting response entries. */
class Walker {
  readonly entries: ResponseMeta[] = [];
  /** The schema of each `return`'s value (null for a bare one). */
  readonly returns: JsonSchema[] = [];
  /** Schema of each local so far; null once two assignments disagreed. */
  private readonly locals = new Map<string, JsonSchema | null>();
  /** How many branches and loops enclose the statement walked: a field set in one may be left unset. */
  private conditional = 0;

  constructor(private readonly context: InferContext) {}

  block(body: readonly Stmt[]): void {
    for (const stmt of body) this.stmt(stmt);
  }

  private blockOf(block: Block): void {
    this.block(block.body);
  }

  /** A block that may not run, or not to its end. */
  private branch(block: Block): void {
    this.conditional++;
    this.blockOf(block);
    this.conditional--;
  }

  private bind(name: string, schema: JsonSchema): void {
    if (!this.locals.has(name)) this.locals.set(name, schema);
    else {
      const known = this.locals.get(name);
      if (known && !sameSchema(known, schema)) this.locals.set(name, null);
    }
  }

  private stmt(stmt: Stmt | IfStmt): void {
    switch (stmt.kind) {
      case 'Assign': {
        this.visit(stmt.value);
        const target = stmt.target;
        // `x += v` stores what `x + v` gives.
        const stored: Expr = stmt.op === null ? stmt.value : { kind: 'Binary', op: stmt.op, left: target, right: stmt.value, line: stmt.line, col: stmt.col };
        if (target.kind === 'Name') this.bind(target.name, this.schemaOf(stored));
        else if (target.kind === 'Member' && target.object.kind === 'Name') this.setProperty(target.object.name, target.name, this.schemaOf(stored));
        else this.visit(target);
        return;
      }
      case 'If':
        this.visit(stmt.cond);
        this.checked(stmt.cond);
        this.branch(stmt.then);
        if (stmt.otherwise) {
          if (stmt.otherwise.kind === 'If') {
            this.conditional++;
            this.stmt(stmt.otherwise);
            this.conditional--;
          } else this.branch(stmt.otherwise);
        }
        return;
      case 'For': {
        this.visit(stmt.iterable);
        const iterable = this.schemaOf(stmt.iterable);
        const items = iterable.type === 'array' && iterable.items ? (iterable.items as JsonSchema) : {};
        if (stmt.key !== null) this.bind(stmt.key, {});
        this.bind(stmt.value, iterable.type === 'array' ? items : {});
        this.branch(stmt.body);
        return;
      }
      case 'While':
        this.visit(stmt.cond);
        this.branch(stmt.body);
        return;
      case 'Try':
        this.branch(stmt.body);
        this.bind(stmt.errName, ERROR_BODY_SCHEMA);
        this.branch(stmt.handler);
        return;
      case 'Return':
        if (stmt.value) this.visit(stmt.value);
        this.returns.push(stmt.value ? this.schemaOf(stmt.value) : NULL_SCHEMA);
        return;
      case 'Throw':
        this.visit(stmt.code);
        if (stmt.message) this.visit(stmt.message);
        return;
      case 'Fail': {
        this.visit(stmt.status);
        if (stmt.message) this.visit(stmt.message);
        const status = constantStatus(stmt.status);
        if (status !== null) this.entries.push({ status, source: 'fail', contentType: 'application/json', schema: ERROR_BODY_SCHEMA, line: stmt.line });
        return;
      }
      case 'Save':
      case 'Delete':
        this.visit(stmt.record);
        return;
      case 'Transaction':
        this.blockOf(stmt.body);
        return;
      case 'Response':
        this.visit(stmt.fields);
        this.responseStatement(stmt.fields.entries, stmt.line);
        return;
      case 'ExprStmt':
        this.visit(stmt.expr);
        return;
      case 'Break':
      case 'Continue':
        return;
    }
  }

  /**
   * `x.f = v` on a local known to be an object: the property joins its schema, required unless
   * it is set only in a branch or loop (which may not run). Set twice, it is either value.
   */
  private setProperty(name: string, field: string, schema: JsonSchema): void {
    const known = this.locals.get(name);
    if (known?.type !== 'object' || typeof known.properties !== 'object') return;
    const properties = known.properties as Record<string, JsonSchema>;
    const required = Array.isArray(known.required) ? (known.required as string[]) : [];
    const value = Object.hasOwn(properties, field) ? unionSchema([properties[field]!, schema]) : schema;
    const always = this.conditional === 0 && !required.includes(field);
    this.locals.set(name, { ...known, properties: { ...properties, [field]: value }, required: always ? [...required, field] : required });
  }

  /**
   * After `if cond`, a local the condition tests (`if !task`, `if task == null`) is taken as
   * checked for null: a `T.find` result answered after it is the record alone.
   */
  private checked(cond: Expr): void {
    switch (cond.kind) {
      case 'Name': {
        const known = this.locals.get(cond.name);
        if (known) this.locals.set(cond.name, withoutNull(known));
        return;
      }
      case 'Unary':
        this.checked(cond.operand);
        return;
      case 'Binary':
      case 'Logical':
        this.checked(cond.left);
        this.checked(cond.right);
        return;
      default:
        return;
    }
  }

  private responseStatement(entries: readonly { key: string; value: Expr }[], line: number): void {
    const last = new Map<string, Expr>();
    for (const entry of entries) last.set(entry.key, entry.value);
    const statusExpr = last.get('status');
    const status = statusExpr ? constantStatus(statusExpr) : 200;
    if (status === null) return;
    const source = 'response {}';
    const json = last.get('json');
    const declared = declaredContentType(last.get('headers'));
    if (json) this.entries.push({ status, source, contentType: declared ?? 'application/json', schema: this.schemaOf(json), line });
    else if (last.has('text')) this.entries.push({ status, source, contentType: declared ?? 'text/plain', schema: { type: 'string' }, line });
    else if (last.has('html')) this.entries.push({ status, source, contentType: declared ?? 'text/html', schema: { type: 'string' }, line });
    else this.entries.push({ status, source, contentType: null, schema: {}, line });
  }

  /** Visits every sub-expression, recording the response helper calls among them. */
  private visit(expr: Expr): void {
    switch (expr.kind) {
      case 'Template':
        for (const part of expr.parts) if (typeof part !== 'string') this.visit(part);
        return;
      case 'List':
        for (const item of expr.items) this.visit(item);
        return;
      case 'Object':
        for (const entry of expr.entries) this.visit(entry.value);
        return;
      case 'Unary':
        this.visit(expr.operand);
        return;
      case 'Binary':
      case 'Logical':
        this.visit(expr.left);
        this.visit(expr.right);
        return;
      case 'Conditional':
        this.visit(expr.cond);
        this.visit(expr.then);
        this.visit(expr.otherwise);
        return;
      case 'Member':
        this.visit(expr.object);
        return;
      case 'Index':
        this.visit(expr.object);
        this.visit(expr.index);
        return;
      case 'Call':
        for (const arg of expr.args) this.visit(arg);
        this.helperCall(expr);
        return;
      default:
        return;
    }
  }

  private helperCall(call: Expr & { kind: 'Call' }): void {
    const name = helperName(call);
    if (name === null) return;
    const helper = RESPONSE_HELPERS[name]!;
    const source = `response.${name}`;
    const line = call.line;
    const [first, second] = call.args;
    switch (helper.kind) {
      case 'value':
        this.entries.push({ status: helper.status, source, contentType: 'application/json', schema: first ? this.schemaOf(first) : {}, line });
        return;
      case 'empty':
        this.entries.push({ status: helper.status, source, contentType: null, schema: {}, line });
        return;
      case 'redirect': {
        const status = second ? constantStatus(second) : helper.status;
        if (status !== null) this.entries.push({ status, source, contentType: null, schema: {}, line });
        return;
      }
      case 'error':
        this.entries.push({ status: helper.status, source, contentType: 'application/json', schema: ERROR_BODY_SCHEMA, line });
        return;
      case 'json': {
        const status = constantStatus(first);
        if (status !== null) this.entries.push({ status, source, contentType: 'application/json', schema: second ? this.schemaOf(second) : {}, line });
        return;
      }
      case 'text':
        this.entries.push({ status: helper.status, source, contentType: 'text/plain', schema: { type: 'string' }, line });
        return;
      case 'html':
        this.entries.push({ status: helper.status, source, contentType: 'text/html', schema: { type: 'string' }, line });
        return;
    }
  }

  /** The schema of the value `expr` produces, as far as it can be told statically. */
  schemaOf(expr: Expr): JsonSchema {
    const folded = fold(expr);
    if (folded) return literalSchema(folded.value);
    switch (expr.kind) {
      case 'Template':
        return { type: 'string' };
      case 'List':
        return { type: 'array', items: this.commonSchema(expr.items.map((item) => this.schemaOf(item))) };
      case 'Object': {
        const properties: Record<string, JsonSchema> = {};
        for (const entry of expr.entries) properties[entry.key] = this.schemaOf(entry.value);
        const keys = Object.keys(properties);
        return keys.length > 0 ? { type: 'object', properties, required: keys } : { type: 'object', properties };
      }
      case 'Name':
        return this.nameSchema(expr.name);
      case 'Member':
        // An optional chain may be null wherever it stops: nothing is known of it.
        if (expr.optional || expr.chained) return {};
        return this.memberSchema(expr.object, expr.name);
      case 'Index': {
        if (expr.optional || expr.chained) return {};
        const object = this.schemaOf(expr.object);
        return object.type === 'array' && object.items ? (object.items as JsonSchema) : {};
      }
      case 'Call':
        return this.callSchema(expr);
      case 'Unary':
        return expr.op === '!' ? { type: 'boolean' } : { type: 'number' };
      case 'Binary':
        switch (expr.op) {
          case '+': {
            const isText = (s: JsonSchema) => s.type === 'string';
            return isText(this.schemaOf(expr.left)) || isText(this.schemaOf(expr.right)) ? { type: 'string' } : { type: 'number' };
          }
          case '-':
          case '*':
          case '/':
          case '%':
          case '**':
            return { type: 'number' };
          default:
            return { type: 'boolean' };
        }
      case 'Logical': {
        const left = this.schemaOf(expr.left);
        return sameSchema(left, this.schemaOf(expr.right)) ? left : {};
      }
      case 'Conditional': {
        const then = this.schemaOf(expr.then);
        return sameSchema(then, this.schemaOf(expr.otherwise)) ? then : {};
      }
      default:
        return {};
    }
  }

  private commonSchema(schemas: JsonSchema[]): JsonSchema {
    if (schemas.length === 0) return {};
    const first = schemas[0]!;
    if (schemas.every((s) => sameSchema(s, first))) return first;
    const bare = withoutExample(first);
    return schemas.every((s) => sameSchema(withoutExample(s), bare)) ? bare : {};
  }

  private nameSchema(name: string): JsonSchema {
    const local = this.locals.get(name);
    if (local !== undefined) return local ?? {};
    switch (name) {
      case 'body':
        return this.context.body ? fieldsSchema(this.context.body) : {};
      case 'query':
        return this.context.query ? fieldsSchema(this.context.query) : {};
      default:
        return {};
    }
  }

  private memberSchema(object: Expr, name: string): JsonSchema {
    if (object.kind === 'Name' && !this.locals.has(object.name)) {
      const fields = object.name === 'body' ? this.context.body : object.name === 'query' ? this.context.query : undefined;
      if (fields) {
        const field = fields.find((f) => f.name === name);
        return field ? fieldTypeSchema(field.type) : {};
      }
      if (object.name === 'params') return { type: 'string' };
    }
    const schema = this.schemaOf(object);
    const properties = schema.properties as Record<string, JsonSchema> | undefined;
    return properties && Object.hasOwn(properties, name) ? properties[name]! : {};
  }

  private callSchema(call: Expr & { kind: 'Call' }): JsonSchema {
    const callee = call.callee;
    if (callee.kind === 'Name') return { [CALL_KEYWORD]: callee.name };
    if (callee.kind !== 'Member' || callee.object.kind !== 'Name') return {};
    const type = callee.object.name;
    const returns = this.context.recordMethods.get(callee.name)?.returns;
    if (returns === undefined || !namesType(type, this.context.types.has(type))) return {};
    // A type declared in another file is not known here (files compile alone): its records are
    // only marked with the type's name, which the reference resolves against the app's types.
    return recordResultSchema(returns, type, this.context.types.get(type) ?? null) ?? {};
  }
}
