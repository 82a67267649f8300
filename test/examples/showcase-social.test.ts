/**
 * The showcase's social login (examples/showcase/social.rvm) against the fake providers over real
 * sockets: a first sign-in creates the User linked by provider and id and sets rvm_session, a
 * second finds the same User, an e-mail taken by another account is a 409 (never linked by
 * e-mail alone), an e-mail the provider has not verified is not used, and the session cookie it
 * sets is one `GET /me` accepts.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { App } from '../../vm/runtime/app.js';
import type { RunningServer } from '../../vm/runtime/http/server.js';
import { showcaseCopy } from '../support/showcase.js';
import { FAKE_PEOPLE, serveAgainstFake, signIn, startFakeOAuth, type FakeOAuth } from '../support/fake-oauth.js';
import { cookieLine, get, pair } from '../support/http-client.js';

let fake: FakeOAuth;
let app: App;
let server: RunningServer;
const copy = showcaseCopy();
const env: Record<string, string> = { JWT_SECRET: 'j'.repeat(43), APP_SECRET: 'k'.repeat(43) };

before(async () => {
  fake = await startFakeOAuth();
  ({ app, server } = await serveAgainstFake(fake, copy.dir, env));
});

after(async () => {
  await server.close();
  await app.close();
  await fake.close();
  copy.remove();
});

describe('showcase social login', () => {
  test('GET /auth/google is a 302 to the provider; the callback creates the User, then finds the same one', async () => {
    const first = await signIn(server.url, 'google');
    assert.equal(first.login.status, 302);
    assert.ok(first.login.headers.location!.startsWith(`${fake.url}/google/authorize?`));
    assert.equal(first.callback.status, 200, first.callback.body);
    const user = first.callback.json();
    assert.deepEqual(
      { email: user.email, name: user.name, provider: user.provider },
      { email: FAKE_PEOPLE.google.email, name: FAKE_PEOPLE.google.name, provider: 'google' },
    );
    const session = pair(cookieLine(first.callback, 'rvm_session'));
    const me = await get(`${server.url}/me`, { cookie: session });
    assert.equal(me.status, 200, me.body);
    assert.equal(me.json().provider_id, FAKE_PEOPLE.google.sub);
    const again = await signIn(server.url, 'google');
    assert.equal(again.callback.json().id, user.id);
  });

  test('GitHub and Microsoft sign in as their own Users', async () => {
    const github = await signIn(server.url, 'github');
    assert.equal(github.callback.status, 200, github.callback.body);
    assert.equal(github.callback.json().email, FAKE_PEOPLE.github.email);
    const microsoft = await signIn(server.url, 'microsoft');
    assert.equal(microsoft.callback.status, 200, microsoft.callback.body);
    assert.equal(microsoft.callback.json().name, FAKE_PEOPLE.microsoft.name);
    assert.notEqual(github.callback.json().id, microsoft.callback.json().id);
  });

  test('linked by provider and id: a changed e-mail still finds the User; another account with a taken e-mail is 409', async () => {
    const before = await signIn(server.url, 'github');
    fake.behaviour.githubPublicEmail = 'renamed@example.com';
    const after = await signIn(server.url, 'github');
    assert.equal(after.callback.json().id, before.callback.json().id);
    fake.reset();
    fake.behaviour.googleSub = '222222222222';
    const other = await signIn(server.url, 'google');
    assert.equal(other.callback.status, 409, other.callback.body);
    assert.equal(other.callback.json().code, 'conflict');
    fake.reset();
  });

  test('an e-mail the provider has not verified is never used: the account gets a placeholder, and a taken address is neither linked nor a conflict', async () => {
    fake.behaviour.googleEmailVerified = false;
    fake.behaviour.googleSub = '333333333333';
    try {
      // FAKE_PEOPLE.google.email belongs to the account the first test created.
      const unverified = await signIn(server.url, 'google');
      assert.equal(unverified.callback.status, 200, unverified.callback.body);
      const user = unverified.callback.json();
      assert.match(String(user.email), /^google-[0-9a-f-]{36}@social\.invalid$/);
      const again = await signIn(server.url, 'google');
      assert.equal(again.callback.json().id, user.id, 'found again by provider and id');
    } finally {
      fake.reset();
    }
  });

  test('a provider without configuration answers 503 oauth_not_configured', async () => {
    const saved = env.GITHUB_CLIENT_SECRET!;
    delete env.GITHUB_CLIENT_SECRET;
    try {
      const answer = await get(`${server.url}/auth/github`);
      assert.equal(answer.status, 503);
      assert.equal(answer.json().code, 'oauth_not_configured');
    } finally {
      env.GITHUB_CLIENT_SECRET = saved;
    }
  });
});
