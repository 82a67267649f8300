/**
 * CSRF: the token format and the guard's decision as pure functions, then every flow end to end
 * through a real app (csrf_token() from a GET, `guard csrf` on unsafe methods).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { App } from '../../vm/runtime/app.js';
import { loadApp } from '../../tools/host.js';
import { inject, type InjectRequest, type InjectResponse } from '../../vm/runtime/http/inject.js';
import { captureLogger } from '../../vm/runtime/log.js';
import { normalizeOrigin } from '../../plugins/sdk.js';
import { csrfTokenValid, issueCsrfToken, originAccepted, ownOrigin, sessionBinding, signCsrf, submittedToken } from '../../stdlib/crypto/csrf.js';

const SECRET = 'test-app-secret-with-enough-entropy-0123456789';
const HOST = 'localhost:3000';
const OWN = `http://${HOST}`;

describe('csrf tokens (pure)', () => {
  test('a token is nonce.signature, both 43 base64url characters, valid only for its binding and secret', () => {
    const token = issueCsrfToken(SECRET, 'session-a');
    assert.match(token, /^[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{43}$/);
    assert.equal(csrfTokenValid(token, SECRET, 'session-a'), true);
    assert.equal(csrfTokenValid(token, SECRET, 'session-b'), false);
    assert.equal(csrfTokenValid(token, SECRET, ''), false);
    assert.equal(csrfTokenValid(token, 'another-secret', 'session-a'), false);
    assert.notEqual(issueCsrfToken(SECRET, 'session-a'), token);
  });

  test('the signature is HMAC-SHA256(secret, binding + "!" + nonce)', () => {
    const [nonce, signature] = issueCsrfToken(SECRET, 'b').split('.');
    assert.equal(signature, signCsrf(SECRET, 'b', nonce));
    // The separator keeps the binding and the nonce apart: moving a character across it changes the MAC.
    assert.notEqual(signCsrf(SECRET, 'ab', 'c'), signCsrf(SECRET, 'a', 'bc'));
  });

  test('malformed tokens are invalid', () => {
    const token = issueCsrfToken(SECRET, '');
    for (const bad of [null, 42, '', '.', token + 'x', token.replace('.', ''), token.slice(1), `${token.split('.')[0]}.${'A'.repeat(43)}`, ` ${token}`]) {
      assert.equal(csrfTokenValid(bad, SECRET, ''), false, String(bad));
    }
  });

  test('the binding is the bearer token, else the rvm_session cookie, else empty', () => {
    assert.equal(sessionBinding({ headers: { authorization: 'Bearer abc.def' }, cookies: { rvm_session: 'cookie' } }), 'abc.def');
    assert.equal(sessionBinding({ headers: { authorization: 'bearer   xyz' }, cookies: {} }), 'xyz');
    assert.equal(sessionBinding({ headers: { authorization: 'Basic dXNlcg==' }, cookies: { rvm_session: 'cookie' } }), 'cookie');
    assert.equal(sessionBinding({ headers: {}, cookies: { rvm_session: 'cookie' } }), 'cookie');
    assert.equal(sessionBinding({ headers: {}, cookies: {} }), '');
  });

  test('the submitted token: the header first, else _csrf of a form body only', () => {
    const form = 'application/x-www-form-urlencoded';
    assert.equal(submittedToken({ headers: { 'x-csrf-token': 'h' }, body: { _csrf: 'f' } }), 'h');
    assert.equal(submittedToken({ headers: { 'content-type': form }, body: { _csrf: 'f' } }), 'f');
    assert.equal(submittedToken({ headers: { 'content-type': 'multipart/form-data; boundary=x' }, body: { _csrf: 'f' } }), 'f');
    assert.equal(submittedToken({ headers: { 'content-type': 'application/json' }, body: { _csrf: 'f' } }), null);
    assert.equal(submittedToken({ headers: { 'content-type': form }, body: { _csrf: ['f', 'g'] } }), null);
    assert.equal(submittedToken({ headers: { 'x-csrf-token': ['a', 'b'] }, body: null }), null);
    assert.equal(submittedToken({ headers: {}, body: null }), null);
  });

  test('origins: bare scheme://host[:port] only, normalised', () => {
    assert.equal(normalizeOrigin('https://App.Example.com'), 'https://app.example.com');
    assert.equal(normalizeOrigin('https://a.com:443'), 'https://a.com');
    assert.equal(normalizeOrigin('http://a.com:8080'), 'http://a.com:8080');
    for (const bad of ['null', '', 'a.com', 'ftp://a.com', 'https://a.com/path', 'https://u:p@a.com', 'https://a.com?x', 'file:///etc']) {
      assert.equal(normalizeOrigin(bad), null, bad);
    }
  });

  test("the request's own origin: scheme from TLS (or a trusted proxy), host from Host (or X-Forwarded-Host)", () => {
    assert.equal(ownOrigin({ headers: { host: HOST }, secure: false, proxied: false }), OWN);
    assert.equal(ownOrigin({ headers: { host: 'app.com' }, secure: true, proxied: false }), 'https://app.com');
    assert.equal(ownOrigin({ headers: { host: 'internal:3000', 'x-forwarded-host': 'app.com, proxy' }, secure: true, proxied: true }), 'https://app.com');
    assert.equal(ownOrigin({ headers: { host: 'internal:3000', 'x-forwarded-host': 'app.com' }, secure: false, proxied: false }), 'http://internal:3000');
    assert.equal(ownOrigin({ headers: {}, secure: false, proxied: false }), null);
    assert.equal(ownOrigin({ headers: { host: 'evil.com/x' }, secure: false, proxied: false }), null);
  });

  test('the Origin check: absent passes; own or trusted passes; anything else, including "null", fails', () => {
    const trusted = new Set(['https://front.example.com']);
    const check = (origin: string | undefined, host = HOST) =>
      originAccepted({ headers: origin === undefined ? { host } : { host, origin }, secure: false, proxied: false }, trusted);
    assert.equal(check(undefined), true);
    assert.equal(check(OWN), true);
    assert.equal(check('https://front.example.com'), true);
    assert.equal(check('https://evil.com'), false);
    assert.equal(check(`https://${HOST}`), false, 'another scheme is another origin');
    assert.equal(check('http://localhost:3001'), false, 'another port is another origin');
    assert.equal(check('null'), false);
    assert.equal(check(OWN, ''), false, 'no host: the own origin is unknown');
  });
});

const ROUTES = `
route GET /csrf {
  response.ok({ token: csrf_token() })
}

route GET /csrf/twice {
  response.ok({ same: csrf_token() == csrf_token() })
}

route GET /page {
  guard csrf
  response.ok({ page: true })
}

route POST /submit {
  guard csrf
  response.ok({ ok: true })
}

route PUT /submit {
  guard csrf
  response.ok({ ok: true })
}

route PATCH /submit {
  guard csrf
  response.ok({ ok: true })
}

route DELETE /submit {
  guard csrf
  response.ok({ ok: true })
}

route POST /optional {
  guards {
    csrf: optional
  }
  response.ok({ ok: true })
}

route POST /form {
  guard csrf
  validate {
    name: text
  }
  response.ok({ name: body.name })
}

route POST /verify {
  response.ok({ equal: csrf_verify(request.headers['x-a'], request.headers['x-b']) })
}
`;

let dir: string;
let app: App;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rvm-csrf-'));
  writeFileSync(join(dir, 'routes.rvm'), ROUTES);
  mkdirSync(join(dir, '.secrets'));
  writeFileSync(join(dir, '.secrets', 'app_secret'), SECRET + '\n');
  app = await loadApp(dir, { cache: false, logger: captureLogger(), settings: { env: {} } });
});

after(() => {
  app?.close();
  rmSync(dir, { recursive: true, force: true });
});

function call(req: InjectRequest): Promise<InjectResponse> {
  return inject(app, { ...req, headers: { host: HOST, ...req.headers } });
}

function setCookies(res: InjectResponse): string[] {
  const value = res.headers['set-cookie'];
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/** A token from GET /csrf, optionally as some session, and the cookie it came in. */
async function tokenFor(headers: Record<string, string> = {}): Promise<string> {
  const res = await call({ url: '/csrf', headers });
  assert.equal(res.status, 200);
  return res.json().token;
}

