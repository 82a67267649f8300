/**
 * Route and declaration metadata the compiler records beside the bytecode: field declarations,
 * guard uses with folded arguments, and OpenAPI-style paths.
 */
import type { Constant, DocLine, Expr, FieldDecl, FieldType, GuardUse, Literal, PathSegment, Pos } from '../front/ast.js';
import type { Diagnostic } from '../diagnostics.js';
import { diagnostic } from '../diagnostics.js';
import { fold } from './fold.js';
import type { ArgShape, DecoratorMeta, FieldMeta, GuardUseMeta, JsonSchema, ResponseMeta } from '../bytecode/module.js';
import { nullable, recordSchema, resultTypeSchema } from './field-schema.js';
import { DIAG } from '../errors.js';

/** Collects the diagnostics of one file, each with its source line. */
export class Reporter {
  readonly diagnostics: Diagnostic[] = [];

  constructor(
    readonly file: string,
    private readonly source: string,
  ) {}

  /** Reports an error at `at`; `length` is how many columns the caret underlines. */
  error(code: string, message: string, at: Pos, options: { hint?: string | undefined; length?: number } = {}): void {
    const extra: { hint?: string; source: string; length?: number } = { source: this.source };
    if (options.hint) extra.hint = options.hint;
    if (options.length) extra.length = options.length;
    this.diagnostics.push(diagnostic(code, message, { file: this.file, line: at.line, col: at.col }, extra));
  }

  /** Whether any error was reported. */
  hasErrors(): boolean {
    return this.diagnostics.some((d) => d.severity === 'error');
  }
}

/**
 * How deeply list and object literals may nest in a decorator argument. A default is a small
 * literal; the bound keeps every module that compiles well inside what the artefact reader
 * accepts as plain data (MAX_JSON_DEPTH, 64 levels).
 */
export const MAX_CONSTANT_DEPTH = 32;

/**
 * Folds arguments that must be constants (route guards: literals only); reports E_NOT_CONSTANT
 * otherwise, and then `unfolded` is set (the argument stands as null).
 */
export function constantArgs(args: readonly Expr[], what: string, reporter: Reporter): { args: Literal[]; unfolded?: true } {
  return foldArgs(args, (arg) => fold(arg) ?? notConstant(arg, what, reporter));
}

/** As constantArgs, for decorators: list and object literals of constants count too (`@default([])`). */
export function decoratorArgs(args: readonly Expr[], what: string, reporter: Reporter): { args: Constant[]; unfolded?: true } {
  return foldArgs(args, (arg) => {
    if (nesting(arg) > MAX_CONSTANT_DEPTH) {
      reporter.error(DIAG.E_TOO_DEEP, `a constant nested deeper than ${MAX_CONSTANT_DEPTH} levels`, arg);
      return null;
    }
    return constantOf(arg) ?? notConstant(nonConstantPart(arg), what, reporter);
  });
}

function notConstant(arg: Expr, what: string, reporter: Reporter): null {
  reporter.error(DIAG.E_NOT_CONSTANT, `arguments of ${what} must be constants`, arg);
  return null;
}

/** Each argument's `constant`, or null (and `unfolded`) where it reported a problem. */
function foldArgs<T>(args: readonly Expr[], constant: (arg: Expr) => { value: T } | null): { args: (T | null)[]; unfolded?: true } {
  const values: (T | null)[] = [];
  let unfolded = false;
  for (const arg of args) {
    const folded = constant(arg);
    values.push(folded === null ? null : folded.value);
    if (folded === null) unfolded = true;
  }
  return unfolded ? { args: values, unfolded } : { args: values };
}

/** How many list and object literals nest in `expr` (0 for anything else). */
function nesting(expr: Expr): number {
  if (expr.kind === 'List') return 1 + Math.max(0, ...expr.items.map(nesting));
  if (expr.kind === 'Object') return 1 + Math.max(0, ...expr.entries.map((e) => nesting(e.value)));
  return 0;
}

