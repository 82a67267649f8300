/**
 * Expressions: a Pratt parser driven by one rule table indexed by token, in the style of clox.
 * Every prefix/infix function carries the production it parses as a one-line comment.
 */
import type { BinaryOp, ComprehensionExpr, Expr, IndexExpr, LambdaExpr, ListExpr, LogicalExpr, MemberExpr, ObjectEntry, ObjectExpr, Param } from './ast.js';
import type { Token } from './lexer.js';
import { describe, RESERVED, type Parser } from './parser-base.js';
import { DIAG } from '../errors.js';

/** Binding power of operators, lowest first; binary operators are left-associative but `? :` and `**`. */
export enum Precedence {
  None,
  Conditional, // ? :
  Nullish, // ??
  Or, // || or
  And, // && and
  Equality, // == !=
  Comparison, // < <= > >=
  Term, // + -
  Factor, // * / %
  Unary, // - ! not
  Power, // **      (tighter than a unary minus on its left: `-2 ** 2` is -4, as in Python)
  Postfix, // . ?. [] ()
}

type PrefixFn = (p: Parser, token: Token) => Expr;
type InfixFn = (p: Parser, left: Expr, token: Token) => Expr;

interface ParseRule {
  prefix: PrefixFn | null;
  infix: InfixFn | null;
  precedence: Precedence;
}

const P = Precedence;

/** The rule table; keys are token types, and the keyword itself for reserved words. */
const RULES: Record<string, ParseRule> = {
  '(': { prefix: grouping, infix: call, precedence: P.Postfix },
  '[': { prefix: list, infix: index, precedence: P.Postfix },
  '.': { prefix: null, infix: member, precedence: P.Postfix },
  '?.': { prefix: null, infix: optionalLink, precedence: P.Postfix },
  '?': { prefix: null, infix: conditional, precedence: P.Conditional },
  '**': { prefix: null, infix: power, precedence: P.Power },
  '{': { prefix: object, infix: null, precedence: P.None },
  '-': { prefix: unary, infix: binary, precedence: P.Term },
  '+': { prefix: null, infix: binary, precedence: P.Term },
  '*': { prefix: null, infix: binary, precedence: P.Factor },
  '/': { prefix: null, infix: binary, precedence: P.Factor },
  '%': { prefix: null, infix: binary, precedence: P.Factor },
  '!': { prefix: unary, infix: null, precedence: P.None },
  not: { prefix: unary, infix: null, precedence: P.None },
  '==': { prefix: null, infix: binary, precedence: P.Equality },
  '!=': { prefix: null, infix: binary, precedence: P.Equality },
  '<': { prefix: null, infix: binary, precedence: P.Comparison },
  '<=': { prefix: null, infix: binary, precedence: P.Comparison },
  '>': { prefix: null, infix: binary, precedence: P.Comparison },
  '>=': { prefix: null, infix: binary, precedence: P.Comparison },
  '&&': { prefix: null, infix: logical, precedence: P.And },
  and: { prefix: null, infix: logical, precedence: P.And },
  '||': { prefix: null, infix: logical, precedence: P.Or },
  or: { prefix: null, infix: logical, precedence: P.Or },
  '??': { prefix: null, infix: logical, precedence: P.Nullish },
  number: { prefix: number, infix: null, precedence: P.None },
  string: { prefix: string, infix: null, precedence: P.None },
  template_start: { prefix: template, infix: null, precedence: P.None },
  word: { prefix: name, infix: null, precedence: P.None },
  true: { prefix: literal, infix: null, precedence: P.None },
  false: { prefix: literal, infix: null, precedence: P.None },
  null: { prefix: literal, infix: null, precedence: P.None },
};

const NO_RULE: ParseRule = { prefix: null, infix: null, precedence: P.None };

/** The rule of a token; reserved words other than the operator and literal ones have none. */
function ruleFor(t: Token): ParseRule {
  const key = t.type === 'word' && !RESERVED.has(t.value) ? 'word' : t.type === 'word' ? t.value : t.type;
  return Object.hasOwn(RULES, key) ? RULES[key]! : NO_RULE;
}

// expr = conditional
/** Parses one expression. */
export function expression(p: Parser): Expr {
  return parsePrecedence(p, P.Conditional);
}

/** Parses an expression whose operators all bind at least as tightly as `precedence`. */
export function parsePrecedence(p: Parser, precedence: Precedence): Expr {
  const saved = p.depth;
  const token = p.peek();
  p.enter(token);
  const prefix = ruleFor(token).prefix;
  if (!prefix) expectedExpression(p, token);
  p.advance();
  let left = prefix(p, token);
  for (;;) {
    // A line that starts with '?' goes on with the conditional the line above began.
    if (precedence <= P.Conditional && p.peek().type === 'newline' && p.peekPastNewlines().type === '?') p.skipNewlines();
    const next = p.peek();
    const rule = ruleFor(next);
    if (!rule.infix || rule.precedence < precedence) break;
    p.advance();
    // Each operator of a chain deepens the tree by one level.
    p.enter(next);
    left = rule.infix(p, left, next);
  }
  p.depth = saved;
  return left;
}

