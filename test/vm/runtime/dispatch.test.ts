import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { dispatch, validPath } from '../../../vm/runtime/dispatch.js';
import { errorResponse } from '../../../vm/runtime/response.js';
import type { IncomingRequest, OutgoingResponse } from '../../../vm/runtime/types.js';
import { fakeApp } from './fake-app.js';

function req(method: string, url: string, over: Partial<IncomingRequest> = {}): IncomingRequest {
  return { method, url, headers: {}, remoteAddress: '127.0.0.1', encrypted: false, body: null, ...over };
}

const app = fakeApp([
  ['GET', '/hello', (ctx) => void ctx.respond(200, { message: 'hello' })],
  ['POST', '/hello', (ctx) => void ctx.respond(201, ctx.body)],
  ['GET', '/users/:id', (ctx) => void ctx.respond(200, { id: ctx.request.params.id, q: ctx.request.query.q ?? null })],
  ['GET', '/silent', () => {}],
  [
    'GET',
    '/boom',
    () => {
      throw new Error('secret internals');
    },
  ],
  [
    'GET',
    '/async',
    async (ctx) => {
      await new Promise((r) => setImmediate(r));
      ctx.respond(200, 'later', 'text');
    },
  ],
  [
    'GET',
    '/async-boom',
    async () => {
      await Promise.resolve();
      throw new Error('async internals');
    },
  ],
]);

function body(out: OutgoingResponse): unknown {
  return JSON.parse(out.body as string);
}

