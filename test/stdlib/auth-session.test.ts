/**
 * The caller's identity without the VM: where the token is read from, the per-request memo,
 * the verified-token cache (synchronous second time, expiry, key change, LRU bound), the key
 * sources, the stored-user hook, and the API keyring's parsing and reloading.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RvmError } from '../../plugins/sdk.js';
import type { RequestInfo, ValueObject } from '../../plugins/sdk.js';
import { createSecretSource } from '../../vm/runtime/secrets.js';
import { fakeContext, TEST_APP, type FakeContext } from '../../plugins/testing.js';
import { CLOCK_SKEW_SECONDS, createJwt } from '../../stdlib/auth/jwt.js';
import { AuthSession } from '../../stdlib/auth/session.js';
import { requestToken } from '../../plugins/sdk.js';
import { ApiKeyring, parseApiKeys } from '../../stdlib/auth/api-keys.js';
import { SECRETS_RECHECK_MS } from '../../stdlib/auth/rechecked.js';
import { TokenCache } from '../../stdlib/auth/token-cache.js';

const SECRET = 's'.repeat(32);
const START = 1_700_000_000_000;

/** A context for a request with `headers`/`cookies`, in an app whose env is `env`. */
function ctxWith(request: Partial<RequestInfo>, env: Record<string, string> = { JWT_SECRET: SECRET }, dir: string | null = null): FakeContext {
  const base = fakeContext({ request });
  return { ...base, app: { ...TEST_APP, dir, secrets: createSecretSource(dir, env) } };
}

function bearer(token: string, env?: Record<string, string>): FakeContext {
  return ctxWith({ headers: { authorization: `Bearer ${token}` } }, env);
}

