import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type * as A from '../../../vm/front/ast.js';
import { compileModule, MAX_ARGS, MAX_CONSTANTS, MAX_LOCALS, sourceHash, type CompileResult } from '../../../vm/compiler/compiler.js';
import type { ChunkData, CompiledModule } from '../../../vm/bytecode/module.js';
import { ARTEFACT_MAGIC, FORMAT_VERSION } from '../../../vm/bytecode/module.js';
import * as b from '../ast-builders.js';
import { at, lit, name } from '../ast-builders.js';
import { listing, names, simulateMaxStack } from '../bytecode-helpers.js';

const OPTIONS = { compilerVersion: '9.9.9', pluginsFingerprint: 'fp' };

function compile(decls: A.Decl[], source = ''): CompileResult {
  return compileModule(b.file(decls), source, OPTIONS);
}

function ok(decls: A.Decl[]): CompiledModule {
  const result = compile(decls);
  assert.deepEqual(result.diagnostics, [], 'expected no diagnostics');
  assert.ok(result.module);
  return result.module;
}

/** The chunk of `fn f(params) { body }`. */
function fnChunk(body: A.Stmt[], params: string[] = []): ChunkData {
  return ok([b.fn('f', params, body)]).chunks[0]!;
}

/** Diagnostic codes with positions: `E_X@3:5`. */
function codes(decls: A.Decl[]): string[] {
  const result = compile(decls);
  if (result.diagnostics.length > 0) assert.equal(result.module, null);
  return result.diagnostics.map((d) => `${d.code}@${d.line}:${d.col}`);
}

/** The listing of a fn chunk without its closing `NULL, RETURN`. */
function body(stmts: A.Stmt[], params: string[] = []): string[] {
  const lines = listing(fnChunk(stmts, params));
  assert.deepEqual(lines.slice(-2), ['NULL', 'RETURN']);
  return lines.slice(0, -2);
}

describe('module shape', () => {
  test('header, file and one chunk per route, fn, guard and middleware, named and kinded', () => {
    const source = 'route GET /x {}';
    const result = compileModule(
      b.file([
        b.route('GET', '/users/:id', []),
        b.fn('slugify', ['s'], []),
        b.guardDef('min_age', ['n'], []),
        b.typeDecl('User', [b.field('email', 'text')]),
        b.middleware([]),
      ]),
      source,
      OPTIONS,
    );
    const m = result.module!;
    assert.deepEqual(m.header, { magic: ARTEFACT_MAGIC, format: FORMAT_VERSION, compiler: '9.9.9', sourceHash: sourceHash(source), plugins: 'fp' });
    assert.match(m.header.sourceHash, /^[0-9a-f]{64}$/);
    assert.equal(m.file, 'app/test.rvm');
    assert.deepEqual(
      m.chunks.map((c) => [c.name, c.kind, c.arity]),
      [
        ['route GET /users/:id', 'route', 0],
        ['fn slugify', 'fn', 1],
        ['guard min_age', 'guard', 1],
        ['middleware', 'middleware', 0],
      ],
    );
    assert.ok(m.chunks.every((c) => c.code instanceof Int32Array && c.lines instanceof Int32Array));
    assert.equal(m.middleware, 3);
    assert.deepEqual(m.functions, [{ name: 'slugify', chunk: 1, params: ['s'], doc: null, line: 1, col: 1, responses: [], returns: { type: 'null' } }]);
    assert.deepEqual(m.guards, [{ name: 'min_age', chunk: 2, params: ['n'], doc: null, line: 1, col: 1, responses: [] }]);
    assert.equal(m.types[0]!.name, 'User');
    assert.equal(m.types[0]!.fields[0]!.type, 'text');
  });

  test('every chunk ends with NULL RETURN', () => {
    assert.deepEqual(names(fnChunk([])), ['NULL', 'RETURN']);
  });
});