/** Where a list or object literal stops being constant: its first item that is not (or `expr` itself). */
function nonConstantPart(expr: Expr): Expr {
  const items = expr.kind === 'List' ? expr.items : expr.kind === 'Object' ? expr.entries.map((e) => e.value) : [];
  const bad = items.find((item) => constantOf(item) === null);
  return bad === undefined ? expr : nonConstantPart(bad);
}

/** The value of a folded literal, or of a list or object literal whose items all are constants; null otherwise. */
function constantOf(expr: Expr): { value: Constant } | null {
  if (expr.kind === 'List') {
    const items: Constant[] = [];
    for (const item of expr.items) {
      const folded = constantOf(item);
      if (folded === null) return null;
      items.push(folded.value);
    }
    return { value: items };
  }
  if (expr.kind === 'Object') {
    const entries: { [key: string]: Constant } = {};
    for (const entry of expr.entries) {
      const folded = constantOf(entry.value);
      if (folded === null) return null;
      // defineProperty keeps a key named __proto__ an ordinary key, as object literals do at runtime.
      Object.defineProperty(entries, entry.key, { value: folded.value, enumerable: true, writable: true, configurable: true });
    }
    return { value: entries };
  }
  return fold(expr);
}

/**
 * What is known of `expr` at compile time (module.ts ArgShape): constants, the keys of object
 * literals, and request data as the client sent it (`rawRequest` names it, or answers null).
 */
export function shapeOf(expr: Expr, rawRequest: (expr: Expr) => string | null = () => null, depth = 0): ArgShape {
  const raw = rawRequest(expr);
  if (raw !== null) return { k: 'r', s: raw };
  const constant = depth <= MAX_CONSTANT_DEPTH && nesting(expr) <= MAX_CONSTANT_DEPTH - depth ? constantOf(expr) : null;
  if (constant !== null) return { k: 'c', v: constant.value };
  if (depth >= MAX_CONSTANT_DEPTH) return { k: 'u' };
  if (expr.kind === 'Object') return { k: 'o', e: expr.entries.map((e) => [e.key, shapeOf(e.value, rawRequest, depth + 1)]) };
  if (expr.kind === 'List') return { k: 'l', i: expr.items.map((item) => shapeOf(item, rawRequest, depth + 1)) };
  return { k: 'u' };
}

/**
 * FieldMeta of a `validate`, `query` or `type` block. Unknown types and duplicate fields are the
 * parser's diagnostics (a file with parse errors is never compiled).
 */
export function fieldMetas(fields: readonly FieldDecl[], reporter: Reporter): FieldMeta[] {
  return fields.map((field) => {
    const type = field.type as FieldType;
    const decorators: DecoratorMeta[] = field.decorators.map((d) => ({
      name: d.name,
      ...decoratorArgs(d.args, `@${d.name}`, reporter),
      line: d.line,
      col: d.col,
    }));
    const defaulted = decorators.some((d) => d.name === 'default');
    return {
      name: field.name,
      type,
      optional: field.optional,
      // `@required` insists even on a `name?:` field; otherwise `?` or a default makes it optional.
      required: decorators.some((d) => d.name === 'required') || (!field.optional && !defaulted),
      decorators,
      doc: field.doc,
      line: field.line,
      col: field.col,
    };
  });
}

/** GuardUseMeta of a route's guard lines, arguments folded. */
export function guardMetas(guards: readonly GuardUse[], reporter: Reporter): GuardUseMeta[] {
  return guards.map((g) => ({
    name: g.name,
    ...constantArgs(g.args, `guard ${g.name}`, reporter),
    mode: g.mode,
    line: g.line,
    col: g.col,
  }));
}

/** `/users/:id/*rest` → `/users/{id}/{rest}`. */
export function openapiPath(segments: readonly PathSegment[]): string {
  if (segments.length === 0) return '/';
  return segments.map((s) => (s.kind === 'static' ? `/${s.value}` : `/{${s.value}}`)).join('');
}

/** Names of the `:params` and the wildcard, in path order. */
export function pathParams(segments: readonly PathSegment[]): string[] {
  return segments.filter((s) => s.kind !== 'static').map((s) => s.value);
}

