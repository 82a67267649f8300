/**
 * Sign-in fails closed (spec/plugins/auth.md, "The user record"): a real `rvm run --prod` on a real PostgreSQL, an
 * admin demoted in the database whose token still says `role: admin`. While the database is
 * stopped, the `role` guard and auth_user() answer 503 database_unavailable — before the fix the
 * guard let the token's stale role in (200) and auth_user() answered the claims — and once it is
 * back the stored role is judged again (403).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT } from 'jose';
import { useOwnPostgres } from '../support/postgres.js';
import { startRvmServer, type RvmServer } from '../support/rvm-cluster.js';
import { tempApp } from '../support/temp-app.js';

const SECRET = 'an-app-key-of-at-least-32-bytes!!';

const APP = `
type User {
  email: text @email
  role?: text @one_of('user', 'admin') @default('user')
}

route POST /users {
  validate {
    email: text
    role: text
  }
  response.created(User.create(body))
}

route GET /admin {
  guard role('admin')
  response.ok({ admin: true })
}

route GET /me {
  guard auth
  response.ok(auth_user())
}
`;

function sign(claims: Record<string, unknown>): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime('10m').sign(new TextEncoder().encode(SECRET));
}

async function get(base: string, path: string, token: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(base + path, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(30_000) });
  return { status: res.status, body: await res.json() };
}

const server = useOwnPostgres();

describe("the stored user cannot be read: 503, never the token's claims", () => {
  let rvm: RvmServer;
  after(() => rvm?.stop());
  const dir = tempApp({ after }, { 'routes.rvm': APP });

  before(async () => {
    rvm = await startRvmServer(dir, { env: { DATABASE_URL: server().url, JWT_SECRET: SECRET } });
  });

  test('a demoted admin with an admin token while PostgreSQL is down: role guard and auth_user() answer 503 database_unavailable', async () => {
    const created = await fetch(rvm.url + '/users', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'ada@example.com', role: 'user' }),
    });
    assert.equal(created.status, 201);
    const id = ((await created.json()) as { id: string }).id;
    const token = await sign({ sub: id, role: 'admin' });
    assert.equal((await get(rvm.url, '/admin', token)).status, 403, 'the stored role is judged while the database is up');

    await server().stopAsync();
    try {
      for (const path of ['/admin', '/me']) {
        const res = await get(rvm.url, path, token);
        assert.deepEqual(res, { status: 503, body: { error: 'The database is unavailable', code: 'database_unavailable' } }, path);
      }
    } finally {
      await server().startAsync();
    }
    // Back up: the pool reconnects and the stored role is judged again.
    const deadline = Date.now() + 15_000;
    let status = 0;
    while (Date.now() < deadline && (status = (await get(rvm.url, '/admin', token)).status) !== 403) await new Promise((r) => setTimeout(r, 200));
    assert.equal(status, 403);
  });
});
