import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Block, Decl, Expr, FnDecl, RouteDecl, Stmt, TypeDecl } from '../../../vm/front/ast.js';
import { MAX_DIAGNOSTICS, MAX_NESTING_DEPTH, MAX_SOURCE_BYTES, parse } from '../../../vm/front/parser.js';

// ---------------------------------------------------------------------------------------------
// Helpers: an s-expression printer for trees, and shorthands for common parses.

function sx(e: Expr): string {
  switch (e.kind) {
    case 'Literal':
      return typeof e.value === 'string' ? `'${e.value}'` : String(e.value);
    case 'Template':
      return `(tpl ${e.parts.map((p) => (typeof p === 'string' ? `'${p}'` : sx(p))).join(' ')})`;
    case 'List':
      return `[${e.items.map(sx).join(' ')}]`;
    case 'Object':
      return `{${e.entries.map((x) => `${x.key}: ${sx(x.value)}`).join(', ')}}`;
    case 'Name':
      return e.name;
    case 'Unary':
      return `(${e.op} ${sx(e.operand)})`;
    case 'Binary':
    case 'Logical':
      return `(${e.op} ${sx(e.left)} ${sx(e.right)})`;
    case 'Conditional':
      return `(? ${sx(e.cond)} ${sx(e.then)} ${sx(e.otherwise)})`;
    case 'Member':
      return `(${e.optional ? '?.' : '.'}${e.chained ? '~' : ''} ${sx(e.object)} ${e.name})`;
    case 'Index':
      return `(${e.optional ? '?.' : ''}[]${e.chained ? '~' : ''} ${sx(e.object)} ${sx(e.index)})`;
    case 'Call':
      return `(call ${[sx(e.callee), ...e.args.map(sx)].join(' ')})`;
    case 'Lambda':
      return `(=> (${e.params.map((p) => p.name).join(' ')}) ${sx(e.body)})`;
    case 'Comprehension':
      return `(for ${sx(e.item)} ${e.key === null ? '' : `${e.key} `}${e.value} ${sx(e.iterable)}${e.cond === null ? '' : ` ${sx(e.cond)}`})`;
  }
}

function sb(b: Block): string {
  return `{${b.body.map(ss).join(' ')}}`;
}

function ss(s: Stmt): string {
  switch (s.kind) {
    case 'Assign':
      return `(${s.op ?? ''}= ${sx(s.target)} ${sx(s.value)})`;
    case 'If':
      return `(if ${sx(s.cond)} ${sb(s.then)}${s.otherwise ? ' ' + (s.otherwise.kind === 'If' ? ss(s.otherwise) : sb(s.otherwise)) : ''})`;
    case 'For':
      return `(for ${s.key ? s.key + ',' : ''}${s.value} ${sx(s.iterable)} ${sb(s.body)})`;
    case 'While':
      return `(while ${sx(s.cond)} ${sb(s.body)})`;
    case 'Break':
      return '(break)';
    case 'Continue':
      return '(continue)';
    case 'Return':
      return s.value ? `(return ${sx(s.value)})` : '(return)';
    case 'Fail':
      return `(fail ${sx(s.status)}${s.message ? ' ' + sx(s.message) : ''})`;
    case 'Throw':
      return `(throw ${sx(s.code)}${s.message ? ' ' + sx(s.message) : ''})`;
    case 'Save':
      return `(save ${sx(s.record)})`;
    case 'Delete':
      return `(delete ${sx(s.record)})`;
    case 'Transaction':
      return `(transaction ${sb(s.body)})`;
    case 'Try':
      return `(try ${sb(s.body)} ${s.errName} ${sb(s.handler)})`;
    case 'Response':
      return `(response ${sx(s.fields)})`;
    case 'ExprStmt':
      return sx(s.expr);
  }
}

function clean(source: string, file = 'app/t.rvm'): Decl[] {
  const r = parse(file, source);
  assert.deepEqual(
    r.diagnostics.map((d) => `${d.code}@${d.line}:${d.col} ${d.message}`),
    [],
  );
  return r.ast.decls;
}

/** The statements of `source` placed in a function body, printed. */
function stmts(source: string): string[] {
  const fn = clean(`fn f() {\n${source}\n}`)[0] as FnDecl;
  return fn.body.body.map(ss);
}

function expr(source: string): string {
  const body = stmts(source);
  assert.equal(body.length, 1, `one statement expected, got ${body.join(' | ')}`);
  return body[0]!;
}

function route(source: string): RouteDecl {
  return clean(source)[0] as RouteDecl;
}

/** `CODE@line:col` of every diagnostic. */
function errors(source: string, file = 'app/t.rvm'): string[] {
  return parse(file, source).diagnostics.map((d) => `${d.code}@${d.line}:${d.col}`);
}

// ---------------------------------------------------------------------------------------------

