/**
 * The parser's shared state: the token cursor, newline rules, diagnostics, panic-mode recovery
 * and the nesting limit. The grammar itself lives in parser.ts, parser-stmt.ts and parser-expr.ts.
 */
import { diagnostic, type Diagnostic } from '../diagnostics.js';
import type { DocLine, Pos } from './ast.js';
import type { Token, TokenType } from './lexer.js';
import { DIAG, type DiagnosticCode } from '../errors.js';

/**
 * How deep expressions and blocks may nest (counting each operator of a chain as one level).
 * Far beyond hand-written code (a 200-term concatenation still fits), yet low enough that every
 * recursive pass over the tree (compiler, folding, inference, msgpack) stays well inside Node's
 * default stack, so `((((…))))` 100k deep is a diagnostic and never a RangeError.
 */
export const MAX_NESTING_DEPTH = 256;

/**
 * The largest source file the parser accepts. Route files are hand-written and rarely exceed a
 * few kilobytes; the cap bounds the memory and time one compile can take.
 */
export const MAX_SOURCE_BYTES = 1024 * 1024;

/**
 * After this many diagnostics the parser stops: later ones are mostly consequences of earlier
 * ones, and a file of garbage should not produce a wall of errors.
 */
export const MAX_DIAGNOSTICS = 50;

/** Words that are keywords everywhere; they can never name a variable. */
export const RESERVED = new Set([
  'if',
  'else',
  'for',
  'in',
  'while',
  'break',
  'continue',
  'return',
  'fail',
  'save',
  'delete',
  'try',
  'catch',
  'true',
  'false',
  'null',
  'and',
  'or',
  'not',
]);

/** Words that start a top-level declaration. */
export const DECLARATION_WORDS = ['route', 'guard_definition', 'type', 'fn', 'middleware', 'const'];

/** Thrown to enter panic mode; caught where the grammar can resynchronise. */
export class ParseError extends Error {}

/** Thrown once MAX_DIAGNOSTICS is reached; ends the parse. */
export class TooManyErrors extends Error {}

/** Where a statement started, to undo its state after a ParseError. */
export interface Mark {
  pos: number;
  nesting: number;
  depth: number;
}

/** The cursor and bookkeeping one parse shares between the grammar modules. */
export class Parser {
  pos = 0;
  /** Open `(`, `[`, object `{` and `${`, innermost last: inside them newlines end nothing. */
  private readonly brackets: TokenType[] = [];
  /** Current nesting of expressions and blocks, checked against MAX_NESTING_DEPTH. */
  depth = 0;
  /** The nesting level at which `{` opens a block, not an object (after `if cond`, `for … in xs`). */
  blockBraceAt = -1;
  /** Token index of the last error, so one bad token yields one diagnostic. */
  private lastErrorAt = -1;
  /** Token index of the token a ParseError was raised at. */
  errorAt = 0;
  /** The lexer already reported that the file ends inside a comment or string. */
  quietAtEof = false;
  /** Expressions written in parentheses, which are not assignment targets. */
  readonly parenthesized = new WeakSet<object>();

  constructor(
    readonly file: string,
    readonly source: string,
    readonly tokens: Token[],
    readonly diagnostics: Diagnostic[],
  ) {}

  // -------------------------------------------------------------------------------------------
  // Cursor

  /** Index of the next meaningful token: doc comments are skipped, newlines too inside brackets. */
  private index(): number {
    let i = this.pos;
    for (;;) {
      const t = this.tokens[i]!.type;
      if (t === 'doc' || (t === 'newline' && this.nesting > 0)) i++;
      else return i;
    }
  }

  peek(): Token {
    return this.tokens[this.index()]!;
  }

  /** The token after the next one, on the same line (newlines and docs are not skipped). */
  peekSecond(): Token {
    const i = this.index();
    return this.tokens[Math.min(i + 1, this.tokens.length - 1)]!;
  }

  advance(): Token {
    const i = this.index();
    const t = this.tokens[i]!;
    if (t.type !== 'eof') this.pos = i + 1;
    return t;
  }

  check(type: TokenType): boolean {
    return this.peek().type === type;
  }

  checkWord(value: string): boolean {
    const t = this.peek();
    return t.type === 'word' && t.value === value;
  }

  accept(type: TokenType): Token | null {
    return this.check(type) ? this.advance() : null;
  }

  skipNewlines(): void {
    while (this.peek().type === 'newline') this.advance();
  }

  /** Skips newlines and `;` between statements and declarations. */
  skipSeparators(): void {
    for (let t = this.peek().type; t === 'newline' || t === ';'; t = this.peek().type) this.advance();
  }

  /** The next meaningful token after any newlines, without consuming them. */
  peekPastNewlines(): Token {
    let i = this.index();
    while (this.tokens[i]!.type === 'newline' || this.tokens[i]!.type === 'doc') i++;
    return this.tokens[i]!;
  }

  /** Consumes newlines when the token after them is the word `value` (`}` newline `else`). */
  acceptWordAfterNewlines(value: string): Token | null {
    const t = this.peekPastNewlines();
    if (t.type !== 'word' || t.value !== value) return null;
    this.pos = this.tokens.indexOf(t, this.pos) + 1;
    return t;
  }

