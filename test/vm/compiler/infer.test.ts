import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type * as A from '../../../vm/front/ast.js';
import { compileModule, compileSource } from '../../../vm/compiler/compiler.js';
import { MAX_CONSTANT_DEPTH } from '../../../vm/compiler/compile-meta.js';
import { ERROR_BODY_SCHEMA, VALIDATION_ERROR_SCHEMA } from '../../../vm/compiler/infer.js';
import type { ResponseMeta, RouteMeta } from '../../../vm/bytecode/module.js';
import * as b from '../ast-builders.js';
import { at, lit, name } from '../ast-builders.js';
import { RECORD_METHODS } from '../../support/record-methods.js';

const OPTIONS = { compilerVersion: '0', pluginsFingerprint: '', recordMethods: RECORD_METHODS };

const USER_FIELDS = [
  b.field('email', 'text'),
  b.field('name', 'text', { optional: true }),
  b.field('password_hash', 'text', { decorators: [b.dec('hidden')] }),
];
const USER_SCHEMA = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    email: { type: 'string' },
    name: { type: ['string', 'null'] },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
  required: ['id', 'email', 'name', 'created_at', 'updated_at'],
  'x-rvm-record': 'User',
};

const USER_OR_NULL = { anyOf: [USER_SCHEMA, { type: 'null' }] };

function routeMeta(stmts: A.Stmt[], options: Parameters<typeof b.route>[3] = {}, extra: A.Decl[] = []): RouteMeta {
  const result = compileModule(b.file([b.typeDecl('User', USER_FIELDS), ...extra, b.route('POST', '/x/:id', stmts, options)]), '', OPTIONS);
  assert.deepEqual(result.diagnostics, []);
  return result.module!.routes[0]!;
}

function responses(stmts: A.Stmt[], options: Parameters<typeof b.route>[3] = {}): ResponseMeta[] {
  return routeMeta(stmts, options).responses;
}

/** The single response of a handler `response.<helper>(args)`. */
function only(helper: string, args: A.Expr[]): ResponseMeta {
  const list = responses([b.expr(b.callM('response', helper, args, at(3)), at(3))]);
  assert.equal(list.length, 1, JSON.stringify(list));
  return list[0]!;
}

describe('response helpers', () => {
  const cases: [string, A.Expr[], number, string | null][] = [
    ['ok', [lit(1)], 200, 'application/json'],
    ['created', [lit(1)], 201, 'application/json'],
    ['accepted', [lit(1)], 202, 'application/json'],
    ['no_content', [], 204, null],
    ['redirect', [lit('/a')], 302, null],
    ['redirect', [lit('/a'), lit(301)], 301, null],
    ['json', [lit(418), lit(1)], 418, 'application/json'],
    ['text', [lit('hi')], 200, 'text/plain'],
    ['html', [lit('<p>')], 200, 'text/html'],
  ];
  for (const [helper, args, status, contentType] of cases) {
    test(`response.${helper} → ${status}`, () => {
      const r = only(helper, args);
      assert.equal(r.status, status);
      assert.equal(r.contentType, contentType);
      assert.equal(r.source, `response.${helper}`);
      assert.equal(r.line, 3);
    });
  }

  const errors: [string, number][] = [
    ['bad_request', 400],
    ['unauthorized', 401],
    ['forbidden', 403],
    ['not_found', 404],
    ['conflict', 409],
    ['unprocessable', 422],
    ['too_many_requests', 429],
  ];
  for (const [helper, status] of errors) {
    test(`response.${helper} → ${status} with the error body`, () => {
      const r = only(helper, [lit('nope')]);
      assert.equal(r.status, status);
      assert.deepEqual(r.schema, ERROR_BODY_SCHEMA);
    });
  }

  test('text and html bodies are strings', () => {
    assert.deepEqual(only('text', [name('body')]).schema, { type: 'string' });
  });

  test('a non-constant status for json leaves the response out', () => {
    assert.deepEqual(responses([b.assign('s', lit(200)), b.expr(b.callM('response', 'json', [name('s'), lit(1)]))]), []);
  });
});