describe('expressions', () => {
  test('literals, lists, objects and constant dedup', () => {
    assert.deepEqual(body([b.expr(b.list([lit(1), lit('a'), lit(1), lit(true), lit(false), lit(null), lit('1')]))]), [
      'CONST 1',
      'CONST "a"',
      'CONST 1',
      'TRUE',
      'FALSE',
      'NULL',
      'CONST "1"',
      'LIST 7',
      'POP',
    ]);
    const chunk = fnChunk([b.expr(b.list([lit(1), lit('a'), lit(1), lit('1')]))]);
    assert.deepEqual(chunk.consts, [1, 'a', '1']);
    assert.deepEqual(
      body([
        b.expr(
          b.obj([
            ['a', lit(1)],
            ['b', lit(2)],
          ]),
        ),
      ]),
      ['CONST "a"', 'CONST 1', 'CONST "b"', 'CONST 2', 'OBJECT 2', 'POP'],
    );
  });

  test('unary and binary operators map to their opcodes', () => {
    const ops: [A.BinaryOp, string][] = [
      ['+', 'ADD'],
      ['-', 'SUB'],
      ['*', 'MUL'],
      ['/', 'DIV'],
      ['%', 'MOD'],
      ['==', 'EQ'],
      ['!=', 'NE'],
      ['<', 'LT'],
      ['<=', 'LE'],
      ['>', 'GT'],
      ['>=', 'GE'],
    ];
    for (const [op, opcode] of ops) {
      assert.deepEqual(body([b.expr(b.bin(op, name('x'), name('y')))], ['x', 'y']), ['LOAD_LOCAL 0', 'LOAD_LOCAL 1', opcode, 'POP']);
    }
    assert.deepEqual(body([b.expr(b.un('-', name('x')))], ['x']), ['LOAD_LOCAL 0', 'NEG', 'POP']);
    assert.deepEqual(body([b.expr(b.un('!', name('x')))], ['x']), ['LOAD_LOCAL 0', 'NOT', 'POP']);
  });

  test('logical operators keep-and-jump to the end', () => {
    for (const [op, opcode] of [
      ['&&', 'JUMP_IF_FALSE_OR_POP'],
      ['||', 'JUMP_IF_TRUE_OR_POP'],
      ['??', 'JUMP_IF_NOT_NULL_OR_POP'],
    ] as const) {
      // x, JUMP end, y, end: POP; offsets: LOAD(0) JUMP(2) LOAD(4) POP(6)
      assert.deepEqual(body([b.expr(b.logic(op, name('x'), name('y')))], ['x', 'y']), ['LOAD_LOCAL 0', `${opcode} @6`, 'LOAD_LOCAL 1', 'POP']);
    }
  });

  test('member, index, ambient names', () => {
    assert.deepEqual(body([b.expr(b.member(name('request'), 'path'))]), ['LOAD_AMBIENT 0', 'GET_FIELD "path"', 'POP']);
    // Outside a route's prologue every use of the body reads it first (READ_BODY does nothing the second time).
    assert.deepEqual(body([b.expr(b.index(name('body'), lit('k')))]), ['READ_BODY', 'LOAD_AMBIENT 1', 'CONST "k"', 'GET_INDEX', 'POP']);
    assert.deepEqual(body([b.expr(b.member(name('request'), 'body'))]), ['READ_BODY', 'LOAD_AMBIENT 0', 'GET_FIELD "body"', 'POP']);
    assert.deepEqual(body([b.expr(b.index(name('request'), lit('body')))]), ['READ_BODY', 'LOAD_AMBIENT 0', 'CONST "body"', 'GET_INDEX', 'POP']);
    assert.deepEqual(body([b.expr(b.member(name('request'), 'headers'))]), ['LOAD_AMBIENT 0', 'GET_FIELD "headers"', 'POP']);
    assert.deepEqual(body([b.expr(b.list(['params', 'query', 'response'].map((n) => name(n))))]), [
      'LOAD_AMBIENT 2',
      'LOAD_AMBIENT 3',
      'LOAD_AMBIENT 4',
      'LIST 3',
      'POP',
    ]);
  });

  test('templates merge text and folded parts', () => {
    assert.deepEqual(body([b.expr(b.tmpl(['a', b.bin('+', lit(1), lit(2)), 'b', name('x'), '!']))], ['x']), [
      'CONST "a3b"',
      'LOAD_LOCAL 0',
      'CONST "!"',
      'TEMPLATE 3',
      'POP',
    ]);
    assert.deepEqual(body([b.expr(b.tmpl(['n=', lit(null), ' ', lit(true)]))]), ['CONST "n=null true"', 'POP']);
    assert.deepEqual(body([b.expr(b.tmpl([name('x')]))], ['x']), ['LOAD_LOCAL 0', 'TEMPLATE 1', 'POP']);
  });
});

