import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { HALT, type TrustProxy } from '../../../plugins/sdk.js';
import { RequestContext } from '../../../vm/runtime/context.js';
import type { HeadersValue } from '../../../vm/runtime/language-values.js';
import { parseQuery } from '../../../vm/runtime/request-view.js';
import type { IncomingRequest } from '../../../vm/runtime/types.js';
import { type HostObject, RvmError, getField, type Value } from '../../../vm/values.js';
import { fakeApp } from './fake-app.js';
import { DEFAULT_LIMITS } from '../../../vm/runtime/limits.js';

function incoming(over: Partial<IncomingRequest> = {}): IncomingRequest {
  return { method: 'GET', url: '/x?a=1', headers: {}, remoteAddress: '10.0.0.1', encrypted: false, body: null, ...over };
}

function ctx(over: Partial<IncomingRequest> = {}, trustProxy: TrustProxy = false, rawQuery = 'a=1'): RequestContext {
  const app = fakeApp([], { settings: { trustProxy } });
  return new RequestContext(incoming(over), '/x', rawQuery, { id: '7' }, app);
}

describe('request view', () => {
  test('query is parsed on first read only; repeated keys → list', () => {
    const c = ctx({}, false, 'a=1&b=x+y&a=2&flag&e=%ZZ&__proto__=p');
    const view = c.request as unknown as { _query: unknown };
    assert.equal(view._query, null);
    const q = c.request.query;
    assert.deepEqual(q.a, ['1', '2']);
    assert.equal(q.b, 'x y');
    assert.equal(q.flag, '');
    assert.equal(q.e, '%ZZ');
    assert.equal(Object.getPrototypeOf(q), Object.prototype);
    assert.equal(Object.getOwnPropertyDescriptor(q, '__proto__')?.value, 'p');
    assert.equal(c.request.query, q);
  });

  test('parseQuery edge cases', () => {
    assert.deepEqual(parseQuery(''), {});
    assert.deepEqual(parseQuery('&&a=&=v&'), { a: '', '': 'v' });
  });

  test('cookies are parsed lazily from the header', () => {
    const c = ctx({ headers: { cookie: 'sid=abc; theme=dark' } });
    assert.deepEqual({ ...c.request.cookies }, { sid: 'abc', theme: 'dark' });
  });

  test('ip and secure without trustProxy ignore forwarding headers', () => {
    const c = ctx({ headers: { 'x-forwarded-for': '1.2.3.4, 10.0.0.2', 'x-forwarded-proto': 'https' } }, false);
    assert.equal(c.request.ip, '10.0.0.1');
    assert.equal(c.request.secure, false);
  });

  test('with trustProxy: the right-most X-Forwarded-For entry behind the proxy, X-Forwarded-Proto https', () => {
    const c = ctx({ headers: { 'x-forwarded-for': ' 1.2.3.4 , 10.0.0.2', 'x-forwarded-proto': 'HTTPS' } }, true);
    assert.equal(c.request.ip, '10.0.0.2');
    assert.equal(c.request.proxied, true);
    assert.equal(c.request.secure, true);
    const listed = ctx({ headers: { 'x-forwarded-for': ' 1.2.3.4 , 10.0.0.2' } }, ['10.0.0.0/8']);
    assert.equal(listed.request.ip, '1.2.3.4');
    const plain = ctx({ headers: { 'x-forwarded-proto': 'http' } }, true);
    assert.equal(plain.request.ip, '10.0.0.1');
    assert.equal(plain.request.secure, false);
  });

  test('X-Forwarded-Proto from a peer that is not a trusted proxy is ignored', () => {
    const c = ctx({ remoteAddress: '203.0.113.9', headers: { 'x-forwarded-for': '10.0.0.5', 'x-forwarded-proto': 'https' } }, ['10.0.0.0/8']);
    assert.equal(c.request.proxied, false);
    assert.equal(c.request.ip, '203.0.113.9');
    assert.equal(c.request.secure, false);
  });

  test('an encrypted connection is secure; IPv4-mapped addresses are shown as IPv4', () => {
    const c = ctx({ encrypted: true, remoteAddress: '::ffff:127.0.0.1' });
    assert.equal(c.request.secure, true);
    assert.equal(c.request.ip, '127.0.0.1');
    assert.equal(ctx({ remoteAddress: '::1' }).request.ip, '::1');
  });

  test('id: a sane X-Request-Id is kept, anything else replaced by a fresh unique id', () => {
    assert.equal(ctx({ headers: { 'x-request-id': 'abc-123' } }).request.id, 'abc-123');
    const a = ctx({ headers: { 'x-request-id': 'bad id\n' } }).request.id;
    const b = ctx().request.id;
    assert.notEqual(a, 'bad id\n');
    assert.notEqual(a, b);
    assert.match(b, /^[0-9a-z]+-[0-9a-z]+$/);
    assert.notEqual(ctx({ headers: { 'x-request-id': 'x'.repeat(129) } }).request.id.length, 129);
  });
});