describe('value schemas', () => {
  const schemaOf = (value: A.Expr, before: A.Stmt[] = [], options: Parameters<typeof b.route>[3] = {}) =>
    routeMeta([...before, b.expr(b.callM('response', 'ok', [value]))], options).responses[0]!.schema;

  test('literals carry their type and the value as example', () => {
    assert.deepEqual(schemaOf(lit('a')), { type: 'string', example: 'a' });
    assert.deepEqual(schemaOf(lit(3)), { type: 'integer', example: 3 });
    assert.deepEqual(schemaOf(lit(1.5)), { type: 'number', example: 1.5 });
    assert.deepEqual(schemaOf(lit(true)), { type: 'boolean', example: true });
    assert.deepEqual(schemaOf(lit(null)), { type: 'null' });
    assert.deepEqual(schemaOf(b.bin('+', lit(1), lit(2))), { type: 'integer', example: 3 });
  });

  test('object and list literals', () => {
    assert.deepEqual(
      schemaOf(
        b.obj([
          ['a', lit(1)],
          ['b', b.obj([])],
        ]),
      ),
      {
        type: 'object',
        properties: { a: { type: 'integer', example: 1 }, b: { type: 'object', properties: {} } },
        required: ['a', 'b'],
      },
    );
    assert.deepEqual(schemaOf(b.list([lit('x'), lit('y')])), { type: 'array', items: { type: 'string' } });
    assert.deepEqual(schemaOf(b.list([lit('x'), lit('x')])), { type: 'array', items: { type: 'string', example: 'x' } });
    assert.deepEqual(schemaOf(b.list([lit('x'), lit(1)])), { type: 'array', items: {} });
    assert.deepEqual(schemaOf(b.list([])), { type: 'array', items: {} });
  });

  test('templates, arithmetic, comparisons and not', () => {
    assert.deepEqual(schemaOf(b.tmpl(['a', name('request')])), { type: 'string' });
    assert.deepEqual(schemaOf(b.bin('*', name('request'), lit(2))), { type: 'number' });
    assert.deepEqual(schemaOf(b.bin('+', name('request'), lit('x'))), { type: 'string' });
    assert.deepEqual(schemaOf(b.bin('<', name('request'), lit(2))), { type: 'boolean' });
    assert.deepEqual(schemaOf(b.un('!', name('request'))), { type: 'boolean' });
  });

  test('body is the validated fields; body.field is that field', () => {
    const validate = [
      b.field('email', 'text'),
      b.field('age', 'int', { optional: true }),
      b.field('avatar', 'file'),
      b.field('role', 'text', { decorators: [b.dec('default', [lit('user')])] }),
      b.field('born', 'date'),
      b.field('at', 'datetime'),
    ];
    assert.deepEqual(schemaOf(name('body'), [], { validate }), {
      type: 'object',
      properties: {
        email: { type: 'string' },
        age: { type: 'integer' },
        avatar: { type: 'string', format: 'binary' },
        role: { type: 'string' },
        born: { type: 'string', format: 'date' },
        at: { type: 'string', format: 'date-time' },
      },
      required: ['email', 'avatar', 'born', 'at'],
    });
    assert.deepEqual(schemaOf(b.member(name('body'), 'age'), [], { validate }), { type: 'integer' });
    assert.deepEqual(schemaOf(b.member(name('body'), 'nope'), [], { validate }), {});
    assert.deepEqual(schemaOf(b.member(name('params'), 'id')), { type: 'string' });
  });

  test('records of a type declared in the file, lists and pages of them', () => {
    assert.deepEqual(schemaOf(b.callM('User', 'create', [name('body')])), USER_SCHEMA);
    assert.deepEqual(schemaOf(b.callM('User', 'new', [lit(1)])), USER_SCHEMA);
    // find, find_by and update answer null when no record matches.
    for (const m of ['find', 'find_by', 'update']) assert.deepEqual(schemaOf(b.callM('User', m, [lit(1)])), USER_OR_NULL);
    assert.deepEqual(schemaOf(b.callM('User', 'where', [b.obj([])])), { type: 'array', items: USER_SCHEMA });
    assert.deepEqual(schemaOf(b.callM('User', 'page', [b.obj([])])), {
      type: 'object',
      properties: { items: { type: 'array', items: USER_SCHEMA }, next: { type: ['string', 'null'] } },
      required: ['items', 'next'],
    });
    // Other results are the result type each method declares.
    assert.deepEqual(schemaOf(b.callM('User', 'count')), { type: 'integer' });
    assert.deepEqual(schemaOf(b.callM('User', 'delete', [lit(1)])), { type: 'boolean' });
  });

  test("a record call is inferred from what the provider's method declares it returns, on a type's name only", () => {
    const schemaWith = (recordMethods: Map<string, { returns?: string }>, call: A.Expr) => {
      const route = b.route('GET', '/x', [b.expr(b.callM('response', 'ok', [call]))]);
      return compileModule(b.file([b.typeDecl('User', USER_FIELDS), route]), '', { ...OPTIONS, recordMethods }).module!.routes[0]!.responses[0]!.schema;
    };
    const methods = new Map([
      ['first', { returns: 'record?' }],
      ['all', { returns: 'records' }],
      ['mystery', {}],
    ]);
    assert.deepEqual(schemaWith(methods, b.callM('User', 'first')), USER_OR_NULL);
    assert.deepEqual(schemaWith(methods, b.callM('User', 'all')), { type: 'array', items: USER_SCHEMA });
    // Declaring nothing, unknown to the provider, or called on a lower-case name (a native's namespace): unknown.
    assert.deepEqual(schemaWith(methods, b.callM('User', 'mystery')), {});
    assert.deepEqual(schemaWith(methods, b.callM('User', 'find', [lit(1)])), {});
    assert.deepEqual(schemaWith(methods, b.callM('cache', 'first')), {});
    // Without the provider's methods (no records plugin), nothing is inferred.
    const bare = compileModule(
      b.file([b.typeDecl('User', USER_FIELDS), b.route('GET', '/x', [b.expr(b.callM('response', 'ok', [b.callM('User', 'create', [name('body')])]))])]),
      '',
      {
        compilerVersion: '0',
        pluginsFingerprint: '',
      },
    );
    assert.deepEqual(bare.module!.routes[0]!.responses[0]!.schema, {});
  });

  test('records of a type not declared in the file carry only its name (the reference resolves it)', () => {
    assert.deepEqual(schemaOf(b.callM('Post', 'create', [name('body')])), { 'x-rvm-record': 'Post' });
    assert.deepEqual(schemaOf(b.callM('Post', 'where', [b.obj([])])), { type: 'array', items: { 'x-rvm-record': 'Post' } });
  });

  test('locals take the schema of what was assigned; conflicting assignments give {}', () => {
    assert.deepEqual(schemaOf(name('u'), [b.assign('u', b.callM('User', 'create', [name('body')]))]), USER_SCHEMA);
    assert.deepEqual(schemaOf(name('x'), [b.assign('x', lit(1)), b.ifS(name('request'), [b.assign('x', lit('a'))])]), {});
    assert.deepEqual(schemaOf(b.member(name('o'), 'n'), [b.assign('o', b.obj([['n', lit(2)]]))]), { type: 'integer', example: 2 });
    assert.deepEqual(schemaOf(name('o'), [b.assign('o', b.obj([])), b.assign(b.member(name('o'), 'k'), lit(true))]), {
      type: 'object',
      properties: { k: { type: 'boolean', example: true } },
      required: ['k'],
    });
    const loop = b.forS(null, 'u', b.callM('User', 'where', [b.obj([])]), [b.expr(b.callM('response', 'ok', [name('u')]))]);
    assert.deepEqual(responses([loop])[0]!.schema, USER_SCHEMA);
  });

  test('anything else is {}', () => {
    assert.deepEqual(schemaOf(b.member(name('request'), 'headers')), {});
  });
});