function clock(start = START): { now: () => number; advance(ms: number): void } {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

describe('requestToken', () => {
  const req = (headers: Record<string, string>, cookies: Record<string, string> = {}) => fakeContext({ request: { headers, cookies } }).request;

  test('Bearer header, any case of the scheme, extra spaces', () => {
    assert.equal(requestToken(req({ authorization: 'Bearer abc' })), 'abc');
    assert.equal(requestToken(req({ authorization: 'bearer   abc  ' })), 'abc');
    assert.equal(requestToken(req({ authorization: 'BEARER abc' })), 'abc');
  });

  test('the header wins over the cookie; the cookie is used without a Bearer header', () => {
    assert.equal(requestToken(req({ authorization: 'Bearer h' }, { rvm_session: 'c' })), 'h');
    assert.equal(requestToken(req({}, { rvm_session: 'c' })), 'c');
    assert.equal(requestToken(req({ authorization: 'Basic dXNlcjpwdw==' }, { rvm_session: 'c' })), 'c');
  });

  test('nothing usable is null', () => {
    assert.equal(requestToken(req({})), null);
    assert.equal(requestToken(req({ authorization: 'Bearer' })), null);
    assert.equal(requestToken(req({ authorization: 'Bearer a b' })), null);
    assert.equal(requestToken(req({}, { rvm_session: '' })), null);
  });
});

describe('AuthSession', () => {
  test('a valid token authenticates; the first time asynchronously, then synchronously from the cache', async () => {
    const c = clock();
    const session = new AuthSession({ now: c.now });
    const token = await createJwt({ sub: 'u1' }, SECRET, 600, START);
    const first = session.authenticate(bearer(token));
    assert.ok(first instanceof Promise);
    assert.equal(((await first) as ValueObject).sub, 'u1');
    const second = session.authenticate(bearer(token));
    assert.ok(!(second instanceof Promise), 'second verification must be synchronous');
    assert.equal((second as ValueObject).sub, 'u1');
    assert.equal(session.cachedTokens, 1);
  });

  test('memoised per request: a second call in one request is synchronous and the same', async () => {
    const session = new AuthSession();
    const ctx = bearer(await createJwt({ sub: 'u' }, SECRET, 60));
    const a = await session.authenticate(ctx);
    assert.equal(session.authenticate(ctx), a);
  });

  test('an expired token is not served from the cache', async () => {
    const c = clock();
    const session = new AuthSession({ now: c.now });
    const token = await createJwt({ sub: 'u' }, SECRET, 60, START);
    assert.notEqual(await session.authenticate(bearer(token)), null);
    c.advance((60 + CLOCK_SKEW_SECONDS + 1) * 1000);
    const later = session.authenticate(bearer(token));
    assert.ok(later instanceof Promise, 'an expired entry must fall through to jose');
    assert.equal(await later, null);
    assert.equal(session.cachedTokens, 0);
  });

  test('invalid tokens authenticate as null and are not cached', async () => {
    const session = new AuthSession();
    const wrongKey = await createJwt({ sub: 'u' }, 'w'.repeat(32), 60);
    assert.equal(await session.authenticate(bearer(wrongKey)), null);
    assert.equal(await session.authenticate(bearer('garbage')), null);
    assert.equal(session.cachedTokens, 0);
  });

  test('no token is null, synchronously', () => {
    const session = new AuthSession();
    assert.equal(session.authenticate(ctxWith({})), null);
  });

  test('no key anywhere is auth_not_configured; a short key is weak_secret', () => {
    const session = new AuthSession();
    assert.throws(
      () => session.authenticate(ctxWith({}, {})),
      (e: unknown) => e instanceof RvmError && e.code === 'auth_not_configured',
    );
    assert.throws(
      () => session.authenticate(ctxWith({}, { JWT_SECRET: 'short' })),
      (e: unknown) => e instanceof RvmError && e.code === 'weak_secret',
    );
  });

  test('the key comes from .secrets/jwt_secret when JWT_SECRET is unset; the env wins', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rvm-auth-key-'));
    try {
      mkdirSync(join(dir, '.secrets'));
      const fileKey = 'f'.repeat(40);
      writeFileSync(join(dir, '.secrets', 'jwt_secret'), fileKey + '\n');
      const byFile = await createJwt({ sub: 'file' }, fileKey, 60);
      const session = new AuthSession();
      const inFileApp = ctxWith({ headers: { authorization: `Bearer ${byFile}` } }, {}, dir);
      assert.equal(((await session.authenticate(inFileApp)) as ValueObject).sub, 'file');
      const envWins = ctxWith({ headers: { authorization: `Bearer ${byFile}` } }, { JWT_SECRET: SECRET }, dir);
      assert.equal(await new AuthSession().authenticate(envWins), null);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a changed key clears the cache: tokens of the old key stop working', async () => {
    const c = clock();
    const session = new AuthSession({ now: c.now });
    const env: Record<string, string> = { JWT_SECRET: SECRET };
    const secrets = createSecretSource(null, env);
    const ctx = (token: string) => ({ ...fakeContext({ request: { headers: { authorization: `Bearer ${token}` } } }), app: { ...TEST_APP, secrets } });
    const token = await createJwt({ sub: 'u' }, SECRET, 600, START);
    assert.notEqual(await session.authenticate(ctx(token)), null);
    env.JWT_SECRET = 'n'.repeat(32);
    // Within the recheck interval the old key is still in force.
    assert.notEqual(session.authenticate(ctx(token)), null);
    c.advance(SECRETS_RECHECK_MS);
    assert.equal(await session.authenticate(ctx(token)), null);
    assert.equal(session.cachedTokens, 0);
  });

  test('the cache is bounded', async () => {
    const session = new AuthSession({ cacheSize: 3 });
    for (let i = 0; i < 5; i++) await session.authenticate(bearer(await createJwt({ sub: `u${i}` }, SECRET, 60)));
    assert.equal(session.cachedTokens, 3);
  });

  test('user() is a private copy: changing it leaves the cached claims alone', async () => {
    const session = new AuthSession();
    const token = await createJwt({ sub: 'u', role: 'user' }, SECRET, 60);
    const user = (await session.user(bearer(token))) as ValueObject;
    user.role = 'admin';
    const again = (await session.user(bearer(token))) as ValueObject;
    assert.equal(again.role, 'user');
  });

  test('the stored-user hook merges the record over the claims', async () => {
    const seen: string[] = [];
    const session = new AuthSession({
      storedUser: (_ctx, claims) => {
        seen.push(String(claims.sub));
        return Promise.resolve({ id: claims.sub as string, plan: 'premium', role: 'admin' });
      },
    });
    const token = await createJwt({ sub: 'u9', role: 'user', email: 'a@b.c' }, SECRET, 60);
    const user = (await session.user(bearer(token))) as ValueObject;
    assert.deepEqual(user.role, 'admin');
    assert.deepEqual(user.plan, 'premium');
    assert.deepEqual(user.email, 'a@b.c');
    assert.deepEqual(seen, ['u9']);
  });
});

describe('TokenCache', () => {
  test('a token in use survives a stream of new ones; one used once goes after a full pass', () => {
    const cache = new TokenCache(3);
    cache.set('hot', { n: 0 }, Infinity);
    cache.set('once', { n: 1 }, Infinity);
    cache.get('once', 0);
    for (let i = 0; i < 50; i++) {
      cache.set(`new${i}`, { n: i }, Infinity);
      assert.deepEqual(cache.get('hot', 0), { n: 0 }, `after new${i}`);
      assert.ok(cache.size <= 3);
    }
    assert.equal(cache.get('once', 0), undefined);
    assert.deepEqual(cache.get('new49', 0), { n: 49 });
  });

  test('an expired entry is never served and is dropped', () => {
    const cache = new TokenCache(2);
    cache.set('a', { n: 1 }, 1000);
    assert.deepEqual(cache.get('a', 999), { n: 1 });
    assert.equal(cache.get('a', 1000), undefined);
    assert.equal(cache.size, 0);
  });

  test('evicts the least recently used entry', () => {
    const cache = new TokenCache(2);
    cache.set('a', { n: 1 }, Infinity);
    cache.set('b', { n: 2 }, Infinity);
    cache.get('a', 0);
    cache.set('c', { n: 3 }, Infinity);
    assert.deepEqual([cache.get('a', 0), cache.get('b', 0), cache.get('c', 0)], [{ n: 1 }, undefined, { n: 3 }]);
  });

  test("tokens sharing a fingerprint (same length and ending) never get each other's claims", () => {
    const cache = new TokenCache(8);
    const ending = '.same-signature-end';
    cache.set(`first${ending}`, { n: 1 }, Infinity);
    assert.equal(cache.get(`other${ending}`, 0), undefined, 'an unverified token with the same ending is a miss');
    cache.set(`secon${ending}`, { n: 2 }, Infinity);
    assert.deepEqual(cache.get(`secon${ending}`, 0), { n: 2 });
    const first = cache.get(`first${ending}`, 0);
    assert.ok(first === undefined || first.n === 1, 'the earlier token is a miss or its own claims');
    assert.ok(cache.size <= 2);
  });
});

describe('API keys', () => {
  test('file lines and the env list, without blanks, comments or duplicates', () => {
    assert.deepEqual(parseApiKeys('# keys\nk1\n\n  k2  \r\n#k3\nk1\n', ' k4 , ,k2'), ['k1', 'k2', 'k4']);
    assert.deepEqual(parseApiKeys(null, undefined), []);
  });

  test('accepts a listed key, refuses others, empty and over-long ones', () => {
    const ring = new ApiKeyring();
    const secrets = createSecretSource(null, { API_KEYS: 'alpha-key,beta-key' });
    assert.equal(ring.accepts(secrets, 'alpha-key'), true);
    assert.equal(ring.accepts(secrets, 'beta-key'), true);
    assert.equal(ring.accepts(secrets, 'alpha-ke'), false);
    assert.equal(ring.accepts(secrets, ''), false);
    assert.equal(ring.accepts(secrets, 'x'.repeat(2000)), false);
  });

  test('no keys configured is api_key_not_configured', () => {
    assert.throws(
      () => new ApiKeyring().accepts(createSecretSource(null, {}), 'k'),
      (e: unknown) => e instanceof RvmError && e.code === 'api_key_not_configured',
    );
  });

  test('an edited keys file is picked up after the recheck interval', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rvm-apikeys-'));
    try {
      mkdirSync(join(dir, '.secrets'));
      writeFileSync(join(dir, '.secrets', 'api_keys'), 'old-key\n');
      const c = clock();
      const ring = new ApiKeyring(c.now);
      const secrets = createSecretSource(dir, {});
      assert.equal(ring.accepts(secrets, 'old-key'), true);
      writeFileSync(join(dir, '.secrets', 'api_keys'), 'new-key\n');
      assert.equal(ring.accepts(secrets, 'new-key'), false);
      c.advance(SECRETS_RECHECK_MS);
      assert.equal(ring.accepts(secrets, 'new-key'), true);
      assert.equal(ring.accepts(secrets, 'old-key'), false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
