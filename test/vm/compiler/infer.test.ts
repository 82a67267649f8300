import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type * as A from '../../../vm/front/ast.js';
import { compileModule } from '../../../vm/compiler/compiler.js';
import { ERROR_BODY_SCHEMA, VALIDATION_ERROR_SCHEMA } from '../../../vm/compiler/infer.js';
import type { ResponseMeta, RouteMeta } from '../../../vm/bytecode/module.js';
import * as b from '../ast-builders.js';
import { at, lit, name } from '../ast-builders.js';

const OPTIONS = { compilerVersion: '0', pluginsFingerprint: '' };

const USER_FIELDS = [b.field('email', 'text'), b.field('name', 'text', { optional: true }), b.field('password_hash', 'text', { decorators: [b.dec('hidden')] })];
const USER_SCHEMA = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    email: { type: 'string' },
    name: { type: 'string' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
  required: ['id', 'email', 'created_at', 'updated_at'],
  'x-rvm-record': 'User',
};

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
    ['bad_request', 400], ['unauthorized', 401], ['forbidden', 403], ['not_found', 404],
    ['conflict', 409], ['unprocessable', 422], ['too_many_requests', 429],
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
    assert.deepEqual(schemaOf(b.obj([['a', lit(1)], ['b', b.obj([])]])), {
      type: 'object',
      properties: { a: { type: 'integer', example: 1 }, b: { type: 'object', properties: {} } },
      required: ['a', 'b'],
    });
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
    const validate = [b.field('email', 'text'), b.field('age', 'int', { optional: true }), b.field('avatar', 'file'), b.field('role', 'text', { decorators: [b.dec('default', [lit('user')])] }), b.field('born', 'date'), b.field('at', 'datetime')];
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
    for (const m of ['new', 'find', 'find_by', 'update']) assert.deepEqual(schemaOf(b.callM('User', m, [lit(1)])), USER_SCHEMA);
    assert.deepEqual(schemaOf(b.callM('User', 'where', [b.obj([])])), { type: 'array', items: USER_SCHEMA });
    assert.deepEqual(schemaOf(b.callM('User', 'page', [b.obj([])])), {
      type: 'object',
      properties: { items: { type: 'array', items: USER_SCHEMA }, next: { type: ['string', 'null'] } },
      required: ['items', 'next'],
    });
    assert.deepEqual(schemaOf(b.callM('User', 'count')), {});
    assert.deepEqual(schemaOf(b.callN('len', [name('body')])), {});
  });

  test('records of a type not declared in the file carry only its name (the reference resolves it)', () => {
    assert.deepEqual(schemaOf(b.callM('Post', 'create', [name('body')])), { 'x-rvm-record': 'Post' });
    assert.deepEqual(schemaOf(b.callM('Post', 'where', [b.obj([])])), { type: 'array', items: { 'x-rvm-record': 'Post' } });
  });

  test('locals take the schema of what was assigned; conflicting assignments give {}', () => {
    assert.deepEqual(schemaOf(name('u'), [b.assign('u', b.callM('User', 'find', [lit(1)]))]), USER_SCHEMA);
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
      b.resp([['status', lit(401)], ['json', b.obj([['error', lit('x')]])]], at(6)),
    ]);
    assert.deepEqual(list.map((r) => [r.status, r.source, r.line]), [
      [200, 'response.ok', 3],
      [401, 'response {}', 6],
      [403, 'fail', 2],
    ]);
    assert.deepEqual(list[0]!.schema, { anyOf: [{ type: 'string', example: 'a' }, { type: 'string', example: 'b' }] });
    assert.deepEqual(list[1]!.schema, { type: 'object', properties: { error: { type: 'string', example: 'x' } }, required: ['error'] });
    assert.equal(list[1]!.contentType, 'application/json');
    assert.deepEqual(list[2]!.schema, ERROR_BODY_SCHEMA);
  });

  test('response statements: default status, text and html, no body', () => {
    const r = (entries: [string, A.Expr][]) => responses([b.resp(entries)])[0]!;
    assert.deepEqual([r([['json', lit(1)]]).status, r([['json', lit(1)]]).contentType], [200, 'application/json']);
    assert.deepEqual([r([['status', lit(500)], ['text', lit('x')]]).status, r([['text', lit('x')]]).contentType], [500, 'text/plain']);
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
    assert.deepEqual(
      statuses([b.ifS(name('request'), [b.expr(b.callM('response', 'ok', [lit(1)]))], [b.fail(lit(404))])]),
      ['200 response.ok', '404 fail'],
    );
  });

  test('validate or query adds the 422 validation error', () => {
    const list = responses([b.expr(b.callM('response', 'created', [name('body')]))], { validate: [b.field('a', 'text')] });
    assert.deepEqual(list.map((r) => r.status), [201, 422]);
    assert.deepEqual(list[1]!.schema, VALIDATION_ERROR_SCHEMA);
    assert.equal(list[1]!.source, 'validate');
    assert.deepEqual(responses([b.fail(lit(400))], { query: [b.field('q', 'text')] }).map((r) => r.status), [400, 422]);
  });

  test('identical schemas of one status merge into one', () => {
    const list = responses([b.ifS(name('request'), [b.expr(b.callM('response', 'not_found', [lit('a')]))]), b.expr(b.callM('response', 'not_found', [lit('b')]))]);
    assert.deepEqual(list.map((r) => r.status), [404]);
    assert.deepEqual(list[0]!.schema, ERROR_BODY_SCHEMA);
  });

  test('a constant fail status folds; a runtime one is left out', () => {
    assert.deepEqual(responses([b.fail(b.bin('+', lit(400), lit(3)))]).map((r) => r.status), [403]);
    assert.deepEqual(responses([b.fail(b.member(name('request'), 'x'))]), []);
  });
});
