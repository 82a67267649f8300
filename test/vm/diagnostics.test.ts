import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { diagnostic, DiagnosticError, sortDiagnostics } from '../../vm/diagnostics.js';

const at = (file: string, line: number, col: number) => ({ file, line, col });

describe('sortDiagnostics', () => {
  test('orders by file, then line, then column; ties keep the order they were found in', () => {
    const list = [
      diagnostic('E_B', 'second at 2:1', at('b.rvm', 2, 1)),
      diagnostic('E_A', 'link', at('a.rvm', 10, 3)),
      diagnostic('E_C', 'first at 2:1', at('b.rvm', 2, 1)),
      diagnostic('E_A', 'parse', at('a.rvm', 2, 9)),
      diagnostic('E_A', 'col 2', at('a.rvm', 10, 2)),
      diagnostic('E_D', 'sub', at('api/a.rvm', 1, 1)),
    ];
    const sorted = sortDiagnostics(list).map((d) => `${d.file}:${d.line}:${d.col} ${d.code}`);
    assert.deepEqual(sorted, ['a.rvm:2:9 E_A', 'a.rvm:10:2 E_A', 'a.rvm:10:3 E_A', 'api/a.rvm:1:1 E_D', 'b.rvm:2:1 E_B', 'b.rvm:2:1 E_C']);
  });

  test('a diagnostic repeated at one place with one code and message is kept once; others at that place stay', () => {
    const list = [
      diagnostic('E_X', 'same', at('a.rvm', 1, 1)),
      diagnostic('E_X', 'same', at('a.rvm', 1, 1)),
      diagnostic('E_X', 'other', at('a.rvm', 1, 1)),
      diagnostic('E_Y', 'same', at('a.rvm', 1, 1)),
    ];
    assert.deepEqual(
      sortDiagnostics(list).map((d) => `${d.code} ${d.message}`),
      ['E_X same', 'E_X other', 'E_Y same'],
    );
  });

  test('DiagnosticError keeps and prints its diagnostics sorted', () => {
    const e = new DiagnosticError([diagnostic('E_B', 'b', at('b.rvm', 1, 1)), diagnostic('E_A', 'a', at('a.rvm', 5, 1))]);
    assert.deepEqual(
      e.diagnostics.map((d) => d.code),
      ['E_A', 'E_B'],
    );
    assert.ok(e.message.indexOf('E_A') < e.message.indexOf('E_B'));
  });
});
