import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  DraftResponse,
  MAX_CHECKED_NAMES,
  defaultErrorCode,
  errorBody,
  errorResponse,
  finalizeResponse,
  stringifyJson,
  withoutBody,
} from '../../../vm/runtime/response.js';
import { HostObject, RvmError, type Value } from '../../../vm/values.js';

class Secret extends HostObject {
  readonly typeName = 'secret';
  get(): Value | undefined {
    return undefined;
  }
  toJSON(): unknown {
    return '[secret]';
  }
}

function draft(status: number, body: unknown, kind: DraftResponse['kind'] = 'json'): DraftResponse {
  const d = new DraftResponse();
  d.status = status;
  d.body = body;
  d.kind = kind;
  d.answered = true;
  return d;
}

describe('finalizeResponse', () => {
  test('a draft never answered → 204 without body, headers kept', () => {
    const d = new DraftResponse();
    d.setHeader('X-Trace', 'abc');
    assert.deepEqual(finalizeResponse(d), { status: 204, headers: { 'x-trace': 'abc' }, body: null });
  });

  test('JSON with content-type and byte length; host objects use toJSON', () => {
    const out = finalizeResponse(draft(200, { message: 'héllo', key: new Secret() }));
    assert.equal(out.status, 200);
    assert.equal(out.body, '{"message":"héllo","key":"[secret]"}');
    assert.equal(out.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(out.headers['content-length'], String(Buffer.byteLength(out.body as string)));
  });

  test('text and html', () => {
    const t = finalizeResponse(draft(200, 'hi', 'text'));
    assert.equal(t.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(t.body, 'hi');
    const h = finalizeResponse(draft(201, '<p>x</p>', 'html'));
    assert.equal(h.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(h.status, 201);
  });

  test('a content-type set by the route wins', () => {
    const d = draft(200, 'a,b', 'text');
    d.setHeader('Content-Type', 'text/csv');
    assert.equal(finalizeResponse(d).headers['content-type'], 'text/csv');
  });

  test('empty kind and bodyless statuses carry no body', () => {
    const e = finalizeResponse(draft(204, null, 'empty'));
    assert.equal(e.body, null);
    assert.equal(e.headers['content-length'], undefined);
    const r = draft(302, null, 'empty');
    r.setHeader('location', '/x');
    const out = finalizeResponse(r);
    assert.deepEqual(out, { status: 302, headers: { location: '/x', 'content-length': '0' }, body: null });
    assert.equal(finalizeResponse(draft(304, { a: 1 })).body, null);
  });

  test('HEAD: GET headers and content-length, no body', () => {
    const out = withoutBody(finalizeResponse(draft(200, { message: 'hello' })));
    assert.equal(out.body, null);
    assert.equal(out.headers['content-length'], '19');
  });

  test('set-cookie lists stay lists', () => {
    const d = draft(200, null);
    d.appendHeader('Set-Cookie', 'a=1');
    d.appendHeader('set-cookie', 'b=2');
    assert.deepEqual(finalizeResponse(d).headers['set-cookie'], ['a=1', 'b=2']);
  });
});

describe('stringifyJson', () => {
  test('host objects serialise through toJSON wherever they are, past the plain-data scan', () => {
    const many = Array.from({ length: 200 }, (_, i) => i);
    assert.equal(stringifyJson([many, { deep: [new Secret()] }]), `[${JSON.stringify(many)},{"deep":["[secret]"]}]`);
    assert.equal(stringifyJson({ a: [{ b: new Secret() }] }), '{"a":[{"b":"[secret]"}]}');
    assert.equal(stringifyJson({ message: 'hello' }), '{"message":"hello"}');
    assert.equal(stringifyJson(undefined), 'null');
  });
});

describe('draft headers', () => {
  test('names are case-insensitive; remove works', () => {
    const d = new DraftResponse();
    d.setHeader('X-A', '1');
    assert.equal(d.getHeader('x-a'), '1');
    d.removeHeader('X-A');
    assert.equal(d.getHeader('x-a'), undefined);
  });

  test('CR/LF in a value or a bad name → invalid_header', () => {
    const d = new DraftResponse();
    const invalid = (e: unknown) => e instanceof RvmError && e.code === 'invalid_header';
    assert.throws(() => d.setHeader('x-a', 'v\r\nSet-Cookie: evil=1'), invalid);
    assert.throws(() => d.appendHeader('x-a', 'v\n'), invalid);
    assert.throws(() => d.setHeader('bad name', 'v'), invalid);
    assert.throws(() => d.setHeader('x', ['ok', 'no\0']), invalid);
  });

  test('past MAX_CHECKED_NAMES remembered names, every name is still checked and lower-cased; a remembered name still has its value checked', () => {
    const d = new DraftResponse();
    const invalid = (e: unknown) => e instanceof RvmError && e.code === 'invalid_header';
    d.setHeader('X-Seen', 'a');
    for (let i = 0; i < MAX_CHECKED_NAMES + 10; i++) d.setHeader(`X-Many-${i}`, String(i));
    assert.equal(d.getHeader(`x-many-${MAX_CHECKED_NAMES + 9}`), String(MAX_CHECKED_NAMES + 9));
    assert.throws(() => d.setHeader('bad name after the cap', 'v'), invalid);
    assert.throws(() => d.setHeader('X-Seen', 'b\r\nx: y'), invalid);
    assert.equal(d.getHeader('x-seen'), 'a');
  });
});

describe('error bodies', () => {
  test('the one shape', () => {
    assert.deepEqual(errorBody('Nope', 'forbidden'), { error: 'Nope', code: 'forbidden' });
    assert.deepEqual(errorBody('Bad', 'validation_failed', [{ field: 'a' }]), { error: 'Bad', code: 'validation_failed', details: [{ field: 'a' }] });
  });

  test('default codes by status', () => {
    const table: Array<[number, string]> = [
      [400, 'bad_request'],
      [401, 'unauthorized'],
      [403, 'forbidden'],
      [404, 'not_found'],
      [405, 'method_not_allowed'],
      [409, 'conflict'],
      [413, 'payload_too_large'],
      [415, 'unsupported_media_type'],
      [422, 'unprocessable'],
      [429, 'too_many_requests'],
      [500, 'internal_error'],
      [418, 'http_418'],
      [503, 'service_unavailable'],
      [507, 'http_507'],
    ];
    for (const [status, code] of table) assert.equal(defaultErrorCode(status), code);
  });

  test('errorResponse', () => {
    const out = errorResponse(405, 'method_not_allowed', 'No', { Allow: 'GET, HEAD' });
    assert.equal(out.status, 405);
    assert.deepEqual(JSON.parse(out.body as string), { error: 'No', code: 'method_not_allowed' });
    assert.equal(out.headers.allow, 'GET, HEAD');
    assert.equal(out.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(out.headers['content-length'], String((out.body as string).length));
  });
});
