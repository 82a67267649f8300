/**
 * The PostgreSQL store on a database of this file's own (test/support/postgres.ts): the
 * conformance suite (one schema per case) and sync from two pools at once under the advisory
 * lock. A server that goes down and comes back is records-faults' (it stops its own server).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { PostgresStore, postgresDialect, timestamptzIso } from '../../stdlib/records/postgres.js';
import { tableOf } from '../../stdlib/records/columns.js';
import { selectStatement } from '../../stdlib/records/sql.js';
import { checkQuery } from '../../stdlib/records/query.js';
import { usePostgres } from '../support/postgres.js';
import { PEOPLE, recordsConformance } from './records-conformance.js';

const server = usePostgres();
let schemas = 0;

/** A fresh schema on the test server, and a store working in it. */
async function freshStore(): Promise<PostgresStore> {
  const schema = `case_${++schemas}`;
  const admin = new pg.Client({ connectionString: server().url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  return new PostgresStore({ connectionString: server().url, schema, max: 4 });
}

recordsConformance('postgres', () => freshStore());

test('two pools syncing at once sync once (pg_advisory_xact_lock)', async () => {
  const a = await freshStore();
  const schema = `case_${schemas}`;
  const b = new PostgresStore({ connectionString: server().url, schema });
  try {
    const plans = await Promise.all([a.sync([PEOPLE], { allowDestructive: false }), b.sync([PEOPLE], { allowDestructive: false })]);
    assert.deepEqual(plans.map((p) => p.applied.length > 0).sort(), [false, true]);
    const row = await a.insert('people', { name: 'x', tags: ['a'], meta: { k: 1 } });
    assert.deepEqual(await b.find('people', row.id as string), row);
  } finally {
    await a.close();
    await b.close();
  }
});

test('a newest-first listing of an indexed field walks its index backwards: no sort of the matching rows', async () => {
  const store = await freshStore();
  const schema = `case_${schemas}`;
  const client = new pg.Client({ connectionString: server().url, options: `-c search_path=${schema}` });
  await client.connect();
  try {
    await store.sync([PEOPLE], { allowDestructive: false });
    const tx = await store.begin();
    for (let i = 0; i < 200; i++) await tx.insert('people', { name: `p${i}`, age: i % 2 === 0 ? 30 : 40 });
    await tx.commit();
    await client.query('ANALYZE');
    // Any plan that can skip the sort now wins; one that cannot still sorts.
    await client.query('SET enable_sort = off');
    const plan = async (desc: boolean): Promise<string> => {
      const table = tableOf(PEOPLE);
      const st = selectStatement(
        postgresDialect,
        table,
        checkQuery(table, { filter: { age: 30 }, order: [{ field: 'created_at', desc }], limit: 20, offset: 0 }),
      );
      const rows = (await client.query({ text: `EXPLAIN ${st.sql}`, values: st.params })).rows as { 'QUERY PLAN': string }[];
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    };
    for (const desc of [true, false]) {
      const text = await plan(desc);
      assert.doesNotMatch(text, /Sort/, text);
      assert.match(text, desc ? /Index Scan Backward using people_/ : /Index Scan using people_/, text);
    }
  } finally {
    await client.end();
    await store.close();
  }
});

test('a COMMIT after a failed statement does not claim success', async () => {
  const store = await freshStore();
  try {
    await store.sync([PEOPLE], { allowDestructive: false });
    await store.insert('people', { name: 'a', email: 'a@x' });
    const tx = await store.begin();
    const kept = await tx.insert('people', { name: 'b' });
    await assert.rejects(async () => tx.insert('people', { name: 'c', email: 'a@x' }));
    await assert.rejects(async () => tx.commit(), /rolled back/);
    assert.equal(await store.find('people', kept.id as string), null);
  } finally {
    await store.close();
  }
});

/** pg's own parser of timestamptz text, which timestamptzIso falls back to. */
const pgParse = pg.types.getTypeParser(1184, 'text') as (value: string) => unknown;

test('timestamptz text in UTC is rewritten as pg parses it; finer digits are cut; other text goes to the parser', () => {
  for (let ms = 0; ms < 1000; ms++) {
    const fraction = String(ms).padStart(3, '0').replace(/0+$/, '');
    const text = `2026-11-25 09:05:03${fraction ? `.${fraction}` : ''}+00`;
    assert.equal(
      timestamptzIso(text, () => assert.fail(`${text} went to the parser`)),
      (pgParse(text) as Date).toISOString(),
    );
  }
  assert.equal(timestamptzIso('0099-01-01 00:00:00+00', pgParse), '0099-01-01T00:00:00.000Z');
  assert.equal(timestamptzIso('2026-11-25 09:05:03.1239+00', pgParse), '2026-11-25T09:05:03.123Z');
  assert.equal(timestamptzIso('2026-11-25 09:05:03.999999+00', pgParse), '2026-11-25T09:05:03.999Z');
  const parsed: string[] = [];
  const spy = (text: string) => {
    parsed.push(text);
    return pgParse(text);
  };
  assert.equal(timestamptzIso('2026-11-25 14:35:03.007+05:30', spy), '2026-11-25T09:05:03.007Z');
  assert.equal(timestamptzIso('2026-11-25 10:05:03+01', spy), '2026-11-25T09:05:03.000Z');
  assert.equal(timestamptzIso('0044-03-15 12:00:00+00 BC', spy), (pgParse('0044-03-15 12:00:00+00 BC') as Date).toISOString());
  assert.deepEqual(parsed, ['2026-11-25 14:35:03.007+05:30', '2026-11-25 10:05:03+01', '0044-03-15 12:00:00+00 BC']);
});

test('datetimes read back as the instants written, whatever the session time zone', async () => {
  const admin = new pg.Client({ connectionString: server().url });
  await admin.connect();
  try {
    for (const [suffix, zone] of [
      ['tz_utc', 'UTC'],
      ['tz_kolkata', 'Asia/Kolkata'],
      ['tz_ny', 'America/New_York'],
    ] as const) {
      const url = await server().createDatabase(suffix);
      await admin.query(`ALTER DATABASE ${new URL(url).pathname.slice(1)} SET timezone TO '${zone}'`);
      const store = new PostgresStore({ connectionString: url, max: 2 });
      try {
        await store.sync([PEOPLE], { allowDestructive: false });
        const seen = '2026-03-08T07:30:00.007Z';
        const row = await store.insert('people', { name: 'x', seen });
        assert.equal(row.seen, seen, zone);
        const found = (await store.find('people', row.id as string))!;
        assert.equal(found.seen, seen, zone);
        assert.match(found.created_at as string, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, zone);
        assert.equal(found.created_at, row.created_at, zone);
        assert.deepEqual(
          (await store.select('people', { filter: { seen: { gte: '2026-03-08T07:30:00.007Z' } }, order: [], limit: 10, offset: 0 })).map((r) => r.id),
          [row.id],
          zone,
        );
      } finally {
        await store.close();
      }
    }
  } finally {
    await admin.end();
  }
});
