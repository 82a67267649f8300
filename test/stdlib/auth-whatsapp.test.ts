/**
 * WhatsApp one-time codes (stdlib/auth/whatsapp.ts) against a fake Cloud API on loopback: both
 * message shapes, single use, attempts, expiry (injected clock), the resend throttle, binding to
 * the number, concurrent verifies, Cloud API error mapping, the three timeouts, development
 * versus production, E.164 normalisation, and no code in a production log line.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { definePlugin, RvmError } from '../../plugins/sdk.js';
import type { AppSettings, KeyValueStore, Value } from '../../plugins/sdk.js';
import { TEST_APP, fakeContext, loadForTest, type FakeContext } from '../../plugins/testing.js';
import { createSecretSource } from '../../vm/runtime/secrets.js';
import { createInProcessStore } from '../../vm/runtime/stores/memory.js';
import {
  CAP_WINDOW_MS,
  CODE_TTL_MS,
  MAX_ATTEMPTS,
  MAX_GUESSES_PER_HOUR,
  MAX_SENDS_PER_HOUR,
  MAX_TEMPLATE_LENGTH,
  RESEND_INTERVAL_MS,
  registerWhatsApp,
  type WhatsAppOptions,
} from '../../stdlib/auth/whatsapp.js';
import { BODY_TIMEOUT_MS, CONNECT_TIMEOUT_MS, DEFAULT_TIMEOUTS, HEADERS_TIMEOUT_MS, WHATSAPP_DEFAULT_API_URL } from '../../stdlib/auth/whatsapp-api.js';
import { MAX_PHONE_DIGITS, MAX_PHONE_INPUT, MIN_PHONE_DIGITS, normalizePhone } from '../../stdlib/auth/phone.js';
import { auth } from '../../stdlib/auth/index.js';
import { startFakeWhatsApp, startSilentServer, type FakeWhatsApp } from '../support/fake-whatsapp.js';

const APP_SECRET = 'test-app-secret-0123456789abcdefghijklmnop';
const T0 = 1_800_000_000_000;
const ADA = '+16505551234';
const BOB = '+447946095800';
const TEMPLATE = 'Your sign-in code is {code}. It expires in 5 minutes.';

interface Harness {
  clock: { t: number };
  app: AppSettings;
  store: KeyValueStore;
  /** A fresh context on the shared store. */
  ctx(): FakeContext;
  send(phone: Value, template?: Value): Promise<{ result: unknown; ctx: FakeContext }>;
  verify(phone: Value, code: Value): Promise<unknown>;
  /** verify, in a context the test keeps (to read its failures). */
  verifyIn(ctx: FakeContext, phone: Value, code: Value): Promise<unknown>;
}

/** The natives with an injected clock, on one store, for an app with `env` (dev or production). */
async function harness(
  env: Record<string, string>,
  options: { dev?: boolean; timeouts?: WhatsAppOptions['timeouts']; store?: KeyValueStore } = {},
): Promise<Harness> {
  const clock = { t: T0 };
  const plugin = definePlugin({
    name: 'whatsapp-under-test',
    version: '1.0.0',
    setup: (rvm) => registerWhatsApp(rvm, { now: () => clock.t, timeouts: options.timeouts }),
  });
  const app: AppSettings = { ...TEST_APP, dev: options.dev ?? true, secrets: createSecretSource(null, { APP_SECRET, ...env }) };
  const kit = await loadForTest([plugin], app);
  const store = options.store ?? createInProcessStore();
  const ctx = (): FakeContext => ({ ...fakeContext({ app }), store });
  return {
    clock,
    app,
    store,
    ctx,
    async send(phone, template = TEMPLATE) {
      const c = ctx();
      return { result: await kit.callIn(c, 'whatsapp_send_otp', phone, template), ctx: c };
    },
    verify: async (phone, code) => kit.callIn(ctx(), 'whatsapp_verify_otp', phone, code),
    verifyIn: async (c, phone, code) => kit.callIn(c, 'whatsapp_verify_otp', phone, code),
  };
}