/**
 * The request headers (lower-case) and cookies `node` reads by a constant name
 * (`request.headers.authorization`, `request.headers['X-API-Key']`, `request.cookies.session`):
 * the credentials a middleware that answers 401 asks for. Each once, in source order.
 */
export function credentialsRead(node: unknown): { headers: string[]; cookies: string[] } {
  const headers = new Set<string>();
  const cookies = new Set<string>();
  eachNode(node, (n) => {
    const e = n as Expr;
    const key = constantKey(e);
    if (key === null || (e.kind !== 'Member' && e.kind !== 'Index')) return;
    const bag = e.object.kind === 'Member' && e.object.object.kind === 'Name' && e.object.object.name === 'request' ? e.object.name : null;
    if (bag === 'headers') headers.add(key.toLowerCase());
    if (bag === 'cookies') cookies.add(key);
  });
  return { headers: [...headers], cookies: [...cookies] };
}

/**
 * The fields of the request's `state` that `node` sets by name (`state.user = auth_user()`), each
 * once, in source order: what a guard hands on to the handler, shown in the reference.
 */
export function stateFieldsSet(node: unknown): string[] {
  const fields = new Set<string>();
  eachNode(node, (n) => {
    const stmt = n as { kind?: string; target?: Expr };
    if (stmt.kind !== 'Assign') return;
    const target = stmt.target!;
    const key = constantKey(target);
    if (key !== null && (target.kind === 'Member' || target.kind === 'Index') && target.object.kind === 'Name' && target.object.name === 'state')
      fields.add(key);
  });
  return [...fields];
}

/** The name a member or index expression reads when it is a constant (`a.b`, `a['b']`), else null. */
function constantKey(e: Expr): string | null {
  const key = e.kind === 'Member' ? e.name : e.kind === 'Index' ? fold(e.index)?.value : undefined;
  return typeof key === 'string' ? key : null;
}

/** Calls `visit` on every node of an AST (or part of one), outermost first, in source order. */
function eachNode(node: unknown, visit: (n: object) => void): void {
  if (Array.isArray(node)) return node.forEach((n) => eachNode(n, visit));
  if (node === null || typeof node !== 'object') return;
  visit(node);
  for (const value of Object.values(node)) eachNode(value, visit);
}

/** The tag of a route's doc comment that declares a response's schema by hand. */
export const RETURNS_TAG = '@returns';

/**
 * Whether `name.m(...)` calls the record method `m` of a type: one declared in the file, or any
 * capitalised name, since types may live in other files (natives, `response.ok`, are lower-case).
 */
export function namesType(name: string, declaredHere: boolean): boolean {
  return declaredHere || /^[A-Z]/.test(name);
}

/**
 * The responses a route's `@returns` tags declare, one per tag line:
 * `/// @returns STATUS SCHEMA`, SCHEMA a result type (`text`, `int`, … `any`, `null`), a `type`'s
 * name (a stored record), `[SCHEMA]` (a list of it) or `{name: SCHEMA, name?: SCHEMA}` (an
 * object; `name?` need not be present), each with a trailing `?` when it may be null. `types` are
 * the file's own (a record of a type declared elsewhere is a mark the reference resolves).
 * A malformed tag is E_RETURNS_TAG where it goes wrong.
 */
export function declaredResponses(lines: readonly DocLine[], types: ReadonlyMap<string, readonly FieldMeta[]>, reporter: Reporter): ResponseMeta[] {
  const declared: ResponseMeta[] = [];
  for (const line of lines) {
    const at = line.text.indexOf(RETURNS_TAG);
    if (at < 0 || line.text.slice(0, at).trim() !== '') continue;
    const tag = new TagReader(line, at + RETURNS_TAG.length, types);
    try {
      const status = tag.status();
      const schema = tag.schema(0);
      tag.end();
      if (declared.some((d) => d.status === status)) tag.fail(`status ${status} is declared twice`, at);
      declared.push({ status, source: RETURNS_TAG, contentType: 'application/json', schema, line: line.line });
    } catch (e) {
      if (!(e instanceof TagError)) throw e;
      reporter.error(
        DIAG.E_RETURNS_TAG,
        e.message,
        { line: line.line, col: line.col + e.offset },
        { hint: `write e.g. '${RETURNS_TAG} 200 { id: text, done?: bool }' or '${RETURNS_TAG} 200 [Task]'` },
      );
    }
  }
  return declared;
}

