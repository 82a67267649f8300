/**
 * No SQLite query stalls other requests (spec/plugins/records.md, "Records under workers"), over HTTP: a real `rvm run --prod`
 * whose records live in its SQLite file, seeded with a table where a deep-offset sort takes a
 * second or more and a `contains` search scans every row. On the event loop, four clients looping
 * those queries froze every other request; on the reader processes a probe of a route without
 * database keeps answering, fast. A query past the request's deadline answers 503
 * `deadline_exceeded` at once, and the server goes on.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SQLITE_PATH_ENV } from '../../stdlib/records/database.js';
import { startRvm } from './rvm-run.js';
import { tempApp } from '../support/temp-app.js';

/** Rows seeded: the deep-offset sort of them takes over a second inline on the development machine (superlinear: 400,000 took 7–28 s). */
const SEED_ROWS = 200_000;
/** Clients looping the expensive queries. */
const CLIENTS = 4;
/**
 * How long they loop while the probe measures: up to 150 probes. The bound is on their p90: the
 * bug this guards, a deep sort on the event loop (a second or more), holds up every probe sent
 * during it, so most of them, not one or two, would be over the bound; while a machine slowed
 * by others (45 probes sent in a run, the test process itself starved) makes the slowest one or
 * two slow whatever the server does.
 */
const LOAD_MS = 3000;
/** The probe asks this often. */
const PROBE_INTERVAL_MS = 20;
/** A probe unanswered this long failed. */
const PROBE_TIMEOUT_MS = 5000;
/** The probe's p90 bound: generous for a shared CI machine (bench/reliability holds the p99 250 ms target). */
const PROBE_P90_BOUND_MS = 1000;
/** The second server's wall time: far below what the deep sort takes. */
const SHORT_WALL_TIME_MS = 300;
/** What a ping may take after the deadlines (scheduling on a busy machine). */
const SLACK_MS = 700;
/**
 * What an answer may take beyond its deadline: readers are killed and started again meanwhile,
 * and on a busy 2-core machine that took up to 900 ms. Still far below the bug it guards: without
 * the deadline, the CLIENTS * 2 deep queries queue on SQLITE_READERS readers, and the last answers
 * only after four queries of a second or more each.
 */
const DEADLINE_SLACK_MS = 1200;

const APP = `
type Item {
  title: text
  body: text
}

route GET /ping { response.ok({ pong: true }) }

route GET /items/deep {
  response.ok(Item.where({}, { order: 'title', offset: ${SEED_ROWS - 100}, limit: 10 }))
}

route GET /items/search {
  response.ok(Item.where({ body: { contains: 'no such words' } }, { limit: 10 }))
}
`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** SEED_ROWS items written straight into the SQLite file at `path` (its table made by rvm at start): one transaction, one prepared insert. */
function seed(path: string): void {
  const db = new Database(path);
  const insert = db.prepare('INSERT INTO "Item" ("id", "title", "body", "created_at", "updated_at") VALUES (?, ?, ?, ?, ?)');
  db.transaction(() => {
    for (let i = 0; i < SEED_ROWS; i++) {
      const at = new Date(1_700_000_000_000 + i).toISOString();
      insert.run(`item-${String(i).padStart(8, '0')}`, `title ${(i * 7919) % SEED_ROWS}`, `the body of item ${i}`, at, at);
    }
  })();
  db.close();
}

/** One answer: its status, body and time; status 0 when it failed to come. */
async function get(url: string, timeoutMs: number): Promise<{ status: number; body: unknown; ms: number }> {
  const started = performance.now();
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    const body = (await res.json()) as unknown;
    return { status: res.status, body, ms: performance.now() - started };
  } catch {
    return { status: 0, body: null, ms: performance.now() - started };
  }
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/**
 * The SQLite file of both servers, one after the other (the suites run in turn, each killing its
 * server at its end): seeded once, by the first to start, as the seed costs more than a start.
 */
const data = join(tempApp({ after }), 'data.sqlite');
let seeded = false;

/** The server at `dir` on `data`, seeded; killed by the caller. */
async function serve(dir: string): Promise<{ child: ChildProcess; base: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, [SQLITE_PATH_ENV]: data };
  delete env.DATABASE_URL;
  const running = await startRvm(dir, env);
  if (!seeded) {
    seed(data);
    seeded = true;
  }
  return { child: running.child, base: running.url };
}