describe('parser: declarations', () => {
  test('route with method, path, segments, guards, validate, query and handler', () => {
    const r = route(`route POST /api/users/:id {
  guard auth
  guard rate_limit(100, 60)
  validate {
    email: text @required @email
  }
  query {
    page?: int @default(1)
  }
  user = User.create(body)
  response.created(user)
}`);
    assert.equal(r.kind, 'Route');
    assert.equal(r.method, 'POST');
    assert.equal(r.path, '/api/users/:id');
    assert.deepEqual(r.pathPos, { line: 1, col: 12 });
    assert.deepEqual([r.line, r.col], [1, 1]);
    assert.deepEqual(r.segments, [
      { kind: 'static', value: 'api' },
      { kind: 'static', value: 'users' },
      { kind: 'param', value: 'id' },
    ]);
    assert.deepEqual(
      r.guards.map((g) => `${g.name}(${g.args.map(sx).join(',')}):${g.mode}@${g.line}:${g.col}`),
      ['auth():required@2:9', 'rate_limit(100,60):required@3:9'],
    );
    assert.deepEqual(
      r.validate!.fields.map((f) => f.name),
      ['email'],
    );
    assert.deepEqual([r.validate!.line, r.validate!.col], [4, 3]);
    assert.deepEqual(
      r.query!.fields.map((f) => [f.name, f.optional, f.type]),
      [['page', true, 'int']],
    );
    assert.deepEqual(r.body.map(ss), ['(= user (call (. User create) body))', '(call (. response created) user)']);
  });

  test('every HTTP method and the root path', () => {
    for (const m of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'ANY']) {
      const r = route(`route ${m} / { }`);
      assert.equal(r.method, m);
      assert.deepEqual(r.segments, []);
    }
  });

  test('wildcard segment and static characters', () => {
    assert.deepEqual(route('route GET /files/v1.2/a_b~c-d%20/*rest {}').segments, [
      { kind: 'static', value: 'files' },
      { kind: 'static', value: 'v1.2' },
      { kind: 'static', value: 'a_b~c-d%20' },
      { kind: 'wildcard', value: 'rest' },
    ]);
  });

  test('guard_definition with and without parameters', () => {
    const [a, b] = clean(`guard_definition premium_user {
  user = auth_user()
  if user.plan != 'premium' { fail 403 'Premium required' }
}
guard_definition min_age(age, strict) {
  if auth_user().age < age { fail 403 'Too young' }
}`);
    assert.equal(a!.kind, 'GuardDef');
    assert.equal(b!.kind, 'GuardDef');
    if (a!.kind !== 'GuardDef' || b!.kind !== 'GuardDef') return;
    assert.equal(a!.name, 'premium_user');
    assert.deepEqual(a!.params, []);
    assert.deepEqual(
      b!.params.map((p) => `${p.name}@${p.line}:${p.col}`),
      ['age@5:26', 'strict@5:31'],
    );
    assert.deepEqual(b!.body.body.map(ss), ["(if (< (. (call auth_user) age) age) {(fail 403 'Too young')})"]);
  });

  test('type with fields', () => {
    const t = clean('type User {\n  email: text @email\n  name: text, role: text @one_of("user", "admin")\n}')[0] as TypeDecl;
    assert.equal(t.kind, 'TypeDecl');
    assert.equal(t.name, 'User');
    assert.deepEqual(
      t.fields.map((f) => `${f.name}:${f.type}${f.decorators.map((d) => ` @${d.name}(${d.args.map(sx).join(',')})`).join('')}`),
      ['email:text @email()', 'name:text', "role:text @one_of('user','admin')"],
    );
  });

  test('fn with parameters and return', () => {
    const f = clean('fn add(a, b) {\n  return a + b\n}')[0] as FnDecl;
    assert.equal(f.kind, 'FnDecl');
    assert.deepEqual(
      f.params.map((p) => p.name),
      ['a', 'b'],
    );
    assert.deepEqual(f.body.body.map(ss), ['(return (+ a b))']);
    assert.deepEqual((clean('fn none() { return }')[0] as FnDecl).params, []);
  });

  test('middleware in _middleware.rvm', () => {
    const [m] = clean("middleware {\n  set_header('X-A', '1')\n  next()\n  log(response.status)\n}", 'app/api/_middleware.rvm');
    assert.equal(m!.kind, 'Middleware');
    if (m!.kind !== 'Middleware') return;
    assert.deepEqual(m!.body.body.map(ss), ["(call set_header 'X-A' '1')", '(call next)', '(call log (. response status))']);
  });

  test('several declarations in one file, separated by newlines', () => {
    const decls = clean('fn a() {}\n\n\nfn b() {}\ntype T { x: int }\nroute GET /x { }');
    assert.deepEqual(
      decls.map((d) => d.kind),
      ['FnDecl', 'FnDecl', 'TypeDecl', 'Route'],
    );
  });
});

describe('parser: doc comments', () => {
  test('attach to route, guard_definition, type, fn, middleware and fields', () => {
    const decls = clean(`/// Lists users.
///   Indented second line.
route GET /users { }
/// Needs a plan.
guard_definition premium { }
/// A user.
type User {
  /// The address.
  /// Must be unique.
  email: text
  name: text
}
/// Adds.
fn add(a, b) { return a + b }`);
    assert.deepEqual(
      decls.map((d) => d.doc),
      ['Lists users.\n  Indented second line.', 'Needs a plan.', 'A user.', 'Adds.'],
    );
    assert.deepEqual(
      (decls[2] as TypeDecl).fields.map((f) => f.doc),
      ['The address.\nMust be unique.', null],
    );
    const [m] = clean('/// Logs.\nmiddleware { }', '_middleware.rvm');
    assert.equal(m!.doc, 'Logs.');
  });

  test('a blank line detaches a doc comment; a comment line does not', () => {
    assert.equal(clean('/// Lost.\n\nroute GET /a { }')[0]!.doc, null);
    assert.equal(clean('/// Kept.\n// aside\nroute GET /a { }')[0]!.doc, 'Kept.');
  });

  test('docs followed by nothing attachable are ignored silently', () => {
    assert.deepEqual(clean('/// dangling at the end'), []);
    assert.deepEqual(stmts('/// before a statement\nx = 1 /// after code'), ['(= x 1)']);
  });

  test('a doc after code on the same line documents nothing', () => {
    const t = clean('type T {\n  a: int /// about a\n  b: int\n}')[0] as TypeDecl;
    assert.deepEqual(
      t.fields.map((f) => f.doc),
      [null, null],
    );
  });

  test('validate fields carry their docs', () => {
    const r = route('route POST /x {\n  validate {\n    /// Your e-mail.\n    email: text @email\n  }\n}');
    assert.equal(r.validate!.fields[0]!.doc, 'Your e-mail.');
  });
});

