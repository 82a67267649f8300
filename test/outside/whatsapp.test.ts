/**
 * Outside check (the WhatsApp fake receives one well-formed message per send): the
 * showcase served by a real `rvm run --prod` process, its WhatsApp settings pointing at the fake
 * Cloud API (written from the Cloud API's documented shapes, importing nothing of rvm), driven
 * over HTTP with node's fetch. Every send is one message of the exact shape, text or template,
 * and its code signs in once.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRvm, type RunningCli } from '../integration/rvm-run.js';
import { showcaseCopy } from '../support/showcase.js';
import { startFakeWhatsApp, type FakeWhatsApp } from '../support/fake-whatsapp.js';

const NUMBERS = ['+16505551234', '+447946095800', '+5511987654321', '+819012345678'];

const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** The showcase under `rvm run --prod`, sending to a fresh fake, with `extra` in its environment. */
async function serve(extra: Record<string, string> = {}): Promise<{ fake: FakeWhatsApp; cli: RunningCli }> {
  const fake = await startFakeWhatsApp();
  cleanups.push(() => fake.close());
  // Served by `rvm run --prod`, which refuses passwords hashed at test cost.
  const copy = showcaseCopy({ passwords: 'production' });
  cleanups.push(() => copy.remove());
  const cli = await startRvm(copy.dir, {
    ...process.env,
    JWT_SECRET: 'outside-test-jwt-key-0123456789abcdef',
    APP_SECRET: 'outside-test-app-secret-0123456789abcdef',
    WHATSAPP_TOKEN: fake.token,
    WHATSAPP_PHONE_NUMBER_ID: fake.phoneNumberId,
    WHATSAPP_API_URL: fake.apiUrl,
    ...extra,
  });
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        if (cli.child.exitCode !== null) return resolve();
        cli.child.once('exit', () => resolve());
        cli.child.kill('SIGTERM');
      }),
  );
  return { fake, cli };
}

async function post(cli: RunningCli, path: string, body: unknown): Promise<Response> {
  return fetch(`${cli.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

describe('WhatsApp codes through rvm run --prod and a fake Cloud API', () => {
  test('text messages: one well-formed message per send, each code signs in once', async () => {
    const { fake, cli } = await serve();
    for (const phone of NUMBERS) {
      const before = fake.messages.length;
      const res = await post(cli, '/auth/whatsapp/start', { phone });
      assert.equal(res.status, 200, await res.clone().text());
      assert.deepEqual(await res.json(), { sent: true, expires_in: 300, resend_in: 30 });
      assert.equal(fake.messages.length, before + 1, 'exactly one message per send');
      const message = fake.messages.at(-1)!;
      assert.equal(message.type, 'text');
      assert.equal(message.to, phone);
      const code = /\b(\d{6})\b/.exec(message.text!)![1]!;
      const signed = await post(cli, '/auth/whatsapp/verify', { phone, code });
      assert.equal(signed.status, 200);
      assert.match(signed.headers.get('set-cookie') ?? '', /^rvm_session=/);
      assert.equal((await post(cli, '/auth/whatsapp/verify', { phone, code })).status, 401, 'refused on replay');
    }
    // A throttled send sends nothing.
    assert.equal((await post(cli, '/auth/whatsapp/start', { phone: NUMBERS[0] })).status, 429);
    assert.equal(fake.messages.length, NUMBERS.length);
    assert.deepEqual(fake.refused, [], 'no malformed request reached the fake');
  });

  test('with WHATSAPP_TEMPLATE: one authentication-template message per send', async () => {
    const { fake, cli } = await serve({ WHATSAPP_TEMPLATE: 'rvm_login', WHATSAPP_TEMPLATE_LANG: 'de' });
    for (const phone of NUMBERS.slice(0, 2)) {
      assert.equal((await post(cli, '/auth/whatsapp/start', { phone })).status, 200);
      const message = fake.messages.at(-1)!;
      assert.equal(message.type, 'template');
      assert.deepEqual(message.template, { name: 'rvm_login', language: 'de' });
      assert.equal((await post(cli, '/auth/whatsapp/verify', { phone, code: message.code })).status, 200);
    }
    assert.equal(fake.messages.length, 2);
    assert.deepEqual(fake.refused, []);
  });

  test('a Cloud API refusal is a coded answer, not a 500', async () => {
    const { fake, cli } = await serve();
    fake.next({ error: 131047 });
    const res = await post(cli, '/auth/whatsapp/start', { phone: NUMBERS[0] });
    assert.equal(res.status, 502);
    assert.equal(((await res.json()) as { code: string }).code, 'whatsapp_window_closed');
  });
});
