/**
 * A log-out holds everywhere (spec/plugins/auth.md, "Log-out (revoked tokens)"): the deny list lives in ctx.store, so a token
 * revoked through one worker of `rvm run --workers 2` is refused by the other (the primary's store
 * over IPC), and one revoked on one machine by another sharing its Redis. Both workers and both
 * servers verified the token before (their token caches hold it): the revocation must win over
 * the cache. Real processes, real HTTP, a real Redis.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { CLOCK_SKEW_SECONDS, REVOKED_TOKEN_PREFIX } from '../../stdlib/auth/jwt.js';
import { sendFresh, type Reply } from '../support/http-client.js';
import { useRedis } from '../support/redis.js';
import { startRvmServer, type RvmServer } from '../support/rvm-cluster.js';
import { tempApp } from '../support/temp-app.js';
import { LOGOUT_ROUTES } from '../support/apps.js';

const JWT_SECRET = 'logout-shared-jwt-secret-0123456789abcdef';
/** How long one answer may take on a loaded CI machine. */
const ANSWER_TIMEOUT_MS = 10_000;
/** Fresh connections sent to find both workers (the kernel spreads them; 2^-40 to miss one). */
const PROBES = 40;

/** Every answer says which process gave it: request ids start with a per-process prefix. */
const MIDDLEWARE = `
middleware {
  next()
  set_header('X-Served-By', split(request.id, '-')[0])
}
`;

function send(server: RvmServer, method: string, path: string, token: string): Promise<Reply> {
  return sendFresh(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${token}` }, timeoutMs: ANSWER_TIMEOUT_MS });
}

async function login(server: RvmServer): Promise<string> {
  const reply = await sendFresh(`${server.url}/login`, { method: 'POST', timeoutMs: ANSWER_TIMEOUT_MS });
  assert.equal(reply.status, 200, reply.body);
  return (JSON.parse(reply.body) as { token: string }).token;
}

/** GET /me from `PROBES` fresh connections: the answers' statuses by the process that gave them. */
async function probe(server: RvmServer, token: string): Promise<Map<string, Set<string>>> {
  const replies = await Promise.all(Array.from({ length: PROBES }, () => send(server, 'GET', '/me', token)));
  const byProcess = new Map<string, Set<string>>();
  for (const r of replies) {
    const served = String(r.headers['x-served-by']);
    const code = r.status === 200 ? '200' : `${r.status} ${(JSON.parse(r.body) as { code: string }).code}`;
    byProcess.set(served, (byProcess.get(served) ?? new Set()).add(code));
  }
  return byProcess;
}

test('under --workers 2 a token signed out through one worker is refused by both', { timeout: 60_000 }, async (t) => {
  const dir = tempApp(t, { 'routes.rvm': LOGOUT_ROUTES, '_middleware.rvm': MIDDLEWARE });
  const server = await startRvmServer(dir, { workers: 2, env: { JWT_SECRET } });
  try {
    const token = await login(server);
    const signedIn = await probe(server, token);
    assert.equal(signedIn.size, 2, `both workers answered: ${JSON.stringify([...signedIn.keys()])}`);
    for (const codes of signedIn.values()) assert.deepEqual([...codes], ['200']);

    const out = await send(server, 'POST', '/logout', token);
    assert.equal(out.status, 200, out.body);
    assert.deepEqual(JSON.parse(out.body), { revoked: true, still_signed_in: false });

    const signedOut = await probe(server, token);
    assert.equal(signedOut.size, 2, 'both workers answered again');
    for (const [worker, codes] of signedOut) assert.deepEqual([...codes], ['401 token_revoked'], `worker ${worker}`);
  } finally {
    await server.stop();
  }
});

describe('two rvm run servers sharing one Redis', () => {
  const redis = useRedis();
  let a: RvmServer;
  let b: RvmServer;
  after(() => Promise.all([a?.stop(), b?.stop()]));
  const apps = [tempApp({ after }, { 'routes.rvm': LOGOUT_ROUTES }), tempApp({ after }, { 'routes.rvm': LOGOUT_ROUTES })];

  before(async () => {
    const env = { REDIS_URL: redis().url, JWT_SECRET };
    [a, b] = await Promise.all(apps.map((dir) => startRvmServer(dir, { env })));
    for (const s of [a, b]) assert.match(s.output(), /Store: +Redis/);
  });

  test('a token signed out on A is refused on B, and the entry expires with the token', async () => {
    const token = await login(a);
    for (const s of [a, b]) assert.equal((await send(s, 'GET', '/me', token)).status, 200);
    assert.equal((await send(a, 'POST', '/logout', token)).status, 200);
    for (const s of [b, a]) {
      const reply = await send(s, 'GET', '/me', token);
      assert.equal(reply.status, 401, reply.body);
      assert.equal((JSON.parse(reply.body) as { code: string }).code, 'token_revoked');
    }
    // Redis holds the entry with the token's remaining life (and the skew) as its TTL.
    const { jti, exp } = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { jti: string; exp: number };
    const raw = new Redis(redis().url);
    try {
      const ttlMs = await raw.pttl(`rvm:kv:${REVOKED_TOKEN_PREFIX}${jti}`);
      const expected = (exp + CLOCK_SKEW_SECONDS) * 1000 - Date.now();
      assert.ok(Math.abs(ttlMs - expected) < 5000, `PTTL ${ttlMs} ms, expected about ${expected} ms`);
    } finally {
      raw.disconnect();
    }
  });
});