describe('parser: sections and fields', () => {
  test('guards block with args, optional, commas and newlines', () => {
    const r = route(`route POST /api/users {
  guards { auth: required, csrf: required
    rate_limit(100, 60): required
    auth2: optional }
}`);
    assert.deepEqual(
      r.guards.map((g) => `${g.name}/${g.args.length}/${g.mode}`),
      ['auth/0/required', 'csrf/0/required', 'rate_limit/2/required', 'auth2/0/optional'],
    );
  });

  test('guard lines and a guards block may mix before validate', () => {
    const r = route('route GET /x {\n  guard auth\n  guards { csrf: required }\n  guard role("admin")\n}');
    assert.deepEqual(
      r.guards.map((g) => g.name),
      ['auth', 'csrf', 'role'],
    );
  });

  test('field forms: optional, decorators with args, decorators on following lines', () => {
    const r = route(`route POST /users {
  validate {
    email: text @required @email
    password: text @required @min(8) @max(128)
    age: int @min(18) @max(120)
    role?: text @one_of('user', 'admin') @default('user')
    avatar: file @image @max_size('5MB')
    score: number
      @range(-1.5, 10)
  }
}`);
    const fields = r.validate!.fields;
    assert.deepEqual(
      fields.map((f) => `${f.name}${f.optional ? '?' : ''}:${f.type}`),
      ['email:text', 'password:text', 'age:int', 'role?:text', 'avatar:file', 'score:number'],
    );
    assert.deepEqual(
      fields[3]!.decorators.map((d) => `${d.name}(${d.args.map(sx).join(',')})`),
      ["one_of('user','admin')", "default('user')"],
    );
    assert.deepEqual(
      fields[5]!.decorators.map((d) => `${d.name}(${d.args.map(sx).join(',')})@${d.line}:${d.col}`),
      ['range(-1.5,10)@9:7'],
    );
    assert.deepEqual(fields[1]!.typePos, { line: 4, col: 15 });
  });

  test('every field type is accepted', () => {
    const t = clean('type T { a: text, b: int, c: number, d: bool, e: file, f: list, g: object, h: date, i: datetime }')[0] as TypeDecl;
    assert.equal(t.fields.length, 9);
  });
});

describe('parser: statements', () => {
  test('assignment to names, members and indexes', () => {
    assert.deepEqual(stmts('x = 1\nuser.name = "a"\nlist[0] = 2\na.b[c].d = e'), [
      '(= x 1)',
      "(= (. user name) 'a')",
      '(= ([] list 0) 2)',
      '(= (. ([] (. a b) c) d) e)',
    ]);
  });

  test('if / else if / else, with else on the next line', () => {
    assert.deepEqual(stmts('if a { x = 1 } else if b { x = 2 } else { x = 3 }'), ['(if a {(= x 1)} (if b {(= x 2)} {(= x 3)}))']);
    assert.deepEqual(stmts('if a {\n  x = 1\n}\nelse {\n  x = 2\n}'), ['(if a {(= x 1)} {(= x 2)})']);
    assert.deepEqual(stmts('if a { }\nx = 1'), ['(if a {})', '(= x 1)']);
  });

  test('for, for key/value, while, break, continue', () => {
    assert.deepEqual(stmts('for x in items { if x { break } else { continue } }'), ['(for x items {(if x {(break)} {(continue)})})']);
    assert.deepEqual(stmts('for k, v in body { }'), ['(for k,v body {})']);
    assert.deepEqual(stmts('while i < 10 { i = i + 1 }'), ['(while (< i 10) {(= i (+ i 1))})']);
  });

  test('return with and without a value', () => {
    assert.deepEqual(stmts('return\nreturn 1 + 2'), ['(return)', '(return (+ 1 2))']);
    assert.deepEqual(stmts('if a { return }'), ['(if a {(return)})']);
  });

  test('fail with status and optional message', () => {
    assert.deepEqual(stmts("fail 403 'Premium required'\nfail 404\nfail code msg\nfail err.status err.message + '!'"), [
      "(fail 403 'Premium required')",
      '(fail 404)',
      '(fail code msg)',
      "(fail (. err status) (+ (. err message) '!'))",
    ]);
  });

  test('save, delete, try/catch', () => {
    assert.deepEqual(stmts('save user\ndelete User.find(id)'), ['(save user)', '(delete (call (. User find) id))']);
    assert.deepEqual(stmts('try { x = f() } catch err { log(err) }'), ['(try {(= x (call f))} err {(call log err)})']);
    assert.deepEqual(stmts('try {\n}\ncatch e {\n}'), ['(try {} e {})']);
  });

  test('response statement with entries without commas', () => {
    assert.deepEqual(stmts("response { status: 401 json: { error: 'Missing key' } }"), ["(response {status: 401, json: {error: 'Missing key'}})"]);
    assert.deepEqual(stmts("response {\n  status: 200\n  headers: { 'X-A': '1', b: 2 }\n  json: [1, 2]\n}"), [
      "(response {status: 200, headers: {X-A: '1', b: 2}, json: [1 2]})",
    ]);
  });

  test('compound assignment and throw', () => {
    assert.deepEqual(stmts('x += 1\na.b -= 2\na[0] *= 3\nx /= 4'), ['(+= x 1)', '(-= (. a b) 2)', '(*= ([] a 0) 3)', '(/= x 4)']);
    assert.deepEqual(stmts("throw 'out_of_stock', 'Only ' + n\nthrow err.code\nthrow = 1"), [
      "(throw 'out_of_stock' (+ 'Only ' n))",
      '(throw (. err code))',
      '(= throw 1)',
    ]);
  });

  test('statements are separated by newlines or semicolons', () => {
    assert.deepEqual(stmts('a = 1; b = 2;\nc()'), ['(= a 1)', '(= b 2)', '(call c)']);
  });
});

