/**
 * The headers plugin end to end through a real app: CORS from a folder's `_middleware.rvm`
 * (simple requests, preflights, credentials, Vary, error responses), over inject and once over a
 * socket; and security headers, CSP and HSTS as a client receives them.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { App } from '../../vm/runtime/app.js';
import { loadApp } from '../../tools/host.js';
import { inject, type InjectRequest, type InjectResponse } from '../../vm/runtime/http/inject.js';
import { captureLogger } from '../../vm/runtime/log.js';
import { startServer, type RunningServer } from '../../vm/runtime/http/server.js';

const APP_ORIGIN = 'https://app.example.com';

const FILES: Record<string, string> = {
  'api/_middleware.rvm': `
middleware {
  set_cors_headers({
    origins: ['${APP_ORIGIN}', 'http://localhost:5173'],
    methods: ['GET', 'POST', 'DELETE'],
    headers: ['Content-Type', 'X-CSRF-Token'],
    credentials: true,
    max_age: 600,
    expose: ['X-Total-Count']
  })
  next()
}
`,
  'api/items.rvm': `
route GET /api/items {
  set_header('X-Total-Count', 2)
  response.ok([1, 2])
}

route POST /api/items {
  response.created({ id: 3 })
}

route DELETE /api/items/:id {
  guard csrf
  response.no_content()
}

route GET /api/denied {
  fail 403 'Not yours'
}

route OPTIONS /api/custom {
  response.ok({ custom: true })
}
`,
  'public/_middleware.rvm': `
middleware {
  set_cors_headers({ origins: ['*'], methods: ['GET'] })
  next()
}
`,
  'public/feed.rvm': `
route GET /public/feed { response.ok({ items: [] }) }
`,
  'pages.rvm': `
route GET /plain { response.ok({ plain: true }) }

route GET /secure {
  security_headers()
  response.html('<h1>hi</h1>')
}

route GET /strict {
  security_headers()
  set_csp({ default_src: 'none', script_src: ['self', 'https://cdn.example.com'], frame_ancestors: 'none' })
  set_hsts(63072000, true, true)
  x_frame_options('deny')
  response.ok({ strict: true })
}

route GET /inject {
  set_csp({ default_src: request.query.src })
  response.ok({})
}

route GET /caught {
  try {
    set_csp({ default_src: "'self'; script-src *" })
  } catch err {
    response.ok({ code: err.code })
  }
}
`,
};

let dir: string;
let app: App;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rvm-headers-'));
  for (const [name, text] of Object.entries(FILES)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  app = await loadApp(dir, { cache: false, dev: true, logger: captureLogger(), settings: { env: { APP_SECRET: 'x'.repeat(43) } } });
});

after(() => {
  app?.close();
  rmSync(dir, { recursive: true, force: true });
});

function call(req: InjectRequest): Promise<InjectResponse> {
  return inject(app, req);
}

function preflight(url: string, origin: string, method = 'POST', extra: Record<string, string> = {}): Promise<InjectResponse> {
  return call({ method: 'OPTIONS', url, headers: { origin, 'access-control-request-method': method, ...extra } });
}

describe('CORS through a folder middleware', () => {
  test('an allowed origin is reflected with credentials, exposed headers and Vary: Origin', async () => {
    const res = await call({ url: '/api/items', headers: { origin: APP_ORIGIN } });
    assert.equal(res.status, 200);
    assert.equal(res.headers['access-control-allow-origin'], APP_ORIGIN);
    assert.equal(res.headers['access-control-allow-credentials'], 'true');
    assert.equal(res.headers['access-control-expose-headers'], 'X-Total-Count');
    assert.equal(res.headers['vary'], 'Origin');
    assert.equal(res.headers['access-control-allow-methods'], undefined, 'methods belong to the preflight');
    const other = await call({ url: '/api/items', headers: { origin: 'http://localhost:5173' } });
    assert.equal(other.headers['access-control-allow-origin'], 'http://localhost:5173');
  });

  test('a disallowed origin gets the response but no CORS headers, so the browser withholds it', async () => {
    for (const origin of ['https://evil.example', 'null', `${APP_ORIGIN}.evil.example`, 'http://app.example.com']) {
      const res = await call({ url: '/api/items', headers: { origin } });
      assert.equal(res.status, 200);
      assert.equal(res.headers['access-control-allow-origin'], undefined, origin);
      assert.equal(res.headers['access-control-allow-credentials'], undefined, origin);
      assert.equal(res.headers['vary'], 'Origin', 'caches must key on Origin either way');
    }
  });

  test('a same-origin request (no Origin) gets only Vary', async () => {
    const res = await call({ url: '/api/items' });
    assert.equal(res.status, 200);
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    assert.equal(res.headers['vary'], 'Origin');
  });

  test('a preflight from an allowed origin is answered 204 by the middleware', async () => {
    const res = await preflight('/api/items', APP_ORIGIN, 'POST', { 'access-control-request-headers': 'content-type' });
    assert.equal(res.status, 204);
    assert.equal(res.body, '');
    assert.equal(res.headers['access-control-allow-origin'], APP_ORIGIN);
    assert.equal(res.headers['access-control-allow-credentials'], 'true');
    assert.equal(res.headers['access-control-allow-methods'], 'GET, POST, DELETE');
    assert.equal(res.headers['access-control-allow-headers'], 'Content-Type, X-CSRF-Token');
    assert.equal(res.headers['access-control-max-age'], '600');
    assert.equal(res.headers['vary'], 'Origin');
    assert.equal(res.headers['allow'], undefined, 'the middleware answered, not the runtime');
  });

  test('a preflight for a path with params, and for a path with its own OPTIONS route, is answered the same way', async () => {
    const withParam = await preflight('/api/items/7', APP_ORIGIN, 'DELETE');
    assert.equal(withParam.status, 204);
    assert.equal(withParam.headers['access-control-allow-origin'], APP_ORIGIN);
    const custom = await preflight('/api/custom', APP_ORIGIN);
    assert.equal(custom.status, 204);
    assert.equal(custom.headers['access-control-allow-methods'], 'GET, POST, DELETE');
    // A plain OPTIONS (no Access-Control-Request-Method) still reaches the route.
    const plain = await call({ method: 'OPTIONS', url: '/api/custom', headers: { origin: APP_ORIGIN } });
    assert.equal(plain.status, 200);
    assert.deepEqual(plain.json(), { custom: true });
    assert.equal(plain.headers['access-control-allow-origin'], APP_ORIGIN);
  });

  test('a preflight from a disallowed origin is answered 204 without CORS headers', async () => {
    const res = await preflight('/api/items', 'https://evil.example');
    assert.equal(res.status, 204);
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    assert.equal(res.headers['access-control-allow-methods'], undefined);
    assert.equal(res.headers['vary'], 'Origin');
  });

  test('an unsafe request from an allowed origin, and error responses, carry the CORS headers', async () => {
    const created = await call({ method: 'POST', url: '/api/items', headers: { origin: APP_ORIGIN }, body: {} });
    assert.equal(created.status, 201);
    assert.equal(created.headers['access-control-allow-origin'], APP_ORIGIN);
    const denied = await call({ url: '/api/denied', headers: { origin: APP_ORIGIN } });
    assert.equal(denied.status, 403);
    assert.equal(denied.headers['access-control-allow-origin'], APP_ORIGIN, 'the page can read the error');
    const guarded = await call({ method: 'DELETE', url: '/api/items/1', headers: { origin: APP_ORIGIN, host: 'api.example.com' } });
    assert.equal(guarded.status, 403);
    assert.equal(guarded.json().code, 'csrf_invalid', 'CORS does not make a cross-origin request pass csrf');
    assert.equal(guarded.headers['access-control-allow-origin'], APP_ORIGIN);
  });

  test("'*' without credentials answers any origin with *", async () => {
    const res = await call({ url: '/public/feed', headers: { origin: 'https://anyone.example' } });
    assert.equal(res.headers['access-control-allow-origin'], '*');
    assert.equal(res.headers['access-control-allow-credentials'], undefined);
    const pre = await preflight('/public/feed', 'https://anyone.example', 'GET');
    assert.equal(pre.status, 204);
    assert.equal(pre.headers['access-control-allow-origin'], '*');
    assert.equal(pre.headers['access-control-allow-methods'], 'GET');
  });

  test('paths outside the CORS folders get no CORS headers; their OPTIONS is the runtime 204 + Allow', async () => {
    const res = await call({ url: '/plain', headers: { origin: APP_ORIGIN } });
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    assert.equal(res.headers['vary'], undefined);
    const pre = await preflight('/plain', APP_ORIGIN, 'GET');
    assert.equal(pre.status, 204);
    assert.equal(pre.headers['access-control-allow-origin'], undefined);
    assert.match(String(pre.headers['allow']), /GET/);
  });
});

describe('CORS over a real socket', () => {
  let server: RunningServer;
  before(async () => {
    server = await startServer(app, { port: 0, host: '127.0.0.1' });
  });
  after(async () => {
    await server.close();
  });

  function raw(method: string, path: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(`${server.url}${path}`, { method, headers }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  test('preflight then the real request, as a browser sends them', async () => {
    const pre = await raw('OPTIONS', '/api/items', {
      origin: APP_ORIGIN,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type',
    });
    assert.equal(pre.status, 204);
    assert.equal(pre.body, '');
    assert.equal(pre.headers['access-control-allow-origin'], APP_ORIGIN);
    assert.equal(pre.headers['access-control-allow-methods'], 'GET, POST, DELETE');
    const res = await raw('GET', '/api/items', { origin: APP_ORIGIN });
    assert.equal(res.status, 200);
    assert.equal(res.headers['access-control-allow-origin'], APP_ORIGIN);
    assert.equal(res.headers['access-control-allow-credentials'], 'true');
    assert.equal(res.headers['vary'], 'Origin');
  });
});

describe('security headers in an app', () => {
  test('security_headers() arrives on the response', async () => {
    const res = await call({ url: '/secure' });
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-security-policy']), /^default-src 'self'; base-uri 'self';/);
    assert.equal(res.headers['strict-transport-security'], 'max-age=31536000; includeSubDomains');
    assert.equal(res.headers['x-frame-options'], 'SAMEORIGIN');
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.equal(res.headers['x-powered-by'], undefined);
  });

  test('set_csp, set_hsts and x_frame_options tighten it', async () => {
    const res = await call({ url: '/strict' });
    assert.equal(res.headers['content-security-policy'], "default-src 'none'; script-src 'self' https://cdn.example.com; frame-ancestors 'none'");
    assert.equal(res.headers['strict-transport-security'], 'max-age=63072000; includeSubDomains; preload');
    assert.equal(res.headers['x-frame-options'], 'DENY');
  });

  test('a CSP value from the request cannot inject directives: the request fails, no header is sent', async () => {
    const ok = await call({ url: '/inject?src=self' });
    assert.equal(ok.headers['content-security-policy'], "default-src 'self'");
    const res = await call({ url: `/inject?src=${encodeURIComponent("'self'; script-src *")}` });
    assert.equal(res.status, 500);
    assert.equal(res.json().code, 'invalid_header');
    assert.equal(res.headers['content-security-policy'], undefined);
  });

  test('try/catch sees invalid_header', async () => {
    assert.deepEqual((await call({ url: '/caught' })).json(), { code: 'invalid_header' });
  });
});
