/**
 * The whole runtime over real sockets: a route app compiled from source, served by node:http,
 * driven with fetch, raw TCP and autocannon. Hostile input must get a clear error and leave the
 * server serving.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import type { App } from '../../vm/runtime/app.js';
import { loadApp } from '../../tools/host.js';
import { startServer, type RunningServer } from '../../vm/runtime/http/server.js';
import { captureLogger, type CaptureLogger } from '../../vm/runtime/log.js';
import { DEFAULT_BODY_LIMIT } from '../../vm/runtime/limits.js';
import { CPU_BUDGET_MS } from '../../vm/interp/budget.js';

const FILES: Record<string, string> = {
  '_middleware.rvm': `
middleware {
  next()
  set_header('X-Served-By', 'rvm')
}`,
  'hello.rvm': `
route GET /hello { response.ok({ message: 'hello' }) }
route GET /users/:id { response.ok({ id: params.id, name: "user \${params.id}" }) }
route POST /echo { response.ok(body) }
route GET /spin { while true { } }
fn down(n) { return down(n + 1) }
route GET /recurse { response.ok(down(0)) }
route GET /crash { x = null
  response.ok(x.field) }`,
};

/** Writes a raw request on a fresh TCP connection and resolves with everything the server sent back. */
function raw(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (d) => (data += d));
    socket.on('end', () => resolve(data));
    socket.on('error', reject);
    socket.write(request);
    socket.setTimeout(5000, () => socket.destroy(new Error('no answer within 5 s')));
  });
}

