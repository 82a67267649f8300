/**
 * The showcase's two-factor routes (examples/showcase/two-factor.rvm) over inject, for a stored
 * User signed in with a JWT whose `sub` is its id: enrolment with the QR code, the first code
 * turning 2FA on, codes accepted once, backup codes used once with the stored list shortened,
 * and the secret and hashes never in a response.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT } from 'jose';
import { generateSync } from 'otplib';
import type { App } from '../../vm/runtime/app.js';
import { loadApp } from '../../tools/host.js';
import { answerLog, inject, type InjectResponse } from '../support/openapi-answers.js';
import { captureLogger } from '../../vm/runtime/log.js';
import { showcaseCopy } from '../support/showcase.js';

const showcase = showcaseCopy();
const JWT_SECRET = 'showcase-test-key-0123456789abcdef';

let app: App;

before(async () => {
  app = await loadApp(showcase.dir, { cache: false, logger: captureLogger(), settings: { env: { JWT_SECRET } } });
});

after(async () => {
  await app?.close();
  showcase.remove();
});

/** Creates a stored User and answers a bearer header signed in as it. */
async function signedInUser(email: string): Promise<{ id: string; auth: Record<string, string> }> {
  const created = await inject(app, { method: 'POST', url: '/api/users', headers: { 'x-api-key': 'showcase-key' }, body: { email, name: 'Test User' } });
  assert.equal(created.status, 201);
  const id = created.json().id as string;
  const token = await new SignJWT({ sub: id, email })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(JWT_SECRET));
  return { id, auth: { authorization: `Bearer ${token}` } };
}

function post(path: string, auth: Record<string, string>, body: object = {}): Promise<InjectResponse> {
  return inject(app, { method: 'POST', url: path, headers: auth, body });
}

describe('showcase: two-factor authentication', () => {
  let auth: Record<string, string>;
  let id: string;
  let secret: string;
  let backupCodes: string[];
  /** When the enabling code was computed (s). */
  let enabledAt: number;

  before(async () => {
    ({ id, auth } = await signedInUser('totp-ann@example.com'));
  });

  test('without a token every 2FA route is 401', async () => {
    for (const path of ['/2fa/setup', '/2fa/enable', '/2fa/verify', '/2fa/recover']) {
      const res = await post(path, {}, { code: '123456' });
      assert.equal(res.status, 401, path);
      assert.equal(res.json().code, 'unauthorized');
    }
  });

  test('enable before setup is 409; verify and recover while 2FA is off are 409', async () => {
    assert.equal((await post('/2fa/enable', auth, { code: '123456' })).status, 409);
    assert.equal((await post('/2fa/verify', auth, { code: '123456' })).status, 409);
    assert.equal((await post('/2fa/recover', auth, { code: 'aaaaa-aaaaa' })).status, 409);
  });

  test('setup answers the PNG QR code, the otpauth link and the secret; the SVG is served too', async () => {
    const res = await post('/2fa/setup', auth);
    assert.equal(res.status, 200);
    const body = res.json();
    secret = body.secret;
    assert.match(secret, /^[A-Z2-7]{32}$/);
    assert.equal(body.uri, `otpauth://totp/rvm%20showcase:totp-ann%40example.com?secret=${secret}&issuer=rvm%20showcase`);
    assert.match(body.qr, /^data:image\/png;base64,iVBORw0KGgo/);
    const svg = await inject(app, { url: '/2fa/qr.svg', headers: auth });
    assert.equal(svg.status, 200);
    assert.match(String(svg.headers['content-type']), /^image\/svg\+xml/);
    assert.match(svg.body, /^<svg /);
  });

  test('the stored secret never leaves in a response', async () => {
    const me = await inject(app, { url: `/api/users/${id}`, headers: { 'x-api-key': 'showcase-key' } });
    assert.equal(me.status, 200);
    assert.ok(!me.body.includes(secret));
    assert.equal(me.json().totp_secret, undefined);
  });

  test('a wrong code does not enable; the current code enables and answers ten backup codes once', async () => {
    const wrong = await post('/2fa/enable', auth, { code: generateSync({ secret, epoch: Date.now() / 1000 - 3600 }) });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.json().code, 'invalid_code');
    enabledAt = Date.now() / 1000;
    const res = await post('/2fa/enable', auth, { code: generateSync({ secret, epoch: enabledAt }) });
    assert.equal(res.status, 200);
    backupCodes = res.json().backup_codes;
    assert.equal(backupCodes.length, 10);
    for (const code of backupCodes) assert.match(code, /^[a-z2-7]{5}-[a-z2-7]{5}$/);
    assert.equal((await post('/2fa/setup', auth)).status, 409, 'setup again while on');
    assert.equal((await inject(app, { url: '/2fa/qr.svg', headers: auth })).status, 404);
  });

  test('verify: a code from the app is accepted once (the enabling code was already used)', async () => {
    // The enabling code's step is used; the step after it is within the drift window.
    const used = await post('/2fa/verify', auth, { code: generateSync({ secret, epoch: enabledAt }) });
    assert.equal(used.status, 401);
    const next = generateSync({ secret, epoch: enabledAt + 30 });
    assert.equal((await post('/2fa/verify', auth, { code: next })).status, 200);
    const again = await post('/2fa/verify', auth, { code: next });
    assert.equal(again.status, 401);
    assert.equal(again.json().code, 'invalid_code');
    assert.equal((await post('/2fa/verify', auth, { code: 'nope' })).status, 401);
  });

  test('recover: a backup code works once, the stored list is one shorter each time', async () => {
    const first = await post('/2fa/recover', auth, { code: backupCodes[0]!.toUpperCase().replace('-', ' ') });
    assert.equal(first.status, 200);
    assert.deepEqual(first.json(), { verified: true, method: 'backup_code', backup_codes_left: 9 });
    assert.equal((await post('/2fa/recover', auth, { code: backupCodes[0] })).status, 401);
    const second = await post('/2fa/recover', auth, { code: backupCodes[1] });
    assert.equal(second.json().backup_codes_left, 8);
    const stored = await inject(app, { url: `/api/users/${id}`, headers: { 'x-api-key': 'showcase-key' } });
    assert.equal(stored.json().backup_codes, undefined, 'hashes are @hidden too');
  });

  test('two concurrent recoveries with one backup code: one succeeds', async () => {
    const results = await Promise.all([post('/2fa/recover', auth, { code: backupCodes[2] }), post('/2fa/recover', auth, { code: backupCodes[2] })]);
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 401]);
  });

  test('a signed-in token without a stored user is 404 on setup', async () => {
    const token = await new SignJWT({ sub: 'u-ada' })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode(JWT_SECRET));
    assert.equal((await post('/2fa/setup', { authorization: `Bearer ${token}` })).status, 404);
  });
});