describe('parser: expressions and precedence', () => {
  const cases: [string, string][] = [
    // each level against the next one up
    ['a ? b : c ?? d', '(? a b (?? c d))'],
    ['a ?? b ? c : d', '(? (?? a b) c d)'],
    ['a ? b : c ? d : e', '(? a b (? c d e))'],
    ['a ? b ? c : d : e', '(? a (? b c d) e)'],
    ['a ?? b || c', '(?? a (|| b c))'],
    ['a || b ?? c', '(?? (|| a b) c)'],
    ['a || b && c', '(|| a (&& b c))'],
    ['a && b || c', '(|| (&& a b) c)'],
    ['a && b == c', '(&& a (== b c))'],
    ['a == b < c', '(== a (< b c))'],
    ['a < b + c', '(< a (+ b c))'],
    ['a + b * c', '(+ a (* b c))'],
    ['a * -b', '(* a (- b))'],
    ['a * b ** c', '(* a (** b c))'],
    ['-a ** b', '(- (** a b))'],
    ['a ** b ** c', '(** a (** b c))'],
    ['a ** -b', '(** a (- b))'],
    ['a.b ** c[0]', '(** (. a b) ([] c 0))'],
    ['a?.b.c', '(.~ (?. a b) c)'],
    ['a?.[0].c[1]', '([]~ (.~ (?.[] a 0) c) 1)'],
    ['(a?.b).c', '(. (?. a b) c)'],
    ['a.b?.c', '(?. (. a b) c)'],
    ['-a.b', '(- (. a b))'],
    ['!a[0]', '(! ([] a 0))'],
    ['not f(x)', '(! (call f x))'],
    // keywords normalised
    ['a and b or not c', '(|| (&& a b) (! c))'],
    // left associativity at every binary level
    ['a ?? b ?? c', '(?? (?? a b) c)'],
    ['a || b || c', '(|| (|| a b) c)'],
    ['a && b && c', '(&& (&& a b) c)'],
    ['a == b != c', '(!= (== a b) c)'],
    ['a < b <= c > d >= e', '(>= (> (<= (< a b) c) d) e)'],
    ['a - b + c', '(+ (- a b) c)'],
    ['a / b * c % d', '(% (* (/ a b) c) d)'],
    // unary nests to the right, postfix chains to the left
    ['- - a', '(- (- a))'],
    ['!not a', '(! (! a))'],
    ['a.b(c)[d].e', '(. ([] (call (. a b) c) d) e)'],
    // grouping
    ['(a + b) * c', '(* (+ a b) c)'],
    ['-(1)', '(- 1)'],
  ];
  for (const [source, tree] of cases) {
    test(source, () => assert.equal(expr(source), tree));
  }

  test('literals', () => {
    assert.equal(expr('[1, 2.5, 1e3, true, false, null, \'s\', "d"]'), "[1 2.5 1000 true false null 's' 'd']");
    assert.equal(expr('-5'), '-5');
    assert.equal(expr('[]'), '[]');
    assert.equal(expr('{}'), '{}');
  });

  test('templates', () => {
    assert.equal(expr('"Hello ${name}!"'), "(tpl 'Hello ' name '!')");
    assert.equal(expr('"${a + b}${c}"'), '(tpl (+ a b) c)');
    assert.equal(expr('"${ {a: 1}.a }"'), '(tpl (. {a: 1} a))');
    assert.equal(expr('"x${ "y${z}" }"'), "(tpl 'x' (tpl 'y' z))");
    assert.equal(expr('"no interpolation"'), "'no interpolation'");
    assert.equal(expr("'Your code is {code}'"), "'Your code is {code}'");
  });

  test('objects: keys may be keywords or strings, commas optional, trailing commas allowed', () => {
    assert.equal(expr("{ if: 1, 'a b': 2 type: 3, }"), '{if: 1, a b: 2, type: 3}');
    assert.equal(expr('f([1, 2,], g(a,))'), '(call f [1 2] (call g a))');
  });

  test('member names may be keywords', () => {
    assert.equal(expr('User.delete(id)'), '(call (. User delete) id)');
    assert.equal(expr('a.if.for.null'), '(. (. (. a if) for) null)');
  });

  test('positions: nodes start where their source starts', () => {
    const fn = clean('fn f() {\n  x = a + b.c(d)\n}')[0] as FnDecl;
    const s = fn.body.body[0]!;
    assert.equal(s.kind, 'Assign');
    if (s.kind !== 'Assign') return;
    assert.deepEqual([s.line, s.col, s.value.line, s.value.col], [2, 3, 2, 7]);
    if (s.value.kind !== 'Binary') return assert.fail('binary expected');
    assert.deepEqual([s.value.right.line, s.value.right.col], [2, 11]);
  });
});