function envFor(fake: FakeWhatsApp, extra: Record<string, string> = {}): Record<string, string> {
  return { WHATSAPP_TOKEN: fake.token, WHATSAPP_PHONE_NUMBER_ID: fake.phoneNumberId, WHATSAPP_API_URL: fake.apiUrl, ...extra };
}

/** The code in the last text message the fake received. */
function lastTextCode(fake: FakeWhatsApp): string {
  const m = /\b(\d{6})\b/.exec(fake.messages.at(-1)!.text!);
  assert.ok(m, 'the text message carries a 6-digit code');
  return m[1]!;
}

/** A different 6-digit code. */
function other(code: string, n = 1): string {
  return String((Number(code) + n) % 1_000_000).padStart(6, '0');
}

function assertFailed(ctx: FakeContext, status: number, code: string): void {
  assert.equal(ctx.failures.length, 1, `one coded failure, got ${JSON.stringify(ctx.failures)}`);
  assert.equal(ctx.failures[0]!.status, status);
  assert.equal(ctx.failures[0]!.code, code);
}

let fake: FakeWhatsApp;
before(async () => {
  fake = await startFakeWhatsApp();
});
after(async () => {
  await fake.close();
});

describe('whatsapp_send_otp and whatsapp_verify_otp', () => {
  test('text message: one well-formed message, the answer, and the code verifies once', async () => {
    const h = await harness(envFor(fake));
    const before = fake.messages.length;
    const { result, ctx } = await h.send(ADA);
    assert.equal(fake.messages.length, before + 1);
    const message = fake.messages.at(-1)!;
    assert.equal(message.type, 'text');
    assert.equal(message.to, ADA);
    assert.match(message.text!, /^Your sign-in code is \d{6}\. It expires in 5 minutes\.$/);
    assert.deepEqual(result, { sent: true, message_id: `wamid.fake${fake.messages.length}`, expires_in: 300, resend_in: 30 });
    assert.equal(ctx.failures.length, 0);
    const code = lastTextCode(fake);
    assert.equal(await h.verify(ADA, code), true);
    assert.equal(await h.verify(ADA, code), false, 'a code is used once');
  });

  test('with WHATSAPP_TEMPLATE: the authentication template, code in body and button, language from WHATSAPP_TEMPLATE_LANG', async () => {
    const h = await harness(envFor(fake, { WHATSAPP_TEMPLATE: 'login_code', WHATSAPP_TEMPLATE_LANG: 'pt_BR' }));
    await h.send(ADA);
    const message = fake.messages.at(-1)!;
    assert.equal(message.type, 'template');
    assert.deepEqual(message.template, { name: 'login_code', language: 'pt_BR' });
    assert.match(message.code!, /^\d{6}$/);
    assert.equal(await h.verify(ADA, message.code!), true);

    const en = await harness(envFor(fake, { WHATSAPP_TEMPLATE: 'login_code' }));
    await en.send(ADA);
    assert.deepEqual(fake.messages.at(-1)!.template, { name: 'login_code', language: 'en_US' });
  });

  test('every wrong attempt counts: after 4 wrong the right code still works, after 5 it is dead', async () => {
    const h = await harness(envFor(fake));
    await h.send(ADA);
    let code = lastTextCode(fake);
    for (let i = 1; i < MAX_ATTEMPTS; i++) assert.equal(await h.verify(ADA, other(code, i)), false);
    assert.equal(await h.verify(ADA, code), true);

    // An hour on, so the number's hourly cap on guesses does not interfere.
    h.clock.t += CAP_WINDOW_MS;
    await h.send(ADA);
    code = lastTextCode(fake);
    for (let i = 1; i <= MAX_ATTEMPTS; i++) assert.equal(await h.verify(ADA, other(code, i)), false);
    assert.equal(await h.verify(ADA, code), false, 'dead after 5 wrong attempts');
  });

  test('a code expires after 5 minutes (injected clock)', async () => {
    const h = await harness(envFor(fake));
    await h.send(ADA);
    let code = lastTextCode(fake);
    h.clock.t += CODE_TTL_MS - 1;
    assert.equal(await h.verify(ADA, code), true, 'valid 1 ms before its end');

    h.clock.t += RESEND_INTERVAL_MS;
    await h.send(ADA);
    code = lastTextCode(fake);
    h.clock.t += CODE_TTL_MS;
    assert.equal(await h.verify(ADA, code), false, 'expired at 5 minutes');
  });

  test('resends to one number are throttled for 30 s with Retry-After; a resend replaces the code', async () => {
    const h = await harness(envFor(fake));
    await h.send(ADA);
    const first = lastTextCode(fake);
    const count = fake.messages.length;

    const again = await h.send(ADA);
    assertFailed(again.ctx, 429, 'otp_resend_throttled');
    assert.equal(again.ctx.failures[0]!.headers?.['Retry-After'], '30');
    h.clock.t += RESEND_INTERVAL_MS - 1;
    const late = await h.send(ADA);
    assertFailed(late.ctx, 429, 'otp_resend_throttled');
    assert.equal(late.ctx.failures[0]!.headers?.['Retry-After'], '1');
    assert.equal(fake.messages.length, count, 'nothing sent while throttled');

    await h.send(BOB);
    assert.equal(fake.messages.length, count + 1, 'another number is not throttled');

    h.clock.t += 1;
    const resent = await h.send(ADA);
    assert.equal(resent.ctx.failures.length, 0, 'allowed again at 30 s');
    const second = lastTextCode(fake);
    if (second !== first) assert.equal(await h.verify(ADA, first), false, 'the earlier code is replaced');
    assert.equal(await h.verify(ADA, second), true);
  });

  test('two concurrent sends to one number: one is sent, the other throttled', async () => {
    const h = await harness(envFor(fake));
    const count = fake.messages.length;
    const both = await Promise.all([h.send('+33612345678'), h.send('+33 6 12 34 56 78')]);
    assert.equal(fake.messages.length, count + 1);
    assert.deepEqual(both.map((s) => s.ctx.failures.map((f) => f.code)).sort(), [[], ['otp_resend_throttled']]);
  });

  test("a code is bound to its number: A's code is refused for B (and counts as B's attempt)", async () => {
    const h = await harness(envFor(fake));
    await h.send(ADA);
    const adaCode = lastTextCode(fake);
    await h.send(BOB);
    const bobCode = lastTextCode(fake);
    if (adaCode !== bobCode) assert.equal(await h.verify(BOB, adaCode), false);
    assert.equal(await h.verify(ADA, adaCode), true);
    assert.equal(await h.verify(BOB, bobCode), true);
    assert.equal(await h.verify('+16505550000', adaCode), false, 'a number never sent a code');
  });

  test('the same number written differently is the same number', async () => {
    const h = await harness(envFor(fake));
    await h.send('+1 (650) 555-1234');
    assert.equal(fake.messages.at(-1)!.to, ADA);
    assert.equal(await h.verify('00 1 650 555 1234', lastTextCode(fake)), true);
  });

  test('concurrent verifies of one code: exactly one is true', async () => {
    const h = await harness(envFor(fake));
    await h.send(ADA);
    const code = lastTextCode(fake);
    const results = await Promise.all([h.verify(ADA, code), h.verify(ADA, code)]);
    assert.deepEqual(results.sort(), [false, true]);

    h.clock.t += CAP_WINDOW_MS;
    await h.send(ADA);
    const many = await Promise.all(Array.from({ length: 10 }, () => h.verify(ADA, lastTextCode(fake))));
    assert.equal(many.filter((r) => r === true).length, 1);
  });

  test('concurrent wrong attempts are each counted, never lost', async () => {
    const h = await harness(envFor(fake));
    await h.send(ADA);
    let code = lastTextCode(fake);
    await Promise.all(Array.from({ length: MAX_ATTEMPTS - 1 }, (_, i) => h.verify(ADA, other(code, i + 1))));
    assert.equal(await h.verify(ADA, code), true, 'four counted, the fifth try is still allowed');

    h.clock.t += CAP_WINDOW_MS;
    await h.send(ADA);
    code = lastTextCode(fake);
    await Promise.all(Array.from({ length: MAX_ATTEMPTS }, (_, i) => h.verify(ADA, other(code, i + 1))));
    assert.equal(await h.verify(ADA, code), false, 'five counted: dead');
  });

  test(`brute force: new codes and guesses per number are capped per hour (MAX_SENDS_PER_HOUR ${MAX_SENDS_PER_HOUR}, MAX_GUESSES_PER_HOUR ${MAX_GUESSES_PER_HOUR}), across codes, with Retry-After`, async () => {
    const h = await harness(envFor(fake));
    const started = h.clock.t;
    // Resending every 30 s used to give five guesses per code, 600 an hour.
    const sendAnswers: (string | undefined)[][] = [];
    const verifyAnswers: unknown[] = [];
    for (let round = 0; round < MAX_SENDS_PER_HOUR + 1; round++) {
      const sent = await h.send(ADA);
      sendAnswers.push(sent.ctx.failures.map((f) => f.code));
      if (sent.ctx.failures.length > 0) {
        assert.equal(sent.ctx.failures[0]!.headers?.['Retry-After'], String((started + CAP_WINDOW_MS - h.clock.t) / 1000));
        break;
      }
      const code = lastTextCode(fake);
      for (let i = 1; i <= 2; i++) {
        const c = h.ctx();
        verifyAnswers.push({ result: await h.verifyIn(c, ADA, other(code, i)), failures: c.failures.map((f) => [f.code, f.headers?.['Retry-After']]) });
      }
      h.clock.t += RESEND_INTERVAL_MS;
    }
    assert.deepEqual(sendAnswers, [[], [], [], [], [], ['otp_resend_throttled']]);
    const judged = verifyAnswers.filter((a) => (a as { failures: unknown[] }).failures.length === 0);
    assert.equal(judged.length, MAX_GUESSES_PER_HOUR, 'guesses judged in the hour');
    assert.ok(judged.every((a) => (a as { result: unknown }).result === false));
    assert.equal(await h.verify(BOB, '123456'), false, 'another number is not capped');
    // The eleventh guess in the hour, even of a fresh code, is refused 429 too_many_attempts.
    h.clock.t = started + CAP_WINDOW_MS - 1;
    const c = h.ctx();
    await h.verifyIn(c, ADA, '123456');
    assertFailed(c, 429, 'too_many_attempts');
    assert.equal(c.failures[0]!.headers?.['Retry-After'], '1');
    h.clock.t += 1;
    assert.ok((await h.send(ADA)).ctx.failures.length === 0, 'an hour after the first, sends again');
  });

  test('malformed input verifies false, never an error', async () => {
    const h = await harness(envFor(fake));
    await h.send(ADA);
    const code = lastTextCode(fake);
    for (const bad of [Number(code), null, '', '12345', '1234567', 'abcdef', '12 345', '١٢٣٤٥٦', `${code}\n0`, { code }, [code]]) {
      assert.equal(await h.verify(ADA, bad as Value), false, JSON.stringify(bad));
    }
    for (const phone of [null, 16505551234, '6505551234', '', 'not a phone', { phone: ADA }]) {
      assert.equal(await h.verify(phone as Value, code), false, JSON.stringify(phone));
    }
    assert.equal(await h.verify(ADA, ` ${code} `), true, 'spaces around the digits are forgiven');
  });

  test('the store holds neither the code nor the number', async () => {
    const inner = createInProcessStore();
    const written: unknown[] = [];
    const recording: KeyValueStore = {
      ...inner,
      set: (k, v, ttl) => void written.push(k, v, ttl),
      compareAndSet(k, expected, next, ttl) {
        written.push(k, next);
        return inner.compareAndSet(k, expected, next, ttl);
      },
    };
    const h = await harness(envFor(fake), { store: recording });
    await h.send(ADA);
    const code = lastTextCode(fake);
    await h.verify(ADA, other(code));
    await h.verify(ADA, code);
    const dump = JSON.stringify(written);
    assert.ok(!dump.includes(code), 'no code in the store');
    assert.ok(!dump.includes('6505551234'), 'no phone number in the store');
    assert.ok(written.includes(undefined), 'the used code was deleted through compareAndSet');
  });

  test('template: must be text holding {code}, at most 4096 characters', async () => {
    const h = await harness(envFor(fake));
    await assert.rejects(h.send(ADA, 'no placeholder'), (e: unknown) => e instanceof RvmError && e.code === 'invalid_argument');
    await assert.rejects(h.send(ADA, 42), (e: unknown) => e instanceof RvmError && e.code === 'type_error');
    const longest = '{code}'.padEnd(MAX_TEMPLATE_LENGTH, '.');
    await assert.rejects(h.send(ADA, longest + '.'), (e: unknown) => e instanceof RvmError && e.code === 'invalid_argument');
    const { ctx } = await h.send(ADA, longest);
    assert.equal(ctx.failures.length, 0);
    assert.equal(fake.messages.at(-1)!.text!.length, MAX_TEMPLATE_LENGTH);
  });

  test('a number without its country code is a 422 invalid_phone, and nothing is sent', async () => {
    const h = await harness(envFor(fake));
    const count = fake.messages.length;
    for (const phone of ['6505551234', '(650) 555-1234', '+1234567', 'call me', '']) {
      const { ctx } = await h.send(phone);
      assertFailed(ctx, 422, 'invalid_phone');
    }
    assert.equal(fake.messages.length, count);
  });
});

