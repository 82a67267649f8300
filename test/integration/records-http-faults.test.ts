/**
 * The database down, seen over HTTP (spec/plugins/records.md, "A database that does not answer"): a real `rvm run --prod` process whose
 * records live in a real database, under steady concurrent load.
 *
 * - PostgreSQL stopped mid-load and started again on the same port and data: every answer is a
 *   success or 503 `{"error":…,"code":"database_unavailable"}` — never a 500, never a hang — the
 *   process stays up, and answers are 2xx again within a bound without restarting rvm.
 * - SQLite with its write lock held by another process: writes answer 503 after the busy wait,
 *   reads go on, and writes succeed once the lock is let go.
 *
 * (records-faults.test.ts checks the same at the store level, with short timeouts; here the
 * server runs with its defaults.)
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { PG_CONNECT_TIMEOUT_MS } from '../../stdlib/records/postgres.js';
import { SQLITE_BUSY_TIMEOUT_MS, SQLITE_LOCK_WAIT_MS } from '../../stdlib/records/sqlite.js';
import { SQLITE_PATH } from '../../stdlib/records/database.js';
import { useOwnPostgres } from '../support/postgres.js';
import { lockHolder } from '../support/sqlite-lock.js';
import { tempApp } from '../support/temp-app.js';
import { startRvm } from './rvm-run.js';
import { NOTE_ROUTES } from '../support/apps.js';

/** Clients looping create + find at once: the load the outage comes under. */
const CLIENTS = 16;
/** What an answer may take beyond the timeout it rests on (scheduling on a busy CI machine). */
const SLACK_MS = 1500;
/**
 * The longest an answer may take while PostgreSQL is down: getting a connection gives up after
 * PG_CONNECT_TIMEOUT_MS (a refused connection fails at once; one the server half-accepted waits
 * that long), then 503.
 */
const PG_ANSWER_BOUND_MS = PG_CONNECT_TIMEOUT_MS + SLACK_MS;
/** How long PostgreSQL stays down: long enough for every client to meet the outage several times. */
const OUTAGE_MS = 2000;
/** How long the server gets to answer 2xx again once PostgreSQL is back. */
const RECOVERY_MS = 15_000;

const APP = `
route GET /hello { response.ok({ hello: true }) }

${NOTE_ROUTES}
`;

/** One answer (or failure to answer) as a client saw it. */
interface Outcome {
  started: number;
  ms: number;
  status: number;
  body: unknown;
  /** The fetch error (connection refused, reset, aborted after the bound), or null. */
  error: string | null;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** The most the load may take to give CLIENTS answers before the database is stopped. */
const LOAD_START_MS = 10_000;

/** Sends one request, giving up after `boundMs` (a hang is an outcome too, not a stuck test). */
async function send(base: string, method: 'GET' | 'POST', path: string, boundMs: number, body?: unknown): Promise<Outcome> {
  const started = Date.now();
  try {
    const init: RequestInit = { method, signal: AbortSignal.timeout(boundMs + SLACK_MS) };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers = { 'content-type': 'application/json' };
    }
    const res = await fetch(base + path, init);
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Not JSON: kept as text, and the checks below say so.
    }
    return { started, ms: Date.now() - started, status: res.status, body: parsed, error: null };
  } catch (error) {
    return { started, ms: Date.now() - started, status: 0, body: null, error: String(error) };
  }
}

/** CLIENTS clients, each creating a note and finding it, back to back, until `stop()`. */
function load(base: string, known: string, boundMs: number) {
  const outcomes: Outcome[] = [];
  let running = true;
  let n = 0;
  const clients = Array.from({ length: CLIENTS }, async () => {
    while (running) {
      const created = await send(base, 'POST', '/notes', boundMs, { title: `t${n++}` });
      outcomes.push(created);
      const id = created.status === 201 ? (created.body as { id: string }).id : known;
      const found = await send(base, 'GET', `/notes/${id}`, boundMs);
      outcomes.push(found);
      // A 503 comes back at once; a breath keeps the clients from spinning the CPU during the outage.
      if (created.status !== 201 || found.status !== 200) await sleep(5);
    }
  });
  return {
    outcomes,
    async stop(): Promise<void> {
      running = false;
      await Promise.all(clients);
    },
  };
}

