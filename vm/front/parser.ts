/**
 * The parser: source text → FileNode plus every diagnostic, in one pass over the tokens of
 * vm/front/lexer.ts. This module holds the entry point and the top-level declarations; statements,
 * sections and expressions live in parser-stmt.ts, parser-sections.ts and parser-expr.ts.
 *
 * It never throws: errors become diagnostics, and panic-mode recovery (as in clox) resumes at
 * the next line, block end or declaration, so one run reports several independent errors.
 */
import { HTTP_METHODS, type Decl, type DocLine, type FileNode, type HttpMethod, type Pos, type RouteDecl } from './ast.js';
import { diagnostic, didYouMean, type Diagnostic } from '../diagnostics.js';
import { tokenize, type Token } from './lexer.js';
import { DECLARATION_WORDS, joinDoc, describe, MAX_DIAGNOSTICS, MAX_SOURCE_BYTES, ParseError, Parser, TooManyErrors } from './parser-base.js';
import { parseRoutePath } from './parser-path.js';
import { fieldList, fieldSection, guardLine, guardsBlock, sectionAt } from './parser-sections.js';
import { parameterList } from './parser-expr.js';
import { block, statement } from './parser-stmt.js';
import { expression } from './parser-expr.js';
import { DIAG } from '../errors.js';

export { MAX_DIAGNOSTICS, MAX_NESTING_DEPTH, MAX_SOURCE_BYTES } from './parser-base.js';

/** The file a `middleware { }` block must live in. */
export const MIDDLEWARE_FILE = '_middleware.rvm';

/** The tree of one file (possibly partial) and all its diagnostics, in source order. */
export interface ParseResult {
  ast: FileNode;
  diagnostics: Diagnostic[];
  /** The declarations a syntax error fell in: never compiled, so no diagnostic comes from their remains. */
  broken: BrokenDecl[];
}

/**
 * A declaration with a syntax error in it. `decl` is what was read of it (null when the parser
 * gave it up); `name` is the fn, guard_definition or type it declares, when that much was read,
 * so uses of the name elsewhere are not reported as unknown.
 */
export interface BrokenDecl {
  decl: Decl | null;
  kind: 'fn' | 'guard' | 'type' | null;
  name: string | null;
}

/** Parses one `.rvm` source. Never throws, on any input. */
export function parse(file: string, source: string): ParseResult {
  const ast: FileNode = { kind: 'File', file, decls: [] };
  if (source.length > MAX_SOURCE_BYTES / 3 && Buffer.byteLength(source, 'utf8') > MAX_SOURCE_BYTES) {
    const message = `file is larger than ${MAX_SOURCE_BYTES} bytes`;
    return {
      ast,
      diagnostics: [diagnostic(DIAG.E_FILE_TOO_LARGE, message, { file, line: 1, col: 1 }, { hint: 'split it into several route files' })],
      broken: [],
    };
  }
  const lexed = tokenize(file, source);
  const p = new Parser(file, source, lexed.tokens, lexed.diagnostics.slice());
  // Whatever is unclosed at the end of such a file is a consequence of that one error.
  p.quietAtEof = lexed.truncated;
  const declarations = new Declarations(p);
  try {
    declarations.parse(ast);
  } catch (e) {
    // A bug must not take the server down: it becomes a diagnostic like any other problem.
    if (!(e instanceof TooManyErrors)) {
      const at = p.tokens[Math.min(p.pos, p.tokens.length - 1)]!;
      p.diagnostics.push(diagnostic(DIAG.E_INTERNAL, `internal parser error: ${(e as Error)?.message ?? e}`, { file, line: at.line, col: at.col }, { source }));
    }
  }
  return { ast, diagnostics: ordered(p.diagnostics, file, source), broken: brokenDeclarations(declarations.spans, p.diagnostics, lexed.diagnostics.length) };
}

/** Where one declaration was read: from its first token up to the first token of the next. */
interface DeclSpan {
  from: Token;
  /** The word after the keyword, which names a fn, guard_definition or type. */
  name: string | null;
  decl: Decl | null;
  /** How many diagnostics there were when it began. */
  firstDiagnostic: number;
}

/**
 * The declarations an error lies in: the parser's, recorded while each was read (a missing `}`
 * is found at the next declaration's keyword, yet belongs to the one left open), and the first
 * `lexical` ones, the lexer's, by where they stand.
 */