describe('Cloud API errors', () => {
  const cases: [number | 'garbage', number, string][] = [
    [131047, 502, 'whatsapp_window_closed'],
    [131026, 422, 'whatsapp_undeliverable'],
    [130429, 429, 'whatsapp_throttled'],
    [131056, 429, 'whatsapp_throttled'],
    [190, 502, 'whatsapp_token_expired'],
    [132000, 502, 'whatsapp_template_error'],
    [132001, 502, 'whatsapp_template_error'],
    [100, 502, 'whatsapp_failed'],
    [131000, 502, 'whatsapp_failed'],
    ['garbage', 502, 'whatsapp_failed'],
  ];
  for (const [answer, status, code] of cases) {
    test(`${answer} → ${status} ${code}, logged without token or code`, async () => {
      const h = await harness(envFor(fake), { dev: false });
      fake.next(answer === 'garbage' ? 'garbage' : { error: answer });
      const { ctx } = await h.send(ADA);
      assertFailed(ctx, status, code);
      const sent = fake.messages.at(-1)!;
      const line = ctx.logs.join('\n');
      if (typeof answer === 'number') assert.match(line, new RegExp(`error ${answer}`));
      assert.ok(!line.includes(fake.token));
      assert.ok(!line.includes(lastTextCode(fake)), 'no code in the log');
      assert.equal(sent.to, ADA);
    });
  }

  test('a wrong token: the fake answers 190 → whatsapp_token_expired', async () => {
    const h = await harness(envFor(fake, { WHATSAPP_TOKEN: 'not-the-token' }), { dev: false });
    const { ctx } = await h.send(ADA);
    assertFailed(ctx, 502, 'whatsapp_token_expired');
    assert.equal(fake.refused.at(-1)!.status, 401);
  });

  test('a wrong phone number id: the fake answers 404 → whatsapp_failed', async () => {
    const h = await harness(envFor(fake, { WHATSAPP_PHONE_NUMBER_ID: '999' }), { dev: false });
    const { ctx } = await h.send(ADA);
    assertFailed(ctx, 502, 'whatsapp_failed');
  });

  test('nothing listening → 503 whatsapp_unavailable', async () => {
    const gone = await startFakeWhatsApp();
    await gone.close();
    const h = await harness(envFor(gone), { dev: false });
    const { ctx } = await h.send(ADA);
    assertFailed(ctx, 503, 'whatsapp_unavailable');
  });

  test('a WHATSAPP_API_URL that is not http(s) → 503 whatsapp_not_configured', async () => {
    const h = await harness(envFor(fake, { WHATSAPP_API_URL: 'ftp://example.invalid' }), { dev: false });
    const { ctx } = await h.send(ADA);
    assertFailed(ctx, 503, 'whatsapp_not_configured');
  });
});

