/**
 * A small hand-built CompiledModule shared by the artefact, cache, bundle and disassembler tests:
 * a route, a fn and a middleware chunk, with metadata in every field.
 */
import { ARTEFACT_MAGIC, FORMAT_VERSION, type CompiledModule } from '../../vm/bytecode/module.js';
import { Op } from '../../vm/bytecode/opcodes.js';

/** The source the module pretends to come from (line numbers match the line tables). */
export const FIXTURE_SOURCE = [
  '/// Fetch a user',
  'route GET /users/:id {',
  '  user = params.id',
  '  response.ok({ id: user })',
  '}',
  'fn double(x) { return x * 2 }',
  'middleware { next() }',
].join('\n');

/** A fresh copy of the fixture module (tests may mutate it). */
export function handModule(file = 'api/users.rvm'): CompiledModule {
  return {
    header: { magic: ARTEFACT_MAGIC, format: FORMAT_VERSION, compiler: '0.1.0', sourceHash: 'a'.repeat(64), plugins: 'core@0.1.0' },
    file,
    chunks: [
      {
        name: 'route GET /users/:id',
        kind: 'route',
        arity: 0,
        slots: 1,
        maxStack: 2,
        // prettier-ignore
        code: Int32Array.from([
          Op.LOAD_AMBIENT,
          2, //  0
          Op.GET_FIELD,
          0, //     2
          Op.STORE_LOCAL,
          0, //   4
          Op.CONST,
          0, //         6
          Op.LOAD_LOCAL,
          0, //    8
          Op.OBJECT,
          1, //       10
          Op.CALL,
          0,
          1, //      12
          Op.POP, //             15
          Op.NULL, //            16
          Op.RETURN, //          17
        ]),
        consts: ['id'],
        lines: Int32Array.from([0, 3, 10, 6, 4, 3, 16, 5, 1]),
        refs: [{ name: 'response.ok', kind: 'call', argc: 1, line: 4, col: 3 }],
      },
      {
        name: 'fn double',
        kind: 'fn',
        arity: 1,
        slots: 1,
        maxStack: 2,
        code: Int32Array.from([Op.LOAD_LOCAL, 0, Op.CONST, 0, Op.MUL, Op.RETURN, Op.NULL, Op.RETURN]),
        consts: [2.5],
        lines: Int32Array.from([0, 6, 23]),
        refs: [],
      },
      {
        name: 'middleware',
        kind: 'middleware',
        arity: 0,
        slots: 0,
        maxStack: 1,
        code: Int32Array.from([Op.CALL, 0, 0, Op.POP, Op.JUMP, 6, Op.NULL, Op.RETURN]),
        consts: [],
        lines: Int32Array.from([0, 7, 14]),
        refs: [{ name: 'next', kind: 'call', argc: 0, line: 7, col: 14, mode: 'required' }],
      },
    ],
    routes: [
      {
        method: 'GET',
        path: '/users/:id',
        openapiPath: '/users/{id}',
        segments: [
          { kind: 'static', value: 'users' },
          { kind: 'param', value: 'id' },
        ],
        params: ['id'],
        chunk: 0,
        guards: [{ name: 'rate_limit', args: [100, 60], mode: 'required', line: 2, col: 1 }],
        body: null,
        query: [
          {
            name: 'page',
            type: 'int',
            optional: true,
            required: false,
            decorators: [{ name: 'min', args: [1], line: 2, col: 20 }],
            doc: 'Page number',
            line: 2,
            col: 10,
          },
        ],
        responses: [
          {
            status: 200,
            source: 'response.ok',
            contentType: 'application/json',
            schema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'], nested: [[{ deep: null }]] },
            line: 4,
          },
        ],
        doc: 'Fetch a user',
        line: 2,
        col: 1,
      },
    ],
    functions: [{ name: 'double', chunk: 1, params: ['x'], doc: null, line: 6, col: 1 }],
    guards: [],
    types: [
      {
        name: 'User',
        fields: [
          {
            name: 'email',
            type: 'text',
            optional: false,
            required: true,
            decorators: [{ name: 'email', args: [], line: 9, col: 16 }],
            doc: null,
            line: 9,
            col: 3,
          },
        ],
        doc: 'A user',
        line: 8,
        col: 1,
      },
    ],
    middleware: 2,
  };
}
