/**
 * Statements and blocks. Each statement recovers on its own: an error skips to the end of its
 * line (or the `}` of its block) and the block goes on with the next statement.
 */
import type { Block, CompoundOp, Expr, IfStmt, Stmt } from './ast.js';
import type { Token } from './lexer.js';
import { describe, ParseError, type Parser } from './parser-base.js';
import { expression, object, parsePrecedence, Precedence } from './parser-expr.js';
import { fieldSection, guardLine, guardsBlock, sectionAt } from './parser-sections.js';
import { DIAG } from '../errors.js';

// block = "{" { stmt } "}"
/** Parses a `{ … }` block of statements; `what` names it in messages ("the 'if' block"). */
export function block(p: Parser, what: string, context: string): Block {
  const open = p.openBrace(context);
  p.enter(open);
  const body: Stmt[] = [];
  statements(p, body);
  p.closeBrace(open, what);
  p.depth--;
  return { kind: 'Block', body, line: open.line, col: open.col };
}

/** Parses statements into `body` until a `}`, the end of the file or a new declaration. */
export function statements(p: Parser, body: Stmt[]): void {
  for (;;) {
    p.skipSeparators();
    const t = p.peek();
    if (t.type === '}' || t.type === 'eof' || p.atDeclarationStart()) return;
    const start = p.mark();
    try {
      const s = statement(p);
      if (s) body.push(s);
    } catch (e) {
      if (!(e instanceof ParseError)) throw e;
      p.recover(start);
    }
  }
}

/** Words people carry over from other languages, with what to write instead. */
const FOREIGN_WORDS: Record<string, string> = {
  elif: "write 'else if'",
  elsif: "write 'else if'",
  elseif: "write 'else if'",
  let: "variables are declared by assigning: write 'name = value'",
  var: "variables are declared by assigning: write 'name = value'",
  const: "'const' declares a constant at the top level of a file; a variable is declared by assigning: write 'name = value'",
  function: "functions are declared at the top level with 'fn'",
};

// stmt = assign | if | for | while | break | continue | return | fail | save | delete | try | transaction | response | expr
/** Parses one statement; null when it was reported and dropped. */
export function statement(p: Parser): Stmt | null {
  const t = p.peek();
  if (t.type === 'word') {
    switch (t.value) {
      case 'if':
        p.advance();
        return ifStatement(p, t);
      case 'for':
        return forStatement(p);
      case 'while':
        return whileStatement(p);
      case 'break':
      case 'continue':
        p.advance();
        p.endStatement(`'${t.value}'`);
        return { kind: t.value === 'break' ? 'Break' : 'Continue', line: t.line, col: t.col };
      case 'return':
        return returnStatement(p);
      case 'fail':
        return failStatement(p);
      case 'throw':
        // A contextual word, like `transaction`: `throw` stays a usable name (`throw = 1`).
        if (startsThrownCode(p.peekSecond())) return throwStatement(p);
        break;
      case 'save':
      case 'delete':
        return recordStatement(p);
      case 'try':
        return tryStatement(p);
      case 'else':
        return p.fail("'else' without a matching 'if'", t, "'else' follows the '}' of an 'if' block");
      case 'catch':
        return p.fail("'catch' without a matching 'try'", t);
      case 'response':
        if (p.peekSecond().type === '{') return responseStatement(p);
        break;
      case 'transaction':
        // A contextual word: `transaction` stays a usable name everywhere else.
        if (p.peekSecond().type === '{') return transactionStatement(p);
        break;
    }
    const next = p.peekSecond();
    if (Object.hasOwn(FOREIGN_WORDS, t.value) && next.type === 'word') {
      p.fail(`'${t.value}' is not a keyword`, t, FOREIGN_WORDS[t.value]);
    }
    const section = sectionAt(p);
    if (section) return misplacedSection(p, t);
  }
  return expressionStatement(p);
}

/** A section inside a nested block or a non-route body: reported, parsed and dropped. */
function misplacedSection(p: Parser, t: Token): null {
  p.report(DIAG.E_SECTION_ORDER, `'${t.value}' is only allowed at the start of a route body`, t);
  const kind = sectionAt(p);
  if (kind === 'guard') guardLine(p);
  else if (kind === 'guards') guardsBlock(p);
  else fieldSection(p);
  return null;
}

/** The assignment operators: `=` and the compound ones with the binary operator each applies. */
const ASSIGN_OPS: Record<string, CompoundOp | null> = { '=': null, '+=': '+', '-=': '-', '*=': '*', '/=': '/' };

// assign = target ( "=" | "+=" | "-=" | "*=" | "/=" ) expr          target = name { "." word | "[" expr "]" }
// expr_stmt = expr
function expressionStatement(p: Parser): Stmt | null {
  const target = expression(p);
  const opToken = p.peek();
  if (!Object.hasOwn(ASSIGN_OPS, opToken.type)) {
    p.endStatement('the expression');
    return { kind: 'ExprStmt', expr: target, line: target.line, col: target.col };
  }
  p.advance();
  const value = expression(p);
  p.endStatement('the assignment');
  if ((target.kind !== 'Name' && target.kind !== 'Member' && target.kind !== 'Index') || p.parenthesized.has(target)) {
    p.report(DIAG.E_INVALID_ASSIGN, 'cannot assign to this expression', target, {
      hint: "assign to a name ('x = …'), a field ('x.f = …') or an element ('x[i] = …')",
    });
    return null;
  }
  if (target.kind !== 'Name' && (target.optional || target.chained)) {
    p.report(DIAG.E_INVALID_ASSIGN, 'cannot assign through an optional chain', target, {
      hint: "'?.' only reads; test the object first: if x != null { x.f = … }",
    });
    return null;
  }
  return { kind: 'Assign', target, op: ASSIGN_OPS[opToken.type] ?? null, value, line: target.line, col: target.col };
}

