/**
 * `http_fetch` (stdlib/fetch) against a local upstream on 127.0.0.1, the only address these tests
 * reach: answers, bodies, secrets (sent in clear, never logged), timeouts, the size cap and the
 * memory charge, redirects, the address checks with and without `outbound.allow` (host names
 * resolved by the system for `localhost` only, or by an injected resolver), and the abandoned
 * request aborting the call.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { definePlugin, RvmError, SecretText } from '../../plugins/sdk.js';
import type { AppSettings, Value } from '../../plugins/sdk.js';
import { TEST_APP, fakeContext, loadForTest, testApp, type TestApp } from '../../plugins/testing.js';
import { registerFetch } from '../../stdlib/fetch/index.js';
import type { Resolve } from '../../stdlib/fetch/address-guard.js';
import { DEFAULT_MAX_BYTES, MAX_MAX_BYTES, MAX_TIMEOUT_MS, planRequest } from '../../stdlib/fetch/request-plan.js';
import { MAX_REDIRECTS, redirectTo } from '../../stdlib/fetch/send.js';
import { Budget } from '../../vm/interp/budget.js';
import { DEFAULT_LIMITS } from '../../vm/runtime/limits.js';
import { startUpstream, type FakeUpstream } from '../support/fake-upstream.js';

const TOKEN = 'tok-5ecret-never-logged';

/** Routes that fetch `query.u` with the options in the body, and answer the result or the error's code. */
const ROUTES = `
route POST /fetch {
  validate { u: text, options?: object }
  try {
    r = http_fetch(body.u, body.options)
    response.ok({ status: r.status, headers: r.headers, json: r.json, text: r.text })
  } catch e {
    response.ok({ code: e.code, message: e.message })
  }
}

route POST /uncaught {
  validate { u: text }
  http_fetch(body.u, { headers: { authorization: 'Bearer ' + secret('api_token') }, timeout_ms: 200 })
  response.ok({})
}

route POST /secret {
  validate { u: text }
  token = secret('api_token')
  r = http_fetch(body.u, { method: 'POST', headers: { authorization: 'Bearer ' + token, 'x-key': token }, json: { key: token, n: 1 } })
  response.ok({ status: r.status })
}
`;

/** An app serving ROUTES with `outbound` in its config. */
function appWith(outbound: unknown): Promise<TestApp> {
  return testApp({ files: { 'fetch.rvm': ROUTES, '.secrets/api_token': TOKEN }, config: outbound === undefined ? {} : { outbound } });
}

async function fetchIn(app: TestApp, u: string, options?: Record<string, unknown>): Promise<Record<string, unknown>> {
  const res = await app.inject({ method: 'POST', url: '/fetch', body: { u, options } });
  assert.equal(res.status, 200, res.body);
  return res.json() as Record<string, unknown>;
}

let up: FakeUpstream;
before(async () => {
  up = await startUpstream();
});
after(() => up.close());