describe('constant folding', () => {
  const folds: [string, A.Expr, string][] = [
    ['arithmetic', b.bin('*', b.bin('+', lit(1), lit(2)), lit(4)), 'CONST 12'],
    ['modulo', b.bin('%', lit(7), lit(3)), 'CONST 1'],
    ['division', b.bin('/', lit(1), lit(4)), 'CONST 0.25'],
    ['text + number', b.bin('+', lit('a'), lit(1)), 'CONST "a1"'],
    ['number + text', b.bin('+', lit(1), lit('a')), 'CONST "1a"'],
    ['text + null', b.bin('+', lit('a'), lit(null)), 'CONST "anull"'],
    ['comparison', b.bin('<', lit(1), lit(2)), 'TRUE'],
    ['text comparison', b.bin('>=', lit('a'), lit('b')), 'FALSE'],
    ['equality across types', b.bin('==', lit(1), lit('1')), 'FALSE'],
    ['inequality', b.bin('!=', lit(null), lit(false)), 'TRUE'],
    ['negation', b.un('-', lit(5)), 'CONST -5'],
    ['not of falsy text', b.un('!', lit('')), 'TRUE'],
    ['not of zero', b.un('!', lit(0)), 'TRUE'],
    ['and short-circuits', b.logic('&&', lit(0), lit(1)), 'CONST 0'],
    ['and yields the right', b.logic('&&', lit(1), lit('x')), 'CONST "x"'],
    ['or', b.logic('||', lit(''), lit(2)), 'CONST 2'],
    ['??', b.logic('??', lit(null), lit(3)), 'CONST 3'],
    ['?? keeps false', b.logic('??', lit(false), lit(3)), 'FALSE'],
  ];
  for (const [what, e, expected] of folds) {
    test(`folds ${what}`, () => assert.deepEqual(body([b.expr(e)]), [expected, 'POP']));
  }

  const runtimeErrors: [string, A.Expr, string[]][] = [
    ['division by zero', b.bin('/', lit(1), lit(0)), ['CONST 1', 'CONST 0', 'DIV']],
    ['modulo by zero', b.bin('%', lit(1), lit(0)), ['CONST 1', 'CONST 0', 'MOD']],
    ['text minus number', b.bin('-', lit('a'), lit(1)), ['CONST "a"', 'CONST 1', 'SUB']],
    ['number < text', b.bin('<', lit(1), lit('a')), ['CONST 1', 'CONST "a"', 'LT']],
    ['bool + number', b.bin('+', lit(true), lit(1)), ['TRUE', 'CONST 1', 'ADD']],
    ['negated text', b.un('-', lit('a')), ['CONST "a"', 'NEG']],
  ];
  for (const [what, e, expected] of runtimeErrors) {
    test(`leaves ${what} to fail at runtime`, () => assert.deepEqual(body([b.expr(e)]), [...expected, 'POP']));
  }

  test('a constant left side of a logical picks the runtime right side statically', () => {
    assert.deepEqual(body([b.expr(b.logic('&&', lit(true), name('x')))], ['x']), ['LOAD_LOCAL 0', 'POP']);
    assert.deepEqual(body([b.expr(b.logic('||', lit(true), name('x')))], ['x']), ['TRUE', 'POP']);
  });

  test('folds constant sub-expressions of runtime expressions', () => {
    assert.deepEqual(body([b.expr(b.bin('+', name('x'), b.bin('*', lit(2), lit(3))))], ['x']), ['LOAD_LOCAL 0', 'CONST 6', 'ADD', 'POP']);
  });
});

