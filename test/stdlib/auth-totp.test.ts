/**
 * TOTP (spec/plugins/auth.md, "TOTP and backup codes"): the RFC 6238 vectors through the code path totp_verify accepts, agreement with
 * otplib, drift edges, replay refused (an accepted step also refuses every earlier one), two
 * concurrent submissions of one code (one wins, in-process and through an asynchronous store),
 * malformed input false, the otpauth link, the QR code as PNG and SVG, and the limits.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { generateSync } from 'otplib';
import QRCode from 'qrcode';
import { RvmError, SecretText } from '../../plugins/sdk.js';
import type { KeyValueStore, Value } from '../../plugins/sdk.js';
import { fakeContext, laggingStore, testApp } from '../../plugins/testing.js';
import { createInProcessStore } from '../../vm/runtime/stores/memory.js';
import { HotpKey, MAX_SECRET_CHARS, MIN_SECRET_BYTES, decodeBase32Secret, hotp } from '../../stdlib/auth/one-time-password.js';
import { FIRST_LOCKOUT_MS, Lockout, MAX_GUESS_ROUNDS, MAX_LOCKOUT_MS, MAX_WRONG_CODES, WRONG_CODE_WINDOW_MS } from '../../stdlib/auth/attempts.js';
import {
  MAX_OTPAUTH_URI_CHARS,
  TOTP_QR_WIDTH_PX,
  TOTP_RECENT_SECRETS,
  TOTP_REPLAY_MARK_TTL_MS,
  newTotpSecret,
  replayMarkKey,
  totpQr,
  totpUri,
  verifyTotp,
} from '../../stdlib/auth/totp.js';

/** RFC 6238 Appendix B, SHA-1: seed ASCII 12345678901234567890. */
const RFC_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
const RFC_VECTORS: [number, string][] = [
  [59, '94287082'],
  [1111111109, '07081804'],
  [1111111111, '14050471'],
  [1234567890, '89005924'],
  [2000000000, '69279037'],
  [20000000000, '65353130'],
];

/** otplib's code for `secret` at `seconds`: the independent oracle. */
function codeAt(secret: string, seconds: number, digits: 6 | 8 = 6): string {
  return generateSync({ secret, epoch: seconds, digits });
}

function rvmErrorCode(code: string) {
  return (error: unknown) => error instanceof RvmError && error.code === code;
}

describe('totp codes', () => {
  test("the HMAC-SHA-1 of HotpKey is node:crypto's, for keys of every length (hashed past 64 bytes) and counters up to 2^53", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 130 }), fc.maxSafeNat(), fc.integer({ min: 6, max: 8 }), (key, counter, digits) => {
        const message = Buffer.alloc(8);
        message.writeUInt32BE(Math.floor(counter / 0x1_0000_0000), 0);
        message.writeUInt32BE(counter % 0x1_0000_0000, 4);
        const mac = createHmac('sha1', key).update(message).digest();
        const offset = mac[19]! & 0x0f;
        const expected = String((mac.readUInt32BE(offset) & 0x7fffffff) % 10 ** digits).padStart(digits, '0');
        const hmac = new HotpKey(key);
        assert.equal(hmac.code(counter, digits), expected);
        // The key's state is reused: a second counter under the same key is right too.
        assert.equal(hmac.code(counter, digits), expected);
      }),
      { numRuns: 2000 },
    );
  });

  test('the six RFC 6238 SHA-1 vectors, 8 digits, from the code path verify uses and from otplib', () => {
    const key = decodeBase32Secret(RFC_SECRET)!;
    assert.equal(key.toString('latin1'), '12345678901234567890');
    for (const [seconds, expected] of RFC_VECTORS) {
      assert.equal(hotp(key, Math.floor(seconds / 30), 8), expected, `t=${seconds}`);
      assert.equal(codeAt(RFC_SECRET, seconds, 8), expected, `otplib t=${seconds}`);
    }
  });

  test('the 6-digit codes at the RFC times (their last six digits) are accepted by totp_verify at those times', async () => {
    for (const [seconds, expected] of RFC_VECTORS) {
      assert.equal(await verifyTotp(createInProcessStore(), expected.slice(2), RFC_SECRET, seconds * 1000), true, `t=${seconds}`);
      assert.equal(await verifyTotp(createInProcessStore(), expected.slice(2), RFC_SECRET, seconds * 1000 + 5 * 30_000), false, `t=${seconds} + 5 steps`);
    }
  });

  test('agrees with otplib on random secrets and times', () => {
    for (let i = 0; i < 50; i++) {
      const secret = newTotpSecret();
      const seconds = Math.floor(Math.random() * 4_000_000_000);
      assert.equal(hotp(decodeBase32Secret(secret)!, Math.floor(seconds / 30), 6), codeAt(secret, seconds));
    }
  });

  test('a generated secret is 32 Base32 characters, 20 bytes, different each time', () => {
    const a = newTotpSecret();
    assert.match(a, /^[A-Z2-7]{32}$/);
    assert.equal(decodeBase32Secret(a)!.length, 20);
    assert.notEqual(newTotpSecret(), a);
  });
});