describe('collecting responses', () => {
  test('nested blocks, response statements, fail, merging by status', () => {
    const list = responses([
      b.ifS(name('request'), [b.fail(lit(403), lit('Premium required'), at(2))], null, at(2)),
      b.forS(null, 'x', name('query'), [b.expr(b.callM('response', 'ok', [lit('a')], at(3)))]),
      b.tryS([b.expr(b.callM('response', 'ok', [lit('b')], at(4)))], 'e', [b.expr(b.callM('response', 'ok', [lit('a')], at(5)))]),
      b.resp(
        [
          ['status', lit(401)],
          ['json', b.obj([['error', lit('x')]])],
        ],
        at(6),
      ),
    ]);
    assert.deepEqual(
      list.map((r) => [r.status, r.source, r.line]),
      [
        [200, 'response.ok', 3],
        [401, 'response {}', 6],
        [403, 'fail', 2],
      ],
    );
    assert.deepEqual(list[0]!.schema, {
      anyOf: [
        { type: 'string', example: 'a' },
        { type: 'string', example: 'b' },
      ],
    });
    assert.deepEqual(list[1]!.schema, { type: 'object', properties: { error: { type: 'string', example: 'x' } }, required: ['error'] });
    assert.equal(list[1]!.contentType, 'application/json');
    assert.deepEqual(list[2]!.schema, ERROR_BODY_SCHEMA);
  });

  test('response statements: default status, text and html, no body', () => {
    const r = (entries: [string, A.Expr][]) => responses([b.resp(entries)])[0]!;
    assert.deepEqual([r([['json', lit(1)]]).status, r([['json', lit(1)]]).contentType], [200, 'application/json']);
    assert.deepEqual(
      [
        r([
          ['status', lit(500)],
          ['text', lit('x')],
        ]).status,
        r([['text', lit('x')]]).contentType,
      ],
      [500, 'text/plain'],
    );
    assert.equal(r([['html', lit('x')]]).contentType, 'text/html');
    assert.deepEqual(r([['status', lit(204)]]), { status: 204, source: 'response {}', contentType: null, schema: {}, line: 1 });
  });

  test('a handler that can fall off its end answers 204', () => {
    const statuses = (stmts: A.Stmt[]) => responses(stmts).map((r) => `${r.status} ${r.source}`);
    assert.deepEqual(statuses([]), ['204 end of handler']);
    assert.deepEqual(statuses([b.expr(b.callN('log', [lit(1)]))]), ['204 end of handler']);
    assert.deepEqual(statuses([b.ifS(name('request'), [b.expr(b.callM('response', 'ok', [lit(1)]))])]), ['200 response.ok', '204 end of handler']);
    assert.deepEqual(statuses([b.expr(b.callM('response', 'ok', [lit(1)]))]), ['200 response.ok']);
    assert.deepEqual(statuses([b.fail(lit(400))]), ['400 fail']);
    assert.deepEqual(statuses([b.resp([['status', lit(201)]])]), ['201 response {}']);
    assert.deepEqual(statuses([b.ifS(name('request'), [b.expr(b.callM('response', 'ok', [lit(1)]))], [b.fail(lit(404))])]), ['200 response.ok', '404 fail']);
  });

  test('validate or query adds the 422 validation error', () => {
    const list = responses([b.expr(b.callM('response', 'created', [name('body')]))], { validate: [b.field('a', 'text')] });
    assert.deepEqual(
      list.map((r) => r.status),
      [201, 422],
    );
    assert.deepEqual(list[1]!.schema, VALIDATION_ERROR_SCHEMA);
    assert.equal(list[1]!.source, 'validate');
    assert.deepEqual(
      responses([b.fail(lit(400))], { query: [b.field('q', 'text')] }).map((r) => r.status),
      [400, 422],
    );
  });

  test('identical schemas of one status merge into one', () => {
    const list = responses([
      b.ifS(name('request'), [b.expr(b.callM('response', 'not_found', [lit('a')]))]),
      b.expr(b.callM('response', 'not_found', [lit('b')])),
    ]);
    assert.deepEqual(
      list.map((r) => r.status),
      [404],
    );
    assert.deepEqual(list[0]!.schema, ERROR_BODY_SCHEMA);
  });

  test('a constant fail status folds; a runtime one is left out', () => {
    assert.deepEqual(
      responses([b.fail(b.bin('+', lit(400), lit(3)))]).map((r) => r.status),
      [403],
    );
    assert.deepEqual(responses([b.fail(b.member(name('request'), 'x'))]), []);
  });
});

