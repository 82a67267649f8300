/**
 * Argon2id: PHC strings with the documented costs, verification of right and wrong passwords,
 * malformed and hostile hashes verifying false, the older variants, length limits, rehash hints.
 */
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import argon2 from 'argon2';
import { RvmError, SecretText } from '../../plugins/sdk.js';
import { TEST_APP, loadForTest } from '../../plugins/testing.js';
import { auth } from '../../stdlib/auth/index.js';
import {
  HASH_PARAMS,
  HashQueue,
  canonicalPhc,
  MAX_CONCURRENT_HASHES,
  MAX_PASSWORD_BYTES,
  hashPassword,
  needsRehash,
  parsePhc,
  verifyPassword,
} from '../../stdlib/auth/passwords.js';

/**
 * `echo -n 'correct horse battery staple' | argon2 rvm-interop-salt -id -t 3 -m 16 -p 4 -l 32 -e`
 * (Debian's argon2 0~20171227, the reference C implementation the PHC published).
 */
const REFERENCE_HASH = '$argon2id$v=19$m=65536,t=3,p=4$cnZtLWludGVyb3Atc2FsdA$FsKrdpLUCNa8kz/gxjY4rZlRwSmc7LnDatkwDtS9fx4';
const PHC_SHAPE = /^\$argon2id\$v=19\$(?:[mtp]=\d+,){2}[mtp]=\d+\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/;

