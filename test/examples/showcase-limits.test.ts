/**
 * The showcase's limits routes (examples/showcase/limits.rvm) over inject: rate_limit guard and
 * natives, ip, time and method guards, env and secrets.
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
const DEMO_KEY = 'demo-key-never-shown';
const appLog: string[] = [];

let app: App;

before(async () => {
  app = await loadApp(SHOWCASE, {
    cache: false,
    logger: captureLogger(),
    onAppLog: (line) => appLog.push(line),
    settings: { env: { APP_SECRET: 'showcase-test-secret-0123456789abcdef', DEMO_API_KEY: DEMO_KEY, PUBLIC_URL: 'https://shop.test' } },
  });
});

after(async () => {
  await app?.close();
  showcase.remove();
});

function call(req: InjectRequest): Promise<InjectResponse> {
  return inject(app, req);
}

describe('showcase: limits.rvm', () => {
  test('burst: five calls with RateLimit headers, then 429 with Retry-After', async () => {
    const ip = '203.0.113.10';
    for (let i = 0; i < 5; i++) {
      const res = await call({ url: '/limits/burst', remoteAddress: ip });
      assert.equal(res.status, 200);
      assert.equal(res.headers['ratelimit-remaining'], String(4 - i));
      assert.equal(res.headers['ratelimit-policy'], '"default";q=5;w=60');
    }
    const refused = await call({ url: '/limits/burst', remoteAddress: ip });
    assert.equal(refused.status, 429);
    assert.equal(refused.json().code, 'too_many_requests');
    assert.ok(Number(refused.headers['retry-after']) >= 1);
  });

  test('pin: a wrong PIN counts, the right one clears the account counter', async () => {
    const ip = '203.0.113.11';
    const wrong = await call({ method: 'POST', url: '/limits/pin', remoteAddress: ip, body: { account: 'ann', pin: '0000' } });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.headers['ratelimit-remaining'], '4');
    assert.equal((await call({ url: '/limits/pin/ann' })).json().remaining, 9);
    assert.equal((await call({ method: 'POST', url: '/limits/pin', remoteAddress: ip, body: { account: 'ann', pin: '1234' } })).status, 200);
    assert.equal((await call({ url: '/limits/pin/ann' })).json().remaining, 10);
  });

  test('pin: the sixth attempt a minute from one address gets 429 with Retry-After', async () => {
    const ip = '203.0.113.12';
    for (let i = 0; i < 5; i++) await call({ method: 'POST', url: '/limits/pin', remoteAddress: ip, body: { account: `u${i}`, pin: '0000' } });
    const refused = await call({ method: 'POST', url: '/limits/pin', remoteAddress: ip, body: { account: 'u9', pin: '1234' } });
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers['retry-after']) >= 1);
  });

  test('office: local and private addresses only', async () => {
    assert.equal((await call({ url: '/limits/office', remoteAddress: '127.0.0.1' })).status, 200);
    assert.equal((await call({ url: '/limits/office', remoteAddress: 'fd12::1' })).status, 200);
    const refused = await call({ url: '/limits/office', remoteAddress: '203.0.113.1' });
    assert.equal(refused.status, 403);
    assert.equal(refused.json().code, 'ip_forbidden');
  });

  test('business hours: open from 08:00 to 20:00 UTC', async () => {
    const now = new Date();
    const minute = now.getUTCHours() * 60 + now.getUTCMinutes();
    const res = await call({ url: '/limits/business-hours' });
    if (minute >= 8 * 60 && minute < 20 * 60) assert.equal(res.status, 200);
    else assert.equal(res.json().code, 'outside_time_window');
  });

  test('rpc: GET and POST, anything else 405 with Allow', async () => {
    assert.equal((await call({ method: 'POST', url: '/limits/rpc' })).json().method, 'POST');
    const res = await call({ method: 'PUT', url: '/limits/rpc' });
    assert.equal(res.status, 405);
    assert.equal(res.headers['allow'], 'GET, HEAD, POST');
  });

  test('config: the key stays [secret] in the response and the log', async () => {
    const res = await call({ url: '/limits/config' });
    assert.deepEqual(res.json(), { app_name: 'rvm showcase', public_url: 'https://shop.test', has_key: true, key_in_env: true, authorization: '[secret]' });
    assert.ok(appLog.includes('calling the upstream API with [secret]'));
    assert.ok(!appLog.some((l) => l.includes(DEMO_KEY)));
  });
});

test('every answer above matches the OpenAPI document (route, status, media type, JSON schema)', () => {
  answerLog.assertMatchDocument(app);
});
