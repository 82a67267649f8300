/**
 * Route sections and field declarations: `guard` lines, `guards { }`, `validate { }`,
 * `query { }`, and the field lists `type` declarations share with them.
 */
import { FIELD_TYPES, type Decorator, type FieldBlock, type FieldDecl, type GuardUse } from './ast.js';
import { didYouMean } from '../diagnostics.js';
import type { Token } from './lexer.js';
import { describe, ParseError, type Parser } from './parser-base.js';
import { argumentList } from './parser-expr.js';
import { DIAG } from '../errors.js';

/** The sections a route body may start with. */
export type SectionKind = 'guard' | 'guards' | 'validate' | 'query';

/** The section that starts at the next token, if any (`validate {`, `guard auth`…). */
export function sectionAt(p: Parser): SectionKind | null {
  const t = p.peek();
  if (t.type !== 'word') return null;
  const next = p.peekSecond();
  if (t.value === 'guard') return next.type === 'word' ? 'guard' : null;
  if (t.value === 'guards' || t.value === 'validate' || t.value === 'query') return next.type === '{' ? t.value : null;
  return null;
}

// guard_call = name [ "(" [ expr { "," expr } ] ")" ]
function guardCall(p: Parser, context: string, mode: GuardUse['mode']): GuardUse {
  const name = p.expectName('a guard name', context);
  const args = p.check('(') ? argumentList(p, p.advance()) : [];
  return { name: name.value, args, mode, line: name.line, col: name.col };
}

// section = "guard" guard_call
/** Parses one `guard name(args)` line. */
export function guardLine(p: Parser): GuardUse {
  p.advance();
  const guard = guardCall(p, "after 'guard'", 'required');
  p.endStatement(`the guard '${guard.name}'`);
  return guard;
}

// section = "guards" "{" { guard_call ":" ( "required" | "optional" ) sep } "}"
/** Parses a `guards { name: required, … }` block. */
export function guardsBlock(p: Parser): GuardUse[] {
  p.advance();
  const open = p.openBrace("after 'guards'");
  const guards: GuardUse[] = [];
  for (;;) {
    skipEntrySeparators(p);
    if (p.check('}') || p.check('eof') || p.atDeclarationStart()) break;
    const start = p.mark();
    try {
      const guard = guardCall(p, "in 'guards'", 'required');
      p.expect(':', "':'", `after the guard '${guard.name}'`, `write '${guard.name}: required' or '${guard.name}: optional'`);
      const mode = p.peek();
      if (mode.type !== 'word' || (mode.value !== 'required' && mode.value !== 'optional')) {
        p.fail(`expected 'required' or 'optional' after '${guard.name}:', found ${describe(mode)}`, mode);
      }
      p.advance();
      guard.mode = mode.value as GuardUse['mode'];
      endEntry(p, `the guard '${guard.name}'`);
      guards.push(guard);
    } catch (e) {
      if (!(e instanceof ParseError)) throw e;
      p.recover(start);
    }
  }
  p.closeBrace(open, "the 'guards' block");
  return guards;
}

// section = ( "validate" | "query" ) "{" { field sep } "}"
/** Parses a `validate { }` or `query { }` section. */
export function fieldSection(p: Parser): FieldBlock {
  const word = p.advance();
  const open = p.openBrace(`after '${word.value}'`);
  return { fields: fieldList(p, open, `the '${word.value}' block`), line: word.line, col: word.col };
}

/** Parses field declarations up to and including the `}` that closes `open`. */
export function fieldList(p: Parser, open: Token, what: string): FieldDecl[] {
  const fields: FieldDecl[] = [];
  const seen = new Map<string, FieldDecl>();
  for (;;) {
    const doc = p.collectDoc();
    if (p.accept(',')) continue;
    if (p.check('}') || p.check('eof') || p.atDeclarationStart()) break;
    const start = p.mark();
    try {
      const f = field(p, doc);
      const first = seen.get(f.name);
      if (first) {
        p.report(DIAG.E_DUPLICATE_FIELD, `duplicate field '${f.name}'`, f, { hint: `first declared at ${first.line}:${first.col}`, length: f.name.length });
      } else {
        seen.set(f.name, f);
        fields.push(f);
      }
    } catch (e) {
      if (!(e instanceof ParseError)) throw e;
      p.recover(start);
    }
  }
  p.closeBrace(open, what);
  return fields;
}

// field = [doc] name [ "?" ] ":" TYPE { "@" name [ "(" [ expr { "," expr } ] ")" ] }
function field(p: Parser, doc: string | null): FieldDecl {
  const name = p.peek();
  if (name.type !== 'word') p.fail(`expected a field name or '}', found ${describe(name)}`, name);
  p.advance();
  const optional = p.accept('?') !== null;
  p.expect(':', "':'", `after the field name '${name.value}'`, `write '${name.value}: text' (or another type)`);
  const type = p.peek();
  if (type.type !== 'word') p.fail(`expected a type after '${name.value}:', found ${describe(type)}`, type, `types: ${FIELD_TYPES.join(' ')}`);
  p.advance();
  if (!(FIELD_TYPES as readonly string[]).includes(type.value)) {
    p.report(DIAG.E_UNKNOWN_TYPE, `unknown type '${type.value}'`, type, { hint: typeHint(type.value) });
  }
  const decorators: Decorator[] = [];
  for (;;) {
    // Decorators may continue on the following lines.
    if (p.check('newline') && p.peekPastNewlines().type === '@') p.skipNewlines();
    const at = p.accept('@');
    if (!at) break;
    const dec = p.peek();
    if (dec.type !== 'word') p.fail(`expected a decorator name after '@', found ${describe(dec)}`, dec);
    p.advance();
    const args = p.check('(') ? argumentList(p, p.advance()) : [];
    decorators.push({ name: dec.value, args, line: at.line, col: at.col });
  }
  endEntry(p, `the field '${name.value}'`);
  return {
    name: name.value,
    optional,
    type: type.value,
    typePos: { line: type.line, col: type.col },
    decorators,
    doc,
    line: name.line,
    col: name.col,
  };
}

/** Names other languages use for the field types. */
const TYPE_ALIASES: Record<string, string> = {
  string: 'text',
  str: 'text',
  integer: 'int',
  float: 'number',
  double: 'number',
  decimal: 'number',
  boolean: 'bool',
  array: 'list',
  map: 'object',
  dict: 'object',
  timestamp: 'datetime',
};

function typeHint(name: string): string {
  const alias = TYPE_ALIASES[name.toLowerCase()];
  if (alias) return `did you mean '${alias}'?`;
  return didYouMean(name, FIELD_TYPES) ?? `the types are: ${FIELD_TYPES.join(' ')}`;
}

/** Entries of `guards`, `validate`, `query` and `type` blocks are separated by newlines or commas. */
function skipEntrySeparators(p: Parser): void {
  for (let t = p.peek().type; t === 'newline' || t === ',' || t === ';'; t = p.peek().type) p.advance();
}

function endEntry(p: Parser, after: string): void {
  const t = p.peek();
  if (t.type !== 'newline' && t.type !== ',' && t.type !== '}' && t.type !== 'eof') {
    p.fail(`expected a new line, ',' or '}' after ${after}, found ${describe(t)}`, t);
  }
}
