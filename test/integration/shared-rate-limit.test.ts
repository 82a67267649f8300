/**
 * Rate limits are exact across processes and machines (spec/plugins/ratelimit.md, "The store"): `guard rate_limit(100, 60)`
 * under 400 concurrent requests, each on a connection of its own so every worker gets some,
 * answers exactly 100 × 200 and 300 × 429 — over 4 workers with the primary's store, over 2 and
 * 4 workers with Redis, and over two separate `rvm run` servers sharing one Redis (two machines).
 * Real processes, a real Redis, real HTTP.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sendFresh, statusCounts, type Reply } from '../support/http-client.js';
import { useRedis } from '../support/redis.js';
import { startRvmServer, type RvmServer } from '../support/rvm-cluster.js';
import { tempApp } from '../support/temp-app.js';

/** The route's limit: what the whole cluster may allow in the window. */
const LIMIT = 100;
/** Requests sent at once: four times the limit, so most are refused. */
const REQUESTS = 400;
/** The window: far longer than a case, so nothing leaves it while the burst runs. */
const WINDOW_S = 60;
/** How long one answer may take while 400 connections queue on a loaded 2-core CI machine. */
const ANSWER_TIMEOUT_MS = 20_000;

const ROUTES = `
route GET /limited {
  guard rate_limit(${LIMIT}, ${WINDOW_S})
  response.ok({ ok: true })
}
`;

/**
 * Every request comes from 127.0.0.1, and a process closes connections from one address past
 * limits.maxConnectionsPerClient (256 by default): a worker that the scheduler hands more than
 * that of the 400 would cut them. Raised, so what is measured is the rate limit alone.
 */
const CONFIG = JSON.stringify({ limits: { maxConnectionsPerClient: REQUESTS } });
const FILES = { 'routes.rvm': ROUTES, 'rvm.config.json': CONFIG };

const dir = tempApp({ after }, FILES);

/** Starts the servers, runs `body`, and stops them whatever happens. */
async function withServers(starts: Promise<RvmServer>[], body: (servers: RvmServer[]) => Promise<void>): Promise<void> {
  const settled = await Promise.allSettled(starts);
  const servers = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  try {
    for (const s of settled) if (s.status === 'rejected') throw s.reason;
    await body(servers);
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}

/** REQUESTS GETs of /limited at once, spread in turn over the servers' URLs; a request that failed is a reply of status 0 with the error as its body, so the counts show it. */
function burst(servers: readonly RvmServer[]): Promise<Reply[]> {
  const urls = Array.from({ length: REQUESTS }, (_, i) => `${servers[i % servers.length]!.url}/limited`);
  return Promise.all(
    urls.map((url) => sendFresh(url, { timeoutMs: ANSWER_TIMEOUT_MS }).catch((e: unknown): Reply => ({ status: 0, headers: {}, body: String(e), ms: 0 }))),
  );
}

/** Exactly LIMIT allowed and the rest refused with the guard's 429. */
function assertExact(replies: readonly Reply[]): void {
  const failed = [...new Set(replies.filter((r) => r.status !== 200 && r.status !== 429).map((r) => `${r.status} ${r.body.slice(0, 120)}`))];
  assert.deepEqual(statusCounts(replies), { 200: LIMIT, 429: REQUESTS - LIMIT }, `other answers: ${failed.join(' | ')}`);
  for (const r of replies.filter((r) => r.status === 429)) assert.equal((JSON.parse(r.body) as { code: string }).code, 'too_many_requests');
}

describe('rate_limit is exact over processes', () => {
  test(`--workers 4 with the primary's store: ${REQUESTS} at once → exactly ${LIMIT} allowed`, { timeout: 60_000 }, async () => {
    await withServers([startRvmServer(dir, { workers: 4 })], async ([server]) => {
      assert.match(server!.output(), /Store: +held by the primary/);
      assertExact(await burst([server!]));
    });
  });
});

describe('rate_limit is exact over Redis', () => {
  const redis = useRedis();

  // Redis keeps nothing across a restart: each case starts with empty windows.
  const fresh = async (): Promise<string> => {
    await redis().stop();
    await redis().start();
    return redis().url;
  };

  for (const workers of [2, 4]) {
    test(`--workers ${workers} with REDIS_URL: ${REQUESTS} at once → exactly ${LIMIT} allowed`, { timeout: 60_000 }, async () => {
      const url = await fresh();
      await withServers([startRvmServer(dir, { workers, env: { REDIS_URL: url } })], async ([server]) => {
        assert.match(server!.output(), /Store: +Redis/);
        assertExact(await burst([server!]));
      });
    });
  }

  test(`two rvm run servers sharing one Redis (two machines): ${REQUESTS} split between them → exactly ${LIMIT} allowed in all`, {
    timeout: 60_000,
  }, async (t) => {
    const url = await fresh();
    // A folder of its own for the second machine, as it would have.
    const other = tempApp(t, FILES);
    await withServers([startRvmServer(dir, { env: { REDIS_URL: url } }), startRvmServer(other, { env: { REDIS_URL: url } })], async (servers) => {
      for (const s of servers) assert.match(s.output(), /Store: +Redis/);
      // Separate servers allowing on their own would let 2 × LIMIT through.
      assertExact(await burst(servers));
    });
  });
});