/** The expression after `if`, `while` or `for … in`, where `{` opens the block, never an object. */
function condition(p: Parser): Expr {
  const saved = p.blockBraceAt;
  p.blockBraceAt = p.nesting;
  const cond = expression(p);
  p.blockBraceAt = saved;
  return cond;
}

// if = "if" expr block { "else" "if" expr block } [ "else" block ]
function ifStatement(p: Parser, kw: Token): IfStmt {
  const cond = condition(p);
  const then = block(p, "the 'if' block", "after the condition of 'if'");
  let otherwise: IfStmt | Block | null = null;
  if (p.acceptWordAfterNewlines('else')) {
    const next = p.peek();
    if (next.type === 'word' && next.value === 'if') {
      p.advance();
      // An else-if chain nests in the tree, so it counts towards the nesting limit.
      p.enter(next);
      otherwise = ifStatement(p, next);
      p.depth--;
    } else {
      otherwise = block(p, "the 'else' block", "after 'else'");
    }
  }
  return { kind: 'If', cond, then, otherwise, line: kw.line, col: kw.col };
}

// for = "for" name [ "," name ] "in" expr block
function forStatement(p: Parser): Stmt {
  const kw = p.advance();
  const first = p.expectName('a loop variable', "after 'for'");
  const second = p.accept(',') ? p.expectName('a second loop variable', "after ','") : null;
  const t = p.peek();
  if (t.type !== 'word' || t.value !== 'in')
    p.fail(`expected 'in' after the loop variable, found ${describe(t)}`, t, "write 'for x in list {' or 'for k, v in object {'");
  p.advance();
  const iterable = condition(p);
  const body = block(p, "the 'for' body", 'after the loop iterable');
  return {
    kind: 'For',
    key: second ? first.value : null,
    value: second ? second.value : first.value,
    iterable,
    body,
    line: kw.line,
    col: kw.col,
  };
}

// while = "while" expr block
function whileStatement(p: Parser): Stmt {
  const kw = p.advance();
  const cond = condition(p);
  const body = block(p, "the 'while' body", "after the condition of 'while'");
  return { kind: 'While', cond, body, line: kw.line, col: kw.col };
}

// return = "return" [ expr ]
function returnStatement(p: Parser): Stmt {
  const kw = p.advance();
  const value = p.atStatementEnd() ? null : expression(p);
  p.endStatement("'return'");
  return { kind: 'Return', value, line: kw.line, col: kw.col };
}

// fail = "fail" status [ expr ]          status = a primary/postfix expression
function failStatement(p: Parser): Stmt {
  const kw = p.advance();
  if (p.atStatementEnd()) p.fail(`expected a status after 'fail', found ${describe(p.peek())}`, p.peek(), "write 'fail 403 'message''");
  const status = parsePrecedence(p, Precedence.Postfix);
  const message = p.atStatementEnd() ? null : expression(p);
  p.endStatement("'fail'");
  return { kind: 'Fail', status, message, line: kw.line, col: kw.col };
}

/**
 * `throw` starts a statement when a code follows it on the same line: a text, a name, a call (or
 * a number, refused later with a better message than a parse error).
 */
function startsThrownCode(t: Token): boolean {
  return t.type === 'string' || t.type === 'template_start' || t.type === 'word' || t.type === 'number';
}

// throw = "throw" expr [ "," expr ]
function throwStatement(p: Parser): Stmt {
  const kw = p.advance();
  const code = expression(p);
  const message = p.accept(',') ? expression(p) : null;
  p.endStatement("'throw'");
  return { kind: 'Throw', code, message, line: kw.line, col: kw.col };
}

// save = "save" expr        delete = "delete" expr
function recordStatement(p: Parser): Stmt {
  const kw = p.advance();
  const record = expression(p);
  p.endStatement(`'${kw.value}'`);
  return { kind: kw.value === 'save' ? 'Save' : 'Delete', record, line: kw.line, col: kw.col };
}

// try = "try" block "catch" name block
function tryStatement(p: Parser): Stmt {
  const kw = p.advance();
  const body = block(p, "the 'try' block", "after 'try'");
  if (!p.acceptWordAfterNewlines('catch')) {
    p.fail(`expected 'catch' after the 'try' block, found ${describe(p.peek())}`, p.peek(), "write 'catch err { … }'");
  }
  const errName = p.expectName('an error variable', "after 'catch'");
  const handler = block(p, "the 'catch' block", `after 'catch ${errName.value}'`);
  return { kind: 'Try', body, errName: errName.value, handler, line: kw.line, col: kw.col };
}

// transaction = "transaction" block
function transactionStatement(p: Parser): Stmt {
  const kw = p.advance();
  const body = block(p, "the 'transaction' block", "after 'transaction'");
  return { kind: 'Transaction', body, line: kw.line, col: kw.col };
}

// response = "response" object
function responseStatement(p: Parser): Stmt {
  const kw = p.advance();
  const fields = object(p, p.advance());
  p.endStatement('the response');
  return { kind: 'Response', fields, line: kw.line, col: kw.col };
}
