/**
 * A hung PostgreSQL (spec/plugins/records.md, "A database that does not answer"): every process of the cluster stopped with SIGSTOP, so
 * connections stay open and nothing answers — the server cannot enforce its own statement
 * timeout. Requests answer 503 `database_unavailable` within the client-side query timeout
 * (the statement timeout + PG_QUERY_TIMEOUT_MARGIN_MS) or the connect timeout, never after the
 * request's 30 s; a connection that timed out is discarded, not reused (also a transaction's);
 * and once the cluster resumes (SIGCONT, always, in a finally) the app serves again by itself.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { loadApp } from '../../tools/host.js';
import { inject, type InjectResponse } from '../../vm/runtime/http/inject.js';
import { captureLogger } from '../../vm/runtime/log.js';
import { PG_QUERY_TIMEOUT_MARGIN_MS, PostgresStore } from '../../stdlib/records/postgres.js';
import { DatabaseUnavailableError, type TableSpec } from '../../stdlib/records/store.js';
import { useOwnPostgres } from '../support/postgres.js';
import { childPids } from '../support/rvm-cluster.js';

const server = useOwnPostgres();

/** What an answer may take beyond the timeout it rests on (scheduling on a busy CI machine). */
const SLACK_MS = 1500;
/**
 * The app's timeouts (rvm.config.json `database`), shorter than the defaults so the test is quick
 * (PG_CONNECT_TIMEOUT_MS, PG_STATEMENT_TIMEOUT_MS work alike, only slower; records-wiring checks
 * they are the ones taken). As with the defaults, the connect timeout plus SLACK_MS stays below
 * the query timeout, so a request queued behind an unanswered query is told from one that opened
 * a new connection.
 */
const CONNECT_TIMEOUT_MS = 500;
const STATEMENT_TIMEOUT_MS = 3000;
/** The client-side bound of a statement the server never answers. */
const QUERY_TIMEOUT_MS = STATEMENT_TIMEOUT_MS + PG_QUERY_TIMEOUT_MARGIN_MS;
/** How long the app gets to serve again once the cluster resumes. */
const RECOVERY_MS = 15_000;

/** Runs `work` with every process of the cluster stopped (postmaster and its children); resumes them whatever happens. */
async function whileHung<T>(work: () => Promise<T>): Promise<T> {
  const postmaster = server().pid();
  assert.ok(postmaster !== null, 'the server runs');
  const pids = [postmaster, ...childPids(postmaster)];
  assert.ok(pids.length > 1, 'the postmaster has children (backends, checkpointer, …)');
  try {
    for (const pid of pids) process.kill(pid, 'SIGSTOP');
    return await work();
  } finally {
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // Gone meanwhile: nothing to resume.
      }
    }
  }
}

/** `promise`'s value and how long it took, or 'hung' when it takes longer than `boundMs` (a hang is an outcome, not a stuck test). */
async function timed<T>(promise: Promise<T>, boundMs: number): Promise<{ value: T | 'hung'; ms: number }> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<'hung'>((resolve) => (timer = setTimeout(() => resolve('hung'), boundMs)));
  try {
    const value = await Promise.race([promise, hung]);
    return { value, ms: performance.now() - started };
  } finally {
    clearTimeout(timer);
  }
}

function assertUnavailable(answer: { value: InjectResponse | 'hung'; ms: number }, boundMs: number, what: string): void {
  assert.notEqual(answer.value, 'hung', `${what}: no answer within ${boundMs} ms`);
  const res = answer.value as InjectResponse;
  assert.equal(res.status, 503, `${what}: ${res.body}`);
  assert.equal(res.json().code, 'database_unavailable', `${what}: ${res.body}`);
  assert.ok(answer.ms <= boundMs, `${what} took ${answer.ms.toFixed(0)} ms (bound ${boundMs})`);
}

const APP = `type Note {
  title: text
}

route POST /notes {
  validate {
    title: text
  }
  response.created(Note.create(body))
}
route GET /notes/:id {
  response.ok(Note.find(params.id))
}
route POST /notes/:id/touch {
  transaction {
    n = Note.find(params.id)
    n.title = n.title + '!'
    save n
  }
  response.ok(true)
}
`;

