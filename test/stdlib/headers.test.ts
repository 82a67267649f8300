/**
 * The headers plugin's natives on a fake context: security_headers, set_csp, set_hsts,
 * x_frame_options, and set_cors_headers' option checks and decisions.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { HALT, RvmError } from '../../plugins/sdk.js';
import type { RequestInfo, Value } from '../../plugins/sdk.js';
import type { PluginRegistry } from '../../vm/host/registry.js';
import { core } from '../../stdlib/core/index.js';
import { headers } from '../../stdlib/headers/index.js';
import { buildCsp } from '../../stdlib/headers/csp.js';
import { HSTS_MAX_SECONDS } from '../../stdlib/headers/security.js';
import { fakeContext, type FakeContext, loadForTest, type LoadedPlugins } from '../../plugins/testing.js';

let kit: LoadedPlugins;
let registry: PluginRegistry;

before(async () => {
  kit = await loadForTest([core, headers]);
  registry = kit.registry;
});

function callIn(ctx: FakeContext, name: string, ...args: (Value | undefined)[]): unknown {
  return kit.callIn(ctx, name, ...args);
}

function throwsCode(fn: () => unknown, code: string): void {
  assert.throws(fn, (e: unknown) => e instanceof RvmError && e.code === code, `expected ${code}`);
}

/** Calls a native on a fresh context and returns the response headers it set. */
function headersAfter(name: string, ...args: (Value | undefined)[]): Map<string, string | string[]> {
  const ctx = fakeContext();
  callIn(ctx, name, ...args);
  return ctx.response.headers;
}

describe('security_headers()', () => {
  test('sets exactly the helmet 8 default set and removes X-Powered-By', () => {
    const ctx = fakeContext();
    ctx.response.setHeader('X-Powered-By', 'Express');
    assert.equal(callIn(ctx, 'security_headers'), null);
    assert.deepEqual(Object.fromEntries(ctx.response.headers), {
      'content-security-policy':
        "default-src 'self'; base-uri 'self'; font-src 'self' https: data:; form-action 'self'; frame-ancestors 'self'; img-src 'self' data:; object-src 'none'; script-src 'self'; script-src-attr 'none'; style-src 'self' https: 'unsafe-inline'; upgrade-insecure-requests",
      'strict-transport-security': 'max-age=31536000; includeSubDomains',
      'cross-origin-opener-policy': 'same-origin',
      'cross-origin-resource-policy': 'same-origin',
      'referrer-policy': 'no-referrer',
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'SAMEORIGIN',
      'x-dns-prefetch-control': 'off',
      'x-permitted-cross-domain-policies': 'none',
      'origin-agent-cluster': '?1',
      'x-download-options': 'noopen',
      'x-xss-protection': '0',
    });
  });

  test('later helpers replace their header', () => {
    const ctx = fakeContext();
    callIn(ctx, 'security_headers');
    callIn(ctx, 'x_frame_options', 'DENY');
    callIn(ctx, 'set_hsts', 63072000);
    callIn(ctx, 'set_csp', { default_src: 'none' });
    assert.equal(ctx.response.getHeader('x-frame-options'), 'DENY');
    assert.equal(ctx.response.getHeader('strict-transport-security'), 'max-age=63072000; includeSubDomains');
    assert.equal(ctx.response.getHeader('content-security-policy'), "default-src 'none'");
  });
});

describe('set_hsts()', () => {
  test('max-age with includeSubDomains by default, optional preload', () => {
    assert.equal(headersAfter('set_hsts', 31536000).get('strict-transport-security'), 'max-age=31536000; includeSubDomains');
    assert.equal(headersAfter('set_hsts', 600, false).get('strict-transport-security'), 'max-age=600');
    assert.equal(headersAfter('set_hsts', 63072000, true, true).get('strict-transport-security'), 'max-age=63072000; includeSubDomains; preload');
    assert.equal(headersAfter('set_hsts', 0).get('strict-transport-security'), 'max-age=0; includeSubDomains');
  });

  test('refuses out-of-range ages, wrong types and a preload the list would reject', () => {
    throwsCode(() => headersAfter('set_hsts', -1), 'invalid_argument');
    throwsCode(() => headersAfter('set_hsts', HSTS_MAX_SECONDS + 1), 'invalid_argument');
    throwsCode(() => headersAfter('set_hsts', 600, true, true), 'invalid_argument');
    throwsCode(() => headersAfter('set_hsts', 31536000, false, true), 'invalid_argument');
    throwsCode(() => headersAfter('set_hsts', '600'), 'type_error');
    throwsCode(() => headersAfter('set_hsts', 1.5), 'type_error');
    throwsCode(() => headersAfter('set_hsts', 600, 'yes'), 'type_error');
  });
});

