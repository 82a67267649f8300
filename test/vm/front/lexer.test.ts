import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { tokenize, type Token } from '../../../vm/front/lexer.js';

/** `type:value` for every token but the final eof. */
function kinds(source: string): string[] {
  return tokenize('t.rvm', source)
    .tokens.slice(0, -1)
    .map((t) => (t.type === t.value || t.type === 'newline' || t.value === '' ? t.type : `${t.type}:${t.value}`));
}

function codes(source: string): string[] {
  return tokenize('t.rvm', source).diagnostics.map((d) => `${d.code}@${d.line}:${d.col}`);
}

function at(tokens: Token[], type: string, value?: string): Token {
  const t = tokens.find((x) => x.type === type && (value === undefined || x.value === value));
  assert.ok(t, `no ${type} ${value ?? ''}`);
  return t;
}

describe('lexer: tokens and positions', () => {
  test('words, numbers and punctuation, longest match first', () => {
    assert.deepEqual(kinds('a == b != c <= d >= e && f || g ?? h'), [
      'word:a',
      '==',
      'word:b',
      '!=',
      'word:c',
      '<=',
      'word:d',
      '>=',
      'word:e',
      '&&',
      'word:f',
      '||',
      'word:g',
      '??',
      'word:h',
    ]);
    assert.deepEqual(kinds('= < > + - * / % ! . , : ; ( ) [ ] { } ? @'), [
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
    ]);
  });

  test('numbers: integers, decimals, exponents', () => {
    assert.deepEqual(kinds('12 1.5 2e3 4.5E-2 7e+1'), ['number:12', 'number:1.5', 'number:2e3', 'number:4.5E-2', 'number:7e+1']);
  });

  test('1-based line and column of every token, newlines significant', () => {
    const { tokens } = tokenize('t.rvm', 'x = 1\n  y = foo(2)\n');
    const pos = tokens.map((t) => `${t.type}@${t.line}:${t.col}`);
    assert.deepEqual(pos, [
      'word@1:1',
      '=@1:3',
      'number@1:5',
      'newline@1:6',
      'word@2:3',
      '=@2:5',
      'word@2:7',
      '(@2:10',
      'number@2:11',
      ')@2:12',
      'newline@2:13',
      'eof@3:1',
    ]);
    assert.equal(at(tokens, 'word', 'foo').offset, 12);
  });

  test('CRLF line endings count as one newline', () => {
    const { tokens } = tokenize('t.rvm', 'a\r\nb');
    assert.deepEqual(
      tokens.map((t) => `${t.type}@${t.line}:${t.col}`),
      ['word@1:1', 'newline@1:2', 'word@2:1', 'eof@2:2'],
    );
  });

  test('the token list always ends with eof', () => {
    assert.deepEqual(
      tokenize('t.rvm', '').tokens.map((t) => t.type),
      ['eof'],
    );
  });
});

describe('lexer: comments', () => {
  test('line comments are skipped, doc comments are kept without /// and one space', () => {
    assert.deepEqual(kinds('x // note\n///  Doc text\n//// not doc\ny'), ['word:x', 'newline', 'doc: Doc text', 'newline', 'word:y']);
  });

  test('a comment-only line produces no newline token', () => {
    assert.deepEqual(kinds('/// a\n// aside\nroute'), ['doc:a', 'newline', 'word:route']);
  });

  test('block comments are skipped and their lines counted', () => {
    const { tokens } = tokenize('t.rvm', 'a /* one\ntwo\nthree */ b\nc');
    assert.deepEqual(
      tokens.map((t) => `${t.type}@${t.line}:${t.col}`),
      ['word@1:1', 'newline@1:3', 'word@3:10', 'newline@3:11', 'word@4:1', 'eof@4:2'],
    );
  });

  test('a block comment on one line separates nothing', () => {
    assert.deepEqual(kinds('a /* x */ + b'), ['word:a', '+', 'word:b']);
  });

  test('an unterminated block comment is reported', () => {
    assert.deepEqual(codes('a\n  /* open'), ['E_UNTERMINATED_COMMENT@2:3']);
  });
});