function brokenDeclarations(spans: readonly DeclSpan[], diagnostics: readonly Diagnostic[], lexical: number): BrokenDecl[] {
  const before = (d: Pos, t: Pos): boolean => d.line < t.line || (d.line === t.line && d.col < t.col);
  const broken: BrokenDecl[] = [];
  spans.forEach((span, i) => {
    const next = spans[i + 1];
    const own = diagnostics.slice(Math.max(span.firstDiagnostic, lexical), next?.firstDiagnostic ?? diagnostics.length);
    const lexed = diagnostics.slice(0, lexical).filter((d) => !before(d, span.from) && (next === undefined || before(d, next.from)));
    if (![...own, ...lexed].some((d) => d.severity === 'error')) return;
    broken.push({ decl: span.decl, ...declaredName(span) });
  });
  return broken;
}

/** The kind and name a declaration declares, read from its tokens when the parser gave it up. */
function declaredName(span: DeclSpan): Pick<BrokenDecl, 'kind' | 'name'> {
  const d = span.decl;
  if (d !== null) {
    if (d.kind === 'FnDecl') return { kind: 'fn', name: d.name };
    if (d.kind === 'GuardDef') return { kind: 'guard', name: d.name };
    if (d.kind === 'TypeDecl') return { kind: 'type', name: d.name };
    return { kind: null, name: null };
  }
  const word = span.from.type === 'word' ? span.from.value : '';
  const kind = word === 'fn' ? 'fn' : word === 'guard_definition' ? 'guard' : word === 'type' ? 'type' : null;
  return kind !== null && span.name !== null ? { kind, name: span.name } : { kind: null, name: null };
}

/** Diagnostics in source order, at most MAX_DIAGNOSTICS of them plus a closing note. */
function ordered(all: Diagnostic[], file: string, source: string): Diagnostic[] {
  const list = all
    .filter((d) => d.code !== DIAG.E_TOO_MANY_ERRORS)
    .map((d, i) => ({ d, i }))
    .sort((a, b) => a.d.line - b.d.line || a.d.col - b.d.col || a.i - b.i)
    .map((x) => x.d);
  if (list.length <= MAX_DIAGNOSTICS && list.length === all.length) return list;
  const kept = list.slice(0, MAX_DIAGNOSTICS);
  const last = kept[kept.length - 1] ?? { line: 1, col: 1 };
  kept.push(diagnostic(DIAG.E_TOO_MANY_ERRORS, `too many errors; stopped after ${MAX_DIAGNOSTICS}`, { file, line: last.line, col: last.col }, { source }));
  return kept;
}

/** Where route sections may still appear; they must come in this order. */
enum Phase {
  Guards,
  Validate,
  Query,
  Handler,
}

class Declarations {
  private readonly inMiddlewareFile: boolean;
  private middleware: Token | null = null;
  /** Every declaration begun, in order: where it starts and what was read of it. */
  readonly spans: DeclSpan[] = [];

  constructor(private readonly p: Parser) {
    this.inMiddlewareFile = p.file.split(/[\\/]/).pop() === MIDDLEWARE_FILE;
  }

  // file = { [doc] decl }
  parse(ast: FileNode): void {
    const p = this.p;
    let broken = false;
    for (;;) {
      const docLines = p.collectDocLines();
      const t = p.peek();
      if (t.type === 'eof') return;
      // After a declaration with errors, a stray `}` is most likely their consequence
      // (a block whose `{` was missing), so it is skipped without a second diagnostic.
      if (t.type === '}' && broken) {
        p.advance();
        continue;
      }
      const start = p.mark();
      const before = p.diagnostics.length;
      const second = p.peekSecond();
      const span: DeclSpan = { from: t, name: second.type === 'word' ? second.value : null, decl: null, firstDiagnostic: before };
      this.spans.push(span);
      try {
        const decl = this.declaration(t, docLines);
        span.decl = decl;
        if (decl) ast.decls.push(decl);
        this.endDeclaration();
      } catch (e) {
        if (!(e instanceof ParseError)) throw e;
        p.recoverDeclaration(start);
      }
      broken = p.diagnostics.length > before;
    }
  }

  // decl = route | guard_def | type_decl | fn_decl | middleware
  private declaration(t: Token, docLines: DocLine[]): Decl | null {
    const doc = joinDoc(docLines);
    if (t.type === 'word') {
      switch (t.value) {
        case 'route':
          return this.route(docLines);
        case 'guard_definition':
          return this.guardDefinition(doc);
        case 'type':
          return this.typeDeclaration(doc);
        case 'fn':
          return this.fn(doc);
        case 'middleware':
          return this.middlewareDeclaration(doc);
        case 'const':
          return this.constDeclaration(doc);
      }
    }
    return this.p.fail(`expected a declaration (route, guard_definition, type, fn, const or middleware), found ${describe(t)}`, t, this.declarationHint(t));
  }

