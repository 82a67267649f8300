/**
 * Redis stopped and started again under load (spec/stores.md, Redis, "Failure behaviour"): two `rvm run --prod` servers on one
 * real Redis, one with the default policy and one with `"rateLimit": {"failOpen": true}`, while
 * clients hammer a rate-limited route on each. While Redis is down every answer of the default
 * server is 503 `store_unavailable` (or 200/429), each within REDIS_COMMAND_TIMEOUT_MS + slack —
 * never a hang — and the fail-open server answers 200; each server logs the outage once, not once
 * per request; once Redis is back on the same port both answer 200/429 again by themselves.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { REDIS_COMMAND_TIMEOUT_MS } from '../../vm/runtime/stores/redis.js';
import { sendFresh } from '../support/http-client.js';
import { useRedis } from '../support/redis.js';
import { startRvmServer, type RvmServer } from '../support/rvm-cluster.js';
import { tempApp } from '../support/temp-app.js';

/** Clients looping on each server at once: the load the outage comes under. */
const CLIENTS = 6;
/** What an answer may take beyond the command timeout it rests on (scheduling on a busy CI machine). */
const SLACK_MS = 1500;
/** The longest an answer may take while Redis is down: a command gives up after REDIS_COMMAND_TIMEOUT_MS, then 503. */
const ANSWER_BOUND_MS = REDIS_COMMAND_TIMEOUT_MS + SLACK_MS;
/** Load before Redis goes down, to see it healthy first. */
const HEALTHY_MS = 500;
/**
 * How long Redis stays down: every client meets the outage many times, as a command fails at once
 * while Redis is down (no offline queue), and one in flight when it stopped gives up within
 * REDIS_COMMAND_TIMEOUT_MS, inside the outage.
 */
const OUTAGE_MS = 1500;
/** How long the servers get to answer 200/429 again once Redis is back (reconnection backs off to at most 500 ms). */
const RECOVERY_MS = 10_000;
/** Load kept up once recovered, every answer of which must be 200/429. */
const RECOVERED_MS = 500;

const ROUTES = `
route GET /limited {
  guard rate_limit(100000, 1)
  response.ok({ ok: true })
}
`;

/** The access log's line for a request (`GET /limited 503 0.4ms`), which production prints for each: not what is counted here. */
const ACCESS_LINE = /^[A-Z]+ \/\S* \d{3} /;

/** One request's fate. */
interface Outcome {
  server: 'strict' | 'open';
  sentAt: number;
  endedAt: number;
  status: number;
  /** The error code of a JSON error answer. */
  code?: string;
  /** A connection error or no answer within ANSWER_BOUND_MS. */
  error?: string;
}

