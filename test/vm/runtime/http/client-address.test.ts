/**
 * Client addresses: canonical forms, the trustProxy setting, and the client resolved from the
 * socket peer and X-Forwarded-For (right-most untrusted entry, hop counts, CIDR lists, IPv6).
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  MAX_PROXY_HOPS,
  MAX_TRUSTED_PROXIES,
  canonicalIp,
  formatIp,
  nonPublicGroup,
  parseIp,
  parseTrustProxy,
  resolveClient,
  type TrustProxy,
} from '../../../../vm/runtime/http/client-address.js';

function client(setting: TrustProxy, peer: string, xff?: string | string[]): string {
  return resolveClient(setting, peer, xff).ip;
}

describe('canonical addresses', () => {
  test('one text per address: ports, brackets, mapped IPv4 and case are normalised', () => {
    const same: Array<[string, string]> = [
      ['9.9.9.9', '9.9.9.9'],
      [' 9.9.9.9 ', '9.9.9.9'],
      ['9.9.9.9:1234', '9.9.9.9'],
      ['::ffff:9.9.9.9', '9.9.9.9'],
      ['::FFFF:0909:0909', '9.9.9.9'],
      ['[::ffff:9.9.9.9]:80', '9.9.9.9'],
      ['[2001:db8::9]', '2001:db8::9'],
      ['[2001:db8::9]:443', '2001:db8::9'],
      ['2001:DB8:0:0:0:0:0:9', '2001:db8::9'],
      ['2001:0db8::0009', '2001:db8::9'],
      ['fe80::1%eth0', 'fe80::1'],
      ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
      ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'],
      ['0:0:0:0:0:0:0:0', '::'],
      ['::1', '::1'],
    ];
    for (const [text, canonical] of same) assert.equal(canonicalIp(text), canonical, text);
  });

  test('what is not an address is null: leading zeros, garbage, host names, bad ports and brackets', () => {
    for (const bad of [
      '009.9.9.9',
      '9.9.9.09',
      '9.9.9',
      '256.1.1.1',
      'unknown',
      'example.com',
      '',
      '9.9.9.9:',
      '9.9.9.9:x',
      '[9.9.9.9]',
      '[2001:db8::9',
      '[2001:db8::9]x',
      '1:2:3:4:5:6:7::8',
      '9.9.9.9:123456',
      '_hidden',
    ]) {
      assert.equal(canonicalIp(bad), null, bad);
    }
  });

  test('formatIp round-trips what parseIp reads', () => {
    for (const text of ['10.0.0.1', '2001:db8::', '::', '1::', '1:2:3:4:5:6:7:8', 'fc00::1:2']) assert.equal(formatIp(parseIp(text)!), text);
  });
});

describe('the trustProxy setting', () => {
  test('booleans, hop counts (0 is false) and lists (text is split at commas)', () => {
    assert.equal(parseTrustProxy(false), false);
    assert.equal(parseTrustProxy(true), true);
    assert.equal(parseTrustProxy(0), false);
    assert.equal(parseTrustProxy(2), 2);
    assert.deepEqual(parseTrustProxy('10.0.0.0/8, loopback'), ['10.0.0.0/8', 'loopback']);
    assert.deepEqual(parseTrustProxy(['2001:db8::/32', 'uniquelocal', 'linklocal', '192.0.2.1']), ['2001:db8::/32', 'uniquelocal', 'linklocal', '192.0.2.1']);
  });

  test('hop counts up to MAX_PROXY_HOPS, lists up to MAX_TRUSTED_PROXIES entries', () => {
    assert.equal(parseTrustProxy(MAX_PROXY_HOPS), MAX_PROXY_HOPS);
    assert.throws(() => parseTrustProxy(MAX_PROXY_HOPS + 1), RangeError);
    const many = Array.from({ length: MAX_TRUSTED_PROXIES }, (_, i) => `10.0.${i}.1`);
    assert.equal((parseTrustProxy(many) as string[]).length, MAX_TRUSTED_PROXIES);
    assert.throws(() => parseTrustProxy([...many, '10.1.0.1']), RangeError);
  });

  test('anything else is refused with a one-line reason', () => {
    for (const bad of [-1, 1.5, 'yes', '10.0.0.0/33', [], '', ['10.0.0.1', 3], { hops: 1 }, null, ['009.9.9.9']]) {
      assert.throws(
        () => parseTrustProxy(bad),
        (e: unknown) => e instanceof RangeError && !e.message.includes('\n'),
        JSON.stringify(bad),
      );
    }
  });
});

describe('resolving the client', () => {
  test('without trust the peer is the client, forwarding headers are ignored', () => {
    assert.deepEqual(resolveClient(false, '10.0.0.1', '1.2.3.4'), { ip: '10.0.0.1', proxied: false });
    assert.equal(client(false, '::ffff:127.0.0.1', '1.2.3.4'), '127.0.0.1');
    assert.equal(client(false, '2001:DB8::1'), '2001:db8::1');
  });

  test('the measured bypass: a forged left-most entry is never the client', () => {
    // X-Forwarded-For: 10.0.0.N, 127.0.0.1 sent straight to the server from loopback.
    for (const setting of [true, 1] as TrustProxy[]) {
      const seen = new Set<string>();
      for (let n = 0; n < 5; n++) seen.add(client(setting, '127.0.0.1', `10.0.0.${n}, 127.0.0.1`));
      assert.deepEqual([...seen], ['127.0.0.1'], String(setting));
    }
    assert.equal(client(['127.0.0.1'], '127.0.0.1', '10.1.2.3, 203.0.113.9'), '203.0.113.9');
  });

  test('a CIDR list: the right-most entry that is not a trusted proxy', () => {
    const list = parseTrustProxy(['10.0.0.0/8', '2001:db8:ffff::/48']);
    assert.equal(client(list, '10.0.0.1', '198.51.100.7, 203.0.113.5, 10.9.9.9'), '203.0.113.5');
    assert.equal(client(list, '10.0.0.1', '203.0.113.5'), '203.0.113.5');
    assert.equal(client(list, '2001:db8:ffff::1', '2001:db8:1::7, 2001:db8:ffff::2'), '2001:db8:1::7');
    // Every entry trusted: the left-most is as far as the chain goes.
    assert.equal(client(list, '10.0.0.1', '10.1.1.1, 10.2.2.2'), '10.1.1.1');
    // An untrusted peer's header is ignored, whatever it says.
    assert.deepEqual(resolveClient(list, '203.0.113.5', '10.0.0.9'), { ip: '203.0.113.5', proxied: false });
    // A trusted peer without a header: the peer is the client.
    assert.deepEqual(resolveClient(list, '10.0.0.1', undefined), { ip: '10.0.0.1', proxied: true });
  });

  test('a hop count N: the N-th entry from the right, the left-most when there are fewer', () => {
    const xff = '198.51.100.1, 198.51.100.2, 198.51.100.3';
    assert.equal(client(1, '203.0.113.1', xff), '198.51.100.3');
    assert.equal(client(2, '203.0.113.1', xff), '198.51.100.2');
    assert.equal(client(3, '203.0.113.1', xff), '198.51.100.1');
    assert.equal(client(5, '203.0.113.1', xff), '198.51.100.1');
  });

  test('true: one proxy on a loopback, link-local or private address', () => {
    assert.equal(client(true, '10.0.0.1', '198.51.100.1, 203.0.113.5'), '203.0.113.5');
    assert.equal(client(true, '::1', '203.0.113.5'), '203.0.113.5');
    assert.equal(client(true, 'fd00::1', '203.0.113.5'), '203.0.113.5');
    assert.equal(client(true, '169.254.1.1', '203.0.113.5'), '203.0.113.5');
    // A public peer is not taken for a proxy: a server exposed directly stays safe.
    assert.deepEqual(resolveClient(true, '198.51.100.9', '203.0.113.5'), { ip: '198.51.100.9', proxied: false });
  });

  test('header lines are joined; empty entries are skipped', () => {
    assert.equal(client(2, '10.0.0.1', ['198.51.100.1', '198.51.100.2']), '198.51.100.1');
    assert.equal(client(1, '10.0.0.1', '198.51.100.1, ,'), '198.51.100.1');
    assert.equal(client(1, '10.0.0.1', ''), '10.0.0.1');
  });

  test('non-canonical forms name one client; an entry that is not an address falls back to the peer', () => {
    const forms = ['9.9.9.9', '9.9.9.9:1234', '::ffff:9.9.9.9', '[::ffff:9.9.9.9]:8080'];
    assert.deepEqual(new Set(forms.map((f) => client(1, '10.0.0.1', f))), new Set(['9.9.9.9']));
    for (const garbage of ['009.9.9.9', 'unknown', 'x'.repeat(100), '1.2.3.4 5.6.7.8']) assert.equal(client(1, '10.0.0.1', garbage), '10.0.0.1', garbage);
    assert.equal(client(1, '10.0.0.1', '[2001:DB8::9]:443'), '2001:db8::9');
    // Garbage beyond the client is never read.
    assert.equal(client(1, '10.0.0.1', 'garbage, 203.0.113.5'), '203.0.113.5');
  });
});

describe('non-public addresses (what http_fetch refuses)', () => {
  test('each range by its group, in IPv4, IPv6 and IPv4-carrying IPv6 forms; public addresses pass', () => {
    const table: [string, string | null][] = [
      ['127.0.0.1', 'loopback'],
      ['127.255.255.254', 'loopback'],
      ['::1', 'loopback'],
      ['::ffff:127.0.0.1', 'loopback'],
      ['::ffff:7f00:1', 'loopback'],
      ['10.0.0.1', 'uniquelocal'],
      ['172.16.0.1', 'uniquelocal'],
      ['172.31.255.255', 'uniquelocal'],
      ['192.168.1.1', 'uniquelocal'],
      ['::ffff:192.168.1.1', 'uniquelocal'],
      ['fc00::1', 'uniquelocal'],
      ['fd00:ec2::254', 'metadata'],
      ['fd00:ec2::253', 'uniquelocal'],
      ['169.254.169.254', 'metadata'],
      ['::ffff:169.254.169.254', 'metadata'],
      ['100.100.100.200', 'metadata'],
      ['169.254.0.1', 'linklocal'],
      ['fe80::1', 'linklocal'],
      ['fe80::1%eth0', 'linklocal'],
      ['100.64.0.1', 'cgnat'],
      ['100.127.255.255', 'cgnat'],
      ['0.0.0.0', 'unspecified'],
      ['0.1.2.3', 'unspecified'],
      ['::', 'unspecified'],
      ['224.0.0.1', 'multicast'],
      ['239.255.255.250', 'multicast'],
      ['ff02::1', 'multicast'],
      ['255.255.255.255', 'reserved'],
      ['240.0.0.1', 'reserved'],
      ['fec0::1', 'reserved'],
      // IPv6 forms a gateway turns into IPv4: judged by the IPv4 address they carry.
      ['::127.0.0.1', 'loopback'],
      ['64:ff9b::10.0.0.1', 'uniquelocal'],
      ['64:ff9b::a9fe:a9fe', 'metadata'],
      ['64:ff9b::a9fe:1', 'linklocal'],
      ['2002:7f00:1::', 'loopback'],
      ['2002:c0a8:101::1', 'uniquelocal'],
      ['64:ff9b::8.8.8.8', null],
      ['2002:808:808::1', null],
      ['8.8.8.8', null],
      ['1.1.1.1', null],
      ['100.63.255.255', null],
      ['100.128.0.0', null],
      ['172.15.255.255', null],
      ['172.32.0.0', null],
      ['169.255.0.1', null],
      ['2606:4700:4700::1111', null],
      ['2001:4860:4860::8888', null],
    ];
    for (const [address, group] of table) assert.equal(nonPublicGroup(parseIp(address)!), group, address);
  });
});
