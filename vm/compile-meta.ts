/**
 * Route and declaration metadata the compiler records beside the bytecode: field declarations,
 * guard uses with folded arguments, and OpenAPI-style paths.
 */
import type { Expr, FieldDecl, FieldType, GuardUse, Literal, PathSegment, Pos } from './ast.js';
import type { Diagnostic } from './diagnostics.js';
import { diagnostic } from './diagnostics.js';
import { fold } from './fold.js';
import type { DecoratorMeta, FieldMeta, GuardUseMeta } from './module.js';

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
 * Folds arguments that must be constants (decorators, route guards); reports E_NOT_CONSTANT
 * otherwise, and then `unfolded` is set (the argument stands as null).
 */
export function constantArgs(args: readonly Expr[], what: string, reporter: Reporter): { args: Literal[]; unfolded?: true } {
  const values: Literal[] = [];
  let unfolded = false;
  for (const arg of args) {
    const folded = fold(arg);
    if (folded) values.push(folded.value);
    else {
      reporter.error('E_NOT_CONSTANT', `arguments of ${what} must be constants`, arg);
      values.push(null);
      unfolded = true;
    }
  }
  return unfolded ? { args: values, unfolded } : { args: values };
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
      ...constantArgs(d.args, `@${d.name}`, reporter),
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
