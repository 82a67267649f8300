/**
 * Every `text` field refuses what no database can store as written, before its decorators and
 * whether or not the route stores it (spec/language.md §11.1): NUL is a 422 field error `no_nul` from JSON, a
 * form and the query string alike — before, validation let it through and only a record write
 * refused it later. A lone surrogate cannot arrive over HTTP (UTF-8 cannot encode one, a JSON
 * escape of one is 400 invalid_text); validate.test.ts checks its rule `well_formed` on the engine.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { App } from '../../vm/runtime/app.js';
import { loadApp } from '../../tools/host.js';
import { inject } from '../../vm/runtime/http/inject.js';
import { captureLogger } from '../../vm/runtime/log.js';

const ROUTES = `route POST /echo {
  validate {
    title: text
    note?: text @maxLength(3)
  }
  response.ok(body)
}

route GET /search {
  query {
    q: text
  }
  response.ok(query)
}
`;

const NO_NUL = { rule: 'no_nul', message: 'must not contain NUL characters' };

function refused(...details: { field: string; rule: string; message: string }[]) {
  return { status: 422, body: { error: 'Validation failed', code: 'validation_failed', details } };
}

describe('a text field refuses NUL before its decorators', () => {
  let dir: string;
  let app: App;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rvm-text-rule-'));
    writeFileSync(join(dir, 'routes.rvm'), ROUTES);
    app = await loadApp(dir, { cache: false, logger: captureLogger() });
  });

  after(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const answer = async (req: Parameters<typeof inject>[1]) => {
    const res = await inject(app, req);
    return { status: res.status, body: res.json() };
  };

  test('JSON: 422 no_nul naming the field, every failing rule listed; text with astral characters passes', async () => {
    assert.deepEqual(await answer({ method: 'POST', url: '/echo', body: { title: 'a\u0000b' } }), refused({ field: 'title', ...NO_NUL }));
    assert.deepEqual(
      await answer({ method: 'POST', url: '/echo', body: { title: 'ok', note: '\u0000\u0000\u0000\u0000' } }),
      refused({ field: 'note', ...NO_NUL }, { field: 'note', rule: 'maxLength', message: 'must be at most 3 characters' }),
    );
    assert.deepEqual(await answer({ method: 'POST', url: '/echo', body: { title: 'a👍b', note: '' } }), { status: 200, body: { title: 'a👍b', note: '' } });
  });

  test('a form body and the query string: the same 422', async () => {
    const form = { method: 'POST', url: '/echo', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'title=a%00b' };
    assert.deepEqual(await answer(form), refused({ field: 'title', ...NO_NUL }));
    assert.deepEqual(await answer({ url: '/search?q=%00' }), refused({ field: 'query.q', ...NO_NUL }));
    assert.deepEqual(await answer({ url: '/search?q=caf%C3%A9' }), { status: 200, body: { q: 'café' } });
  });
});
