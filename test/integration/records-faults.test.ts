/**
 * The record stores under faults, at the store level (spec/plugins/records.md, "A database that does not answer": a database that is down answers
 * 503 `database_unavailable` and the server recovers by itself):
 *
 * - a real PostgreSQL stopped while 20 workers keep operations in flight: every failure is a
 *   DatabaseUnavailableError within the connect timeout (no hang, no other error class); started
 *   again, the same store serves again without being recreated; and each kind of operation
 *   (read, write, begin, count) on the stopped server fails so, fast;
 * - another process holding SQLite's write lock: writes fail with DatabaseUnavailableError after
 *   the busy timeout (bounded), reads go on (WAL), and writes succeed once it lets go;
 * - hostile text in every position a request can reach (values, filter keys, operators, order
 *   fields, cursor values, ids, limits, the table name): literal data or InvalidQueryError, and
 *   the database's tables are intact afterwards.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import fc from 'fast-check';
import pg from 'pg';
import Database from 'better-sqlite3';
import { PostgresStore } from '../../stdlib/records/postgres.js';
import { SqliteStore } from '../../stdlib/records/sqlite.js';
import { DatabaseUnavailableError, InvalidQueryError, MAX_LIMIT, type RecordStore, type Row, type TableSpec } from '../../stdlib/records/store.js';
import { useOwnPostgres } from '../support/postgres.js';
import { lockHolder } from '../support/sqlite-lock.js';
import { tempApp } from '../support/temp-app.js';
import { hostileSqlText } from '../support/hostile-sql.js';

/** Operations kept in flight at once: the load the faults come under. */
const CONCURRENCY = 20;
/** The connect timeout the PostgreSQL store runs with here: short, so the test is quick; the bound asserted is this plus slack. */
const CONNECT_TIMEOUT_MS = 1000;
/** What an operation may take beyond its timeout (scheduling on a busy CI machine). */
const SLACK_MS = 1500;
/** How long the stores get to serve again once the database is back. */
const RECOVERY_MS = 10_000;

const NOTES: TableSpec = {
  name: 'notes',
  file: 'app/notes.rvm',
  line: 1,
  col: 1,
  columns: [
    { name: 'title', type: 'text', optional: false, unique: false, index: true },
    { name: 'email', type: 'text', optional: true, unique: true, index: false },
    { name: 'stars', type: 'int', optional: true, unique: false, index: false },
    { name: 'tags', type: 'list', optional: true, unique: false, index: false },
    { name: 'meta', type: 'object', optional: true, unique: false, index: false },
  ],
};

/** One operation of the load: a write, a read by id, a query or a count, in turn. */
async function operation(store: RecordStore, i: number, known: string): Promise<unknown> {
  switch (i % 4) {
    case 0:
      return store.insert('notes', { title: `t${i}`, stars: i % 7 });
    case 1:
      return store.find('notes', known);
    case 2:
      return store.select('notes', { filter: { stars: { gte: 3 } }, order: [{ field: 'title', desc: true }], limit: 20, offset: 0 });
    default:
      return store.count('notes', { title: { starts_with: 't' } });
  }
}

interface Outcome {
  started: number;
  ms: number;
  error: unknown;
}