describe('argon2_hash and argon2_verify', () => {
  let hash: string;
  before(async () => {
    hash = await hashPassword('correct horse battery staple');
  });

  test('the hash is an argon2id PHC string with m=65536, t=3, p=4', () => {
    assert.match(hash, PHC_SHAPE);
    const phc = parsePhc(hash)!;
    assert.deepEqual([phc.id, phc.version, phc.m, phc.t, phc.p], ['argon2id', 19, 65536, 3, 4]);
    assert.equal(Buffer.from(phc.salt, 'base64').length, 16);
    assert.equal(Buffer.from(phc.hash, 'base64').length, 32);
  });

  test('the string is canonical PHC (m, t, p in that order), as libargon2-based verifiers require', () => {
    assert.match(hash, /^\$argon2id\$v=19\$m=65536,t=3,p=4\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
  });

  test('interop: the reference implementation (libargon2 CLI) writes what rvm writes for the same salt, and each verifies the other', async () => {
    const reference = REFERENCE_HASH;
    const ours = canonicalPhc(
      await argon2.hash('correct horse battery staple', { type: argon2.argon2id, ...HASH_PARAMS, salt: Buffer.from('rvm-interop-salt') }),
    );
    assert.equal(ours, reference);
    assert.equal(await verifyPassword('correct horse battery staple', reference), true);
    // The argon2 package's own order (m, p, t), as hashes stored before this fix have it, still verifies.
    assert.equal(await verifyPassword('correct horse battery staple', reference.replace('m=65536,t=3,p=4', 'm=65536,p=4,t=3')), true);
    assert.equal(await verifyPassword('correct horse battery stapler', reference), false);
  });

  test('two hashes of one password differ (fresh salt)', async () => {
    assert.notEqual(await hashPassword('correct horse battery staple'), hash);
  });

  test('the right password verifies, a wrong one does not', async () => {
    assert.equal(await verifyPassword('correct horse battery staple', hash), true);
    assert.equal(await verifyPassword('correct horse battery stapler', hash), false);
    assert.equal(await verifyPassword('', hash), false);
  });

  test('a SecretText password is revealed', async () => {
    assert.equal(await verifyPassword(new SecretText('correct horse battery staple'), hash), true);
  });

  test('malformed and non-argon2 hashes verify false, never throw', async () => {
    const broken = [
      '',
      'plain',
      '$2b$10$abcdefghijklmnopqrstuuJ4V3F5ldpYyY6pp5qcS0A4qJtGEwU7W', // bcrypt
      '$argon2id$v=19$m=65536,t=3,p=4$$', // no salt or hash
      hash.replace('$argon2id$', '$argon2x$'),
      hash.replace('v=19', 'v=20'),
      hash.replace('m=65536', 'm=abc'),
      hash.replace(/,t=3/, ',q=3'),
      hash.replace('m=65536', 'm=4294967295'), // memory bomb
      hash.replace(/t=3/, 't=100000'), // time bomb
      hash.replace(/p=4/, 'p=255'),
      hash.slice(0, -10),
      hash + '!!',
      hash + 'x'.repeat(600),
    ];
    for (const bad of broken) assert.equal(await verifyPassword('correct horse battery staple', bad), false, bad.slice(0, 40));
    assert.equal(await verifyPassword('x', null), false);
    assert.equal(await verifyPassword('x', 42), false);
    assert.equal(await verifyPassword(null, hash), false);
  });

  test('argon2i and argon2d hashes verify too (imported hashes keep working)', async () => {
    for (const type of [argon2.argon2i, argon2.argon2d] as const) {
      const other = await argon2.hash('pw', { type, memoryCost: 8192, timeCost: 2, parallelism: 1 });
      assert.equal(await verifyPassword('pw', other), true);
      assert.equal(await verifyPassword('px', other), false);
      assert.equal(needsRehash(other), true);
    }
  });

  test('passwords over the limit: hashing refuses, verifying is false', async () => {
    const long = 'a'.repeat(MAX_PASSWORD_BYTES + 1);
    await assert.rejects(hashPassword(long), (e: unknown) => e instanceof RvmError && e.code === 'password_too_long');
    // Counted in UTF-8 bytes.
    await assert.rejects(hashPassword('é'.repeat(MAX_PASSWORD_BYTES / 2 + 1)), (e: unknown) => e instanceof RvmError && e.code === 'password_too_long');
    assert.equal(await verifyPassword(long, hash), false);
  });

  test('a non-text password cannot be hashed', async () => {
    await assert.rejects(hashPassword(12345), (e: unknown) => e instanceof RvmError && e.code === 'type_error');
  });

  test('argon2_needs_rehash: current costs no, weaker costs or unreadable yes', async () => {
    assert.equal(needsRehash(hash), false);
    const weaker = await argon2.hash('pw', { type: argon2.argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 });
    assert.equal(needsRehash(weaker), true);
    assert.equal(needsRehash('garbage'), true);
    assert.equal(needsRehash(null), true);
  });
});

describe('parsePhc', () => {
  test('reads parameters in any order and the version', () => {
    const phc = parsePhc('$argon2id$v=19$t=2,p=1,m=19456$c29tZXNhbHRzb21lc2FsdA$aGFzaGhhc2hoYXNoaGFzaA')!;
    assert.deepEqual({ m: phc.m, t: phc.t, p: phc.p, v: phc.version }, { m: 19456, t: 2, p: 1, v: 19 });
    assert.equal(parsePhc('$argon2i$m=4096,t=3,p=1$c29tZXNhbHRzb21lc2FsdA$aGFzaGhhc2hoYXNoaGFzaA')!.version, 16);
  });

  test('duplicate or missing parameters are refused', () => {
    assert.equal(parsePhc('$argon2id$v=19$m=4096,m=4096,p=1$c29tZXNhbHRzb21lc2FsdA$aGFzaGhhc2hoYXNoaGFzaA'), null);
    assert.equal(parsePhc('$argon2id$v=19$m=4096,t=3$c29tZXNhbHRzb21lc2FsdA$aGFzaGhhc2hoYXNoaGFzaA'), null);
  });

  test('the documented defaults are the package defaults', () => {
    assert.deepEqual(HASH_PARAMS, { memoryCost: 65536, timeCost: 3, parallelism: 4 });
  });
});

describe('HashQueue', () => {
  test('runs at most `limit` jobs at once, in arrival order, and frees the slot of a failed job', async () => {
    const queue = new HashQueue(2);
    let running = 0;
    let peak = 0;
    const started: number[] = [];
    const job = (i: number) => async () => {
      started.push(i);
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, 5));
      running--;
      if (i === 1) throw new Error('boom');
      return i;
    };
    const results = await Promise.allSettled([0, 1, 2, 3, 4, 5].map((i) => queue.run(job(i))));
    assert.equal(peak, 2);
    assert.deepEqual(started, [0, 1, 2, 3, 4, 5]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled'],
    );
  });

  test('the limit is at least one', () => {
    assert.ok(MAX_CONCURRENT_HASHES >= 1);
  });

  test('a job whose request is abandoned while it waits leaves the queue without running; one already aborted never enters', async () => {
    const queue = new HashQueue(1);
    let release!: () => void;
    const ran: string[] = [];
    const first = queue.run(async () => {
      ran.push('first');
      await new Promise<void>((r) => (release = r));
    });
    const abandoned = new AbortController();
    const second = queue.run(async () => void ran.push('second'), abandoned.signal);
    const third = queue.run(async () => void ran.push('third'));
    assert.equal(queue.queued, 2);
    abandoned.abort(new Error('client gone'));
    await assert.rejects(second, /client gone/);
    assert.equal(queue.queued, 1);
    release();
    await first;
    await third;
    assert.deepEqual(ran, ['first', 'third']);
    const gone = new AbortController();
    gone.abort(new Error('already gone'));
    await assert.rejects(
      queue.run(async () => void ran.push('never'), gone.signal),
      /already gone/,
    );
    assert.deepEqual(ran, ['first', 'third']);
  });
});