/** Clients looping on each server until `stop()`; every outcome kept. */
function hammer(servers: Record<Outcome['server'], RvmServer>): { outcomes: Outcome[]; stop(): Promise<void> } {
  const outcomes: Outcome[] = [];
  let running = true;
  const loop = async (server: Outcome['server']): Promise<void> => {
    while (running) {
      const sentAt = Date.now();
      try {
        const reply = await sendFresh(`${servers[server].url}/limited`, { timeoutMs: ANSWER_BOUND_MS });
        let code: string | undefined;
        if (reply.status >= 400) code = (JSON.parse(reply.body) as { code?: string }).code;
        outcomes.push({ server, sentAt, endedAt: Date.now(), status: reply.status, code });
      } catch (error) {
        outcomes.push({ server, sentAt, endedAt: Date.now(), status: 0, error: String(error) });
      }
    }
  };
  const loops = (['strict', 'open'] as const).flatMap((s) => Array.from({ length: CLIENTS }, () => loop(s)));
  return {
    outcomes,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `done()` or `ms` passed; whether it became true. */
async function until(done: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!done() && Date.now() < deadline) await sleep(50);
  return done();
}

function summary(list: readonly Outcome[]): string {
  const counts = new Map<string, number>();
  for (const o of list) {
    const key = o.error ? `error ${o.error}` : `${o.status}${o.code ? ` ${o.code}` : ''}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return JSON.stringify(Object.fromEntries(counts));
}

describe('Redis stopped and restarted under load', () => {
  const redis = useRedis();
  const servers: Partial<Record<Outcome['server'], RvmServer>> = {};
  after(() => Promise.all(Object.values(servers).map((s) => s?.stop())));
  const strict = tempApp({ after }, { 'routes.rvm': ROUTES });
  const open = tempApp({ after }, { 'routes.rvm': ROUTES, 'rvm.config.json': JSON.stringify({ rateLimit: { failOpen: true } }) });

  before(async () => {
    const env = { REDIS_URL: redis().url };
    [servers.strict, servers.open] = await Promise.all([startRvmServer(strict, { env }), startRvmServer(open, { env })]);
  });

  test(`503 store_unavailable within ${ANSWER_BOUND_MS} ms (fail-open: 200) while it is down, one log line for the outage, 200 again after`, {
    timeout: 60_000,
  }, async () => {
    const strict = servers.strict!;
    const open = servers.open!;
    for (const s of [strict, open]) assert.match(s.output(), /Store: +Redis/);
    const banner = { strict: strict.output().length, open: open.output().length };

    const load = hammer({ strict, open });
    let stoppingAt = 0;
    let stoppedAt = 0;
    let restartedAt = 0;
    try {
      await sleep(HEALTHY_MS);
      stoppingAt = Date.now();
      await redis().stop();
      stoppedAt = Date.now();
      await sleep(OUTAGE_MS);
      restartedAt = Date.now();
      await redis().start();
      const recovered = await until(
        () => (['strict', 'open'] as const).every((s) => load.outcomes.some((o) => o.server === s && o.sentAt > restartedAt && o.status === 200)),
        RECOVERY_MS,
      );
      assert.ok(recovered, `no 200 within ${RECOVERY_MS} ms of Redis being back: ${summary(load.outcomes.filter((o) => o.sentAt > restartedAt))}`);
    } finally {
      await sleep(RECOVERED_MS);
      await load.stop();
    }
    const all = load.outcomes;
    const lastRecovery = Math.max(
      ...(['strict', 'open'] as const).map((s) => all.find((o) => o.server === s && o.sentAt > restartedAt && o.status === 200)!.sentAt),
    );

    // Never a hang nor a cut connection: every request answered within the bound.
    assert.deepEqual(
      all.filter((o) => o.error !== undefined || o.endedAt - o.sentAt > ANSWER_BOUND_MS),
      [],
      summary(all),
    );
    const healthy = all.filter((o) => o.endedAt < stoppingAt);
    // From the first request on: a server that has announced itself serves (its store is reachable).
    assert.ok(healthy.length > 0 && healthy.every((o) => o.status === 200), `before the outage: ${summary(healthy)}`);

    const during = all.filter((o) => o.sentAt >= stoppedAt && o.endedAt <= restartedAt);
    const strictDuring = during.filter((o) => o.server === 'strict');
    const openDuring = during.filter((o) => o.server === 'open');
    assert.ok(
      strictDuring.every((o) => o.status === 200 || o.status === 429 || (o.status === 503 && o.code === 'store_unavailable')),
      `default policy during the outage: ${summary(strictDuring)}`,
    );
    assert.ok(
      strictDuring.some((o) => o.status === 503),
      `the outage was never seen: ${summary(strictDuring)}`,
    );
    assert.ok(openDuring.length > 0 && openDuring.every((o) => o.status === 200), `fail-open during the outage: ${summary(openDuring)}`);

    const recovered = all.filter((o) => o.sentAt > lastRecovery);
    assert.ok(recovered.length > 0 && recovered.every((o) => o.status === 200 || o.status === 429), `once recovered: ${summary(recovered)}`);

    // One line when the outage starts and one when it ends, however many requests met it.
    for (const [name, server] of [
      ['strict', strict],
      ['open', open],
    ] as const) {
      const lines = server
        .output()
        .slice(banner[name])
        .split('\n')
        .filter((l) => l.trim() !== '' && !ACCESS_LINE.test(l));
      assert.equal(lines.length, 2, `${name} server's log during the test:\n${lines.join('\n')}`);
      assert.match(lines[0]!, /unavailable: Redis at /);
      assert.match(lines[1]!, /available again: Redis at /);
    }
  });
});
