/**
 * Records under `rvm run --workers N` (spec/plugins/records.md, "Records under workers"): several processes write one SQLite file, and
 * none of them ever answers SQLITE_BUSY (503 `database_unavailable`) under write load. Real
 * processes, real HTTP, the app's real `.rvm/data.sqlite`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SQLITE_PATH } from '../../stdlib/records/database.js';
import { send } from '../support/http-client.js';
import { startRvm } from './rvm-run.js';

/** Worker processes writing the one file. */
const WORKERS = 4;
/** Connections kept open at once: 16 per worker, so every worker has writes queued at every moment. */
const CONNECTIONS = 64;
/** Single-record creates (each its own BEGIN IMMEDIATE). */
const CREATES = 2000;
/** Two-record creates in one `transaction { }` (BEGIN IMMEDIATE held across awaits). */
const PAIRS = 200;
/** Reads (a count) interleaved with the writes: WAL lets them run past another process's write. */
const READS = 400;

const APP = `
type Note {
  title: text
  n: int
}

route POST /notes {
  validate {
    title: text
    n: int
  }
  response.created(Note.create(body))
}

route POST /pairs {
  validate {
    n: int
  }
  transaction {
    Note.create({ title: 'first', n: body.n })
    Note.create({ title: 'second', n: body.n })
  }
  response.created({ n: body.n })
}

route GET /notes/count {
  response.ok({ count: Note.count() })
}
`;

test(`--workers ${WORKERS} on one SQLite file: ${CREATES} creates, ${PAIRS} transactions and ${READS} reads over ${CONNECTIONS} connections, every one answered, no SQLITE_BUSY`, {
  timeout: 120_000,
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rvm-workers-records-'));
  writeFileSync(join(dir, 'app.rvm'), APP);
  const running = await startRvm(dir, process.env, 0, ['--workers', String(WORKERS)]);
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  try {
    // The primary prints the database its workers announced, after the store.
    await running.waitFor(new RegExp(`\\n  Store: .*\\n  Database:      SQLite \\S*\\.rvm/data\\.sqlite, shared by the ${WORKERS} workers\\n`));
    const port = running.port;
    // Interleaved, so reads and both kinds of write are in flight together all along.
    const jobs: Promise<{ status: number; expect: number }>[] = [];
    const expect = (status: number) => (r: { status: number }) => ({ status: r.status, expect: status });
    for (let i = 0; i < CREATES; i++) {
      jobs.push(send(agent, port, 'POST', '/notes', { title: `note ${i}`, n: i }).then(expect(201)));
      if (i % (CREATES / PAIRS) === 0) jobs.push(send(agent, port, 'POST', '/pairs', { n: i }).then(expect(201)));
      if (i % (CREATES / READS) === 0) jobs.push(send(agent, port, 'GET', '/notes/count').then(expect(200)));
    }
    const answers = await Promise.all(jobs);
    const wrong = answers.filter((a) => a.status !== a.expect);
    assert.deepEqual(wrong.slice(0, 5), [], `${wrong.length} answers were not as expected`);

    const count = await send(agent, port, 'GET', '/notes/count');
    assert.equal(JSON.parse(count.text).count, CREATES + 2 * PAIRS, 'every create stored once');
    const db = new Database(join(dir, SQLITE_PATH), { readonly: true });
    try {
      const row = db.prepare('SELECT count(*) AS c, count(DISTINCT title) AS titles FROM "Note"').get() as { c: number; titles: number };
      assert.equal(row.c, CREATES + 2 * PAIRS, 'the file holds exactly the rows written');
      assert.equal(row.titles, CREATES + 2, 'each create once: no write was lost or doubled');
    } finally {
      db.close();
    }
    assert.doesNotMatch(running.output(), /SQLITE_BUSY|database_unavailable|database is unavailable/);
  } finally {
    agent.destroy();
    const exited = new Promise((resolve) => running.child.once('exit', resolve));
    running.child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
});

test('one process prints the SQLite file it uses; an app without a type prints no database', { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rvm-records-line-'));
  try {
    for (const [source, line] of [
      [APP, /\n {2}Database: {6}SQLite \S*\.rvm\/data\.sqlite\n/],
      ['route GET / {\n  response.ok({})\n}\n', null],
    ] as const) {
      writeFileSync(join(dir, 'app.rvm'), source);
      const running = await startRvm(dir);
      const exited = new Promise((resolve) => running.child.once('exit', resolve));
      try {
        // The store's line is the one before: once it is out, a database line would be too (one write each, in order).
        await running.waitFor(/\n {2}Store: .*\n/);
        if (line === null) assert.doesNotMatch(running.output(), /Database:/);
        else await running.waitFor(line);
      } finally {
        running.child.kill('SIGTERM');
        await exited;
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
