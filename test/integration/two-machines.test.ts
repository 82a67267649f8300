/**
 * Two machines (spec/deploy.md, "Many machines"): two `rvm run` servers with their own app folders sharing one Redis
 * (REDIS_URL: ctx.store) and one PostgreSQL (DATABASE_URL: records). A record created on A is
 * read on B; a WhatsApp one-time code sent through A (captured by the fake Cloud API) verifies
 * once on B and is refused on A afterwards; a TOTP code accepted on A is refused on B.
 * Real processes, real servers, real HTTP.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeBase32Secret, hotp } from '../../stdlib/auth/one-time-password.js';
import { startFakeWhatsApp, type FakeWhatsApp } from '../support/fake-whatsapp.js';
import { sendFresh } from '../support/http-client.js';
import { usePostgres } from '../support/postgres.js';
import { useRedis } from '../support/redis.js';
import { startRvmServer, type RvmServer } from '../support/rvm-cluster.js';
import { tempApp } from '../support/temp-app.js';
import { NOTE_ROUTES } from '../support/apps.js';

const TOTP_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
const PHONE = '+16505551234';
/** How long one answer may take on a loaded CI machine (a WhatsApp send is one loopback call). */
const ANSWER_TIMEOUT_MS = 10_000;

const ROUTES = `
${NOTE_ROUTES}

route POST /otp/start {
  validate { phone: text }
  sent = whatsapp_send_otp(body.phone, 'Your code is {code}')
  response.ok({ sent: sent.sent })
}

route POST /otp/verify {
  validate {
    phone: text
    code: text
  }
  response.ok({ accepted: whatsapp_verify_otp(body.phone, body.code) })
}

route POST /totp {
  validate { code: text }
  response.ok({ accepted: totp_verify(body.code, '${TOTP_SECRET}') })
}
`;

/** POSTs `body` to `server`; the status and the JSON answer. */
async function post(server: RvmServer, path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const reply = await sendFresh(`${server.url}${path}`, { method: 'POST', body, timeoutMs: ANSWER_TIMEOUT_MS });
  return { status: reply.status, json: JSON.parse(reply.body) as Record<string, unknown> };
}

describe('two rvm run servers sharing one Redis and one PostgreSQL', () => {
  const redis = useRedis();
  const postgres = usePostgres();
  let fake: FakeWhatsApp;
  let a: RvmServer;
  let b: RvmServer;
  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await fake?.close();
  });
  const apps = [tempApp({ after }, { 'routes.rvm': ROUTES }), tempApp({ after }, { 'routes.rvm': ROUTES })];

  before(async () => {
    fake = await startFakeWhatsApp();
    const env = {
      REDIS_URL: redis().url,
      DATABASE_URL: postgres().url,
      // One app secret on both machines, as one app deployed twice has: codes are bound to it.
      APP_SECRET: 'two-machines-app-secret-0123456789abcdef',
      WHATSAPP_TOKEN: fake.token,
      WHATSAPP_PHONE_NUMBER_ID: fake.phoneNumberId,
      WHATSAPP_API_URL: fake.apiUrl,
    };
    // One after the other: the first creates the tables, the second finds them.
    a = await startRvmServer(apps[0]!, { env });
    b = await startRvmServer(apps[1]!, { env });
    for (const s of [a, b]) assert.match(s.output(), /Store: +Redis/);
  });

  test('a record created on A is read on B', async () => {
    const created = await post(a, '/notes', { title: 'written on A' });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    const read = await sendFresh(`${b.url}/notes/${String(created.json.id)}`, { timeoutMs: ANSWER_TIMEOUT_MS });
    assert.equal(read.status, 200, read.body);
    assert.deepEqual(JSON.parse(read.body), created.json);
  });

  test('a WhatsApp code sent through A verifies once on B and is refused on A afterwards', async () => {
    const count = fake.messages.length;
    const started = await post(a, '/otp/start', { phone: PHONE });
    assert.equal(started.status, 200, JSON.stringify(started.json));
    assert.equal(started.json.sent, true);
    assert.equal(fake.messages.length, count + 1, 'one message through the Cloud API');
    const code = /Your code is (\d{6})/.exec(fake.messages.at(-1)!.text ?? '')?.[1];
    assert.ok(code, JSON.stringify(fake.messages.at(-1)));

    assert.deepEqual((await post(b, '/otp/verify', { phone: PHONE, code })).json, { accepted: true }, 'B knows the code A issued');
    assert.deepEqual((await post(a, '/otp/verify', { phone: PHONE, code })).json, { accepted: false }, 'used on B, so refused on A');
    assert.deepEqual((await post(b, '/otp/verify', { phone: PHONE, code })).json, { accepted: false }, 'and on B again');
  });

  test('a TOTP code accepted on A is refused on B', async () => {
    const code = hotp(decodeBase32Secret(TOTP_SECRET)!, Math.floor(Date.now() / 30_000), 6);
    assert.deepEqual((await post(a, '/totp', { code })).json, { accepted: true });
    assert.deepEqual((await post(b, '/totp', { code })).json, { accepted: false }, 'a replay on the other machine');
  });
});