describe('following values', () => {
  const okSchema = (stmts: A.Stmt[], extra: A.Decl[] = []) => routeMeta([...stmts], {}, extra).responses.find((r) => r.status === 200)!.schema;
  const ok = (value: A.Expr) => b.expr(b.callM('response', 'ok', [value]));

  test('a call of a fn or native leaves a mark naming it, for the linked app to resolve', () => {
    assert.deepEqual(okSchema([ok(b.callN('make_summary', [lit(1)]))]), { 'x-rvm-call': 'make_summary' });
    assert.deepEqual(okSchema([ok(b.obj([['secret', b.callN('totp_secret')]]))]), {
      type: 'object',
      properties: { secret: { 'x-rvm-call': 'totp_secret' } },
      required: ['secret'],
    });
  });

  test("a fn's returns: each return's value, null for a bare return or the end of its body", () => {
    const returnsOf = (body: A.Stmt[]) => {
      const result = compileModule(b.file([b.fn('f', ['x'], body)]), '', OPTIONS);
      assert.deepEqual(result.diagnostics, []);
      return result.module!.functions[0]!.returns;
    };
    assert.deepEqual(returnsOf([b.ret(b.obj([['n', lit(1)]]))]), { type: 'object', properties: { n: { type: 'integer', example: 1 } }, required: ['n'] });
    assert.deepEqual(returnsOf([b.ifS(name('x'), [b.ret(lit('a'))]), b.ret(lit('b'))]), { type: 'string' });
    assert.deepEqual(returnsOf([b.ifS(name('x'), [b.ret(lit('a'))]), b.ret(lit(1))]), {
      anyOf: [
        { type: 'string', example: 'a' },
        { type: 'integer', example: 1 },
      ],
    });
    assert.deepEqual(returnsOf([b.ifS(name('x'), [b.ret(lit('a'))])]), { type: ['string', 'null'], example: 'a' });
    assert.deepEqual(returnsOf([b.ifS(name('x'), [b.ret()]), b.ret(b.callN('g'))]), { anyOf: [{ 'x-rvm-call': 'g' }, { type: 'null' }] });
    assert.deepEqual(returnsOf([]), { type: 'null' });
    assert.deepEqual(returnsOf([b.fail(lit(400))]), {});
  });

  test('a field assigned to an object is required; one assigned only in a branch or loop is not', () => {
    const schema = okSchema([
      b.assign('o', b.obj([])),
      b.assign(b.member(name('o'), 'total'), lit(3)),
      b.ifS(name('request'), [b.assign(b.member(name('o'), 'note'), lit('x'))]),
      b.forS(null, 'i', b.list([]), [b.assign(b.member(name('o'), 'last'), name('i'))]),
      b.ifS(name('request'), [b.assign(b.member(name('o'), 'total'), lit(4))]),
      ok(name('o')),
    ]);
    assert.deepEqual(schema, {
      type: 'object',
      properties: { total: { type: 'integer' }, note: { type: 'string', example: 'x' }, last: {} },
      required: ['total'],
    });
  });

  test('T.find, T.find_by and T.update may answer null until an if tests the local', () => {
    const found = b.assign('u', b.callM('User', 'find', [lit(1)]));
    assert.deepEqual(okSchema([found, ok(name('u'))]), USER_OR_NULL);
    assert.deepEqual(okSchema([found, b.ifS(b.un('!', name('u')), [b.fail(lit(404))]), ok(name('u'))]), USER_SCHEMA);
    assert.deepEqual(okSchema([found, b.ifS(b.bin('==', name('u'), lit(null)), [b.fail(lit(404))]), ok(name('u'))]), USER_SCHEMA);
    assert.deepEqual(okSchema([ok(b.callM('Post', 'find_by', [b.obj([])]))]), { anyOf: [{ 'x-rvm-record': 'Post' }, { type: 'null' }] });
  });
});