describe('server over real sockets', () => {
  let dir: string;
  let app: App;
  let server: RunningServer;
  let logger: CaptureLogger;
  let base: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rvm-int-'));
    for (const [name, text] of Object.entries(FILES)) writeFileSync(join(dir, name), text);
    logger = captureLogger();
    // The endless loop below must end by its fuel (half a second here): on a machine slowed by
    // others the CPU budget's second could otherwise end it first, with its own code.
    app = await loadApp(dir, { cache: false, logger, settings: { limits: { cpuTimeMs: 10 * CPU_BUDGET_MS } } });
    server = await startServer(app, { port: 0, host: '127.0.0.1' });
    base = server.url;
  });

  after(async () => {
    await server.close();
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const stillServing = async () => {
    const res = await fetch(`${base}/hello`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { message: 'hello' });
  };

  test('serves routes through middleware', async () => {
    const res = await fetch(`${base}/users/42`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-served-by'), 'rvm');
    assert.deepEqual(await res.json(), { id: '42', name: 'user 42' });
    const echo = await fetch(`${base}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":[1,2]}' });
    assert.deepEqual(await echo.json(), { a: [1, 2] });
  });

  test('an endless loop ends that request with 500 within about a second', async () => {
    const started = Date.now();
    const res = await fetch(`${base}/spin`);
    assert.equal(res.status, 500);
    // A limit has its own code even in production: it tells nothing secret.
    assert.equal(((await res.json()) as { code: string }).code, 'fuel_exhausted');
    assert.ok(Date.now() - started < 2500, `took ${Date.now() - started} ms`);
    assert.ok(logger.errors.some((l) => l.includes('fuel_exhausted') && l.includes('hello.rvm:5')));
    await stillServing();
  });

  test('runaway recursion ends that request with 500', async () => {
    const res = await fetch(`${base}/recurse`);
    assert.equal(res.status, 500);
    assert.ok(logger.errors.some((l) => l.includes('call_depth_exceeded')));
    await stillServing();
  });

  test('a runtime error never leaks a stack trace', async () => {
    const res = await fetch(`${base}/crash`);
    assert.equal(res.status, 500);
    const text = await res.text();
    assert.doesNotMatch(text, /at |\.js|null_field/);
    assert.ok(logger.errors.some((l) => l.includes('null_field') && l.includes('hello.rvm:9')));
  });

  test('malformed HTTP is answered 400 and the server keeps serving', async () => {
    const answer = await raw(server.port, 'GARBAGE \x01\x02 nonsense\r\n\r\n');
    assert.match(answer, /^HTTP\/1\.1 400/);
    const badHeader = await raw(server.port, 'GET /hello HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n');
    assert.match(badHeader, /^HTTP\/1\.1 400/);
    await stillServing();
  });

  test('bodies: oversized 413, malformed 400, wrong type 415', async () => {
    const big = '"' + 'x'.repeat(DEFAULT_BODY_LIMIT) + '"';
    const tooBig = await fetch(`${base}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: big });
    assert.equal(tooBig.status, 413);
    assert.equal(((await tooBig.json()) as { code: string }).code, 'payload_too_large');
    const malformed = await fetch(`${base}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":' });
    assert.equal(malformed.status, 400);
    assert.equal(((await malformed.json()) as { code: string }).code, 'invalid_json');
    const wrongType = await fetch(`${base}/echo`, { method: 'POST', headers: { 'content-type': 'application/x-yaml' }, body: 'a: 1' });
    assert.equal(wrongType.status, 415);
    assert.equal(((await wrongType.json()) as { code: string }).code, 'unsupported_media_type');
    await stillServing();
  });

  test('404 and 405 carry the error body shape', async () => {
    const missing = await fetch(`${base}/nowhere`);
    assert.equal(missing.status, 404);
    assert.deepEqual(await missing.json(), { error: 'Not found', code: 'not_found' });
    const wrongMethod = await fetch(`${base}/hello`, { method: 'DELETE' });
    assert.equal(wrongMethod.status, 405);
    assert.equal(wrongMethod.headers.get('allow'), 'GET, HEAD');
    await wrongMethod.arrayBuffer();
  });

  test('64 concurrent connections, 2000 requests: every one answered 2xx, no error or timeout', async () => {
    // A fixed number of requests rather than a duration: autocannon waits for every answer (a
    // request left hanging is a timeout), and some 30 requests on each kept-alive connection meet
    // the same concurrency as 10 s of load did, in a second or two of CPU instead of ten.
    const amount = 2000;
    const result = await autocannon({
      url: `${base}/users/7`,
      connections: 64,
      amount,
    });
    assert.equal(result.errors, 0);
    assert.equal(result.timeouts, 0);
    assert.equal(result.non2xx, 0);
    assert.ok(result.requests.total > 1000, `only ${result.requests.total} requests`);
    assert.equal(result['2xx'], amount);
  });
});

describe('dev mode hot reload', () => {
  test('a changed file serves its new version on the next request; a broken one keeps the last good', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rvm-reload-'));
    mkdirSync(join(dir, 'api'));
    writeFileSync(join(dir, 'api', 'v.rvm'), `route GET /v { response.ok({ v: 1 }) }`);
    const logger = captureLogger();
    const app = await loadApp(dir, { dev: true, logger });
    app.watch();
    const server = await startServer(app, { port: 0, host: '127.0.0.1' });
    const version = async () => ((await (await fetch(`${server.url}/v`)).json()) as { v: number }).v;
    const waitFor = async (expected: number) => {
      for (let i = 0; i < 100; i++) {
        if ((await version()) === expected) return;
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.fail(`never saw version ${expected}`);
    };
    try {
      assert.equal(await version(), 1);
      writeFileSync(join(dir, 'api', 'v.rvm'), `route GET /v { response.ok({ v: 2 }) }`);
      await waitFor(2);

      writeFileSync(join(dir, 'api', 'v.rvm'), `route GET /v { response.ok({ v: 3 ) }`);
      for (let i = 0; i < 100 && app.lastErrors.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      assert.equal(app.lastErrors[0]?.code, 'E_UNEXPECTED_TOKEN');
      assert.equal(await version(), 2, 'the last good version keeps serving');
      assert.ok(logger.errors.some((l) => l.includes('api/v.rvm:1:')));

      writeFileSync(join(dir, 'api', 'v.rvm'), `route GET /v { response.ok({ v: 4 }) }`);
      await waitFor(4);
      assert.equal(app.lastErrors.length, 0);
    } finally {
      await server.close();
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
