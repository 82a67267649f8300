/**
 * Social login end to end: a real app server on loopback, its routes calling auth_<p>_login()
 * and auth_<p>_callback(), and a real fake of Google, GitHub and Microsoft (test/support/fake-oauth.ts).
 * The three flows, then every way a callback must fail with its code: forged state, replay,
 * wrong nonce, expired or tampered cookie, provider errors, GitHub's 200-with-error, issuers,
 * a provider down or slow, and an attempt to steer redirect_uri.
 */
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { App } from '../../vm/runtime/app.js';
import { captureLogger, type CaptureLogger } from '../../vm/runtime/log.js';
import type { RunningServer } from '../../vm/runtime/http/server.js';
import { FLOW_TTL_MS, MAX_FLOW_COOKIE_LENGTH, openFlow, sealFlow } from '../../stdlib/auth/social/flow-cookie.js';
import { MAX_PROVIDER_ANSWER_BYTES } from '../../stdlib/auth/social/provider-http.js';
import { MAX_PROVIDER_TIMEOUT_MS, MIN_PROVIDER_TIMEOUT_MS, OAUTH_TIMEOUT_ENV, PROVIDER_TIMEOUT_MS } from '../../stdlib/auth/social/providers.js';
import { MAX_CALLBACK_PARAM_LENGTH } from '../../stdlib/auth/social/login.js';
import { cookieLine, get, pair, type Answer } from '../support/http-client.js';
import {
  FAKE_PEOPLE,
  serveAgainstFake,
  signIn as signInAt,
  socialRoutes,
  startFakeOAuth,
  startFlow as startFlowAt,
  type FakeOAuth,
  type FakeProvider,
} from '../support/fake-oauth.js';

const APP_SECRET = 'a'.repeat(43);

const ROUTES = socialRoutes(['google', 'github', 'microsoft']);

let fake: FakeOAuth;
let app: App;
let server: RunningServer;
let dir: string;
let logger: CaptureLogger;
const env: Record<string, string> = {};
/** The provider timeout the timeout test sets (OAUTH_TIMEOUT_MS): a hung provider is waited for this long. */
const SHORT_PROVIDER_TIMEOUT_MS = 1_500;

before(async () => {
  fake = await startFakeOAuth();
  dir = mkdtempSync(join(tmpdir(), 'rvm-social-'));
  writeFileSync(join(dir, 'social.rvm'), ROUTES);
  env.APP_SECRET = APP_SECRET;
  logger = captureLogger();
  ({ app, server } = await serveAgainstFake(fake, dir, env, logger));
});

