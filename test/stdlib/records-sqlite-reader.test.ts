/**
 * The SQLite store's reader processes (spec/plugins/records.md, "Records under workers"): which reads run on the event loop and
 * which by a reader; the whole conformance suite on a file, where scans and sorts take the
 * readers; a read whose request is abandoned ends at once, its statement stopped, and its reader
 * is replaced; past
 * SQLITE_READERS + SQLITE_READ_QUEUE a read answers 503 `overloaded` with Retry-After.
 * (test/integration/sqlite-stall.test.ts shows the stall and its end over HTTP.)
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HALT, RvmError, type RecordType } from '../../plugins/sdk.js';
import { fakeContext } from '../../plugins/testing.js';
import { recordProvider } from '../../stdlib/records/provider.js';
import { SQLITE_INLINE_MAX_ROWS, SqliteStore } from '../../stdlib/records/sqlite.js';
import { SQLITE_READERS, SQLITE_READ_QUEUE, SQLITE_READ_RETRY_AFTER_S, SqliteReader } from '../../stdlib/records/sqlite-reader.js';
import { STATEMENT_CACHE_SIZE } from '../../stdlib/records/sql.js';
import { ResultMemoryError, StoreOverloadedError, type Query } from '../../stdlib/records/store.js';
import { PEOPLE, recordsConformance } from './records-conformance.js';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A new database file in a folder removed after the tests. */
function tempFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'rvm-reader-'));
  dirs.push(dir);
  return join(dir, 'data.sqlite');
}

recordsConformance('sqlite file (expensive reads on reader processes)', async () => new SqliteStore(tempFile()));

/** A statement that never ends: only killing its reader stops it (terminating a worker thread did not). */
const ENDLESS = 'WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n';

/** A reader on a fresh file (SQLite creates it; the reader opens it read-only). */
async function reader(options: { readers?: number; queue?: number } = {}): Promise<SqliteReader> {
  const path = tempFile();
  await new SqliteStore(path).close();
  return new SqliteReader({ path, busyTimeoutMs: 1000, statementCacheSize: STATEMENT_CACHE_SIZE, ...options });
}

const deadline = () => new RvmError('no answer within 300 ms', 'deadline_exceeded');

