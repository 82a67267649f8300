/**
 * PostgreSQL under `rvm run --workers N` (spec/plugins/records.md, "Records under workers"): `database.pool` is what the machine opens in
 * all, each worker a share of it. Counted on a real server's pg_stat_activity while the workers
 * are loaded past their pools.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { poolPerWorker } from '../../stdlib/records/database.js';
import { send } from '../support/http-client.js';
import { usePostgres } from '../support/postgres.js';
import { startRvm } from './rvm-run.js';

const WORKERS = 2;
/** `database.pool`: the connections the machine may open; 3 per worker. */
const POOL = 6;
/** Requests in flight at once: many more than the pool, so every worker's pool is full most of the time. */
const CONNECTIONS = 64;
/** Requests in the load (creates and counts, half each). */
const REQUESTS = 1500;
/** How often pg_stat_activity is sampled during the load. */
const SAMPLE_EVERY_MS = 5;

const APP = `
type Note {
  title: text
}

route POST /notes {
  validate {
    title: text
  }
  response.created(Note.create(body))
}

route GET /notes/count {
  response.ok({ count: Note.count() })
}
`;

const server = usePostgres();

test(`--workers ${WORKERS} with database.pool ${POOL}: never more than ${POOL} connections to the app's database under load, from both workers`, {
  timeout: 120_000,
}, async () => {
  const admin = new pg.Client({ connectionString: server().url });
  await admin.connect();
  const dir = mkdtempSync(join(tmpdir(), 'rvm-workers-pg-'));
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  let running: Awaited<ReturnType<typeof startRvm>> | null = null;
  try {
    // The app's database is another than the one this admin connection counts from.
    const url = new URL(await server().createDatabase('app'));
    const database = url.pathname.slice(1);
    writeFileSync(join(dir, 'app.rvm'), APP);
    writeFileSync(join(dir, 'rvm.config.json'), JSON.stringify({ database: { pool: POOL } }));
    running = await startRvm(dir, { ...process.env, DATABASE_URL: url.href }, 0, ['--workers', String(WORKERS)]);
    const each = poolPerWorker(POOL, WORKERS);
    await running.waitFor(
      new RegExp(`\\n  Database:      PostgreSQL 127\\.0\\.0\\.1:${server().port}/${database}, pool ${each} per worker \\(${each * WORKERS} in all\\)\\n`),
    );

    const connections = async (): Promise<number> =>
      Number((await admin.query<{ n: string }>(`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1`, [database])).rows[0]!.n);
    let done = false;
    const samples: number[] = [];
    const sampling = (async () => {
      while (!done) {
        samples.push(await connections());
        await new Promise((resolve) => setTimeout(resolve, SAMPLE_EVERY_MS));
      }
    })();
    const port = running.port;
    const answers = await Promise.all(
      Array.from({ length: REQUESTS }, (_, i) =>
        i % 2 === 0 ? send(agent, port, 'POST', '/notes', { title: `n${i}` }) : send(agent, port, 'GET', '/notes/count'),
      ),
    );
    done = true;
    await sampling;
    const wrong = answers.filter((a) => a.status !== 201 && a.status !== 200);
    assert.deepEqual(wrong.slice(0, 3), [], `${wrong.length} requests failed`);
    const peak = Math.max(...samples);
    assert.ok(peak <= POOL, `${peak} connections at the peak, above database.pool ${POOL}`);
    assert.ok(peak > each, `${peak} connections at the peak: both workers' pools should be open (${each} each)`);
  } finally {
    agent.destroy();
    if (running !== null) {
      const exited = new Promise((resolve) => running!.child.once('exit', resolve));
      running.child.kill('SIGTERM');
      await exited;
    }
    await admin.end();
    rmSync(dir, { recursive: true, force: true });
  }
});
