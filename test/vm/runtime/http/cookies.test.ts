import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { parseCookies, serializeCookie, setCookie } from '../../../../vm/runtime/http/cookies.js';
import { RequestContext } from '../../../../vm/runtime/context.js';
import { RvmError } from '../../../../vm/values.js';
import { fakeApp } from '../fake-app.js';

describe('parseCookies', () => {
  test('pairs, spaces, quotes, percent-decoding; first occurrence wins', () => {
    const c = parseCookies('a=1; b = two ; c="quoted"; d=caf%C3%A9; a=ignored; e=%ZZ; novalue; =x');
    assert.deepEqual({ ...c }, { a: '1', b: 'two', c: 'quoted', d: 'café', e: '%ZZ' });
  });

  test('missing header → empty object', () => assert.deepEqual(parseCookies(undefined), {}));

  test('a cookie named __proto__ is data', () => {
    const c = parseCookies('__proto__=x; constructor=y');
    assert.equal(Object.getPrototypeOf(c), Object.prototype);
    assert.equal(Object.getOwnPropertyDescriptor(c, '__proto__')?.value, 'x');
    assert.equal(c.constructor, 'y');
  });
});

describe('serializeCookie', () => {
  test('defaults: Path=/, HttpOnly, SameSite=Lax, no Secure', () => {
    assert.equal(serializeCookie('sid', 'a b;c'), 'sid=a%20b%3Bc; Path=/; HttpOnly; SameSite=Lax');
  });

  test('options', () => {
    const s = serializeCookie('t', 'v', { secure: true, maxAge: 60.7, httpOnly: false, sameSite: 'Strict', path: '/app', domain: 'example.com' });
    assert.equal(s, 't=v; Path=/app; Domain=example.com; Max-Age=60; Secure; SameSite=Strict');
  });

  test('Max-Age=0 deletes, with an Expires in the past', () => {
    assert.match(serializeCookie('t', '', { maxAge: 0 }), /Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT/);
  });

  test('Expires', () => {
    assert.match(serializeCookie('t', 'v', { expires: new Date(Date.UTC(2030, 0, 2, 3, 4, 5)) }), /Expires=Wed, 02 Jan 2030 03:04:05 GMT/);
  });

  test('SameSite=None implies Secure', () => {
    assert.match(serializeCookie('t', 'v', { sameSite: 'None' }), /; Secure; SameSite=None$/);
  });

  test('invalid name or attribute → invalid_cookie', () => {
    for (const f of [
      () => serializeCookie('bad name', 'v'),
      () => serializeCookie('a;b', 'v'),
      () => serializeCookie('a', 'v', { path: '/x;Domain=evil' }),
      () => serializeCookie('a', 'v', { domain: 'x\r\ny' }),
      () => serializeCookie('a', 'v', { maxAge: Infinity }),
    ]) {
      assert.throws(f, (e: unknown) => e instanceof RvmError && e.code === 'invalid_cookie');
    }
  });
});

describe('setCookie', () => {
  const app = fakeApp([]);
  const incoming = (encrypted: boolean) => ({ method: 'GET', url: '/', headers: {}, remoteAddress: '127.0.0.1', encrypted, body: null });

  test('Secure follows the request and several cookies append', () => {
    const plain = new RequestContext(incoming(false), '/', '', {}, app);
    setCookie(plain, 'a', '1');
    setCookie(plain, 'b', '2');
    const set = plain.response.getHeader('set-cookie') as string[];
    assert.equal(set.length, 2);
    assert.ok(!set[0].includes('Secure'));
    const tls = new RequestContext(incoming(true), '/', '', {}, app);
    setCookie(tls, 'a', '1');
    assert.match(tls.response.getHeader('Set-Cookie') as string, /; Secure;/);
  });
});
