/**
 * `rvm check` reports every diagnostic of an app in one run, sorted by file and position: a
 * syntax error hides nothing in its file or in other files, and every phase (parse, compile,
 * validation, link) runs over what it has.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadApp } from '../../tools/host.js';
import { DiagnosticError } from '../../vm/diagnostics.js';
import { captureLogger } from '../../vm/runtime/log.js';
import { rvm } from '../support/rvm-command.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const FIXTURE = join(ROOT, 'spec', 'conformance', 'compile', 'every-mistake-in-one-run.rvm');

/** `file:line:col code` of every diagnostic head `rvm check` printed, in printed order. */
async function check(dir: string): Promise<{ status: number | null; heads: string[]; stdout: string }> {
  const r = await rvm(['check', dir]);
  const heads = [...r.stdout.matchAll(/^(\S+?):(\d+):(\d+): (?:error|warning) (\w+):/gm)].map((m) => `${m[1]}:${m[2]}:${m[3]} ${m[4]}`);
  return { status: r.status, heads, stdout: r.stdout };
}

function app(parent: string, name: string, files: Record<string, string>): string {
  const dir = join(parent, name);
  for (const [file, source] of Object.entries(files)) {
    mkdirSync(join(dir, file, '..'), { recursive: true });
    writeFileSync(join(dir, file), source);
  }
  return dir;
}

describe('rvm check: every diagnostic in one run', () => {
  let dir = '';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rvm-check-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('a file of 12 independent mistakes is reported whole, sorted by position', async () => {
    const target = join(dir, 'mistakes');
    mkdirSync(target);
    copyFileSync(FIXTURE, join(target, 'mistakes.rvm'));
    const r = await check(target);
    assert.equal(r.status, 1, r.stdout);
    assert.deepEqual(r.heads, [
      'mistakes.rvm:4:7 E_UNKNOWN_FUNCTION',
      'mistakes.rvm:9:16 E_EXPECTED_EXPRESSION',
      'mistakes.rvm:13:13 E_UNEXPECTED_TOKEN',
      'mistakes.rvm:18:9 E_ARITY',
      'mistakes.rvm:20:17 E_UNKNOWN_VALIDATOR',
      'mistakes.rvm:21:19 E_NOT_CONSTANT',
      'mistakes.rvm:22:15 E_BAD_DEFAULT',
      'mistakes.rvm:27:1 E_DUPLICATE_ROUTE',
      'mistakes.rvm:28:15 E_ARITY',
      'mistakes.rvm:32:9 E_GUARD_ARGS',
      'mistakes.rvm:33:7 E_UNDEFINED_NAME',
      'mistakes.rvm:34:3 E_RETURN_OUTSIDE_FN',
    ]);
    assert.match(r.stdout, /^mistakes\.rvm:18:9: error E_ARITY: guard 'rate_limit' takes 2 arguments, got 1$/m);
    assert.match(r.stdout, /^mistakes\.rvm:28:15: error E_ARITY: 'len' takes 1 argument, got 2$/m);
    assert.match(r.stdout, /^mistakes\.rvm:27:1: error E_DUPLICATE_ROUTE: .*GET \/parse.*\(first at mistakes\.rvm:3\)$/m);
    assert.match(r.stdout, /^failed: 12 errors, 0 warnings in 1 file/m);
  });

  test('a syntax error in a.rvm does not hide the semantic errors of b.rvm; files come in order', async () => {
    const target = app(dir, 'two', {
      'b.rvm': 'route POST /b {\n  validate {\n    name: text @emial\n  }\n  response.ok(lenn(body.name))\n}\n',
      'a.rvm': 'route GET /a {\n  x = * 2\n}\n',
      'api/c.rvm': 'route GET /c {\n  log(nope)\n}\n',
    });
    const r = await check(target);
    assert.equal(r.status, 1, r.stdout);
    assert.deepEqual(r.heads, [
      'a.rvm:2:7 E_EXPECTED_EXPRESSION',
      'api/c.rvm:2:7 E_UNDEFINED_NAME',
      'b.rvm:3:16 E_UNKNOWN_VALIDATOR',
      'b.rvm:5:15 E_UNKNOWN_FUNCTION',
    ]);
  });

  test('a syntax error in GET /y does not hide the unknown function in GET /x before it', async () => {
    const target = app(dir, 'xy', {
      'app.rvm': 'route GET /x {\n  response.ok(jsn_parse(request.query.raw))\n}\n\nroute GET /y {\n  response.ok((1 + ))\n}\n',
    });
    const r = await check(target);
    assert.equal(r.status, 1, r.stdout);
    assert.deepEqual(r.heads, ['app.rvm:2:15 E_UNKNOWN_FUNCTION', 'app.rvm:6:20 E_EXPECTED_EXPRESSION']);
  });

  test('arity messages read "takes 1 argument" / "takes 2 arguments" for fns, guards, natives and validators alike', async () => {
    const target = app(dir, 'arity', {
      'app.rvm':
        [
          'fn one(a) {\n  return a\n}',
          'fn two(a, b) {\n  return a\n}',
          'guard_definition staff(role) {\n}',
          'route POST /x {\n  guard staff\n  validate {\n    n: int @min()\n    s: text @range(1)\n  }\n  response.ok([one(1, 2), two(1), len()])\n}',
        ].join('\n') + '\n',
    });
    const r = await check(target);
    assert.equal(r.status, 1, r.stdout);
    const messages = [...r.stdout.matchAll(/^app\.rvm:\d+:\d+: error E_\w+: (.*)$/gm)].map((m) => m[1]);
    assert.deepEqual(messages, [
      "guard 'staff' takes 1 argument, got 0",
      '@min takes 1 argument, got 0',
      '@range takes 2 arguments, got 1',
      "'one' takes 1 argument, got 2",
      "'two' takes 2 arguments, got 1",
      "'len' takes 1 argument, got 0",
    ]);
  });

  test('a recovered parse never serves: the app refuses to load, with every diagnostic sorted', async () => {
    const target = app(dir, 'serve', {
      'b.rvm': 'route GET /b {\n  response.ok(lenn(1))\n}\n',
      'a.rvm': 'route GET /ok {\n  response.ok(1)\n}\nroute GET /a {\n  x = * 2\n}\n',
    });
    await assert.rejects(loadApp(target, { cache: false, logger: captureLogger() }), (e: unknown) => {
      assert.ok(e instanceof DiagnosticError);
      assert.deepEqual(
        e.diagnostics.map((d) => `${d.file}:${d.line} ${d.code}`),
        ['a.rvm:5 E_EXPECTED_EXPRESSION', 'b.rvm:2 E_UNKNOWN_FUNCTION'],
      );
      return true;
    });
  });
});