function expectedExpression(p: Parser, t: Token): never {
  const prev = p.tokens[p.tokens.indexOf(t, Math.max(0, p.pos - 1)) - 1];
  let hint: string | undefined;
  if (t.type === '=' && prev && ['+', '-', '*', '/'].includes(prev.type)) {
    hint = `write '${prev.type}=' without a space`;
  } else if (t.type === '=' && prev?.type === '%') {
    hint = "there is no '%='; write 'x = x % value'";
  } else if (t.type === '.' && prev?.type === '?') {
    hint = "optional chaining is written '?.' without a space";
  } else if (t.type === '{' && p.blockBraceAt === p.nesting) {
    hint = "the '{' here opens the block; write the condition before it";
  }
  p.fail(`expected an expression, found ${describe(t)}`, t, hint, DIAG.E_EXPECTED_EXPRESSION);
}

// grouping = "(" expr ")" | "(" [ params ] ")" "=>" expr
function grouping(p: Parser, open: Token): Expr {
  if (lambdaAhead(p)) return lambda(p, parameterList(p, open), open);
  p.openBracket('(');
  const inner = expression(p);
  p.expect(')', "')'", `to close the '(' at ${open.line}:${open.col}`);
  p.closeBracket();
  p.parenthesized.add(inner);
  return inner;
}

// list = "[" [ expr { "," expr } [ "," ] ] "]" | comprehension
function list(p: Parser, open: Token): ListExpr | ComprehensionExpr {
  p.openBracket('[');
  const items: Expr[] = [];
  while (!p.check(']')) {
    items.push(expression(p));
    if (items.length === 1 && p.checkWord('for')) return comprehension(p, items[0]!, open);
    if (!p.accept(',')) break;
  }
  p.expect(']', "',' or ']'", `in the list opened at ${open.line}:${open.col}`);
  p.closeBracket();
  return { kind: 'List', items, line: open.line, col: open.col };
}

// comprehension = "[" expr "for" name [ "," name ] "in" expr [ "if" expr ] "]"
function comprehension(p: Parser, item: Expr, open: Token): ComprehensionExpr {
  p.advance();
  const first = p.expectName('a loop variable', "after 'for'");
  const second = p.accept(',') ? p.expectName('a loop variable', "after ','") : null;
  const t = p.peek();
  if (t.type !== 'word' || t.value !== 'in')
    p.fail(`expected 'in' after the loop variable, found ${describe(t)}`, t, "write '[x for x in list]' or '[v for k, v in object]'");
  p.advance();
  const iterable = expression(p);
  let cond: Expr | null = null;
  if (p.checkWord('if')) {
    p.advance();
    cond = expression(p);
  }
  p.expect(']', "']'", `to close the list opened at ${open.line}:${open.col}`);
  p.closeBracket();
  const key = second === null ? null : first.value;
  const value = second === null ? first.value : second.value;
  return { kind: 'Comprehension', item, key, value, iterable, cond, line: open.line, col: open.col };
}

// object = "{" { ( word | STRING ) ":" expr [ "," ] } "}"
/** Parses an object literal whose `{` was just consumed. */
export function object(p: Parser, open: Token): ObjectExpr {
  if (p.blockBraceAt === p.nesting) expectedExpression(p, open);
  p.openBracket('{');
  const entries: ObjectEntry[] = [];
  while (!p.check('}') && !p.check('eof')) {
    const keyToken = p.peek();
    const key = objectKey(p, keyToken);
    p.expect(':', "':'", `after the key '${key}'`);
    entries.push({ key, value: expression(p), line: keyToken.line, col: keyToken.col });
    p.accept(',');
  }
  p.expect('}', "'}'", `to close the object opened at ${open.line}:${open.col}`);
  p.closeBracket();
  return { kind: 'Object', entries, line: open.line, col: open.col };
}

// key = word | STRING
function objectKey(p: Parser, t: Token): string {
  if (t.type === 'word' || t.type === 'string') return p.advance().value;
  if (t.type === 'template_start') {
    p.advance();
    const key = template(p, t);
    if (key.kind === 'Literal' && typeof key.value === 'string') return key.value;
    p.fail('an object key cannot interpolate', t, 'use a single-quoted key, or build the object with computed keys in code');
  }
  return p.fail(`expected a key or '}' in the object, found ${describe(t)}`, t);
}