describe('"passwords": {"cost": "test"}', () => {
  const atTestCost = { ...TEST_APP, config: { passwords: { cost: 'test' } } };

  test('argon2_hash writes the smallest Argon2id cost, argon2_needs_rehash expects it, and the app says so at start', async () => {
    const kit = await loadForTest([auth], atTestCost);
    const hash = (await kit.call('argon2_hash', 'correct horse battery staple')) as string;
    assert.match(hash, /^\$argon2id\$v=19\$m=8,t=1,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    assert.equal(await kit.call('argon2_verify', 'correct horse battery staple', hash), true);
    assert.equal(await kit.call('argon2_verify', 'correct horse battery stapler', hash), false);
    assert.equal(await kit.call('argon2_needs_rehash', hash), false);
    assert.equal(await kit.call('argon2_needs_rehash', REFERENCE_HASH), true, 'a production hash is rehashed at the cost in use');
    assert.deepEqual(
      [...kit.registry.announcements.values()].map((a) => [a.label, a.text]),
      [['Passwords', 'test cost (Argon2id m=8,t=1,p=1), refused by --prod']],
    );
  });

  test('production cost is the default, and what "production" asks for', async () => {
    const testCostHash = '$argon2id$v=19$m=8,t=1,p=1$cnZtLWludGVyb3Atc2FsdA$FsKrdpLUCNa8kz/gxjY4rZlRwSmc7LnDatkwDtS9fx4';
    for (const config of [{}, { passwords: {} }, { passwords: { cost: 'production' } }]) {
      const kit = await loadForTest([auth], { ...TEST_APP, config });
      assert.equal(await kit.call('argon2_needs_rehash', REFERENCE_HASH), false, JSON.stringify(config));
      assert.equal(await kit.call('argon2_needs_rehash', testCostHash), true, JSON.stringify(config));
      assert.equal(kit.registry.announcements.size, 0, JSON.stringify(config));
    }
  });

  test('a bad passwords section fails the plugin setup, naming the setting', async () => {
    const bad: [unknown, RegExp][] = [
      ['test', /passwords must be an object/],
      [{ cost: 'cheap' }, /passwords\.cost must be "production" or "test", got "cheap"/],
      [{ costs: 'test' }, /unknown setting passwords\.costs \(known: cost\)/],
    ];
    for (const [passwords, message] of bad) {
      await assert.rejects(
        loadForTest([auth], { ...TEST_APP, config: { passwords } }),
        (e: unknown) => e instanceof Error && (e as { code?: string }).code === 'E_PLUGIN_SETUP' && message.test(e.message),
      );
    }
  });
});
