/**
 * The showcase's auth routes (examples/showcase/auth.rvm) over inject: login with Argon2id and a
 * JWT in the rvm_session cookie, the auth, role and api_key guards, optional auth, and the
 * premium_member guard built on auth_user().
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { jwtVerify } from 'jose';
import type { App } from '../../vm/runtime/app.js';
import { loadApp } from '../../tools/host.js';
import { answerLog, inject, type InjectRequest, type InjectResponse } from '../support/openapi-answers.js';
import { captureLogger } from '../../vm/runtime/log.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { verifyPassword } from '../../stdlib/auth/passwords.js';
import { DEMO_ACCOUNTS, DEMO_HASHES, SHOWCASE_SOURCE, showcaseCopy } from '../support/showcase.js';

const showcase = showcaseCopy();
const SHOWCASE = showcase.dir;
const JWT_SECRET = 'showcase-test-key-0123456789abcdef';
const PARTNER_KEY = 'showcase-partner-key';
const ADA = DEMO_ACCOUNTS.ada;
const BOB = DEMO_ACCOUNTS.bob;

let app: App;

before(async () => {
  app = await loadApp(SHOWCASE, { cache: false, logger: captureLogger(), settings: { env: { JWT_SECRET, API_KEYS: PARTNER_KEY } } });
});

after(async () => {
  await app?.close();
  showcase.remove();
});

function call(req: InjectRequest): Promise<InjectResponse> {
  return inject(app, req);
}

async function login(who: { email: string; password: string }): Promise<InjectResponse> {
  return call({ method: 'POST', url: '/auth/login', body: who });
}

test('the demo accounts sign in with the documented passwords at production cost; the copy holds hashes of the same passwords at test cost', async () => {
  const source = readFileSync(join(SHOWCASE_SOURCE, 'auth.rvm'), 'utf8');
  for (const account of [ADA, BOB]) {
    const hash = new RegExp(`'${account.email}'.*\\n.*password_hash: '([^']+)'`).exec(source)?.[1];
    assert.ok(hash !== undefined && DEMO_HASHES.has(hash), account.email);
    assert.match(hash, /^\$argon2id\$v=19\$m=65536,t=3,p=4\$/);
    assert.equal(await verifyPassword(account.password, hash), true, account.email);
    assert.match(DEMO_HASHES.get(hash)!, /^\$argon2id\$v=19\$m=8,t=1,p=1\$/);
    assert.equal(await verifyPassword(account.password, DEMO_HASHES.get(hash)), true, account.email);
  }
  assert.doesNotMatch(readFileSync(join(SHOWCASE_SOURCE, 'rvm.config.json'), 'utf8'), /passwords/, 'the showcase itself hashes at production cost');
  assert.match(readFileSync(join(SHOWCASE, 'auth.rvm'), 'utf8'), /m=8,t=1,p=1/);
  assert.doesNotMatch(readFileSync(join(SHOWCASE, 'auth.rvm'), 'utf8'), /m=65536/);
});

describe('showcase: auth', () => {
  let adaToken: string;
  let bobToken: string;

  before(async () => {
    adaToken = (await login(ADA)).json().token;
    bobToken = (await login(BOB)).json().token;
  });

  test('login sets an HttpOnly rvm_session cookie holding an HS256 JWT for an hour', async () => {
    const res = await login(ADA);
    assert.equal(res.status, 200);
    const cookie = String(res.headers['set-cookie']);
    assert.match(cookie, /^rvm_session=[\w-]+\.[\w-]+\.[\w-]+; Path=\/; Max-Age=3600; HttpOnly; SameSite=Lax$/);
    const { payload } = await jwtVerify(res.json().token, new TextEncoder().encode(JWT_SECRET), { algorithms: ['HS256'] });
    assert.equal(payload.sub, 'u-ada');
    assert.equal(payload.exp! - payload.iat!, 3600);
  });

  test('a wrong password and an unknown account are the same 401', async () => {
    for (const body of [
      { ...ADA, password: 'wrong password!' },
      { email: 'eve@example.com', password: 'whatever123' },
    ]) {
      const res = await call({ method: 'POST', url: '/auth/login', body });
      assert.equal(res.status, 401);
      assert.equal(res.json().code, 'unauthorized');
    }
  });

  test('GET /me by Bearer and by cookie; 401 without', async () => {
    assert.equal((await call({ url: '/me', headers: { authorization: `Bearer ${adaToken}` } })).json().name, 'Ada');
    assert.equal((await call({ url: '/me', headers: { cookie: `rvm_session=${bobToken}` } })).json().name, 'Bob');
    const none = await call({ url: '/me' });
    assert.equal(none.status, 401);
    assert.equal(none.headers['www-authenticate'], 'Bearer');
  });

  test('GET /admin/stats: admin through, user 403', async () => {
    assert.equal((await call({ url: '/admin/stats', headers: { authorization: `Bearer ${adaToken}` } })).status, 200);
    assert.equal((await call({ url: '/admin/stats', headers: { authorization: `Bearer ${bobToken}` } })).json().code, 'forbidden');
  });

  test('GET /partner/report needs the partner key', async () => {
    assert.equal((await call({ url: '/partner/report', headers: { 'x-api-key': PARTNER_KEY } })).status, 200);
    assert.equal((await call({ url: '/partner/report' })).json().code, 'invalid_api_key');
  });

  test('GET /welcome is open and greets a signed-in caller', async () => {
    assert.deepEqual((await call({ url: '/welcome' })).json(), { message: 'Welcome, guest!' });
    assert.deepEqual((await call({ url: '/welcome', headers: { cookie: `rvm_session=${adaToken}` } })).json(), { message: 'Welcome back, Ada!' });
  });

  test('GET /members/premium: 401 anonymous, 403 basic plan, 200 premium', async () => {
    assert.equal((await call({ url: '/members/premium' })).status, 401);
    assert.equal((await call({ url: '/members/premium', headers: { authorization: `Bearer ${bobToken}` } })).status, 403);
    const premium = await call({ url: '/members/premium', headers: { authorization: `Bearer ${adaToken}` } });
    assert.equal(premium.status, 200);
    // The guard handed the member on in state.member.
    assert.equal(premium.json().reader, 'Ada');
  });

  test('logout revokes the token: the same token is 401 token_revoked afterwards, by Bearer and by cookie', async () => {
    const token = (await login(ADA)).json().token as string;
    const cookie = { cookie: `rvm_session=${token}` };
    assert.equal((await call({ url: '/me', headers: cookie })).status, 200);
    const out = await call({ method: 'POST', url: '/auth/logout', headers: cookie });
    assert.equal(out.status, 204, out.body);
    for (const headers of [cookie, { authorization: `Bearer ${token}` }]) {
      const me = await call({ url: '/me', headers });
      assert.equal(me.status, 401, me.body);
      assert.equal(me.json().code, 'token_revoked');
    }
    assert.deepEqual((await call({ url: '/auth/session', headers: cookie })).json().claims, null, 'jwt_verify refuses it too');
    assert.equal((await call({ url: '/me', headers: { authorization: `Bearer ${adaToken}` } })).status, 200, 'other sessions stay signed in');
  });

  test('register hashes with argon2id; /auth/session verifies and reads expiry; logout deletes the cookie', async () => {
    const reg = await call({ method: 'POST', url: '/auth/register', body: { email: 'New@Example.com', password: 'a long password' } });
    assert.equal(reg.status, 201);
    assert.deepEqual(reg.json(), { email: 'new@example.com', role: 'user', hashed_with: 'argon2id' });
    const session = (await call({ url: '/auth/session', headers: { cookie: `rvm_session=${adaToken}` } })).json();
    assert.equal(session.claims.sub, 'u-ada');
    assert.equal(session.expired, false);
    assert.deepEqual((await call({ url: '/auth/session', headers: { cookie: 'rvm_session=x.y.z' } })).json(), { claims: null, expired: true });
    assert.deepEqual((await call({ url: '/auth/session' })).json(), { claims: null, expired: true });
    const out = await call({ method: 'POST', url: '/auth/logout' });
    assert.equal(out.status, 204);
    assert.match(String(out.headers['set-cookie']), /^rvm_session=; Path=\/; Max-Age=0;/);
  });
});

describe('showcase: log-in attempts are limited', () => {
  /** Attempts per client address a minute, and per account every 15 minutes (auth.rvm). */
  const ATTEMPTS = 10;

  function loginFrom(remoteAddress: string, body: { email: string; password: string }): Promise<InjectResponse> {
    return call({ method: 'POST', url: '/auth/login', body, remoteAddress });
  }

  test(`one address: ${ATTEMPTS} attempts a minute, then 429 with Retry-After`, async () => {
    for (let i = 0; i < ATTEMPTS; i++) {
      assert.equal((await loginFrom('198.51.100.7', { email: `nobody${i}@example.com`, password: 'wrong password' })).status, 401);
    }
    const refused = await loginFrom('198.51.100.7', ADA);
    assert.equal(refused.status, 429, refused.body);
    assert.equal(refused.json().code, 'too_many_requests');
    assert.ok(Number(refused.headers['retry-after']) >= 1);
    assert.equal((await loginFrom('198.51.100.8', ADA)).status, 200, 'another address is not held up');
  });

  test(`one account: ${ATTEMPTS} wrong passwords from as many addresses, then 429 whatever the address; a right password clears the count`, async () => {
    for (let i = 0; i < ATTEMPTS - 1; i++) assert.equal((await loginFrom(`192.0.2.${i + 1}`, { ...ADA, password: 'wrong password' })).status, 401);
    assert.equal((await loginFrom('192.0.2.50', ADA)).status, 200, 'within the limit, and the count starts over');
    for (let i = 0; i < ATTEMPTS; i++) assert.equal((await loginFrom(`192.0.2.${i + 60}`, { ...ADA, password: 'wrong password' })).status, 401);
    const refused = await loginFrom('192.0.2.99', ADA);
    assert.equal(refused.status, 429, refused.body);
    assert.match(refused.json().error, /for this account/);
    assert.ok(Number(refused.headers['retry-after']) >= 1);
  });
});

test('every answer above matches the OpenAPI document (route, status, media type, JSON schema)', () => {
  answerLog.assertMatchDocument(app);
});
