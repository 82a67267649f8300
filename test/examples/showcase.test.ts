/**
 * The showcase app end to end: loaded with loadApp, every route exercised over inject, and
 * served once over a real socket. It is loaded as `rvm run` serves an app the second time, from
 * a warm cache with a link proof: lazily linked, each validation plan compiled on first request
 * (the other showcase suites load it without the cache, bound and planned at once).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { App } from '../../vm/runtime/app.js';
import { loadApp } from '../../tools/host.js';
import { answerLog, inject, type InjectRequest, type InjectResponse } from '../support/openapi-answers.js';
import { startServer } from '../../vm/runtime/http/server.js';
import { captureLogger } from '../../vm/runtime/log.js';

const SHOWCASE = fileURLToPath(new URL('../../../examples/showcase', import.meta.url));
const API_KEY = { 'X-API-Key': 'showcase-key' };

let app: App;
const appLog: string[] = [];
const copy = mkdtempSync(join(tmpdir(), 'rvm-showcase-'));

before(async () => {
  cpSync(SHOWCASE, copy, { recursive: true, filter: (src) => !src.split(sep).includes('.rvm') });
  // The first start compiles, caches every module and leaves the link proof.
  await (await loadApp(copy, { logger: captureLogger() })).close();
  app = await loadApp(copy, { logger: captureLogger(), onAppLog: (line) => appLog.push(line) });
  assert.ok(
    app.program.chunks.every((c) => !c.bound),
    'the second start binds nothing up front',
  );
});

after(async () => {
  await app?.close();
  rmSync(copy, { recursive: true, force: true });
});

function call(req: InjectRequest): Promise<InjectResponse> {
  return inject(app, req);
}

/** Asserts the runtime's error body shape and returns it. */
function errorOf(res: InjectResponse): { error: string; code: string } {
  const body = res.json();
  assert.equal(typeof body.error, 'string');
  assert.equal(typeof body.code, 'string');
  return body;
}

describe('showcase: root routes and middleware', () => {
  test('GET /hello answers the greeting and the root middleware stamps it', async () => {
    const res = await call({ url: '/hello' });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json(), { message: 'hello' });
    assert.equal(res.headers['x-served-by'], 'rvm-showcase');
  });

  test('the root middleware logs the request with its final status', async () => {
    await call({ url: '/responses/conflict' });
    assert.ok(
      appLog.some((line) => line.includes('GET /responses/conflict -> 409')),
      appLog.join('\n'),
    );
  });

  test('GET / is HTML', async () => {
    const res = await call({ url: '/' });
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assert.match(res.body, /rvm showcase/);
  });

  test('GET /hello/:name interpolates the param, calls a fn and reads the query', async () => {
    assert.deepEqual((await call({ url: '/hello/Ada' })).json(), { greeting: 'Hello, Ada!', slug: 'ada' });
    assert.deepEqual((await call({ url: '/hello/Ada?shout=1' })).json(), { greeting: 'HELLO, ADA!', slug: 'ada' });
  });

  test('unknown paths answer 404 and a known path with another method 405', async () => {
    const missing = await call({ url: '/nope' });
    assert.equal(missing.status, 404);
    assert.equal(errorOf(missing).code, 'not_found');
    const wrongMethod = await call({ method: 'GET', url: '/echo' });
    assert.equal(wrongMethod.status, 405);
    assert.match(String(wrongMethod.headers['allow']), /POST/);
  });
});

describe('showcase: custom guards on GET /premium', () => {
  test('no plan: 403 Premium required', async () => {
    const res = await call({ url: '/premium' });
    assert.equal(res.status, 403);
    assert.deepEqual(res.json(), { error: 'Premium required', code: 'forbidden' });
  });

  test('premium but under 18: 403 from min_age(18)', async () => {
    const res = await call({ url: '/premium', headers: { 'X-Plan': 'premium', 'X-Age': '17' } });
    assert.equal(res.status, 403);
    assert.equal(errorOf(res).code, 'forbidden');
    assert.match(errorOf(res).error, /18/);
  });

  test('premium adult: 200 with content', async () => {
    const res = await call({ url: '/premium', headers: { 'X-Plan': 'premium', 'X-Age': '30' } });
    assert.equal(res.status, 200);
    assert.equal(typeof res.json().content, 'string');
  });
});

