/**
 * One budget per request across its executions: middleware and route spend the same CPU budget,
 * and once it is spent the middleware around the route runs no further instruction.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { App } from '../../../vm/runtime/app.js';
import { loadApp } from '../../../tools/host.js';
import { inject } from '../../../vm/runtime/http/inject.js';
import { captureLogger, type CaptureLogger } from '../../../vm/runtime/log.js';

const FILES: Record<string, string> = {
  '_middleware.rvm': `
middleware {
  if request.path == '/both' {
    t = timestamp()
    while timestamp() - t < 0.6 { }
  }
  next()
  log('after next')
}`,
  'routes.rvm': `
fn spend() {
  t = timestamp()
  while timestamp() - t < 0.6 { }
}
route GET /both {
  spend()
  response.ok({ done: true })
}
route GET /route_only {
  spend()
  response.ok({ done: true })
}`,
};

describe('one budget per request', () => {
  let dir: string;
  let app: App;
  let logger: CaptureLogger;
  const appLog: string[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rvm-budget-app-'));
    for (const [name, text] of Object.entries(FILES)) writeFileSync(join(dir, name), text);
    logger = captureLogger();
    app = await loadApp(dir, { cache: false, logger, onAppLog: (line) => appLog.push(line) });
  });

  after(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('600 ms in a route alone is within the budget', async () => {
    appLog.length = 0;
    const res = await inject(app, { url: '/route_only' });
    assert.equal(res.status, 200);
    assert.ok(appLog.some((l) => l.includes('after next')));
  });

  test('600 ms in middleware and 600 ms in the route exhaust it: 500 cpu_budget_exceeded, one log line, nothing after next()', async () => {
    appLog.length = 0;
    const errorsBefore = logger.errors.length;
    const res = await inject(app, { url: '/both' });
    assert.equal(res.status, 500);
    assert.equal(res.json().code, 'cpu_budget_exceeded', 'a limit keeps its code in production');
    assert.deepEqual(appLog, [], 'the middleware ran no instruction after next()');
    const lines = logger.errors.slice(errorsBefore).filter((l) => l.includes('cpu_budget_exceeded'));
    assert.equal(lines.length, 1, lines.join('\n'));
  });
});
