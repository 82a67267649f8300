/**
 * No request can forge a log line (spec/language.md §7.4): request text reaching the log through runtime error
 * messages (`secret`, `json_parse`, `set_cookie`) and the request line itself, through a real
 * app and the real batching logger.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { App } from '../../../vm/runtime/app.js';
import { loadApp } from '../../../tools/host.js';
import { inject } from '../../../vm/runtime/http/inject.js';
import { createLogger, type Logger } from '../../../vm/runtime/log.js';

const ROUTES = `
route GET /secret {
  s = secret(query.n)
  response.ok({})
}

route GET /json {
  v = json_parse(query.t)
  response.ok({ v: v })
}

route GET /cookie {
  set_cookie(query.n, 'v')
  response.ok({})
}
`;

/** A character no log line may hold raw (a line break ends the line, so it is checked by counting lines). */
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

describe('log lines through an app', () => {
  let dir: string;
  let app: App;
  let written = '';
  let log: Logger;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rvm-log-app-'));
    writeFileSync(join(dir, 'routes.rvm'), ROUTES);
    const sink = { write: (chunk: Uint8Array | string) => void (written += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8')) };
    log = createLogger({ stream: sink, errorStream: sink });
    app = await loadApp(dir, { cache: false, logger: log });
  });

  after(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The lines one request wrote. */
  async function linesOf(url: string): Promise<{ status: number; lines: string[] }> {
    log.flush();
    written = '';
    const res = await inject(app, { url });
    log.flush();
    const lines = written.split('\n');
    assert.equal(lines.pop(), '', 'the log ends with a line break');
    return { status: res.status, lines };
  }

  const forged = encodeURIComponent('x\nGET /admin/stats 200 0.1ms\n\u001b[2J\u001b[31m\u009b1m\r');

  // json_parse's message quotes only the start of its input: the forged line begins there.
  const json = encodeURIComponent('\u001b[2J\nGET /admin/stats 200 0.1ms\n');
  for (const [name, url, fragment] of [
    ['secret(query.n)', `/secret?n=${forged}`, '\\nGET /admin/stats 200 0.1ms\\n\\x1b[2J\\x1b[31m\\x9b1m\\r'],
    ['json_parse(query.t)', `/json?t=${json}`, '\\x1b[2J\\nGET /'],
    ['set_cookie(query.n, ...)', `/cookie?n=${forged}`, '\\nGET /admin/stats 200 0.1ms\\n\\x1b[2J\\x1b[31m\\x9b1m\\r'],
  ]) {
    test(`${name} with line breaks and escapes: one error line and one request line, nothing raw`, async () => {
      const { status, lines } = await linesOf(url);
      assert.equal(status, 500);
      assert.equal(lines.length, 2, lines.join('\n'));
      assert.match(lines[0], /runtime error/);
      assert.ok(lines[0].includes(fragment), lines[0]);
      assert.match(lines[1], /^GET \/\w+ 500 \d+\.\dms$/);
      for (const line of lines) assert.ok(!RAW_CONTROL.test(line), JSON.stringify(line));
    });
  }

  test('a request path with raw control characters is one escaped request line', async () => {
    const { status, lines } = await linesOf('/no\u001b[31m\u009b\nGET /admin 200 0.1ms');
    assert.equal(status, 404);
    assert.deepEqual(lines.length, 1);
    assert.match(lines[0], /^GET \/no\\x1b\[31m\\x9b\\nGET \/admin 200 0\.1ms 404 \d+\.\dms$/);
  });
});