  /** Whether token `i` is the first on its line. */
  firstOnLine(i: number): boolean {
    for (let j = i - 1; j >= 0; j--) {
      const t = this.tokens[j]!.type;
      if (t === 'newline') return true;
      if (t !== 'doc') return false;
    }
    return true;
  }

  /** A statement ends here: a newline, `;`, `}` or the end of the file. */
  atStatementEnd(): boolean {
    const t = this.peek().type;
    return t === 'newline' || t === ';' || t === '}' || t === 'eof';
  }

  /** Consumes the end of a statement (newline or `;`), or fails naming what it found. */
  endStatement(after: string): void {
    const t = this.peek();
    if (t.type === 'newline' || t.type === ';') this.advance();
    else if (t.type !== '}' && t.type !== 'eof') this.fail(`expected a new line or ';' after ${after}, found ${describe(t)}`, t);
  }

  /** Consumes a token of `type` or fails with "expected WHAT after/in CONTEXT, found …". */
  expect(type: TokenType, what: string, context: string, hint?: string): Token {
    const t = this.peek();
    if (t.type === type) return this.advance();
    return this.fail(`expected ${what} ${context}, found ${describe(t)}`, t, hint);
  }

  /** Consumes a name (a word that is not reserved everywhere). */
  expectName(what: string, context: string): Token {
    const t = this.peek();
    if (t.type === 'word' && !RESERVED.has(t.value)) return this.advance();
    return this.fail(`expected ${what} ${context}, found ${describe(t)}`, t);
  }

  /**
   * A declaration keyword in column 1 followed by what that declaration needs: inside a block
   * this means the block's `}` is missing, and the parser stops the block there.
   */
  atDeclarationStart(): boolean {
    const t = this.peek();
    if (t.type !== 'word' || t.col !== 1 || !DECLARATION_WORDS.includes(t.value)) return false;
    const next = this.peekSecond();
    if (t.value === 'route') return next.type === 'method' || next.type === 'path';
    if (t.value === 'middleware') return next.type === '{';
    return next.type === 'word' && !RESERVED.has(next.value);
  }

  /**
   * Collects the `///` lines right before a declaration or field, consuming the newlines and
   * `;` before it. A blank line in between detaches them; a doc comment after code on the same
   * line documents nothing.
   */
  collectDoc(): string | null {
    return joinDoc(this.collectDocLines());
  }

  /** As collectDoc, line by line with positions. */
  collectDocLines(): DocLine[] {
    let lines: DocLine[] = [];
    for (;;) {
      const t = this.tokens[this.pos]!;
      if (t.type === 'doc') {
        if (this.firstOnLine(this.pos)) lines.push({ text: t.value, line: t.line, col: t.col + t.text.length - t.value.length });
        this.pos++;
        if (this.tokens[this.pos]!.type === 'newline') this.pos++;
      } else if (t.type === 'newline' || t.type === ';') {
        lines = [];
        this.pos++;
      } else {
        return lines;
      }
    }
  }

  /** Consumes the `{` opening `what`; it may sit on the next line. */
  openBrace(context: string): Token {
    if (this.peek().type === 'newline' && this.peekPastNewlines().type === '{') this.skipNewlines();
    const t = this.peek();
    const hint = t.type === '=' ? "to compare two values, use '=='" : undefined;
    return this.expect('{', "'{'", context, hint);
  }

  /** Consumes the `}` closing `what`, or reports it missing without entering panic mode. */
  closeBrace(open: Token, what: string): void {
    const t = this.peek();
    if (t.type === '}') this.advance();
    else this.report(DIAG.E_UNEXPECTED_TOKEN, `expected '}' to close ${what} opened at ${open.line}:${open.col}, found ${describe(t)}`, t);
  }

  // -------------------------------------------------------------------------------------------
  // Nesting

  /** How many expression brackets are open. */
  get nesting(): number {
    return this.brackets.length;
  }

  /** Notes an opened expression bracket (already consumed). */
  openBracket(type: '(' | '[' | '{' | 'interp_start'): void {
    this.brackets.push(type);
  }

  /** Notes that the innermost expression bracket was closed. */
  closeBracket(): void {
    this.brackets.pop();
  }

  /** Enters one level of nesting; past MAX_NESTING_DEPTH this is an error, not a stack overflow. */
  enter(at: Token): void {
    if (++this.depth > MAX_NESTING_DEPTH) {
      this.fail(`nesting deeper than ${MAX_NESTING_DEPTH} levels`, at, 'split the expression or block into smaller parts', DIAG.E_TOO_DEEP);
    }
  }

  mark(): Mark {
    return { pos: this.pos, nesting: this.nesting, depth: this.depth };
  }

  // -------------------------------------------------------------------------------------------
  // Diagnostics