describe('locals and scopes', () => {
  test('params take the first slots; first assignment declares, later ones store', () => {
    const chunk = fnChunk([b.assign('x', name('a')), b.assign('x', name('b')), b.ret(name('x'))], ['a', 'b']);
    assert.deepEqual(listing(chunk), ['LOAD_LOCAL 0', 'STORE_LOCAL 2', 'LOAD_LOCAL 1', 'STORE_LOCAL 2', 'LOAD_LOCAL 2', 'RETURN', 'NULL', 'RETURN']);
    assert.equal(chunk.slots, 3);
  });

  test('slots of ended blocks are reused; slots = most live at once', () => {
    const chunk = fnChunk([b.ifS(lit(true), [b.assign('a', lit(1)), b.assign('b', lit(2))]), b.ifS(lit(true), [b.assign('c', lit(3))]), b.assign('d', lit(4))]);
    const stores = listing(chunk).filter((l) => l.startsWith('STORE_LOCAL'));
    assert.deepEqual(stores, ['STORE_LOCAL 0', 'STORE_LOCAL 1', 'STORE_LOCAL 0', 'STORE_LOCAL 0']);
    assert.equal(chunk.slots, 2);
  });

  test('an assignment inside a block to an outer name stores the outer slot', () => {
    const lines = body([b.assign('x', lit(1)), b.whileS(name('x'), [b.assign('x', lit(0))])]);
    assert.deepEqual(
      lines.filter((l) => l.startsWith('STORE')),
      ['STORE_LOCAL 0', 'STORE_LOCAL 0'],
    );
  });

  test('a block-local is gone after its block', () => {
    assert.deepEqual(codes([b.fn('f', [], [b.ifS(lit(true), [b.assign('y', lit(1))]), b.ret(name('y', at(3, 10)))])]), ['E_UNDEFINED_NAME@3:10']);
  });

  test('loop variables and the catch name are scoped to their block', () => {
    assert.deepEqual(codes([b.fn('f', [], [b.forS(null, 'item', name('xs'), []), b.ret(name('item', at(2, 8)))], at(1))]).slice(-1), ['E_UNDEFINED_NAME@2:8']);
    assert.deepEqual(codes([b.fn('f', [], [b.tryS([], 'err', []), b.ret(name('err', at(4, 8)))])]), ['E_UNDEFINED_NAME@4:8']);
  });

  test('reading before the first assignment is undefined, with a did-you-mean over locals and ambient names', () => {
    const result = compile([b.fn('f', ['count'], [b.assign('x', name('x', at(2, 5))), b.expr(name('cuont', at(3, 1))), b.expr(name('requets', at(4, 1)))])]);
    assert.deepEqual(
      result.diagnostics.map((d) => `${d.code}@${d.line}:${d.col}`),
      ['E_UNDEFINED_NAME@2:5', 'E_UNDEFINED_NAME@3:1', 'E_UNDEFINED_NAME@4:1'],
    );
    assert.match(result.diagnostics[1]!.hint ?? '', /count/);
    assert.match(result.diagnostics[2]!.hint ?? '', /request/);
  });

  test('assigning an ambient name is an error, also as a loop variable or catch name', () => {
    assert.deepEqual(codes([b.route('GET', '/', [b.assign(name('body', at(2, 3)), lit(1), at(2, 3))])]), ['E_ASSIGN_AMBIENT@2:3']);
    assert.deepEqual(codes([b.fn('f', [], [b.forS(null, 'query', lit('ab'), [], at(5, 1))])]), ['E_ASSIGN_AMBIENT@5:1']);
    assert.deepEqual(codes([b.fn('f', [], [b.tryS([], 'response', [], at(6, 1))])]), ['E_ASSIGN_AMBIENT@6:1']);
  });

  test('a fn, guard or type name is not a value', () => {
    assert.deepEqual(
      codes([
        b.fn('helper', [], []),
        b.guardDef('g', [], []),
        b.typeDecl('User', []),
        b.fn('f', [], [b.expr(name('helper', at(5, 2))), b.expr(name('g', at(6, 2))), b.expr(b.member(name('User', at(7, 2)), 'x', at(7, 2)))]),
      ]),
      ['E_NOT_A_VALUE@5:2', 'E_NOT_A_VALUE@6:2', 'E_NOT_A_VALUE@7:2'],
    );
  });
});

describe('calls', () => {
  test('name(args) and X.m(args) become CALL with refs', () => {
    const chunk = fnChunk([b.expr(b.callN('len', [name('s')], at(2, 3))), b.expr(b.callM('response', 'ok', [lit(1)], at(3, 3)))], ['s']);
    assert.deepEqual(listing(chunk).slice(0, 6), ['LOAD_LOCAL 0', 'CALL len/1', 'POP', 'CONST 1', 'CALL response.ok/1', 'POP']);
    assert.deepEqual(chunk.refs, [
      { name: 'len', kind: 'call', argc: 1, line: 2, col: 3 },
      { name: 'response.ok', kind: 'call', argc: 1, line: 3, col: 3 },
    ]);
    assert.deepEqual(names(fnChunk([b.expr(b.callM('User', 'create', [name('body')]))])).slice(0, 3), ['READ_BODY', 'LOAD_AMBIENT', 'CALL']);
  });

  test('other callees are not callable (a parameter is: it may hold a lambda)', () => {
    assert.deepEqual(
      codes([
        b.fn(
          'f',
          ['local'],
          [
            b.expr(b.call(b.member(b.member(name('a'), 'b'), 'c', at(2, 1)), [], at(2, 1))),
            b.expr(b.call(b.callN('g', [], at(3, 1)), [], at(3, 1))),
            b.expr(b.call(b.member(name('local'), 'm', at(4, 1)), [], at(4, 1))),
            b.assign('n', lit(1)),
            b.expr(b.call(name('n', at(5, 1)), [], at(5, 1))),
          ],
        ),
      ]),
      ['E_NOT_CALLABLE@2:1', 'E_NOT_CALLABLE@3:1', 'E_NOT_CALLABLE@4:1', 'E_NOT_CALLABLE@5:1'],
    );
  });

  test('save and delete call refs of those names', () => {
    const chunk = fnChunk([b.save(name('r')), b.del(name('r'))], ['r']);
    assert.deepEqual(listing(chunk).slice(0, 6), ['LOAD_LOCAL 0', 'CALL save/1', 'POP', 'LOAD_LOCAL 0', 'CALL delete/1', 'POP']);
  });
});

