/**
 * JWT with jose: interop both ways, HS256 only (none, HS384, HS512 refused), weak keys refused,
 * expiry with the skew, tampering, claims rules, jwt_is_expired.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT, UnsecuredJWT, decodeProtectedHeader, jwtVerify } from 'jose';
import { RvmError, SecretText } from '../../plugins/sdk.js';
import type { ValueObject } from '../../plugins/sdk.js';
import { CLOCK_SKEW_SECONDS, MAX_TOKEN_LENGTH, MAX_TTL_SECONDS, createJwt, isJwtExpired, keyBytes, verifyJwtClaims } from '../../stdlib/auth/jwt.js';

const SECRET = 'k'.repeat(32);
const KEY = new TextEncoder().encode(SECRET);
const NOW = 1_700_000_000_000;

async function rejectsWith(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (e: unknown) => e instanceof RvmError && e.code === code);
}

function b64url(text: string): string {
  return Buffer.from(text).toString('base64url');
}

describe('jwt_create', () => {
  test('tokens verify with jose itself, HS256, iat and exp set', async () => {
    const token = await createJwt({ sub: 'u1', role: 'admin' }, SECRET, 3600);
    assert.deepEqual(decodeProtectedHeader(token), { alg: 'HS256', typ: 'JWT' });
    const { payload } = await jwtVerify(token, KEY, { algorithms: ['HS256'] });
    assert.equal(payload.sub, 'u1');
    assert.equal(payload.role, 'admin');
    assert.equal(typeof payload.iat, 'number');
    assert.equal(payload.exp, payload.iat! + 3600);
  });

  test('iat and exp given in the claims are replaced; other claims are kept', async () => {
    const token = await createJwt({ iat: 1, exp: 2, iss: 'me', nested: { a: [1, 'b', null, true] } }, SECRET, 60, NOW);
    const claims = await verifyJwtClaims(token, KEY, NOW);
    assert.equal(claims!.iat, NOW / 1000);
    assert.equal(claims!.exp, NOW / 1000 + 60);
    assert.equal(claims!.iss, 'me');
    assert.deepEqual(claims!.nested, { a: [1, 'b', null, true] });
  });

  test('a SecretText key is revealed and works', async () => {
    const token = await createJwt({ sub: 'x' }, new SecretText(SECRET), 60);
    assert.notEqual(await verifyJwtClaims(token, KEY), null);
  });

  test('keys under 32 bytes are weak_secret, counted in UTF-8 bytes', async () => {
    await rejectsWith(createJwt({}, 'k'.repeat(31), 60), 'weak_secret');
    await rejectsWith(createJwt({}, new SecretText('password123'), 60), 'weak_secret');
    // 16 two-byte characters are 32 bytes.
    assert.equal(keyBytes('t', 'é'.repeat(16)).length, 32);
    assert.throws(
      () => keyBytes('t', 'é'.repeat(15)),
      (e: unknown) => e instanceof RvmError && e.code === 'weak_secret',
    );
  });

  test("a weak_secret error says what is required, never the key's length", () => {
    for (const key of ['', 'k', 'k'.repeat(7), 'k'.repeat(31), new SecretText('hunter2')]) {
      const length = typeof key === 'string' ? key.length : 7;
      assert.throws(
        () => keyBytes('jwt_create()', key),
        (e: unknown) =>
          e instanceof RvmError &&
          e.code === 'weak_secret' &&
          e.message.includes('at least 32 random bytes') &&
          !new RegExp(`\\b${length}\\b`).test(e.message.replace('32', '')),
      );
    }
  });

  test('a non-text key is a type_error', async () => {
    await rejectsWith(createJwt({}, 12345, 60), 'type_error');
    await rejectsWith(createJwt({}, null, 60), 'type_error');
  });

  test('claims must be an object of JSON values', async () => {
    await rejectsWith(createJwt([1] as never, SECRET, 60), 'type_error');
    await rejectsWith(createJwt('x', SECRET, 60), 'type_error');
    await rejectsWith(createJwt({ k: new SecretText('s') }, SECRET, 60), 'invalid_claims');
    await rejectsWith(createJwt({ n: Number.NaN }, SECRET, 60), 'invalid_claims');
    await rejectsWith(createJwt({ sub: 42 }, SECRET, 60), 'invalid_claims');
    await rejectsWith(createJwt({ aud: [1] }, SECRET, 60), 'invalid_claims');
    await rejectsWith(createJwt({ nbf: 'soon' }, SECRET, 60), 'invalid_claims');
    const cyclic: ValueObject = {};
    cyclic.self = cyclic;
    await rejectsWith(createJwt(cyclic, SECRET, 60), 'invalid_claims');
  });

  test('a token longer than rvm accepts is refused at creation', async () => {
    await rejectsWith(createJwt({ blob: 'x'.repeat(MAX_TOKEN_LENGTH) }, SECRET, 60), 'invalid_claims');
  });

  test('ttl must be whole seconds in range', async () => {
    for (const ttl of [0, -5, 1.5, MAX_TTL_SECONDS + 1, '60', null]) await rejectsWith(createJwt({}, SECRET, ttl as never), 'invalid_argument');
    assert.ok(await createJwt({}, SECRET, MAX_TTL_SECONDS));
  });

  test('a __proto__ claim stays data', async () => {
    const claims: ValueObject = {};
    Object.defineProperty(claims, '__proto__', { value: { admin: true }, enumerable: true });
    const token = await createJwt(claims, SECRET, 60);
    const payload = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());
    assert.deepEqual(Object.getOwnPropertyDescriptor(payload, '__proto__')?.value, { admin: true });
  });
});

describe('jwt_verify', () => {
  test('a token signed by jose directly verifies', async () => {
    const token = await new SignJWT({ sub: 'u2' }).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime('1h').sign(KEY);
    const claims = await verifyJwtClaims(token, KEY);
    assert.equal(claims!.sub, 'u2');
  });

  test('alg none is refused', async () => {
    const unsecured = new UnsecuredJWT({ sub: 'u' }).setIssuedAt().setExpirationTime('1h').encode();
    assert.equal(await verifyJwtClaims(unsecured, KEY), null);
    // The same with a forged signature part.
    const [h, p] = unsecured.split('.');
    assert.equal(await verifyJwtClaims(`${h}.${p}.${b64url('sig')}`, KEY), null);
  });

  test('HS384 and HS512 with the same key are refused', async () => {
    for (const alg of ['HS384', 'HS512']) {
      const token = await new SignJWT({ sub: 'u' })
        .setProtectedHeader({ alg })
        .setExpirationTime('1h')
        .sign(new TextEncoder().encode('k'.repeat(64)));
      assert.equal(await verifyJwtClaims(token, new TextEncoder().encode('k'.repeat(64))), null, alg);
    }
  });

  test('a wrong key is refused', async () => {
    const token = await createJwt({ sub: 'u' }, SECRET, 60);
    assert.equal(await verifyJwtClaims(token, new TextEncoder().encode('j'.repeat(32))), null);
  });

  test('a tampered payload is refused', async () => {
    const token = await createJwt({ sub: 'u', role: 'user' }, SECRET, 60);
    const [h, , s] = token.split('.');
    const forged = b64url(JSON.stringify({ sub: 'u', role: 'admin', exp: Math.floor(Date.now() / 1000) + 60 }));
    assert.equal(await verifyJwtClaims(`${h}.${forged}.${s}`, KEY), null);
  });

  test('expired beyond the skew is refused; within the skew accepted', async () => {
    const token = await createJwt({ sub: 'u' }, SECRET, 60, NOW);
    const exp = NOW + 60_000;
    assert.notEqual(await verifyJwtClaims(token, KEY, exp + (CLOCK_SKEW_SECONDS - 1) * 1000), null);
    assert.equal(await verifyJwtClaims(token, KEY, exp + (CLOCK_SKEW_SECONDS + 1) * 1000), null);
  });

  test('a token without exp is refused', async () => {
    const token = await new SignJWT({ sub: 'u' }).setProtectedHeader({ alg: 'HS256' }).sign(KEY);
    assert.equal(await verifyJwtClaims(token, KEY), null);
  });

  test('malformed, empty, non-text and too long tokens are null', async () => {
    for (const bad of ['', 'abc', 'a.b.c', '...', null, 42, `${'a'.repeat(MAX_TOKEN_LENGTH)}.b.c`]) {
      assert.equal(await verifyJwtClaims(bad, KEY), null, String(bad).slice(0, 20));
    }
  });
});

describe('jwt_is_expired', () => {
  test('reads exp without verifying', async () => {
    const token = await createJwt({}, SECRET, 60, NOW);
    assert.equal(isJwtExpired(token, NOW), false);
    assert.equal(isJwtExpired(token, NOW + 59_000), false);
    assert.equal(isJwtExpired(token, NOW + 60_000), true);
  });

  test('malformed is expired; no exp is not', async () => {
    assert.equal(isJwtExpired('nope'), true);
    assert.equal(isJwtExpired(null), true);
    assert.equal(isJwtExpired(`${b64url('{"alg":"HS256"}')}.${b64url('{"exp":"soon"}')}.x`), true);
    const noExp = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).sign(KEY);
    assert.equal(isJwtExpired(noExp), false);
  });
});