// template = '"' { TEXT | "${" expr "}" } '"'
function template(p: Parser, start: Token): Expr {
  const parts: (string | Expr)[] = [];
  for (;;) {
    const t = p.advance();
    if (t.type === 'template_end') break;
    if (t.type === 'template_text') {
      const last = parts[parts.length - 1];
      if (typeof last === 'string') parts[parts.length - 1] = last + t.value;
      else parts.push(t.value);
    } else if (t.type === 'interp_start') {
      p.openBracket('interp_start');
      parts.push(expression(p));
      p.expect('interp_end', "'}'", 'to close the interpolation');
      p.closeBracket();
    } else {
      p.fail(`expected the rest of the text, found ${describe(t)}`, t);
    }
  }
  if (parts.every((s) => typeof s === 'string')) {
    return { kind: 'Literal', value: parts.join(''), line: start.line, col: start.col };
  }
  return { kind: 'Template', parts, line: start.line, col: start.col };
}

// number = DIGITS [ "." DIGITS ] [ "e" [ "+" | "-" ] DIGITS ]
function number(_p: Parser, t: Token): Expr {
  return { kind: 'Literal', value: Number(t.text), line: t.line, col: t.col };
}

// string = "'" TEXT "'"
function string(_p: Parser, t: Token): Expr {
  return { kind: 'Literal', value: t.value, line: t.line, col: t.col };
}

// literal = "true" | "false" | "null"
function literal(_p: Parser, t: Token): Expr {
  const value = t.value === 'null' ? null : t.value === 'true';
  return { kind: 'Literal', value, line: t.line, col: t.col };
}

// name = word (not reserved) | word "=>" expr
function name(p: Parser, t: Token): Expr {
  if (p.check('=>')) return lambda(p, [{ name: t.value, line: t.line, col: t.col }], t);
  return { kind: 'Name', name: t.value, line: t.line, col: t.col };
}

/** The tokens that would make a lambda's body an assignment. */
const ASSIGNMENTS = new Set(['=', '+=', '-=', '*=', '/=']);

// lambda = params "=>" expr       (the parameters are parsed; "=>" is next)
function lambda(p: Parser, params: Param[], start: Token): LambdaExpr {
  p.expect('=>', "'=>'", 'after the lambda parameters');
  p.skipNewlines();
  const body = expression(p);
  const next = p.peek();
  // `x => total = total + x` (or `+=`): a lambda is one expression and the locals it reads are copies.
  if (ASSIGNMENTS.has(next.type)) {
    p.fail(
      'a lambda cannot assign a variable',
      next,
      'a lambda returns one expression; build the result with map, filter or reduce, or use a for loop',
      DIAG.E_LAMBDA_ASSIGN,
    );
  }
  return { kind: 'Lambda', params, body, line: start.line, col: start.col };
}

/** After a `(`: whether the tokens up to its `)` are parameter names and `=>` follows. */
function lambdaAhead(p: Parser): boolean {
  let i = p.pos;
  const next = (): Token => {
    while (p.tokens[i]!.type === 'newline' || p.tokens[i]!.type === 'doc') i++;
    return p.tokens[i++]!;
  };
  let t = next();
  while (t.type === 'word' && !RESERVED.has(t.value)) {
    t = next();
    if (t.type !== ',') break;
    t = next();
  }
  return t.type === ')' && next().type === '=>';
}

// unary = ( "-" | "!" | "not" ) unary
function unary(p: Parser, op: Token): Expr {
  p.skipNewlines();
  const operand = parsePrecedence(p, P.Unary);
  if (op.type === '-') {
    // A negative number is a literal, so `@min(-5)` is as constant as `@min(5)`.
    if (operand.kind === 'Literal' && typeof operand.value === 'number' && !p.parenthesized.has(operand)) {
      return { kind: 'Literal', value: -operand.value, line: op.line, col: op.col };
    }
    return { kind: 'Unary', op: '-', operand, line: op.line, col: op.col };
  }
  return { kind: 'Unary', op: '!', operand, line: op.line, col: op.col };
}

// binary = expr OP expr      (the right side binds one level tighter: left-associative)
function binary(p: Parser, left: Expr, op: Token): Expr {
  p.skipNewlines();
  const right = parsePrecedence(p, ruleFor(op).precedence + 1);
  return { kind: 'Binary', op: op.type as BinaryOp, left, right, line: left.line, col: left.col };
}

// power = expr "**" power      (right-associative: `2 ** 3 ** 2` is 2 ** 9)
function power(p: Parser, left: Expr, _op: Token): Expr {
  p.skipNewlines();
  const right = parsePrecedence(p, P.Power);
  return { kind: 'Binary', op: '**', left, right, line: left.line, col: left.col };
}