/** A problem with one answer: not a success, nor the 503 of an unavailable database, or too slow. */
function problem(o: Outcome, boundMs: number): string | null {
  if (o.error !== null) return `no answer after ${o.ms} ms: ${o.error}`;
  if (o.ms > boundMs) return `answered after ${o.ms} ms (bound ${boundMs} ms)`;
  if (o.status === 201 || o.status === 200) return null;
  const body = o.body as Record<string, unknown>;
  if (
    o.status === 503 &&
    JSON.stringify(Object.keys(body ?? {})) === '["error","code"]' &&
    typeof body.error === 'string' &&
    body.code === 'database_unavailable'
  )
    return null;
  return `status ${o.status}, body ${JSON.stringify(o.body).slice(0, 200)}`;
}

/** Polls `probe` until it answers 2xx; how long that took, or a failure after RECOVERY_MS. */
async function recovered(probe: () => Promise<Outcome>): Promise<number> {
  const started = Date.now();
  for (;;) {
    const o = await probe();
    if (o.status >= 200 && o.status < 300) return Date.now() - started;
    if (Date.now() - started > RECOVERY_MS)
      throw new Error(`not 2xx ${RECOVERY_MS} ms after the database came back: ${o.status} ${JSON.stringify(o.body)} ${o.error ?? ''}`);
    await sleep(50);
  }
}

describe('rvm run on PostgreSQL: the database stopped and started under load', () => {
  const server = useOwnPostgres();
  let child: ChildProcess | null = null;
  let base: string;
  after(() => child?.kill('SIGKILL'));
  const dir = tempApp({ after }, { 'notes.rvm': APP });

  before(async () => {
    const running = await startRvm(dir, { ...process.env, DATABASE_URL: server().url });
    child = running.child;
    base = running.url;
  });

  test(`${CLIENTS} clients creating and finding: 2xx or 503 database_unavailable within ${PG_ANSWER_BOUND_MS} ms while it is down, 2xx again after, the same process`, async (t) => {
    const seeded = await send(base, 'POST', '/notes', PG_ANSWER_BOUND_MS, { title: 'known' });
    assert.equal(seeded.status, 201, JSON.stringify(seeded.body));
    const known = (seeded.body as { id: string }).id;

    const running = load(base, known, PG_ANSWER_BOUND_MS);
    // The load is under way (every client answered once, on average) before the database stops;
    // on a busy machine that takes longer than on a quiet one.
    const loadStarted = Date.now();
    while (running.outcomes.length < CLIENTS && Date.now() - loadStarted < LOAD_START_MS) await sleep(50);
    const beforeStop = running.outcomes.length;
    await server().stopAsync();
    const down = Date.now();
    await sleep(OUTAGE_MS);
    // pg_ctl returns a little after the server accepts connections: "down" ends when it is asked to start.
    const up = Date.now();
    await server().startAsync();
    const took = await recovered(() => send(base, 'GET', `/notes/${known}`, PG_ANSWER_BOUND_MS));
    const back = Date.now();
    await sleep(1000);
    await running.stop();

    const outcomes = running.outcomes;
    const slowest = Math.max(...outcomes.filter((o) => o.started >= down).map((o) => o.ms));
    t.diagnostic(
      `${outcomes.length} answers, ${outcomes.filter((o) => o.status === 503).length} of them 503; slowest after the stop ${slowest} ms; 2xx again ${took} ms after the restart`,
    );
    assert.ok(beforeStop >= CLIENTS, `the load ran before the stop (${beforeStop} answers in ${LOAD_START_MS} ms)`);
    const problems = outcomes.map((o) => problem(o, PG_ANSWER_BOUND_MS)).filter((p) => p !== null);
    assert.deepEqual(problems.slice(0, 5), [], `${problems.length} of ${outcomes.length} answers were neither 2xx nor 503 database_unavailable in time`);
    const whileDown = outcomes.filter((o) => o.started >= down && o.started + o.ms <= up);
    assert.ok(whileDown.length >= CLIENTS, `requests were answered while PostgreSQL was down (${whileDown.length})`);
    assert.ok(
      whileDown.every((o) => o.status === 503),
      `only 503 while PostgreSQL is down: ${[...new Set(whileDown.map((o) => o.status))].join(', ')}`,
    );
    assert.ok(took < RECOVERY_MS);
    const afterBack = outcomes.filter((o) => o.started > back);
    assert.ok(afterBack.length >= CLIENTS, `the load ran after recovery (${afterBack.length} answers)`);
    assert.deepEqual(
      afterBack.filter((o) => o.status !== 200 && o.status !== 201).map((o) => o.status),
      [],
      'every answer after recovery is 2xx',
    );
    assert.equal(child!.exitCode, null, 'the rvm process stayed up');
    assert.equal(child!.signalCode, null, 'the rvm process stayed up');
    const created = outcomes.filter((o) => o.status === 201).map((o) => (o.body as { id: string }).id);
    const last = await send(base, 'GET', `/notes/${created[created.length - 1]}`, PG_ANSWER_BOUND_MS);
    assert.equal(last.status, 200, 'a note created after recovery is stored');
  });
});

