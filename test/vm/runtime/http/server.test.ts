import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { installSignalHandlers, startServer, type RunningServer } from '../../../../vm/runtime/http/server.js';
import { fakeApp } from '../fake-app.js';

const app = fakeApp(
  [
    ['GET', '/hello', (ctx) => void ctx.respond(200, { message: 'hello' })],
    ['POST', '/echo', (ctx) => void ctx.respond(200, ctx.body)],
    [
      'GET',
      '/slow',
      async (ctx) => {
        await new Promise((r) => setTimeout(r, 300));
        ctx.respond(200, { slow: true });
      },
    ],
    ['GET', '/ip', (ctx) => void ctx.respond(200, { ip: ctx.request.ip, secure: ctx.request.secure })],
  ],
  { settings: { bodyLimit: 1024 } },
);

/** Sends raw bytes and collects what comes back until the server closes the connection. */
function raw(port: number, data: string, waitMs = 2000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let out = '';
    socket.setEncoding('utf8');
    socket.on('data', (d) => (out += d));
    socket.on('close', () => resolve(out));
    socket.on('error', reject);
    socket.setTimeout(waitMs, () => {
      socket.destroy();
      resolve(out + '<<timeout>>');
    });
    socket.write(data);
  });
}

describe('startServer', async () => {
  const running: RunningServer = await startServer(app, { port: 0, host: '127.0.0.1' });
  after(() => running.close());

  test('serves a request over a real socket', async () => {
    assert.match(running.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await fetch(`${running.url}/hello`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.deepEqual(await res.json(), { message: 'hello' });
    const ip = await (await fetch(`${running.url}/ip`)).json();
    assert.deepEqual(ip, { ip: '127.0.0.1', secure: false });
  });

  test('404 and 405 over the wire', async () => {
    const missing = await fetch(`${running.url}/missing`);
    assert.equal(missing.status, 404);
    assert.deepEqual(await missing.json(), { error: 'Not found', code: 'not_found' });
    const wrong = await fetch(`${running.url}/hello`, { method: 'DELETE' });
    assert.equal(wrong.status, 405);
    assert.equal(wrong.headers.get('allow'), 'GET, HEAD');
    await wrong.body?.cancel();
  });

  test('a JSON body round-trips', async () => {
    const res = await fetch(`${running.url}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":[1,2]}' });
    assert.deepEqual(await res.json(), { a: [1, 2] });
  });

  test('pipelined requests in one packet are answered in order, ready and waiting answers mixed', async () => {
    const paths = ['/hello', '/slow', '/missing', '/hello', '/ip', '/hello'];
    const requests = paths.map((p, i) => `GET ${p} HTTP/1.1\r\nHost: x\r\n${i === paths.length - 1 ? 'Connection: close\r\n' : ''}\r\n`);
    const out = await raw(running.port, requests.join(''));
    const statuses = [...out.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
    assert.deepEqual(statuses, [200, 200, 404, 200, 200, 200]);
    const bodies = [...out.matchAll(/\r\n\r\n(\{[^\n]*?\})(?=HTTP|$)/g)].map((m) => JSON.parse(m[1]!) as unknown);
    assert.deepEqual(bodies, [
      { message: 'hello' },
      { slow: true },
      { error: 'Not found', code: 'not_found' },
      { message: 'hello' },
      { ip: '127.0.0.1', secure: false },
      { message: 'hello' },
    ]);
  });

  test('bodies nobody reads are still drained: one connection mixes bodyless, unread and read bodies', async () => {
    const requests = [
      'GET /hello HTTP/1.1\r\nHost: x\r\n\r\n',
      // 405: the route never reads this body, so node must pull it off the wire before the next request.
      'POST /hello HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n{"unread":1}\n',
      'GET /hello HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n',
      'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n7\r\n{"a":1}\r\n0\r\n\r\n',
      'GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    ];
    const out = await raw(running.port, requests.join(''));
    const statuses = [...out.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
    assert.deepEqual(statuses, [200, 405, 200, 200, 200]);
    assert.match(out, /\r\n\r\n\{"a":1\}HTTP/);
  });

  test('a request without a body is not drained after its answer; one with a body is', async () => {
    const seen: import('node:http').IncomingMessage[] = [];
    const capture = (req: import('node:http').IncomingMessage): void => void seen.push(req);
    running.server.on('request', capture);
    try {
      await (await fetch(`${running.url}/hello`)).json();
      const wrong = await fetch(`${running.url}/hello`, { method: 'POST', body: 'unread' });
      await wrong.body?.cancel();
      await new Promise((r) => setTimeout(r, 20));
    } finally {
      running.server.off('request', capture);
    }
    assert.equal(seen.length, 2);
    // Node resumes a stream to drain it; the bodyless one was never touched (skipDrain).
    assert.equal(seen[0]!.readableFlowing, null);
    assert.equal(seen[1]!.readableFlowing, true);
  });

  test('malformed HTTP → 400 with the error body, and the server keeps serving', async () => {
    const reply = await raw(running.port, 'THIS IS NOT HTTP\r\n\r\n');
    assert.match(reply, /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.match(reply, /"code":"bad_request"/);
    assert.equal((await fetch(`${running.url}/hello`)).status, 200);
  });

  test('oversized headers → 431', async () => {
    const reply = await raw(running.port, `GET /hello HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    assert.match(reply, /^HTTP\/1\.1 431 /);
    assert.match(reply, /"code":"headers_too_large"/);
  });

  test('an oversized body → 413, and the server keeps serving', async () => {
    const big = JSON.stringify({ s: 'x'.repeat(2000) });
    const declared = await fetch(`${running.url}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: big });
    assert.equal(declared.status, 413);
    assert.equal(((await declared.json()) as { code: string }).code, 'payload_too_large');
    // Chunked, so the limit is found while reading rather than from content-length.
    const stream = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode(big.slice(0, 1000)));
        c.enqueue(new TextEncoder().encode(big.slice(1000)));
        c.close();
      },
    });
    const chunked = await fetch(`${running.url}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    assert.equal(chunked.status, 413);
    await chunked.body?.cancel();
    assert.equal((await fetch(`${running.url}/hello`)).status, 200);
  });

  test('HEAD over the wire has content-length but no body', async () => {
    const res = await fetch(`${running.url}/hello`, { method: 'HEAD' });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-length'), '19');
    assert.equal(await res.text(), '');
  });
});

describe('timeouts and shutdown', () => {
  test('headers that never finish → 408 and the connection is closed', async () => {
    const running = await startServer(app, { port: 0, host: '127.0.0.1', headersTimeoutMs: 150, requestTimeoutMs: 300 });
    try {
      const started = Date.now();
      const reply = await raw(running.port, 'GET /hello HTTP/1.1\r\nHost: x\r\n', 3000);
      assert.match(reply, /^HTTP\/1\.1 408 /);
      assert.match(reply, /"code":"request_timeout"/);
      assert.ok(Date.now() - started < 2000);
      assert.equal((await fetch(`${running.url}/hello`)).status, 200);
    } finally {
      await running.close();
    }
  });

  test('close() lets an in-flight request finish, then stops accepting', async () => {
    const running = await startServer(app, { port: 0, host: '127.0.0.1' });
    // Warm a keep-alive connection so close() has an idle one to shut too.
    await (await fetch(`${running.url}/hello`)).json();
    const slow = fetch(`${running.url}/slow`);
    await new Promise((r) => setTimeout(r, 100));
    let closed = false;
    const closing = running.close().then(() => (closed = true));
    const res = await slow;
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { slow: true });
    await closing;
    assert.equal(closed, true);
    await assert.rejects(fetch(`${running.url}/hello`));
  });

  test('close() cuts requests still running after the grace period', async () => {
    const running = await startServer(app, { port: 0, host: '127.0.0.1', shutdownGraceMs: 50 });
    const slow = fetch(`${running.url}/slow`).then(
      () => 'answered',
      () => 'cut',
    );
    await new Promise((r) => setTimeout(r, 20));
    const started = Date.now();
    await running.close();
    assert.ok(Date.now() - started < 250);
    assert.equal(await slow, 'cut');
  });

  test('startServer rejects when the port is taken', async () => {
    const running = await startServer(app, { port: 0, host: '127.0.0.1' });
    try {
      await assert.rejects(startServer(app, { port: running.port, host: '127.0.0.1' }), /EADDRINUSE/);
    } finally {
      await running.close();
    }
  });

  test('SIGTERM closes gracefully then exits 0; a second signal exits at once', async () => {
    const running = await startServer(app, { port: 0, host: '127.0.0.1' });
    const codes: number[] = [];
    let exited!: () => void;
    const done = new Promise<void>((r) => (exited = r));
    const remove = installSignalHandlers(running, app.log, (code) => {
      codes.push(code);
      if (codes.length === 2) exited();
    });
    try {
      const slow = fetch(`${running.url}/slow`);
      await new Promise((r) => setTimeout(r, 50));
      process.emit('SIGTERM');
      process.emit('SIGINT');
      assert.deepEqual(codes, [1]);
      assert.equal((await slow).status, 200);
      await done;
      assert.deepEqual(codes, [1, 0]);
    } finally {
      remove();
      await running.close();
    }
  });
});