describe('@returns', () => {
  const compile = (source: string) => compileSource('app/tasks.rvm', source, OPTIONS);
  const TYPES = 'type Task {\n  title: text\n}\n\n';

  test('declares a status by hand, overriding what inference saw for it, and leaves the doc text', () => {
    const source = `${TYPES}/// The task's summary.\n/// @returns 200 { id: text, title?: text?, tags: [text], task: Task? }\n/// @returns 404 Task\nroute GET /t/:id {\n  response.ok(params.id)\n}\n`;
    const result = compile(source);
    assert.deepEqual(result.diagnostics, []);
    const route = result.module!.routes[0]!;
    assert.equal(route.doc, "The task's summary.");
    const ok = route.responses.find((r) => r.status === 200)!;
    assert.deepEqual(ok, {
      status: 200,
      source: '@returns',
      contentType: 'application/json',
      line: 6,
      schema: {
        type: 'object',
        properties: {
          id: { type: 'string' },
          title: { type: ['string', 'null'] },
          tags: { type: 'array', items: { type: 'string' } },
          task: { anyOf: [recordOf('Task'), { type: 'null' }] },
        },
        required: ['id', 'tags', 'task'],
      },
    });
    assert.deepEqual(
      route.responses.map((r) => `${r.status} ${r.source}`),
      ['200 @returns', '404 @returns'],
    );
  });

  test('a type of another file is a mark the reference resolves', () => {
    const result = compile('/// @returns 201 [Note]\nroute POST /n {\n  response.created(1)\n}\n');
    assert.deepEqual(result.module!.routes[0]!.responses[0]!.schema, { type: 'array', items: { 'x-rvm-record': 'Note' } });
  });

  test('a malformed tag is E_RETURNS_TAG at file:line:col', () => {
    const cases: [string, number, RegExp][] = [
      ['/// @returns ok Task', 14, /status from 100 to 599/],
      ['/// @returns 700 Task', 14, /status from 100 to 599/],
      ['/// @returns 200', 17, /expected a type/],
      ['/// @returns 200 { id: text', 28, /expected '}'/],
      ['///   @returns 200 { id text }', 25, /expected ':'/],
      ['/// @returns 200 Task extra', 23, /unexpected 'extra'/],
      ['/// @returns 200 { a: int, a: int }', 28, /'a' is declared twice/],
      ['/// @returns 200 file', 18, /no response body type/],
      ['/// @returns 200 int\n/// @returns 200 text', 5, /status 200 is declared twice/],
    ];
    for (const [doc, col, message] of cases) {
      const result = compile(`${doc}\nroute GET /x {\n  response.ok(1)\n}\n`);
      assert.equal(result.module, null, doc);
      const [d] = result.diagnostics;
      assert.equal(d?.code, 'E_RETURNS_TAG', doc);
      assert.equal(d?.file, 'app/tasks.rvm');
      assert.equal(d?.line, doc.split('\n').length, doc);
      assert.equal(d?.col, col, doc);
      assert.match(d!.message, message);
    }
  });

  test(`nesting is bounded at MAX_CONSTANT_DEPTH (${MAX_CONSTANT_DEPTH})`, () => {
    const nested = (depth: number) => `${'['.repeat(depth)}int${']'.repeat(depth)}`;
    assert.deepEqual(compile(`/// @returns 200 ${nested(MAX_CONSTANT_DEPTH - 1)}\nroute GET /x {}\n`).diagnostics, []);
    const [d] = compile(`/// @returns 200 ${nested(MAX_CONSTANT_DEPTH)}\nroute GET /x {}\n`).diagnostics;
    assert.equal(d?.code, 'E_RETURNS_TAG');
    assert.match(d!.message, /deeper than 32/);
  });
});

function recordOf(type: string) {
  return {
    type: 'object',
    properties: {
      id: { type: 'string', format: 'uuid' },
      title: { type: 'string' },
      created_at: { type: 'string', format: 'date-time' },
      updated_at: { type: 'string', format: 'date-time' },
    },
    required: ['id', 'title', 'created_at', 'updated_at'],
    'x-rvm-record': type,
  };
}