describe('timeouts', () => {
  const LIMIT = 300;
  /**
   * Slack for a loaded machine and for undici's coarse timers (a 300 ms timeout fires after about
   * 1 s here): the timeout must fire after LIMIT and well before the defaults (5 s and 10 s).
   */
  const SLACK = 3_000;

  test('the defaults are the documented constants', () => {
    assert.deepEqual(
      { CONNECT_TIMEOUT_MS, HEADERS_TIMEOUT_MS, BODY_TIMEOUT_MS },
      { CONNECT_TIMEOUT_MS: 5_000, HEADERS_TIMEOUT_MS: 10_000, BODY_TIMEOUT_MS: 5_000 },
    );
    assert.deepEqual(DEFAULT_TIMEOUTS, { connectMs: CONNECT_TIMEOUT_MS, headersMs: HEADERS_TIMEOUT_MS, bodyMs: BODY_TIMEOUT_MS });
    assert.equal(WHATSAPP_DEFAULT_API_URL, 'https://graph.facebook.com/v23.0');
  });

  test('headers: an answer inside the limit is taken; none within it is 504 whatsapp_timeout', async () => {
    const h = await harness(envFor(fake), { dev: false, timeouts: { headersMs: LIMIT } });
    fake.next({ delayMs: LIMIT / 3 });
    assert.equal((await h.send(ADA)).ctx.failures.length, 0);
    fake.next('hang');
    const started = performance.now();
    const { ctx } = await h.send(BOB);
    const took = performance.now() - started;
    assertFailed(ctx, 504, 'whatsapp_timeout');
    assert.ok(took >= LIMIT - 5 && took < LIMIT + SLACK, `took ${took} ms`);
  });

  test('body: headers then silence past the limit is 504 whatsapp_timeout', async () => {
    const h = await harness(envFor(fake), { dev: false, timeouts: { bodyMs: LIMIT } });
    fake.next('stall-body');
    const started = performance.now();
    const { ctx } = await h.send(ADA);
    const took = performance.now() - started;
    assertFailed(ctx, 504, 'whatsapp_timeout');
    assert.ok(took >= LIMIT - 5 && took < LIMIT + SLACK, `took ${took} ms`);
  });

  test('connect: a TLS handshake that never completes is 504 whatsapp_timeout', async () => {
    const silent = await startSilentServer();
    try {
      const h = await harness(envFor(fake, { WHATSAPP_API_URL: silent.url }), { dev: false, timeouts: { connectMs: LIMIT } });
      const started = performance.now();
      const { ctx } = await h.send(ADA);
      const took = performance.now() - started;
      assertFailed(ctx, 504, 'whatsapp_timeout');
      assert.ok(took >= LIMIT - 5 && took < LIMIT + SLACK, `took ${took} ms`);
    } finally {
      await silent.close();
    }
  });

  test("an aborted request stops waiting at once, with the request's reason", async () => {
    const h = await harness(envFor(fake), { dev: false });
    fake.next('hang');
    const c = h.ctx();
    const kit = await loadForTest([definePlugin({ name: 'wa-abort', version: '1.0.0', setup: (rvm) => registerWhatsApp(rvm) })], h.app);
    const reason = new RvmError('client gone', 'client_gone');
    setTimeout(() => c.budget.abort(reason), 50);
    const started = performance.now();
    await assert.rejects(Promise.resolve(kit.callIn(c, 'whatsapp_send_otp', ADA, TEMPLATE)), (e: unknown) => e === reason);
    assert.ok(performance.now() - started < 2_000);
  });
});

