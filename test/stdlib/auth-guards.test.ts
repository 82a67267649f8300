/**
 * The auth plugin end to end in an app: the auth guard by Bearer header and by cookie, optional
 * mode, auth_user() inside a guard_definition without `guard auth`, role with `role` and `roles`,
 * api_key from the env and from `.secrets/api_keys`, configuration errors, and the guards' metadata.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT, jwtVerify } from 'jose';
import type { App } from '../../vm/runtime/app.js';
import { buildApp, loadApp } from '../../tools/host.js';
import { inject } from '../../vm/runtime/http/inject.js';
import { captureLogger } from '../../vm/runtime/log.js';

const SECRET = 'an-app-key-of-at-least-32-bytes!!';
const KEY = new TextEncoder().encode(SECRET);

const ROUTES = `
route GET /me {
  guard auth
  response.ok(auth_user())
}

route GET /maybe {
  guards { auth: optional }
  if auth_check() {
    response.ok({ who: auth_user().sub })
  }
  response.ok({ who: null })
}

route GET /strict {
  guards { auth: optional }
  response.ok(auth_user())
}

route GET /admin {
  guard role('admin')
  response.ok({ ok: true })
}

route GET /staff {
  guard role('admin', 'staff')
  response.ok({ ok: true })
}

route GET /keyed {
  guard api_key
  response.ok({ ok: true })
}

/// Premium members only: reads the caller without a prior guard auth.
guard_definition premium {
  user = auth_user()
  if user.plan != 'premium' {
    fail 403 'Premium required'
  }
}

route GET /premium {
  guard premium
  response.ok({ content: 'gold' })
}

route POST /orders {
  guard auth
  validate { item: text }
  response.created({ item: body.item })
}

route POST /token {
  response.ok({ token: jwt_create({ sub: 'u7', role: 'user' }, env_key(), 60) })
}

fn env_key() { return '${SECRET}' }
`;

function sign(claims: Record<string, unknown>, key = KEY): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime('10m').sign(key);
}

const auth = (token: string) => ({ authorization: `Bearer ${token}` });

describe('auth plugin in an app (keys from the environment)', () => {
  let dir: string;
  let app: App;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rvm-auth-'));
    writeFileSync(join(dir, 'routes.rvm'), ROUTES);
    app = await loadApp(dir, { cache: false, logger: captureLogger(), settings: { env: { JWT_SECRET: SECRET, API_KEYS: 'key-one, key-two' } } });
  });

  after(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a token signed by jose directly passes guard auth (Bearer)', async () => {
    const res = await inject(app, { url: '/me', headers: auth(await sign({ sub: 'u1', name: 'Ada' })) });
    assert.equal(res.status, 200);
    assert.equal(res.json().sub, 'u1');
    assert.equal(res.json().name, 'Ada');
  });

  test('the same token twice (second from the cache) still passes', async () => {
    const token = await sign({ sub: 'u1' });
    for (let i = 0; i < 2; i++) assert.equal((await inject(app, { url: '/me', headers: auth(token) })).status, 200);
  });

  test('the rvm_session cookie authenticates', async () => {
    const res = await inject(app, { url: '/me', headers: { cookie: `rvm_session=${await sign({ sub: 'c1' })}` } });
    assert.equal(res.status, 200);
    assert.equal(res.json().sub, 'c1');
  });

  test('no token: 401 unauthorized with WWW-Authenticate: Bearer', async () => {
    const res = await inject(app, { url: '/me' });
    assert.equal(res.status, 401);
    assert.equal(res.json().code, 'unauthorized');
    assert.equal(res.headers['www-authenticate'], 'Bearer');
  });

  test('wrong key, alg none, HS512, expired and tampered tokens are 401', async () => {
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ sub: 'x', exp: 9999999999 })).toString('base64url')}.`;
    const hs512 = await new SignJWT({ sub: 'x' }).setProtectedHeader({ alg: 'HS512' }).setExpirationTime('10m').sign(KEY);
    const expired = await new SignJWT({ sub: 'x' })
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime(Math.floor(Date.now() / 1000) - 3600)
      .sign(KEY);
    const good = await sign({ sub: 'x', role: 'user' });
    const [h, , s] = good.split('.');
    const tampered = `${h}.${Buffer.from(JSON.stringify({ sub: 'x', role: 'admin', exp: 9999999999 })).toString('base64url')}.${s}`;
    for (const token of [await sign({ sub: 'x' }, new TextEncoder().encode('another-key-of-at-least-32-bytes!')), none, hs512, expired, tampered]) {
      const res = await inject(app, { url: '/me', headers: auth(token) });
      assert.equal(res.status, 401, token.slice(0, 30));
      assert.equal(res.json().code, 'unauthorized');
    }
  });

  test('guards run before validation: no token and a bad body is 401, not 422', async () => {
    const res = await inject(app, { method: 'POST', url: '/orders', body: { nothing: 1 } });
    assert.equal(res.status, 401);
    const ok = await inject(app, { method: 'POST', url: '/orders', headers: auth(await sign({ sub: 'u' })), body: { item: 'tea' } });
    assert.equal(ok.status, 201);
  });

  test('optional mode never rejects; auth_check() tells whether a valid token came', async () => {
    assert.deepEqual((await inject(app, { url: '/maybe' })).json(), { who: null });
    assert.deepEqual((await inject(app, { url: '/maybe', headers: auth('garbage') })).json(), { who: null });
    assert.deepEqual((await inject(app, { url: '/maybe', headers: auth(await sign({ sub: 'o1' })) })).json(), { who: 'o1' });
  });

  test('auth_user() stays strict in optional mode', async () => {
    assert.equal((await inject(app, { url: '/strict' })).status, 401);
    assert.equal((await inject(app, { url: '/strict', headers: auth(await sign({ sub: 's' })) })).status, 200);
  });

  test('auth_user() in a guard_definition without guard auth: 401 without a token, then the custom check', async () => {
    const none = await inject(app, { url: '/premium' });
    assert.equal(none.status, 401);
    assert.equal(none.headers['www-authenticate'], 'Bearer');
    const basic = await inject(app, { url: '/premium', headers: auth(await sign({ sub: 'p', plan: 'basic' })) });
    assert.equal(basic.status, 403);
    assert.equal(basic.json().code, 'forbidden');
    const gold = await inject(app, { url: '/premium', headers: auth(await sign({ sub: 'p', plan: 'premium' })) });
    assert.deepEqual(gold.json(), { content: 'gold' });
  });

  test('role: 401 without a token, 403 without the role, through with role or roles', async () => {
    assert.equal((await inject(app, { url: '/admin' })).status, 401);
    const user = await inject(app, { url: '/admin', headers: auth(await sign({ sub: 'u', role: 'user' })) });
    assert.equal(user.status, 403);
    assert.equal(user.json().code, 'forbidden');
    assert.equal((await inject(app, { url: '/admin', headers: auth(await sign({ sub: 'u', role: 'admin' })) })).status, 200);
    assert.equal((await inject(app, { url: '/admin', headers: auth(await sign({ sub: 'u', roles: ['user', 'admin'] })) })).status, 200);
    assert.equal((await inject(app, { url: '/admin', headers: auth(await sign({ sub: 'u', roles: ['user'] })) })).status, 403);
    assert.equal((await inject(app, { url: '/staff', headers: auth(await sign({ sub: 'u', role: 'staff' })) })).status, 200);
    assert.equal((await inject(app, { url: '/staff', headers: auth(await sign({ sub: 'u', roles: 'staff' })) })).status, 403);
  });

  test('api_key from API_KEYS', async () => {
    assert.equal((await inject(app, { url: '/keyed', headers: { 'x-api-key': 'key-two' } })).status, 200);
    for (const headers of [{} as Record<string, string>, { 'x-api-key': 'key-three' }, { 'x-api-key': '' }, { 'x-api-key': 'key-one ' }]) {
      const res = await inject(app, { url: '/keyed', headers });
      assert.equal(res.status, 401);
      assert.equal(res.json().code, 'invalid_api_key');
    }
  });

  test('jwt_create tokens verify with jose', async () => {
    const { token } = (await inject(app, { method: 'POST', url: '/token' })).json();
    const { payload, protectedHeader } = await jwtVerify(token, KEY, { algorithms: ['HS256'] });
    assert.equal(protectedHeader.alg, 'HS256');
    assert.equal(payload.sub, 'u7');
    assert.equal(payload.exp, payload.iat! + 60);
  });
});

describe('auth plugin in an app (keys from .secrets/)', () => {
  let dir: string;
  let app: App;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rvm-auth-files-'));
    mkdirSync(join(dir, '.secrets'));
    writeFileSync(join(dir, '.secrets', 'jwt_secret'), SECRET + '\n');
    writeFileSync(join(dir, '.secrets', 'api_keys'), '# partner keys\nfile-key-1\n\nfile-key-2\n');
    writeFileSync(join(dir, 'routes.rvm'), ROUTES);
    app = await loadApp(dir, { cache: false, logger: captureLogger(), settings: { env: {} } });
  });

  after(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the JWT key from .secrets/jwt_secret', async () => {
    assert.equal((await inject(app, { url: '/me', headers: auth(await sign({ sub: 'f' })) })).status, 200);
  });

  test('api keys from .secrets/api_keys; comments are not keys', async () => {
    assert.equal((await inject(app, { url: '/keyed', headers: { 'x-api-key': 'file-key-2' } })).status, 200);
    assert.equal((await inject(app, { url: '/keyed', headers: { 'x-api-key': '# partner keys' } })).status, 401);
  });
});

describe('auth plugin without configuration', () => {
  let dir: string;
  let app: App;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rvm-auth-none-'));
    writeFileSync(join(dir, 'routes.rvm'), ROUTES);
    app = await loadApp(dir, { cache: false, dev: true, logger: captureLogger(), settings: { env: {} } });
  });

  after(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('auth answers 500 auth_not_configured (dev mode shows the code)', async () => {
    const res = await inject(app, { url: '/me' });
    assert.equal(res.status, 500);
    assert.equal(res.json().code, 'auth_not_configured');
  });

  test('api_key answers 500 api_key_not_configured', async () => {
    const res = await inject(app, { url: '/keyed', headers: { 'x-api-key': 'k' } });
    assert.equal(res.status, 500);
    assert.equal(res.json().code, 'api_key_not_configured');
  });
});

describe('guard metadata', () => {
  test('security schemes, typed params and every response', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rvm-auth-meta-'));
    try {
      writeFileSync(join(dir, 'r.rvm'), 'route GET /x { response.ok(1) }');
      const { registry } = await buildApp(dir, { cache: false });
      const meta = (name: string) => registry.guards.get(name)!.meta;
      // The token goes as Authorization: Bearer or in the session cookie: either lets the caller in.
      const schemes = (name: string) => [meta(name).security ?? []].flat().map((s) => ({ id: s.name, ...s.scheme, description: typeof s.scheme.description }));
      assert.deepEqual(schemes('auth'), [
        { id: 'bearerAuth', type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'string' },
        { id: 'cookieAuth', type: 'apiKey', in: 'cookie', name: 'rvm_session', description: 'string' },
      ]);
      assert.deepEqual(meta('role').security, meta('auth').security);
      assert.deepEqual(schemes('api_key'), [{ id: 'apiKeyAuth', type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'string' }]);
      // auth_user() authenticates by the same schemes, and answers as the auth guard does when it cannot.
      const authUser = registry.natives.get('auth_user')!.meta;
      assert.deepEqual(authUser.security, meta('auth').security);
      assert.deepEqual(
        authUser.responses!.map((r) => `${r.status} ${r.code}`),
        ['401 unauthorized', '401 token_revoked', '503 database_unavailable', '500 auth_not_configured'],
      );
      const codes = (name: string) => meta(name).responses!.map((r) => `${r.status} ${r.code}`);
      assert.deepEqual(codes('auth'), ['401 unauthorized', '401 token_revoked', '500 auth_not_configured']);
      assert.deepEqual(codes('role'), ['401 unauthorized', '401 token_revoked', '403 forbidden', '503 database_unavailable', '500 auth_not_configured']);
      assert.deepEqual(codes('api_key'), ['401 invalid_api_key', '500 api_key_not_configured']);
      assert.deepEqual(meta('auth').responses![0]!.headers, ['WWW-Authenticate']);
      assert.deepEqual(
        meta('role').params.map((p) => [p.name, p.type, p.rest === true]),
        [
          ['role', 'text', false],
          ['roles', 'text', true],
        ],
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('role() without a role is a compile error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rvm-auth-arity-'));
    try {
      writeFileSync(join(dir, 'r.rvm'), 'route GET /x {\n  guard role()\n  response.ok(1)\n}');
      const build = await buildApp(dir, { cache: false });
      assert.deepEqual(
        build.diagnostics.filter((d) => d.severity === 'error').map((d) => d.code),
        ['E_ARITY'],
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
