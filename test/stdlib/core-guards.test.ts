/**
 * The core guards `ip`, `time` and `method`: address and CIDR parsing, the guards called directly
 * (injected clock, time zones), and end to end through apps with and without trusted proxies.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { RvmError, type AppSettings, type GuardFn, type GuardMeta, type PluginApi, type RequestInfo } from '../../plugins/sdk.js';
import { cidrContains, clientPrefix, parseCidr, parseIp } from '../../plugins/sdk.js';
import { inTimeWindow, minuteOfDayIn, registerGuards } from '../../stdlib/core/guards.js';
import type { App } from '../../vm/runtime/app.js';
import { loadApp } from '../../tools/host.js';
import { inject } from '../../vm/runtime/http/inject.js';
import { captureLogger } from '../../vm/runtime/log.js';
import { fakeContext, TEST_APP } from '../../plugins/testing.js';
import { makeTempFolder, tempApp } from '../support/temp-app.js';

function inRange(cidr: string, ip: string): boolean {
  const range = parseCidr(cidr);
  const address = parseIp(ip);
  assert.ok(range, `range ${cidr}`);
  assert.ok(address, `address ${ip}`);
  return cidrContains(range, address);
}

describe('IP addresses and CIDR ranges', () => {
  test('IPv4 ranges, /0 and /32', () => {
    assert.equal(inRange('10.0.0.0/8', '10.255.1.2'), true);
    assert.equal(inRange('10.0.0.0/8', '11.0.0.1'), false);
    assert.equal(inRange('192.168.1.0/24', '192.168.1.255'), true);
    assert.equal(inRange('192.168.1.0/24', '192.168.2.0'), false);
    assert.equal(inRange('0.0.0.0/0', '203.0.113.9'), true);
    assert.equal(inRange('203.0.113.9/32', '203.0.113.9'), true);
    assert.equal(inRange('203.0.113.9/32', '203.0.113.8'), false);
    assert.equal(inRange('203.0.113.9', '203.0.113.9'), true);
    assert.equal(inRange('172.16.0.0/12', '172.31.255.255'), true);
    assert.equal(inRange('172.16.0.0/12', '172.32.0.0'), false);
  });

  test('IPv6 ranges, /0 and /128, compressed forms and zones', () => {
    assert.equal(inRange('2001:db8::/32', '2001:db8:ffff::1'), true);
    assert.equal(inRange('2001:db8::/32', '2001:db9::1'), false);
    assert.equal(inRange('::/0', '2001:db8::1'), true);
    assert.equal(inRange('::1/128', '::1'), true);
    assert.equal(inRange('::1/128', '::2'), false);
    assert.equal(inRange('::1', '0:0:0:0:0:0:0:1'), true);
    assert.equal(inRange('fe80::/10', 'fe80::1%eth0'), true);
    assert.equal(inRange('2001:db8:abcd:12::/63', '2001:db8:abcd:13::1'), true);
    assert.equal(inRange('2001:db8:abcd:12::/64', '2001:db8:abcd:13::1'), false);
  });

  test('IPv4-mapped IPv6 addresses match IPv4 ranges and the other way round', () => {
    assert.equal(inRange('10.0.0.0/8', '::ffff:10.0.0.1'), true);
    assert.equal(inRange('10.0.0.0/8', '::ffff:a00:1'), true);
    assert.equal(inRange('10.0.0.0/8', '::ffff:11.0.0.1'), false);
    assert.equal(inRange('::ffff:10.0.0.0/104', '10.1.2.3'), true);
    assert.equal(inRange('0.0.0.0/0', '2001:db8::1'), false);
    assert.equal(inRange('::/0', '10.0.0.1'), true);
  });

  test('malformed addresses and ranges are refused', () => {
    for (const bad of [
      '',
      '1.2.3',
      '1.2.3.4.5',
      '256.0.0.1',
      '01.2.3.4',
      '1.2.3.4/33',
      '1.2.3.4/-1',
      '1.2.3.4/',
      '::/129',
      '1::2::3',
      'g::1',
      '1:2:3:4:5:6:7:8:9',
      '1.2.3.4/08',
      'localhost',
      '::1/1a',
    ]) {
      assert.equal(parseCidr(bad), null, bad);
    }
    assert.equal(parseIp('x'.repeat(100)), null);
    assert.equal(parseIp('1:2:3:4:5:6:7::8'), null);
  });

  test('clientPrefix: IPv4 as is, IPv6 cut to its prefix', () => {
    assert.equal(clientPrefix('::ffff:10.0.0.1', 64), '10.0.0.1');
    assert.equal(clientPrefix('2001:db8:1:2:3:4:5:6', 64), '2001:db8:1:2::/64');
    assert.equal(clientPrefix('not an ip', 64), 'not an ip');
  });
});

/** Loads the core guards against a recording API. */
function guards(now: () => number, config: Record<string, unknown> = {}): Map<string, { fn: GuardFn; meta: GuardMeta }> {
  const out = new Map<string, { fn: GuardFn; meta: GuardMeta }>();
  const app: AppSettings = { ...TEST_APP, config };
  const api: PluginApi = {
    app,
    native: () => {},
    guard: (name, fn, meta) => void out.set(name, { fn, meta }),
    validator: () => {},
    endpoint: () => {},
    records: () => {},
    announce: () => {},
  };
  registerGuards(api, { now });
  return out;
}