describe('sqlite reader processes', () => {
  test(`a read runs on the event loop only when its plan is an index seek reaching at most SQLITE_INLINE_MAX_ROWS (${SQLITE_INLINE_MAX_ROWS}) rows`, async () => {
    const store = new SqliteStore(tempFile());
    try {
      await store.sync([PEOPLE], { allowDestructive: false });
      const ada = await store.insert('people', { name: 'Ada', email: 'ada@example.com', age: 36 });
      const page = (query: Partial<Query>): Query => ({ filter: {}, order: [], limit: 20, offset: 0, ...query });
      const newest = [{ field: 'created_at', desc: true }];
      // Seeks: by id, by a unique field, an indexed filter in index order, up to the limit.
      assert.deepEqual(await store.find('people', ada.id as string), ada);
      assert.deepEqual(await store.select('people', page({ filter: { email: 'ada@example.com' }, limit: 1 })), [ada]);
      assert.deepEqual(await store.select('people', page({ filter: { age: 36 }, order: newest })), [ada]);
      assert.deepEqual(await store.select('people', page({ filter: { age: 36 }, order: newest, limit: 500, offset: SQLITE_INLINE_MAX_ROWS - 500 })), []);
      assert.equal(store.offloadedReads, 0, 'seeks ran on the event loop');
      // One row further is the reader's.
      assert.deepEqual(await store.select('people', page({ filter: { age: 36 }, order: newest, limit: 500, offset: SQLITE_INLINE_MAX_ROWS - 499 })), []);
      assert.equal(store.offloadedReads, 1);
      await store.close();
      for (const [what, read] of [
        ['a scan of a contains filter', (s: SqliteStore) => s.select('people', page({ filter: { name: { contains: 'd' } } }))],
        ['a sort of every row', (s: SqliteStore) => s.select('people', page({ order: [{ field: 'name', desc: false }] }))],
        [
          'an indexed filter sorted on another field',
          (s: SqliteStore) => s.select('people', page({ filter: { age: 36 }, order: [{ field: 'name', desc: false }] })),
        ],
        ['a count', (s: SqliteStore) => s.count('people', { age: 36 })],
      ] as const) {
        const other = new SqliteStore(tempFile());
        await other.sync([PEOPLE], { allowDestructive: false });
        await other.insert('people', { name: 'Ada', age: 36 });
        const answer = await read(other);
        assert.equal(Array.isArray(answer) ? answer.length : answer, 1, what);
        assert.equal(other.offloadedReads, 1, `${what} ran on a reader process`);
        await other.close();
      }
    } finally {
      await store.close().catch(() => undefined);
    }
  });

  test('reads inside a transaction see its own writes: they stay on its connection', async () => {
    const store = new SqliteStore(tempFile());
    try {
      await store.sync([PEOPLE], { allowDestructive: false });
      const tx = await store.begin();
      await tx.insert('people', { name: 'mine' });
      assert.equal(await tx.count('people', { name: { contains: 'in' } }), 1);
      assert.equal(store.offloadedReads, 0);
      // Another request's read sees only what is committed, without waiting for the transaction.
      assert.equal(await store.count('people', { name: { contains: 'in' } }), 0);
      assert.equal(store.offloadedReads, 1);
      await tx.commit();
      assert.equal(await store.count('people', { name: { contains: 'in' } }), 1);
    } finally {
      await store.close();
    }
  });

  test("a listing on a reader whose rows pass the charge's `most` is refused by the reader: no row reaches the server to be charged", async () => {
    const store = new SqliteStore(tempFile());
    try {
      await store.sync([PEOPLE], { allowDestructive: false });
      for (let i = 0; i < 50; i++) await store.insert('people', { name: `person ${i}`.padEnd(1000, '.') });
      const charged: number[] = [];
      const charge = (most: number) => Object.assign((bytes: number) => charged.push(bytes) > 0, { most });
      // A sort of every row: the reader's. 50 names of 1,000 characters are charged over 100,000 bytes.
      const sorted = (most: number): Query => ({ filter: {}, order: [{ field: 'name', desc: false }], limit: 100, offset: 0, charge: charge(most) });
      await assert.rejects(Promise.resolve(store.select('people', sorted(50_000))), ResultMemoryError);
      assert.equal(store.offloadedReads, 1);
      assert.deepEqual(charged, [], 'the refused rows never reached the server');
      assert.equal(((await store.select('people', sorted(10_000_000))) as unknown[]).length, 50);
      assert.equal(charged.length, 50, 'rows within `most` are charged as they arrive');
    } finally {
      await store.close();
    }
  });

  test('a read whose request is abandoned rejects at once with the reason; its reader is killed (the statement with it) and replaced', async () => {
    const r = await reader({ readers: 1 });
    try {
      const request = new AbortController();
      const endless = r.read(ENDLESS, [], true, { signal: request.signal });
      await new Promise((resolve) => setTimeout(resolve, 100));
      const reason = deadline();
      request.abort(reason);
      await assert.rejects(endless, (e: unknown) => e === reason);
      // The killed reader counts until it has exited (killing stops its statement), then a new one serves.
      assert.deepEqual(await r.read('SELECT 1 + 1', [], true), [2]);
      assert.equal(r.readerCount, 1);
      // An abandoned request's read that has not started is refused without a reader.
      const gone = new AbortController();
      gone.abort(deadline());
      await assert.rejects(r.read('SELECT 1', [], true, { signal: gone.signal }), (e: unknown) => e instanceof RvmError && e.code === 'deadline_exceeded');
    } finally {
      await r.close();
    }
  });

  test(`past SQLITE_READERS (${SQLITE_READERS}) running and SQLITE_READ_QUEUE (${SQLITE_READ_QUEUE}) waiting, a read is refused 503 overloaded; a waiting read leaves the queue with its request`, async () => {
    const r = await reader();
    const requests = Array.from({ length: SQLITE_READERS + SQLITE_READ_QUEUE }, () => new AbortController());
    try {
      const held = requests.map((request) => r.read(ENDLESS, [], true, { signal: request.signal }).catch((e: unknown) => e));
      await assert.rejects(
        r.read('SELECT 1', [], true),
        (e: unknown) => e instanceof StoreOverloadedError && e.code === 'overloaded' && e.retryAfterS === SQLITE_READ_RETRY_AFTER_S,
      );
      assert.equal(r.readerCount, SQLITE_READERS);
      // One waiting read abandoned frees its place in the queue.
      requests.at(-1)!.abort(deadline());
      const waiting = r.read('SELECT 2', [], true);
      await assert.rejects(r.read('SELECT 3', [], true), StoreOverloadedError);
      for (const request of requests) request.abort(deadline());
      assert.deepEqual(await waiting, [2]);
      for (const outcome of await Promise.all(held)) assert.ok(outcome instanceof RvmError && outcome.code === 'deadline_exceeded');
      assert.ok(r.readerCount <= SQLITE_READERS);
    } finally {
      await r.close();
    }
  });

  test('a reader that cannot open the file fails its read and is not started again and again', async () => {
    const r = new SqliteReader({
      path: join(tmpdir(), 'rvm-reader-no-such-folder', 'data.sqlite'),
      busyTimeoutMs: 100,
      statementCacheSize: STATEMENT_CACHE_SIZE,
    });
    try {
      await assert.rejects(r.read('SELECT 1', [], true), /unable to open|SQLITE_CANTOPEN|directory does not exist/i);
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(r.readerCount, 0);
    } finally {
      await r.close();
    }
  });

  test('the records provider answers an overloaded read 503 overloaded with Retry-After', async () => {
    const NOTE: RecordType = {
      name: 'Note',
      fields: [{ name: 'title', type: 'text', optional: false, required: true, decorators: [], doc: null }],
      doc: null,
      file: 'notes.rvm',
      line: 1,
      col: 1,
      validate: (input) => ({ value: { title: input.title }, errors: null }),
    };
    const store = new SqliteStore(tempFile(), { readers: 1, readQueue: 0 });
    try {
      const provider = recordProvider(store);
      provider.declare!([NOTE]);
      const where = provider.methods.where!.fn;
      const first = fakeContext();
      const running = where(first, NOTE, { title: { contains: 'a' } });
      const second = fakeContext();
      assert.equal(await where(second, NOTE, { title: { contains: 'a' } }), HALT);
      assert.deepEqual(second.failures[0], {
        status: 503,
        message: 'The server is busy; try again shortly',
        code: 'overloaded',
        headers: { 'retry-after': String(SQLITE_READ_RETRY_AFTER_S) },
      });
      assert.deepEqual(await running, []);
    } finally {
      await store.close();
    }
  });
});
