/**
 * The lexer: turns an `.rvm` source into tokens with moo, then post-processes them (escapes,
 * doc comments, route heads, error tokens) into the flat token list the parser reads.
 *
 * Template strings (`"Hello ${name}!"`) become a token sequence rather than one token:
 *
 *     template_start  ( template_text | interp_start <main tokens> interp_end )*  template_end
 *
 * `template_text` carries the decoded text; the tokens between `interp_start` and `interp_end`
 * are ordinary tokens, so interpolations may nest braces and further strings. Every template is
 * closed in the token list, even when the source is not (a diagnostic reports that), so the
 * parser never has to handle a half-open string. Single-quoted strings are one `string` token.
 *
 * Multi-line texts (`"""…"""`, interpolating, and `'''…'''`, literal) become the same template
 * sequence; each line break inside is a `template_text` of its own, and once the text is closed
 * its common indentation is removed from the values (`dedent`).
 */
import { createRequire } from 'node:module';
import type Moo from 'moo';
import { diagnostic, type Diagnostic } from '../diagnostics.js';
import { DIAG } from '../errors.js';

/**
 * Required, not imported: importing a CommonJS package from an ES module makes Node scan its
 * source for export names, about 20 ms of every start that only moo would pay.
 */
const moo = createRequire(import.meta.url)('moo') as typeof Moo;

/** The punctuation tokens; each is its own token type. */
export const PUNCTUATION = [
  '**',
  '+=',
  '-=',
  '*=',
  '/=',
  '?.',
  '=>',
  '==',
  '!=',
  '<=',
  '>=',
  '&&',
  '||',
  '??',
  '=',
  '<',
  '>',
  '+',
  '-',
  '*',
  '/',
  '%',
  '!',
  '.',
  ',',
  ':',
  ';',
  '(',
  ')',
  '[',
  ']',
  '{',
  '}',
  '?',
  '@',
] as const;

export type Punctuation = (typeof PUNCTUATION)[number];

/**
 * Token kinds. `word` covers identifiers and keywords alike (the parser decides which words are
 * keywords where). `method` and `path` only follow `route` at the start of a declaration.
 * `invalid` marks characters the lexer already reported; the parser skips them silently.
 */
export type TokenType =
  | 'word'
  | 'number'
  | 'string'
  | 'template_start'
  | 'template_text'
  | 'interp_start'
  | 'interp_end'
  | 'template_end'
  | 'method'
  | 'path'
  | 'doc'
  | 'newline'
  | 'invalid'
  | 'eof'
  | Punctuation;

/**
 * One token. `text` is the exact source text; `value` is what it means: the decoded text of a
 * string or template part, a doc comment without `///` and one following space, else `text`.
 * `line`/`col` are 1-based, `offset` is 0-based into the source (UTF-16 units, like `col`).
 */
export interface Token {
  type: TokenType;
  value: string;
  text: string;
  line: number;
  col: number;
  offset: number;
}