/** The doc comment without its `@returns` lines: what the reference shows as text. */
export function docWithoutTags(lines: readonly DocLine[]): string | null {
  const kept = lines.filter((l) => !l.text.trimStart().startsWith(RETURNS_TAG));
  return kept.length > 0 ? kept.map((l) => l.text).join('\n') : null;
}

class TagError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

const TAG_WORD = /[A-Za-z_][A-Za-z0-9_]*/y;
const TAG_STATUS = /\d+/y;

/** Reads one `@returns` line left to right; each problem a TagError at its offset in the line. */
class TagReader {
  private pos: number;

  constructor(
    private readonly line: DocLine,
    from: number,
    private readonly types: ReadonlyMap<string, readonly FieldMeta[]>,
  ) {
    this.pos = from;
  }

  fail(message: string, offset = this.pos): never {
    throw new TagError(message, offset);
  }

  status(): number {
    this.skipSpaces();
    const start = this.pos;
    const digits = this.match(TAG_STATUS);
    const status = digits === null ? NaN : Number(digits);
    if (!(status >= 100 && status <= 599)) this.fail(`${RETURNS_TAG} needs a status from 100 to 599 first`, start);
    return status;
  }

  /** SCHEMA ["?"] */
  schema(depth: number): JsonSchema {
    if (depth >= MAX_CONSTANT_DEPTH) this.fail(`a schema nested deeper than ${MAX_CONSTANT_DEPTH} levels`);
    this.skipSpaces();
    const start = this.pos;
    let schema: JsonSchema;
    if (this.accept('[')) {
      schema = { type: 'array', items: this.schema(depth + 1) };
      this.expect(']');
    } else if (this.accept('{')) {
      schema = this.object(depth);
    } else {
      const word = this.match(TAG_WORD);
      if (word === null) this.fail(`expected a type, '[' or '{'`);
      schema = resultTypeSchema(word) ?? recordSchema(word, this.types.get(word) ?? null);
      if (word === 'file' || word === 'never') this.fail(`'${word}' is no response body type`, start);
    }
    return this.accept('?') ? nullable(schema) : schema;
  }

  /** After `{`: fields up to `}`. */
  private object(depth: number): JsonSchema {
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    while (!this.accept('}')) {
      this.skipSpaces();
      const start = this.pos;
      const name = this.match(TAG_WORD);
      if (name === null) this.fail(`expected a field name or '}'`);
      if (Object.hasOwn(properties, name)) this.fail(`the field '${name}' is declared twice`, start);
      if (!this.accept('?')) required.push(name);
      this.expect(':');
      properties[name] = this.schema(depth + 1);
      if (!this.accept(',')) {
        this.expect('}');
        break;
      }
    }
    return required.length > 0 ? { type: 'object', properties, required } : { type: 'object', properties };
  }

  end(): void {
    this.skipSpaces();
    if (this.pos < this.line.text.length) this.fail(`unexpected '${this.line.text.slice(this.pos)}' after the schema`);
  }

  private skipSpaces(): void {
    while (this.line.text[this.pos] === ' ' || this.line.text[this.pos] === '\t') this.pos++;
  }

  private accept(char: string): boolean {
    this.skipSpaces();
    if (this.line.text[this.pos] !== char) return false;
    this.pos++;
    return true;
  }

  private expect(char: string): void {
    if (!this.accept(char)) this.fail(`expected '${char}'`);
  }

  private match(pattern: RegExp): string | null {
    pattern.lastIndex = this.pos;
    const found = pattern.exec(this.line.text);
    if (found === null) return null;
    this.pos += found[0].length;
    return found[0];
  }
}