describe('control flow', () => {
  test('if / else if / else with patched forward jumps', () => {
    const lines = body([b.ifS(name('c'), [b.expr(lit(1))], b.ifS(name('d'), [b.expr(lit(2))], [b.expr(lit(3))]))], ['c', 'd']);
    assert.deepEqual(lines, [
      'LOAD_LOCAL 0', // 0
      'JUMP_IF_FALSE @9', // 2
      'CONST 1', // 4
      'POP', // 6
      'JUMP @21', // 7
      'LOAD_LOCAL 1', // 9
      'JUMP_IF_FALSE @18', // 11
      'CONST 2', // 13
      'POP', // 15
      'JUMP @21', // 16
      'CONST 3', // 18
      'POP', // 20
    ]);
    assert.deepEqual(body([b.ifS(name('c'), [b.expr(lit(1))])], ['c']), ['LOAD_LOCAL 0', 'JUMP_IF_FALSE @7', 'CONST 1', 'POP']);
  });

  test('while: top, cond, JUMP_IF_FALSE end, body, LOOP top; continue loops, break jumps to the end', () => {
    const lines = body([b.whileS(name('c'), [b.ifS(name('c'), [b.brk()]), b.cont()])], ['c']);
    assert.deepEqual(lines, [
      'LOAD_LOCAL 0', // 0
      'JUMP_IF_FALSE @14', // 2
      'LOAD_LOCAL 0', // 4
      'JUMP_IF_FALSE @10', // 6
      'JUMP @14', // 8: break
      'LOOP @0', // 10: continue
      'LOOP @0', // 12
    ]);
  });

  test('for: ITER_INIT, ITER_NEXT end, STORE, body, LOOP; break pops the iterator', () => {
    const lines = body([b.forS(null, 'x', name('xs'), [b.ifS(name('x'), [b.brk()], [b.cont()])])], ['xs']);
    assert.deepEqual(lines, [
      'LOAD_LOCAL 0', // 0
      'ITER_INIT', // 2
      'ITER_NEXT @20', // 3
      'STORE_LOCAL 1', // 5
      'LOAD_LOCAL 1', // 7
      'JUMP_IF_FALSE @16', // 9
      'POP', // 11: break drops the iterator
      'JUMP @20', // 12
      'JUMP @18', // 14
      'LOOP @3', // 16: continue
      'LOOP @3', // 18
    ]);
  });

  test('for k, v stores the value first, then the key', () => {
    const lines = body([b.forS('k', 'v', name('o'), [])], ['o']);
    assert.deepEqual(lines, ['LOAD_LOCAL 0', 'ITER_INIT', 'ITER_NEXT_PAIR @11', 'STORE_LOCAL 2', 'STORE_LOCAL 1', 'LOOP @3']);
  });

  test('nested loops: break pops only the iterator of the loop it leaves', () => {
    const lines = body([b.forS(null, 'a', name('xs'), [b.whileS(lit(true), [b.brk()]), b.brk()])], ['xs']);
    const pops = lines.filter((l) => l === 'POP');
    assert.equal(pops.length, 1);
    assert.ok(lines.indexOf('POP') > lines.indexOf('LOOP @7'));
  });

  test('try / catch: TRY handler, body, END_TRY, JUMP end, handler stores the error', () => {
    const lines = body([b.tryS([b.expr(lit(1))], 'err', [b.expr(name('err'))])]);
    assert.deepEqual(lines, ['TRY @8', 'CONST 1', 'POP', 'END_TRY', 'JUMP @13', 'STORE_LOCAL 0', 'LOAD_LOCAL 0', 'POP']);
  });

  test('break and continue leaving a try emit END_TRY for each try they leave', () => {
    const lines = body([b.whileS(lit(true), [b.tryS([b.tryS([b.brk()], 'e', [b.cont()])], 'f', [])])]);
    const brkAt = lines.findIndex((l) => l.startsWith('JUMP @') && !l.endsWith('@0'));
    assert.deepEqual(lines.slice(brkAt - 2, brkAt + 1).slice(0, 2), ['END_TRY', 'END_TRY']);
    // continue inside the inner handler leaves only the outer try.
    const contAt = lines.indexOf('LOOP @0');
    assert.equal(lines[contAt - 1], 'END_TRY');
    assert.notEqual(lines[contAt - 2], 'END_TRY');
  });

  test('return, fail and response statements', () => {
    assert.deepEqual(body([b.ret()]), ['NULL', 'RETURN']);
    assert.deepEqual(body([b.fail(lit(403), lit('no'))]), ['CONST 403', 'CONST "no"', 'FAIL']);
    assert.deepEqual(body([b.fail(lit(400))]), ['CONST 400', 'NULL', 'FAIL']);
    const route = ok([
      b.route('GET', '/', [
        b.resp([
          ['status', lit(401)],
          ['json', b.obj([['error', lit('x')]])],
        ]),
      ]),
    ]).chunks[0]!;
    assert.deepEqual(listing(route), [
      'READ_BODY',
      'CONST "status"',
      'CONST 401',
      'CONST "json"',
      'CONST "error"',
      'CONST "x"',
      'OBJECT 1',
      'OBJECT 2',
      'RESPOND',
      'NULL',
      'RETURN',
    ]);
  });

  test('break/continue outside a loop and return outside a fn', () => {
    assert.deepEqual(codes([b.fn('f', [], [b.brk(at(2, 3)), b.cont(at(3, 3))])]), ['E_BREAK_OUTSIDE_LOOP@2:3', 'E_BREAK_OUTSIDE_LOOP@3:3']);
    assert.deepEqual(codes([b.route('GET', '/', [b.ret(null, at(4, 5))]), b.middleware([b.ret(lit(1), at(7, 2))])]), [
      'E_RETURN_OUTSIDE_FN@4:5',
      'E_RETURN_OUTSIDE_FN@7:2',
    ]);
    assert.deepEqual(codes([b.guardDef('g', [], [b.ret(lit(true))])]), []);
  });

  test('response fields: unknown keys and more than one body kind', () => {
    const bad = b.resp(
      [
        ['status', lit(200)],
        ['jsn', lit(1)],
      ],
      at(3, 1),
    );
    bad.fields.entries[1]!.line = 3;
    bad.fields.entries[1]!.col = 20;
    const result = compile([b.route('GET', '/', [bad])]);
    assert.deepEqual(
      result.diagnostics.map((d) => `${d.code}@${d.line}:${d.col}`),
      ['E_BAD_RESPONSE_FIELD@3:20'],
    );
    assert.match(result.diagnostics[0]!.hint ?? '', /json/);
    assert.deepEqual(
      codes([
        b.route('GET', '/', [
          b.resp(
            [
              ['json', lit(1)],
              ['text', lit('x')],
            ],
            at(5, 2),
          ),
        ]),
      ]),
      ['E_BAD_RESPONSE_FIELD@5:2'],
    );
  });
});

