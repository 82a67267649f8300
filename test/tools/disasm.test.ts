import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { disassembleChunk, disassembleModule } from '../../tools/disasm.js';
import { FORMAT_VERSION, type ChunkData } from '../../vm/bytecode/module.js';
import { OPCODES, Op } from '../../vm/bytecode/opcodes.js';
import { FIXTURE_SOURCE, handModule } from '../vm/artefact-fixture.js';

describe('disassembler', () => {
  test('lists a hand-built chunk exactly', () => {
    const expected = [
      '== route GET /users/:id ==  (route; arity 0, slots 1, max stack 2)',
      '0000     3  LOAD_AMBIENT            params',
      '0002     |  GET_FIELD               #0 "id"',
      '0004     |  STORE_LOCAL             slot 0',
      '0006     4  CONST                   #0 "id"',
      '0008     |  LOAD_LOCAL              slot 0',
      '0010     |  OBJECT                  n=1',
      '0012     |  CALL                    @0 response.ok/1  argc=1',
      '0015     |  POP',
      '0016     5  NULL',
      '0017     |  RETURN',
      '',
    ].join('\n');
    assert.equal(disassembleChunk(handModule().chunks[0]!), expected);
  });

  test('prints each new source line before its first instruction', () => {
    const listing = disassembleChunk(handModule().chunks[0]!, { source: FIXTURE_SOURCE });
    const lines = listing.split('\n');
    assert.equal(lines[1], '            ; user = params.id');
    assert.equal(lines[2], '0000     3  LOAD_AMBIENT            params');
    assert.equal(lines[5], '            ; response.ok({ id: user })');
    assert.equal(lines[6], '0006     4  CONST                   #0 "id"');
    assert.equal(lines.filter((l) => l.startsWith('            ; ')).length, 3);
  });

  test('renders targets, guard refs, sections and linked operands', () => {
    const chunk: ChunkData = {
      name: 'route POST /x',
      kind: 'route',
      arity: 0,
      slots: 0,
      maxStack: 2,
      code: Int32Array.from([Op.CALL, 0, 0, Op.VALIDATE, 1, Op.CALL_NATIVE, 3, 1, Op.CALL_FN, 1, 0, Op.JUMP, 0, Op.RETURN]),
      consts: [],
      lines: Int32Array.from([0, 1, 1]),
      refs: [{ name: 'auth', kind: 'guard', argc: 0, line: 1, col: 1, mode: 'optional' }],
    };
    const listing = disassembleChunk(chunk, { natives: ['a', 'b', 'c', 'len'], chunks: ['route', 'fn slugify'] });
    assert.match(listing, /CALL +@0 guard auth\/0 optional {2}argc=0\n/);
    assert.match(listing, /VALIDATE +query\n/);
    assert.match(listing, /CALL_NATIVE +native 3 \(len\) {2}argc=1\n/);
    assert.match(listing, /CALL_FN +chunk 1 \(fn slugify\) {2}argc=0\n/);
    assert.match(listing, /0011 +\| {2}JUMP +-> 0000\n/);
  });

  test('never throws on damaged code', () => {
    const chunk: ChunkData = { ...handModule().chunks[0]!, code: Int32Array.from([Op.CONST, 7, 9999, Op.LOAD_LOCAL]), lines: new Int32Array(0) };
    const listing = disassembleChunk(chunk);
    assert.match(listing, /CONST +#7 \?/);
    assert.match(listing, /\?\?\? 9999/);
    assert.match(listing, /LOAD_LOCAL +\(cut short\)/);
  });

  test('lists every opcode by its table name', () => {
    for (const info of OPCODES) {
      const code = Int32Array.from([info.op, ...info.operands.map(() => 0)]);
      const listing = disassembleChunk({ ...handModule().chunks[0]!, code });
      assert.match(listing.split('\n')[1]!, new RegExp(`^0000 +3 {2}${info.name}( |$)`));
    }
  });

  test('a module listing has a header and every chunk', () => {
    const listing = disassembleModule(handModule(), FIXTURE_SOURCE);
    assert.ok(listing.startsWith(`; api/users.rvm  (format ${FORMAT_VERSION}, compiler 0.1.0, sha256 aaaaaaaaaaaa, plugins core@0.1.0)\n`));
    for (const name of ['route GET /users/:id', 'fn double', 'middleware']) assert.ok(listing.includes(`== ${name} ==`), name);
    assert.ok(listing.includes('; fn double(x) { return x * 2 }'));
  });
});
