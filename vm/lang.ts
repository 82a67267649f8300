/**
 * The value vocabulary every layer shares: the literals, field types, path segments and methods
 * of the language, the fields of a `response { }` statement, and the compiler's version. The
 * front end writes them into the AST, the compiler into modules, the runtime and the plugins read
 * them; none of those needs the syntax tree for them.
 */
import { readFileSync } from 'node:fs';
import { HTTP, RUNTIME } from './errors.js';

/** A literal value of the language: what constants, guard arguments and decorator arguments hold. */
export type Literal = number | string | boolean | null;

/** A compile-time value: a literal, or a list or object literal of constants (`@default(['x'])`). */
export type Constant = Literal | Constant[] | { [key: string]: Constant };

/** Whether a constant is a literal (not a list or object). */
export function isLiteral(v: Constant): v is Literal {
  return v === null || typeof v !== 'object';
}

/** The methods a route may be declared for; `ANY` matches every method. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD' | 'OPTIONS' | 'ANY';

/** Every `HttpMethod`, in the order the reference lists them. */
export const HTTP_METHODS: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'ANY'];

/** The field types of `validate`, `query` and `type` blocks. */
export type FieldType = 'text' | 'int' | 'number' | 'bool' | 'file' | 'list' | 'object' | 'date' | 'datetime';

/** Every `FieldType`. */
export const FIELD_TYPES: readonly FieldType[] = ['text', 'int', 'number', 'bool', 'file', 'list', 'object', 'date', 'datetime'];

/** One segment of a route path: `users` (static), `:id` (param), `*rest` (wildcard, last only). */
export interface PathSegment {
  kind: 'static' | 'param' | 'wildcard';
  value: string;
}

/** The fields of the `response { }` statement: the compiler refuses others, the runtime too (a computed object). */
export const RESPONSE_FIELDS: readonly string[] = ['status', 'json', 'text', 'html', 'headers'];

/** The runtime's package.json: its npm name and version, read once. */
export const RUNTIME_MANIFEST: { readonly name: string; readonly version: string } = JSON.parse(
  readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
) as { name: string; version: string };

/** Version of this compiler (the package's); artefacts written by another version are recompiled. */
export const COMPILER_VERSION: string = RUNTIME_MANIFEST.version;

/** Longest code `throw` raises: a code names a case, it is not a message. */
export const MAX_THROWN_CODE_LENGTH = 64;

/** A thrown code: snake_case, as the runtime's own codes are. */
const THROWN_CODE = /^[a-z][a-z0-9_]*$/;

/**
 * Codes that mean more than an error to the runtime, which `throw` may not raise: the limits and
 * abort reasons (`try` never catches them; production shows their message), the services' failures
 * (answered 503, not 500). Every other code, the runtime's included, may be thrown, so a `catch`
 * can raise what it caught again: `throw err.code, err.message`.
 */
export const RESERVED_THROW_CODES: ReadonlySet<string> = new Set([
  RUNTIME.fuel_exhausted,
  RUNTIME.cpu_budget_exceeded,
  RUNTIME.call_depth_exceeded,
  RUNTIME.text_too_long,
  RUNTIME.list_too_long,
  HTTP.client_gone.code,
  HTTP.deadline_exceeded.code,
  HTTP.store_unavailable.code,
  HTTP.store_full.code,
]);

/** Why `code` cannot be thrown, or null when it can. */
export function thrownCodeProblem(code: string): string | null {
  if (code.length > MAX_THROWN_CODE_LENGTH || !THROWN_CODE.test(code)) {
    return `a thrown code is snake_case, at most ${MAX_THROWN_CODE_LENGTH} characters ('out_of_stock'), not '${code.slice(0, MAX_THROWN_CODE_LENGTH)}'`;
  }
  if (RESERVED_THROW_CODES.has(code)) return `'${code}' is the runtime's own code and cannot be thrown`;
  return null;
}

/** A constant's name is written in capitals (`MAX_ITEMS`): so is told from a variable wherever it is read. */
export function isConstName(name: string): boolean {
  return /^[A-Z][A-Z0-9_]*$/.test(name);
}