function assertRefused(res: InjectResponse): void {
  assert.equal(res.status, 403);
  assert.deepEqual(Object.keys(res.json()).sort(), ['code', 'error']);
  assert.equal(res.json().code, 'csrf_invalid');
}

describe('csrf end to end', () => {
  test('GET issues a token, sets it in rvm_csrf (not HttpOnly, SameSite=Lax, Path=/) and signs it with the app secret', async () => {
    const res = await call({ url: '/csrf' });
    const token = res.json().token;
    assert.equal(csrfTokenValid(token, SECRET, ''), true);
    const cookies = setCookies(res);
    assert.equal(cookies.length, 1);
    const cookie = cookies[0];
    assert.ok(cookie.startsWith(`rvm_csrf=${token};`), cookie);
    assert.match(cookie, /; Path=\/(;|$)/);
    assert.match(cookie, /; SameSite=Lax/);
    assert.doesNotMatch(cookie, /HttpOnly/i);
    assert.doesNotMatch(cookie, /Secure/i, 'plain HTTP: no Secure, so development on localhost works');
  });

  test('GET /_app/csrf (for the API reference) issues the same token with no-store', async () => {
    const res = await call({ url: '/_app/csrf', headers: { cookie: 'rvm_session=alice' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(csrfTokenValid(res.json().token, SECRET, 'alice'), true);
    assert.ok(setCookies(res)[0]!.startsWith(`rvm_csrf=${res.json().token};`));
  });

  test('over HTTPS the cookie is Secure', async () => {
    const res = await call({ url: '/csrf', encrypted: true });
    assert.match(setCookies(res)[0], /; Secure/);
  });

  test('a still-valid cookie is reused (several tabs keep working); csrf_token() is stable within a request', async () => {
    const token = await tokenFor();
    const again = await call({ url: '/csrf', headers: { cookie: `rvm_csrf=${token}` } });
    assert.equal(again.json().token, token);
    assert.deepEqual(setCookies(again), []);
    const twice = await call({ url: '/csrf/twice' });
    assert.equal(twice.json().same, true);
    assert.equal(setCookies(twice).length, 1);
  });

  test('a cookie from another session is replaced by a token for this one', async () => {
    const alice = await tokenFor({ cookie: 'rvm_session=alice' });
    const res = await call({ url: '/csrf', headers: { cookie: `rvm_session=bob; rvm_csrf=${alice}` } });
    const bob = res.json().token;
    assert.notEqual(bob, alice);
    assert.equal(csrfTokenValid(bob, SECRET, 'bob'), true);
    assert.equal(setCookies(res).length, 1);
  });

  test('POST, PUT, PATCH and DELETE with the token in X-CSRF-Token and the cookie pass', async () => {
    const token = await tokenFor();
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const res = await call({ method, url: '/submit', headers: { cookie: `rvm_csrf=${token}`, 'x-csrf-token': token } });
      assert.equal(res.status, 200, method);
      assert.deepEqual(res.json(), { ok: true });
    }
  });

  test('without the header, without the cookie, or with neither: 403 csrf_invalid', async () => {
    const token = await tokenFor();
    assertRefused(await call({ method: 'POST', url: '/submit' }));
    assertRefused(await call({ method: 'POST', url: '/submit', headers: { cookie: `rvm_csrf=${token}` } }));
    assertRefused(await call({ method: 'POST', url: '/submit', headers: { 'x-csrf-token': token } }));
    assertRefused(await call({ method: 'DELETE', url: '/submit', headers: { cookie: `rvm_csrf=${token}`, 'x-csrf-token': '' } }));
  });

  test('a header that does not match the cookie is refused, even when both are valid tokens', async () => {
    const a = await tokenFor();
    const b = await tokenFor();
    assertRefused(await call({ method: 'POST', url: '/submit', headers: { cookie: `rvm_csrf=${a}`, 'x-csrf-token': b } }));
  });

  test('a forged signature is refused (the unsigned double submit an attacker could plant)', async () => {
    const [nonce] = (await tokenFor()).split('.');
    const forged = `${nonce}.${'A'.repeat(43)}`;
    assertRefused(await call({ method: 'POST', url: '/submit', headers: { cookie: `rvm_csrf=${forged}`, 'x-csrf-token': forged } }));
    const wrongSecret = issueCsrfToken('not-the-app-secret', '');
    assertRefused(await call({ method: 'POST', url: '/submit', headers: { cookie: `rvm_csrf=${wrongSecret}`, 'x-csrf-token': wrongSecret } }));
    const plain = 'attacker-chosen-value';
    assertRefused(await call({ method: 'POST', url: '/submit', headers: { cookie: `rvm_csrf=${plain}`, 'x-csrf-token': plain } }));
  });

  test("another session's token is refused; the session's own passes", async () => {
    const alice = await tokenFor({ cookie: 'rvm_session=alice' });
    assertRefused(await call({ method: 'POST', url: '/submit', headers: { cookie: `rvm_session=bob; rvm_csrf=${alice}`, 'x-csrf-token': alice } }));
    assertRefused(await call({ method: 'POST', url: '/submit', headers: { cookie: `rvm_csrf=${alice}`, 'x-csrf-token': alice } }));
    const ok = await call({ method: 'POST', url: '/submit', headers: { cookie: `rvm_session=alice; rvm_csrf=${alice}`, 'x-csrf-token': alice } });
    assert.equal(ok.status, 200);
  });

  test('a request authenticating with a Bearer header carries no ambient credential: it passes without a token, whatever its cookies', async () => {
    for (const authorization of ['Bearer token-1', 'bearer  token-2 ']) {
      assert.equal((await call({ method: 'POST', url: '/submit', headers: { authorization } })).status, 200, authorization);
      const withSession = await call({
        method: 'DELETE',
        url: '/submit',
        headers: { authorization, cookie: 'rvm_session=alice; rvm_csrf=stale', origin: 'https://elsewhere.example' },
      });
      assert.equal(withSession.status, 200, authorization);
    }
    // A form with the bearer header is not held for its _csrf field: the guard decides before the body.
    const form = await call({
      method: 'POST',
      url: '/submit',
      headers: { authorization: 'Bearer t', 'content-type': 'application/x-www-form-urlencoded' },
      body: 'name=x',
    });
    assert.equal(form.status, 200);
    // Another scheme, an empty bearer or a session cookie alone is no token authentication: the full check.
    const others: Record<string, string>[] = [
      { authorization: 'Basic dXNlcjpwYXNz' },
      { authorization: 'Bearer' },
      { authorization: 'Bearer ' },
      { cookie: 'rvm_session=alice' },
    ];
    for (const headers of others) {
      assertRefused(await call({ method: 'POST', url: '/submit', headers }));
    }
  });

  test('the form field _csrf of a urlencoded or multipart body counts; of a JSON body it does not', async () => {
    const token = await tokenFor();
    const cookie = `rvm_csrf=${token}`;
    const urlencoded = await call({
      method: 'POST',
      url: '/form',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: `name=Ada&_csrf=${encodeURIComponent(token)}`,
    });
    assert.equal(urlencoded.status, 200);
    assert.deepEqual(urlencoded.json(), { name: 'Ada' }, '_csrf is not a declared field and is dropped from body');

    const form = new FormData();
    form.append('name', 'Grace');
    form.append('_csrf', token);
    const multipart = await call({ method: 'POST', url: '/form', headers: { cookie }, body: form });
    assert.equal(multipart.status, 200);
    assert.deepEqual(multipart.json(), { name: 'Grace' });

    assertRefused(await call({ method: 'POST', url: '/form', headers: { cookie }, body: { name: 'Eve', _csrf: token } }));
    assertRefused(
      await call({
        method: 'POST',
        url: '/form',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: `name=Eve&_csrf=${encodeURIComponent(token)}&_csrf=${encodeURIComponent(token)}`,
      }),
    );
  });

  test('the guard runs before validation: a bad body without a token is 403, not 422', async () => {
    assertRefused(await call({ method: 'POST', url: '/form', body: {} }));
  });

  test('a cross-origin Origin is refused even with a valid token; the own origin passes', async () => {
    const token = await tokenFor();
    const headers = { cookie: `rvm_csrf=${token}`, 'x-csrf-token': token };
    assertRefused(await call({ method: 'POST', url: '/submit', headers: { ...headers, origin: 'https://evil.example' } }));
    assertRefused(await call({ method: 'POST', url: '/submit', headers: { ...headers, origin: 'null' } }));
    assertRefused(await call({ method: 'POST', url: '/submit', headers: { ...headers, origin: `https://${HOST}` } }));
    assert.equal((await call({ method: 'POST', url: '/submit', headers: { ...headers, origin: OWN } })).status, 200);
    assert.equal((await call({ method: 'POST', url: '/submit', headers: { ...headers, origin: `https://${HOST}` }, encrypted: true })).status, 200);
  });

  test('safe methods pass a csrf-guarded route without any token', async () => {
    assert.equal((await call({ url: '/page' })).status, 200);
    assert.equal((await call({ method: 'HEAD', url: '/page' })).status, 200);
    assert.equal((await call({ url: '/page', headers: { origin: 'https://evil.example' } })).status, 200);
  });

  test('csrf: optional checks like required', async () => {
    assertRefused(await call({ method: 'POST', url: '/optional' }));
    const token = await tokenFor();
    assert.equal((await call({ method: 'POST', url: '/optional', headers: { cookie: `rvm_csrf=${token}`, 'x-csrf-token': token } })).status, 200);
  });

  test('csrf_verify: constant-time equality of two non-empty texts', async () => {
    const verify = async (headers: Record<string, string>) => (await call({ method: 'POST', url: '/verify', headers })).json().equal;
    assert.equal(await verify({ 'x-a': 'tok', 'x-b': 'tok' }), true);
    assert.equal(await verify({ 'x-a': 'tok', 'x-b': 'tok2' }), false);
    assert.equal(await verify({ 'x-a': 'tok' }), false);
    assert.equal(await verify({}), false);
    assert.equal(await verify({ 'x-a': '', 'x-b': '' }), false);
  });
});

describe('csrf config: csrf.trustedOrigins', () => {
  test('a listed origin passes the Origin check behind a proxy; a malformed entry fails the load', async () => {
    const appDir = mkdtempSync(join(tmpdir(), 'rvm-csrf-cfg-'));
    try {
      writeFileSync(
        join(appDir, 'routes.rvm'),
        'route POST /x {\n  guard csrf\n  response.ok({ ok: true })\n}\nroute GET /t { response.ok({ t: csrf_token() }) }\n',
      );
      writeFileSync(join(appDir, 'rvm.config.json'), JSON.stringify({ csrf: { trustedOrigins: ['https://front.example.com'] } }));
      const configured = await loadApp(appDir, { cache: false, logger: captureLogger(), settings: { env: { APP_SECRET: SECRET } } });
      try {
        const token = issueCsrfToken(SECRET, '');
        const headers = { host: 'internal:8080', cookie: `rvm_csrf=${token}`, 'x-csrf-token': token };
        assert.equal((await inject(configured, { method: 'POST', url: '/x', headers: { ...headers, origin: 'https://front.example.com' } })).status, 200);
        assert.equal((await inject(configured, { method: 'POST', url: '/x', headers: { ...headers, origin: 'https://other.example.com' } })).status, 403);
        const issued = (await inject(configured, { url: '/t' })).json().t;
        assert.equal(csrfTokenValid(issued, SECRET, ''), true, 'APP_SECRET from the environment signs');
      } finally {
        configured.close();
      }
      writeFileSync(join(appDir, 'rvm.config.json'), JSON.stringify({ csrf: { trustedOrigins: ['front.example.com'] } }));
      await assert.rejects(loadApp(appDir, { cache: false, logger: captureLogger() }), (e: unknown) => (e as { code?: string }).code === 'E_PLUGIN_SETUP');
    } finally {
      rmSync(appDir, { recursive: true, force: true });
    }
  });
});