describe('maxStack and line table', () => {
  test('maxStack follows nested expressions', () => {
    assert.equal(fnChunk([b.expr(lit(1))]).maxStack, 1);
    // a + (b * (c - d)): 4 values live at once.
    const e = b.bin('+', name('a'), b.bin('*', name('b'), b.bin('-', name('c'), name('d'))));
    assert.equal(fnChunk([b.expr(e)], ['a', 'b', 'c', 'd']).maxStack, 4);
    // {k: [x, y]}: key, x, y.
    assert.equal(fnChunk([b.expr(b.obj([['k', b.list([name('x'), name('y')])]]))], ['x', 'y']).maxStack, 3);
    // f(a, g(b, c)): a, b, c.
    assert.equal(fnChunk([b.expr(b.callN('f', [name('a'), b.callN('g', [name('b'), name('c')])]))], ['a', 'b', 'c']).maxStack, 3);
  });

  test('the iterator and the catch error count towards maxStack', () => {
    assert.equal(fnChunk([b.forS('k', 'v', name('o'), [])], ['o']).maxStack, 3);
    assert.equal(fnChunk([b.tryS([], 'e', [])]).maxStack, 1);
  });

  test('lines get a triple whenever the position changes', () => {
    const chunk = fnChunk([b.expr(b.bin('/', name('x', at(2, 5)), lit(2, at(2, 9)), at(2, 7)), at(2, 5)), b.ret(name('x', at(3, 10)), at(3, 3))], ['x']);
    assert.deepEqual(Array.from(chunk.lines), [0, 2, 5, 2, 2, 9, 4, 2, 7, 5, 2, 5, 6, 3, 10, 8, 3, 3, 9, 1, 1]);
  });
});