describe('dispatch', () => {
  test('deliver gets an answer that took a promise turn, once, the same as the Promise gives; a ready answer is only returned', async () => {
    const delivered: [string, OutgoingResponse][] = [];
    const deliver = (target: string, out: OutgoingResponse): void => void delivered.push([target, out]);
    const ready = dispatch(app, req('GET', '/hello'), 'a', deliver);
    assert.ok(!(ready instanceof Promise));
    assert.deepEqual(delivered, []);
    const later = dispatch(app, req('GET', '/async'), 'b', deliver);
    assert.ok(later instanceof Promise);
    const out = await later;
    assert.deepEqual(delivered, [['b', out]]);
    assert.equal(out.body, 'later');
    const failed = await dispatch(app, req('GET', '/async-boom'), 'c', deliver);
    assert.equal(failed.status, 500);
    assert.deepEqual(delivered[1], ['c', failed]);
  });

  test('a deliver that throws is logged; the returned Promise still resolves (nobody may be waiting on it)', async () => {
    const local = fakeApp([['GET', '/async', async (ctx) => void ctx.respond(200, 'later', 'text')]]);
    const out = await dispatch(local, req('GET', '/async'), null, () => {
      throw new Error('writer broke');
    });
    assert.equal(out.status, 200);
    assert.equal(local.log.errors.length, 1);
    assert.match(local.log.errors[0]!, /could not finish the response: Error: writer broke/);
  });

  test('an answer is still delivered when writing its log line fails', async () => {
    const local = fakeApp([['GET', '/async', async (ctx) => void ctx.respond(200, 'later', 'text')]]);
    local.log.request = () => {
      throw new Error('log broke');
    };
    const delivered: OutgoingResponse[] = [];
    const out = await dispatch(local, req('GET', '/async'), null, (_target, answer) => void delivered.push(answer));
    assert.deepEqual(delivered, [out]);
    assert.equal(out.status, 200);
    assert.match(local.log.errors[0]!, /could not finish the response: Error: log broke/);
  });

  test('a sync route answers synchronously (no Promise)', () => {
    const out = dispatch(app, req('GET', '/hello'));
    assert.ok(!(out instanceof Promise));
    assert.equal((out as OutgoingResponse).status, 200);
    assert.equal((out as OutgoingResponse).body, '{"message":"hello"}');
  });

  test('params and query reach the context', async () => {
    const out = await dispatch(app, req('GET', '/users/a%20b?q=x'));
    assert.deepEqual(body(out), { id: 'a b', q: 'x' });
  });

  test('404 with the error body', async () => {
    const out = await dispatch(app, req('GET', '/nope'));
    assert.equal(out.status, 404);
    assert.deepEqual(body(out), { error: 'Not found', code: 'not_found' });
  });

  test('405 with Allow', async () => {
    const out = await dispatch(app, req('DELETE', '/hello'));
    assert.equal(out.status, 405);
    assert.equal(out.headers.allow, 'GET, HEAD, POST');
    assert.equal((body(out) as { code: string }).code, 'method_not_allowed');
  });

  test('bad request targets → 400 bad_request', async () => {
    for (const url of ['http://example.com/hello', '*', 'hello', '/a%00b', '/a%zzb', '/a%4', '/a\0b']) {
      const out = await dispatch(app, req('GET', url));
      assert.equal(out.status, 400, url);
      assert.equal((body(out) as { code: string }).code, 'bad_request', url);
    }
  });

  test('validPath', () => {
    assert.equal(validPath('/a%20b%C3%A9'), true);
    assert.equal(validPath('/a%0'), false);
    assert.equal(validPath('/a%00'), false);
  });

  test('a route that answers nothing → 204', async () => {
    const out = await dispatch(app, req('GET', '/silent'));
    assert.equal(out.status, 204);
    assert.equal(out.body, null);
  });

  test('HEAD is served by GET without a body', async () => {
    const out = await dispatch(app, req('HEAD', '/hello'));
    assert.equal(out.status, 200);
    assert.equal(out.body, null);
    assert.equal(out.headers['content-length'], '19');
    const missing = await dispatch(app, req('HEAD', '/nope'));
    assert.equal(missing.status, 404);
    assert.equal(missing.body, null);
  });

  test('an exception in execute → 500 internal_error, stack logged, nothing leaked', async () => {
    for (const path of ['/boom', '/async-boom']) {
      const before = app.log.errors.length;
      const out = await dispatch(app, req('GET', path));
      assert.equal(out.status, 500);
      assert.deepEqual(body(out), { error: 'Internal server error', code: 'internal_error' });
      assert.ok(!(out.body as string).includes('internals'));
      assert.equal(app.log.errors.length, before + 1);
      assert.match(app.log.errors[before], /internals/);
      assert.match(app.log.errors[before], /at /);
    }
  });

  test('async execute is awaited', async () => {
    const out = dispatch(app, req('GET', '/async'));
    assert.ok(out instanceof Promise);
    const done = await out;
    assert.equal(done.body, 'later');
    assert.equal(done.headers['content-type'], 'text/plain; charset=utf-8');
  });

  test('JSON bodies are read and parsed; body errors answer with their codes', async () => {
    const post = (text: string, type: string, length = String(Buffer.byteLength(text))) =>
      dispatch(app, req('POST', '/hello', { headers: { 'content-type': type, 'content-length': length }, body: Readable.from([Buffer.from(text)]) }));
    const ok = await post('{"a":1}', 'application/json');
    assert.equal(ok.status, 201);
    assert.deepEqual(body(ok), { a: 1 });
    const bad = await post('{"a":', 'application/json');
    assert.equal(bad.status, 400);
    assert.equal((body(bad) as { code: string }).code, 'invalid_json');
    const unsupported = await post('<a/>', 'application/xml');
    assert.equal(unsupported.status, 415);
    assert.equal((body(unsupported) as { code: string }).code, 'unsupported_media_type');
    const small = fakeApp([['POST', '/', (ctx) => void ctx.respond(200, null)]], { settings: { bodyLimit: 4 } });
    const big = await dispatch(
      small,
      req('POST', '/', { headers: { 'content-type': 'text/plain', 'content-length': '5' }, body: Readable.from([Buffer.from('12345')]) }),
    );
    assert.equal(big.status, 413);
    assert.equal((body(big) as { code: string }).code, 'payload_too_large');
  });

  test('a route with no body declared gets null', async () => {
    const out = await dispatch(app, req('POST', '/hello', { headers: { 'content-length': '0' }, body: Readable.from([]) }));
    assert.equal(out.body, 'null');
  });

  test('one log line per request: method, path (no query), status, ms', async () => {
    const a = fakeApp([['GET', '/hello', (ctx) => void ctx.respond(200, 'x')]]);
    await dispatch(a, req('GET', '/hello?token=secret'));
    await dispatch(a, req('GET', '/nope'));
    assert.equal(a.log.lines.length, 2);
    assert.match(a.log.lines[0], /^GET \/hello 200 \d+\.\dms$/);
    assert.match(a.log.lines[1], /^GET \/nope 404 /);
  });

  test('ready() is awaited when it returns a Promise, before routing', async () => {
    let reloaded = false;
    const a = fakeApp([['GET', '/r', (ctx) => void ctx.respond(200, reloaded)]], {
      ready: () =>
        new Promise<void>((r) =>
          setTimeout(() => {
            reloaded = true;
            r();
          }, 5),
        ),
    });
    const out = await dispatch(a, req('GET', '/r'));
    assert.equal(out.body, 'true');
    assert.equal(a.readyCalls, 1);
  });

  test('built-ins under /_app/ answer before the router; null falls through', async () => {
    const a = fakeApp([['GET', '/_app/user', (ctx) => void ctx.respond(200, 'user')]], {
      builtin: (_r, path) => (path === '/_app/rest-api' ? errorResponse(418, 'teapot', 'builtin') : null),
    });
    assert.equal((await dispatch(a, req('GET', '/_app/rest-api?x=1'))).status, 418);
    assert.equal((await dispatch(a, req('GET', '/_app/user'))).body, '"user"');
    assert.equal((await dispatch(a, req('GET', '/_app/none'))).status, 404);
  });
});