describe('rvm run on SQLite: the write lock held by another process', () => {
  let child: ChildProcess | null = null;
  let base: string;
  after(() => child?.kill('SIGKILL'));
  const dir = tempApp({ after }, { 'notes.rvm': APP });

  before(async () => {
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.DATABASE_URL;
    const running = await startRvm(dir, env);
    child = running.child;
    base = running.url;
  });

  /** Writes while the lock is held: each waits its turn at the connection, then retries for the busy timeout. */
  const WRITES = 4;
  const WRITE_BOUND_MS = Math.max(SQLITE_BUSY_TIMEOUT_MS, SQLITE_LOCK_WAIT_MS) + SQLITE_BUSY_TIMEOUT_MS + SLACK_MS;

  test(`writes answer 503 database_unavailable after the busy wait (${SQLITE_BUSY_TIMEOUT_MS} ms), reads go on, writes succeed once the lock is let go`, async () => {
    const seeded = await send(base, 'POST', '/notes', WRITE_BOUND_MS, { title: 'known' });
    assert.equal(seeded.status, 201, JSON.stringify(seeded.body));
    const known = (seeded.body as { id: string }).id;

    const holder = await lockHolder(join(dir, SQLITE_PATH));
    let writes: Outcome[];
    let read: Outcome;
    try {
      // The read goes first: a write waiting for the file holds this process's connection, and reads queue behind it.
      read = await send(base, 'GET', `/notes/${known}`, WRITE_BOUND_MS);
      writes = await Promise.all(Array.from({ length: WRITES }, (_, i) => send(base, 'POST', '/notes', WRITE_BOUND_MS, { title: `w${i}` })));
    } finally {
      await holder.release();
    }

    assert.equal(read.status, 200, 'reads go on under WAL while another process holds the write lock');
    assert.ok(read.ms < SQLITE_BUSY_TIMEOUT_MS, `a read waited ${read.ms} ms`);
    assert.deepEqual(
      writes.map((w) => problem(w, WRITE_BOUND_MS)).filter((p) => p !== null),
      [],
    );
    assert.deepEqual(
      writes.map((w) => w.status),
      Array(WRITES).fill(503),
    );
    const first = Math.min(...writes.map((w) => w.ms));
    assert.ok(first >= SQLITE_BUSY_TIMEOUT_MS, `the first write gave up only at the busy timeout (${first} ms)`);

    const after = await send(base, 'POST', '/notes', WRITE_BOUND_MS, { title: 'after' });
    assert.equal(after.status, 201, JSON.stringify(after.body));
    assert.equal(child!.exitCode, null, 'the rvm process stayed up');
  });
});