describe('routes', () => {
  test('prologue: guard calls with constant args and modes, then READ_BODY, VALIDATE 0 and 1, then the handler', () => {
    const m = ok([
      b.route(
        'POST',
        '/users/:id/*rest',
        [b.expr(b.callM('response', 'ok', [name('body')]))],
        {
          guards: [b.guardUse('auth', [], 'optional', at(2, 3)), b.guardUse('rate_limit', [lit(100), b.bin('*', lit(6), lit(10))], 'required', at(3, 3))],
          validate: [b.field('email', 'text', { decorators: [b.dec('email')] })],
          query: [b.field('page', 'int', { optional: true })],
        },
        at(1, 1),
      ),
    ]);
    const chunk = m.chunks[0]!;
    assert.deepEqual(listing(chunk), [
      'CALL auth/0',
      'POP',
      'CONST 100',
      'CONST 60',
      'CALL rate_limit/2',
      'POP',
      // The body is read after the guards, once: the handler's `body` needs no READ_BODY of its own.
      'READ_BODY',
      'VALIDATE 0',
      'VALIDATE 1',
      'LOAD_AMBIENT 1',
      'CALL response.ok/1',
      'POP',
      'NULL',
      'RETURN',
    ]);
    assert.deepEqual(chunk.refs.slice(0, 2), [
      { name: 'auth', kind: 'guard', argc: 0, line: 2, col: 3, mode: 'optional' },
      { name: 'rate_limit', kind: 'guard', argc: 2, line: 3, col: 3, mode: 'required' },
    ]);
    const r = m.routes[0]!;
    assert.equal(r.method, 'POST');
    assert.equal(r.path, '/users/:id/*rest');
    assert.equal(r.openapiPath, '/users/{id}/{rest}');
    assert.deepEqual(r.params, ['id', 'rest']);
    assert.equal(r.chunk, 0);
    assert.deepEqual(r.guards, [
      { name: 'auth', args: [], mode: 'optional', line: 2, col: 3 },
      { name: 'rate_limit', args: [100, 60], mode: 'required', line: 3, col: 3 },
    ]);
    assert.deepEqual(
      r.body!.map((f) => [f.name, f.type, f.required, f.decorators.map((d) => d.name)]),
      [['email', 'text', true, ['email']]],
    );
    assert.deepEqual(
      r.query!.map((f) => [f.name, f.optional, f.required]),
      [['page', true, false]],
    );
  });

  test('field required = not optional and no @default; decorator args folded', () => {
    const m = ok([
      b.route('POST', '/', [], {
        validate: [
          b.field('role', 'text', { decorators: [b.dec('default', [lit('user')]), b.dec('one_of', [lit('user'), lit('admin')])] }),
          b.field('age', 'int', { decorators: [b.dec('range', [lit(18), b.bin('+', lit(100), lit(20))])] }),
          b.field('site', 'text', { optional: true }),
        ],
      }),
    ]);
    const body = m.routes[0]!.body!;
    assert.deepEqual(
      body.map((f) => f.required),
      [false, true, false],
    );
    assert.deepEqual(
      body[0]!.decorators.map((d) => d.args),
      [['user'], ['user', 'admin']],
    );
    assert.deepEqual(body[1]!.decorators[0]!.args, [18, 120]);
    assert.equal(m.routes[0]!.openapiPath, '/');
  });

  test('non-constant guard and decorator arguments are errors', () => {
    assert.deepEqual(
      codes([
        b.route('GET', '/', [], {
          guards: [b.guardUse('role', [name('x', at(2, 12))])],
          validate: [b.field('a', 'text', { decorators: [b.dec('min', [b.callN('f', [], at(3, 15))])] })],
        }),
      ]),
      ['E_NOT_CONSTANT@2:12', 'E_NOT_CONSTANT@3:15'],
    );
  });

  test('duplicate top-level names in one file', () => {
    // Duplicate routes are the router's diagnostic at link time (E_DUPLICATE_ROUTE); a second
    // middleware block, duplicate fields and parameters are the parser's.
    const result = compile([b.fn('a', [], [], at(1)), b.typeDecl('a', [], at(4)), b.route('GET', '/x', []), b.route('POST', '/x', [])]);
    assert.deepEqual(
      result.diagnostics.map((d) => `${d.code}@${d.line}:${d.col}`),
      ['E_DUPLICATE_DECL@4:1'],
    );
    assert.match(result.diagnostics[0]!.message, /line 1.*line 4/);
  });
});