describe('showcase: second-factor codes cannot be guessed by trying many', () => {
  /** Wrong codes an account may send in 15 minutes (two-factor.rvm, limit_code_tries). */
  const WRONG_CODES = 10;

  test(`${WRONG_CODES} wrong codes across verify and recover, from many addresses: then 429 with Retry-After, even for the right code; another account is not held up`, async () => {
    const { auth } = await signedInUser('totp-guessed@example.com');
    const secret = (await post('/2fa/setup', auth)).json().secret as string;
    assert.equal((await post('/2fa/enable', auth, { code: generateSync({ secret }) })).status, 200);
    for (let i = 0; i < WRONG_CODES; i++) {
      const path = i % 2 === 0 ? '/2fa/verify' : '/2fa/recover';
      const wrong = await inject(app, { method: 'POST', url: path, headers: auth, body: { code: 'nope' }, remoteAddress: `203.0.113.${i + 1}` });
      assert.equal(wrong.status, 401, `wrong code ${i + 1}: ${wrong.body}`);
    }
    const held = await inject(app, {
      method: 'POST',
      url: '/2fa/verify',
      headers: auth,
      body: { code: generateSync({ secret, epoch: Date.now() / 1000 + 30 }) },
      remoteAddress: '203.0.113.200',
    });
    assert.equal(held.status, 429, held.body);
    assert.equal(held.json().code, 'too_many_requests');
    assert.ok(Number(held.headers['retry-after']) >= 1, `Retry-After: ${held.headers['retry-after']}`);

    const other = await signedInUser('totp-other@example.com');
    const otherSecret = (await post('/2fa/setup', other.auth)).json().secret as string;
    assert.equal((await post('/2fa/enable', other.auth, { code: generateSync({ secret: otherSecret }) })).status, 200, 'the limit is per account');
  });
});

test('every answer above matches the OpenAPI document (route, status, media type, JSON schema)', () => {
  answerLog.assertMatchDocument(app);
});