function run(g: { fn: GuardFn }, args: string[], request: Partial<RequestInfo> = {}, mode: 'required' | 'optional' = 'required') {
  const ctx = fakeContext({ request });
  g.fn(ctx, args, { mode });
  return ctx;
}

function errorCode(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof RvmError);
    return e.code;
  }
  return 'no error';
}

describe('ip guard', () => {
  const ip = guards(Date.now).get('ip')!;

  test('lets an address in any listed range through, else 403 ip_forbidden', () => {
    assert.equal(run(ip, ['10.0.0.0/8', '2001:db8::/32'], { ip: '10.1.1.1' }).failures.length, 0);
    assert.equal(run(ip, ['10.0.0.0/8', '2001:db8::/32'], { ip: '2001:db8::5' }).failures.length, 0);
    const refused = run(ip, ['10.0.0.0/8'], { ip: '192.0.2.1' });
    assert.equal(refused.failures[0]?.status, 403);
    assert.equal(refused.failures[0]?.code, 'ip_forbidden');
  });

  test('an unparsable client address is refused', () => {
    assert.equal(run(ip, ['0.0.0.0/0'], { ip: 'unknown' }).failures[0]?.code, 'ip_forbidden');
  });

  test('a malformed range is a runtime invalid_argument error', () => {
    assert.equal(
      errorCode(() => run(ip, ['10.0.0.0/40'], { ip: '10.0.0.1' })),
      'invalid_argument',
    );
    assert.equal(
      errorCode(() => run(ip, ['nope'])),
      'invalid_argument',
    );
  });

  test('optional never refuses', () => {
    assert.equal(run(ip, ['10.0.0.0/8'], { ip: '192.0.2.1' }, 'optional').failures.length, 0);
  });
});

describe('time guard', () => {
  const at = (iso: string) => Date.parse(iso);

  test('window inclusive of start, exclusive of end (UTC by default)', () => {
    const check = (iso: string) => run(guards(() => at(iso)).get('time')!, ['09:00', '17:00']).failures.length === 0;
    assert.equal(check('2024-03-05T08:59:59Z'), false);
    assert.equal(check('2024-03-05T09:00:00Z'), true);
    assert.equal(check('2024-03-05T16:59:59Z'), true);
    assert.equal(check('2024-03-05T17:00:00Z'), false);
  });

  test('a window across midnight', () => {
    const check = (iso: string) => run(guards(() => at(iso)).get('time')!, ['22:00', '06:00']).failures.length === 0;
    assert.equal(check('2024-03-05T21:59:00Z'), false);
    assert.equal(check('2024-03-05T22:00:00Z'), true);
    assert.equal(check('2024-03-05T23:59:00Z'), true);
    assert.equal(check('2024-03-06T00:00:00Z'), true);
    assert.equal(check('2024-03-06T05:59:00Z'), true);
    assert.equal(check('2024-03-06T06:00:00Z'), false);
    assert.equal(check('2024-03-06T12:00:00Z'), false);
  });

  test('refusal is 403 outside_time_window', () => {
    const ctx = run(guards(() => at('2024-03-05T03:00:00Z')).get('time')!, ['09:00', '17:00']);
    assert.equal(ctx.failures[0]?.status, 403);
    assert.equal(ctx.failures[0]?.code, 'outside_time_window');
  });

  test('the configured time zone, summer and winter time', () => {
    const berlin = (iso: string) => run(guards(() => at(iso), { timezone: 'Europe/Berlin' }).get('time')!, ['09:00', '10:00']).failures.length === 0;
    assert.equal(berlin('2024-01-15T08:30:00Z'), true); // 09:30 CET
    assert.equal(berlin('2024-07-15T07:30:00Z'), true); // 09:30 CEST
    assert.equal(berlin('2024-07-15T08:30:00Z'), false); // 10:30 CEST
    const utc = run(guards(() => at('2024-01-15T08:30:00Z')).get('time')!, ['09:00', '10:00']);
    assert.equal(utc.failures.length, 1);
  });

  test('an unknown time zone fails at setup', () => {
    assert.throws(() => guards(Date.now, { timezone: 'Mars/Olympus' }), /timezone/);
    assert.throws(() => guards(Date.now, { timezone: 5 }), /timezone/);
  });

  test('malformed or equal times are runtime invalid_argument errors', () => {
    const time = guards(Date.now).get('time')!;
    for (const args of [
      ['9:00', '17:00'],
      ['24:00', '01:00'],
      ['09:60', '10:00'],
      ['09:00', '09:00'],
      ['nine', 'five'],
    ]) {
      assert.equal(
        errorCode(() => run(time, args)),
        'invalid_argument',
        args.join('-'),
      );
    }
  });

  test('inTimeWindow and minuteOfDayIn', () => {
    assert.equal(inTimeWindow({ start: 0, end: 1 }, 0), true);
    assert.equal(inTimeWindow({ start: 1380, end: 60 }, 30), true);
    assert.equal(minuteOfDayIn('Asia/Kolkata')(Date.parse('2024-01-01T00:00:00Z')), 5 * 60 + 30);
  });
});

