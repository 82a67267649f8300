/**
 * Issue 24, item 3 over real HTTP, on SQLite and on a real PostgreSQL: the rows a listing reads
 * are charged to the process-wide result budget (`limits.maxResultMemory`) as they arrive and
 * given back when the request ends, however it ends; a listing past the budget answers 503
 * `overloaded` while the others succeed and the server goes on serving. A response body over
 * `limits.maxResponseBytes` answers 500 `response_too_large`. And (item 9) `page` with
 * `limit: 1000` works on both databases.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { definePlugin, type Limits, type PluginDefinition } from '../../plugins/sdk.js';
import type { App } from '../../vm/runtime/app.js';
import { loadApp } from '../../tools/host.js';
import { captureLogger, type CaptureLogger } from '../../vm/runtime/log.js';
import { CHARGED_RESPONSE_BYTES, startServer, type RunningServer } from '../../vm/runtime/http/server.js';
import { connect } from 'node:net';
import { MAX_LIMIT } from '../../stdlib/records/store.js';
import { usePostgres } from '../support/postgres.js';

/** Resolvers of the requests waiting in `wait()`, released by the test. */
const waiting: (() => void)[] = [];

const WAITS: PluginDefinition = definePlugin({
  name: 'test-waits',
  version: '1.0.0',
  setup(rvm) {
    rvm.native('wait', () => new Promise((resolve) => waiting.push(() => resolve(true))), { params: [], doc: 'Waits until the test releases it.' });
    rvm.native('big_text', (_ctx, n) => 'b'.repeat(n as number), { params: [{ name: 'n', type: 'int' }], doc: 'A text of n characters.' });
  },
});

/** Rows seeded, and the characters of each: one listing of them is charged about 2 × 20 × 10,000 bytes. */
const ROWS = 20;
const ROW_CHARS = 10_000;
/** Holds two listings of the seeded rows (each charged ~400 KB), not three. */
const RESULT_BUDGET = 1_000_000;
/** How long closing a server waits for the answers still being sent when the file ends. */
const CLOSE_GRACE_MS = 200;

const APP = `
type Doc { body: text }
type Tiny { n: int }

route GET /hello { response.ok({ hello: true }) }
route POST /seed {
  validate { body: text, n: int }
  i = 0
  while i < body.n {
    Doc.create({ body: body.body })
    i = i + 1
  }
  response.created({ seeded: body.n })
}
route GET /hold {
  docs = Doc.where({}, { limit: 1000 })
  wait()
  response.ok({ n: len(docs) })
}
route GET /docs { response.ok(Doc.where({}, { limit: 1000 })) }
route GET /docs-then-fail {
  docs = Doc.where({}, { limit: 1000 })
  fail 409 'after reading'
}
route GET /hold-in-transaction {
  n = 0
  transaction {
    n = len(Doc.where({}, { limit: 1000 }))
  }
  response.ok({ n: n })
}
route POST /tiny {
  validate { n: int }
  // One transaction: a thousand inserts, one commit (on SQLite one write of the file, not a thousand).
  transaction {
    i = 0
    while i < body.n {
      Tiny.create({ n: i })
      i = i + 1
    }
  }
  response.created({ seeded: body.n })
}
route GET /tiny-pages {
  p = Tiny.page({}, { limit: 1000 })
  q = Tiny.page({}, { limit: 1000, after: p.next })
  response.ok({ first: len(p.items), more: p.next != null, second: len(q.items), last: q.next == null })
}
route GET /big { response.text(big_text(8000000)) }
route POST /say {
  validate { s: text }
  response.text(body.s)
}
`;

interface Served {
  app: App;
  server: RunningServer;
  log: CaptureLogger;
  base: string;
  dir: string;
}
const started: Served[] = [];

async function serve(limits: Partial<Limits>, env: Record<string, string> = {}): Promise<Served> {
  const dir = mkdtempSync(join(tmpdir(), 'rvm-result-memory-'));
  writeFileSync(join(dir, 'app.rvm'), APP);
  const log = captureLogger();
  const app = await loadApp(dir, { cache: false, logger: log, plugins: [WAITS], settings: { limits, env } });
  // Answers a test left unread (big listings, the stalled reader) would hold close() for its whole grace.
  const server = await startServer(app, { port: 0, host: '127.0.0.1', shutdownGraceMs: CLOSE_GRACE_MS });
  const served = { app, server, log, base: server.url, dir };
  started.push(served);
  return served;
}

after(async () => {
  for (const release of waiting.splice(0)) release();
  for (const s of started) {
    await s.server.close();
    await s.app.close();
    rmSync(s.dir, { recursive: true, force: true });
  }
});

const post = (base: string, path: string, body: unknown) =>
  fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

async function until(done: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 5));
  }
}

const server = usePostgres();
let databases = 0;

/** A new empty database on the test server; its URL. */
async function freshDatabase(): Promise<string> {
  return server().createDatabase(`results_${++databases}`);
}

const DATABASES: { name: string; env: () => Promise<Record<string, string>> }[] = [
  { name: 'SQLite', env: async () => ({}) },
  { name: 'PostgreSQL', env: async () => ({ DATABASE_URL: await freshDatabase() }) },
];

