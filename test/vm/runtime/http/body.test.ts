import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import {
  HttpError,
  MAX_JSON_DEPTH,
  PARSE_IN_TURN_BYTES,
  hasBody,
  hasLoneSurrogateEscape,
  parseContentType,
  parseForm,
  readBody,
} from '../../../../vm/runtime/http/body.js';
import type { IncomingRequest } from '../../../../vm/runtime/types.js';
import { DEFAULT_BODY_LIMIT } from '../../../../vm/runtime/limits.js';
import { fromJson } from '../../../../vm/values.js';

function request(body: string | Buffer | null, headers: Record<string, string> = {}, chunks?: Buffer[]): IncomingRequest {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  return {
    method: 'POST',
    url: '/',
    headers,
    remoteAddress: '127.0.0.1',
    encrypted: false,
    body: bytes === null ? null : Readable.from(chunks ?? [bytes]),
  };
}

async function rejectsWith(p: Promise<unknown>, status: number, code: string): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof HttpError, `expected HttpError, got ${String(err)}`);
    assert.equal(err.status, status);
    assert.equal(err.code, code);
    return true;
  });
}

describe('readBody', () => {
  test('the default limit is 1 MiB', () => assert.equal(DEFAULT_BODY_LIMIT, 1048576));

  test('JSON', async () => {
    const b = await readBody(request('{"a":1,"b":[true,null]}', { 'content-type': 'application/json' }), 1000);
    assert.deepEqual(b, { kind: 'json', value: { a: 1, b: [true, null] } });
  });

  test('JSON with charset and +json suffix', async () => {
    assert.deepEqual((await readBody(request('[1]', { 'content-type': 'application/json; charset=UTF-8' }), 100)).value, [1]);
    assert.deepEqual((await readBody(request('{"x":2}', { 'content-type': 'application/problem+json' }), 100)).value, { x: 2 });
  });

  test('JSON split across chunks, with multi-byte characters on the seam', async () => {
    const bytes = Buffer.from('{"name":"héllo ✓"}');
    const chunks = [bytes.subarray(0, 11), bytes.subarray(11, 17), bytes.subarray(17)];
    const b = await readBody(request(bytes, { 'content-type': 'application/json' }, chunks), 100);
    assert.deepEqual(b.value, { name: 'héllo ✓' });
  });

  test('malformed JSON → 400 invalid_json', async () => {
    await rejectsWith(readBody(request('{"a":', { 'content-type': 'application/json' }), 100), 400, 'invalid_json');
    await rejectsWith(readBody(request(Buffer.from([0x7b, 0xff, 0x7d]), { 'content-type': 'application/json' }), 100), 400, 'invalid_json');
  });

  test('a JSON string or key decoding to a lone surrogate → 400 invalid_text, small or large body; pairs and escaped backslashes are fine', async () => {
    const json = { 'content-type': 'application/json' };
    for (const text of [
      '"\\ud800"',
      '{"a":"x\\uDBFF"}',
      '{"\\udc00":1}',
      '["\\ud83d\\u0041"]',
      '["\\ud83d", "\\ude00"]',
      '"\\ude00\\ud83d"',
      '"\\\\\\ud800"',
    ]) {
      assert.equal(hasLoneSurrogateEscape(text), true, text);
      await rejectsWith(readBody(request(text, json), 1000), 400, 'invalid_text');
    }
    const large = `{"pad":"${'x'.repeat(PARSE_IN_TURN_BYTES)}","s":"\\ud800"}`;
    await rejectsWith(readBody(request(large, json), 2 * PARSE_IN_TURN_BYTES), 400, 'invalid_text');
    for (const text of ['"\\ud83d\\ude00"', '"\\\\ud800"', '{"\\uD83D\\uDE00":"😀"}', '"\\u00e9\\\\\\\\ud800"', '[1]']) {
      assert.equal(hasLoneSurrogateEscape(text), false, text);
      assert.equal((await readBody(request(text, json), 1000)).kind, 'json', text);
    }
    assert.equal((await readBody(request('"\\ud83d\\ude00"', json), 1000)).value, '😀');
  });

  test('a form or query value cannot decode to a lone surrogate: its UTF-8 escape is malformed and kept as written', () => {
    assert.deepEqual(parseForm('a=%ED%A0%80&b=%F0%9F%98%80'), { a: '%ED%A0%80', b: '😀' });
  });

  test('JSON nested deeper than MAX_JSON_DEPTH → 400 invalid_json; at the limit is fine', async () => {
    const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
    await rejectsWith(readBody(request(deep(MAX_JSON_DEPTH + 1), { 'content-type': 'application/json' }), 10_000), 400, 'invalid_json');
    const ok = await readBody(request(deep(MAX_JSON_DEPTH), { 'content-type': 'application/json' }), 10_000);
    assert.equal(ok.kind, 'json');
    // brackets inside strings don't count
    const text = JSON.stringify({ s: '['.repeat(1000) });
    assert.equal((await readBody(request(text, { 'content-type': 'application/json' }), 10_000)).kind, 'json');
  });

  test('__proto__ keys stay data and pollute nothing', async () => {
    const b = await readBody(request('{"__proto__":{"polluted":1},"a":{"__proto__":{"x":1}}}', { 'content-type': 'application/json' }), 1000);
    const value = b.value as Record<string, unknown>;
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(Object.getPrototypeOf(value), Object.prototype);
    assert.ok(Object.hasOwn(value, '__proto__'));
    const lang = fromJson(value) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(lang), Object.prototype);
    assert.deepEqual(Object.getOwnPropertyDescriptor(lang, '__proto__')?.value, { polluted: 1 });
    assert.equal((lang as { polluted?: number }).polluted, undefined);
  });

  test('urlencoded: repeated keys become lists, + is a space, __proto__ is data', async () => {
    const b = await readBody(request('a=1&b=x+y&a=2&c&__proto__=p&d=%ZZ', { 'content-type': 'application/x-www-form-urlencoded' }), 1000);
    assert.equal(b.kind, 'form');
    const v = b.value as Record<string, unknown>;
    assert.deepEqual(v.a, ['1', '2']);
    assert.equal(v.b, 'x y');
    assert.equal(v.c, '');
    assert.equal(v.d, '%ZZ');
    assert.equal(Object.getPrototypeOf(v), Object.prototype);
    assert.equal(Object.getOwnPropertyDescriptor(v, '__proto__')?.value, 'p');
  });

  test('repeated __proto__ form keys become a list without touching the prototype', () => {
    const v = parseForm('__proto__=a&__proto__=b');
    assert.deepEqual(Object.getOwnPropertyDescriptor(v, '__proto__')?.value, ['a', 'b']);
    assert.equal(Object.getPrototypeOf(v), Object.prototype);
  });

  test('text/plain', async () => {
    assert.deepEqual(await readBody(request('hi there', { 'content-type': 'text/plain' }), 100), { kind: 'text', value: 'hi there' });
  });

  test('empty body → null whatever the type', async () => {
    assert.deepEqual(await readBody(request('', { 'content-type': 'application/json' }), 100), { kind: 'none', value: null });
    assert.deepEqual(await readBody(request('', { 'content-type': 'image/png' }), 100), { kind: 'none', value: null });
    assert.deepEqual(await readBody(request(null), 100), { kind: 'none', value: null });
  });

  test('exactly at the limit is read; one byte over → 413 payload_too_large', async () => {
    const at = '"' + 'x'.repeat(98) + '"';
    assert.equal(at.length, 100);
    assert.equal((await readBody(request(at, { 'content-type': 'application/json' }), 100)).value, 'x'.repeat(98));
    const over = '"' + 'x'.repeat(99) + '"';
    await rejectsWith(readBody(request(over, { 'content-type': 'application/json' }), 100), 413, 'payload_too_large');
  });

  test('a declared content-length over the limit → 413 before reading', async () => {
    const req = request('{}', { 'content-type': 'application/json', 'content-length': '101' });
    await rejectsWith(readBody(req, 100), 413, 'payload_too_large');
  });

  test('over the limit across chunks → 413', async () => {
    const chunks = [Buffer.alloc(60, 32), Buffer.alloc(60, 32)];
    await rejectsWith(readBody(request(Buffer.concat(chunks), { 'content-type': 'text/plain' }, chunks), 100), 413, 'payload_too_large');
  });

  /** A request whose body sends half a JSON text, then ends the way `stop` says instead of cleanly. */
  function broken(stop: (stream: Readable) => void): IncomingRequest {
    const stream = new Readable({ read() {} });
    stream.push(Buffer.from('{"a":'));
    setImmediate(() => stop(stream));
    return { method: 'POST', url: '/', headers: { 'content-type': 'application/json' }, remoteAddress: '127.0.0.1', encrypted: false, body: stream };
  }

  test('a body stream that fails mid-way → 400 bad_request, later events ignored', async () => {
    const req = broken((s) => s.destroy(new Error('socket hang up')));
    await rejectsWith(readBody(req, 100), 400, 'bad_request');
    // A late error on the same stream finds a listener: it must not crash the process.
    assert.doesNotThrow(() => (req.body as Readable).emit('error', new Error('late')));
  });

  test('a body stream closed without an end or an error → 400 bad_request, never a hang', async () => {
    await rejectsWith(
      readBody(
        broken((s) => s.destroy()),
        100,
      ),
      400,
      'bad_request',
    );
  });

  test('unsupported types → 415 unsupported_media_type', async () => {
    for (const type of ['application/xml', 'multipart/mixed; boundary=x', 'image/png']) {
      await rejectsWith(readBody(request('data', { 'content-type': type }), 100), 415, 'unsupported_media_type');
    }
    await rejectsWith(readBody(request('data'), 100), 415, 'unsupported_media_type');
  });

  test('a charset other than UTF-8 → 415', async () => {
    await rejectsWith(readBody(request('{}', { 'content-type': 'application/json; charset=latin1' }), 100), 415, 'unsupported_media_type');
    await rejectsWith(readBody(request('a=1', { 'content-type': 'application/x-www-form-urlencoded; charset=utf-16' }), 100), 415, 'unsupported_media_type');
  });

  test('a stream error → 400 bad_request', async () => {
    const body = new Readable({
      read() {
        this.destroy(new Error('boom'));
      },
    });
    const req: IncomingRequest = { method: 'POST', url: '/', headers: { 'content-type': 'text/plain' }, remoteAddress: '', encrypted: false, body };
    await rejectsWith(readBody(req, 100), 400, 'bad_request');
  });
});