after(async () => {
  await server.close();
  await app.close();
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

afterEach(() => fake.reset());

function startFlow(provider: FakeProvider) {
  return startFlowAt(server.url, provider);
}

function signIn(provider: FakeProvider) {
  return signInAt(server.url, provider);
}

function assertCode(answer: Answer, status: number, code: string): void {
  assert.equal(answer.status, status, answer.body);
  assert.equal(answer.json().code, code, answer.body);
}

describe('the three flows', () => {
  test('Google: PKCE S256, state and nonce out; the verified profile back; the cookie scoped, then deleted', async () => {
    const { login, callback } = await signIn('google');
    const location = new URL(login.headers.location!);
    assert.equal(location.origin + location.pathname, `${fake.url}/google/authorize`);
    assert.equal(location.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(location.searchParams.get('redirect_uri'), `${server.url}/auth/google/callback`);
    assert.equal(location.searchParams.get('scope'), 'openid email profile');
    assert.match(location.searchParams.get('nonce')!, /^[A-Za-z0-9_-]{43}$/);
    const set = cookieLine(login, 'rvm_oauth_google');
    assert.match(set, /; Path=\/auth\/google\/callback/);
    assert.match(set, /; HttpOnly/);
    assert.match(set, /; SameSite=Lax/);
    assert.match(set, /; Max-Age=600/);
    assert.doesNotMatch(set, /; Secure/, 'plain http on loopback: a Secure cookie would never come back');
    assert.equal(callback.status, 200, callback.body);
    assert.deepEqual(callback.json(), {
      provider: 'google',
      id: FAKE_PEOPLE.google.sub,
      email: 'ada@example.com',
      email_verified: true,
      name: 'Ada Lovelace',
      avatar_url: 'https://example.com/ada.png',
    });
    assert.match(cookieLine(callback, 'rvm_oauth_google'), /^rvm_oauth_google=; .*Max-Age=0/);
    const tokenRequest = fake.requests.find((r) => r.path === '/google/token')!;
    assert.equal(tokenRequest.form.get('redirect_uri'), `${server.url}/auth/google/callback`);
    assert.match(tokenRequest.form.get('code_verifier')!, /^[A-Za-z0-9_-]{43}$/);
    assert.ok(
      fake.requests.some((r) => r.path === '/google/jwks'),
      'the ID token signature is checked against the JWKS',
    );
  });

  test('GitHub: no nonce; /user then /user/emails (primary and verified) with User-Agent and Accept: application/json', async () => {
    const { login, callback } = await signIn('github');
    const location = new URL(login.headers.location!);
    assert.equal(location.searchParams.get('nonce'), null);
    assert.equal(location.searchParams.get('scope'), 'read:user user:email');
    assert.equal(callback.status, 200, callback.body);
    assert.deepEqual(callback.json(), {
      provider: 'github',
      id: '583231',
      email: 'octo@example.com',
      email_verified: true,
      name: 'The Octocat',
      avatar_url: 'https://example.com/octocat.png',
    });
    const token = fake.requests.find((r) => r.path === '/github/token')!;
    assert.match(String(token.headers.accept), /application\/json/);
    const user = fake.requests.find((r) => r.path === '/github/user')!;
    assert.ok(user.headers['user-agent']);
    assert.ok(fake.requests.some((r) => r.path === '/github/emails'));
  });

  test('GitHub: a public profile e-mail is used without asking /user/emails', async () => {
    fake.behaviour.githubPublicEmail = 'public@example.com';
    const { callback } = await signIn('github');
    assert.equal(callback.json().email, 'public@example.com');
    assert.ok(!fake.requests.some((r) => r.path === '/github/emails'));
  });

  test('Microsoft: the common tenant issuer filled with the token tid; id is tid:oid', async () => {
    const { callback } = await signIn('microsoft');
    assert.equal(callback.status, 200, callback.body);
    assert.deepEqual(callback.json(), {
      provider: 'microsoft',
      id: `${FAKE_PEOPLE.microsoft.tid}:${FAKE_PEOPLE.microsoft.oid}`,
      email: 'grace@example.com',
      email_verified: false,
      name: 'Grace Hopper',
      avatar_url: null,
    });
  });

  test('Microsoft: an issuer naming another tenant than the token tid is refused', async () => {
    fake.behaviour.microsoftIssuer = 'https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47/v2.0';
    assertCode((await signIn('microsoft')).callback, 400, 'oauth_invalid_id_token');
  });

  test("Google's issuer without https:// is accepted; another issuer is not", async () => {
    fake.behaviour.googleIssuer = 'accounts.google.com';
    assert.equal((await signIn('google')).callback.status, 200);
    fake.behaviour.googleIssuer = 'https://accounts.evil.example';
    assertCode((await signIn('google')).callback, 400, 'oauth_invalid_id_token');
  });
});

describe('a callback that must fail', () => {
  test('forged state', async () => {
    const { cookie, callbackUrl } = await startFlow('google');
    const forged = new URL(callbackUrl);
    forged.searchParams.set('state', 'A'.repeat(43));
    assertCode(await get(forged.href, { cookie }), 400, 'oauth_state_mismatch');
    const missing = new URL(callbackUrl);
    missing.searchParams.delete('state');
    assertCode(await get(missing.href, { cookie }), 400, 'oauth_state_mismatch');
  });

  test('replayed callback: with the cookie kept, refused before the provider; without it, cookie missing', async () => {
    const { callback, cookie, callbackUrl } = await signIn('google');
    assert.equal(callback.status, 200);
    const tokenCalls = fake.requests.filter((r) => r.path === '/google/token').length;
    assertCode(await get(callbackUrl, { cookie }), 400, 'oauth_replayed');
    assert.equal(fake.requests.filter((r) => r.path === '/google/token').length, tokenCalls);
    assertCode(await get(callbackUrl), 400, 'oauth_cookie_missing');
  });

  test('a code used once is refused by the provider under a new flow (GitHub: HTTP 200 with error)', async () => {
    const first = await signIn('github');
    assert.equal(first.callback.status, 200);
    const second = await startFlow('github');
    const reused = new URL(second.callbackUrl);
    reused.searchParams.set('code', new URL(first.callbackUrl).searchParams.get('code')!);
    assertCode(await get(reused.href, { cookie: second.cookie }), 400, 'oauth_exchange_failed');
  });

  test('GitHub 200-with-error on wrong client credentials', async () => {
    const saved = env.GITHUB_CLIENT_SECRET!;
    try {
      const flow = await startFlow('github');
      env.GITHUB_CLIENT_SECRET = 'wrong';
      assertCode(await get(flow.callbackUrl, { cookie: flow.cookie }), 400, 'oauth_exchange_failed');
    } finally {
      env.GITHUB_CLIENT_SECRET = saved;
    }
  });

  test('wrong nonce, wrong audience, a key the JWKS does not hold', async () => {
    fake.behaviour.nonce = 'n'.repeat(43);
    assertCode((await signIn('google')).callback, 400, 'oauth_invalid_id_token');
    fake.reset();
    fake.behaviour.audience = 'someone-else';
    assertCode((await signIn('microsoft')).callback, 400, 'oauth_invalid_id_token');
    fake.reset();
    fake.behaviour.foreignKey = true;
    assertCode((await signIn('google')).callback, 400, 'oauth_invalid_id_token');
  });

  test('expired cookie (older than 10 minutes) counts as missing', async () => {
    const { callbackUrl } = await startFlow('google');
    const state = new URL(callbackUrl).searchParams.get('state')!;
    const stale = sealFlow(APP_SECRET, { provider: 'google', state, verifier: 'v'.repeat(43), nonce: 'n'.repeat(43), expiresAt: Date.now() - 1 });
    assertCode(await get(callbackUrl, { cookie: `rvm_oauth_google=${stale}` }), 400, 'oauth_cookie_missing');
  });

  test('tampered cookie, and a cookie of another provider', async () => {
    const { cookie, callbackUrl } = await startFlow('google');
    const value = cookie.slice('rvm_oauth_google='.length);
    const flipped = (value[0] === 'A' ? 'B' : 'A') + value.slice(1);
    assertCode(await get(callbackUrl, { cookie: `rvm_oauth_google=${flipped}` }), 400, 'oauth_cookie_invalid');
    const github = await startFlow('github');
    const crossed = new URL(callbackUrl.replace('/auth/google/', '/auth/github/'));
    assertCode(await get(crossed.href, { cookie: `rvm_oauth_github=${value}` }), 400, 'oauth_cookie_invalid');
    assert.ok(github.cookie);
  });

  test('provider error: access_denied is 403 oauth_denied, another error oauth_provider_error', async () => {
    fake.behaviour.authorizeError = 'access_denied';
    assertCode((await signIn('google')).callback, 403, 'oauth_denied');
    fake.behaviour.authorizeError = 'invalid_scope';
    assertCode((await signIn('microsoft')).callback, 400, 'oauth_provider_error');
  });

  test(`code missing, and longer than MAX_CALLBACK_PARAM_LENGTH (${MAX_CALLBACK_PARAM_LENGTH})`, async () => {
    const atLimit = await startFlow('google');
    const url = new URL(atLimit.callbackUrl);
    url.searchParams.set('code', 'c'.repeat(MAX_CALLBACK_PARAM_LENGTH));
    assertCode(await get(url.href, { cookie: atLimit.cookie }), 400, 'oauth_exchange_failed');
    const over = await startFlow('google');
    const url2 = new URL(over.callbackUrl);
    url2.searchParams.set('code', 'c'.repeat(MAX_CALLBACK_PARAM_LENGTH + 1));
    assertCode(await get(url2.href, { cookie: over.cookie }), 400, 'oauth_code_missing');
  });

  test('an attempt to steer redirect_uri: Host, X-Forwarded-Host and a redirect_uri parameter change nothing', async () => {
    const configured = `${server.url}/auth/google/callback`;
    const login = await get(`${server.url}/auth/google?redirect_uri=https://evil.example/cb`, {
      host: 'evil.example',
      'x-forwarded-host': 'evil.example',
      'x-forwarded-proto': 'https',
    });
    assert.equal(login.status, 302);
    assert.equal(new URL(login.headers.location!).searchParams.get('redirect_uri'), configured);
    assert.match(cookieLine(login, 'rvm_oauth_google'), /; Path=\/auth\/google\/callback/);
    const atProvider = await get(login.headers.location!);
    const back = new URL(atProvider.headers.location!);
    back.searchParams.set('redirect_uri', 'https://evil.example/cb');
    const callback = await get(back.href, { cookie: pair(cookieLine(login, 'rvm_oauth_google')), host: 'evil.example' });
    assert.equal(callback.status, 200, callback.body);
    assert.equal(fake.requests.find((r) => r.path === '/google/token')!.form.get('redirect_uri'), configured);
  });

  test('GOOGLE_REDIRECT_URI wins over PUBLIC_URL', async () => {
    env.GOOGLE_REDIRECT_URI = `${server.url}/login/google/done`;
    try {
      const login = await get(`${server.url}/auth/google`);
      assert.equal(new URL(login.headers.location!).searchParams.get('redirect_uri'), `${server.url}/login/google/done`);
      assert.match(cookieLine(login, 'rvm_oauth_google'), /; Path=\/login\/google\/done/);
    } finally {
      delete env.GOOGLE_REDIRECT_URI;
    }
  });

  test('no token, code or verifier ever reaches the log', async () => {
    const { callbackUrl } = await signIn('google');
    const code = new URL(callbackUrl).searchParams.get('code')!;
    fake.behaviour.nonce = 'x'.repeat(43);
    await signIn('google');
    const text = [...logger.lines, ...logger.errors].join('\n');
    assert.ok(!text.includes(code));
    assert.match(text, /oauth_invalid_id_token/);
  });
});

describe('configuration and providers down', () => {
  test('a provider without client id or secret answers 503 oauth_not_configured', async () => {
    const saved = env.MICROSOFT_CLIENT_ID!;
    delete env.MICROSOFT_CLIENT_ID;
    try {
      assertCode(await get(`${server.url}/auth/microsoft`), 503, 'oauth_not_configured');
      assertCode(await get(`${server.url}/auth/microsoft/callback?code=x&state=y`), 503, 'oauth_not_configured');
    } finally {
      env.MICROSOFT_CLIENT_ID = saved;
    }
  });

  test('a plain-http endpoint off loopback is refused as not configured', async () => {
    const saved = env.GOOGLE_TOKEN_URL!;
    env.GOOGLE_TOKEN_URL = 'http://oauth.example.com/token';
    try {
      assertCode(await get(`${server.url}/auth/google`), 503, 'oauth_not_configured');
    } finally {
      env.GOOGLE_TOKEN_URL = saved;
    }
  });

  test('a redirect URI that is not absolute, or whose path cannot be a cookie Path, is refused as not configured', async () => {
    for (const uri of ['/auth/google/callback', `${server.url}/auth/google;x/callback`, 'ftp://example.com/cb']) {
      env.GOOGLE_REDIRECT_URI = uri;
      try {
        assertCode(await get(`${server.url}/auth/google`), 503, 'oauth_not_configured');
      } finally {
        delete env.GOOGLE_REDIRECT_URI;
      }
    }
  });

  test('a token endpoint that refuses connections answers 502 oauth_provider_unavailable', async () => {
    const saved = env.GITHUB_TOKEN_URL!;
    try {
      const flow = await startFlow('github');
      env.GITHUB_TOKEN_URL = 'http://127.0.0.1:1/token';
      assertCode(await get(flow.callbackUrl, { cookie: flow.cookie }), 502, 'oauth_provider_unavailable');
    } finally {
      env.GITHUB_TOKEN_URL = saved;
    }
  });

  test('a JWKS or userinfo endpoint that is down answers 502 oauth_provider_unavailable', async () => {
    for (const variable of ['GOOGLE_JWKS_URL', 'GOOGLE_USERINFO_URL']) {
      const saved = env[variable]!;
      try {
        const flow = await startFlow('google');
        env[variable] = 'http://127.0.0.1:1/down';
        assertCode(await get(flow.callbackUrl, { cookie: flow.cookie }), 502, 'oauth_provider_unavailable');
      } finally {
        env[variable] = saved;
      }
    }
  });

  test(`MAX_PROVIDER_ANSWER_BYTES (${MAX_PROVIDER_ANSWER_BYTES}): an answer of that size signs in; one byte more fails 502 oauth_provider_answer_too_large, for the token, key set, userinfo and GitHub profile`, async () => {
    const cases = [
      { action: 'token', provider: 'github' },
      { action: 'jwks', provider: 'google' },
      { action: 'userinfo', provider: 'microsoft' },
      { action: 'user', provider: 'github' },
    ] as const;
    const savedJwks = env.GOOGLE_JWKS_URL!;
    let attempt = 0;
    try {
      for (const { action, provider } of cases) {
        // Key sets are cached by URL: a new one each time, so every sign-in fetches it.
        env.GOOGLE_JWKS_URL = `${savedJwks}?attempt=${attempt++}`;
        fake.behaviour.padded = { action, bytes: MAX_PROVIDER_ANSWER_BYTES };
        const atCap = (await signIn(provider)).callback;
        assert.equal(atCap.status, 200, `${action} at the cap: ${atCap.body}`);
        env.GOOGLE_JWKS_URL = `${savedJwks}?attempt=${attempt++}`;
        fake.behaviour.padded = { action, bytes: MAX_PROVIDER_ANSWER_BYTES + 1 };
        const flow = await startFlow(provider);
        assertCode(await get(flow.callbackUrl, { cookie: flow.cookie }), 502, 'oauth_provider_answer_too_large');
      }
    } finally {
      env.GOOGLE_JWKS_URL = savedJwks;
    }
  });

  test(`a token endpoint slower than ${OAUTH_TIMEOUT_ENV} answers 504; just under it succeeds`, async () => {
    // A short timeout of the app's own: the default (PROVIDER_TIMEOUT_MS) is the same code path, 5 s longer.
    env[OAUTH_TIMEOUT_ENV] = String(SHORT_PROVIDER_TIMEOUT_MS);
    try {
      fake.behaviour.tokenDelayMs = SHORT_PROVIDER_TIMEOUT_MS - 750;
      assert.equal((await signIn('github')).callback.status, 200);
      fake.behaviour.tokenDelayMs = SHORT_PROVIDER_TIMEOUT_MS + 500;
      // Garbage collection while waiting: a deadline held only weakly (AbortSignal.any of an
      // AbortSignal.timeout) is collected and never fires; this one must.
      setFlagsFromString('--expose-gc');
      const gc = runInNewContext('gc') as () => void;
      const collector = setInterval(gc, 100);
      try {
        const started = performance.now();
        assertCode((await signIn('github')).callback, 504, 'oauth_provider_timeout');
        assert.ok(performance.now() - started < PROVIDER_TIMEOUT_MS, 'the configured timeout, not the default, ended the wait');
      } finally {
        clearInterval(collector);
      }
    } finally {
      delete env[OAUTH_TIMEOUT_ENV];
    }
  });

  test(`${OAUTH_TIMEOUT_ENV} outside ${MIN_PROVIDER_TIMEOUT_MS}–${MAX_PROVIDER_TIMEOUT_MS} or not whole milliseconds answers 503 oauth_not_configured naming it`, async () => {
    try {
      for (const bad of [String(MIN_PROVIDER_TIMEOUT_MS - 1), String(MAX_PROVIDER_TIMEOUT_MS + 1), '1.5', '2e3', 'soon']) {
        env[OAUTH_TIMEOUT_ENV] = bad;
        const [lines, errors] = [logger.lines.length, logger.errors.length];
        assertCode(await get(`${server.url}/auth/google`), 503, 'oauth_not_configured');
        // The client gets the catalogue's words; the log says what to set.
        const text = [...logger.lines.slice(lines), ...logger.errors.slice(errors)].join('\n');
        assert.match(text, new RegExp(`${OAUTH_TIMEOUT_ENV} must be whole milliseconds`), bad);
      }
      env[OAUTH_TIMEOUT_ENV] = String(MAX_PROVIDER_TIMEOUT_MS);
      assert.equal((await get(`${server.url}/auth/google`)).status, 302);
    } finally {
      delete env[OAUTH_TIMEOUT_ENV];
    }
  });
});

describe('the flow cookie', () => {
  const flow = { provider: 'google' as const, state: 's'.repeat(43), verifier: 'v'.repeat(43), nonce: null, expiresAt: 2_000_000_000_000 };

  test('opens what it sealed, refuses another secret, another provider and the expiry passed', () => {
    const sealed = sealFlow(APP_SECRET, flow);
    assert.deepEqual(openFlow(APP_SECRET, 'google', sealed, flow.expiresAt), flow);
    assert.equal(openFlow('b'.repeat(43), 'google', sealed, 0), 'invalid');
    assert.equal(openFlow(APP_SECRET, 'github', sealed, 0), 'invalid');
    assert.equal(openFlow(APP_SECRET, 'google', sealed, flow.expiresAt + 1), 'expired');
    assert.equal(openFlow(APP_SECRET, 'google', 'no-dot', 0), 'invalid');
    assert.equal(FLOW_TTL_MS, 600_000);
  });

  test(`MAX_FLOW_COOKIE_LENGTH (${MAX_FLOW_COOKIE_LENGTH}): a valid cookie of that length opens, the next longer one is refused`, () => {
    /** A correctly sealed cookie of exactly `length` characters, or null (unpadded base64 never has length 4k+1). */
    const sealedOfLength = (length: number): string | null => {
      for (let n = 0; n < 2 * length; n++) {
        for (let m = 0; m < 3; m++) {
          const sealed = sealFlow(APP_SECRET, { ...flow, state: 's'.repeat(n), verifier: 'v'.repeat(43 + m) });
          if (sealed.length === length) return sealed;
          if (sealed.length > length + 4) return null;
        }
      }
      return null;
    };
    const atLimit = sealedOfLength(MAX_FLOW_COOKIE_LENGTH)!;
    assert.equal(typeof openFlow(APP_SECRET, 'google', atLimit, 0), 'object');
    let over: string | null = null;
    for (let length = MAX_FLOW_COOKIE_LENGTH + 1; over === null; length++) over = sealedOfLength(length);
    assert.ok(over.length <= MAX_FLOW_COOKIE_LENGTH + 3);
    assert.equal(openFlow(APP_SECRET, 'google', over, 0), 'invalid');
  });
});
