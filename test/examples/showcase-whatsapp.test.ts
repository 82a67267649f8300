/**
 * The showcase's WhatsApp sign-in (examples/showcase/whatsapp.rvm) over inject, with the Cloud
 * API a fake on loopback: start sends one message, verify signs in (User created by phone, then
 * found again after a restart), wrong and used codes are 401, the throttle and invalid numbers
 * answer their codes, and in development without a token the code is in the log.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { jwtVerify } from 'jose';
import type { App } from '../../vm/runtime/app.js';
import { loadApp } from '../../tools/host.js';
import { answerLog, inject, type InjectResponse } from '../support/openapi-answers.js';
import { captureLogger, type CaptureLogger } from '../../vm/runtime/log.js';
import { showcaseCopy } from '../support/showcase.js';
import { startFakeWhatsApp, type FakeWhatsApp } from '../support/fake-whatsapp.js';

const showcase = showcaseCopy();
const JWT_SECRET = 'showcase-test-key-0123456789abcdef';
const ADA = '+16505551234';

let fake: FakeWhatsApp;
let app: App;

function env(): Record<string, string> {
  return {
    JWT_SECRET,
    APP_SECRET: 'showcase-app-secret-0123456789abcdef',
    WHATSAPP_TOKEN: fake.token,
    WHATSAPP_PHONE_NUMBER_ID: fake.phoneNumberId,
    WHATSAPP_API_URL: fake.apiUrl,
  };
}

async function start(): Promise<App> {
  return loadApp(showcase.dir, { cache: false, logger: captureLogger(), settings: { env: env() } });
}

before(async () => {
  fake = await startFakeWhatsApp();
  app = await start();
});

after(async () => {
  await app?.close();
  await fake?.close();
  showcase.remove();
});

function post(url: string, body: Record<string, string>, target: App = app): Promise<InjectResponse> {
  return inject(target, { method: 'POST', url, body });
}

/** The code of the last message the fake received. */
function lastCode(): string {
  return /\b(\d{6})\b/.exec(fake.messages.at(-1)!.text!)![1]!;
}

describe('showcase: WhatsApp sign-in', () => {
  test('start sends one message; verify creates the User by phone and sets the session cookie', async () => {
    const count = fake.messages.length;
    const res = await post('/auth/whatsapp/start', { phone: '+1 (650) 555-1234' });
    assert.equal(res.status, 200, res.body);
    assert.deepEqual(res.json(), { sent: true, expires_in: 300, resend_in: 30 });
    assert.equal(fake.messages.length, count + 1);
    assert.equal(fake.messages.at(-1)!.to, ADA);
    assert.match(fake.messages.at(-1)!.text!, /^Your rvm showcase sign-in code is \d{6}\./);

    const signed = await post('/auth/whatsapp/verify', { phone: ADA, code: lastCode(), name: 'Ada' });
    assert.equal(signed.status, 200, signed.body);
    const body = signed.json();
    assert.equal(body.created, true);
    assert.equal(body.user.phone, ADA);
    assert.equal(body.user.name, 'Ada');
    assert.match(String(signed.headers['set-cookie']), /^rvm_session=[\w-]+\.[\w-]+\.[\w-]+; Path=\/; Max-Age=3600; HttpOnly; SameSite=Lax$/);
    const { payload } = await jwtVerify(body.token, new TextEncoder().encode(JWT_SECRET), { algorithms: ['HS256'] });
    assert.equal(payload.sub, body.user.id);

    const me = await inject(app, { url: '/me', headers: { cookie: `rvm_session=${body.token}` } });
    assert.equal(me.json().phone, ADA);

    const replay = await post('/auth/whatsapp/verify', { phone: ADA, code: lastCode() });
    assert.equal(replay.status, 401, 'a code signs in once');

    // After a restart (the throttle and codes are in memory, the users in SQLite) the same phone finds the same user.
    await app.close();
    app = await start();
    assert.equal((await post('/auth/whatsapp/start', { phone: '0016505551234' })).status, 200);
    const again = await post('/auth/whatsapp/verify', { phone: '+1 650 555 1234', code: lastCode() });
    assert.equal(again.status, 200, again.body);
    assert.equal(again.json().created, false);
    assert.equal(again.json().user.id, body.user.id);
  });

  test('a wrong code is 401; a second start within 30 s is 429 with Retry-After; a number without country code is 422', async () => {
    const phone = '+447946095800';
    assert.equal((await post('/auth/whatsapp/start', { phone })).status, 200);
    const code = lastCode();
    const wrong = await post('/auth/whatsapp/verify', { phone, code: code === '000000' ? '000001' : '000000' });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.json().code, 'unauthorized');

    const count = fake.messages.length;
    const throttled = await post('/auth/whatsapp/start', { phone });
    assert.equal(throttled.status, 429);
    assert.equal(throttled.json().code, 'otp_resend_throttled');
    assert.ok(Number(throttled.headers['retry-after']) >= 1 && Number(throttled.headers['retry-after']) <= 30);
    assert.equal(fake.messages.length, count);

    const local = await post('/auth/whatsapp/start', { phone: '(650) 555-1234' });
    assert.equal(local.status, 422);
    assert.equal(local.json().code, 'invalid_phone');
    assert.equal((await post('/auth/whatsapp/verify', { phone, code })).status, 200, 'the right code still works after one wrong try');
  });

  test('development without a token: nothing is sent and the code is in the log', async () => {
    const logger: CaptureLogger = captureLogger();
    const lines: string[] = [];
    const dev = await loadApp(showcase.dir, { cache: false, dev: true, logger, onAppLog: (l) => lines.push(l), settings: { env: { JWT_SECRET } } });
    try {
      const count = fake.messages.length;
      const res = await post('/auth/whatsapp/start', { phone: '+33612345678' }, dev);
      assert.equal(res.status, 200, res.body);
      assert.equal(res.json().sent, false);
      assert.equal(fake.messages.length, count);
      const line = [...lines, ...logger.lines].find((l) => l.includes('code for +33612345678'));
      assert.ok(line, [...lines, ...logger.lines].join('\n'));
      const code = /: (\d{6})$/.exec(line)![1]!;
      assert.equal((await post('/auth/whatsapp/verify', { phone: '+33612345678', code }, dev)).status, 200);
    } finally {
      await dev.close();
    }
  });
});

describe('showcase: WhatsApp sign-ins started per address are limited', () => {
  /** Sign-ins one address may start an hour (whatsapp.rvm's guard). */
  const STARTS = 20;

  test(`${STARTS} starts an hour from one address, whatever the numbers; the next is 429 with Retry-After and sends nothing`, async () => {
    const from = (phone: string): Promise<InjectResponse> =>
      inject(app, { method: 'POST', url: '/auth/whatsapp/start', body: { phone }, remoteAddress: '198.51.100.20' });
    // Numbers without a country code: refused (422), sending nothing, and counted all the same.
    for (let i = 0; i < STARTS; i++) assert.equal((await from(`650 555 ${String(1000 + i)}`)).status, 422);
    const count = fake.messages.length;
    const refused = await from('+4915123456789');
    assert.equal(refused.status, 429, refused.body);
    assert.equal(refused.json().code, 'too_many_requests');
    assert.ok(Number(refused.headers['retry-after']) >= 1);
    assert.equal(fake.messages.length, count, 'no message went out');
  });
});

test('every answer above matches the OpenAPI document (route, status, media type, JSON schema)', () => {
  answerLog.assertMatchDocument(app);
});