describe('body helpers', () => {
  test('parseContentType', () => {
    assert.deepEqual(parseContentType('Application/JSON ; Charset="UTF-8"'), { type: 'application/json', charset: 'utf-8' });
    assert.deepEqual(parseContentType(undefined), { type: '', charset: null });
  });

  test('parseContentType remembers a header it parsed, in a form no caller can change', () => {
    const header = 'application/json; charset=utf-8';
    const first = parseContentType(header);
    assert.equal(parseContentType(header), first);
    assert.ok(Object.isFrozen(first));
    assert.deepEqual(parseContentType(header), { type: 'application/json', charset: 'utf-8' });
    // Ever new headers are parsed each time, the memory bounded.
    for (let i = 0; i < 200; i++) assert.deepEqual(parseContentType(`text/x-${i}; charset=UTF-8`), { type: `text/x-${i}`, charset: 'utf-8' });
    assert.equal(parseContentType(header), first);
  });

  test('hasBody', () => {
    const s = Readable.from([]);
    const base = { method: 'POST', url: '/', remoteAddress: '', encrypted: false };
    assert.equal(hasBody({ ...base, headers: { 'content-length': '0' }, body: s }), false);
    assert.equal(hasBody({ ...base, headers: { 'content-length': '3' }, body: s }), true);
    assert.equal(hasBody({ ...base, headers: { 'transfer-encoding': 'chunked' }, body: s }), true);
    assert.equal(hasBody({ ...base, headers: {}, body: s }), false);
    assert.equal(hasBody({ ...base, headers: { 'content-length': '3' }, body: null }), false);
  });
});