describe('answering', () => {
  test('respond sets the draft and returns HALT', () => {
    const c = ctx();
    assert.equal(c.respond(201, { ok: true }), HALT);
    assert.equal(c.response.status, 201);
    assert.equal(c.response.kind, 'json');
    assert.equal(c.response.answered, true);
  });

  test('fail: error body, default code from status, extra headers', () => {
    const c = ctx();
    assert.equal(c.fail(401, 'Login first', undefined, { 'WWW-Authenticate': 'Bearer' }), HALT);
    assert.deepEqual(c.response.body, { error: 'Login first', code: 'unauthorized' });
    assert.equal(c.response.getHeader('www-authenticate'), 'Bearer');
    const d = ctx();
    d.fail(403, 'Premium required', 'premium_required');
    assert.deepEqual(d.response.body, { error: 'Premium required', code: 'premium_required' });
  });

  test('next() outside middleware → next_outside_middleware; inside, runs the handler', () => {
    const c = ctx();
    assert.throws(
      () => c.next(),
      (e: unknown) => e instanceof RvmError && e.code === 'next_outside_middleware',
    );
    c.nextHandler = () => 'ran';
    assert.equal(c.next(), 'ran');
  });

  test('log lines are tagged with the request id', () => {
    const app = fakeApp([]);
    const c = new RequestContext(incoming({ headers: { 'x-request-id': 'rid1' } }), '/x', '', {}, app);
    c.log('hello');
    assert.deepEqual(app.log.lines, ['[rid1] hello']);
  });

  test('locals persist within the request', () => {
    const c = ctx();
    c.locals.set('user', { id: 1 });
    assert.deepEqual(c.locals.get('user'), { id: 1 });
  });
});

