/**
 * A PostgreSQL outage in the app log (spec/deploy.md, "When a dependency goes
 * away"): a real throwaway server stopped and started again, twice, under an app whose requests
 * keep failing 503 meanwhile. Each outage logs its cause once, when the first request fails, and
 * once that the database is back, when the first request reaches it again — not a line per
 * failed request.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadApp } from '../../tools/host.js';
import { inject } from '../../vm/runtime/http/inject.js';
import { captureLogger } from '../../vm/runtime/log.js';
import { useOwnPostgres } from '../support/postgres.js';
import { NOTE_ROUTES } from '../support/apps.js';

const server = useOwnPostgres();

/** Requests answered while the server is down, each of them 503. */
const FAILED_PER_OUTAGE = 4;
/** How long the pool may take to reach the server again once it is started. */
const RECOVERY_MS = 15_000;

const UNAVAILABLE = /records: the database is unavailable \(.+\); requests that need it answer 503 database_unavailable until it is back$/;
const BACK = /records: the database is available again$/;

test(`each PostgreSQL outage logs its cause once and its end once, however many requests fail (${FAILED_PER_OUTAGE} here)`, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rvm-pg-outage-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'app.rvm'), NOTE_ROUTES);
  const logger = captureLogger();
  const app = await loadApp(dir, { cache: false, logger, settings: { env: { DATABASE_URL: server().url } } });
  try {
    const created = await inject(app, { method: 'POST', url: '/notes', body: { title: 'kept' } });
    assert.equal(created.status, 201, created.body);
    const path = `/notes/${created.json().id}`;

    for (let outage = 1; outage <= 2; outage++) {
      await server().stopAsync();
      for (let i = 0; i < FAILED_PER_OUTAGE; i++) {
        const res = await inject(app, { url: path });
        assert.deepEqual(
          { status: res.status, body: res.json() },
          { status: 503, body: { error: 'The database is unavailable', code: 'database_unavailable' } },
        );
      }
      await server().startAsync();
      const deadline = Date.now() + RECOVERY_MS;
      let status = 0;
      while ((status = (await inject(app, { url: path })).status) !== 200 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      assert.equal(status, 200, `the database is reached again after outage ${outage}`);
      assert.equal((await inject(app, { url: path })).status, 200);
    }

    const told = logger.lines.filter((l) => l.includes('records: ')).map((l) => (UNAVAILABLE.test(l) ? 'unavailable' : BACK.test(l) ? 'back' : l));
    assert.deepEqual(told, ['unavailable', 'back', 'unavailable', 'back'], logger.lines.filter((l) => l.includes('records: ')).join('\n'));
    t.diagnostic(logger.lines.find((l) => UNAVAILABLE.test(l))!);
  } finally {
    await app.close();
  }
});