describe('rvm run on SQLite: expensive queries run off the event loop', () => {
  let child: ChildProcess | null = null;
  let base: string;
  after(() => child?.kill('SIGKILL'));
  const dir = tempApp({ after }, { 'app.rvm': APP });

  before(async () => {
    ({ child, base } = await serve(dir));
  });

  test(`while ${CLIENTS} clients loop deep-offset sorts and contains searches, a probe never fails and its p90 stays under ${PROBE_P90_BOUND_MS} ms`, async (t) => {
    const end = performance.now() + LOAD_MS;
    const answers: Record<string, number> = {};
    const client = async (path: string) => {
      while (performance.now() < end) {
        const { status, body } = await get(`${base}${path}`, 60_000);
        const key = status === 200 ? `${path} 200` : `${path} ${status} ${(body as { code?: string } | null)?.code}`;
        answers[key] = (answers[key] ?? 0) + 1;
      }
    };
    const probe = async () => {
      const latencies: number[] = [];
      let failures = 0;
      const pending: Promise<void>[] = [];
      while (performance.now() < end) {
        pending.push(
          get(`${base}/ping`, PROBE_TIMEOUT_MS).then(({ status, ms }) => {
            latencies.push(status === 200 ? ms : PROBE_TIMEOUT_MS);
            if (status !== 200) failures++;
          }),
        );
        await sleep(PROBE_INTERVAL_MS);
      }
      await Promise.all(pending);
      return { latencies, failures };
    };
    const loads = Array.from({ length: CLIENTS }, (_, i) => client(i % 2 === 0 ? '/items/deep' : '/items/search'));
    const [{ latencies, failures }] = await Promise.all([probe(), ...loads]);

    t.diagnostic(
      `probe p50 ${percentile(latencies, 50).toFixed(1)} ms, p90 ${percentile(latencies, 90).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms over ${latencies.length} requests; ${JSON.stringify(answers)}`,
    );
    assert.equal(failures, 0, `probe failures; the expensive queries answered ${JSON.stringify(answers)}`);
    const p90 = percentile(latencies, 90);
    assert.ok(
      p90 < PROBE_P90_BOUND_MS,
      `probe p90 ${p90.toFixed(0)} ms over ${latencies.length} requests; the expensive queries answered ${JSON.stringify(answers)}`,
    );
    // The expensive queries themselves answered, and with their rows.
    assert.ok((answers['/items/deep 200'] ?? 0) > 0 && (answers['/items/search 200'] ?? 0) > 0, JSON.stringify(answers));
    assert.deepEqual(
      Object.keys(answers).filter((k) => !k.endsWith(' 200')),
      [],
      JSON.stringify(answers),
    );
    const deep = await get(`${base}/items/deep`, 60_000);
    assert.equal((deep.body as unknown[]).length, 10);
    assert.equal(child!.exitCode, null, 'the rvm process stayed up');
  });
});

describe('rvm run on SQLite: a query past the deadline', () => {
  let child: ChildProcess | null = null;
  let base: string;
  after(() => child?.kill('SIGKILL'));
  const dir = tempApp({ after }, { 'app.rvm': APP, 'rvm.config.json': JSON.stringify({ limits: { wallTimeMs: SHORT_WALL_TIME_MS } }) });

  before(async () => {
    ({ child, base } = await serve(dir));
  });

  test(`answers 503 deadline_exceeded at limits.wallTimeMs (${SHORT_WALL_TIME_MS} ms), not when the query ends; the server goes on`, async () => {
    // More than there are readers: killed ones are replaced, and each request still answers at its deadline.
    const answers = await Promise.all(Array.from({ length: CLIENTS * 2 }, () => get(`${base}/items/deep`, 60_000)));
    for (const answer of answers) {
      assert.equal(answer.status, 503, JSON.stringify(answer.body));
      assert.equal((answer.body as { code: string }).code, 'deadline_exceeded');
      assert.ok(answer.ms < SHORT_WALL_TIME_MS + DEADLINE_SLACK_MS, `answered after ${answer.ms.toFixed(0)} ms`);
    }
    const ping = await get(`${base}/ping`, PROBE_TIMEOUT_MS);
    assert.equal(ping.status, 200);
    assert.ok(ping.ms < SLACK_MS, `a ping after the deadlines took ${ping.ms.toFixed(0)} ms`);
    assert.equal(child!.exitCode, null, 'the rvm process stayed up');
  });
});