describe('totp_verify', () => {
  const secret = RFC_SECRET;
  // Mid-step, so ±1 step is unambiguous.
  const now = 1_700_000_000_000 - (1_700_000_000_000 % 30_000) + 15_000;
  const step = now / 30_000 - 0.5;

  test('drift: codes of steps −1, 0 and +1 are accepted; −2 and +2 refused', async () => {
    for (const delta of [-1, 0, 1]) {
      assert.equal(await verifyTotp(createInProcessStore(), codeAt(secret, (step + delta) * 30), secret, now), true, `delta ${delta}`);
    }
    for (const delta of [-2, 2]) {
      assert.equal(await verifyTotp(createInProcessStore(), codeAt(secret, (step + delta) * 30), secret, now), false, `delta ${delta}`);
    }
  });

  test(`recent secrets (at most TOTP_RECENT_SECRETS, ${TOTP_RECENT_SECRETS}) answer as if computed afresh: across steps, and after more secrets than the cap`, async () => {
    const store = createInProcessStore();
    const other = newTotpSecret();
    assert.equal(await verifyTotp(store, '000000' === codeAt(other, step * 30) ? '111111' : '000000', other, now), false);
    assert.equal(await verifyTotp(store, codeAt(other, step * 30), other, now), true, 'the code of the step it was just refused at');
    const later = now + 3 * 30_000;
    assert.equal(await verifyTotp(store, codeAt(other, step * 30), other, later), false, 'the old window is not used at a later step');
    assert.equal(await verifyTotp(store, codeAt(other, (step + 3) * 30), other, later), true, 'the later step computed afresh');
    for (let i = 0; i <= TOTP_RECENT_SECRETS; i++) await verifyTotp(store, '123456', newTotpSecret(), later);
    assert.equal(await verifyTotp(createInProcessStore(), codeAt(other, (step + 3) * 30), other, later), true, 'dropped from the recent ones, computed again');
  });

  test('edges of a step: the first and last millisecond of a step count as that step', async () => {
    const start = (step + 3) * 30_000;
    assert.equal(await verifyTotp(createInProcessStore(), codeAt(secret, (step + 1) * 30), secret, start), false, 'two steps back');
    assert.equal(await verifyTotp(createInProcessStore(), codeAt(secret, (step + 2) * 30), secret, start), true, 'one step back at the first ms');
    assert.equal(
      await verifyTotp(createInProcessStore(), codeAt(secret, (step + 1) * 30), secret, start - 1),
      true,
      'one step back at the last ms of the step before',
    );
  });

  test('replay: a code accepted once is refused the second time', async () => {
    const store = createInProcessStore();
    const code = codeAt(secret, step * 30);
    assert.equal(await verifyTotp(store, code, secret, now), true);
    assert.equal(await verifyTotp(store, code, secret, now), false);
    assert.equal(await verifyTotp(store, code, secret, now + 30_000), false, 'still within drift a step later');
  });

  test('an accepted step refuses every earlier one, and a later one is still accepted', async () => {
    const store = createInProcessStore();
    assert.equal(await verifyTotp(store, codeAt(secret, step * 30), secret, now), true);
    assert.equal(await verifyTotp(store, codeAt(secret, (step - 1) * 30), secret, now), false);
    assert.equal(await verifyTotp(store, codeAt(secret, (step + 1) * 30), secret, now), true);
    assert.equal(await verifyTotp(store, codeAt(secret, step * 30), secret, now), false);
  });

  test('another spelling of the same secret (lower case, padding) shares the replay mark', async () => {
    const store = createInProcessStore();
    const code = codeAt(secret, step * 30);
    assert.equal(await verifyTotp(store, code, secret, now), true);
    assert.equal(await verifyTotp(store, code, secret.toLowerCase(), now), false);
    assert.equal(await verifyTotp(store, code, secret + '====', now), false);
  });

  test('the store keeps a hash of the secret, never the secret', async () => {
    const store = createInProcessStore();
    assert.equal(await verifyTotp(store, codeAt(secret, step * 30), secret, now), true);
    const key = replayMarkKey(decodeBase32Secret(secret)!);
    assert.equal((store.get(key) as { step: number }).step, step);
    assert.ok(!key.includes(secret) && !key.includes('12345678901234567890'));
    assert.ok(!JSON.stringify(store.get(key)).includes(secret));
  });

  test('two concurrent submissions of one code: exactly one is accepted', async () => {
    const store = createInProcessStore();
    const code = codeAt(secret, step * 30);
    const results = await Promise.all([verifyTotp(store, code, secret, now), verifyTotp(store, code, secret, now)]);
    assert.deepEqual(results.sort(), [false, true]);
    assert.equal(results.filter((r) => r === true).length, 1);
  });

  test('twenty concurrent submissions through an asynchronous store (as a shared one answers): exactly one', async () => {
    const store = laggingStore();
    const code = codeAt(secret, step * 30);
    const results = await Promise.all(Array.from({ length: 20 }, () => verifyTotp(store, code, secret, now)));
    assert.equal(results.filter((r) => r === true).length, 1);
    // The others are replays, counted, or refused for losing the race: never a second acceptance.
    assert.ok(results.every((r) => typeof r === 'boolean' || r instanceof Lockout));
  });

  test('racing codes of different steps: the later step wins over an earlier one already stored', async () => {
    const store = laggingStore();
    const results = await Promise.all([
      verifyTotp(store, codeAt(secret, (step - 1) * 30), secret, now),
      verifyTotp(store, codeAt(secret, (step + 1) * 30), secret, now),
    ]);
    assert.equal(results[1], true, String(results[1]));
    assert.equal(await verifyTotp(store, codeAt(secret, step * 30), secret, now), false, 'step 0 after step +1 was accepted');
  });

  test(`after MAX_GUESS_ROUNDS (${MAX_GUESS_ROUNDS}) lost compareAndSets the guess is refused unjudged, right or wrong`, async () => {
    for (const code of [codeAt(secret, step * 30), '000000' === codeAt(secret, step * 30) ? '111111' : '000000']) {
      let attempts = 0;
      const store: KeyValueStore = {
        ...createInProcessStore(),
        compareAndSet: () => {
          attempts++;
          return false;
        },
      };
      assert.ok((await verifyTotp(store, code, secret, now)) instanceof Lockout);
      assert.equal(attempts, MAX_GUESS_ROUNDS);
    }
  });

  test(`the replay mark lives TOTP_REPLAY_MARK_TTL_MS (${TOTP_REPLAY_MARK_TTL_MS} ms), longer than the code stays acceptable`, async () => {
    let clock = now;
    const store = createInProcessStore({ now: () => clock });
    const code = codeAt(secret, (step + 1) * 30);
    assert.equal(await verifyTotp(store, code, secret, clock), true);
    const key = replayMarkKey(decodeBase32Secret(secret)!);
    clock = now + TOTP_REPLAY_MARK_TTL_MS - 1;
    assert.equal((store.get(key) as { step: number }).step, step + 1);
    clock = now + TOTP_REPLAY_MARK_TTL_MS;
    assert.equal(store.get(key), undefined);
    // The last moment the code would verify without a mark (two steps after its own) is before the mark expired.
    assert.ok((step + 2) * 30_000 + 29_999 < now + TOTP_REPLAY_MARK_TTL_MS);
    assert.equal(await verifyTotp(store, code, secret, clock), false, 'the clock alone refuses it now');
  });

  /** A code of `secret` that is wrong at every step near `at` (ms). */
  const wrongCode = (at: number, n = 0): string => {
    const near = [-1, 0, 1].map((d) => codeAt(secret, (Math.floor(at / 30_000) + d) * 30));
    for (let c = n; ; c++) {
      const code = String(c).padStart(6, '0');
      if (!near.includes(code)) return code;
    }
  };

  test(`MAX_WRONG_CODES (${MAX_WRONG_CODES}) wrong codes lock the secret for FIRST_LOCKOUT_MS (${FIRST_LOCKOUT_MS} ms): the next try, the right code included, is refused`, async () => {
    let clock = now;
    const store = createInProcessStore({ now: () => clock });
    for (let i = 0; i < MAX_WRONG_CODES; i++) assert.equal(await verifyTotp(store, wrongCode(clock, i), secret, clock), false, `wrong code ${i + 1}`);
    const refused = await verifyTotp(store, codeAt(secret, step * 30), secret, clock);
    assert.deepEqual(refused, new Lockout(FIRST_LOCKOUT_MS));
    clock += FIRST_LOCKOUT_MS - 1;
    assert.deepEqual(await verifyTotp(store, codeAt(secret, Math.floor(clock / 30_000) * 30), secret, clock), new Lockout(1));
    clock += 1;
    assert.equal(await verifyTotp(store, codeAt(secret, Math.floor(clock / 30_000) * 30), secret, clock), true, 'the lockout is over');
  });

  test(`MAX_WRONG_CODES - 1 wrong codes do not lock, and a right code resets the count; wrong codes further apart than WRONG_CODE_WINDOW_MS (${WRONG_CODE_WINDOW_MS} ms) start a new count`, async () => {
    let clock = now;
    const store = createInProcessStore({ now: () => clock });
    for (let i = 0; i < MAX_WRONG_CODES - 1; i++) assert.equal(await verifyTotp(store, wrongCode(clock, i), secret, clock), false);
    assert.equal(await verifyTotp(store, codeAt(secret, step * 30), secret, clock), true);
    for (let i = 0; i < MAX_WRONG_CODES - 1; i++) assert.equal(await verifyTotp(store, wrongCode(clock, i), secret, clock), false);
    clock += WRONG_CODE_WINDOW_MS;
    assert.equal(await verifyTotp(store, wrongCode(clock), secret, clock), false, 'the first of a new count');
    assert.equal(await verifyTotp(store, wrongCode(clock, 1), secret, clock), false, 'not locked');
  });

  test(`each lockout that follows within the memory doubles, up to MAX_LOCKOUT_MS (${MAX_LOCKOUT_MS} ms)`, async () => {
    let clock = now;
    const store = createInProcessStore({ now: () => clock });
    const seen: number[] = [];
    for (let lockout = 0; lockout < 9; lockout++) {
      for (let i = 0; i < MAX_WRONG_CODES; i++) assert.equal(await verifyTotp(store, wrongCode(clock, i), secret, clock), false);
      const refused = await verifyTotp(store, wrongCode(clock), secret, clock);
      assert.ok(refused instanceof Lockout);
      seen.push(refused.waitMs);
      clock += refused.waitMs;
    }
    assert.deepEqual(
      seen,
      [1, 2, 4, 8, 16, 32, 60, 60, 60].map((m) => m * 60_000),
    );
  });

  test('fifty concurrent wrong guesses through an asynchronous store: at most MAX_WRONG_CODES are judged, the rest refused', async () => {
    const store = laggingStore();
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => verifyTotp(store, wrongCode(now, i), secret, now)));
    const judged = results.filter((r) => typeof r === 'boolean');
    assert.ok(judged.length <= MAX_WRONG_CODES, `${judged.length} judged`);
    assert.ok(judged.every((r) => r === false));
    assert.ok(results.every((r) => typeof r === 'boolean' || r instanceof Lockout));
    assert.ok((await verifyTotp(store, codeAt(secret, step * 30), secret, now)) instanceof Lockout || judged.length < MAX_WRONG_CODES);
  });

  test('malformed input is false, never an exception', async () => {
    const code = codeAt(secret, step * 30);
    const bad: [Value | undefined, Value | undefined][] = [
      [Number(code), secret],
      [null, secret],
      [undefined, secret],
      [code + '0', secret],
      [code.slice(1), secret],
      [` ${code.slice(1)}`, secret],
      ['12345a', secret],
      ['１２３４５６', secret],
      ['', secret],
      [[code], secret],
      [code, null],
      [code, 42],
      [code, ''],
      [code, 'not base32!'],
      [code, 'JBSWY3DPEHPK3PXP'], // 10 bytes: under the 16-byte minimum
      [code, secret.slice(0, 31) + '1'],
      [code, { secret }],
    ];
    for (const [c, s] of bad) assert.equal(await verifyTotp(createInProcessStore(), c, s, now), false, JSON.stringify([c, s]));
  });

  test('a secret value (secret()/env()) is accepted', async () => {
    assert.equal(await verifyTotp(createInProcessStore(), codeAt(secret, step * 30), new SecretText(secret), now), true);
  });

  test(`secret limits: ${MIN_SECRET_BYTES} bytes and ${MAX_SECRET_CHARS} characters are read, one less / one more is not`, async () => {
    const min = 'A'.repeat(Math.ceil((MIN_SECRET_BYTES * 8) / 5)); // 26 chars = 16 bytes
    assert.equal(decodeBase32Secret(min)!.length, MIN_SECRET_BYTES);
    assert.equal(await verifyTotp(createInProcessStore(), hotp(decodeBase32Secret(min)!, step, 6), min, now), true);
    assert.equal(decodeBase32Secret(min.slice(1)), null);
    const max = 'B'.repeat(MAX_SECRET_CHARS);
    assert.equal(await verifyTotp(createInProcessStore(), hotp(decodeBase32Secret(max)!, step, 6), max, now), true);
    assert.equal(decodeBase32Secret(max + 'B'), null);
  });
});

