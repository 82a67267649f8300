import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRoutePath } from '../../../vm/front/parser-path.js';

function segs(path: string): string[] {
  const r = parseRoutePath(path);
  assert.equal(r.problem, null, path);
  return r.segments.map((s) => (s.kind === 'static' ? s.value : s.kind === 'param' ? `:${s.value}` : `*${s.value}`));
}

describe('parseRoutePath', () => {
  test('root, static, params and a final wildcard', () => {
    assert.deepEqual(segs('/'), []);
    assert.deepEqual(segs('/users'), ['users']);
    assert.deepEqual(segs('/api/users/:id/files/*rest'), ['api', 'users', ':id', 'files', '*rest']);
    assert.deepEqual(segs('/v1.0/a-b_c~d/%E2%82%AC'), ['v1.0', 'a-b_c~d', '%E2%82%AC']);
  });

  test('each problem is located at its offset in the path', () => {
    const cases: [string, number, RegExp][] = [
      ['/a//b', 3, /empty/],
      ['/a/', 2, /end with/],
      ['/:id/:id', 5, /duplicate/],
      ['/:id/*id', 5, /duplicate/],
      ['/*all/x', 1, /last/],
      ['/:', 1, /not a valid parameter/],
      ['/*9', 1, /not a valid wildcard/],
      ['/{id}', 1, /not a path parameter/],
      ['/..', 1, /never match/],
      ['/a b', 2, /character ' '/],
      ['/ok/x%4', 5, /character '%'/],
      ['users', 0, /starts with/],
    ];
    for (const [path, offset, message] of cases) {
      const { problem } = parseRoutePath(path);
      assert.ok(problem, path);
      assert.equal(problem.offset, offset, path);
      assert.match(problem.message, message, path);
    }
  });

  test('hints say what to write instead', () => {
    assert.match(parseRoutePath('/users/').problem!.hint!, /'\/users'/);
    assert.match(parseRoutePath('/x/{slug}').problem!.hint!, /':slug'/);
  });
});
