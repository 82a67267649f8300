/**
 * The showcase's crypto and headers routes (security.rvm, cors/) over inject.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { App } from '../../vm/runtime/app.js';
import { loadApp } from '../../tools/host.js';
import { answerLog, inject, type InjectRequest, type InjectResponse } from '../support/openapi-answers.js';
import { captureLogger } from '../../vm/runtime/log.js';
import { showcaseCopy } from '../support/showcase.js';

const showcase = showcaseCopy();
const SHOWCASE = showcase.dir;
const HOST = '127.0.0.1:3000';
const FRONT = 'http://localhost:5173';

let app: App;

before(async () => {
  // A fixed APP_SECRET: the test writes nothing into the example's .secrets/.
  app = await loadApp(SHOWCASE, { cache: false, logger: captureLogger(), settings: { env: { APP_SECRET: 'showcase-test-secret-0123456789abcdef' } } });
});

after(async () => {
  await app?.close();
  showcase.remove();
});

function call(req: InjectRequest): Promise<InjectResponse> {
  return inject(app, { ...req, headers: { host: HOST, ...req.headers } });
}

describe('showcase: security.rvm', () => {
  test('CSRF: the token from GET /security/csrf lets POST /security/notes through; without it 403 csrf_invalid', async () => {
    const issued = await call({ url: '/security/csrf' });
    assert.equal(issued.status, 200);
    assert.equal(issued.headers['cache-control'], 'no-store');
    const token = issued.json().token;
    assert.match(String(issued.headers['set-cookie']), /^rvm_csrf=/);

    const refused = await call({ method: 'POST', url: '/security/notes', body: { text: 'hi' } });
    assert.equal(refused.status, 403);
    assert.equal(refused.json().code, 'csrf_invalid');

    const saved = await call({ method: 'POST', url: '/security/notes', headers: { cookie: `rvm_csrf=${token}`, 'x-csrf-token': token }, body: { text: 'hi' } });
    assert.equal(saved.status, 201);
    assert.deepEqual(saved.json(), { note: 'hi' });

    const crossSite = await call({
      method: 'POST',
      url: '/security/notes',
      headers: { cookie: `rvm_csrf=${token}`, 'x-csrf-token': token, origin: 'https://evil.example' },
      body: { text: 'hi' },
    });
    assert.equal(crossSite.status, 403);
  });

  test('the HTML form carries the token in _csrf and posting it as a form works', async () => {
    const page = await call({ url: '/security/form' });
    assert.equal(page.status, 200);
    assert.equal(page.headers['x-frame-options'], 'DENY');
    assert.equal(page.headers['content-security-policy'], "default-src 'none'; form-action 'self'; style-src 'self'; frame-ancestors 'none'");
    const token = /name=_csrf value="([^"]+)"/.exec(page.body)?.[1];
    assert.ok(token);
    const posted = await call({
      method: 'POST',
      url: '/security/notes',
      headers: { cookie: `rvm_csrf=${token}`, 'content-type': 'application/x-www-form-urlencoded', origin: `http://${HOST}` },
      body: `_csrf=${encodeURIComponent(token)}&text=from+a+form`,
    });
    assert.equal(posted.status, 201);
    assert.deepEqual(posted.json(), { note: 'from a form' });
  });

  test('encrypt round trip, and tampering refused by decrypt', async () => {
    const res = await call({ method: 'POST', url: '/security/encrypt', body: { text: 'attack at dawn' } });
    assert.equal(res.status, 200);
    const { key, sealed, opened } = res.json();
    assert.equal(opened, 'attack at dawn');
    assert.equal(Buffer.from(key, 'base64').length, 32);
    assert.equal(Buffer.from(sealed, 'base64').length, 12 + 'attack at dawn'.length + 16);

    const ok = await call({ method: 'POST', url: '/security/decrypt', body: { sealed, key } });
    assert.deepEqual(ok.json(), { text: 'attack at dawn' });
    const bytes = Buffer.from(sealed, 'base64');
    bytes[14] ^= 1;
    const tampered = await call({ method: 'POST', url: '/security/decrypt', body: { sealed: bytes.toString('base64'), key } });
    assert.equal(tampered.status, 422);
    assert.match(tampered.json().error, /decrypt_failed/);
    const badKey = await call({ method: 'POST', url: '/security/decrypt', body: { sealed, key: 'short' } });
    assert.match(badKey.json().error, /invalid_key/);
  });

  test('random bytes and a v4 UUID', async () => {
    const body = (await call({ url: '/security/random' })).json();
    assert.equal(Buffer.from(body.bytes, 'base64').length, 16);
    assert.match(body.uuid, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  test('the headers page has the helmet set with a two-year preloaded HSTS', async () => {
    const res = await call({ url: '/security/headers' });
    assert.equal(res.status, 200);
    assert.equal(res.headers['strict-transport-security'], 'max-age=63072000; includeSubDomains; preload');
    assert.equal(res.headers['referrer-policy'], 'no-referrer');
    assert.equal(res.headers['cross-origin-opener-policy'], 'same-origin');
    assert.equal(res.headers['x-served-by'], 'rvm-showcase', 'the root middleware still runs');
  });
});

describe('showcase: cors/', () => {
  test('an allowed front end gets CORS headers with credentials; another origin does not', async () => {
    const res = await call({ url: '/cors/widgets', headers: { origin: FRONT } });
    assert.equal(res.status, 200);
    assert.equal(res.headers['access-control-allow-origin'], FRONT);
    assert.equal(res.headers['access-control-allow-credentials'], 'true');
    assert.equal(res.headers['access-control-expose-headers'], 'X-Total-Count');
    assert.equal(res.headers['vary'], 'Origin');
    const other = await call({ url: '/cors/widgets', headers: { origin: 'https://evil.example' } });
    assert.equal(other.headers['access-control-allow-origin'], undefined);
  });

  test('the preflight for a JSON POST is answered 204 by the folder middleware, then the POST succeeds', async () => {
    const pre = await call({
      method: 'OPTIONS',
      url: '/cors/widgets',
      headers: { origin: FRONT, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers['access-control-allow-methods'], 'GET, POST');
    assert.equal(pre.headers['access-control-allow-headers'], 'Content-Type, X-CSRF-Token');
    assert.equal(pre.headers['access-control-max-age'], '600');
    const created = await call({ method: 'POST', url: '/cors/widgets', headers: { origin: FRONT }, body: { name: 'cog' } });
    assert.equal(created.status, 201);
    assert.deepEqual(created.json(), { id: 3, name: 'cog' });
    assert.equal(created.headers['access-control-allow-origin'], FRONT);
  });
});

test('every answer above matches the OpenAPI document (route, status, media type, JSON schema)', () => {
  answerLog.assertMatchDocument(app);
});