describe('lexer: strings', () => {
  test('single-quoted strings decode escapes and never interpolate', () => {
    const { tokens, diagnostics } = tokenize('t.rvm', "'a\\n\\t\\\\\\'\\\"\\$\\r\\0' 'Your code is {code}' '${x}'");
    assert.deepEqual(diagnostics, []);
    assert.deepEqual(
      tokens.slice(0, 3).map((t) => [t.type, t.value]),
      [
        ['string', 'a\n\t\\\'"$\r\0'],
        ['string', 'Your code is {code}'],
        ['string', '${x}'],
      ],
    );
  });

  test('double-quoted strings become template token sequences', () => {
    assert.deepEqual(kinds('"Hello ${name}!"'), [
      'template_start:"',
      'template_text:Hello ',
      'interp_start:${',
      'word:name',
      'interp_end:}',
      'template_text:!',
      'template_end:"',
    ]);
    assert.deepEqual(kinds('"plain \\"quoted\\" $5"'), ['template_start:"', 'template_text:plain "quoted" $5', 'template_end:"']);
    assert.deepEqual(kinds('"a\\${b}"'), ['template_start:"', 'template_text:a${b}', 'template_end:"']);
  });

  test('interpolations track nested braces and nested strings', () => {
    assert.deepEqual(kinds('"${ {a: 1}.a }"'), [
      'template_start:"',
      'interp_start:${',
      '{',
      'word:a',
      ':',
      'number:1',
      '}',
      '.',
      'word:a',
      'interp_end:}',
      'template_end:"',
    ]);
    assert.deepEqual(kinds('"x${ "y${z}" }w"'), [
      'template_start:"',
      'template_text:x',
      'interp_start:${',
      'template_start:"',
      'template_text:y',
      'interp_start:${',
      'word:z',
      'interp_end:}',
      'template_end:"',
      'interp_end:}',
      'template_text:w',
      'template_end:"',
    ]);
  });

  test('code after a template is lexed normally again', () => {
    assert.deepEqual(kinds('x = "${a}" + {b: 1}'), [
      'word:x',
      '=',
      'template_start:"',
      'interp_start:${',
      'word:a',
      'interp_end:}',
      'template_end:"',
      '+',
      '{',
      'word:b',
      ':',
      'number:1',
      '}',
    ]);
  });

  test('unknown escapes are reported at the backslash', () => {
    const { tokens, diagnostics } = tokenize('t.rvm', "x = 'a\\qb'");
    assert.deepEqual(
      diagnostics.map((d) => `${d.code}@${d.line}:${d.col}`),
      ['E_BAD_ESCAPE@1:7'],
    );
    assert.equal(at(tokens, 'string').value, 'a\\qb');
    assert.deepEqual(codes('"\\u"'), ['E_BAD_ESCAPE@1:2']);
  });

  test('unterminated strings are reported and closed at the end of the line', () => {
    assert.deepEqual(codes("x = 'abc\ny = 1"), ['E_UNTERMINATED_STRING@1:5']);
    assert.deepEqual(kinds("'abc\ny"), ['string:abc', 'newline', 'word:y']);
    assert.deepEqual(codes('x = "abc\ny = 1'), ['E_UNTERMINATED_STRING@1:5']);
    assert.deepEqual(kinds('"abc\ny'), ['template_start:"', 'template_text:abc', 'template_end', 'newline', 'word:y']);
  });

  test('an interpolation left open at end of file is closed with one diagnostic', () => {
    const { tokens, diagnostics } = tokenize('t.rvm', 'x = "a ${ b');
    assert.deepEqual(
      diagnostics.map((d) => d.code),
      ['E_UNTERMINATED_STRING'],
    );
    assert.deepEqual(
      tokens.slice(-3).map((t) => t.type),
      ['interp_end', 'template_end', 'eof'],
    );
  });
});