describe('parser: lambdas and comprehensions', () => {
  test('a lambda is one parameter, or a parenthesised list of them, then => and one expression', () => {
    assert.equal(expr('map(xs, x => x * 2)'), '(call map xs (=> (x) (* x 2)))');
    assert.equal(expr('reduce(xs, (a, b) => a + b, 0)'), '(call reduce xs (=> (a b) (+ a b)) 0)');
    assert.equal(expr('f(() => 1, (a,) => a)'), '(call f (=> () 1) (=> (a) a))');
    // The body is a whole expression: `??` and `or` belong to it.
    assert.equal(expr('f(x => x.a ?? 0)'), '(call f (=> (x) (?? (. x a) 0)))');
    assert.equal(expr('f(x => y => x + y)'), '(call f (=> (x) (=> (y) (+ x y))))');
    // A parenthesised expression is no parameter list unless => follows.
    assert.equal(expr('f((a), (a + 1))'), '(call f a (+ a 1))');
  });

  test('a comprehension is an expression, for and optional if, inside list brackets', () => {
    assert.equal(expr('[x * x for x in xs]'), '(for (* x x) x xs)');
    assert.equal(expr('[k for k, v in o if v > 1]'), '(for k k v o (> v 1))');
    assert.equal(expr('[[y for y in x] for x in xs if len(x)]'), '(for (for y y x) x xs (call len x))');
  });

  test('a lambda that assigns, a duplicate parameter and a comprehension without in are diagnostics', () => {
    assert.deepEqual(errors('fn f() {\n  map(xs, x => t = x)\n}'), ['E_LAMBDA_ASSIGN@2:18']);
    assert.deepEqual(errors('fn f() {\n  map(xs, (a, a) => a)\n}'), ['E_DUPLICATE_PARAM@2:15']);
    assert.deepEqual(errors('fn f() {\n  x = [a for a of xs]\n}'), ['E_UNEXPECTED_TOKEN@2:16']);
  });
});

describe('parser: newline rules', () => {
  test('a statement ends at a newline', () => {
    assert.deepEqual(stmts('x = a\n-b'), ['(= x a)', '(- b)']);
    assert.deepEqual(stmts('f\n(x)'), ['f', 'x']);
  });

  test('after a binary operator, a comma, or inside brackets the expression continues', () => {
    assert.deepEqual(stmts('x = a +\n  b *\n  c'), ['(= x (+ a (* b c)))']);
    assert.deepEqual(stmts('x = a and\n  b'), ['(= x (&& a b))']);
    assert.deepEqual(stmts('f(\n  a,\n  b\n)'), ['(call f a b)']);
    assert.deepEqual(stmts('x = [\n  1,\n  2\n]'), ['(= x [1 2])']);
    assert.deepEqual(stmts('x = (a\n  + b)'), ['(= x (+ a b))']);
    assert.deepEqual(stmts('x = {\n  a: 1\n  b: 2\n}'), ['(= x {a: 1, b: 2})']);
    assert.deepEqual(stmts('x = a.\n  b'), ['(= x (. a b))']);
  });

  test('the { after a condition or iterable opens the block', () => {
    assert.deepEqual(stmts('if a { b }'), ['(if a {b})']);
    assert.deepEqual(stmts('for x in xs { y }'), ['(for x xs {y})']);
    assert.deepEqual(stmts('while f({a: 1}) { }'), ['(while (call f {a: 1}) {})']);
    assert.deepEqual(stmts('if a\n{ b }'), ['(if a {b})']);
  });
});

describe('parser: contextual keywords', () => {
  test('query.page reads the query; response.ok(x) is a call; response { } is the statement', () => {
    const r = route('route GET /x {\n  page = query.page ?? 1\n  response.ok(page)\n}');
    assert.deepEqual(r.body.map(ss), ['(= page (?? (. query page) 1))', '(call (. response ok) page)']);
    assert.deepEqual(stmts('response { status: 204 }'), ['(response {status: 204})']);
  });

  test('declaration and section words are ordinary names elsewhere', () => {
    assert.deepEqual(stmts('type = 1\nroute = type + guard\nvalidate = fn\nx = required or optional'), [
      '(= type 1)',
      '(= route (+ type guard))',
      '(= validate fn)',
      '(= x (|| required optional))',
    ]);
  });

  test('a field may be called type, query, or even if', () => {
    const t = clean('type T {\n  type: text\n  query: text\n  if: int\n}')[0] as TypeDecl;
    assert.deepEqual(
      t.fields.map((f) => f.name),
      ['type', 'query', 'if'],
    );
  });
});