describe('showcase: every response helper', () => {
  const errors: [string, number, string][] = [
    ['bad_request', 400, 'bad_request'],
    ['unauthorized', 401, 'unauthorized'],
    ['forbidden', 403, 'forbidden'],
    ['not_found', 404, 'not_found'],
    ['conflict', 409, 'conflict'],
    ['unprocessable', 422, 'unprocessable'],
    ['too_many_requests', 429, 'too_many_requests'],
    ['fail', 409, 'conflict'],
  ];
  for (const [kind, status, code] of errors) {
    test(`${kind} answers ${status} with the error body`, async () => {
      const res = await call({ url: `/responses/${kind}` });
      assert.equal(res.status, status);
      assert.equal(errorOf(res).code, code);
    });
  }

  test('ok, created and accepted answer JSON with 200, 201 and 202', async () => {
    for (const [kind, status] of [
      ['ok', 200],
      ['created', 201],
      ['accepted', 202],
    ] as const) {
      const res = await call({ url: `/responses/${kind}` });
      assert.equal(res.status, status);
      assert.deepEqual(res.json(), { helper: kind });
    }
  });

  test('no_content answers 204 with no body', async () => {
    const res = await call({ url: '/responses/no_content' });
    assert.equal(res.status, 204);
    assert.equal(res.body, '');
  });

  test('redirect answers 302 with Location; an explicit status is kept', async () => {
    const res = await call({ url: '/responses/redirect' });
    assert.equal(res.status, 302);
    assert.equal(res.headers['location'], '/hello');
    const moved = await call({ url: '/old-hello' });
    assert.equal(moved.status, 301);
    assert.equal(moved.headers['location'], '/hello');
  });

  test('json sets any status; text and html set their content types', async () => {
    const json = await call({ url: '/responses/json' });
    assert.equal(json.status, 418);
    assert.deepEqual(json.json(), { helper: 'json', teapot: true });
    const text = await call({ url: '/responses/text' });
    assert.equal(text.status, 200);
    assert.match(String(text.headers['content-type']), /^text\/plain/);
    assert.equal(text.body, 'plain text from rvm');
    const html = await call({ url: '/responses/html' });
    assert.match(String(html.headers['content-type']), /^text\/html/);
    assert.equal(html.body, '<p>html from rvm</p>');
  });

  test('the response {} statement sets status, body and headers', async () => {
    const res = await call({ url: '/responses/custom' });
    assert.equal(res.status, 299);
    assert.deepEqual(res.json(), { helper: 'response {}' });
    assert.equal(res.headers['x-custom'], 'yes');
  });

  test('an unknown kind falls through to not_found', async () => {
    const res = await call({ url: '/responses/teleport' });
    assert.equal(res.status, 404);
    assert.match(errorOf(res).error, /teleport/);
  });
});

describe('showcase: params, wildcards, query and bodies', () => {
  test('the wildcard keeps slashes', async () => {
    const res = await call({ url: '/files/docs/guide/intro.md' });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json(), { path: 'docs/guide/intro.md', name: 'intro.md', depth: 3 });
    const text = await call({ url: '/files/notes/todo.txt' });
    assert.equal(text.body, 'contents of notes/todo.txt');
  });

  test('GET /search filters with a for loop and reads page', async () => {
    const res = await call({ url: '/search?q=Apple&page=2' });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json(), { q: 'apple', page: 2, count: 3, hits: ['red apple', 'green apple', 'apple pie'] });
  });

  test('GET /search validates its query block', async () => {
    const missing = await call({ url: '/search' });
    assert.equal(missing.status, 422);
    assert.equal(errorOf(missing).code, 'validation_failed');
    assert.deepEqual(
      missing.json().details.map((d: { field: string }) => d.field),
      ['query.q'],
    );
    assert.equal((await call({ url: '/search?q=apple&page=0' })).status, 422);
    assert.equal((await call({ url: '/search?q=apple&page=two' })).status, 422);
    assert.equal((await call({ url: '/search?q=apple' })).json().page, 1);
    assert.equal((await call({ url: '/search?q=%20%20' })).status, 400);
  });

  test('POST /contact takes a form body and a JSON body', async () => {
    const form = await call({
      method: 'POST',
      url: '/contact',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'name=Ada+Lovelace&message=Hi%21',
    });
    assert.equal(form.status, 201);
    assert.equal(form.json().thanks, 'Thanks, Ada Lovelace!');
    assert.equal(form.json().message, 'Hi!');
    const json = await call({ method: 'POST', url: '/contact', body: { name: 'Grace' } });
    assert.equal(json.status, 201);
    assert.equal(json.json().thanks, 'Thanks, Grace!');
    const empty = await call({ method: 'POST', url: '/contact', body: { name: '  ' } });
    assert.equal(empty.status, 422);
  });

  test('POST /echo returns the JSON it was sent', async () => {
    const sent = { a: 1, list: [true, null, 'x'], nested: { b: 'c' } };
    const res = await call({ method: 'POST', url: '/echo', body: sent });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json(), sent);
  });

  test('malformed JSON is refused by the runtime with 400', async () => {
    const res = await call({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, body: '{"a":' });
    assert.equal(res.status, 400);
    errorOf(res);
  });
});

