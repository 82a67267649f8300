/**
 * The syntax tree the parser builds and the compiler walks. Every node carries the 1-based
 * `line`/`col` where it starts; `file` lives once on the FileNode.
 */
import type { HttpMethod, Literal, PathSegment } from '../lang.js';

export interface Pos {
  line: number;
  col: number;
}

// ---------------------------------------------------------------------------------------------
// Expressions

export type { Constant, Literal, HttpMethod, FieldType, PathSegment } from '../lang.js';
export { isLiteral } from '../lang.js';
export { HTTP_METHODS, FIELD_TYPES } from '../lang.js';

export type Expr =
  | LiteralExpr
  | TemplateExpr
  | ListExpr
  | ObjectExpr
  | NameExpr
  | UnaryExpr
  | BinaryExpr
  | LogicalExpr
  | ConditionalExpr
  | MemberExpr
  | IndexExpr
  | CallExpr
  | LambdaExpr
  | ComprehensionExpr;

/** `12`, `1.5`, `'text'`, `"text"` without interpolation, `true`, `false`, `null`. */
export interface LiteralExpr extends Pos {
  kind: 'Literal';
  value: Literal;
}

/** `"Hello ${name}!"`: literal text parts alternate with interpolated expressions. */
export interface TemplateExpr extends Pos {
  kind: 'Template';
  parts: (string | Expr)[];
}

export interface ListExpr extends Pos {
  kind: 'List';
  items: Expr[];
}

export interface ObjectEntry extends Pos {
  key: string;
  value: Expr;
}

/** `{ key: value, 'quoted key': value }`. */
export interface ObjectExpr extends Pos {
  kind: 'Object';
  entries: ObjectEntry[];
}

export interface NameExpr extends Pos {
  kind: 'Name';
  name: string;
}

/** `-x`, `!x` and `not x` (both spelled `!` here). */
export interface UnaryExpr extends Pos {
  kind: 'Unary';
  op: '-' | '!';
  operand: Expr;
}

export type BinaryOp = '+' | '-' | '*' | '/' | '%' | '**' | '<' | '<=' | '>' | '>=' | '==' | '!=';

export interface BinaryExpr extends Pos {
  kind: 'Binary';
  op: BinaryOp;
  left: Expr;
  right: Expr;
}

/** Short-circuit operators; `and`/`or` are spelled `&&`/`||` here. */
export interface LogicalExpr extends Pos {
  kind: 'Logical';
  op: '&&' | '||' | '??';
  left: Expr;
  right: Expr;
}

/** `cond ? then : otherwise`: only the chosen branch is evaluated. */
export interface ConditionalExpr extends Pos {
  kind: 'Conditional';
  cond: Expr;
  then: Expr;
  otherwise: Expr;
}

/**
 * The links of an optional chain: `optional` marks a `?.` link (null when its object is null);
 * `chained` marks a link after one in the same chain, skipped with it (`a?.b.c` is null when `a` is).
 */
interface ChainLink {
  optional?: true;
  chained?: true;
}

/** `object.name`, `object?.name`; after `.` any word is a member name, keywords included. */
export interface MemberExpr extends Pos, ChainLink {
  kind: 'Member';
  object: Expr;
  name: string;
}

/** `object[index]`, `object?.[index]`. */
export interface IndexExpr extends Pos, ChainLink {
  kind: 'Index';
  object: Expr;
  index: Expr;
}

/** `f(a, b)`, `response.ok(x)`, `User.create(body)`. */
export interface CallExpr extends Pos {
  kind: 'Call';
  callee: Expr;
  args: Expr[];
}

/** `x => expr`, `(a, b) => expr`: a call argument only; it reads the enclosing locals as they were when it was made. */
export interface LambdaExpr extends Pos {
  kind: 'Lambda';
  params: Param[];
  body: Expr;
}

/** `[item for x in xs if cond]` and `[item for k, v in obj]`: compiled inline as a loop; `key` and `cond` are optional. */
export interface ComprehensionExpr extends Pos {
  kind: 'Comprehension';
  item: Expr;
  key: string | null;
  value: string;
  iterable: Expr;
  cond: Expr | null;
}

// ---------------------------------------------------------------------------------------------
// Statements

export type Stmt =
  | AssignStmt
  | IfStmt
  | ForStmt
  | WhileStmt
  | BreakStmt
  | ContinueStmt
  | ReturnStmt
  | FailStmt
  | ThrowStmt
  | SaveStmt
  | DeleteStmt
  | TryStmt
  | TransactionStmt
  | ResponseStmt
  | ExprStmt;

export interface Block extends Pos {
  kind: 'Block';
  body: Stmt[];
}

/** The operators of compound assignment (`x += 1` is `x = x + 1` with `x`'s parts evaluated once). */
export type CompoundOp = '+' | '-' | '*' | '/';