describe('parser: diagnostics', () => {
  test('E_UNEXPECTED_TOKEN names what was expected and found, with the source line', () => {
    const d = parse('app/t.rvm', 'route GET /x {\n  x = f(1\n  y = 2\n}').diagnostics;
    assert.deepEqual(
      d.map((x) => `${x.code}@${x.line}:${x.col}`),
      ['E_UNEXPECTED_TOKEN@3:3'],
    );
    assert.match(d[0]!.message, /expected ',' or '\)'.*found 'y'/);
    assert.equal(d[0]!.sourceLine, '  y = 2');
    assert.equal(d[0]!.file, 'app/t.rvm');
  });

  test('a stray else after the route body', () => {
    const d = parse('t.rvm', 'route GET /x {\n  y = 1\n} else {\n}').diagnostics;
    assert.deepEqual(
      d.map((x) => `${x.code}@${x.line}:${x.col}`),
      ['E_UNEXPECTED_TOKEN@3:3'],
    );
    assert.match(d[0]!.message, /found keyword 'else'/);
  });

  test('E_EXPECTED_EXPRESSION', () => {
    assert.deepEqual(errors('fn f() {\n  x = \n}'), ['E_EXPECTED_EXPRESSION@2:7']);
    assert.deepEqual(errors('fn f() {\n  x = 1 + )\n}'), ['E_EXPECTED_EXPRESSION@2:11']);
    assert.deepEqual(errors('fn f() {\n  if { }\n}'), ['E_EXPECTED_EXPRESSION@2:6']);
    assert.deepEqual(errors('fn f() {\n  x = "${}"\n}'), ['E_EXPECTED_EXPRESSION@2:10']);
  });

  test('E_INVALID_ASSIGN', () => {
    assert.deepEqual(errors('fn f() {\n  f() = 1\n  (a) = 2\n  a + b = 3\n}'), ['E_INVALID_ASSIGN@2:3', 'E_INVALID_ASSIGN@3:4', 'E_INVALID_ASSIGN@4:3']);
  });

  test('E_SECTION_ORDER', () => {
    assert.deepEqual(errors('route GET /x {\n  x = 1\n  validate { a: int }\n}'), ['E_SECTION_ORDER@3:3']);
    assert.deepEqual(errors('route GET /x {\n  validate { a: int }\n  validate { b: int }\n}'), ['E_SECTION_ORDER@3:3']);
    assert.deepEqual(errors('route GET /x {\n  validate { a: int }\n  guard auth\n}'), ['E_SECTION_ORDER@3:3']);
    assert.deepEqual(errors('route GET /x {\n  query { a: int }\n  validate { b: int }\n}'), ['E_SECTION_ORDER@3:3']);
    assert.deepEqual(errors('route GET /x {\n  query { a: int }\n  query { b: int }\n}'), ['E_SECTION_ORDER@3:3']);
    assert.deepEqual(errors('route GET /x {\n  if a {\n    guard auth\n  }\n}'), ['E_SECTION_ORDER@3:5']);
    assert.deepEqual(errors('fn f() {\n  validate { a: int }\n}'), ['E_SECTION_ORDER@2:3']);
    assert.deepEqual(errors('route GET /x {\n  guards { auth: required }\n  validate { a: int }\n  query { b: int }\n  x = 1\n}'), []);
  });

  test('E_UNKNOWN_TYPE with a hint', () => {
    const d = parse('t.rvm', 'type T {\n  a: string\n  b: nmber\n  c: widget\n}').diagnostics;
    assert.deepEqual(
      d.map((x) => `${x.code}@${x.line}:${x.col}`),
      ['E_UNKNOWN_TYPE@2:6', 'E_UNKNOWN_TYPE@3:6', 'E_UNKNOWN_TYPE@4:6'],
    );
    assert.match(d[0]!.hint!, /'text'/);
    assert.match(d[1]!.hint!, /'number'/);
    assert.ok(d[2]!.hint);
  });

  test('E_BAD_METHOD, with a hint for lowercase', () => {
    const d = parse('t.rvm', 'route get /a { }\nroute FETCH /b { }\nroute GTE /c { }').diagnostics;
    assert.deepEqual(
      d.map((x) => `${x.code}@${x.line}:${x.col}`),
      ['E_BAD_METHOD@1:7', 'E_BAD_METHOD@2:7', 'E_BAD_METHOD@3:7'],
    );
    assert.match(d[0]!.hint!, /'GET'/);
    assert.match(d[2]!.hint!, /'GET'/);
  });

  test('E_BAD_PATH for every malformed path', () => {
    // [path, offset of the problem in the path]; the path starts in column 11
    const bad: [string, number][] = [
      ['/a//b', 3],
      ['/users/', 6],
      ['/a/:id/:id', 7],
      ['/a/*rest/b', 3],
      ['/a/{id}', 3],
      ['/a/:1x', 3],
      ['/a/*', 3],
      ['/a/../b', 3],
      ['/a/%zz', 3],
      ['/a/%41%zz', 6],
      ['/a/é', 3],
      ['/a:b', 2],
      ['/a/b:', 4],
    ];
    for (const [path, offset] of bad) {
      assert.deepEqual(errors(`route GET ${path} { }`), [`E_BAD_PATH@1:${11 + offset}`], path);
    }
    const trailing = parse('t.rvm', 'route GET /users/ { }').diagnostics[0]!;
    assert.match(trailing.hint!, /'\/users'/);
    assert.match(parse('t.rvm', 'route GET /a/{id} { }').diagnostics[0]!.hint!, /':id'/);
  });

  test('E_MIDDLEWARE_FILE and E_DUPLICATE_MIDDLEWARE', () => {
    assert.deepEqual(errors('middleware {\n  next()\n}', 'app/users.rvm'), ['E_MIDDLEWARE_FILE@1:1']);
    assert.deepEqual(errors('route GET /x { }', 'app/_middleware.rvm'), ['E_MIDDLEWARE_FILE@1:1']);
    assert.deepEqual(errors('middleware { }\nmiddleware { }', 'app/_middleware.rvm'), ['E_DUPLICATE_MIDDLEWARE@2:1']);
    assert.deepEqual(errors('middleware { }', 'app\\api\\_middleware.rvm'), []);
  });

  test('E_DUPLICATE_FIELD and E_DUPLICATE_PARAM', () => {
    assert.deepEqual(errors('type T {\n  a: int\n  a: text\n}'), ['E_DUPLICATE_FIELD@3:3']);
    assert.deepEqual(errors('route POST /x {\n  validate { a: int, b: int, a: int }\n}'), ['E_DUPLICATE_FIELD@2:30']);
    assert.deepEqual(errors('fn f(a, b, a) { }'), ['E_DUPLICATE_PARAM@1:12']);
    assert.deepEqual(errors('guard_definition g(x, x) { }'), ['E_DUPLICATE_PARAM@1:23']);
  });

  test('lexer codes come through parse: E_UNEXPECTED_CHAR, E_BAD_ESCAPE, E_UNTERMINATED_*', () => {
    assert.deepEqual(errors('fn f() {\n  x = 1 # 2\n}'), ['E_UNEXPECTED_CHAR@2:9']);
    assert.deepEqual(errors("fn f() {\n  x = 'a\\qb'\n}"), ['E_BAD_ESCAPE@2:9']);
    assert.deepEqual(errors("fn f() {\n  x = 'open\n}"), ['E_UNTERMINATED_STRING@2:7']);
    assert.deepEqual(errors('fn f() {\n  x = 1 /* open\n}'), ['E_UNTERMINATED_COMMENT@2:9']);
  });

  test('hints for other languages: = in a condition, elif, let, function', () => {
    const eq = parse('t.rvm', 'fn f() {\n  if a = 1 { }\n}').diagnostics;
    assert.deepEqual(
      eq.map((x) => `${x.code}@${x.line}:${x.col}`),
      ['E_UNEXPECTED_TOKEN@2:8'],
    );
    assert.match(eq[0]!.hint!, /==/);
    const elif = parse('t.rvm', 'fn f() {\n  if a { }\n  elif b { }\n}').diagnostics;
    assert.match(elif[0]!.hint!, /else if/);
    assert.match(parse('t.rvm', 'fn f() {\n  let x = 1\n}').diagnostics[0]!.hint!, /x = |name = value/);
    assert.match(parse('t.rvm', 'function f() { }').diagnostics[0]!.hint!, /'fn'/);
    assert.match(parse('t.rvm', 'rout GET /x { }').diagnostics[0]!.hint!, /'route'/);
    assert.match(parse('t.rvm', 'fn f() {\n  x %= 1\n}').diagnostics[0]!.hint!, /x = x %/);
    assert.match(parse('t.rvm', 'fn f() {\n  x + = 1\n}').diagnostics[0]!.hint!, /'\+=' without a space/);
    assert.match(parse('t.rvm', 'fn f() {\n  const x = 1\n}').diagnostics[0]!.hint!, /top level/);
  });

  test('missing } is reported once, where the next declaration starts', () => {
    assert.deepEqual(errors('route GET /a {\n  x = 1\n\nroute GET /b {\n  y = 2\n}'), ['E_UNEXPECTED_TOKEN@4:1']);
    const r = parse('t.rvm', 'route GET /a {\n  if x {\n    y = 1\n}\nroute GET /b { }');
    assert.deepEqual(
      r.diagnostics.map((x) => `${x.code}@${x.line}:${x.col}`),
      ['E_UNEXPECTED_TOKEN@5:1'],
    );
    assert.deepEqual(
      r.ast.decls.map((d) => (d as RouteDecl).path),
      ['/a', '/b'],
    );
    assert.deepEqual(errors('fn f() {\n  if a {\n    while b {'), ['E_UNEXPECTED_TOKEN@3:14']);
  });
});