// conditional = expr "?" expr ":" conditional      (right-associative)
function conditional(p: Parser, cond: Expr, _q: Token): Expr {
  p.skipNewlines();
  const then = expression(p);
  // The ':' may start the next line: the expression is visibly unfinished without it.
  if (p.peek().type === 'newline' && p.peekPastNewlines().type === ':') p.skipNewlines();
  p.expect(':', "':'", "after the first branch of '? :'", "write 'cond ? value_if_true : value_if_false'");
  p.skipNewlines();
  const otherwise = parsePrecedence(p, P.Conditional);
  return { kind: 'Conditional', cond, then, otherwise, line: cond.line, col: cond.col };
}

// logical = expr ( "&&" | "and" | "||" | "or" | "??" ) expr
function logical(p: Parser, left: Expr, op: Token): Expr {
  p.skipNewlines();
  const right = parsePrecedence(p, ruleFor(op).precedence + 1);
  const spelled: LogicalExpr['op'] = op.value === 'and' ? '&&' : op.value === 'or' ? '||' : (op.type as LogicalExpr['op']);
  return { kind: 'Logical', op: spelled, left, right, line: left.line, col: left.col };
}

// member = expr "." word          (any word, keywords included)
function member(p: Parser, left: Expr, dot: Token): Expr {
  p.skipNewlines();
  const t = p.peek();
  if (t.type !== 'word') p.fail(`expected a member name after '${dot.type}', found ${describe(t)}`, t);
  p.advance();
  const node: MemberExpr = { kind: 'Member', object: left, name: t.value, line: left.line, col: left.col };
  return link(p, node, dot);
}

// index = expr "[" expr "]"
function index(p: Parser, left: Expr, open: Token): IndexExpr {
  p.openBracket('[');
  const idx = expression(p);
  p.expect(']', "']'", `to close the '[' at ${open.line}:${open.col}`);
  p.closeBracket();
  return link(p, { kind: 'Index', object: left, index: idx, line: left.line, col: left.col }, open);
}

// optional = expr "?." ( word | "[" expr "]" )
function optionalLink(p: Parser, left: Expr, q: Token): Expr {
  const t = p.peek();
  if (t.type === '[') {
    const node = index(p, left, p.advance());
    node.optional = true;
    return node;
  }
  if (t.type === '(') p.fail("a call cannot be optional: only '?.name' and '?.[index]'", t, 'test the value first: x == null ? null : f(x)');
  return member(p, left, q);
}

/**
 * Marks a link of an optional chain: `?.` itself, or a link whose object is one (not parenthesized),
 * so the whole chain is skipped when a `?.` finds null, as in JavaScript.
 */
function link<T extends MemberExpr | IndexExpr>(p: Parser, node: T, via: Token): T {
  if (via.type === '?.') node.optional = true;
  const object = node.object;
  if ((object.kind === 'Member' || object.kind === 'Index') && (object.optional || object.chained) && !p.parenthesized.has(object)) node.chained = true;
  return node;
}

// call = expr "(" [ expr { "," expr } [ "," ] ] ")"
function call(p: Parser, callee: Expr, open: Token): Expr {
  return { kind: 'Call', callee, args: argumentList(p, open), line: callee.line, col: callee.col };
}

// params = [ name { "," name } [ "," ] ] ")"
/** Parses a fn's or a lambda's parameter names after their `(`, through the closing `)`. */
export function parameterList(p: Parser, open: Token): Param[] {
  p.openBracket('(');
  const params: Param[] = [];
  while (!p.check(')')) {
    const t = p.expectName('a parameter name', 'in the parameter list');
    const first = params.find((x) => x.name === t.value);
    if (first) p.report(DIAG.E_DUPLICATE_PARAM, `duplicate parameter '${t.value}'`, t, { hint: `first declared at ${first.line}:${first.col}` });
    else params.push({ name: t.value, line: t.line, col: t.col });
    if (!p.accept(',')) break;
  }
  p.expect(')', "',' or ')'", `in the parameter list opened at ${open.line}:${open.col}`);
  p.closeBracket();
  return params;
}

// args = [ expr { "," expr } [ "," ] ] ")"
/** Parses call, guard or decorator arguments after their `(`, through the closing `)`. */
export function argumentList(p: Parser, open: Token): Expr[] {
  p.openBracket('(');
  const args: Expr[] = [];
  while (!p.check(')')) {
    args.push(expression(p));
    if (!p.accept(',')) break;
  }
  p.expect(')', "',' or ')'", `in the arguments opened at ${open.line}:${open.col}`);
  p.closeBracket();
  return args;
}
