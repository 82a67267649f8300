/** The cookbook: sixty everyday tasks as conformance cases, shown in spec/language.md as the suite runs them. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { LANGUAGE_DOC_PATH, readCookbook, readSection, renderCookbook, withCookbook } from '../../tools/gen-cookbook.js';

/** The tasks the cookbook promises (spec/language.md §12). */
const TASKS = 60;

test('spec/language.md shows the cookbook cases as they are', () => {
  const page = readFileSync(LANGUAGE_DOC_PATH, 'utf8');
  const fresh = withCookbook(page, renderCookbook(readCookbook()));
  assert.ok(page === fresh, 'the cookbook section of spec/language.md is out of date: run `npx tsc -p . && node dist/tools/gen-cookbook.js`');
});

test('the tasks are numbered 1 to 60 once each, and each sends a request and checks its answer', () => {
  const tasks = readCookbook().flatMap((s) => s.tasks.map((t) => ({ ...t, file: s.file })));
  assert.deepEqual(
    tasks.map((t) => t.number),
    Array.from({ length: TASKS }, (_, i) => i + 1),
  );
  for (const t of tasks) {
    assert.ok(t.requests > 0, `${t.file} task ${t.number} sends no request`);
    assert.ok(t.expectations > 0, `${t.file} task ${t.number} checks nothing`);
    assert.ok(t.code.includes('route ') || t.code.includes('fn '), `${t.file} task ${t.number} has no code`);
  }
});

test('the page leaves out the directives and keeps the code and its comments', () => {
  const section = readSection(
    'x.rvm',
    [
      '// Cookbook: Demo.',
      'const N = 2',
      '',
      '// 1. Twice.',
      '// request: GET /',
      '// expect body: 4',
      'route GET / {',
      '  // doubled',
      '  response.ok(N * 2)',
      '}',
      '',
    ].join('\n'),
  );
  assert.deepEqual(section.tasks, [{ number: 1, title: 'Twice.', code: 'route GET / {\n  // doubled\n  response.ok(N * 2)\n}', requests: 1, expectations: 1 }]);
  assert.equal(section.shared, 'const N = 2');
  assert.throws(() => readSection('y.rvm', 'route GET / {}\n'), /first line must be '\/\/ Cookbook: Title\.'/);
});