describe('development and production', () => {
  test('development without a token: the code is written to the log, not sent, and verifies', async () => {
    const h = await harness({}, { dev: true });
    const count = fake.messages.length;
    const { result, ctx } = await h.send(ADA);
    assert.equal(fake.messages.length, count);
    assert.deepEqual(result, { sent: false, message_id: null, expires_in: 300, resend_in: 30 });
    const m = /code for \+16505551234: (\d{6})$/.exec(ctx.logs.at(-1)!);
    assert.ok(m, ctx.logs.join('\n'));
    assert.equal(await h.verify(ADA, m[1]!), true);
  });

  test('production without a token: 503 whatsapp_not_configured, nothing sent, no code logged', async () => {
    const h = await harness({ WHATSAPP_PHONE_NUMBER_ID: '1' }, { dev: false });
    const { ctx } = await h.send(ADA);
    assertFailed(ctx, 503, 'whatsapp_not_configured');
    assert.ok(ctx.logs.every((l) => !/\d{6}/.test(l)));
  });

  test('production with a token: no log line holds the code, whether the send works or fails', async () => {
    const h = await harness(envFor(fake), { dev: false });
    const lines: string[] = [];
    const ok = await h.send(ADA);
    lines.push(...ok.ctx.logs);
    const codes = [lastTextCode(fake)];
    fake.next({ error: 131047 });
    const failed = await h.send(BOB);
    lines.push(...failed.ctx.logs);
    codes.push(lastTextCode(fake));
    assert.equal(failed.ctx.failures[0]!.code, 'whatsapp_window_closed');
    assert.ok(lines.length >= 1, 'the failure is logged');
    for (const code of codes)
      assert.ok(
        lines.every((l) => !l.includes(code)),
        `${code} in ${lines.join(' | ')}`,
      );
  });
});