describe('method guard', () => {
  const method = guards(Date.now).get('method')!;

  test('listed methods pass; others get 405 method_not_allowed with Allow', () => {
    assert.equal(run(method, ['GET', 'post'], { method: 'POST' }).failures.length, 0);
    const refused = run(method, ['GET', 'POST'], { method: 'DELETE' });
    assert.equal(refused.failures[0]?.status, 405);
    assert.equal(refused.failures[0]?.code, 'method_not_allowed');
    assert.equal(refused.response.getHeader('allow'), 'GET, HEAD, POST');
  });

  test('GET allows HEAD', () => {
    assert.equal(run(method, ['GET'], { method: 'HEAD' }).failures.length, 0);
    assert.equal(run(method, ['POST'], { method: 'HEAD' }).failures.length, 1);
  });

  test('an unknown method is a runtime invalid_argument error', () => {
    assert.equal(
      errorCode(() => run(method, ['FETCH'])),
      'invalid_argument',
    );
  });

  test('meta lists the 405 with its Allow header', () => {
    assert.deepEqual(method.meta.responses, [
      { status: 405, code: 'method_not_allowed', description: method.meta.responses![0]!.description, headers: ['Allow'] },
    ]);
  });
});

/** The current UTC minute of the day, shifted and wrapped as `HH:MM`. */
function clock(shiftMinutes: number): string {
  const now = new Date();
  const m = (((now.getUTCHours() * 60 + now.getUTCMinutes() + shiftMinutes) % 1440) + 1440) % 1440;
  return `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
}

function routes(): string {
  return `
route GET /office {
  guard ip('10.0.0.0/8', '2001:db8::/32')
  response.ok({ ok: true })
}

route GET /open {
  guard time('${clock(-10)}', '${clock(60)}')
  response.ok({ ok: true })
}

route GET /closed {
  guards {
    time('${clock(60)}', '${clock(120)}'): required
  }
  response.ok({ ok: true })
}

route ANY /rpc {
  guard method('GET', 'POST')
  response.ok({ method: request.method })
}
`;
}

async function appWith(config: Record<string, unknown>): Promise<{ app: App; dir: string }> {
  const dir = makeTempFolder({ 'rvm.config.json': JSON.stringify(config), 'guards.rvm': routes() });
  return { app: await loadApp(dir, { cache: false, logger: captureLogger() }), dir };
}

describe('core guards in an app', () => {
  let plain: { app: App; dir: string };
  let proxied: { app: App; dir: string };
  let peerOnly: { app: App; dir: string };

  before(async () => {
    plain = await appWith({});
    proxied = await appWith({ trustProxy: true });
    peerOnly = await appWith({ trustProxy: ['127.0.0.1'] });
  });

  after(async () => {
    for (const a of [plain, proxied, peerOnly]) {
      await a.app.close();
      rmSync(a.dir, { recursive: true, force: true });
    }
  });

  test('ip: the peer address decides', async () => {
    assert.equal((await inject(plain.app, { url: '/office', remoteAddress: '10.2.3.4' })).status, 200);
    assert.equal((await inject(plain.app, { url: '/office', remoteAddress: '::ffff:10.2.3.4' })).status, 200);
    assert.equal((await inject(plain.app, { url: '/office', remoteAddress: '2001:db8::7' })).status, 200);
    const refused = await inject(plain.app, { url: '/office', remoteAddress: '192.0.2.1' });
    assert.equal(refused.status, 403);
    assert.equal(refused.json().code, 'ip_forbidden');
  });

  test('ip: without trustProxy X-Forwarded-For is ignored', async () => {
    const res = await inject(plain.app, { url: '/office', remoteAddress: '192.0.2.1', headers: { 'x-forwarded-for': '10.0.0.1' } });
    assert.equal(res.status, 403);
  });

  test('ip: behind a trusted proxy the right-most X-Forwarded-For entry is the client', async () => {
    assert.equal(
      (await inject(proxied.app, { url: '/office', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': '192.0.2.1, 10.0.0.1' } })).status,
      200,
    );
    assert.equal((await inject(proxied.app, { url: '/office', remoteAddress: '10.0.0.1', headers: { 'x-forwarded-for': '192.0.2.7' } })).status, 403);
    // A peer that is not a trusted proxy: its header is ignored.
    assert.equal((await inject(proxied.app, { url: '/office', remoteAddress: '192.0.2.1', headers: { 'x-forwarded-for': '10.0.0.1' } })).status, 403);
  });

  test('ip: a forged left-most entry does not pass ip(10.0.0.0/8) when only the peer is trusted', async () => {
    const res = await inject(peerOnly.app, { url: '/office', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': '10.1.2.3, 203.0.113.9' } });
    assert.equal(res.status, 403);
    assert.equal(res.json().code, 'ip_forbidden');
    const inside = await inject(peerOnly.app, { url: '/office', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': '203.0.113.9, 10.1.2.3' } });
    assert.equal(inside.status, 200);
  });

  test('ip: IPv6 clients behind a proxy, in canonical form', async () => {
    assert.equal((await inject(peerOnly.app, { url: '/office', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': '[2001:DB8::7]:443' } })).status, 200);
    assert.equal((await inject(peerOnly.app, { url: '/office', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': '2001:db9::7' } })).status, 403);
  });

  test('malformed guard arguments are compile errors at the guard (E_GUARD_ARGS)', async (t) => {
    const dir = tempApp(t, {
      'bad.rvm': `route GET /a {\n  guard ip('10.0.0.0/99')\n  response.ok(1)\n}\nroute GET /b {\n  guard method('FETCH')\n  response.ok(1)\n}\n`,
    });
    await assert.rejects(loadApp(dir, { cache: false, logger: captureLogger() }), (e: unknown) => {
      const found = (e as { diagnostics: { code: string; line: number }[] }).diagnostics.map((d) => `${d.code}@${d.line}`);
      assert.deepEqual(found, ['E_GUARD_ARGS@2', 'E_GUARD_ARGS@6']);
      return true;
    });
  });

  test('time: inside and outside the window', async () => {
    assert.equal((await inject(plain.app, { url: '/open' })).status, 200);
    const closed = await inject(plain.app, { url: '/closed' });
    assert.equal(closed.status, 403);
    assert.equal(closed.json().code, 'outside_time_window');
  });

  test('method: 405 with Allow on an ANY route', async () => {
    assert.equal((await inject(plain.app, { method: 'POST', url: '/rpc' })).status, 200);
    const res = await inject(plain.app, { method: 'DELETE', url: '/rpc' });
    assert.equal(res.status, 405);
    assert.equal(res.json().code, 'method_not_allowed');
    assert.equal(res.headers['allow'], 'GET, HEAD, POST');
  });

  test('the guards document their errors in the route metadata', () => {
    const office = plain.app.routes().find((r) => r.meta.path === '/office')!;
    assert.deepEqual(
      office.guards[0]!.responses.map((r) => [r.status, r.code]),
      [[403, 'ip_forbidden']],
    );
    const closed = plain.app.routes().find((r) => r.meta.path === '/closed')!;
    assert.deepEqual(
      closed.guards[0]!.responses.map((r) => [r.status, r.code]),
      [[403, 'outside_time_window']],
    );
  });
});