describe('http_fetch with 127.0.0.1 allowed', () => {
  let app: TestApp;
  before(async () => {
    app = await appWith({ allow: ['127.0.0.1'] });
  });
  after(() => app.close());

  test('a JSON answer: status, lower-case headers (a repeated one joined), json and text', async () => {
    const r = await fetchIn(app, `${up.origin}/json`);
    assert.equal(r.status, 200);
    const headers = r.headers as Record<string, string>;
    assert.equal(headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(headers['x-multi'], 'a, b');
    assert.deepEqual(r.json, { ok: true, items: [1, 2, 3] });
    assert.equal(r.text, '{"ok":true,"items":[1,2,3]}');
  });

  test('a 404 is an answer, not an error; a +json type is parsed', async () => {
    const r = await fetchIn(app, `${up.origin}/problem`);
    assert.equal(r.status, 404);
    assert.deepEqual(r.json, { title: 'missing' });
  });

  test('malformed JSON: json null, the text kept; a text answer: json null, text decoded as UTF-8', async () => {
    const broken = await fetchIn(app, `${up.origin}/broken-json`);
    assert.equal(broken.json, null);
    assert.equal(broken.text, '{"ok":');
    const text = await fetchIn(app, `${up.origin}/text`);
    assert.equal(text.json, null);
    assert.equal(text.text, 'héllo');
  });

  test('json, form and text bodies with their content types; the method and headers as given', async () => {
    const json = (await fetchIn(app, `${up.origin}/echo`, { method: 'put', json: { a: [1, 'x'] } })).json as Record<string, any>;
    assert.equal(json.method, 'PUT');
    assert.equal(json.headers['content-type'], 'application/json');
    assert.equal(json.body, '{"a":[1,"x"]}');
    const form = (await fetchIn(app, `${up.origin}/echo`, { method: 'POST', form: { q: 'a b&c', tag: ['x', 'y'], n: 2 } })).json as Record<string, any>;
    assert.equal(form.headers['content-type'], 'application/x-www-form-urlencoded');
    assert.equal(form.body, 'q=a+b%26c&tag=x&tag=y&n=2');
    const text = (await fetchIn(app, `${up.origin}/echo`, { method: 'POST', body: '<a/>', headers: { 'Content-Type': 'application/xml', 'X-Trace': 7 } }))
      .json as Record<string, any>;
    assert.equal(text.headers['content-type'], 'application/xml');
    assert.equal(text.headers['x-trace'], '7');
    assert.equal(text.body, '<a/>');
  });

  test('secrets go on the wire in clear and never into the log, the answer or the error message', async () => {
    const before = up.received.length;
    const res = await app.inject({ method: 'POST', url: '/secret', body: { u: `${up.origin}/echo` } });
    assert.equal(res.status, 200, res.body);
    const sent = up.received[before]!;
    assert.equal(sent.headers.authorization, `Bearer ${TOKEN}`);
    assert.equal(sent.headers['x-key'], TOKEN);
    assert.deepEqual(JSON.parse(sent.body), { key: TOKEN, n: 1 });
    // A failure with the secret header: the 500's log line and body carry the code, not the secret.
    const failed = await app.inject({ method: 'POST', url: '/uncaught', body: { u: `${up.origin}/slow` } });
    assert.equal(failed.status, 500);
    assert.equal(failed.json().code, 'fetch_timeout');
    const logged = [...app.logger.lines, ...app.logger.errors].join('\n');
    assert.match(logged, /fetch_timeout/);
    assert.ok(!logged.includes(TOKEN) && !failed.body.includes(TOKEN) && !res.body.includes(TOKEN));
  });

  test('timeout_ms: no whole answer in time is fetch_timeout, and the upstream sees the connection close', async () => {
    const aborted = up.aborted;
    const started = Date.now();
    const r = await fetchIn(app, `${up.origin}/slow`, { timeout_ms: 150 });
    assert.equal(r.code, 'fetch_timeout');
    assert.ok(Date.now() - started < 2_000);
    await waitFor(() => up.aborted > aborted);
  });

  test('max_bytes: a declared length over it, and a body without one, stop at the cap with fetch_too_large', async () => {
    assert.equal((await fetchIn(app, `${up.origin}/big`, { max_bytes: 1000 })).code, 'fetch_too_large');
    const aborted = up.aborted;
    assert.equal((await fetchIn(app, `${up.origin}/endless`, { max_bytes: 100_000 })).code, 'fetch_too_large');
    await waitFor(() => up.aborted > aborted);
    assert.equal(((await fetchIn(app, `${up.origin}/big`, { max_bytes: 64 * 1024 })).text as string).length, 64 * 1024);
    const head = await fetchIn(app, `${up.origin}/big`, { method: 'HEAD', max_bytes: 1000 });
    assert.deepEqual([head.status, (head.headers as Record<string, string>)['content-length'], head.text], [200, String(64 * 1024), '']);
  });

  test('redirects on the same host are followed; a 303 after a POST becomes a GET without body', async () => {
    const same = await fetchIn(app, `${up.origin}/to?url=${encodeURIComponent('/json')}`);
    assert.deepEqual(same.json, { ok: true, items: [1, 2, 3] });
    const seeOther = (await fetchIn(app, `${up.origin}/to?status=303&url=${encodeURIComponent('/echo')}`, { method: 'POST', json: { a: 1 } })).json as Record<
      string,
      any
    >;
    assert.equal(seeOther.method, 'GET');
    assert.equal(seeOther.body, '');
    assert.equal(seeOther.headers['content-type'], undefined);
    const kept = (await fetchIn(app, `${up.origin}/to?status=307&url=${encodeURIComponent('/echo')}`, { method: 'POST', json: { a: 1 } })).json as Record<
      string,
      any
    >;
    assert.equal(kept.method, 'POST');
    assert.equal(kept.body, '{"a":1}');
  });

  test('a redirect to another host is refused unless follow_redirects is any_host, which drops credentials', async () => {
    const elsewhere = `${up.origin}/to?url=${encodeURIComponent(`http://localhost:${up.port}/echo`)}`;
    assert.equal((await fetchIn(app, elsewhere)).code, 'fetch_redirect_refused');
    const followed = (await fetchIn(app, elsewhere, { follow_redirects: 'any_host', headers: { authorization: 'Bearer x', 'x-kept': 'yes' } })).json as Record<
      string,
      any
    >;
    assert.equal(followed.headers.host, `localhost:${up.port}`);
    assert.equal(followed.headers.authorization, undefined);
    assert.equal(followed.headers['x-kept'], 'yes');
    const answered = await fetchIn(app, elsewhere, { follow_redirects: false });
    assert.equal(answered.status, 302);
    assert.equal((answered.headers as Record<string, string>).location, `http://localhost:${up.port}/echo`);
    assert.equal((await fetchIn(app, `${up.origin}/to?url=${encodeURIComponent('ftp://127.0.0.1/x')}`)).code, 'fetch_redirect_refused');
  });

  test(`more than ${MAX_REDIRECTS} redirects is fetch_too_many_redirects`, async () => {
    const before = up.received.length;
    assert.equal((await fetchIn(app, `${up.origin}/loop`)).code, 'fetch_too_many_redirects');
    assert.equal(up.received.length - before, MAX_REDIRECTS + 1);
  });

  test('a server that is not there is fetch_failed', async () => {
    const r = await fetchIn(app, 'http://127.0.0.1:1/');
    assert.equal(r.code, 'fetch_failed');
  });

  test('URLs and options outside their domain are coded errors', async () => {
    for (const u of ['ftp://127.0.0.1/x', '/relative', 'not a url', `http://user:pw@127.0.0.1:${up.port}/json`]) {
      const r = await fetchIn(app, u);
      assert.equal(r.code, 'fetch_invalid_url', u);
      assert.ok(!(r.message as string).includes('pw'), r.message as string);
    }
    const cases: [Record<string, unknown>, string][] = [
      [{ nope: 1 }, 'invalid_argument'],
      [{ method: 'CONNECT' }, 'invalid_argument'],
      [{ body: 'x' }, 'invalid_argument'],
      [{ method: 'POST', json: 1, body: 'x' }, 'invalid_argument'],
      [{ timeout_ms: 0 }, 'invalid_argument'],
      [{ timeout_ms: MAX_TIMEOUT_MS + 1 }, 'invalid_argument'],
      [{ max_bytes: MAX_MAX_BYTES + 1 }, 'invalid_argument'],
      [{ timeout_ms: 'soon' }, 'type_error'],
      [{ follow_redirects: 'yes' }, 'invalid_argument'],
      [{ headers: { 'x-a': 'one\r\nx-b: two' } }, 'invalid_header'],
      [{ headers: { 'bad name': 'x' } }, 'invalid_header'],
      [{ headers: { host: 'elsewhere' } }, 'invalid_header'],
      [{ headers: { 'x-a': [1] } }, 'type_error'],
    ];
    const before = up.received.length;
    for (const [options, code] of cases) assert.equal((await fetchIn(app, `${up.origin}/echo`, options)).code, code, JSON.stringify(options));
    assert.equal(up.received.length, before, 'nothing was sent');
  });
});

describe('the address checks', () => {
  test('without outbound.allow: loopback literals and a name resolving to 127.0.0.1 are refused before any connection', async () => {
    const app = await appWith(undefined);
    try {
      const before = up.received.length;
      for (const host of ['127.0.0.1', 'localhost', '[::1]', '2130706433', '127.1', '[::ffff:127.0.0.1]', '0.0.0.0']) {
        const r = await fetchIn(app, `http://${host}:${up.port}/json`);
        assert.equal(r.code, 'fetch_refused_address', host);
        assert.match(r.message as string, /loopback|unspecified/);
      }
      // Over TLS the same lookup decides, before any handshake.
      assert.equal((await fetchIn(app, `https://localhost:${up.port}/json`)).code, 'fetch_refused_address');
      const uncaught = await app.inject({ method: 'POST', url: '/uncaught', body: { u: `http://localhost:${up.port}/json` } });
      assert.equal(uncaught.json().code, 'fetch_refused_address');
      assert.equal(up.received.length, before);
    } finally {
      await app.close();
    }
  });

  test('a host name listed in outbound.allow is reached; the address it resolves to stays refused written as a literal', async () => {
    const app = await appWith({ allow: ['LOCALHOST'] });
    try {
      assert.equal((await fetchIn(app, `http://localhost:${up.port}/json`)).status, 200);
      assert.equal((await fetchIn(app, `${up.origin}/json`)).code, 'fetch_refused_address');
    } finally {
      await app.close();
    }
  });

  test('a redirect hop to a refused address is refused, even to another host followed on request', async () => {
    const app = await appWith({ allow: ['127.0.0.0/8'] });
    try {
      const r = await fetchIn(app, `${up.origin}/to?url=${encodeURIComponent(`http://[::1]:${up.port}/json`)}`, { follow_redirects: 'any_host' });
      assert.equal(r.code, 'fetch_refused_address');
    } finally {
      await app.close();
    }
  });

  /** http_fetch on a fake context, with names resolved by `resolve` and `allow` as the app's list. */
  async function fetchResolved(resolve: Resolve, allow: string[], url: string): Promise<Value> {
    const app: AppSettings = { ...TEST_APP, outbound: { allow } };
    const kit = await loadForTest([definePlugin({ name: 'fetch-under-test', version: '1.0.0', setup: (rvm) => registerFetch(rvm, { resolve }) })], app);
    return kit.callIn(fakeContext({ app }), 'http_fetch', url) as Promise<Value>;
  }

  test('every address a name resolves to is checked, and the connection goes to the checked address', async () => {
    const both: Resolve = async () => [
      { address: '127.0.0.1', family: 4 },
      { address: '10.1.2.3', family: 4 },
    ];
    await assert.rejects(
      fetchResolved(both, ['127.0.0.1'], `http://api.example.test:${up.port}/json`),
      (e: RvmError) => e.code === 'fetch_refused_address' && /10\.1\.2\.3/.test(e.message),
    );
    // The name exists nowhere but in this resolver: the answer proves the socket used the checked address.
    const loopback: Resolve = async () => [{ address: '127.0.0.1', family: 4 }];
    const answer = (await fetchResolved(loopback, ['127.0.0.1'], `http://api.example.test:${up.port}/json`)) as Record<string, Value>;
    assert.equal(answer.status, 200);
    await assert.rejects(fetchResolved(loopback, [], `http://api.example.test:${up.port}/json`), (e: RvmError) => e.code === 'fetch_refused_address');
  });

  test('a metadata service is refused by name before any DNS query, and by address unless listed exactly', async () => {
    let asked = 0;
    const metadata: Resolve = async () => {
      asked++;
      return [{ address: '169.254.169.254', family: 4 }];
    };
    const refusedAsMetadata = (e: RvmError) => e.code === 'fetch_refused_address' && /metadata/.test(e.message);
    await assert.rejects(fetchResolved(metadata, ['169.254.0.0/16'], 'http://metadata.google.internal/'), refusedAsMetadata);
    assert.equal(asked, 0);
    await assert.rejects(fetchResolved(metadata, ['169.254.0.0/16'], 'http://cloud-config.test/'), refusedAsMetadata);
    await assert.rejects(fetchResolved(metadata, ['169.254.0.0/16'], 'http://169.254.169.254/'), refusedAsMetadata);
    await assert.rejects(fetchResolved(metadata, ['fd00::/8'], 'http://[fd00:ec2::254]/'), refusedAsMetadata);
  });
});

describe('the call within its request', () => {
  async function kitFor(app: AppSettings) {
    return loadForTest([definePlugin({ name: 'fetch-under-test', version: '1.0.0', setup: (rvm) => registerFetch(rvm) })], app);
  }
  const allowed: AppSettings = { ...TEST_APP, outbound: { allow: ['127.0.0.1'] } };

  test('the abandoned request aborts the call at once, with its own reason, and the upstream sees it go', async () => {
    const kit = await kitFor(allowed);
    const ctx = fakeContext({ app: allowed });
    const aborted = up.aborted;
    const call = kit.callIn(ctx, 'http_fetch', `${up.origin}/slow`) as Promise<Value>;
    setTimeout(() => ctx.budget.abort(new RvmError('client went away', 'client_gone')), 50);
    await assert.rejects(call, (e: RvmError) => e.code === 'client_gone');
    await waitFor(() => up.aborted > aborted);
  });

  test("the request's deadline ends a longer timeout_ms: 503 deadline_exceeded, and the upstream sees the call go", async () => {
    const app = await testApp({
      files: { 'fetch.rvm': ROUTES, '.secrets/api_token': TOKEN },
      config: { outbound: { allow: ['127.0.0.1'] }, limits: { wallTimeMs: 300 } },
    });
    try {
      const aborted = up.aborted;
      const res = await app.inject({ method: 'POST', url: '/fetch', body: { u: `${up.origin}/slow`, options: { timeout_ms: MAX_TIMEOUT_MS } } });
      assert.equal(res.status, 503);
      assert.equal(res.json().code, 'deadline_exceeded');
      await waitFor(() => up.aborted > aborted);
    } finally {
      await app.close();
    }
  });

  test('the answer is charged to the request memory; past the budget the request answers 503 overloaded', async () => {
    const kit = await kitFor(allowed);
    const ctx = fakeContext({ app: allowed });
    await kit.callIn(ctx, 'http_fetch', `${up.origin}/big`);
    assert.equal(ctx.memoryCharged, 64 * 1024);
    const tight: AppSettings = { ...allowed, limits: { ...DEFAULT_LIMITS, maxResultMemory: 1000 } };
    const small = fakeContext({ app: tight });
    await (await kitFor(tight)).callIn(small, 'http_fetch', `${up.origin}/big`);
    assert.deepEqual(
      small.failures.map((f) => [f.status, f.code, f.headers?.['retry-after']]),
      [[503, 'overloaded', '1']],
    );
    assert.ok(DEFAULT_MAX_BYTES < MAX_MAX_BYTES);
  });

  test('the URL and body are charged to the CPU budget by their size', async () => {
    const kit = await kitFor(allowed);
    const ctx = fakeContext({ app: allowed });
    const before = ctx.budget.charged;
    await kit.callIn(ctx, 'http_fetch', `${up.origin}/echo`, { method: 'POST', body: 'x'.repeat(100_000) });
    assert.ok(ctx.budget.charged - before > 100, `charged ${ctx.budget.charged - before}`);
  });
});

describe('redirect hops, decided before they are sent', () => {
  const plan = (url: string, options: Record<string, Value> = {}) => planRequest(url, options, new Budget());

  test('https to http is refused whatever follow_redirects says; a relative Location keeps the host', () => {
    const p = plan('https://api.example.test/a', { follow_redirects: 'any_host' });
    assert.throws(
      () => redirectTo(p, p.url, 302, 'http://api.example.test/a'),
      (e: RvmError) => e.code === 'fetch_redirect_refused' && /in clear/.test(e.message),
    );
    assert.equal(redirectTo(p, p.url, 302, '/b?c=1').href, 'https://api.example.test/b?c=1');
    assert.equal(
      redirectTo(plan('http://api.example.test/'), new URL('http://api.example.test/'), 301, 'https://api.example.test:8443/x').href,
      'https://api.example.test:8443/x',
    );
  });

  test('to another host: credentials and secret-valued headers are dropped, the rest kept', () => {
    const p = plan('https://api.example.test/', {
      follow_redirects: 'any_host',
      headers: { authorization: 'Bearer x', cookie: 'a=1', 'x-api-key': new SecretText('k'), 'x-trace': 't' },
    });
    redirectTo(p, p.url, 307, 'https://cdn.example.test/file');
    assert.deepEqual(Object.keys(p.headers).sort(), ['accept', 'user-agent', 'x-trace']);
    const same = plan('https://api.example.test/', { headers: { 'x-api-key': new SecretText('k') } });
    redirectTo(same, same.url, 307, '/moved');
    assert.equal(same.headers['x-api-key'], 'k');
  });
});

test('a secret URL is sent as it is; errors show its host, never its path or query', async () => {
  const app: AppSettings = { ...TEST_APP, outbound: { allow: ['127.0.0.1'] } };
  const kit = await loadForTest([definePlugin({ name: 'fetch-under-test', version: '1.0.0', setup: (rvm) => registerFetch(rvm) })], app);
  const before = up.received.length;
  const answer = (await kit.callIn(fakeContext({ app }), 'http_fetch', new SecretText(`${up.origin}/echo?key=${TOKEN}`))) as Record<string, Value>;
  assert.equal(answer.status, 200);
  assert.equal(up.received[before]!.url, `/echo?key=${TOKEN}`);
  await assert.rejects(
    kit.callIn(fakeContext({ app }), 'http_fetch', new SecretText(`${up.origin}/slow?key=${TOKEN}`), { timeout_ms: 100 }) as Promise<Value>,
    (e: RvmError) => e.code === 'fetch_timeout' && e.message.includes(`127.0.0.1:${up.port}`) && !e.message.includes(TOKEN) && !e.message.includes('/slow'),
  );
});

/** Resolves once `done()` holds (checked every 10 ms, at most 2 s). */
async function waitFor(done: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(done());
}