describe('totp_uri and totp_qr', () => {
  const secret = newTotpSecret();

  test('the otpauth link names issuer and label, encoded', () => {
    const uri = totpUri('totp_uri', secret, 'ann smith@example.com', 'rvm Showcase & Co');
    assert.equal(uri, `otpauth://totp/rvm%20Showcase%20%26%20Co:ann%20smith%40example.com?secret=${secret}&issuer=rvm%20Showcase%20%26%20Co`);
    assert.equal(totpUri('totp_uri', secret.toLowerCase() + '====', 'a', 'b'), `otpauth://totp/b:a?secret=${secret}&issuer=b`);
  });

  test('a bad secret, an empty or colon-bearing label or issuer are invalid_argument; a non-text secret type_error', () => {
    assert.throws(() => totpUri('totp_uri', 'JBSWY3DPEHPK3PXP', 'a', 'b'), rvmErrorCode('invalid_argument'));
    assert.throws(() => totpUri('totp_uri', 'nope!', 'a', 'b'), rvmErrorCode('invalid_argument'));
    assert.throws(() => totpUri('totp_uri', secret, '', 'b'), rvmErrorCode('invalid_argument'));
    assert.throws(() => totpUri('totp_uri', secret, 'a', ''), rvmErrorCode('invalid_argument'));
    assert.throws(() => totpUri('totp_uri', secret, 'a:b', 'c'), rvmErrorCode('invalid_argument'));
    assert.throws(() => totpUri('totp_uri', secret, 'a', 'b:c'), rvmErrorCode('invalid_argument'));
    assert.throws(() => totpUri('totp_uri', 42, 'a', 'b'), rvmErrorCode('type_error'));
  });

  test(`MAX_OTPAUTH_URI_CHARS (${MAX_OTPAUTH_URI_CHARS}): a link of exactly that length is made, one character more is refused`, () => {
    const base = totpUri('totp_uri', secret, 'x', 'y').length - 1;
    const label = 'x'.repeat(MAX_OTPAUTH_URI_CHARS - base);
    assert.equal(totpUri('totp_uri', secret, label, 'y').length, MAX_OTPAUTH_URI_CHARS);
    assert.throws(() => totpUri('totp_uri', secret, label + 'x', 'y'), rvmErrorCode('invalid_argument'));
  });

  test(`the PNG data URL holds a ${TOTP_QR_WIDTH_PX}×${TOTP_QR_WIDTH_PX} PNG of sane size`, async () => {
    const url = await totpQr(fakeContext(), secret, 'ann@example.com', 'rvm', undefined);
    assert.match(url, /^data:image\/png;base64,/);
    const png = Buffer.from(url.slice('data:image/png;base64,'.length), 'base64');
    assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    assert.equal(png.subarray(12, 16).toString('latin1'), 'IHDR');
    assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [TOTP_QR_WIDTH_PX, TOTP_QR_WIDTH_PX]);
    assert.ok(png.length > 300 && png.length < 20_000, `${png.length} bytes`);
    assert.equal(await totpQr(fakeContext(), secret, 'ann@example.com', 'rvm', 'png'), url);
  });

  test("'svg' gives the SVG text whose path is the QR code of the otpauth link", async () => {
    const svg = await totpQr(fakeContext(), secret, 'ann@example.com', 'rvm', 'svg');
    assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    const path = (s: string) => /<path[^>]* d="([^"]+)"[^>]*stroke="#000000"/.exec(s)?.[1] ?? /<path[^>]*stroke="#000000"[^>]* d="([^"]+)"/.exec(s)?.[1];
    const expected = await QRCode.toString(`otpauth://totp/rvm:ann%40example.com?secret=${secret}&issuer=rvm`, {
      type: 'svg',
      errorCorrectionLevel: 'M',
      margin: 4,
    });
    assert.ok(path(svg), 'the modules path');
    assert.equal(path(svg), path(expected));
    const other = await QRCode.toString(`otpauth://totp/rvm:bob%40example.com?secret=${secret}&issuer=rvm`, {
      type: 'svg',
      errorCorrectionLevel: 'M',
      margin: 4,
    });
    assert.notEqual(path(svg), path(other));
  });

  test('another format is invalid_argument', async () => {
    await assert.rejects(totpQr(fakeContext(), secret, 'a', 'b', 'gif'), rvmErrorCode('invalid_argument'));
  });
});

