/**
 * The `outbound.allow` list (vm/runtime/http/outbound-allow.ts): which entries it takes, and what
 * a compiled list lets `http_fetch` reach by name, address and range.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseIp } from '../../../../vm/runtime/http/client-address.js';
import { MAX_OUTBOUND_ALLOW, allowsAddress, allowsHost, compileOutboundAllow, parseOutboundAllow } from '../../../../vm/runtime/http/outbound-allow.js';

describe('outbound.allow', () => {
  test('entries: host names (lower case, no final dot), addresses and CIDR ranges; anything else names itself as the cause', () => {
    assert.deepEqual(parseOutboundAllow([' Payments.Internal. ', '10.0.0.0/8', '::1', 'svc_a.local']), [
      'payments.internal',
      '10.0.0.0/8',
      '::1',
      'svc_a.local',
    ]);
    for (const bad of ['http://x', 'a..b', '-a.b', 'a b', '', '10.0.0.0/33', 'x'.repeat(64), `${'a.'.repeat(127)}a`]) {
      assert.throws(
        () => parseOutboundAllow([bad]),
        (e: Error) => e instanceof RangeError && e.cause === bad,
        bad,
      );
    }
    assert.throws(() => parseOutboundAllow('10.0.0.0/8'), RangeError);
    assert.throws(() => parseOutboundAllow([1]), RangeError);
    assert.throws(() => parseOutboundAllow(Array(MAX_OUTBOUND_ALLOW + 1).fill('a.b')), RangeError);
  });

  test('a compiled list allows its names (any case), its addresses (any spelling) and its ranges', () => {
    const allow = compileOutboundAllow(parseOutboundAllow(['payments.internal', '10.20.0.0/16', '127.0.0.1']));
    assert.ok(allowsHost(allow, 'PAYMENTS.internal.'));
    assert.ok(!allowsHost(allow, 'internal'));
    assert.ok(allowsHost(allow, '127.0.0.1'));
    assert.ok(allowsAddress(allow, parseIp('::ffff:127.0.0.1')!));
    assert.ok(allowsAddress(allow, parseIp('10.20.3.4')!));
    assert.ok(!allowsAddress(allow, parseIp('10.21.0.1')!));
    assert.ok(!allowsAddress(allow, parseIp('127.0.0.2')!));
  });

  test('a metadata address is allowed only when listed itself, never through a wider range', () => {
    const wide = compileOutboundAllow(parseOutboundAllow(['169.254.0.0/16', 'fd00::/8']));
    assert.ok(allowsAddress(wide, parseIp('169.254.1.1')!));
    assert.ok(!allowsAddress(wide, parseIp('169.254.169.254')!));
    assert.ok(!allowsAddress(wide, parseIp('fd00:ec2::254')!));
    const exact = compileOutboundAllow(parseOutboundAllow(['169.254.169.254', 'fd00:ec2::254']));
    assert.ok(allowsAddress(exact, parseIp('169.254.169.254')!));
    assert.ok(allowsAddress(exact, parseIp('fd00:ec2::254')!));
  });
});
