/**
 * Terse builders for hand-made syntax trees in compiler tests. Every builder takes an optional
 * position (default 1:1) so tests can check where diagnostics and line entries point.
 */
import type * as A from '../../vm/front/ast.js';

/** A position `line:col`. */
export const at = (line: number, col = 1): A.Pos => ({ line, col });
const P0: A.Pos = at(1, 1);

export const lit = (value: A.Literal, p = P0): A.LiteralExpr => ({ kind: 'Literal', value, ...p });
export const name = (n: string, p = P0): A.NameExpr => ({ kind: 'Name', name: n, ...p });
export const un = (op: '-' | '!', operand: A.Expr, p = P0): A.UnaryExpr => ({ kind: 'Unary', op, operand, ...p });
export const bin = (op: A.BinaryOp, left: A.Expr, right: A.Expr, p = P0): A.BinaryExpr => ({ kind: 'Binary', op, left, right, ...p });
export const logic = (op: '&&' | '||' | '??', left: A.Expr, right: A.Expr, p = P0): A.LogicalExpr => ({ kind: 'Logical', op, left, right, ...p });
export const member = (object: A.Expr, n: string, p = P0): A.MemberExpr => ({ kind: 'Member', object, name: n, ...p });
export const index = (object: A.Expr, i: A.Expr, p = P0): A.IndexExpr => ({ kind: 'Index', object, index: i, ...p });
export const call = (callee: A.Expr, args: A.Expr[] = [], p = P0): A.CallExpr => ({ kind: 'Call', callee, args, ...p });
/** `f(args)` by name. */
export const callN = (f: string, args: A.Expr[] = [], p = P0): A.CallExpr => call(name(f, p), args, p);
/** `X.m(args)`. */
export const callM = (x: string, m: string, args: A.Expr[] = [], p = P0): A.CallExpr => call(member(name(x, p), m, p), args, p);
export const tmpl = (parts: (string | A.Expr)[], p = P0): A.TemplateExpr => ({ kind: 'Template', parts, ...p });
export const list = (items: A.Expr[], p = P0): A.ListExpr => ({ kind: 'List', items, ...p });
export const obj = (entries: [string, A.Expr][], p = P0): A.ObjectExpr => ({
  kind: 'Object',
  entries: entries.map(([key, value]) => ({ key, value, ...p })),
  ...p,
});

export const block = (body: A.Stmt[], p = P0): A.Block => ({ kind: 'Block', body, ...p });
export const assign = (target: string | A.NameExpr | A.MemberExpr | A.IndexExpr, value: A.Expr, p = P0): A.AssignStmt => ({
  kind: 'Assign',
  target: typeof target === 'string' ? name(target, p) : target,
  op: null,
  value,
  ...p,
});
export const expr = (e: A.Expr, p = P0): A.ExprStmt => ({ kind: 'ExprStmt', expr: e, ...p });
export const ifS = (cond: A.Expr, then: A.Stmt[], otherwise: A.Stmt[] | A.IfStmt | null = null, p = P0): A.IfStmt => ({
  kind: 'If',
  cond,
  // biome-ignore lint/suspicious/noThenProperty: an If node's branch, never awaited
  then: block(then, p),
  otherwise: otherwise === null ? null : Array.isArray(otherwise) ? block(otherwise, p) : otherwise,
  ...p,
});
export const whileS = (cond: A.Expr, body: A.Stmt[], p = P0): A.WhileStmt => ({ kind: 'While', cond, body: block(body, p), ...p });
export const forS = (key: string | null, value: string, iterable: A.Expr, body: A.Stmt[], p = P0): A.ForStmt => ({
  kind: 'For',
  key,
  value,
  iterable,
  body: block(body, p),
  ...p,
});
export const brk = (p = P0): A.BreakStmt => ({ kind: 'Break', ...p });
export const cont = (p = P0): A.ContinueStmt => ({ kind: 'Continue', ...p });
export const ret = (value: A.Expr | null = null, p = P0): A.ReturnStmt => ({ kind: 'Return', value, ...p });
export const fail = (status: A.Expr, message: A.Expr | null = null, p = P0): A.FailStmt => ({ kind: 'Fail', status, message, ...p });
export const save = (record: A.Expr, p = P0): A.SaveStmt => ({ kind: 'Save', record, ...p });
export const del = (record: A.Expr, p = P0): A.DeleteStmt => ({ kind: 'Delete', record, ...p });
export const tryS = (body: A.Stmt[], errName: string, handler: A.Stmt[], p = P0): A.TryStmt => ({
  kind: 'Try',
  body: block(body, p),
  errName,
  handler: block(handler, p),
  ...p,
});
export const resp = (entries: [string, A.Expr][], p = P0): A.ResponseStmt => ({ kind: 'Response', fields: obj(entries, p), ...p });

export const field = (n: string, type: string, options: { optional?: boolean; decorators?: A.Decorator[]; doc?: string } = {}, p = P0): A.FieldDecl => ({
  name: n,
  optional: options.optional ?? false,
  type,
  typePos: { line: p.line, col: p.col + n.length + 2 },
  decorators: options.decorators ?? [],
  doc: options.doc ?? null,
  ...p,
});
export const dec = (n: string, args: A.Expr[] = [], p = P0): A.Decorator => ({ name: n, args, ...p });
export const guardUse = (n: string, args: A.Expr[] = [], mode: 'required' | 'optional' = 'required', p = P0): A.GuardUse => ({ name: n, args, mode, ...p });

/** Splits a route path into segments the way the parser does. */
export function segments(path: string): A.PathSegment[] {
  return path
    .split('/')
    .filter((s) => s !== '')
    .map((s) =>
      s.startsWith(':') ? { kind: 'param', value: s.slice(1) } : s.startsWith('*') ? { kind: 'wildcard', value: s.slice(1) } : { kind: 'static', value: s },
    );
}

export const route = (
  method: A.HttpMethod,
  path: string,
  body: A.Stmt[],
  options: { guards?: A.GuardUse[]; validate?: A.FieldDecl[]; query?: A.FieldDecl[]; doc?: string } = {},
  p = P0,
): A.RouteDecl => ({
  kind: 'Route',
  method,
  path,
  pathPos: p,
  segments: segments(path),
  doc: options.doc ?? null,
  docLines: (options.doc?.split('\n') ?? []).map((text, i) => ({ text, line: p.line + i, col: p.col })),
  guards: options.guards ?? [],
  validate: options.validate ? { fields: options.validate, ...p } : null,
  query: options.query ? { fields: options.query, ...p } : null,
  body,
  ...p,
});
export const fn = (n: string, params: string[], body: A.Stmt[], p = P0): A.FnDecl => ({
  kind: 'FnDecl',
  name: n,
  params: params.map((x) => ({ name: x, ...p })),
  body: block(body, p),
  doc: null,
  ...p,
});
export const guardDef = (n: string, params: string[], body: A.Stmt[], p = P0): A.GuardDefDecl => ({
  kind: 'GuardDef',
  name: n,
  params: params.map((x) => ({ name: x, ...p })),
  body: block(body, p),
  doc: null,
  ...p,
});
export const typeDecl = (n: string, fields: A.FieldDecl[], p = P0): A.TypeDecl => ({ kind: 'TypeDecl', name: n, fields, doc: null, ...p });
export const middleware = (body: A.Stmt[], p = P0): A.MiddlewareDecl => ({ kind: 'Middleware', body: block(body, p), doc: null, ...p });
export const file = (decls: A.Decl[], f = 'app/test.rvm'): A.FileNode => ({ kind: 'File', file: f, decls });