describe('TOTP through routes', () => {
  test(`brute force over HTTP: the ${MAX_WRONG_CODES + 1}th guess is refused 429 too_many_attempts with Retry-After, and so is the right code after it`, async () => {
    const secret = newTotpSecret();
    const app = await testApp({ files: { 'totp.rvm': `route POST /verify {\n  response.ok({ ok: totp_verify(request.body.code, '${secret}') })\n}\n` } });
    try {
      const right = generateSync({ secret });
      const near = [-30, 0, 30].map((d) => generateSync({ secret, epoch: Math.floor(Date.now() / 1000) + d }));
      const guesses: string[] = [];
      for (let c = 0; guesses.length < MAX_WRONG_CODES + 1; c++) {
        const code = String(c).padStart(6, '0');
        if (!near.includes(code)) guesses.push(code);
      }
      guesses.push(right);
      const answers = [];
      for (const code of guesses) {
        const res = await app.inject({ method: 'POST', url: '/verify', body: { code } });
        answers.push({ status: res.status, body: res.json() as Record<string, unknown>, retryAfter: res.headers['retry-after'] });
      }
      for (const a of answers.slice(0, MAX_WRONG_CODES)) assert.deepEqual(a, { status: 200, body: { ok: false }, retryAfter: undefined });
      for (const a of answers.slice(MAX_WRONG_CODES)) {
        assert.equal(a.status, 429, JSON.stringify(a));
        assert.equal(a.body.code, 'too_many_attempts');
        assert.deepEqual(Object.keys(a.body), ['error', 'code']);
        assert.ok(Number(a.retryAfter) > 0 && Number(a.retryAfter) <= FIRST_LOCKOUT_MS / 1000, String(a.retryAfter));
      }
    } finally {
      await app.close();
    }
  });

  test('enrol, verify once, refuse the replay; concurrent requests with one code: one accepted', async () => {
    const app = await testApp({
      files: {
        'totp.rvm': `
route GET /enrol {
  s = totp_secret()
  response.ok({ secret: s, uri: totp_uri(s, 'ann@example.com', 'rvm'), qr: totp_qr(s, 'ann@example.com', 'rvm'), svg: totp_qr(s, 'ann@example.com', 'rvm', 'svg') })
}
route POST /verify {
  response.ok({ ok: totp_verify(request.body.code, request.body.secret) })
}
route GET /bad-format {
  response.ok(totp_qr(totp_secret(), 'a', 'b', 'gif'))
}
`,
      },
    });
    try {
      const enrol = (await app.inject({ url: '/enrol' })).json() as { secret: string; uri: string; qr: string; svg: string };
      assert.match(enrol.secret, /^[A-Z2-7]{32}$/);
      assert.equal(enrol.uri, `otpauth://totp/rvm:ann%40example.com?secret=${enrol.secret}&issuer=rvm`);
      assert.match(enrol.qr, /^data:image\/png;base64,iVBORw0KGgo/);
      assert.match(enrol.svg, /^<svg /);
      const verify = async (body: unknown) => (await app.inject({ method: 'POST', url: '/verify', body: body as object })).json() as { ok: boolean };
      const code = generateSync({ secret: enrol.secret });
      assert.deepEqual(await verify({ code, secret: enrol.secret }), { ok: true });
      assert.deepEqual(await verify({ code, secret: enrol.secret }), { ok: false });
      assert.deepEqual(await verify({ code: 123456, secret: enrol.secret }), { ok: false });
      assert.deepEqual(await verify({ code: null, secret: null }), { ok: false });
      const other = (await app.inject({ url: '/enrol' })).json() as { secret: string };
      const otherCode = generateSync({ secret: other.secret });
      const both = await Promise.all([verify({ code: otherCode, secret: other.secret }), verify({ code: otherCode, secret: other.secret })]);
      assert.equal(both.filter((r) => r.ok).length, 1);
      const bad = await app.inject({ url: '/bad-format' });
      assert.equal(bad.status, 500);
      assert.equal((bad.json() as { code: string }).code, 'invalid_argument');
    } finally {
      await app.close();
    }
  });
});
