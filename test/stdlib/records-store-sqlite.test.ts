/**
 * The SQLite store: the conformance suite on `:memory:`, plus what is SQLite's own — the file
 * and its pragmas, sync from two connections, and the gate that keeps other requests' statements
 * out of an open transaction (B's write survives A's rollback; B never reads A's uncommitted rows;
 * a wait is bounded).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteStore, sqliteDialect } from '../../stdlib/records/sqlite.js';
import { DatabaseUnavailableError, InvalidQueryError, LATER, type Query, type Row } from '../../stdlib/records/store.js';
import { tableOf } from '../../stdlib/records/columns.js';
import { selectStatement } from '../../stdlib/records/sql.js';
import { checkQuery } from '../../stdlib/records/query.js';
import { PEOPLE, atOnceFirst, recordsConformance } from './records-conformance.js';

recordsConformance('sqlite', async () => new SqliteStore(':memory:'));

// The same contract in the synchronous form, which serves an app's requests.
recordsConformance('sqlite, at once', async () => atOnceFirst(new SqliteStore(':memory:')));

test('the synchronous form answers at once on a free connection; LATER, with nothing run, while a transaction holds it, for a read that goes to a reader process, and while another connection holds the file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rvm-sqlite-'));
  const store = new SqliteStore(join(dir, 'data.sqlite'), { busyTimeoutMs: 20 });
  try {
    await store.sync([PEOPLE], { allowDestructive: false });
    const now = store.now;
    const row = now.insert('people', { name: 'at once' }) as Row;
    assert.equal(row.name, 'at once');
    assert.deepEqual(now.find('people', row.id as string), row);
    assert.deepEqual(now.select('people', { filter: { id: row.id! }, order: [], limit: 1, offset: 0 }), [row]);

    // Counting every row is no index seek: a reader process's work, which `now` does not start.
    const offloaded = store.offloadedReads;
    assert.equal(now.count('people', {}), LATER);
    assert.equal(store.offloadedReads, offloaded);
    assert.equal(await store.count('people', {}), 1);

    const tx = await store.begin();
    assert.equal(now.find('people', row.id as string), LATER);
    assert.equal(now.insert('people', { name: 'not run' }), LATER);
    // The transaction's own statements run at once on the connection it holds.
    assert.equal((tx.now!.update('people', row.id as string, { name: 'renamed' }) as Row).name, 'renamed');
    await tx.rollback();

    const other = new Database(join(dir, 'data.sqlite'));
    other.exec('BEGIN IMMEDIATE');
    assert.equal(now.insert('people', { name: 'not run either' }), LATER);
    other.exec('ROLLBACK');
    other.close();
    assert.deepEqual(await store.select('people', { filter: {}, order: [], limit: 10, offset: 0 }), [row]);

    // Input errors are thrown by the synchronous form, a rejection of the asynchronous one.
    assert.throws(() => now.find('nowhere', row.id as string), InvalidQueryError);
    await assert.rejects(store.find('nowhere', row.id as string), InvalidQueryError);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the file store creates its directory, runs in WAL with synchronous=NORMAL, and two connections sync once', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rvm-sqlite-'));
  try {
    const path = join(dir, 'app', '.rvm', 'data.sqlite');
    const a = new SqliteStore(path);
    const b = new SqliteStore(path);
    const [pa, pb] = await Promise.all([a.sync([PEOPLE], { allowDestructive: false }), b.sync([PEOPLE], { allowDestructive: false })]);
    assert.deepEqual([pa.applied.length > 0, pb.applied.length > 0].sort(), [false, true]);
    const row = await a.insert('people', { name: 'shared' });
    assert.deepEqual(await b.find('people', row.id as string), row);
    await a.close();
    await b.close();
    assert.ok(existsSync(path));
    const raw = new Database(path);
    assert.equal(raw.pragma('journal_mode', { simple: true }), 'wal');
    assert.deepEqual(raw.prepare('SELECT name, type FROM pragma_table_info(?)').all('people').slice(0, 3), [
      { name: 'id', type: 'TEXT' },
      { name: 'name', type: 'TEXT' },
      { name: 'email', type: 'TEXT' },
    ]);
    raw.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("request B's write during A's open transaction survives A's rollback, and B never reads A's uncommitted rows", async () => {
  const store = new SqliteStore(':memory:');
  try {
    await store.sync([PEOPLE], { allowDestructive: false });
    const a = await store.begin();
    const mine = await a.insert('people', { name: 'A-uncommitted' });
    const bRead = store.count('people', { name: 'A-uncommitted' });
    const bWrite = store.insert('people', { name: 'B' });
    const bFind = store.find('people', mine.id as string);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await a.insert('people', { name: 'A-second' });
    await a.rollback();
    assert.equal(await bRead, 0);
    assert.equal(await bFind, null);
    const b = await bWrite;
    assert.deepEqual(await store.find('people', b.id as string), b);
    assert.equal(await store.count('people', {}), 1);
  } finally {
    await store.close();
  }
});

test('a statement waiting on an open transaction gives up after lockWaitMs with DatabaseUnavailableError', async () => {
  const store = new SqliteStore(':memory:', { lockWaitMs: 50 });
  try {
    await store.sync([PEOPLE], { allowDestructive: false });
    const tx = await store.begin();
    const started = Date.now();
    await assert.rejects(
      async () => store.count('people', {}),
      (e: unknown) => e instanceof DatabaseUnavailableError && e.code === 'database_unavailable',
    );
    assert.ok(Date.now() - started >= 45);
    await tx.commit();
    assert.equal(await store.count('people', {}), 0);
  } finally {
    await store.close();
  }
});

test('a second process holding the write lock past busy_timeout is DatabaseUnavailableError, not a crash', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rvm-sqlite-'));
  try {
    const path = join(dir, 'data.sqlite');
    const store = new SqliteStore(path, { busyTimeoutMs: 20 });
    await store.sync([PEOPLE], { allowDestructive: false });
    const other = new Database(path);
    other.exec('BEGIN IMMEDIATE');
    await assert.rejects(
      async () => store.insert('people', { name: 'x' }),
      (e: unknown) => e instanceof DatabaseUnavailableError,
    );
    other.exec('ROLLBACK');
    other.close();
    assert.equal((await store.insert('people', { name: 'x' })).name, 'x');
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an @index field listed in creation order, and the whole table in creation order, walk an index from the cursor instead of sorting every row', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rvm-sqlite-'));
  try {
    const path = join(dir, 'data.sqlite');
    const store = new SqliteStore(path);
    await store.sync([PEOPLE], { allowDestructive: false });
    await store.close();
    const raw = new Database(path, { readonly: true });
    const table = tableOf(PEOPLE);
    const plan = (query: Query): string[] => {
      const st = selectStatement(sqliteDialect, table, checkQuery(table, query));
      return (raw.prepare(`EXPLAIN QUERY PLAN ${st.sql}`).all(...st.params) as { detail: string }[]).map((r) => r.detail);
    };
    const newest = [{ field: 'created_at', desc: true }];
    for (const [query, index] of [
      [{ filter: { age: 30 }, order: newest, limit: 20, offset: 0 }, 'people_age_idx'],
      [{ filter: {}, order: newest, limit: 20, offset: 0 }, 'people_created_at_idx'],
      [
        { filter: { age: 30 }, order: newest, limit: 20, offset: 0, after: ['2026-11-25T09:05:03.007Z', '01900000-0000-7000-8000-000000000000'] },
        'people_age_idx',
      ],
    ] as const) {
      const steps = plan(query as Query);
      assert.ok(
        steps.some((s) => s.includes(`INDEX ${index}`)),
        `${JSON.stringify(query)} uses ${index}: ${steps.join('; ')}`,
      );
      // Nothing is sorted: the index gives the order, ties included (id follows the last key's direction).
      assert.ok(!steps.some((s) => s.includes('TEMP B-TREE')), `${JSON.stringify(query)} sorts: ${steps.join('; ')}`);
      // After a cursor the index is entered at the cursor, not read from its start.
      if ('after' in query)
        assert.ok(
          steps.some((s) => /created_at<\?/.test(s)),
          `${JSON.stringify(query)} does not seek to the cursor: ${steps.join('; ')}`,
        );
    }
    raw.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
