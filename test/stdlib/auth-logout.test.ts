/**
 * Log-out that works (spec/plugins/auth.md, "Log-out (revoked tokens)"): auth_logout() and jwt_revoke(token) put the token's jti on
 * a deny list in ctx.store until the token expires; the auth and role guards, auth_user() and
 * jwt_verify refuse it from then on (401 token_revoked). In one process, through the app's real
 * pipeline; across workers and machines: test/integration/auth-logout-shared.test.ts.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT, decodeJwt } from 'jose';
import { SECURITY_KEY_PREFIX, type Value } from '../../plugins/sdk.js';
import type { App } from '../../vm/runtime/app.js';
import { loadApp } from '../../tools/host.js';
import { inject } from '../../vm/runtime/http/inject.js';
import { captureLogger } from '../../vm/runtime/log.js';
import { createInProcessStore, type InProcessStore } from '../../vm/runtime/stores/memory.js';
import { CLOCK_SKEW_SECONDS, REVOKED_TOKEN_PREFIX } from '../../stdlib/auth/jwt.js';
import { LOGOUT_ROUTES, LOGOUT_TTL_SECONDS as TTL_SECONDS } from '../support/apps.js';

const SECRET = 'an-app-key-of-at-least-32-bytes!!';

/** A memory store that remembers the TTL of every write. */
function recordingStore(options: Parameters<typeof createInProcessStore>[0] = {}): InProcessStore & { writes: { key: string; ttlMs: number | undefined }[] } {
  const store = createInProcessStore({ sweepIntervalMs: 0, ...options });
  const writes: { key: string; ttlMs: number | undefined }[] = [];
  const set = store.set.bind(store);
  return Object.assign(store, {
    writes,
    set(key: string, value: Value, ttlMs?: number) {
      writes.push({ key, ttlMs });
      set(key, value, ttlMs);
    },
  });
}

async function start(store: InProcessStore): Promise<{ app: App; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'rvm-logout-'));
  writeFileSync(join(dir, 'routes.rvm'), LOGOUT_ROUTES);
  const app = await loadApp(dir, { cache: false, store, logger: captureLogger(), settings: { env: { JWT_SECRET: SECRET } } });
  return { app, dir };
}

async function login(app: App): Promise<string> {
  const res = await inject(app, { method: 'POST', url: '/login' });
  assert.equal(res.status, 200, res.body);
  return (res.json() as { token: string }).token;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('auth_logout() and jwt_revoke()', () => {
  const store = recordingStore();
  let app: App;
  let dir: string;

  before(async () => {
    ({ app, dir } = await start(store));
  });

  after(async () => {
    await app.close();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('tokens of jwt_create carry a random jti', async () => {
    const [a, b] = [decodeJwt(await login(app)), decodeJwt(await login(app))];
    assert.match(String(a.jti), /^[A-Za-z0-9_-]{22}$/);
    assert.notEqual(a.jti, b.jti);
  });

  test('signed in, signed out: the same token is refused with 401 token_revoked by every path that accepts it', async () => {
    const token = await login(app);
    assert.equal((await inject(app, { url: '/me', headers: bearer(token) })).status, 200);
    const out = await inject(app, { method: 'POST', url: '/logout', headers: bearer(token) });
    assert.equal(out.status, 200, out.body);
    assert.deepEqual(out.json(), { revoked: true, still_signed_in: false });

    for (const url of ['/me', '/admin']) {
      const res = await inject(app, { url, headers: bearer(token) });
      assert.equal(res.status, 401, `${url}: ${res.body}`);
      assert.equal((res.json() as { code: string }).code, 'token_revoked');
      assert.equal(res.headers['www-authenticate'], 'Bearer');
    }
    const verified = await inject(app, { method: 'POST', url: '/verify', body: { token } });
    assert.deepEqual(verified.json(), { claims: null });
    // Signing in again gives a token of its own, which works.
    assert.equal((await inject(app, { url: '/me', headers: bearer(await login(app)) })).status, 200);
  });

  test('a session cookie is signed out the same way', async () => {
    const cookie = { cookie: `rvm_session=${await login(app)}` };
    assert.equal((await inject(app, { method: 'POST', url: '/logout', headers: cookie })).status, 200);
    const res = await inject(app, { url: '/me', headers: cookie });
    assert.equal(res.status, 401);
    assert.equal((res.json() as { code: string }).code, 'token_revoked');
  });

  test('the deny-list entry is security state and lives until the token expires (its exp plus the skew)', async () => {
    const token = await login(app);
    const { jti, exp } = decodeJwt(token) as { jti: string; exp: number };
    const before = Date.now();
    assert.deepEqual((await inject(app, { method: 'POST', url: '/revoke', body: { token } })).json(), { revoked: true });
    const write = store.writes.find((w) => w.key === REVOKED_TOKEN_PREFIX + jti);
    assert.ok(write !== undefined, JSON.stringify(store.writes));
    assert.ok(write.key.startsWith(SECURITY_KEY_PREFIX));
    const expected = (exp + CLOCK_SKEW_SECONDS) * 1000 - before;
    assert.ok(Math.abs(write.ttlMs! - expected) < 2000, `ttl ${write.ttlMs} ms, expected about ${expected} ms`);
    assert.ok(write.ttlMs! <= (TTL_SECONDS + CLOCK_SKEW_SECONDS) * 1000);
    assert.equal((await inject(app, { url: '/me', headers: bearer(token) })).status, 401);
  });

  test('what cannot be revoked answers false: a token without jti, a forged one, not a token', async () => {
    const key = new TextEncoder().encode(SECRET);
    const withoutJti = await new SignJWT({ sub: 'legacy' }).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime('10m').sign(key);
    const forged = await new SignJWT({ sub: 'x', jti: 'forged' })
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime('10m')
      .sign(new TextEncoder().encode('another-key-of-at-least-32-bytes!!'));
    for (const token of [withoutJti, forged, 'not a token']) {
      assert.deepEqual((await inject(app, { method: 'POST', url: '/revoke', body: { token } })).json(), { revoked: false }, token);
    }
    assert.equal(
      store.writes.some((w) => w.key === `${REVOKED_TOKEN_PREFIX}forged`),
      false,
      'a forged token writes nothing',
    );
    assert.equal((await inject(app, { url: '/me', headers: bearer(withoutJti) })).status, 200, 'a token without jti stays valid');
    const out = await inject(app, { method: 'POST', url: '/logout', headers: bearer(withoutJti) });
    assert.deepEqual(out.json(), { revoked: false, still_signed_in: true });
  });
});

test('a full security budget refuses the revocation (503 store_full) rather than forget one', async () => {
  const store = recordingStore({ maxSecurityKeys: 1 });
  store.set(`${SECURITY_KEY_PREFIX}someone-else`, 1, 60_000);
  const { app, dir } = await start(store);
  try {
    const token = await login(app);
    const out = await inject(app, { method: 'POST', url: '/logout', headers: bearer(token) });
    assert.equal(out.status, 503, out.body);
    assert.equal((out.json() as { code: string }).code, 'store_full');
    assert.equal(store.get(`${SECURITY_KEY_PREFIX}someone-else`), 1, 'the live entry is kept');
  } finally {
    await app.close();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
