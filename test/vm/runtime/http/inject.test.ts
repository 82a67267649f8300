import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { inject } from '../../../../vm/runtime/http/inject.js';
import { setCookie } from '../../../../vm/runtime/http/cookies.js';
import type { Value } from '../../../../vm/values.js';
import { fakeApp } from '../fake-app.js';

const app = fakeApp([
  ['GET', '/hello', (ctx) => void ctx.respond(200, { message: 'hello' })],
  ['POST', '/echo', (ctx) => void ctx.respond(200, { body: ctx.request.body as Value, kind: ctx.bodyKind, ip: ctx.request.ip, secure: ctx.request.secure })],
  [
    'GET',
    '/cookie',
    (ctx) => {
      setCookie(ctx, 'a', '1');
      setCookie(ctx, 'b', '2');
      ctx.respond(200, { key: ctx.request.headers['x-api-key'] ?? null });
    },
  ],
]);

describe('inject', () => {
  test('GET with json()', async () => {
    const res = await inject(app, { url: '/hello' });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json(), { message: 'hello' });
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
  });

  test('an object body is sent as JSON', async () => {
    const res = await inject(app, { method: 'post', url: '/echo', body: { a: [1, 2] }, remoteAddress: '10.1.1.1', encrypted: true });
    assert.deepEqual(res.json(), { body: { a: [1, 2] }, kind: 'json', ip: '10.1.1.1', secure: true });
  });

  test('string and Buffer bodies with their content type', async () => {
    const form = await inject(app, { method: 'POST', url: '/echo', body: 'a=1&a=2', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    assert.deepEqual(form.json().body, { a: ['1', '2'] });
    const text = await inject(app, { method: 'POST', url: '/echo', body: Buffer.from('hi'), headers: { 'content-type': 'text/plain' } });
    assert.equal(text.json().body, 'hi');
  });

  test('headers are lower-cased; set-cookie comes back as a list', async () => {
    const res = await inject(app, { url: '/cookie', headers: { 'X-API-Key': 'k1' } });
    assert.equal(res.json().key, 'k1');
    assert.deepEqual(res.headers['set-cookie'], ['a=1; Path=/; HttpOnly; SameSite=Lax', 'b=2; Path=/; HttpOnly; SameSite=Lax']);
  });

  test('HEAD and errors', async () => {
    const head = await inject(app, { method: 'HEAD', url: '/hello' });
    assert.equal(head.body, '');
    assert.equal(head.headers['content-length'], '19');
    const missing = await inject(app, { url: '/missing' });
    assert.equal(missing.status, 404);
    assert.equal(missing.json().code, 'not_found');
  });
});
