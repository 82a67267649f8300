import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { HALT, HostObject, RESPONSE_HELPERS, RvmError, SecretText } from '../../plugins/sdk.js';
import type { Value } from '../../plugins/sdk.js';
import type { PluginRegistry } from '../../vm/host/registry.js';
import { STANDARD_PLUGINS } from '../../stdlib/index.js';
import { core } from '../../stdlib/core/index.js';
import { fakeContext, type FakeContext, loadForTest, type LoadedPlugins } from '../../plugins/testing.js';

let kit: LoadedPlugins;
let registry: PluginRegistry;

before(async () => {
  kit = await loadForTest([core]);
  registry = kit.registry;
});

/** Calls a core native with a fresh (or the given) context. */
function call(name: string, ...args: (Value | undefined)[]): unknown {
  return callIn(fakeContext(), name, ...args);
}

function callIn(ctx: FakeContext, name: string, ...args: (Value | undefined)[]): unknown {
  return kit.callIn(ctx, name, ...args);
}

function throwsCode(fn: () => unknown, code: string): void {
  assert.throws(fn, (e: unknown) => e instanceof RvmError && e.code === code);
}

class FakeHeaders extends HostObject {
  readonly typeName = 'headers';
  constructor(private readonly data: Record<string, string>) {
    super();
  }
  get(key: string): Value | undefined {
    return this.data[key.toLowerCase()];
  }
  override keys(): string[] {
    return Object.keys(this.data);
  }
  toJSON(): unknown {
    return this.data;
  }
}

const EXPECTED_NATIVES = [
  'len keys values contains lower upper trim split join replace starts_with ends_with json_parse json_stringify now timestamp',
  'int number text round floor ceil min max abs log set_header set_headers set_cookie sent',
  'map filter find any all reduce sort_by group_by count_by min_by max_by',
  'response.ok response.created response.accepted response.no_content response.redirect response.bad_request',
  'response.unauthorized response.forbidden response.not_found response.conflict response.unprocessable',
  'response.too_many_requests response.json response.text response.html',
  'base64_encode base64_decode base64url_encode base64url_decode hex_encode url_encode url_decode query_string parse_query',
  'parse_datetime to_unix from_unix date_add date_diff start_of day_of_week format_date',
  'slice index_of pad_start pad_end repeat trim_start trim_end lines format_number',
  'regex_match regex_find regex_find_all regex_replace regex_split',
  'push sort reverse unique sum avg flatten range chunk zip first last',
  'merge pick omit entries from_entries has type_of random_int sqrt clamp',
]
  .join(' ')
  .split(' ');

describe('core plugin', () => {
  test('registers exactly the documented natives, each with a doc and typed params', () => {
    assert.deepEqual([...registry.natives.keys()].sort(), [...EXPECTED_NATIVES].sort());
    for (const n of registry.natives.values()) {
      assert.equal(n.plugin, 'core');
      assert.ok(n.meta.doc.length > 10, `${n.name} has a doc`);
      for (const p of n.meta.params) assert.ok(p.type, `${n.name}(${p.name}) has a type`);
    }
    assert.deepEqual([...registry.guards.keys()].sort(), ['ip', 'method', 'time']);
  });

  test('is the first standard plugin', () => {
    assert.equal(STANDARD_PLUGINS[0], core);
  });
});

