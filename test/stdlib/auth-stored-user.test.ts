/**
 * auth_user() merges the stored `User` whose id is the token's `sub` over the claims
 * (spec/plugins/auth.md, "The user record"): the record's shown fields win, `@hidden` ones never appear. Sign-in fails closed: with
 * a `type User`, a record id in `sub` naming no record (deleted) is no user (401), and a database
 * that cannot be read answers 503 database_unavailable, never the token's claims (the PostgreSQL
 * test, auth-stored-user-outage, stops a real server under a demoted admin's token). Without
 * `type User`, or for a `sub` that is no record id, the user is the claims.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { loadApp as loadWith, type App } from '../../vm/runtime/app.js';
import { loadApp } from '../../tools/host.js';
import { STANDARD_PLUGINS } from '../../stdlib/index.js';
import { auth } from '../../stdlib/auth/index.js';
import type { PluginDefinition, StoredRecords } from '../../plugins/sdk.js';
import { inject } from '../../vm/runtime/http/inject.js';
import { captureLogger } from '../../vm/runtime/log.js';

const SECRET = 'an-app-key-of-at-least-32-bytes!!';
const KEY = new TextEncoder().encode(SECRET);

const ME = `
route GET /me {
  guard auth
  response.ok(auth_user())
}
`;

const USERS = `
type User {
  email: text @email
  name: text
  password_hash: text @hidden
  role?: text @one_of('user', 'admin') @default('user')
}

route POST /users {
  validate {
    email: text
    name: text
    password_hash: text
    role?: text
  }
  response.created(User.create(body))
}

route DELETE /users/:id {
  response.ok(User.delete(params.id))
}

route GET /admin {
  guard role('admin')
  response.ok({ ok: true })
}
${ME}`;

function sign(claims: Record<string, unknown>): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime('10m').sign(KEY);
}

async function start(source: string): Promise<{ app: App; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'rvm-auth-user-'));
  writeFileSync(join(dir, 'routes.rvm'), source);
  const app = await loadApp(dir, { cache: false, logger: captureLogger(), settings: { env: { JWT_SECRET: SECRET } } });
  return { app, dir };
}

async function me(app: App, claims: Record<string, unknown>): Promise<Record<string, unknown>> {
  const res = await inject(app, { url: '/me', headers: { authorization: `Bearer ${await sign(claims)}` } });
  assert.equal(res.status, 200, res.body);
  return res.json() as Record<string, unknown>;
}

describe('auth_user() with a type User', () => {
  let app: App;
  let dir: string;
  let stored: Record<string, unknown>;

  before(async () => {
    ({ app, dir } = await start(USERS));
    const res = await inject(app, { method: 'POST', url: '/users', body: { email: 'ada@example.com', name: 'Ada', password_hash: 'secret-hash' } });
    assert.equal(res.status, 201, res.body);
    stored = res.json() as Record<string, unknown>;
  });

  after(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the stored record whose id is sub is merged over the claims, hidden fields left out', async () => {
    const user = await me(app, { sub: stored.id, name: 'From the token', role: 'admin', plan: 'gold' });
    assert.equal(user.sub, stored.id);
    assert.equal(user.plan, 'gold');
    assert.equal(user.name, 'Ada');
    assert.equal(user.role, 'user');
    assert.equal(user.email, 'ada@example.com');
    assert.equal(user.id, stored.id);
    assert.equal(user.created_at, stored.created_at);
    assert.equal(user.password_hash, undefined);
    assert.equal(typeof user.iat, 'number');
  });

  test("the role guard judges the stored role, not the token's", async () => {
    const bearer = async (claims: Record<string, unknown>) => ({ authorization: `Bearer ${await sign(claims)}` });
    const stale = await inject(app, { url: '/admin', headers: await bearer({ sub: stored.id, role: 'admin' }) });
    assert.equal(stale.status, 403, stale.body);
    assert.equal((stale.json() as { code: string }).code, 'forbidden');
    const unstored = await inject(app, { url: '/admin', headers: await bearer({ sub: '01890a5d-ac96-774b-bcce-b302099a8057', role: 'admin' }) });
    assert.equal(unstored.status, 401, unstored.body);
  });

  test('a record id naming no stored record is no user: 401 from auth_user() and the role guard', async () => {
    for (const sub of ['01890a5d-ac96-774b-bcce-b302099a8057']) {
      for (const url of ['/me', '/admin']) {
        const res = await inject(app, { url, headers: { authorization: `Bearer ${await sign({ sub, name: 'Ghost', role: 'admin' })}` } });
        assert.equal(res.status, 401, `${url} with sub ${sub}: ${res.body}`);
        assert.deepEqual(res.json(), { error: 'Authentication required', code: 'unauthorized' });
        assert.equal(res.headers['www-authenticate'], 'Bearer');
      }
    }
  });

  test('a sub that is not a record id names no record: the claims are the user, the store not asked', async () => {
    const other = await me(app, { sub: 'u1', name: 'Plain' });
    assert.deepEqual([other.sub, other.name, other.id], ['u1', 'Plain', undefined]);
  });

  test("a deleted user's token is refused: 401", async () => {
    const created = await inject(app, { method: 'POST', url: '/users', body: { email: 'gone@example.com', name: 'Gone', password_hash: 'h', role: 'admin' } });
    assert.equal(created.status, 201, created.body);
    const id = (created.json() as { id: string }).id;
    const token = await sign({ sub: id, role: 'admin' });
    const before = await inject(app, { url: '/admin', headers: { authorization: `Bearer ${token}` } });
    assert.equal(before.status, 200, before.body);
    const deleted = await inject(app, { method: 'DELETE', url: `/users/${id}` });
    assert.equal(deleted.status, 200, deleted.body);
    for (const url of ['/me', '/admin']) {
      const res = await inject(app, { url, headers: { authorization: `Bearer ${token}` } });
      assert.equal(res.status, 401, `${url}: ${res.body}`);
    }
  });
});

describe('auth_user() without a type User', () => {
  test('a sub shaped like a record id still gives the claims', async () => {
    const { app, dir } = await start(ME);
    try {
      const user = await me(app, { sub: '01890a5d-ac96-774b-bcce-b302099a8057', name: 'Claims' });
      assert.deepEqual([user.sub, user.name, user.id], ['01890a5d-ac96-774b-bcce-b302099a8057', 'Claims', undefined]);
    } finally {
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('auth_user() reads the stored user once per request', () => {
  let app: App;
  let dir: string;
  let userId: string;
  /** Reads of a stored record by the auth plugin, counted where it asks the records plugin. */
  let reads = 0;

  /** The auth plugin with its stored-records port counted: everything else is the real plugin. */
  const countedAuth: PluginDefinition = {
    ...auth,
    setup(rvm) {
      const records = rvm.storedRecords!;
      const counted: StoredRecords = {
        find: (ctx, type, id) => {
          reads++;
          return records.find(ctx, type, id);
        },
        declares: (type) => records.declares(type),
      };
      return auth.setup({ ...rvm, storedRecords: counted });
    },
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rvm-auth-user-once-'));
    writeFileSync(
      join(dir, 'routes.rvm'),
      `${USERS}
guard_definition signed_in {
  state.user = auth_user()
}

route GET /twice {
  guard role('user')
  guard signed_in
  response.ok({ from_guard: state.user.name, from_handler: auth_user().name, again: auth_user().email })
}
`,
    );
    const standard = STANDARD_PLUGINS.map((p) => (p.name === auth.name ? countedAuth : p));
    app = await loadWith(dir, { cache: false, standard, logger: captureLogger(), settings: { env: { JWT_SECRET: SECRET } } });
    const res = await inject(app, { method: 'POST', url: '/users', body: { email: 'ada@example.com', name: 'Ada', password_hash: 'h' } });
    assert.equal(res.status, 201, res.body);
    userId = (res.json() as { id: string }).id;
  });

  after(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the role guard, a guard_definition and the handler calling auth_user() twice make one read', async () => {
    const headers = { authorization: `Bearer ${await sign({ sub: userId })}` };
    reads = 0;
    const res = await inject(app, { url: '/twice', headers });
    assert.equal(res.status, 200, res.body);
    assert.deepEqual(res.json(), { from_guard: 'Ada', from_handler: 'Ada', again: 'ada@example.com' });
    assert.equal(reads, 1, 'one read of the stored User in the request');
    // Per request, not per process: the next request reads again, so a changed record is seen.
    assert.equal((await inject(app, { url: '/twice', headers })).status, 200);
    assert.equal(reads, 2);
  });
});
