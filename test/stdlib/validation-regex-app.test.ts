/**
 * `@regex` in an app: the catastrophic-backtracking pattern `^(a+)+$` (OWASP's ReDoS example) answered 422 at once,
 * and patterns RE2 cannot run reported as compile errors at the decorator, with the hint.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { App } from '../../vm/runtime/app.js';
import { loadApp } from '../../tools/host.js';
import { inject } from '../../vm/runtime/http/inject.js';
import { captureLogger } from '../../vm/runtime/log.js';
import { DiagnosticError, formatDiagnostic } from '../../vm/diagnostics.js';
import { tempApp } from '../support/temp-app.js';

const ROUTES = `route POST /v {
  validate {
    v: text @regex('^(a+)+$')
    w?: text @regex('(?i)^ok$')
  }
  response.ok({ v: body.v })
}
`;

describe('@regex in an app', () => {
  let app: App;
  after(() => app.close());
  // Removed after the app is closed: hooks run in the order they were added.
  const dir = tempApp({ after }, { 'v.rvm': ROUTES });

  before(async () => {
    app = await loadApp(dir, { cache: false, logger: captureLogger() });
  });

  test("ReDoS: '^(a+)+$' sent 32 a's and a '!' answers 422 quickly", async () => {
    const start = performance.now();
    const res = await inject(app, { method: 'POST', url: '/v', body: { v: 'a'.repeat(32) + '!' } });
    const ms = performance.now() - start;
    assert.equal(res.status, 422);
    assert.equal(res.json().code, 'validation_failed');
    assert.deepEqual(
      res.json().details.map((d: { field: string; rule: string }) => `${d.field}:${d.rule}`),
      ['v:regex'],
    );
    assert.ok(ms < 200, `took ${ms} ms`);
  });

  test('a matching value passes; (?i) makes a pattern case-insensitive', async () => {
    const ok = await inject(app, { method: 'POST', url: '/v', body: { v: 'a'.repeat(32), w: 'OK' } });
    assert.equal(ok.status, 200);
    const bad = await inject(app, { method: 'POST', url: '/v', body: { v: 'aaa', w: 'nope' } });
    assert.equal(bad.status, 422);
    assert.deepEqual(
      bad.json().details.map((d: { field: string }) => d.field),
      ['w'],
    );
  });
});

describe('@regex patterns RE2 cannot run are compile errors', () => {
  test('backreference, lookahead and lookbehind: E_VALIDATOR_ARGS at file:line:col with the hint', async (t) => {
    const source = `route POST /bad {
  validate {
    a: text @regex('(a)\\\\1')
    b: text @regex('(?=a)')
    c: text   @regex('(?<!a)b')
  }
  response.ok(1)
}
`;
    const dir = tempApp(t, { 'bad.rvm': source });
    await assert.rejects(loadApp(dir, { cache: false, logger: captureLogger() }), (e: unknown) => {
      assert.ok(e instanceof DiagnosticError);
      const found = e.diagnostics.map((d) => `${d.file}:${d.line}:${d.col} ${d.code}`);
      assert.deepEqual(found, ['bad.rvm:3:13 E_VALIDATOR_ARGS', 'bad.rvm:4:13 E_VALIDATOR_ARGS', 'bad.rvm:5:15 E_VALIDATOR_ARGS']);
      assert.deepEqual(
        e.diagnostics.map((d) => /uses an? ([a-z]+)/.exec(d.message)?.[1]),
        ['backreference', 'lookahead', 'lookbehind'],
      );
      for (const d of e.diagnostics) {
        assert.match(d.hint ?? '', /^rvm runs patterns on a linear-time engine \(RE2 syntax\): backreferences, lookahead, lookbehind/);
        assert.match(formatDiagnostic(d), /\n {2}hint: rvm runs patterns on a linear-time engine/);
      }
      return true;
    });
  });
});