describe('language values', () => {
  test('request fields', () => {
    const c = ctx({ method: 'POST', url: '/x?a=1', headers: { 'x-api-key': 'k', cookie: 'a=b' } });
    const r = c.requestValue() as HostObject;
    assert.equal(r.typeName, 'request');
    assert.equal(getField(r, 'method'), 'POST');
    assert.equal(getField(r, 'path'), '/x');
    assert.equal(getField(r, 'url'), '/x?a=1');
    assert.equal(getField(r, 'ip'), '10.0.0.1');
    assert.deepEqual(getField(r, 'params'), { id: '7' });
    assert.deepEqual(getField(r, 'query'), { a: '1' });
    assert.deepEqual(getField(r, 'cookies'), { a: 'b' });
    assert.equal(getField(r, 'body'), null);
    assert.equal(typeof getField(r, 'id'), 'string');
    assert.equal(getField(r, 'nope'), null);
    assert.ok(r.keys().includes('headers'));
  });

  test('request.headers is case-insensitive, lists keys, and serialises to a plain object', () => {
    const c = ctx({ headers: { 'x-api-key': 'k', accept: 'text/html', 'set-cookie': ['a', 'b'] } });
    const h = getField(c.requestValue(), 'headers') as HeadersValue;
    assert.equal(getField(h, 'X-Api-Key'), 'k');
    assert.equal(getField(h, 'x-api-key'), 'k');
    assert.equal(getField(h, 'missing'), null);
    assert.equal(getField(h, 'constructor'), null);
    assert.deepEqual(getField(h, 'Set-Cookie'), ['a', 'b']);
    assert.deepEqual(h.keys().sort(), ['accept', 'set-cookie', 'x-api-key']);
    assert.deepEqual(JSON.parse(JSON.stringify(h)), { 'x-api-key': 'k', accept: 'text/html', 'set-cookie': ['a', 'b'] });
  });

  test('body starts as the raw parsed body and can be replaced; request.body stays raw', () => {
    const app = fakeApp([]);
    const c = new RequestContext(incoming(), '/x', '', {}, app, { kind: 'json', value: { a: 1, extra: 2 } });
    assert.equal(c.bodyKind, 'json');
    assert.deepEqual(c.body, { a: 1, extra: 2 });
    c.body = { a: 1 };
    assert.deepEqual(c.body, { a: 1 });
    assert.deepEqual(getField(c.requestValue(), 'body'), { a: 1, extra: 2 });
  });

  test('query: ambient value replaceable after validation, request.query stays raw', () => {
    const c = ctx({}, false, 'page=2');
    assert.deepEqual(c.queryValue(), { page: '2' });
    c.setQueryValue({ page: 2 });
    assert.deepEqual(c.queryValue(), { page: 2 });
    assert.deepEqual(getField(c.requestValue(), 'query'), { page: '2' });
  });

  test('params and query values are plain language objects', () => {
    const c = ctx();
    const p = c.paramsValue() as Record<string, Value>;
    assert.equal(Object.getPrototypeOf(p), Object.prototype);
    assert.deepEqual(p, { id: '7' });
  });

  test('response value reflects the draft live', () => {
    const c = ctx();
    const r = c.responseValue();
    assert.equal(getField(r, 'status'), 204);
    c.respond(201, { ok: true });
    c.response.setHeader('X-Total', '3');
    assert.equal(getField(r, 'status'), 201);
    assert.equal(getField(getField(r, 'headers'), 'x-TOTAL'), '3');
    assert.deepEqual(JSON.parse(JSON.stringify(r)), { status: 201, headers: { 'x-total': '3' } });
  });
});

describe('end of request', () => {
  test('atEnd listeners run once, in order, when the request ends; a failing one is logged and the rest still run', async () => {
    const app = fakeApp([]);
    const c = new RequestContext(incoming(), '/x', '', {}, app);
    const ran: string[] = [];
    c.atEnd(() => void ran.push('first'));
    c.atEnd(() => {
      throw new Error('boom');
    });
    c.atEnd(() => Promise.reject(new Error('late boom')));
    c.atEnd(() => void ran.push('last'));
    c.ended();
    c.ended();
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(ran, ['first', 'last']);
    const errors = app.log.errors.filter((l) => l.includes('end of request'));
    assert.equal(errors.length, 2, errors.join('\n'));
    assert.match(errors.join('\n'), /boom[\s\S]*late boom/);
  });
});

describe('result memory', () => {
  test("chargeMemory charges the app-wide limits.maxResultMemory: up to it passes, a byte more is refused (nothing charged), releaseMemory gives back the request's share", () => {
    const app = fakeApp([], { settings: { limits: { ...DEFAULT_LIMITS, maxResultMemory: 1000 } } });
    const first = new RequestContext(incoming(), '/x', '', {}, app);
    const second = new RequestContext(incoming(), '/x', '', {}, app);
    assert.equal(first.chargeMemory(600), true);
    assert.equal(second.chargeMemory(400), true);
    assert.equal(app.admission.resultMemory, 1000);
    assert.equal(second.chargeMemory(1), false);
    assert.equal(app.admission.resultMemory, 1000);
    first.releaseMemory();
    assert.equal(app.admission.resultMemory, 400);
    first.releaseMemory();
    assert.equal(app.admission.resultMemory, 400, 'a second release gives back nothing more');
    assert.equal(second.chargeMemory(600), true);
    second.releaseMemory();
    assert.equal(app.admission.resultMemory, 0);
  });
});