describe('x_frame_options()', () => {
  test('DENY and SAMEORIGIN in any case; anything else refused', () => {
    assert.equal(headersAfter('x_frame_options', 'DENY').get('x-frame-options'), 'DENY');
    assert.equal(headersAfter('x_frame_options', 'sameorigin').get('x-frame-options'), 'SAMEORIGIN');
    for (const bad of ['ALLOW-FROM https://a.com', 'ALLOWALL', '', 'DENY\r\nSet-Cookie: x=1'])
      throwsCode(() => headersAfter('x_frame_options', bad), 'invalid_argument');
    throwsCode(() => headersAfter('x_frame_options', null), 'type_error');
  });
});

describe('set_csp()', () => {
  test('snake_case keys become directives; bare keywords, nonces and hashes are quoted', () => {
    const policy = buildCsp({
      default_src: 'self',
      script_src: ['self', 'nonce-abc123', 'sha256-AbC+/=', 'https://cdn.example.com', 'strict_dynamic'],
      style_src: "'self' unsafe-inline",
      img_src: ['self', 'data:'],
      object_src: 'none',
      frame_ancestors: ['none'],
      upgrade_insecure_requests: true,
      report_uri: false,
      sandbox: null,
    });
    assert.equal(
      policy,
      "default-src 'self'; script-src 'self' 'nonce-abc123' 'sha256-AbC+/=' https://cdn.example.com 'strict-dynamic'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; object-src 'none'; frame-ancestors 'none'; upgrade-insecure-requests",
    );
  });

  test('the native sets Content-Security-Policy', () => {
    assert.equal(
      headersAfter('set_csp', { default_src: ['self'], 'connect-src': 'https://api.example.com' }).get('content-security-policy'),
      "default-src 'self'; connect-src https://api.example.com",
    );
  });

  test('header injection through values is refused with invalid_header', () => {
    for (const bad of ["'self'; script-src *", 'https://a.com,https://b.com', 'self\r\nX-Evil: 1', 'a\u0000b', 'https://exämple.com']) {
      throwsCode(() => headersAfter('set_csp', { default_src: bad }), 'invalid_header');
      throwsCode(() => headersAfter('set_csp', { default_src: ['self', bad] }), 'invalid_header');
    }
  });

  test('unknown or duplicate directives, an empty policy and wrong types are refused', () => {
    throwsCode(() => headersAfter('set_csp', { defualt_src: 'self' }), 'invalid_argument');
    throwsCode(() => headersAfter('set_csp', { 'default src': 'self' }), 'invalid_argument');
    throwsCode(() => headersAfter('set_csp', { default_src: 'self', 'default-src': 'none' }), 'invalid_argument');
    throwsCode(() => headersAfter('set_csp', {}), 'invalid_argument');
    throwsCode(() => headersAfter('set_csp', { default_src: null }), 'invalid_argument');
    throwsCode(() => headersAfter('set_csp', { default_src: 1 }), 'type_error');
    throwsCode(() => headersAfter('set_csp', { default_src: ['self', 2] }), 'type_error');
    throwsCode(() => headersAfter('set_csp', 'default-src self'), 'type_error');
    throwsCode(() => headersAfter('set_csp', ['default_src']), 'type_error');
  });

  test('a refused policy leaves the response untouched', () => {
    const ctx = fakeContext();
    callIn(ctx, 'security_headers');
    const before = ctx.response.getHeader('content-security-policy');
    throwsCode(() => callIn(ctx, 'set_csp', { default_src: 'self', script_src: 'a;b' }), 'invalid_header');
    assert.equal(ctx.response.getHeader('content-security-policy'), before);
  });
});

const CORS = { origins: ['https://app.example.com'], methods: ['GET', 'post'] };

function corsCall(options: Value, request: Partial<RequestInfo>): { ctx: FakeContext; result: unknown } {
  const ctx = fakeContext({ request });
  return { ctx, result: callIn(ctx, 'set_cors_headers', options) };
}