describe('parser: recovery', () => {
  test('separated errors yield one diagnostic each and keep the good parts', () => {
    const src = `route GET /a {
  x = = 1
  ok = 1
}

route POST /b {
  validate {
    name: txt
  }
  y = f(1,, 2)
}

fn good() { return 1 }

route GET /c {
  if a { b = } 
  z = 3
}`;
    const r = parse('t.rvm', src);
    assert.deepEqual(
      r.diagnostics.map((d) => `${d.code}@${d.line}:${d.col}`),
      ['E_EXPECTED_EXPRESSION@2:7', 'E_UNKNOWN_TYPE@8:11', 'E_EXPECTED_EXPRESSION@10:11', 'E_EXPECTED_EXPRESSION@16:14'],
    );
    assert.deepEqual(
      r.ast.decls.map((d) => d.kind),
      ['Route', 'Route', 'FnDecl', 'Route'],
    );
    assert.deepEqual((r.ast.decls[0] as RouteDecl).body.map(ss), ['(= ok 1)']);
    assert.deepEqual((r.ast.decls[3] as RouteDecl).body.map(ss), ['(if a {})', '(= z 3)']);
  });

  test('errors inside an object literal do not close the block early', () => {
    const r = parse('t.rvm', 'route GET /a {\n  response { status: 401 json: { error: + } }\n  x = 1\n}\nroute GET /b { }');
    assert.deepEqual(
      r.diagnostics.map((d) => `${d.code}@${d.line}:${d.col}`),
      ['E_EXPECTED_EXPRESSION@2:41'],
    );
    assert.equal(r.ast.decls.length, 2);
    assert.deepEqual((r.ast.decls[0] as RouteDecl).body.map(ss), ['(= x 1)']);
  });

  test('a file with 3 separated errors yields exactly 3 diagnostics', () => {
    const src = 'fn a() {\n  x = (1 +\n}\n\nfn b() {\n  y = [1 2]\n  ok = 1\n}\n\ntype T {\n  f: strin\n}\n';
    assert.deepEqual(errors(src), ['E_EXPECTED_EXPRESSION@3:1', 'E_UNEXPECTED_TOKEN@6:10', 'E_UNKNOWN_TYPE@11:6']);
  });

  test('a missing { after a condition does not also report the stray }', () => {
    const r = parse('t.rvm', 'route GET /x {\n  if a == 1\n    x = 2\n  }\n}\nroute GET /y { }');
    assert.deepEqual(
      r.diagnostics.map((d) => `${d.code}@${d.line}:${d.col}`),
      ['E_UNEXPECTED_TOKEN@2:12'],
    );
    assert.equal(r.ast.decls.length, 2);
  });

  test('an error inside an interpolation stops at its closing }', () => {
    const r = parse('t.rvm', 'route GET /x {\n  x = "abc ${ foo( }"\n  y = 1\n}');
    assert.deepEqual(
      r.diagnostics.map((d) => `${d.code}@${d.line}:${d.col}`),
      ['E_EXPECTED_EXPRESSION@2:20'],
    );
    assert.deepEqual((r.ast.decls[0] as RouteDecl).body.map(ss), ['(= y 1)']);
  });

  test('garbage at the top level skips to the next declaration', () => {
    const r = parse('t.rvm', 'x = 1 { y }\n)))\nroute GET /a { }');
    assert.deepEqual(
      r.diagnostics.map((d) => `${d.code}@${d.line}:${d.col}`),
      ['E_UNEXPECTED_TOKEN@1:1'],
    );
    assert.equal(r.ast.decls.length, 1);
  });

  test('every declaration a syntax error falls in is listed as broken, with the name it declares', () => {
    const src =
      "route GET /a {\n  x = (1 + )\n}\nfn f(a b) { }\nfn ok() { }\nguard_definition g( {\n}\ntype T { x: strin }\nroute GET /b {\n  x = 'open\nroute GET /c { }\n";
    const r = parse('t.rvm', src);
    const broken = r.broken.map((b) => [b.decl === null ? null : b.decl.kind === 'Route' ? b.decl.path : b.decl.kind, b.kind, b.name]);
    // /b's missing `}` is found at `route GET /c`, and the lexer's error sits in /b: neither breaks /c.
    assert.deepEqual(broken, [
      ['/a', null, null],
      [null, 'fn', 'f'],
      [null, 'guard', 'g'],
      ['TypeDecl', 'type', 'T'],
      ['/b', null, null],
    ]);
    assert.deepEqual(
      r.ast.decls.map((d) => (d.kind === 'Route' ? d.path : d.kind)),
      ['/a', 'FnDecl', 'TypeDecl', '/b', '/c'],
    );
    assert.deepEqual(parse('t.rvm', 'fn ok() { }\nroute GET /x { }\n').broken, []);
  });

  test('bad route heads and junk after a declaration', () => {
    assert.deepEqual(errors('route /a { }\nroute GET { }\nroute GET users { }'), [
      'E_UNEXPECTED_TOKEN@1:7',
      'E_UNEXPECTED_TOKEN@2:11',
      'E_UNEXPECTED_TOKEN@3:11',
    ]);
    assert.deepEqual(errors('fn f() { } junk\nfn g() { }'), ['E_UNEXPECTED_TOKEN@1:12']);
  });
});