describe('E.164 normalisation', () => {
  test('written forms of one number give one E.164 number', () => {
    for (const input of [
      '+16505551234',
      '+1 (650) 555-1234',
      '+1 650 555 1234',
      '+1.650.555.1234',
      '00 1 650 555 1234',
      '0016505551234',
      ' +1-650-555-1234 ',
      '+1 650/555 1234',
    ]) {
      assert.equal(normalizePhone(input), ADA, input);
    }
    assert.equal(normalizePhone('+44 20 7946 0958'), '+442079460958');
  });

  test('no country code, letters, a leading 0 after the prefix, or not text: null', () => {
    for (const input of [
      '6505551234',
      '(650) 555-1234',
      '0650 555 1234',
      '+0 650 555 1234',
      '000 1 650 555 1234',
      '++16505551234',
      '+1 650 555 1234 ext 5',
      '+1 650 CALL NOW',
      '+',
      '',
      '+1\u0660650555123',
    ]) {
      assert.equal(normalizePhone(input), null, input);
    }
    for (const input of [null, undefined, 16505551234, ['+16505551234']]) assert.equal(normalizePhone(input), null);
  });

  test('8 to 15 digits, at the limits', () => {
    assert.equal(normalizePhone('+' + '1'.repeat(MIN_PHONE_DIGITS)), '+' + '1'.repeat(MIN_PHONE_DIGITS));
    assert.equal(normalizePhone('+' + '1'.repeat(MIN_PHONE_DIGITS - 1)), null);
    assert.equal(normalizePhone('+' + '1'.repeat(MAX_PHONE_DIGITS)), '+' + '1'.repeat(MAX_PHONE_DIGITS));
    assert.equal(normalizePhone('+' + '1'.repeat(MAX_PHONE_DIGITS + 1)), null);
  });

  test('input up to MAX_PHONE_INPUT characters is read; longer is refused unread', () => {
    const spaced = '+16505551234'.padEnd(MAX_PHONE_INPUT, ' ');
    assert.equal(normalizePhone(spaced), ADA);
    assert.equal(normalizePhone(spaced + ' '), null);
  });
});

describe('phone_e164', () => {
  test('the native answers the E.164 form, or null for what it refuses', async () => {
    const kit = await loadForTest([auth]);
    assert.equal(await kit.call('phone_e164', '+1 (650) 555-1234'), ADA);
    assert.equal(await kit.call('phone_e164', '00 44 7946 095800'), BOB);
    for (const bad of ['6505551234', null, 42, '+1 650 CALL NOW']) assert.equal(await kit.call('phone_e164', bad as Value), null);
  });
});
