/**
 * The PostgreSQL store on a real server started for this file (test/support/postgres.ts): the
 * conformance suite (one schema per case), sync from two pools at once under the advisory lock,
 * and a server that goes down (DatabaseUnavailableError, fast) and comes back (recovered
 * without a restart of the store).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { PostgresStore } from '../../stdlib/records/postgres.js';
import { DatabaseUnavailableError } from '../../stdlib/records/store.js';
import { usePostgres } from '../support/postgres.js';
import { PEOPLE, recordsConformance } from './records-conformance.js';

const server = usePostgres();
let schemas = 0;

/** A fresh schema on the test server, and a store working in it. */
async function freshStore(options: { connectTimeoutMs?: number } = {}): Promise<PostgresStore> {
  const schema = `case_${++schemas}`;
  const admin = new pg.Client({ connectionString: server().url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  return new PostgresStore({ connectionString: server().url, schema, max: 4, ...options });
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

test('the server down is DatabaseUnavailableError within the connect timeout, and the store recovers when it is back', async () => {
  const store = await freshStore({ connectTimeoutMs: 1000 });
  try {
    await store.sync([PEOPLE], { allowDestructive: false });
    const row = await store.insert('people', { name: 'before' });
    server().stop();
    try {
      const started = Date.now();
      for (const attempt of [() => store.find('people', row.id as string), () => store.insert('people', { name: 'x' }), () => store.begin(), () => store.count('people', {})]) {
        await assert.rejects(async () => attempt(), (e: unknown) => e instanceof DatabaseUnavailableError && e.code === 'database_unavailable');
      }
      assert.ok(Date.now() - started < 8000, 'each failure is fast');
    } finally {
      server().start();
    }
    assert.deepEqual(await store.find('people', row.id as string), row);
    assert.equal(await store.count('people', {}), 1);
  } finally {
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