describe('parser: limits', () => {
  test(`nesting beyond MAX_NESTING_DEPTH (${MAX_NESTING_DEPTH}) is E_TOO_DEEP, not a stack overflow`, () => {
    const n = 100_000;
    for (const [open, close] of [
      ['(', ')'],
      ['[', ']'],
      ['{a: ', '}'],
      ['-', ''],
      ['!', ''],
      ['"${', '}"'],
    ]) {
      const src = `fn f() {\n  x = ${open!.repeat(n)}1${close!.repeat(n)}\n  y = 2\n}`;
      const r = parse('t.rvm', src);
      assert.deepEqual(
        r.diagnostics.map((d) => d.code),
        ['E_TOO_DEEP'],
        open,
      );
      const fn = r.ast.decls[0] as FnDecl;
      assert.deepEqual(fn.body.body.map(ss), ['(= y 2)'], open);
    }
  });

  test('deep blocks, long operator chains and else-if chains hit the same limit', () => {
    const blocks = `fn f() {\n${'if a {\n'.repeat(5000)}${'}\n'.repeat(5000)}}`;
    assert.deepEqual(
      errors(blocks).map((c) => c.split('@')[0]),
      ['E_TOO_DEEP'],
    );
    assert.deepEqual(
      errors(`fn f() {\n  x = a${' + a'.repeat(50_000)}\n}`).map((c) => c.split('@')[0]),
      ['E_TOO_DEEP'],
    );
    assert.deepEqual(
      errors(`fn f() {\n  x = a${'.b'.repeat(50_000)}\n}`).map((c) => c.split('@')[0]),
      ['E_TOO_DEEP'],
    );
    assert.deepEqual(
      errors(`fn f() {\n  if a { }${' else if a { }'.repeat(5000)}\n}`).map((c) => c.split('@')[0]),
      ['E_TOO_DEEP'],
    );
  });

  test('nesting just inside the limit parses', () => {
    const depth = MAX_NESTING_DEPTH - 10;
    const r = parse('t.rvm', `fn f() {\n  x = ${'('.repeat(depth)}1${')'.repeat(depth)}\n}`);
    assert.deepEqual(r.diagnostics, []);
  });

  test(`a file over MAX_SOURCE_BYTES (${MAX_SOURCE_BYTES}) is E_FILE_TOO_LARGE`, () => {
    const big = '// ' + 'x'.repeat(MAX_SOURCE_BYTES);
    assert.deepEqual(errors(big), ['E_FILE_TOO_LARGE@1:1']);
    const wide = '// ' + 'é'.repeat(MAX_SOURCE_BYTES / 2);
    assert.deepEqual(errors(wide), ['E_FILE_TOO_LARGE@1:1']);
    assert.deepEqual(errors('// ' + 'x'.repeat(MAX_SOURCE_BYTES - 10)), []);
  });

  test(`at most MAX_DIAGNOSTICS (${MAX_DIAGNOSTICS}) diagnostics, then E_TOO_MANY_ERRORS`, () => {
    const src = `fn f() {\n${'  x = = 1\n'.repeat(200)}}`;
    const d = parse('t.rvm', src).diagnostics;
    assert.equal(d.length, MAX_DIAGNOSTICS + 1);
    assert.equal(d[d.length - 1]!.code, 'E_TOO_MANY_ERRORS');
    const chars = parse('t.rvm', '# '.repeat(500)).diagnostics;
    assert.equal(chars.length, MAX_DIAGNOSTICS + 1);
  });
});