describe('lexer: multi-line texts', () => {
  /** The text a multi-line literal means: its template_text values joined. */
  const text = (source: string) =>
    tokenize('t.rvm', source)
      .tokens.filter((t) => t.type === 'template_text')
      .map((t) => t.value)
      .join('');

  test('line breaks are template text; the one after the opening quotes is dropped', () => {
    assert.deepEqual(kinds('x = """\n  a ${b}\n  """\ny'), [
      'word:x',
      '=',
      'template_start:"""',
      'template_text',
      'template_text:a ',
      'interp_start:${',
      'word:b',
      'interp_end:}',
      'template_text:\n',
      'template_text',
      'template_end:"""',
      'newline',
      'word:y',
    ]);
  });

  test('the common indentation goes, counting the closing line but not the first', () => {
    assert.equal(text('"""\n    a\n      b\n    """'), 'a\n  b\n');
    assert.equal(text('"""\n    a\n  """'), '  a\n');
    assert.equal(text("'''\n\t\ta\n\t\tb'''"), 'a\nb');
    assert.equal(text('"""head\n    a\n    """'), 'head\na\n');
    // Blank lines neither count nor keep their spaces; CRLF is a line feed.
    assert.equal(text('"""\r\n    a\r\n \r\n    b\r\n    """'), 'a\n\nb\n');
    // Tabs and spaces are compared as written: no common run, nothing removed.
    assert.equal(text('"""\n\ta\n    b"""'), '\ta\n    b');
  });

  test("''' does not interpolate; both decode escapes and keep lone quotes", () => {
    assert.equal(text("'''\n  ${x} \\n '' ' \"\n  '''"), "${x} \n '' ' \"\n");
    assert.equal(text('"""say "hi" """'), 'say "hi" ');
  });

  test('left open, it is reported at its opening quotes with their spelling', () => {
    const { diagnostics } = tokenize('t.rvm', 'x = """\n  abc\n');
    assert.deepEqual(
      diagnostics.map((d) => `${d.code}@${d.line}:${d.col} ${d.message}`),
      [`E_UNTERMINATED_STRING@1:5 unterminated text: missing closing '"""'`],
    );
  });
});

describe('lexer: route heads', () => {
  test('route METHOD PATH at the start of a declaration', () => {
    assert.deepEqual(kinds('route GET /users/:id/files/*rest {'), ['word:route', 'method:GET', 'path:/users/:id/files/*rest', '{']);
    const { tokens } = tokenize('t.rvm', 'route  POST   /a {');
    assert.deepEqual([at(tokens, 'method').col, at(tokens, 'path').col], [8, 15]);
  });

  test('a path stops at whitespace or {, but keeps {name} segments for a hint', () => {
    assert.deepEqual(kinds('route GET /a{'), ['word:route', 'method:GET', 'path:/a', '{']);
    assert.deepEqual(kinds('route GET /a/{id} {'), ['word:route', 'method:GET', 'path:/a/{id}', '{']);
  });

  test('route heads end at the line end, so the next line is code again', () => {
    assert.deepEqual(kinds('route GET\n/a'), ['word:route', 'method:GET', 'newline', '/', 'word:a']);
  });

  test('route inside a block or after a dot is an ordinary word', () => {
    assert.deepEqual(kinds('x {\n  route GET /a\n}'), ['word:x', '{', 'newline', 'word:route', 'word:GET', '/', 'word:a', 'newline', '}']);
    assert.deepEqual(kinds('a.route GET'), ['word:a', '.', 'word:route', 'word:GET']);
  });

  test('route in column 1 opens a head even when an earlier } is missing', () => {
    assert.deepEqual(kinds('x {\nroute GET /b {'), ['word:x', '{', 'newline', 'word:route', 'method:GET', 'path:/b', '{']);
  });

  test('the root path', () => {
    assert.deepEqual(kinds('route GET / {'), ['word:route', 'method:GET', 'path:/', '{']);
  });
});

describe('lexer: errors', () => {
  test('an unexpected character is reported and lexing goes on', () => {
    const { tokens, diagnostics } = tokenize('t.rvm', 'a # b\nc ^ d');
    assert.deepEqual(
      diagnostics.map((d) => `${d.code}@${d.line}:${d.col}`),
      ['E_UNEXPECTED_CHAR@1:3', 'E_UNEXPECTED_CHAR@2:3'],
    );
    assert.deepEqual(
      tokens.filter((t) => t.type === 'word').map((t) => t.value),
      ['a', 'b', 'c', 'd'],
    );
  });

  test('neighbouring unexpected characters are one diagnostic', () => {
    const { diagnostics } = tokenize('t.rvm', 'x = ###');
    assert.equal(diagnostics.length, 1);
    assert.equal(diagnostics[0]!.length, 3);
    assert.deepEqual(codes('x = 😀'), ['E_UNEXPECTED_CHAR@1:5']);
  });

  test('every diagnostic carries the source line', () => {
    const { diagnostics } = tokenize('app/t.rvm', 'ok\nbad `');
    assert.equal(diagnostics[0]!.file, 'app/t.rvm');
    assert.equal(diagnostics[0]!.sourceLine, 'bad `');
  });

  test('never throws on arbitrary input', () => {
    for (const s of ['\u0000', '"${', '"${"${"', "'\\", '/*', 'route', 'route GET', '}}}}', '"\\', '${}', '\uD800']) {
      assert.doesNotThrow(() => tokenize('t.rvm', s));
    }
  });
});