describe('set_cors_headers() on one context', () => {
  test('a simple request from an allowed origin gets the origin reflected, Vary and exposed headers', () => {
    const { ctx, result } = corsCall({ ...CORS, expose: ['X-Total'], credentials: true }, { headers: { origin: 'https://app.example.com' } });
    assert.equal(result, null);
    assert.equal(ctx.response.getHeader('access-control-allow-origin'), 'https://app.example.com');
    assert.equal(ctx.response.getHeader('access-control-allow-credentials'), 'true');
    assert.equal(ctx.response.getHeader('access-control-expose-headers'), 'X-Total');
    assert.equal(ctx.response.getHeader('vary'), 'Origin');
    assert.equal(ctx.response.getHeader('access-control-allow-methods'), undefined);
  });

  test('an origin not listed, "null", or a look-alike gets no CORS headers but still Vary', () => {
    for (const origin of ['https://evil.com', 'null', 'https://app.example.com.evil.com', 'http://app.example.com', 'https://app.example.com:8443']) {
      const { ctx } = corsCall(CORS, { headers: { origin } });
      assert.equal(ctx.response.getHeader('access-control-allow-origin'), undefined, origin);
      assert.equal(ctx.response.getHeader('vary'), 'Origin');
    }
  });

  test('Vary is merged into an existing value once', () => {
    const ctx = fakeContext({ request: { headers: { origin: 'https://app.example.com' } } });
    ctx.response.setHeader('vary', 'Accept-Encoding');
    callIn(ctx, 'set_cors_headers', CORS);
    callIn(ctx, 'set_cors_headers', CORS);
    assert.equal(ctx.response.getHeader('vary'), 'Accept-Encoding, Origin');
  });

  test("'*' without credentials allows any origin with a literal *", () => {
    const { ctx } = corsCall({ origins: ['*'], methods: ['GET'] }, { headers: { origin: 'https://anyone.example' } });
    assert.equal(ctx.response.getHeader('access-control-allow-origin'), '*');
    assert.equal(ctx.response.getHeader('access-control-allow-credentials'), undefined);
  });

  test('a preflight is answered with 204 and HALT; methods, headers, max-age for an allowed origin', () => {
    const { ctx, result } = corsCall(
      { ...CORS, headers: ['Content-Type', 'X-CSRF-Token'], max_age: 600 },
      { method: 'OPTIONS', headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' } },
    );
    assert.equal(result, HALT);
    assert.deepEqual(
      ctx.answers.map((a) => a.status),
      [204],
    );
    assert.equal(ctx.response.getHeader('access-control-allow-methods'), 'GET, POST');
    assert.equal(ctx.response.getHeader('access-control-allow-headers'), 'Content-Type, X-CSRF-Token');
    assert.equal(ctx.response.getHeader('access-control-max-age'), '600');
  });

  test('without a headers list the preflight gets the requested headers back, and Vary says so', () => {
    const { ctx } = corsCall(CORS, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example.com', 'access-control-request-method': 'PUT', 'access-control-request-headers': 'content-type, x-csrf-token' },
    });
    assert.equal(ctx.response.getHeader('access-control-allow-headers'), 'content-type, x-csrf-token');
    assert.equal(ctx.response.getHeader('vary'), 'Origin, Access-Control-Request-Headers');
    const odd = corsCall(CORS, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example.com', 'access-control-request-method': 'PUT', 'access-control-request-headers': 'a b\r\nc' },
    });
    assert.equal(odd.ctx.response.getHeader('access-control-allow-headers'), undefined);
  });

  test('a preflight from a refused origin is answered 204 without CORS headers', () => {
    const { ctx, result } = corsCall(CORS, { method: 'OPTIONS', headers: { origin: 'https://evil.com', 'access-control-request-method': 'POST' } });
    assert.equal(result, HALT);
    assert.equal(ctx.answers[0].status, 204);
    assert.equal(ctx.response.getHeader('access-control-allow-origin'), undefined);
    assert.equal(ctx.response.getHeader('access-control-allow-methods'), undefined);
  });

  test('OPTIONS without Access-Control-Request-Method is no preflight: nothing is answered', () => {
    const { ctx, result } = corsCall(CORS, { method: 'OPTIONS', headers: { origin: 'https://app.example.com' } });
    assert.equal(result, null);
    assert.deepEqual(ctx.answers, []);
  });

  test('bad options are refused', () => {
    const bad: [Value, string][] = [
      [{ origins: ['*'], methods: ['GET'], credentials: true }, 'invalid_argument'],
      [{ origins: ['app.example.com'], methods: ['GET'] }, 'invalid_argument'],
      [{ origins: ['https://app.example.com/path'], methods: ['GET'] }, 'invalid_argument'],
      [{ methods: ['GET'] }, 'invalid_argument'],
      [{ origins: ['https://a.com'] }, 'invalid_argument'],
      [{ ...CORS, max_age: 86401 }, 'invalid_argument'],
      [{ ...CORS, max_age: -1 }, 'invalid_argument'],
      [{ ...CORS, methods: ['GET POST'] }, 'invalid_argument'],
      [{ ...CORS, headers: ['X-Bad\r\nHeader'] }, 'invalid_argument'],
      [{ ...CORS, origin: ['https://a.com'] }, 'invalid_argument'],
      [{ ...CORS, origins: 'https://a.com' }, 'type_error'],
      [{ ...CORS, credentials: 'yes' }, 'type_error'],
      [{ ...CORS, max_age: 1.5 }, 'type_error'],
      ['https://a.com', 'type_error'],
    ];
    for (const [options, code] of bad) throwsCode(() => corsCall(options, { headers: { origin: 'https://a.com' } }), code);
  });

  test('every native carries a doc', () => {
    for (const name of ['security_headers', 'set_csp', 'set_cors_headers', 'set_hsts', 'x_frame_options'])
      assert.ok(registry.natives.get(name)?.meta.doc, name);
  });
});