/** CONCURRENCY workers issuing operations back to back until `stop()`; every outcome is recorded. */
function load(store: RecordStore, known: string, op: (store: RecordStore, i: number, known: string) => Promise<unknown> = operation) {
  const outcomes: Outcome[] = [];
  let running = true;
  let n = 0;
  const workers = Array.from({ length: CONCURRENCY }, async () => {
    while (running) {
      const started = Date.now();
      let error: unknown = null;
      try {
        await op(store, n++, known);
      } catch (e) {
        error = e;
      }
      outcomes.push({ started, ms: Date.now() - started, error });
      // A failing operation answers fast; a breath keeps the failure loop from spinning the CPU.
      if (error) await new Promise((resolve) => setTimeout(resolve, 5));
    }
  });
  return {
    outcomes,
    async stop(): Promise<void> {
      running = false;
      await Promise.all(workers);
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `probe` succeeds, or fails the test after RECOVERY_MS. */
async function eventually(probe: () => Promise<unknown>): Promise<number> {
  const started = Date.now();
  for (;;) {
    try {
      await probe();
      return Date.now() - started;
    } catch (error) {
      if (Date.now() - started > RECOVERY_MS) throw new Error(`not recovered after ${RECOVERY_MS} ms: ${String(error)}`);
      await sleep(50);
    }
  }
}

/** One throwaway server for the file: the stop/start test leaves it running. */
const server = useOwnPostgres();

describe('PostgreSQL stopped and started under load', () => {
  test(`${CONCURRENCY} concurrent operations: every failure is DatabaseUnavailableError within the connect timeout; the same store recovers`, async () => {
    const admin = new pg.Client({ connectionString: server().url });
    await admin.connect();
    await admin.query('CREATE SCHEMA faults');
    await admin.end();
    const store = new PostgresStore({ connectionString: server().url, schema: 'faults', connectTimeoutMs: CONNECT_TIMEOUT_MS });
    try {
      await store.sync([NOTES], { allowDestructive: false });
      const known = (await store.insert('notes', { title: 'known' })).id as string;
      const running = load(store, known);
      await sleep(300);
      const beforeStop = running.outcomes.length;
      server().stop();
      // pg_ctl blocked this process while the server went down: measure only operations begun after it.
      const down = Date.now();
      await sleep(2 * CONNECT_TIMEOUT_MS + 500);
      server().start();
      const up = Date.now();
      const recovered = await eventually(async () => store.find('notes', known));
      await sleep(300);
      await running.stop();

      const failures = running.outcomes.filter((o) => o.error !== null);
      assert.ok(beforeStop >= CONCURRENCY, `the load ran before the stop (${beforeStop} operations)`);
      assert.ok(failures.length >= CONCURRENCY, `operations failed while the server was down (${failures.length})`);
      for (const f of failures) {
        assert.ok(f.error instanceof DatabaseUnavailableError, `only DatabaseUnavailableError, got ${String(f.error)}`);
        assert.equal((f.error as DatabaseUnavailableError).code, 'database_unavailable');
      }
      const whileDown = running.outcomes.filter((o) => o.started >= down && o.started + o.ms <= up);
      assert.ok(whileDown.length > 0 && whileDown.every((o) => o.error !== null), 'nothing succeeds while the server is down');
      const slowest = Math.max(...running.outcomes.filter((o) => o.started >= down).map((o) => o.ms));
      assert.ok(slowest <= CONNECT_TIMEOUT_MS + SLACK_MS, `no operation hung: the slowest took ${slowest} ms`);
      assert.ok(recovered < RECOVERY_MS);
      const lastSecond = running.outcomes.filter((o) => o.started > up + recovered);
      assert.ok(lastSecond.length > 0 && lastSecond.every((o) => o.error === null), 'after recovery every operation succeeds');
      assert.equal((await store.find('notes', known))!.title, 'known');
      const tx = await store.begin();
      await tx.insert('notes', { title: 'after' });
      await tx.commit();
      assert.equal(await store.count('notes', { title: 'after' }), 1);
    } finally {
      await store.close();
    }
  });

  test('each kind of operation on a stopped server is DatabaseUnavailableError within the connect timeout, and the store recovers when it is back', async () => {
    const admin = new pg.Client({ connectionString: server().url });
    await admin.connect();
    await admin.query('CREATE SCHEMA each_kind');
    await admin.end();
    const store = new PostgresStore({ connectionString: server().url, schema: 'each_kind', connectTimeoutMs: CONNECT_TIMEOUT_MS });
    try {
      await store.sync([NOTES], { allowDestructive: false });
      const row = await store.insert('notes', { title: 'before' });
      server().stop();
      try {
        const started = Date.now();
        for (const attempt of [
          () => store.find('notes', row.id as string),
          () => store.insert('notes', { title: 'x' }),
          () => store.begin(),
          () => store.count('notes', {}),
        ]) {
          await assert.rejects(
            async () => attempt(),
            (e: unknown) => e instanceof DatabaseUnavailableError && e.code === 'database_unavailable',
          );
        }
        assert.ok(Date.now() - started < 8000, 'each failure is fast');
      } finally {
        server().start();
      }
      assert.deepEqual(await store.find('notes', row.id as string), row);
      assert.equal(await store.count('notes', {}), 1);
    } finally {
      await store.close();
    }
  });
});

describe('SQLite write lock held by another process under load', () => {
  /** Shortened waits so the test is quick; the defaults (SQLITE_BUSY_TIMEOUT_MS, SQLITE_LOCK_WAIT_MS) behave alike, only slower. */
  const BUSY_MS = 150;
  const LOCK_WAIT_MS = 400;
  /** Longest pause of a 5 ms timer the waiting writes may cause (a loaded CI machine included). */
  const EVENT_LOOP_STALL_MS = 60;

  test(`${CONCURRENCY} concurrent writes: DatabaseUnavailableError after the busy timeout, never a hang, reads go on, writes succeed once the lock is released`, async (t) => {
    const path = join(tempApp(t), 'data.sqlite');
    const store = new SqliteStore(path, { busyTimeoutMs: BUSY_MS, lockWaitMs: LOCK_WAIT_MS });
    try {
      await store.sync([NOTES], { allowDestructive: false });
      const known = (await store.insert('notes', { title: 'known' })).id as string;
      // A count runs on a reader process: one read first, so the measured ones do not wait for the thread to start.
      await store.count('notes', {});
      const holder = await lockHolder(path);
      // The event loop keeps turning while the writes wait for the lock: they wait asynchronously.
      let last = Date.now();
      let longestStall = 0;
      const ticker = setInterval(() => {
        longestStall = Math.max(longestStall, Date.now() - last);
        last = Date.now();
      }, 5);
      let reads: unknown[];
      let readMs: number;
      let writes: PromiseSettledResult<unknown>[];
      // Released however this part ends: a holder left waiting would outlive the run.
      try {
        const waiting = Promise.allSettled(Array.from({ length: CONCURRENCY }, (_, i) => timed(async () => store.insert('notes', { title: `w${i}` }))));
        // While the writes wait for the file, this process's reads go on (WAL), not queued behind them.
        await new Promise((resolve) => setTimeout(resolve, 20));
        const readStarted = Date.now();
        reads = await Promise.all([store.find('notes', known), store.count('notes', {})]);
        readMs = Date.now() - readStarted;
        writes = await waiting;
      } finally {
        clearInterval(ticker);
        await holder.release();
      }
      assert.ok(readMs < BUSY_MS / 2, `reads waited ${readMs} ms behind writes waiting for another process's lock`);
      assert.ok(longestStall < EVENT_LOOP_STALL_MS, `the event loop stalled ${longestStall} ms while writes waited for another process's lock`);

      for (const w of writes) {
        assert.equal(w.status, 'rejected');
        const { error, ms } = (w as PromiseRejectedResult).reason as { error: unknown; ms: number };
        assert.ok(error instanceof DatabaseUnavailableError, `only DatabaseUnavailableError, got ${String(error)}`);
        // Each write retries for the busy timeout, leaving the connection free between attempts.
        assert.ok(ms <= BUSY_MS + SLACK_MS, `a write waited ${ms} ms`);
      }
      const first = Math.min(...writes.map((w) => ((w as PromiseRejectedResult).reason as { ms: number }).ms));
      assert.ok(first >= BUSY_MS && first <= BUSY_MS + SLACK_MS, `the first write gave up at the busy timeout, not before (${first} ms)`);
      assert.equal((reads[0] as Row).title, 'known', 'reads go on under WAL while another process writes');
      assert.equal(reads[1], 1);

      const after = await Promise.all(Array.from({ length: CONCURRENCY }, (_, i) => store.insert('notes', { title: `a${i}` })));
      assert.equal(after.length, CONCURRENCY);
      assert.equal(await store.count('notes', {}), CONCURRENCY + 1);
      const raw = new Database(path, { readonly: true });
      assert.equal((raw.prepare('SELECT count(*) AS n FROM notes').get() as { n: number }).n, CONCURRENCY + 1);
      raw.close();
    } finally {
      await store.close();
    }
  });
});

/** Runs `work`, rejecting with its error and how long it took. */
async function timed(work: () => Promise<unknown>): Promise<unknown> {
  const started = Date.now();
  try {
    return await work();
  } catch (error) {
    throw { error, ms: Date.now() - started };
  }
}

// Injection: pieces of SQL syntax and quoting of both dialects, and of this app's tables, mixed with arbitrary text.
const hostile = hostileSqlText(["'); DROP TABLE notes; --", '"; DROP TABLE canary; --', "' UNION SELECT * FROM canary --", 'notes', 'canary', 'id'], 1);

/** Every position a hostile text can reach through the store API; each must be literal data or InvalidQueryError. */
function attempts(store: RecordStore, text: string, id: string): (() => unknown)[] {
  const q = (over: object) => () => store.select('notes', { filter: {}, order: [], limit: 10, offset: 0, ...over });
  return [
    q({ filter: { [text]: 'x' } }),
    q({ filter: { title: { [text]: 'x' } } }),
    q({ filter: { title: text } }),
    q({ filter: { title: { in: [text, 'x'] } } }),
    q({ filter: { title: { not_in: [text] } } }),
    q({ filter: { title: { contains: text }, email: { starts_with: text } } }),
    q({ filter: { tags: { contains: text } } }),
    q({ filter: { stars: text } }),
    q({ filter: { stars: { gt: text } } }),
    q({ filter: { id: text } }),
    q({ filter: { created_at: { lt: text } } }),
    q({ order: [{ field: text, desc: false }] }),
    q({ order: [{ field: 'title', desc: text }] }),
    q({ order: [{ field: 'title', desc: false }], after: [text, id] }),
    q({ order: [{ field: 'title', desc: false }], after: ['x', text] }),
    q({ limit: text }),
    q({ offset: text }),
    () => store.count(text, {}),
    () => store.count('notes', { [text]: { [text]: text } }),
    () => store.find('notes', text),
    () => store.delete('notes', text),
    () => store.update('notes', text, { title: 'x' }),
    () => store.update('notes', id, { [text]: 'x' }),
    // Writes the text may make legitimately (it names the table, or a declared field): the row is data, then removed.
    async () => store.delete('notes', (await store.insert('notes', { title: 'x', [text]: text })).id as string),
    async () => store.delete('notes', (await store.insert(text, { title: 'x' })).id as string),
  ];
}

/** The property on one store: hostile texts are inert, and afterwards the tables and their rows are as they were. */
async function injectionProperty(store: RecordStore, tableNames: () => Promise<string[]>): Promise<void> {
  await store.sync([NOTES], { allowDestructive: false });
  const seeded: Row[] = [];
  for (const title of ['Ada', 'alan', "o'brien"]) seeded.push(await store.insert('notes', { title, email: `${title}@x`, stars: 3, tags: [title] }));
  const tablesBefore = await tableNames();
  const id = seeded[0]!.id as string;
  await fc.assert(
    fc.asyncProperty(hostile, async (text) => {
      for (const attempt of attempts(store, text, id)) {
        try {
          await attempt();
        } catch (error) {
          assert.ok(error instanceof InvalidQueryError, `only InvalidQueryError, got ${String(error)}`);
          assert.equal(error.code, 'invalid_query');
        }
      }
      // As data: stored and read back byte for byte, matched literally, then gone.
      const row = await store.insert('notes', { title: text, email: null, tags: [text], meta: { [text]: text } });
      assert.deepEqual(await store.find('notes', row.id as string), row);
      const exact = await store.select('notes', { filter: { title: text }, order: [], limit: MAX_LIMIT, offset: 0 });
      assert.deepEqual(
        exact.map((r) => r.id),
        [row.id],
      );
      const updated = await store.update('notes', row.id as string, { title: `${text}${text}` });
      assert.equal(updated!.title, `${text}${text}`);
      assert.equal(await store.delete('notes', row.id as string), true);
    }),
    { numRuns: 40 },
  );
  assert.deepEqual(await tableNames(), tablesBefore);
  const after = await store.select('notes', { filter: {}, order: [], limit: MAX_LIMIT, offset: 0 });
  assert.deepEqual(after, seeded);
}

describe('hostile text in every position is inert', () => {
  test('on SQLite', async (t) => {
    const path = join(tempApp(t), 'data.sqlite');
    const canary = new Database(path);
    canary.exec("CREATE TABLE canary (v TEXT); INSERT INTO canary VALUES ('alive')");
    canary.close();
    const store = new SqliteStore(path);
    try {
      await injectionProperty(store, async () => {
        const raw = new Database(path, { readonly: true });
        try {
          const names = (raw.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").all() as { name: string }[]).map((r) => r.name);
          assert.deepEqual(raw.prepare('SELECT v FROM canary').all(), [{ v: 'alive' }]);
          return names;
        } finally {
          raw.close();
        }
      });
    } finally {
      await store.close();
    }
  });

  test('on PostgreSQL', async () => {
    const admin = new pg.Client({ connectionString: server().url });
    await admin.connect();
    try {
      await admin.query("CREATE SCHEMA hostile; CREATE TABLE hostile.canary (v text); INSERT INTO hostile.canary VALUES ('alive')");
      const store = new PostgresStore({ connectionString: server().url, schema: 'hostile', max: 4 });
      try {
        await injectionProperty(store, async () => {
          const names = (
            await admin.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = 'hostile' ORDER BY table_name")
          ).rows.map((r) => r.table_name);
          assert.deepEqual((await admin.query('SELECT v FROM hostile.canary')).rows, [{ v: 'alive' }]);
          return names;
        });
      } finally {
        await store.close();
      }
    } finally {
      await admin.end();
    }
  });
});