const WORD = /[A-Za-z_][A-Za-z0-9_]*/;
const NUMBER = /(?:\d+\.\d+|\d+)(?:[eE][+-]?\d+)?/;
// A route path runs to the next space or `{`; `{name}` segments stay inside so the parser can
// point at them and suggest `:name`.
const PATH = /\/(?:[^\s{]|\{[^\s{}]*\})*/;
const SQ_STRING = /'(?:[^'\\\r\n]|\\[^\r\n]|\r(?!\n))*'/;
const SQ_UNTERMINATED = /'(?:[^'\\\r\n]|\\[^\r\n]|\r(?!\n))*\\?/;
const DQ_TEXT = /(?:[^"\\$\r\n]|\\[^\r\n]?|\$(?!\{)|\r(?!\n))+/;
/** One line's worth of a multi-line text: up to a line break, `${` or the closing `"""`. */
const TDQ_TEXT = /(?:[^"\\$\r\n]|\\[^\r\n]?|\$(?!\{)|"(?!"")|\r(?!\n))+/;
const TSQ_TEXT = /(?:[^'\\\r\n]|\\[^\r\n]?|'(?!'')|\r(?!\n))+/;

type Rules = Moo.Rules;
type Flavour = 'main' | 'interp' | 'brace' | 'head';

/** The rules shared by every state that lexes code; they differ only in what braces do. */
function codeRules(flavour: Flavour): Rules {
  const exit = flavour === 'head' ? { next: 'main' } : {};
  const rules: Rules = {
    newline: { match: /\r?\n/, lineBreaks: true, ...exit },
    ws: /[ \t\r\f\v\uFEFF]+/,
    doc: { match: /\/\/\/(?!\/)[^\r\n]*/, ...exit },
    comment: /\/\/[^\r\n]*/,
    block_comment: { match: /\/\*[\s\S]*?\*\//, lineBreaks: true },
    unterminated_comment: { match: /\/\*[\s\S]*/, lineBreaks: true },
  };
  if (flavour === 'head') {
    rules.method = { match: WORD, next: 'routePath' };
    rules.path = { match: PATH, next: 'main' };
  }
  Object.assign(rules, {
    number: { match: NUMBER, ...exit },
    word: { match: WORD, ...exit },
    // Before the one-quote rules: `"""` and `'''` open multi-line texts.
    ...(flavour === 'head' ? {} : { tdq_start: { match: '"""', push: 'tdq' }, tsq_start: { match: "'''", push: 'tsq' } }),
    string: { match: SQ_STRING, ...exit },
    unterminated_string: { match: SQ_UNTERMINATED, ...exit },
    template_start: flavour === 'head' ? { match: '"', next: 'dqHead' } : { match: '"', push: 'dq' },
  });
  if (flavour === 'interp') {
    rules['{'] = { match: '{', push: 'brace' };
    rules.interp_end = { match: '}', pop: 1 };
  } else if (flavour === 'brace') {
    rules['{'] = { match: '{', push: 'brace' };
    rules['}'] = { match: '}', pop: 1 };
  }
  rules.punct = { match: PUNCTUATION.slice(), type: (text: string) => text, ...exit };
  rules.invalid = { match: /[^\n]/, ...exit };
  return rules;
}

/** The state inside `"..."`; `top` is the variant entered from a route head, which has no stack. */
function stringRules(top: boolean): Rules {
  const close = top ? { next: 'main' } : { pop: 1 };
  return {
    template_end: { match: '"', ...close },
    interp_start: { match: '${', push: 'interp' },
    template_text: DQ_TEXT,
    string_newline: { match: /\r?\n/, lineBreaks: true, ...close },
    invalid: { match: /[\s\S]/, lineBreaks: true },
  } as Rules;
}

/** Inside `"""…"""` (interpolating) or `'''…'''`: line breaks are text. */
function multilineRules(quote: '"' | "'"): Rules {
  const rules: Rules = {
    ml_end: { match: quote.repeat(3), pop: 1 },
    ml_newline: { match: /\r?\n/, lineBreaks: true },
  };
  if (quote === '"') rules.interp_start = { match: '${', push: 'interp' };
  rules.template_text = quote === '"' ? TDQ_TEXT : TSQ_TEXT;
  rules.invalid = { match: /[\s\S]/, lineBreaks: true };
  return rules;
}

const headRules = codeRules('head');
const pathRules: Rules = { ...headRules };
delete pathRules.method;

const LEXER = moo.states(
  {
    main: codeRules('main'),
    interp: codeRules('interp'),
    brace: codeRules('brace'),
    dq: stringRules(false),
    dqHead: stringRules(true),
    tdq: multilineRules('"'),
    tsq: multilineRules("'"),
    routeHead: headRules,
    routePath: pathRules,
  },
  'main',
);

const ESCAPES: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  '0': '\0',
  '\\': '\\',
  "'": "'",
  '"': '"',
  $: '$',
};

/** Tokens and lexical diagnostics of one source file. */
export interface TokenizeResult {
  tokens: Token[];
  diagnostics: Diagnostic[];
  /** The source ended inside a block comment or a double-quoted string (already reported). */
  truncated: boolean;
}

/**
 * Splits `source` into tokens. Never throws: characters it cannot lex become `invalid` tokens
 * with an `E_UNEXPECTED_CHAR` diagnostic; the token list always ends with one `eof` token.
 */
export function tokenize(file: string, source: string): TokenizeResult {
  return new Tokenizer(file, source).run();
}

class Tokenizer {
  private readonly tokens: Token[] = [];
  private readonly diagnostics: Diagnostic[] = [];
  /** Open templates (`T`) and interpolations (`I`), innermost last; `at` is a template's index in `tokens`. */
  private readonly open: { kind: 'T' | 'I'; token: Token; at: number }[] = [];
  private braceDepth = 0;
  private lineHasToken = false;
  private lineHasComment = false;
  private lastInvalid: Diagnostic | null = null;
  private truncated = false;

  constructor(
    private readonly file: string,
    private readonly source: string,
  ) {}

  run(): TokenizeResult {
    const lexer = LEXER.reset(this.source);
    for (let t = lexer.next(); t; t = lexer.next()) {
      this.take(t as Moo.Token, lexer);
    }
    const end = lexer.save();
    this.closeOpenTemplates(end.line, end.col);
    this.tokens.push({ type: 'eof', value: '', text: '', line: end.line, col: end.col, offset: this.source.length });
    return { tokens: this.tokens, diagnostics: this.diagnostics, truncated: this.truncated };
  }

  private take(t: Moo.Token, lexer: Moo.Lexer): void {
    const type = t.type ?? 'invalid';
    if (type !== 'invalid') this.lastInvalid = null;
    switch (type) {
      case 'ws':
        return;
      case 'comment':
        this.lineHasComment = true;
        return;
      case 'block_comment':
        this.blockComment(t);
        return;
      case 'unterminated_comment':
        this.truncated = true;
        this.report(DIAG.E_UNTERMINATED_COMMENT, "unterminated block comment: missing '*/'", t, 2, "close the comment with '*/'");
        return;
      case 'newline':
        this.newline(t);
        return;
      case 'string_newline':
        this.unterminatedTemplate();
        this.newline(t);
        return;
      case 'invalid':
        this.invalid(t);
        return;
      case 'string':
        this.emit('string', t, this.decode(t.text.slice(1, -1), t, 1));
        return;
      case 'unterminated_string':
        this.report(DIAG.E_UNTERMINATED_STRING, 'unterminated text: missing closing "\'"', t, t.text.length, 'close the text with "\'" on the same line');
        this.emit('string', t, this.decode(t.text.slice(1).replace(/\\$/, ''), t, 1));
        return;
      case 'template_start':
      case 'tdq_start':
      case 'tsq_start':
        this.open.push({ kind: 'T', at: this.tokens.length, token: this.emit('template_start', t) });
        return;
      case 'ml_newline':
        this.emit('template_text', t, '\n');
        return;
      case 'ml_end':
        dedent(this.tokens, this.open.pop()!.at);
        this.emit('template_end', t);
        return;
      case 'template_text':
        this.emit('template_text', t, this.decode(t.text, t, 0));
        return;
      case 'interp_start':
        this.open.push({ kind: 'I', at: this.tokens.length, token: this.emit('interp_start', t) });
        return;
      case 'interp_end':
      case 'template_end':
        this.open.pop();
        this.emit(type, t);
        return;
      case 'doc':
        this.emit('doc', t, t.text.slice(3).replace(/^ /, ''));
        return;
      case 'word':
        this.word(t, lexer);
        return;
      default:
        this.braces(type);
        this.emit(type as TokenType, t);
    }
  }

  /** `route` at the start of a top-level line opens the route head (METHOD PATH). */
  private word(t: Moo.Token, lexer: Moo.Lexer): void {
    const atDeclarationStart = t.col === 1 || (this.braceDepth === 0 && !this.lineHasToken);
    if (t.value === 'route' && this.open.length === 0 && atDeclarationStart) lexer.setState('routeHead');
    this.emit('word', t);
  }

  private braces(type: string): void {
    if (this.open.length > 0) return;
    if (type === '{') this.braceDepth++;
    else if (type === '}') this.braceDepth = Math.max(0, this.braceDepth - 1);
  }

  /** A comment-only line yields no newline token, so doc comments stay next to what they document. */
  private newline(t: Moo.Token): void {
    const commentOnly = !this.lineHasToken && this.lineHasComment;
    this.lineHasToken = false;
    this.lineHasComment = false;
    if (!commentOnly) this.emit('newline', t);
    this.lineHasToken = false;
  }

  /**
   * A block comment ends where its `*` + `/` is: on one line it leaves the line as it was (a line
   * break after `a = 1 /* note *` + `/` still ends the statement); spanning lines, it separates
   * statements like the line break it contains, and what follows it starts a new line.
   */
  private blockComment(t: Moo.Token): void {
    if (t.lineBreaks > 0) {
      if (this.lineHasToken) this.emit('newline', t, '\n');
      this.lineHasToken = false;
    }
    this.lineHasComment = true;
  }

  /** Neighbouring unexpected characters are one problem, reported once. */
  private invalid(t: Moo.Token): void {
    const prev = this.tokens[this.tokens.length - 1];
    if (this.lastInvalid && prev && prev.type === 'invalid' && prev.offset + prev.text.length === t.offset) {
      prev.text += t.text;
      prev.value = prev.text;
      this.lastInvalid.length = prev.text.length;
      return;
    }
    const shown = JSON.stringify(t.text).slice(1, -1);
    this.lastInvalid = this.report(DIAG.E_UNEXPECTED_CHAR, `unexpected character '${shown}'`, t, 1);
    this.emit('invalid', t);
  }

  private unterminatedTemplate(): void {
    const top = this.open.pop();
    if (!top) return;
    this.report(
      DIAG.E_UNTERMINATED_STRING,
      "unterminated text: missing closing '\"'",
      top.token,
      1,
      'close the text with \'"\' on the same line, or write a multi-line text between \'"""\'',
    );
    const last = this.tokens[this.tokens.length - 1]!;
    this.synthetic('template_end', last.line, last.col + last.text.length);
  }

  /** At end of file, closes what is still open so the parser sees a well-formed template. */
  private closeOpenTemplates(line: number, col: number): void {
    const outer = this.open.find((o) => o.kind === 'T');
    this.truncated ||= outer !== undefined;
    const quote = outer?.token.text;
    if (outer)
      this.report(DIAG.E_UNTERMINATED_STRING, `unterminated text: missing closing '${quote}'`, outer.token, quote!.length, `close the text with '${quote}'`);
    while (this.open.length > 0) {
      const top = this.open.pop()!;
      this.synthetic(top.kind === 'T' ? 'template_end' : 'interp_end', line, col);
    }
  }

  /** Decodes backslash escapes of a one-line string body that starts `lead` columns into `t`. */
  private decode(raw: string, t: Moo.Token, lead: number): string {
    if (!raw.includes('\\')) return raw;
    let out = '';
    for (let i = 0; i < raw.length; i++) {
      const c = raw[i]!;
      if (c !== '\\') {
        out += c;
        continue;
      }
      const next = raw[i + 1];
      if (next === undefined) break;
      i++;
      const decoded = ESCAPES[next];
      if (decoded !== undefined) {
        out += decoded;
        continue;
      }
      const at = { line: t.line, col: t.col + lead + i - 1 };
      this.report(DIAG.E_BAD_ESCAPE, `unknown escape '\\${next}'`, at, 2, 'known escapes: \\n \\t \\r \\0 \\\\ \\\' \\" \\$');
      out += '\\' + next;
    }
    return out;
  }

  private emit(type: TokenType, t: Moo.Token, value?: string): Token {
    const token: Token = { type, value: value ?? t.text, text: t.text, line: t.line, col: t.col, offset: t.offset };
    if (type === 'newline') token.text = token.value = '\n';
    else this.lineHasToken = true;
    this.tokens.push(token);
    return token;
  }

  private synthetic(type: TokenType, line: number, col: number): void {
    const offset = this.tokens.length > 0 ? this.tokens[this.tokens.length - 1]!.offset : 0;
    this.tokens.push({ type, value: '', text: '', line, col, offset });
  }

  private report(code: string, message: string, at: { line: number; col: number }, length: number, hint?: string): Diagnostic {
    const d = diagnostic(code, message, { file: this.file, line: at.line, col: at.col }, { source: this.source, length, hint });
    this.diagnostics.push(d);
    return d;
  }
}

/** A line of a multi-line text: its text tokens (outside interpolations), and whether it holds an interpolation. */
interface TextLine {
  parts: Token[];
  interpolated: boolean;
  /** The line starts with an interpolation, so it has no indentation. */
  startsInterpolated: boolean;
  /** The token of the line break that ends it. */
  end: Token | null;
}

const BLANK = /^[ \t]*$/;

/**
 * Removes the common indentation of the multi-line text that opens at `tokens[at]` and ends
 * with the last token, as Java's text blocks do (JEP 378): the line break right after the opening
 * quotes is dropped; the indentation removed is the longest run of spaces and tabs that starts
 * every non-blank line after the first and, when the closing quotes stand alone on their line,
 * that line too (then dropped itself, so the text ends with a line break); blank lines become empty.
 * The values only change: positions and raw texts stay as written.
 */
function dedent(tokens: Token[], at: number): void {
  const lines: TextLine[] = [];
  let line: TextLine = { parts: [], interpolated: false, startsInterpolated: false, end: null };
  let depth = 0;
  for (let i = at + 1; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.type === 'interp_start' && depth++ === 0) {
      line.startsInterpolated ||= line.parts.length === 0;
      line.interpolated = true;
    } else if (t.type === 'interp_end') depth--;
    else if (depth === 0 && t.type === 'template_text') {
      if (t.text === '\n' || t.text === '\r\n') {
        line.end = t;
        lines.push(line);
        line = { parts: [], interpolated: false, startsInterpolated: false, end: null };
      } else line.parts.push(t);
    }
  }
  lines.push(line);
  if (lines.length === 1) return;
  const blank = (l: TextLine) => !l.interpolated && l.parts.every((p) => BLANK.test(p.text));
  const clear = (l: TextLine) => {
    for (const p of l.parts) p.value = '';
  };
  const [first, last] = [lines[0]!, lines[lines.length - 1]!];
  if (blank(first)) {
    clear(first);
    first.end!.value = '';
  }
  const indents: string[] = [];
  for (const l of lines.slice(1)) {
    const lead = l.startsInterpolated ? '' : /^[ \t]*/.exec(l.parts[0]?.text ?? '')![0];
    if (l === last || !blank(l)) indents.push(lead);
  }
  const indent = indents.reduce((common, lead) => {
    let n = 0;
    while (n < common.length && n < lead.length && common[n] === lead[n]) n++;
    return common.slice(0, n);
  }, indents[0] ?? '');
  for (const l of lines.slice(1)) {
    if (blank(l)) clear(l);
    else if (!l.startsInterpolated) l.parts[0]!.value = l.parts[0]!.value.slice(indent.length);
  }
}