describe('text and collections', () => {
  test('len counts code points, items and keys', () => {
    assert.equal(call('len', 'é😀a'), 3);
    assert.equal(call('len', ''), 0);
    assert.equal(call('len', [1, 2, [3]]), 3);
    assert.equal(call('len', { a: 1, b: null }), 2);
    assert.equal(call('len', new FakeHeaders({ a: '1' })), 1);
    // A secret's length, in characters like any text (it answered 0, as a host object without keys).
    assert.equal(call('len', new SecretText('s3cr3t-token-of-25-bytes!')), 25);
    assert.equal(call('len', new SecretText('é😀')), 2);
    throwsCode(() => call('len', 5), 'type_error');
    throwsCode(() => call('len', null), 'type_error');
    throwsCode(() => call('len', true), 'type_error');
  });

  test('keys and values of objects and host objects', () => {
    assert.deepEqual(call('keys', { b: 1, a: 2 }), ['b', 'a']);
    assert.deepEqual(call('values', { b: 1, a: [2] }), [1, [2]]);
    const h = new FakeHeaders({ 'x-a': '1', 'x-b': '2' });
    assert.deepEqual(call('keys', h), ['x-a', 'x-b']);
    assert.deepEqual(call('values', h), ['1', '2']);
    throwsCode(() => call('keys', [1]), 'type_error');
    throwsCode(() => call('values', 'abc'), 'type_error');
  });

  test('contains on text, lists (structural) and objects', () => {
    assert.equal(call('contains', 'hello', 'ell'), true);
    assert.equal(call('contains', 'hello', 'xyz'), false);
    assert.equal(call('contains', [1, { a: [2] }], { a: [2] }), true);
    assert.equal(call('contains', [1, 2], '1'), false);
    assert.equal(call('contains', [null], null), true);
    assert.equal(call('contains', { a: 1 }, 'a'), true);
    assert.equal(call('contains', { a: 1 }, 'constructor'), false);
    assert.equal(call('contains', new FakeHeaders({ 'x-a': '1' }), 'x-a'), true);
    throwsCode(() => call('contains', 'abc', 1), 'type_error');
    throwsCode(() => call('contains', 42, 4), 'type_error');
  });

  test('lower, upper, trim', () => {
    assert.equal(call('lower', 'ÄbC'), 'äbc');
    assert.equal(call('upper', 'straße'), 'STRASSE');
    assert.equal(call('trim', ' \t a b \n'), 'a b');
    for (const name of ['lower', 'upper', 'trim']) throwsCode(() => call(name, 1), 'type_error');
  });

  test('split, join', () => {
    assert.deepEqual(call('split', 'a,b,,c', ','), ['a', 'b', '', 'c']);
    assert.deepEqual(call('split', 'a😀', ''), ['a', '😀']);
    throwsCode(() => call('split', 'a', 1), 'type_error');
    assert.equal(call('join', [1, 'a', null, true], '-'), '1-a-null-true');
    assert.equal(call('join', ['a', 'b']), 'ab');
    assert.equal(call('join', ['a', 'b'], null), 'ab');
    assert.equal(call('join', [{ a: 1 }], ''), '{"a":1}');
    throwsCode(() => call('join', 'ab', ','), 'type_error');
  });

  test('replace is literal and replaces every occurrence', () => {
    assert.equal(call('replace', 'a.b.c', '.', '-'), 'a-b-c');
    assert.equal(call('replace', 'x+y', '+', '$&'), 'x$&y');
    assert.equal(call('replace', 'abc', '', 'X'), 'abc');
    throwsCode(() => call('replace', 'abc', 'b', 1), 'type_error');
  });

  test('replace and join refuse results beyond the text limit', () => {
    const big = 'a'.repeat(1 << 20);
    throwsCode(() => call('replace', big, 'a', 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'), 'text_too_long');
    throwsCode(() => call('join', Array(40).fill(big), ''), 'text_too_long');
  });

  test('starts_with and ends_with', () => {
    assert.equal(call('starts_with', '/api/x', '/api'), true);
    assert.equal(call('starts_with', '/api/x', '/API'), false);
    assert.equal(call('ends_with', 'file.png', '.png'), true);
    throwsCode(() => call('ends_with', null, 'x'), 'type_error');
  });
});

describe('json', () => {
  test('json_parse builds values and keeps __proto__ as data', () => {
    assert.deepEqual(call('json_parse', '{"a":[1,true,null]}'), { a: [1, true, null] });
    const v = call('json_parse', '{"__proto__":{"admin":true}}') as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(v), Object.prototype);
    assert.equal(({} as Record<string, unknown>).admin, undefined);
    assert.deepEqual(Object.keys(v), ['__proto__']);
    assert.equal((v as { admin?: unknown }).admin, undefined);
  });

  test('json_parse refuses malformed and too deeply nested input', () => {
    throwsCode(() => call('json_parse', '{a:1}'), 'invalid_json');
    throwsCode(() => call('json_parse', ''), 'invalid_json');
    throwsCode(() => call('json_parse', '['.repeat(100_000) + ']'.repeat(100_000)), 'invalid_json');
    assert.equal(call('json_parse', '"ok"'), 'ok');
    throwsCode(() => call('json_parse', 5), 'type_error');
  });

  test('json_stringify, host objects and cycles', () => {
    assert.equal(call('json_stringify', { a: [1, 'x'] }), '{"a":[1,"x"]}');
    assert.equal(call('json_stringify', null), 'null');
    assert.equal(call('json_stringify', { h: new FakeHeaders({ a: '1' }) }), '{"h":{"a":"1"}}');
    const loop: Record<string, Value> = {};
    loop.self = loop;
    throwsCode(() => call('json_stringify', loop), 'invalid_argument');
  });
});

describe('time', () => {
  test('now is ISO-8601 UTC and timestamp is Unix seconds', () => {
    const before = Date.now();
    const now = call('now') as string;
    assert.match(now, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.ok(Date.parse(now) >= before - 1);
    const ts = call('timestamp') as number;
    assert.ok(Math.abs(ts - Date.now() / 1000) < 5);
    assert.ok(ts < 1e11, 'seconds, not milliseconds');
  });
});

describe('conversions', () => {
  test('int', () => {
    assert.equal(call('int', 3.9), 3);
    assert.equal(call('int', -3.9), -3);
    assert.ok(Object.is(call('int', -0.5), 0));
    assert.equal(call('int', '12'), 12);
    assert.equal(call('int', ' -12 '), -12);
    assert.equal(call('int', '+7'), 7);
    for (const bad of ['12abc', 'abc', '', '1.5', '1e3', '0x10', '99999999999999999999']) assert.equal(call('int', bad), null, bad);
    assert.equal(call('int', true), 1);
    assert.equal(call('int', false), 0);
    assert.equal(call('int', null), null);
    throwsCode(() => call('int', [1]), 'type_error');
    throwsCode(() => call('int', {}), 'type_error');
  });

  test('number', () => {
    assert.equal(call('number', '1.5'), 1.5);
    assert.equal(call('number', ' -2e3 '), -2000);
    assert.equal(call('number', '.5'), 0.5);
    assert.equal(call('number', 4), 4);
    for (const bad of ['1.5kg', 'abc', '', '0x10', 'Infinity', '1e999', '1_000']) assert.equal(call('number', bad), null, bad);
    assert.equal(call('number', true), 1);
    assert.equal(call('number', null), null);
    throwsCode(() => call('number', [1]), 'type_error');
  });

  test('text', () => {
    assert.equal(call('text', 1.5), '1.5');
    assert.equal(call('text', null), 'null');
    assert.equal(call('text', true), 'true');
    assert.equal(call('text', [1, 'a']), '[1,"a"]');
    assert.equal(call('text', 'x'), 'x');
  });
});

describe('math', () => {
  test('round halves away from zero on the decimal value', () => {
    assert.equal(call('round', 2.5), 3);
    assert.equal(call('round', -2.5), -3);
    assert.equal(call('round', 1.005, 2), 1.01);
    assert.equal(call('round', 1.2345, 3), 1.235);
    assert.equal(call('round', 1234, -2), 1200);
    assert.equal(call('round', 7), 7);
    assert.equal(call('round', 0.1 + 0.2, 10), 0.3);
    assert.equal(call('round', 1e-7, 2), 0);
    assert.ok(Object.is(call('round', -0.4), 0));
    throwsCode(() => call('round', 'x'), 'type_error');
    throwsCode(() => call('round', 1, 1.5), 'type_error');
    throwsCode(() => call('round', 1, 500), 'invalid_argument');
  });

  test('floor, ceil, abs', () => {
    assert.equal(call('floor', -1.5), -2);
    assert.equal(call('ceil', 1.2), 2);
    assert.ok(Object.is(call('ceil', -0.5), 0));
    assert.equal(call('abs', -3), 3);
    for (const name of ['floor', 'ceil', 'abs']) throwsCode(() => call(name, '1'), 'type_error');
  });

  test('min and max take several numbers or one list', () => {
    assert.equal(call('min', 3, 1, 2), 1);
    assert.equal(call('max', 3, 1, 2), 3);
    assert.equal(call('min', [4, -1]), -1);
    assert.equal(call('max', [4, -1]), 4);
    assert.equal(call('max', 5), 5);
    assert.equal(call('min'), null);
    assert.equal(call('max', []), null);
    throwsCode(() => call('min', 1, 'a'), 'type_error');
    throwsCode(() => call('max', [1, null]), 'type_error');
  });
});

describe('log', () => {
  test('joins text forms with spaces and keeps one line', () => {
    const ctx = fakeContext();
    assert.equal(callIn(ctx, 'log', 'user', 7, null, { a: 1 }), null);
    callIn(ctx, 'log', 'evil\nGET /admin 200\r\x1b[31m\t\u009b');
    assert.deepEqual(ctx.logs, ['user 7 null {"a":1}', 'evil\\nGET /admin 200\\r\\x1b[31m\\t\\x9b']);
  });
});

describe('headers', () => {
  test('set_header sets a lower-case header, replacing earlier values', () => {
    const ctx = fakeContext();
    callIn(ctx, 'set_header', 'X-Frame-Options', 'DENY');
    callIn(ctx, 'set_header', 'x-frame-options', 'SAMEORIGIN');
    callIn(ctx, 'set_header', 'X-Count', 3);
    assert.equal(ctx.response.getHeader('x-frame-options'), 'SAMEORIGIN');
    assert.equal(ctx.response.headers.get('x-count'), '3');
  });

  test('header injection and invalid names are refused', () => {
    const ctx = fakeContext();
    throwsCode(() => callIn(ctx, 'set_header', 'X-A', 'a\r\nSet-Cookie: admin=1'), 'invalid_header');
    throwsCode(() => callIn(ctx, 'set_header', 'X-A', 'a\nb'), 'invalid_header');
    throwsCode(() => callIn(ctx, 'set_header', 'X-A', 'a\x00b'), 'invalid_header');
    throwsCode(() => callIn(ctx, 'set_header', 'X-A', 'snowman ☃'), 'invalid_header');
    throwsCode(() => callIn(ctx, 'set_header', 'X A', 'v'), 'invalid_header');
    throwsCode(() => callIn(ctx, 'set_header', 'X-A:\r\nB', 'v'), 'invalid_header');
    throwsCode(() => callIn(ctx, 'set_header', '', 'v'), 'invalid_header');
    throwsCode(() => callIn(ctx, 'set_header', 'Content-Length', '0'), 'invalid_header');
    throwsCode(() => callIn(ctx, 'set_header', 'Transfer-Encoding', 'chunked'), 'invalid_header');
    throwsCode(() => callIn(ctx, 'set_header', 'X-A', ['a']), 'type_error');
    throwsCode(() => callIn(ctx, 'set_header', 1, 'a'), 'type_error');
    assert.equal(ctx.response.headers.size, 0);
  });

  test('set_headers sets all entries or none', () => {
    const ctx = fakeContext();
    callIn(ctx, 'set_headers', { 'X-A': '1', 'Cache-Control': 'no-store' });
    assert.equal(ctx.response.getHeader('x-a'), '1');
    assert.equal(ctx.response.getHeader('cache-control'), 'no-store');
    throwsCode(() => callIn(ctx, 'set_headers', { 'X-B': 'ok', 'X-C': 'bad\r\n' }), 'invalid_header');
    assert.equal(ctx.response.getHeader('x-b'), undefined);
    throwsCode(() => callIn(ctx, 'set_headers', 'X-A: 1'), 'type_error');
  });
});

describe('cookies', () => {
  function cookies(ctx: FakeContext): string[] {
    const v = ctx.response.getHeader('set-cookie');
    return v === undefined ? [] : Array.isArray(v) ? v : [v];
  }

  test('defaults: HttpOnly, SameSite=Lax, Path=/, no Secure over plain HTTP', () => {
    const ctx = fakeContext();
    callIn(ctx, 'set_cookie', 'sid', 'abc');
    const [c] = cookies(ctx);
    assert.match(c, /^sid=abc;/);
    assert.match(c, /; Path=\/(;|$)/);
    assert.match(c, /; HttpOnly(;|$)/);
    assert.match(c, /; SameSite=Lax(;|$)/);
    assert.doesNotMatch(c, /Secure/);
  });

  test('Secure by default when the request is secure', () => {
    const ctx = fakeContext({ request: { secure: true } });
    callIn(ctx, 'set_cookie', 'sid', 'abc');
    assert.match(cookies(ctx)[0], /; Secure(;|$)/);
  });

  test('options map to attributes', () => {
    const ctx = fakeContext();
    callIn(ctx, 'set_cookie', 'prefs', 'dark', {
      max_age: 3600,
      expires: '2030-01-02T03:04:05Z',
      path: '/app',
      domain: 'example.com',
      http_only: false,
      same_site: 'strict',
      secure: true,
    });
    const [c] = cookies(ctx);
    assert.match(c, /; Max-Age=3600(;|$)/);
    assert.match(c, /; Expires=Wed, 02 Jan 2030 03:04:05 GMT(;|$)/);
    assert.match(c, /; Path=\/app(;|$)/);
    assert.match(c, /; Domain=example\.com(;|$)/);
    assert.match(c, /; SameSite=Strict(;|$)/);
    assert.match(c, /; Secure(;|$)/);
    assert.doesNotMatch(c, /HttpOnly/);
  });

  test('expires as Unix seconds, SameSite=None forces Secure', () => {
    const ctx = fakeContext();
    callIn(ctx, 'set_cookie', 'x', '1', { expires: 0, same_site: 'None' });
    const [c] = cookies(ctx);
    assert.match(c, /; Expires=Thu, 01 Jan 1970 00:00:00 GMT(;|$)/);
    assert.match(c, /; SameSite=None(;|$)/);
    assert.match(c, /; Secure(;|$)/);
  });

  test('several cookies give several headers', () => {
    const ctx = fakeContext();
    callIn(ctx, 'set_cookie', 'a', '1');
    callIn(ctx, 'set_cookie', 'b', '2');
    const all = cookies(ctx);
    assert.equal(all.length, 2);
    assert.match(all[0], /^a=1;/);
    assert.match(all[1], /^b=2;/);
  });

  test('values cannot inject attributes or headers', () => {
    const ctx = fakeContext();
    callIn(ctx, 'set_cookie', 'a', 'x; Domain=evil.com\r\nX: y');
    const [c] = cookies(ctx);
    assert.doesNotMatch(c, /[;\r\n] ?Domain=evil/);
    assert.doesNotMatch(c, /[\r\n]/);
    assert.match(c, /^a=[^;\s]+;/);
  });

  test('invalid names, attributes and options are refused', () => {
    const ctx = fakeContext();
    throwsCode(() => callIn(ctx, 'set_cookie', 'a;b', 'v'), 'invalid_cookie');
    throwsCode(() => callIn(ctx, 'set_cookie', 'a b', 'v'), 'invalid_cookie');
    throwsCode(() => callIn(ctx, 'set_cookie', 'a\r\n', 'v'), 'invalid_cookie');
    throwsCode(() => callIn(ctx, 'set_cookie', 'a', 'v', { path: '/; Domain=evil' }), 'invalid_cookie');
    throwsCode(() => callIn(ctx, 'set_cookie', 'a', 'v', { domain: 'x\r\ny' }), 'invalid_cookie');
    throwsCode(() => callIn(ctx, 'set_cookie', 'a', 'v', { httpOnly: true }), 'invalid_argument');
    throwsCode(() => callIn(ctx, 'set_cookie', 'a', 'v', { same_site: 'loose' }), 'invalid_argument');
    throwsCode(() => callIn(ctx, 'set_cookie', 'a', 'v', { expires: 'not a date' }), 'invalid_argument');
    throwsCode(() => callIn(ctx, 'set_cookie', 'a', 'v', { max_age: '60' }), 'type_error');
    throwsCode(() => callIn(ctx, 'set_cookie', 'a', 'v', { secure: 'yes' }), 'type_error');
    throwsCode(() => callIn(ctx, 'set_cookie', 'a', { v: 1 }), 'type_error');
    throwsCode(() => callIn(ctx, 'set_cookie', 'a', 'v', 'HttpOnly'), 'type_error');
    assert.deepEqual(cookies(ctx), []);
  });
});

describe('response helpers', () => {
  test('the helpers registered are exactly those the compiler infers responses from', () => {
    const registered = [...registry.natives.keys()].filter((n) => n.startsWith('response.')).map((n) => n.slice('response.'.length));
    assert.deepEqual(registered.sort(), Object.keys(RESPONSE_HELPERS).sort());
  });

  test('success helpers answer JSON with their status and halt', () => {
    for (const [name, status] of [
      ['ok', 200],
      ['created', 201],
      ['accepted', 202],
    ] as const) {
      const ctx = fakeContext();
      assert.equal(callIn(ctx, `response.${name}`, { id: 1 }), HALT);
      assert.deepEqual(ctx.answers, [{ status, body: { id: 1 }, kind: 'json' }]);
      const empty = fakeContext();
      callIn(empty, `response.${name}`);
      assert.deepEqual(empty.answers, [{ status, body: null, kind: 'json' }]);
    }
  });

  test('no_content answers 204 with an empty body', () => {
    const ctx = fakeContext();
    assert.equal(callIn(ctx, 'response.no_content'), HALT);
    assert.deepEqual(ctx.answers, [{ status: 204, body: null, kind: 'empty' }]);
  });

  test('error helpers answer with the error body and default messages', () => {
    const cases = [
      ['bad_request', 400],
      ['unauthorized', 401],
      ['forbidden', 403],
      ['not_found', 404],
      ['conflict', 409],
      ['unprocessable', 422],
      ['too_many_requests', 429],
    ] as const;
    for (const [name, status] of cases) {
      const ctx = fakeContext();
      assert.equal(callIn(ctx, `response.${name}`, 'Nope'), HALT);
      assert.deepEqual(ctx.failures, [{ status, message: 'Nope', code: undefined, headers: undefined }]);
      const plain = fakeContext();
      callIn(plain, `response.${name}`);
      assert.equal(plain.failures[0].status, status);
      assert.ok(plain.failures[0].message.length > 0);
    }
    const ctx = fakeContext();
    callIn(ctx, 'response.unauthorized');
    assert.equal(ctx.response.headers.size, 0, 'unauthorized adds no header');
  });

  test('redirect sets Location, defaults to 302 and accepts only redirect statuses', () => {
    const ctx = fakeContext();
    assert.equal(callIn(ctx, 'response.redirect', '/login'), HALT);
    assert.deepEqual(ctx.answers, [{ status: 302, body: null, kind: 'empty' }]);
    assert.equal(ctx.response.getHeader('location'), '/login');
    for (const status of [301, 302, 303, 307, 308]) {
      const each = fakeContext();
      callIn(each, 'response.redirect', 'https://example.com/', status);
      assert.equal(each.answers[0].status, status);
    }
    for (const status of [200, 300, 304, 404, 302.5, '302']) {
      throwsCode(() => call('response.redirect', '/x', status), 'invalid_argument');
    }
  });

  test('redirect refuses control characters and encodes spaces and non-ASCII', () => {
    const ctx = fakeContext();
    throwsCode(() => callIn(ctx, 'response.redirect', '/x\r\nSet-Cookie: a=1'), 'invalid_header');
    throwsCode(() => callIn(ctx, 'response.redirect', '/x\ty'), 'invalid_header');
    assert.equal(ctx.response.getHeader('location'), undefined);
    callIn(ctx, 'response.redirect', '/café menu?q=ü');
    assert.equal(ctx.response.getHeader('location'), '/caf%C3%A9%20menu?q=%C3%BC');
    throwsCode(() => call('response.redirect', 5), 'type_error');
  });

  test('json takes a status from 200 to 599', () => {
    const ctx = fakeContext();
    assert.equal(callIn(ctx, 'response.json', 418, { tea: true }), HALT);
    assert.deepEqual(ctx.answers, [{ status: 418, body: { tea: true }, kind: 'json' }]);
    for (const status of [99, 100, 199, 600, 200.5, '200', null]) {
      throwsCode(() => call('response.json', status, {}), 'invalid_argument');
    }
  });

  test('text and html answer 200 with their kind', () => {
    const t = fakeContext();
    callIn(t, 'response.text', 'hi');
    assert.deepEqual(t.answers, [{ status: 200, body: 'hi', kind: 'text' }]);
    const h = fakeContext();
    callIn(h, 'response.html', '<p>hi</p>');
    assert.deepEqual(h.answers, [{ status: 200, body: '<p>hi</p>', kind: 'html' }]);
    const n = fakeContext();
    callIn(n, 'response.text', 42);
    assert.equal(n.answers[0].body, '42');
  });
});