  private declarationHint(t: Token): string | undefined {
    if (t.type !== 'word') return undefined;
    if (['function', 'func', 'def'].includes(t.value)) return "functions are declared with 'fn'";
    const near = didYouMean(t.value, DECLARATION_WORDS);
    if (near) return near;
    const next = this.p.peekSecond().type;
    if (next === '=' || next === '(' || next === '.') return 'statements belong inside a route, fn, guard_definition or middleware body';
    return undefined;
  }

  /** After a declaration the line must end (or the next declaration begin, if a `}` was missing). */
  private endDeclaration(): void {
    const p = this.p;
    const t = p.peek();
    if (t.type === 'newline' || t.type === ';') p.advance();
    else if (t.type !== 'eof' && !p.atDeclarationStart()) p.fail(`expected a new line after the declaration, found ${describe(t)}`, t);
  }

  // route = "route" METHOD PATH "{" { section } { stmt } "}"
  private route(docLines: DocLine[]): RouteDecl | null {
    const p = this.p;
    const kw = p.advance();
    if (this.inMiddlewareFile) {
      p.report(DIAG.E_MIDDLEWARE_FILE, `routes cannot be declared in ${MIDDLEWARE_FILE}`, kw, { hint: 'move the route to another .rvm file' });
    }
    const m = p.peek();
    if (m.type !== 'method' && m.type !== 'word') {
      p.fail(`expected an HTTP method after 'route', found ${describe(m)}`, m, "write e.g. 'route GET /users'");
    }
    p.advance();
    const method = this.method(m);
    const pathToken = p.peek();
    if (pathToken.type !== 'path') {
      const hint = pathToken.type === 'word' ? `a path starts with '/': write '/${pathToken.value}'` : undefined;
      p.fail(`expected a path after '${m.value}', found ${describe(pathToken)}`, pathToken, hint);
    }
    p.advance();
    const { segments, problem } = parseRoutePath(pathToken.text);
    if (problem) {
      const at = { line: pathToken.line, col: pathToken.col + problem.offset };
      p.report(DIAG.E_BAD_PATH, problem.message, at, { hint: problem.hint, length: problem.length });
    }
    const route: RouteDecl = {
      kind: 'Route',
      method,
      path: pathToken.text,
      pathPos: { line: pathToken.line, col: pathToken.col },
      segments,
      doc: joinDoc(docLines),
      docLines,
      guards: [],
      validate: null,
      query: null,
      body: [],
      line: kw.line,
      col: kw.col,
    };
    this.routeBody(route);
    return this.inMiddlewareFile ? null : route;
  }

  /** The method as written, or the nearest valid one after reporting E_BAD_METHOD. */
  private method(m: Token): HttpMethod {
    const upper = m.value.toUpperCase() as HttpMethod;
    if (HTTP_METHODS.includes(m.value as HttpMethod)) return m.value as HttpMethod;
    if (HTTP_METHODS.includes(upper)) {
      this.p.report(DIAG.E_BAD_METHOD, `HTTP methods are written in capitals: '${m.value}'`, m, { hint: `write '${upper}'` });
      return upper;
    }
    const hint = didYouMean(upper, HTTP_METHODS) ?? `the methods are: ${HTTP_METHODS.join(' ')}`;
    this.p.report(DIAG.E_BAD_METHOD, `unknown HTTP method '${m.value}'`, m, { hint });
    return 'ANY';
  }

  // body = "{" { section } { stmt } "}"        sections in order: guards, validate, query
  private routeBody(route: RouteDecl): void {
    const p = this.p;
    const open = p.openBrace('after the route path');
    p.enter(open);
    let phase = Phase.Guards;
    for (;;) {
      p.skipSeparators();
      const t = p.peek();
      if (t.type === '}' || t.type === 'eof' || p.atDeclarationStart()) break;
      const start = p.mark();
      try {
        if (sectionAt(p)) {
          phase = this.section(route, phase);
        } else {
          phase = Phase.Handler;
          const s = statement(p);
          if (s) route.body.push(s);
        }
      } catch (e) {
        if (!(e instanceof ParseError)) throw e;
        p.recover(start);
      }
    }
    p.closeBrace(open, 'the route body');
    p.depth--;
  }