  /** Records a diagnostic without interrupting the parse; one per token at most. */
  report(code: string, message: string, at: Pos | Token, options: { hint?: string; length?: number } = {}): void {
    const token = isToken(at) ? at : null;
    const index = token ? this.indexOfToken(token) : -1;
    if (index >= 0) {
      if (index === this.lastErrorAt) return;
      this.lastErrorAt = index;
      const type = (at as Token).type;
      if (type === 'invalid' || (type === 'eof' && this.quietAtEof)) return;
    }
    if (this.diagnostics.length >= MAX_DIAGNOSTICS) {
      this.diagnostics.push(
        diagnostic(
          DIAG.E_TOO_MANY_ERRORS,
          `too many errors; stopped after ${MAX_DIAGNOSTICS}`,
          { file: this.file, line: at.line, col: at.col },
          { source: this.source },
        ),
      );
      throw new TooManyErrors();
    }
    const length = options.length ?? (token ? firstLineLength(token) : 1);
    this.diagnostics.push(diagnostic(code, message, { file: this.file, line: at.line, col: at.col }, { source: this.source, hint: options.hint, length }));
  }

  /** Reports an error at token `at` and enters panic mode. */
  fail(message: string, at: Token, hint?: string, code: DiagnosticCode = DIAG.E_UNEXPECTED_TOKEN): never {
    this.report(code, message, at, { hint });
    const index = this.indexOfToken(at);
    this.errorAt = index >= 0 ? index : this.pos;
    throw new ParseError(message);
  }

  /** Where token `t` sits in the list; it is at or before the next meaningful token. */
  private indexOfToken(t: Token): number {
    return this.tokens.lastIndexOf(t, this.index());
  }

  // -------------------------------------------------------------------------------------------
  // Recovery

  /**
   * After a ParseError in the statement begun at `start`: restores the parser state and skips
   * to where the next statement can begin — past the end of the line at the statement's own
   * bracket level, or up to a `}` that closes the enclosing block. When the bad token starts a
   * line inside still-open brackets, a closing bracket is missing: parsing resumes at that line.
   */
  recover(start: Mark): void {
    const open = this.brackets.slice(start.nesting);
    this.brackets.length = start.nesting;
    this.depth = start.depth;
    this.blockBraceAt = -1;
    let i = Math.max(this.errorAt, start.pos);
    if (open.length > 0 && i > start.pos && this.firstOnLine(i)) {
      this.pos = i;
      return;
    }
    for (; i < this.tokens.length; i++) {
      const t = this.tokens[i]!.type;
      if (t === 'eof') break;
      if (t === '(' || t === '[' || t === '{' || t === 'interp_start') {
        open.push(t);
      } else if (t === ')' || t === ']' || t === '}' || t === 'interp_end') {
        // A closer also closes whatever was left open inside its pair, as `}` of `${ f( }` does.
        const k = open.lastIndexOf(OPENER[t]);
        if (k >= 0) open.length = k;
        else if (t === '}') break;
      } else if ((t === 'newline' || t === ';') && open.length === 0) {
        i++;
        break;
      }
    }
    // Progress is guaranteed: the scan stops before the start only at `}` or the end of file.
    this.pos = i;
  }

  /**
   * After a ParseError outside any block: skips to the next declaration keyword that starts a
   * line at brace level 0 (or in column 1, in case a `}` is missing).
   */
  recoverDeclaration(start: Mark): void {
    this.brackets.length = 0;
    this.depth = 0;
    this.blockBraceAt = -1;
    let level = 0;
    let i = Math.max(this.errorAt, start.pos + 1);
    for (; i < this.tokens.length; i++) {
      const t = this.tokens[i]!;
      if (t.type === 'eof') break;
      if (t.type === '{') level++;
      else if (t.type === '}') level = Math.max(0, level - 1);
      else if (t.type === 'word' && DECLARATION_WORDS.includes(t.value) && this.firstOnLine(i) && (level === 0 || t.col === 1)) break;
    }
    this.pos = i;
  }
}

const OPENER: Record<')' | ']' | '}' | 'interp_end', TokenType> = { ')': '(', ']': '[', '}': '{', interp_end: 'interp_start' };

/** How a token is named in messages: `'else'`, `keyword 'if'`, `end of line`, `text 'abc'`. */
export function describe(t: Token): string {
  switch (t.type) {
    case 'eof':
      return 'end of file';
    case 'newline':
      return 'end of line';
    case 'word':
      return RESERVED.has(t.value) ? `keyword '${t.value}'` : `'${t.value}'`;
    case 'number':
      return `number ${t.text}`;
    case 'string':
      return `text ${clip(t.text)}`;
    case 'template_start':
      return 'text "…"';
    case 'path':
      return `path '${clip(t.text)}'`;
    case 'doc':
      return 'a doc comment';
    default:
      return `'${clip(t.text)}'`;
  }
}

function clip(s: string): string {
  return s.length > 24 ? s.slice(0, 21) + '...' : s;
}

function isToken(x: Pos | Token): x is Token {
  return 'offset' in x && 'text' in x;
}

function firstLineLength(t: Token): number {
  const nl = t.text.indexOf('\n');
  return Math.max(1, nl < 0 ? t.text.length : nl);
}

/** The text of a doc comment's lines, or null for none. */
export function joinDoc(lines: readonly DocLine[]): string | null {
  return lines.length > 0 ? lines.map((l) => l.text).join('\n') : null;
}