/** `name = expr`, `a.b = expr`, `a[i] = expr`; a bare name declares on first assignment. `op` is set for `+=`, `-=`, `*=`, `/=`. */
export interface AssignStmt extends Pos {
  kind: 'Assign';
  target: NameExpr | MemberExpr | IndexExpr;
  op: CompoundOp | null;
  value: Expr;
}

/** `if c { } else if d { } else { }`: `otherwise` is the else block or the chained if. */
export interface IfStmt extends Pos {
  kind: 'If';
  cond: Expr;
  then: Block;
  otherwise: Block | IfStmt | null;
}

/** `for x in xs { }` (items, or keys of an object) and `for k, v in xs { }` (index/key and value). */
export interface ForStmt extends Pos {
  kind: 'For';
  key: string | null;
  value: string;
  iterable: Expr;
  body: Block;
}

export interface WhileStmt extends Pos {
  kind: 'While';
  cond: Expr;
  body: Block;
}

export interface BreakStmt extends Pos {
  kind: 'Break';
}

export interface ContinueStmt extends Pos {
  kind: 'Continue';
}

export interface ReturnStmt extends Pos {
  kind: 'Return';
  value: Expr | null;
}

/** `fail 403 'Premium required'`: ends the request with that status and message. */
export interface FailStmt extends Pos {
  kind: 'Fail';
  status: Expr;
  message: Expr | null;
}

/** `throw 'out_of_stock', 'message'`: raises an error `try` catches as `{ code, message }`. */
export interface ThrowStmt extends Pos {
  kind: 'Throw';
  code: Expr;
  message: Expr | null;
}

export interface SaveStmt extends Pos {
  kind: 'Save';
  record: Expr;
}

export interface DeleteStmt extends Pos {
  kind: 'Delete';
  record: Expr;
}

/** `try { } catch err { }`: catches runtime errors only, never `fail` or a response. */
export interface TryStmt extends Pos {
  kind: 'Try';
  body: Block;
  errName: string;
  handler: Block;
}

/** `transaction { }`: its statements in one database transaction, rolled back when the block fails or raises. */
export interface TransactionStmt extends Pos {
  kind: 'Transaction';
  body: Block;
}

/** `response { status: 401 json: {...} headers: {...} }`: answers and ends the handler. */
export interface ResponseStmt extends Pos {
  kind: 'Response';
  fields: ObjectExpr;
}

export interface ExprStmt extends Pos {
  kind: 'ExprStmt';
  expr: Expr;
}

// ---------------------------------------------------------------------------------------------
// Declarations

/** `@name` or `@name(args)` on a field. */
export interface Decorator extends Pos {
  name: string;
  args: Expr[];
}

/** `name: TYPE @dec...` or `name?: TYPE @dec...`, optionally preceded by `///` docs. */
export interface FieldDecl extends Pos {
  name: string;
  optional: boolean;
  type: string;
  typePos: Pos;
  decorators: Decorator[];
  doc: string | null;
}

/** A guard on a route: `guard auth`, `guard rate_limit(100, 60)`, `guards { auth: optional }`. */
export interface GuardUse extends Pos {
  name: string;
  args: Expr[];
  mode: 'required' | 'optional';
}

export interface Param extends Pos {
  name: string;
}

/** One `///` line: its text (after `///` and one space) and where that text starts. */
export interface DocLine extends Pos {
  text: string;
}

export interface RouteDecl extends Pos {
  kind: 'Route';
  method: HttpMethod;
  path: string;
  pathPos: Pos;
  segments: PathSegment[];
  doc: string | null;
  /** The doc comment line by line, where the compiler reads its tags (`@returns`). */
  docLines: DocLine[];
  guards: GuardUse[];
  validate: FieldBlock | null;
  query: FieldBlock | null;
  body: Stmt[];
}

/** A `validate { }` or `query { }` section. */
export interface FieldBlock extends Pos {
  fields: FieldDecl[];
}

export interface GuardDefDecl extends Pos {
  kind: 'GuardDef';
  name: string;
  params: Param[];
  body: Block;
  doc: string | null;
}

export interface TypeDecl extends Pos {
  kind: 'TypeDecl';
  name: string;
  fields: FieldDecl[];
  doc: string | null;
}

export interface FnDecl extends Pos {
  kind: 'FnDecl';
  name: string;
  params: Param[];
  body: Block;
  doc: string | null;
}

export interface MiddlewareDecl extends Pos {
  kind: 'Middleware';
  body: Block;
  doc: string | null;
}

/** `const MAX_ITEMS = 50`: a constant every file of the app reads, its value folded at compile time. */
export interface ConstDecl extends Pos {
  kind: 'Const';
  name: string;
  value: Expr;
  doc: string | null;
}

export type Decl = RouteDecl | GuardDefDecl | TypeDecl | FnDecl | MiddlewareDecl | ConstDecl;

export interface FileNode {
  kind: 'File';
  file: string;
  decls: Decl[];
}