describe('limits', () => {
  test(`more than MAX_LOCALS (${MAX_LOCALS}) live locals`, () => {
    const ok256 = Array.from({ length: MAX_LOCALS }, (_, i) => b.assign(`v${i}`, lit(i)));
    assert.deepEqual(codes([b.fn('f', [], ok256)]), []);
    const over = [...ok256, b.assign(name('extra', at(300, 2)), lit(0), at(300, 2))];
    assert.deepEqual(codes([b.fn('f', [], over)]), ['E_TOO_MANY_LOCALS@300:2']);
  });

  test(`more than MAX_CONSTANTS (${MAX_CONSTANTS}) constants in a chunk`, () => {
    const items = Array.from({ length: MAX_CONSTANTS }, (_, i) => lit(i));
    assert.deepEqual(codes([b.fn('f', [], [b.expr(b.list(items))])]), []);
    assert.deepEqual(codes([b.fn('f', [], [b.expr(b.list([...items, lit('one more')]))], at(9, 1))]), ['E_TOO_MANY_CONSTANTS@9:1']);
  });

  test(`more than MAX_ARGS (${MAX_ARGS}) arguments`, () => {
    const args = Array.from({ length: MAX_ARGS }, () => lit(1));
    assert.deepEqual(codes([b.fn('f', [], [b.expr(b.callN('g', args))])]), []);
    assert.deepEqual(codes([b.fn('f', [], [b.expr(b.callN('g', [...args, lit(2, at(4, 40))]))])]), ['E_TOO_MANY_ARGS@4:40']);
  });
});

describe('stack safety', () => {
  test('maxStack covers the true depth on every path of every chunk', () => {
    const handler: A.Stmt[] = [
      b.assign('total', lit(0)),
      b.forS('i', 'item', b.member(name('body'), 'items'), [
        b.ifS(
          b.logic('&&', name('item'), b.bin('>', b.member(name('item'), 'qty'), lit(0))),
          [b.assign('total', b.bin('+', name('total'), b.bin('*', b.member(name('item'), 'qty'), b.logic('??', b.member(name('item'), 'price'), lit(1)))))],
          [b.cont()],
        ),
        b.tryS([b.assign('x', b.callN('risky', [name('i'), b.list([name('total'), b.obj([['a', name('item')]])])])), b.ifS(name('x'), [b.brk()])], 'err', [
          b.expr(b.callN('log', [b.tmpl(['failed: ', b.member(name('err'), 'message')])])),
        ]),
        b.forS(null, 'c', lit('abc'), [b.whileS(b.logic('||', name('c'), lit(false)), [b.brk()])]),
      ]),
      b.ifS(b.bin('==', name('total'), lit(0)), [b.fail(lit(400), lit('empty'))]),
      b.expr(
        b.callM('response', 'ok', [
          b.obj([
            ['total', name('total')],
            ['items', b.index(b.member(name('body'), 'items'), lit(0))],
          ]),
        ]),
      ),
    ];
    const m = ok([
      b.route('POST', '/orders', handler, { guards: [b.guardUse('auth')], validate: [b.field('items', 'list')] }),
      b.fn(
        'risky',
        ['a', 'b'],
        [b.whileS(name('a'), [b.assign('a', b.bin('-', name('a'), lit(1))), b.ifS(name('b'), [b.ret(name('a'))])]), b.ret(b.logic('??', name('b'), name('a')))],
      ),
      b.guardDef(
        'premium',
        [],
        [b.assign('u', b.callN('auth_user')), b.ifS(b.un('!', b.member(name('u'), 'plan')), [b.fail(lit(403), lit('Premium required'))])],
      ),
      b.middleware([
        b.expr(b.callN('next')),
        b.ifS(b.bin('>=', b.member(name('response'), 'status'), lit(500)), [
          b.resp([
            ['status', lit(500)],
            ['text', lit('x')],
          ]),
        ]),
      ]),
    ]);
    assert.equal(m.chunks.length, 4);
    for (const chunk of m.chunks) {
      const depth = simulateMaxStack(chunk);
      assert.ok(chunk.maxStack >= depth, `${chunk.name}: maxStack ${chunk.maxStack} < ${depth}`);
      assert.equal(chunk.maxStack, depth, `${chunk.name}: maxStack is exact`);
    }
  });
});