test('the cluster stopped: reads and transactions answer 503 database_unavailable within the query or connect timeout, not after 30 s; resumed, the app serves again', async (t) => {
  const admin = new pg.Client({ connectionString: server().url });
  await admin.connect();
  await admin.query('CREATE DATABASE hung_app');
  await admin.end();
  const url = new URL(server().url);
  url.pathname = '/hung_app';
  const dir = mkdtempSync(join(tmpdir(), 'rvm-records-hung-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'app.rvm'), APP);
  writeFileSync(join(dir, 'rvm.config.json'), JSON.stringify({ database: { connectTimeoutMs: CONNECT_TIMEOUT_MS, statementTimeoutMs: STATEMENT_TIMEOUT_MS } }));
  const app = await loadApp(dir, { cache: false, logger: captureLogger(), settings: { env: { DATABASE_URL: url.toString() } } });
  try {
    const created = await inject(app, { method: 'POST', url: '/notes', body: { title: 'n' } });
    assert.equal(created.status, 201, created.body);
    const id = created.json().id as string;

    await whileHung(async () => {
      // One takes the pool's idle connection (no answer: the query timeout), the other opens a new one (no answer: the connect timeout).
      const bound = Math.max(QUERY_TIMEOUT_MS, CONNECT_TIMEOUT_MS) + SLACK_MS;
      const [read, transaction] = await Promise.all([
        timed(inject(app, { url: `/notes/${id}` }), bound + SLACK_MS),
        timed(inject(app, { method: 'POST', url: `/notes/${id}/touch` }), bound + SLACK_MS),
      ]);
      assertUnavailable(read, bound, 'a read');
      assertUnavailable(transaction, bound, 'a transaction');
      // The connection that timed out was discarded: the next request opens a new one (the connect timeout), instead of queueing behind the unanswered query.
      const next = await timed(inject(app, { url: `/notes/${id}` }), QUERY_TIMEOUT_MS + SLACK_MS);
      assertUnavailable(next, CONNECT_TIMEOUT_MS + SLACK_MS, 'the request after');
    });

    const resumed = performance.now();
    for (;;) {
      const res = await inject(app, { method: 'POST', url: `/notes/${id}/touch` });
      if (res.status === 200) break;
      assert.equal(res.json().code, 'database_unavailable', res.body);
      assert.ok(performance.now() - resumed < RECOVERY_MS, `not serving ${RECOVERY_MS} ms after the cluster resumed`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal((await inject(app, { url: `/notes/${id}` })).json().title, 'n!');
  } finally {
    await app.close();
  }
});

test("a transaction whose connection hangs fails within the store's query timeout, and its rollback does not wait for the server", async () => {
  const admin = new pg.Client({ connectionString: server().url });
  await admin.connect();
  await admin.query('CREATE SCHEMA hung_tx');
  await admin.end();
  const statementTimeoutMs = 300;
  const store = new PostgresStore({ connectionString: server().url, schema: 'hung_tx', statementTimeoutMs, connectTimeoutMs: 500, max: 2 });
  const NOTES: TableSpec = {
    name: 'notes',
    file: 'app/notes.rvm',
    line: 1,
    col: 1,
    columns: [{ name: 'title', type: 'text', optional: false, unique: false, index: false }],
  };
  try {
    await store.sync([NOTES], { allowDestructive: false });
    const id = (await store.insert('notes', { title: 'n' })).id as string;
    const tx = await store.begin();
    await whileHung(async () => {
      const bound = statementTimeoutMs + PG_QUERY_TIMEOUT_MARGIN_MS + SLACK_MS;
      const found = await timed(
        Promise.resolve(tx.find('notes', id)).then(
          () => 'answered',
          (error: unknown) => error,
        ),
        bound,
      );
      assert.ok(found.value instanceof DatabaseUnavailableError, `the read failed as unavailable within ${bound} ms, got ${String(found.value)}`);
      // Its client is discarded without a ROLLBACK the hung server would not answer either.
      const rolledBack = await timed(
        tx.rollback().then(() => 'done'),
        statementTimeoutMs,
      );
      assert.equal(rolledBack.value, 'done', `the rollback took ${rolledBack.ms.toFixed(0)} ms`);
    });
    // Resumed: the store serves again, on fresh connections.
    const after = await store.begin();
    await after.update('notes', id, { title: 'after' });
    await after.commit();
    assert.equal((await store.find('notes', id))!.title, 'after');
  } finally {
    await store.close();
  }
});