for (const db of DATABASES) {
  describe(`result memory on ${db.name}`, () => {
    test('listings held past limits.maxResultMemory answer 503 overloaded with Retry-After while the held ones succeed; every charge is given back', async () => {
      const { app, base } = await serve({ maxResultMemory: RESULT_BUDGET }, await db.env());
      assert.equal((await post(base, '/seed', { body: 'x'.repeat(ROW_CHARS), n: ROWS })).status, 201);

      const first = fetch(`${base}/hold`);
      await until(() => waiting.length === 1);
      const one = app.admission.resultMemory;
      assert.ok(one > ROWS * ROW_CHARS && one * 2 <= RESULT_BUDGET && one * 3 > RESULT_BUDGET, `one listing is charged ${one} bytes`);
      const second = fetch(`${base}/hold`);
      await until(() => waiting.length === 2);
      assert.equal(app.admission.resultMemory, 2 * one);

      const third = await fetch(`${base}/hold`);
      assert.equal(third.status, 503);
      assert.equal(third.headers.get('retry-after'), '1');
      assert.equal(((await third.json()) as { code: string }).code, 'overloaded');
      assert.equal(app.admission.resultMemory, 2 * one, 'the refused listing gave back what it had charged');
      assert.equal((await fetch(`${base}/hello`)).status, 200);

      for (const release of waiting.splice(0)) release();
      for (const held of [await first, await second]) {
        assert.equal(held.status, 200);
        assert.deepEqual(await held.json(), { n: ROWS });
      }
      assert.equal(app.admission.resultMemory, 0);

      // Given back however the request ends: a fail after the read, a read inside a transaction.
      assert.equal((await fetch(`${base}/docs-then-fail`)).status, 409);
      const inTransaction = await fetch(`${base}/hold-in-transaction`);
      assert.equal(inTransaction.status, 200);
      assert.deepEqual(await inTransaction.json(), { n: ROWS });
      assert.equal(app.admission.resultMemory, 0);
    });

    test('a burst of concurrent listings: each answers 200 with every row or 503 overloaded, never anything else; the server serves afterwards and holds no charge', async () => {
      const { app, base } = await serve({ maxResultMemory: RESULT_BUDGET }, await db.env());
      assert.equal((await post(base, '/seed', { body: 'y'.repeat(ROW_CHARS), n: ROWS })).status, 201);
      const answers = await Promise.all(Array.from({ length: 12 }, () => fetch(`${base}/docs`)));
      for (const res of answers) {
        if (res.status === 200) assert.equal(((await res.json()) as unknown[]).length, ROWS);
        else {
          assert.equal(res.status, 503);
          assert.equal(((await res.json()) as { code: string }).code, 'overloaded');
        }
      }
      assert.ok(answers.some((res) => res.status === 200));
      assert.equal((await fetch(`${base}/docs`)).status, 200);
      await until(() => app.admission.resultMemory === 0);
    });

    test(`page with limit ${MAX_LIMIT} answers ${MAX_LIMIT} items and a cursor to the rest`, async () => {
      const { base } = await serve({}, await db.env());
      assert.equal((await post(base, '/tiny', { n: MAX_LIMIT + 5 })).status, 201);
      const res = await fetch(`${base}/tiny-pages`);
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { first: MAX_LIMIT, more: true, second: 5, last: true });
    });
  });
}

describe('a large answer waiting to be sent', () => {
  test(`one of CHARGED_RESPONSE_BYTES or more is charged to limits.maxResultMemory until it is sent: one more that would pass it answers 503 overloaded, and a reader that goes away gives its charge back`, async () => {
    const bytes = 8_000_000;
    assert.ok(bytes >= CHARGED_RESPONSE_BYTES);
    const { app, base, server: running } = await serve({ maxResultMemory: bytes + bytes / 2 });
    // A client that asks and never reads: the answer stays in the process (more than loopback buffers take).
    const stalled = connect({ port: running.port, host: '127.0.0.1' });
    stalled.write('GET /big HTTP/1.1\r\nHost: x\r\n\r\n');
    stalled.pause();
    await until(() => app.admission.resultMemory === bytes);
    const refused = await fetch(`${base}/big`);
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get('retry-after'), '1');
    assert.equal(((await refused.json()) as { code: string }).code, 'overloaded');
    assert.equal((await fetch(`${base}/hello`)).status, 200);
    stalled.destroy();
    await until(() => app.admission.resultMemory === 0);
    const served = await fetch(`${base}/big`);
    assert.equal(served.status, 200);
    assert.equal((await served.text()).length, bytes);
    await until(() => app.admission.resultMemory === 0);
  });
});

describe('limits.maxResponseBytes', () => {
  test('a body of exactly the limit is answered; a byte more is 500 response_too_large, logged, and the server serves on', async () => {
    const limit = 100_000;
    const { base, log } = await serve({ maxResponseBytes: limit });
    const at = await post(base, '/say', { s: 'z'.repeat(limit) });
    assert.equal(at.status, 200);
    assert.equal((await at.text()).length, limit);
    const over = await post(base, '/say', { s: 'z'.repeat(limit + 1) });
    assert.equal(over.status, 500);
    assert.deepEqual(await over.json(), { error: 'The response is too large', code: 'response_too_large' });
    assert.ok(
      log.errors.some((line) => line.includes(`a response body of ${limit + 1} bytes is over limits.maxResponseBytes (${limit})`)),
      log.errors.join('\n'),
    );
    assert.equal((await fetch(`${base}/hello`)).status, 200);
  });
});