describe('showcase: loops, fns and try/catch', () => {
  test('GET /math/sum/:n sums in a while loop', async () => {
    assert.deepEqual((await call({ url: '/math/sum/10000' })).json(), { n: 10000, sum: 50005000 });
    assert.equal((await call({ url: '/math/sum/abc' })).status, 400);
    assert.equal((await call({ url: '/math/sum/200000' })).status, 422);
  });

  test('GET /math/stats skips what is not a number', async () => {
    const res = await call({ url: '/math/stats?values=1,2,x,3' });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json(), { count: 3, sum: 6, mean: 2, min: 1, max: 3, skipped: ['x'] });
  });

  test('GET /parse catches a runtime error from json_parse', async () => {
    const good = await call({ url: `/parse?json=${encodeURIComponent('{"a":1,"b":[2]}')}` });
    assert.equal(good.status, 200);
    assert.deepEqual(good.json(), { ok: true, value: { a: 1, b: [2] }, fields: ['a', 'b'] });
    const bad = await call({ url: '/parse?json=nope' });
    assert.equal(bad.status, 400);
    assert.match(errorOf(bad).error, /^Not JSON: \w+/);
  });
});

describe('showcase: the API folder and its middleware', () => {
  const user = { email: 'ada@example.com', name: 'Ada' };

  test('no X-API-Key: 401 unauthorized from the middleware', async () => {
    const res = await call({ method: 'POST', url: '/api/users', body: user });
    assert.equal(res.status, 401);
    assert.equal(errorOf(res).code, 'unauthorized');
  });

  test('a wrong key is also 401', async () => {
    const res = await call({ url: '/api/users/demo', headers: { 'X-API-Key': 'wrong' } });
    assert.equal(res.status, 401);
    assert.equal(errorOf(res).code, 'unauthorized');
  });

  test('POST /api/users with the key answers 201 with the record shape', async () => {
    const res = await call({ method: 'POST', url: '/api/users', headers: API_KEY, body: user });
    assert.equal(res.status, 201);
    const body = res.json();
    assert.equal(body.email, user.email);
    assert.equal(body.name, user.name);
    assert.equal(body.role, 'user');
    for (const field of ['id', 'created_at', 'updated_at']) assert.ok(body[field], `missing ${field}`);
    assert.equal(res.headers['x-served-by'], 'rvm-showcase');
  });

  test('POST /api/users validates the body', async () => {
    const bad = await call({ method: 'POST', url: '/api/users', headers: API_KEY, body: { email: 'not-an-email', name: 'A', role: 'root' } });
    assert.equal(bad.status, 422);
    assert.equal(errorOf(bad).code, 'validation_failed');
    const rules = bad
      .json()
      .details.map((d: { field: string; rule: string }) => `${d.field}:${d.rule}`)
      .sort();
    assert.deepEqual(rules, ['email:email', 'name:minLength', 'role:one_of']);
    const admin = await call({ method: 'POST', url: '/api/users', headers: API_KEY, body: { ...user, email: 'grace@example.com', role: 'admin' } });
    assert.equal(admin.status, 201);
    assert.equal(admin.json().role, 'admin');
  });

  test('body holds only the declared fields with defaults; request.body stays raw', async () => {
    const sent = { title: 'Hello', is_admin: true };
    const res = await call({ method: 'POST', url: '/api/public/preview', body: sent });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json(), { body: { title: 'Hello', draft: true }, raw: sent });
    const short = await call({ method: 'POST', url: '/api/public/preview', body: { title: 'Hi' } });
    assert.equal(short.status, 422);
  });

  test('POST /api/signup refuses a short password and a text age', async () => {
    const res = await call({ method: 'POST', url: '/api/signup', headers: API_KEY, body: { email: 'ada@example.com', password: 'short', age: '36' } });
    assert.equal(res.status, 422);
    const fields = res
      .json()
      .details.map((d: { field: string }) => d.field)
      .sort();
    assert.deepEqual(fields, ['age', 'password']);
  });

  test('POST /api/signup with the rich field set answers 201', async () => {
    const res = await call({
      method: 'POST',
      url: '/api/signup',
      headers: API_KEY,
      body: { email: 'ada@example.com', password: 'correct horse', age: 36, website: 'https://example.com' },
    });
    assert.equal(res.status, 201);
    assert.deepEqual(res.json(), { email: 'ada@example.com', age: 36, role: 'user', website: 'https://example.com' });
  });

  test('GET /api/users/:id answers the stored record and 404s an unknown id', async () => {
    const created = await call({ method: 'POST', url: '/api/users', headers: API_KEY, body: { email: 'find@example.com', name: 'Finn' } });
    assert.equal(created.status, 201);
    const found = await call({ url: `/api/users/${created.json().id}`, headers: API_KEY });
    assert.equal(found.status, 200);
    assert.deepEqual(found.json(), created.json());
    for (const id of ['demo', '01a2138b-6e37-72cd-a27e-3352189097b9']) {
      const missing = await call({ url: `/api/users/${id}`, headers: API_KEY });
      assert.equal(missing.status, 404);
      assert.equal(errorOf(missing).code, 'not_found');
    }
  });

  test('POST /api/users stores the user: a taken email is 409 conflict', async () => {
    const body = { email: 'taken@example.com', name: 'Tak' };
    assert.equal((await call({ method: 'POST', url: '/api/users', headers: API_KEY, body })).status, 201);
    const again = await call({ method: 'POST', url: '/api/users', headers: API_KEY, body });
    assert.equal(again.status, 409);
    assert.equal(errorOf(again).code, 'conflict');
  });

  test('GET /api/users pages newest first with a role filter and a cursor', async () => {
    const made: string[] = [];
    for (const [i, role] of ['user', 'admin', 'user', 'user'].entries()) {
      const res = await call({ method: 'POST', url: '/api/users', headers: API_KEY, body: { email: `page${i}@example.com`, name: `Page ${i}`, role } });
      made.push(res.json().id);
    }
    const seen: string[] = [];
    let after: string | null = null;
    do {
      const url: string = `/api/users?role=user&limit=2${after === null ? '' : `&after=${encodeURIComponent(after)}`}`;
      const page = await call({ url, headers: API_KEY });
      assert.equal(page.status, 200);
      const body = page.json() as { items: { id: string; role: string }[]; next: string | null };
      assert.ok(body.items.length <= 2);
      for (const item of body.items) assert.equal(item.role, 'user');
      seen.push(...body.items.map((u) => u.id));
      after = body.next;
    } while (after !== null);
    // Newest first: the three users made here lead, in reverse order of creation.
    assert.deepEqual(seen.slice(0, 3), [made[3], made[2], made[0]]);
    assert.equal(new Set(seen).size, seen.length, 'no user twice across pages');
    const bad = await call({ url: '/api/users?after=garbage', headers: API_KEY });
    assert.equal(bad.status, 400);
    assert.equal(errorOf(bad).code, 'invalid_query');
    assert.equal((await call({ url: '/api/users?limit=101', headers: API_KEY })).status, 422);
  });

  test('PATCH /api/users/:id changes only the fields sent; DELETE removes the user', async () => {
    const created = (await call({ method: 'POST', url: '/api/users', headers: API_KEY, body: { email: 'pat@example.com', name: 'Pat' } })).json();
    const patched = await call({ method: 'PATCH', url: `/api/users/${created.id}`, headers: API_KEY, body: { age: 36 } });
    assert.equal(patched.status, 200);
    assert.equal(patched.json().age, 36);
    assert.equal(patched.json().name, 'Pat');
    assert.equal(patched.json().created_at, created.created_at);
    const refused = await call({ method: 'PATCH', url: `/api/users/${created.id}`, headers: API_KEY, body: { age: -1 } });
    assert.equal(refused.status, 422);
    assert.equal((await call({ method: 'PATCH', url: '/api/users/nobody', headers: API_KEY, body: { age: 1 } })).status, 404);
    assert.equal((await call({ method: 'DELETE', url: `/api/users/${created.id}`, headers: API_KEY })).status, 204);
    assert.equal((await call({ method: 'DELETE', url: `/api/users/${created.id}`, headers: API_KEY })).status, 404);
    assert.equal((await call({ url: `/api/users/${created.id}`, headers: API_KEY })).status, 404);
  });

  test('/api/public/ stays open without a key', async () => {
    const res = await call({ url: '/api/public/status' });
    assert.equal(res.status, 200);
    assert.equal(res.json().status, 'ok');
  });
});

describe('showcase: over a real socket', () => {
  test('startServer serves /hello on an ephemeral port', async () => {
    const running = await startServer(app, { port: 0, host: '127.0.0.1' });
    try {
      const res = await fetch(`${running.url}/hello`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-served-by'), 'rvm-showcase');
      assert.deepEqual(await res.json(), { message: 'hello' });
    } finally {
      await running.close();
    }
  });
});

test('every answer above matches the OpenAPI document (route, status, media type, JSON schema)', () => {
  answerLog.assertMatchDocument(app);
});
