/**
 * The ratelimit plugin end to end: route files using the `rate_limit` guard and the natives,
 * loaded as an app and driven with inject().
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { App } from '../../vm/runtime/app.js';
import { loadApp } from '../../tools/host.js';
import { inject } from '../../vm/runtime/http/inject.js';
import { captureLogger } from '../../vm/runtime/log.js';

const ROUTES = `
route GET /limited {
  guard rate_limit(2, 60)
  response.ok({ ok: true })
}

route GET /items/:id {
  guards {
    rate_limit(1, 60): required
  }
  response.ok({ id: params.id })
}

route GET /soft {
  guards {
    rate_limit(1, 60): optional
  }
  response.ok({ ok: true })
}

route POST /login {
  r = rate_limit_ip(request.ip, 2, 60)
  set_headers(rate_limit_headers(r.remaining, 2, r.reset_at, 60))
  if !r.allowed {
    response.too_many_requests('Too many attempts')
  }
  response.ok(r)
}

route GET /check {
  response.ok(rate_limit_check('k', 1, 60))
}

route POST /use {
  response.ok(rate_limit('k', 1, 60))
}

route POST /reset {
  rate_limit_reset('k')
  response.no_content()
}

route GET /per-user {
  response.ok(rate_limit_user(query.id, 1, 60))
}
`;

describe('ratelimit in an app', () => {
  let dir: string;
  let app: App;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rvm-ratelimit-'));
    writeFileSync(join(dir, 'limits.rvm'), ROUTES);
    app = await loadApp(dir, { cache: false, logger: captureLogger() });
  });

  after(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the guard lets limit requests through with headers, then answers 429 with Retry-After', async () => {
    const ip = '198.51.100.1';
    const first = await inject(app, { url: '/limited', remoteAddress: ip });
    assert.equal(first.status, 200);
    assert.equal(first.headers['ratelimit-limit'], '2');
    assert.equal(first.headers['ratelimit-remaining'], '1');
    assert.equal(first.headers['ratelimit-policy'], '"default";q=2;w=60');
    assert.match(String(first.headers['ratelimit']), /^"default";r=1;t=(59|60)$/);
    assert.equal((await inject(app, { url: '/limited', remoteAddress: ip })).status, 200);
    const refused = await inject(app, { url: '/limited', remoteAddress: ip });
    assert.equal(refused.status, 429);
    assert.equal(refused.json().code, 'too_many_requests');
    assert.equal(refused.headers['ratelimit-remaining'], '0');
    const retry = Number(refused.headers['retry-after']);
    assert.ok(retry >= Number(refused.headers['ratelimit-reset']) && retry >= 59 && retry <= 60, `Retry-After ${retry}`);
  });

  test('each client has its own window', async () => {
    for (let i = 0; i < 2; i++) await inject(app, { url: '/limited', remoteAddress: '198.51.100.2' });
    assert.equal((await inject(app, { url: '/limited', remoteAddress: '198.51.100.2' })).status, 429);
    assert.equal((await inject(app, { url: '/limited', remoteAddress: '198.51.100.3' })).status, 200);
  });

  test('the key is the route pattern: other param values share the window, a trailing slash does not escape it', async () => {
    const ip = '198.51.100.4';
    assert.equal((await inject(app, { url: '/items/1', remoteAddress: ip })).status, 200);
    assert.equal((await inject(app, { url: '/items/2', remoteAddress: ip })).status, 429);
    assert.equal((await inject(app, { url: '/items/3/', remoteAddress: ip })).status, 429);
    assert.equal((await inject(app, { method: 'HEAD', url: '/items/4', remoteAddress: ip })).status, 429);
  });

  test('X-Forwarded-For is ignored without trustProxy', async () => {
    for (let i = 0; i < 2; i++) await inject(app, { url: '/limited', remoteAddress: '198.51.100.5', headers: { 'x-forwarded-for': `203.0.113.${i}` } });
    const res = await inject(app, { url: '/limited', remoteAddress: '198.51.100.5', headers: { 'x-forwarded-for': '203.0.113.99' } });
    assert.equal(res.status, 429);
  });

  test('optional: headers but no 429', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await inject(app, { url: '/soft', remoteAddress: '198.51.100.6' });
      assert.equal(res.status, 200);
      assert.equal(res.headers['ratelimit-remaining'], '0');
    }
  });

  test('natives: rate_limit_ip with rate_limit_headers and a handler-made 429', async () => {
    const ip = '198.51.100.7';
    const a = await inject(app, { method: 'POST', url: '/login', remoteAddress: ip });
    assert.equal(a.status, 200);
    assert.equal(a.json().remaining, 1);
    assert.ok(Math.abs(a.json().reset_at - (Date.now() / 1000 + 60)) <= 2);
    assert.equal(a.headers['ratelimit-remaining'], '1');
    assert.equal(a.headers['ratelimit-policy'], '"default";q=2;w=60');
    await inject(app, { method: 'POST', url: '/login', remoteAddress: ip });
    const c = await inject(app, { method: 'POST', url: '/login', remoteAddress: ip });
    assert.equal(c.status, 429);
    assert.equal(c.json().code, 'too_many_requests');
  });

  test('natives: rate_limit_check, rate_limit and rate_limit_reset on one key', async () => {
    assert.equal((await inject(app, { url: '/check' })).json().allowed, true);
    assert.equal((await inject(app, { method: 'POST', url: '/use' })).json().allowed, true);
    assert.equal((await inject(app, { url: '/check' })).json().allowed, false);
    assert.equal((await inject(app, { method: 'POST', url: '/use' })).json().allowed, false);
    assert.equal((await inject(app, { method: 'POST', url: '/reset' })).status, 204);
    assert.equal((await inject(app, { method: 'POST', url: '/use' })).json().allowed, true);
  });

  test('natives: rate_limit_user; a missing id is a runtime error, not a crash', async () => {
    assert.equal((await inject(app, { url: '/per-user?id=u1' })).json().allowed, true);
    assert.equal((await inject(app, { url: '/per-user?id=u1' })).json().allowed, false);
    assert.equal((await inject(app, { url: '/per-user' })).status, 500);
  });

  test('the guard documents its 429 in the route metadata', () => {
    const route = app.routes().find((r) => r.meta.path === '/limited')!;
    const g = route.guards.find((x) => x.name === 'rate_limit')!;
    assert.deepEqual(g.args, [2, 60]);
    assert.ok(g.responses.some((r) => r.status === 429 && r.code === 'too_many_requests'));
  });
});

describe('ratelimit behind a trusted proxy', () => {
  const apps: Array<{ dir: string; app: App }> = [];

  async function proxied(trustProxy: unknown): Promise<App> {
    const dir = mkdtempSync(join(tmpdir(), 'rvm-ratelimit-proxy-'));
    writeFileSync(join(dir, 'rvm.config.json'), JSON.stringify({ trustProxy }));
    writeFileSync(join(dir, 'a.rvm'), 'route GET /x {\n  guard rate_limit(1, 60)\n  response.ok({})\n}\n');
    const app = await loadApp(dir, { cache: false, logger: captureLogger() });
    apps.push({ dir, app });
    return app;
  }

  after(async () => {
    for (const { dir, app } of apps) {
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('clients are told apart by the address the proxy appended', async () => {
    const app = await proxied(true);
    const via = (client: string) => inject(app, { url: '/x', remoteAddress: '10.0.0.1', headers: { 'x-forwarded-for': client } });
    assert.equal((await via('203.0.113.1')).status, 200);
    assert.equal((await via('203.0.113.1')).status, 429);
    assert.equal((await via('203.0.113.2')).status, 200);
  });

  test('a forged left-most entry gets no fresh window (X-Forwarded-For: 10.0.0.N, 127.0.0.1)', async () => {
    for (const setting of [true, 1, ['127.0.0.1']]) {
      const app = await proxied(setting);
      const statuses: number[] = [];
      for (let n = 1; n <= 4; n++)
        statuses.push((await inject(app, { url: '/x', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': `10.0.0.${n}, 203.0.113.50` } })).status);
      assert.deepEqual(statuses, [200, 429, 429, 429], JSON.stringify(setting));
    }
    const app = await proxied(true);
    const statuses: number[] = [];
    for (let n = 1; n <= 4; n++)
      statuses.push((await inject(app, { url: '/x', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': `10.0.0.${n}, 127.0.0.1` } })).status);
    assert.deepEqual(statuses, [200, 429, 429, 429]);
  });

  test('non-canonical spellings of one address and garbage entries share one window', async () => {
    const app = await proxied(1);
    const via = (entry: string) => inject(app, { url: '/x', remoteAddress: '10.0.0.1', headers: { 'x-forwarded-for': entry } });
    assert.equal((await via('9.9.9.9')).status, 200);
    for (const form of ['9.9.9.9:1234', '::ffff:9.9.9.9', '[::ffff:9.9.9.9]:80']) assert.equal((await via(form)).status, 429, form);
    assert.equal((await via('[2001:db8::9]:443')).status, 200);
    assert.equal((await via('2001:DB8:0::9')).status, 429);
    // Entries that are not addresses fall back to the proxy's own address: one window for them all.
    assert.equal((await via('009.9.9.9')).status, 200);
    for (const garbage of ['unknown', 'x'.repeat(40), '1.2.3']) assert.equal((await via(garbage)).status, 429, garbage);
  });
});

describe("a flood of distinct clients cannot reset a guard's window", () => {
  /** The window budget the app is given: small, so the flood passes it. */
  const MAX_WINDOW_KEYS = 50;
  let dir: string;
  let app: App;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rvm-ratelimit-flood-'));
    writeFileSync(join(dir, 'limits.rvm'), ROUTES);
    writeFileSync(join(dir, 'rvm.config.json'), JSON.stringify({ store: { maxWindowKeys: MAX_WINDOW_KEYS } }));
    app = await loadApp(dir, { cache: false, logger: captureLogger() });
  });

  after(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test(`${4 * MAX_WINDOW_KEYS} distinct addresses past a budget of ${MAX_WINDOW_KEYS} windows: the victim's 429 persists, the flood past the budget is refused`, async () => {
    const victim = '198.51.100.7';
    for (let i = 0; i < 2; i++) assert.equal((await inject(app, { url: '/limited', remoteAddress: victim })).status, 200);
    assert.equal((await inject(app, { url: '/limited', remoteAddress: victim })).status, 429);
    const flood: number[] = [];
    for (let i = 0; i < 4 * MAX_WINDOW_KEYS; i++) {
      flood.push((await inject(app, { url: '/limited', remoteAddress: `203.0.${i >> 8}.${i & 255}` })).status);
    }
    const refused = await inject(app, { url: '/limited', remoteAddress: victim });
    assert.equal(refused.status, 429, "the victim's window was forgotten");
    assert.equal((refused.json() as { code: string }).code, 'too_many_requests');
    // The budget held: the first clients got windows until it was full, the rest were refused rather than evict a live one.
    assert.equal(flood.filter((status) => status === 200).length, MAX_WINDOW_KEYS - 1);
    assert.ok(flood.slice(MAX_WINDOW_KEYS).every((status) => status === 429));
  });
});