  // section = guard line | guards block | validate block | query block
  private section(route: RouteDecl, phase: Phase): Phase {
    const p = this.p;
    const t = p.peek();
    const kind = sectionAt(p)!;
    const later = phase === Phase.Handler ? "the route's statements" : phase === Phase.Query ? "'query'" : "'validate'";
    if (kind === 'guard' || kind === 'guards') {
      if (phase !== Phase.Guards) p.report(DIAG.E_SECTION_ORDER, `guards must come before ${later}`, t, { length: t.text.length });
      route.guards.push(...(kind === 'guard' ? [guardLine(p)] : guardsBlock(p)));
      return phase;
    }
    const existing = kind === 'validate' ? route.validate : route.query;
    if (existing) {
      p.report(DIAG.E_SECTION_ORDER, `duplicate '${kind}' section`, t, { hint: `the first is at ${existing.line}:${existing.col}`, length: t.text.length });
    } else if (phase === Phase.Handler || (kind === 'validate' && phase === Phase.Query)) {
      p.report(DIAG.E_SECTION_ORDER, `'${kind}' must come before ${later}`, t, { length: t.text.length });
    }
    const fields = fieldSection(p);
    if (kind === 'validate') route.validate ??= fields;
    else route.query ??= fields;
    return Math.max(phase, kind === 'validate' ? Phase.Validate : Phase.Query);
  }

  // guard_def = "guard_definition" name [ "(" params ")" ] block
  private guardDefinition(doc: string | null): Decl {
    const p = this.p;
    const kw = p.advance();
    const name = p.expectName('a guard name', "after 'guard_definition'");
    const params = p.check('(') ? parameterList(p, p.advance()) : [];
    const body = block(p, `the guard '${name.value}'`, `after the guard name '${name.value}'`);
    return { kind: 'GuardDef', name: name.value, params, body, doc, line: kw.line, col: kw.col };
  }

  // type_decl = "type" name "{" { field sep } "}"
  private typeDeclaration(doc: string | null): Decl {
    const p = this.p;
    const kw = p.advance();
    const name = p.expectName('a type name', "after 'type'");
    const open = p.openBrace(`after the type name '${name.value}'`);
    const fields = fieldList(p, open, `the type '${name.value}'`);
    return { kind: 'TypeDecl', name: name.value, fields, doc, line: kw.line, col: kw.col };
  }

  // fn_decl = "fn" name "(" [ params ] ")" block
  private fn(doc: string | null): Decl {
    const p = this.p;
    const kw = p.advance();
    const name = p.expectName('a function name', "after 'fn'");
    const open = p.expect('(', "'('", `after the function name '${name.value}'`, `write 'fn ${name.value}() { … }'`);
    const params = parameterList(p, open);
    const body = block(p, `the function '${name.value}'`, 'after the parameter list');
    return { kind: 'FnDecl', name: name.value, params, body, doc, line: kw.line, col: kw.col };
  }

  // const_decl = "const" name "=" expr
  private constDeclaration(doc: string | null): Decl {
    const p = this.p;
    p.advance();
    const name = p.expectName('a constant name', "after 'const'");
    p.expect('=', "'='", `after the constant name '${name.value}'`, `write 'const ${name.value} = value'`);
    const value = expression(p);
    return { kind: 'Const', name: name.value, value, doc, line: name.line, col: name.col };
  }

  // middleware = "middleware" block
  private middlewareDeclaration(doc: string | null): Decl | null {
    const p = this.p;
    const kw = p.advance();
    let keep = true;
    if (!this.inMiddlewareFile) {
      p.report(DIAG.E_MIDDLEWARE_FILE, `'middleware' is only allowed in a file named ${MIDDLEWARE_FILE}`, kw, {
        hint: `move it to ${MIDDLEWARE_FILE} in this folder`,
        length: kw.text.length,
      });
      keep = false;
    } else if (this.middleware) {
      p.report(DIAG.E_DUPLICATE_MIDDLEWARE, `a second 'middleware' block in ${MIDDLEWARE_FILE}`, kw, {
        hint: `merge it into the first, at ${this.middleware.line}:${this.middleware.col}`,
        length: kw.text.length,
      });
      keep = false;
    } else {
      this.middleware = kw;
    }
    const body = block(p, "the 'middleware' block", "after 'middleware'");
    return keep ? { kind: 'Middleware', body, doc, line: kw.line, col: kw.col } : null;
  }
}
