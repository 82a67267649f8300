/**
 * The isolation limits (spec/language.md §7.3) over real sockets: the body is read only after the guards let a request through,
 * admission refuses past the in-flight and body-memory limits, the watchdog ends requests past
 * their wall-clock deadline, framing counts toward the body limit, and one client cannot take
 * every connection or event stream. Each limit is tested at the limit and one past it.
 */
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { definePlugin, type Limits, type PluginDefinition } from '../../plugins/sdk.js';
import type { App } from '../../vm/runtime/app.js';
import { loadApp } from '../../tools/host.js';
import { JSON_BODY_MEMORY_FACTOR } from '../../vm/runtime/http/admission.js';
import { UNREAD_BODY_DRAIN_BYTES } from '../../vm/runtime/dispatch.js';
import { PARSE_IN_TURN_BYTES } from '../../vm/runtime/http/body.js';
import { captureLogger, type CaptureLogger } from '../../vm/runtime/log.js';
import { MULTIPART_FRAMING_BYTES } from '../../vm/runtime/http/multipart.js';
import { startServer, type RunningServer } from '../../vm/runtime/http/server.js';

// The auth guard needs a key to refuse with 401 rather than 500 auth_not_configured.
process.env.JWT_SECRET = 'admission-test-secret-of-at-least-32-bytes';

/** Resolvers of the requests waiting in `wait()`, so a test releases them when it likes. */
const waiting: (() => void)[] = [];

/** `wait()` settles when the test releases it; `forever()` never does. */
const WAITS: PluginDefinition = definePlugin({
  name: 'test-waits',
  version: '1.0.0',
  setup(rvm) {
    rvm.native('wait', () => new Promise((resolve) => waiting.push(() => resolve(true))), { params: [], doc: 'Waits until the test releases it.' });
    rvm.native('forever', () => new Promise(() => {}), { params: [], doc: 'Never settles.' });
  },
});

const ROUTES = `
route GET /hello { response.ok({ hello: true }) }
route GET /spin { while true { } }
route GET /wait { wait()
  response.ok({ waited: true }) }
route GET /forever { forever()
  response.ok({ never: true }) }
route GET /late-log { wait()
  log('ran after the deadline')
  response.ok({ late: true }) }
route POST /echo { response.ok(request.body) }
route POST /upload {
  guard auth
  validate { f: file }
  response.created({ size: body.f.size })
}
route POST /form {
  validate { name: text }
  response.created({ name: body.name })
}
route POST /ignore { response.ok({ ignored: true }) }
route POST /validated {
  validate { name: text }
  response.ok({ name: body.name, raw_items: len(request.body.items) })
}
route POST /checked {
  validate { name: text }
  response.ok(body)
}
route POST /alias { guard copy_body
  response.ok({ read: true }) }
guard_definition copy_body { r = request
  x = r.body }
route POST /copy { r = request
  response.ok(r.body) }
route POST /late { guard from_body
  response.ok(body) }
guard_definition from_body {
  if request.body.ok != true { fail 403 'not ok' }
}
`;
const MIDDLEWARE = `
middleware {
  if request.path == '/echo' && request.body != null && request.body.stop == true { fail 418 'stopped by middleware' }
  next()
}
`;

interface Served {
  app: App;
  server: RunningServer;
  log: CaptureLogger;
  port: number;
  base: string;
  dir: string;
}

const started: Served[] = [];

async function serve(limits: Partial<Limits> = {}, dev = false): Promise<Served> {
  const dir = mkdtempSync(join(tmpdir(), 'rvm-admission-'));
  writeFileSync(join(dir, 'routes.rvm'), ROUTES);
  writeFileSync(join(dir, '_middleware.rvm'), MIDDLEWARE);
  const log = captureLogger();
  const app = await loadApp(dir, { cache: false, logger: log, plugins: [WAITS], settings: { limits }, dev });
  const server = await startServer(app, { port: 0, host: '127.0.0.1' });
  const served = { app, server, log, port: server.port, base: server.url, dir };
  started.push(served);
  return served;
}

after(async () => {
  for (const release of waiting.splice(0)) release();
  for (const s of started) {
    await s.server.close();
    await s.app.close();
    rmSync(s.dir, { recursive: true, force: true });
  }
});

/** Sends `head` (and `body`, if any) on a fresh connection; resolves with the status line, headers and body text once the server ends or answers. */
function exchange(port: number, head: string, body: Buffer | string = '', from?: string): Promise<{ text: string; status: number; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress: from });
    let text = '';
    let closed = false;
    socket.setEncoding('utf8');
    socket.on('data', (d) => {
      text += d;
      const end = text.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(text);
      if (end !== -1 && length !== null && text.length >= end + 4 + Number(length[1])) finish();
    });
    socket.on('close', () => {
      closed = true;
      finish();
    });
    socket.on('error', () => finish());
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within 5 s; got: ${text.slice(0, 200)}`));
    }, 5000);
    let done = false;
    function finish(): void {
      if (done) return;
      done = true;
      clearTimeout(timer);
      // A connection the server closes ends right after the answer: give it a moment to say so.
      setTimeout(() => {
        resolve({ text, status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), closed: closed || socket.destroyed || socket.readyState !== 'open' });
        socket.destroy();
      }, 50);
    }
    socket.write(head);
    if (body.length > 0) socket.write(body);
  });
}

function json(text: string): Record<string, unknown> {
  return JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
}

/** Upload directories in `dir`. */
function uploadDirs(dir: string): string[] {
  return readdirSync(dir).filter((n) => n.startsWith('rvm-upload-'));
}

describe('the body is read only after the guards', () => {
  test('an anonymous upload to an auth route: 401 before a byte of the body is sent, nothing buffered or written, connection closed', async () => {
    // A private temp dir (os.tmpdir() reads TMPDIR per call), so other test processes' uploads do not count.
    const temp = mkdtempSync(join(tmpdir(), 'rvm-admission-tmp-'));
    const saved = process.env['TMPDIR'];
    process.env['TMPDIR'] = temp;
    try {
      const { port } = await serve();
      // Only the head: a server that read the body first would wait for the 10 MB that never come.
      const head = 'POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 10485760\r\n\r\n';
      const answer = await exchange(port, head);
      assert.equal(answer.status, 401);
      assert.equal(json(answer.text).code, 'unauthorized');
      assert.match(answer.text, /connection: close/i);
      assert.equal(answer.closed, true);
      assert.deepEqual(uploadDirs(temp), []);
    } finally {
      if (saved === undefined) delete process.env['TMPDIR'];
      else process.env['TMPDIR'] = saved;
      rmSync(temp, { recursive: true, force: true });
    }
  });

  test('an unread body: up to UNREAD_BODY_DRAIN_BYTES the connection is kept (node drains it), past it the connection closes', async () => {
    const { port } = await serve();
    const small = 'x'.repeat(UNREAD_BODY_DRAIN_BYTES);
    const kept = await exchange(port, `POST /nowhere HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: ${small.length}\r\n\r\n`, small);
    assert.equal(kept.status, 404);
    assert.doesNotMatch(kept.text, /connection: close/i);
    const big = await exchange(port, `POST /nowhere HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: ${UNREAD_BODY_DRAIN_BYTES + 1}\r\n\r\n`);
    assert.equal(big.status, 404);
    assert.match(big.text, /connection: close/i);
  });

  test('a route that never uses its body still reads it after its guards (a malformed body is refused)', async () => {
    const { base } = await serve();
    const res = await fetch(`${base}/ignore`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":' });
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as { code: string }).code, 'invalid_json');
  });
});

describe('where the body is read', () => {
  test('a middleware or guard_definition that uses the body reads it there; others see the same body afterwards', async () => {
    const { base } = await serve();
    const stopped = await fetch(`${base}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"stop":true}' });
    assert.equal(stopped.status, 418);
    const echoed = await fetch(`${base}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"stop":false}' });
    assert.deepEqual(await echoed.json(), { stop: false });
    assert.equal((await fetch(`${base}/late`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"ok":false}' })).status, 403);
    assert.deepEqual(await (await fetch(`${base}/late`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"ok":true}' })).json(), {
      ok: true,
    });
  });

  test('request.body through a copy of request before the route read it is the runtime error body_not_read, never a silent null', async () => {
    const { base, log } = await serve();
    // In the route's handler the body is read already: a copy of request sees it.
    assert.deepEqual(await (await fetch(`${base}/copy`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' })).json(), {
      a: 1,
    });
    const res = await fetch(`${base}/alias`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
    assert.equal(res.status, 500);
    assert.ok(
      log.errors.some((l) => l.includes('body_not_read')),
      log.errors.join('\n'),
    );
  });
});

describe('a large validated body', () => {
  test('past PARSE_IN_TURN_BYTES its parsed form is dropped after validation, and request.body parses it again when read', async () => {
    const { base, app } = await serve();
    const items = Array.from({ length: 20_000 }, (_, i) => ({ i }));
    const text = JSON.stringify({ name: 'ann', items });
    assert.ok(text.length > PARSE_IN_TURN_BYTES);
    const res = await fetch(`${base}/validated`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: text });
    assert.deepEqual(await res.json(), { name: 'ann', raw_items: 20_000 });
    assert.equal(app.admission.bodyMemory, 0);
  });

  test('its undeclared members are never built: validation reads the declared ones; malformed JSON anywhere is still 400 invalid_json', async () => {
    const { base } = await serve();
    const filler = Array.from({ length: 30_000 }, () => '{}').join(',');
    const post = (body: string) => fetch(`${base}/checked`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const ok = await post(`{"junk":[${filler}],"name":"ann","name":"bob"}`);
    assert.equal(ok.status, 200);
    assert.deepEqual(await ok.json(), { name: 'bob' });
    const missing = await post(`{"junk":[${filler}]}`);
    assert.equal(missing.status, 422);
    assert.deepEqual(
      ((await missing.json()) as { details: { field: string }[] }).details.map((d) => d.field),
      ['name'],
    );
    const array = await post(`[${filler}]`);
    assert.equal(array.status, 422);
    assert.equal(((await array.json()) as { details: { message: string }[] }).details[0]!.message, 'must be an object');
    const broken = await post(`{"junk":[${filler},],"name":"ann"}`);
    assert.equal(broken.status, 400);
    const body = (await broken.json()) as { code: string; error: string };
    assert.equal(body.code, 'invalid_json');
    assert.match(body.error, /^Malformed JSON body: /);
  });
});

describe('admission', () => {
  test('body memory: a JSON body charged exactly limits.maxBodyMemory passes, one byte more is 503 overloaded with Retry-After, and the charge is given back', async () => {
    const size = 1000;
    const { base, app } = await serve({ maxBodyMemory: size * JSON_BODY_MEMORY_FACTOR });
    const body = (n: number) => JSON.stringify({ s: 'x'.repeat(n - 8) });
    assert.equal(body(size).length, size);
    const ok = await fetch(`${base}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body(size) });
    assert.equal(ok.status, 200);
    const over = await fetch(`${base}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body(size + 1) });
    assert.equal(over.status, 503);
    assert.equal(over.headers.get('retry-after'), '1');
    assert.equal(((await over.json()) as { code: string }).code, 'overloaded');
    assert.equal(app.admission.bodyMemory, 0);
  });

  test('body memory: a chunked body is charged as it arrives and refused once past the budget', async () => {
    const { port, app } = await serve({ maxBodyMemory: 100 * JSON_BODY_MEMORY_FACTOR });
    const chunk = (s: string) => `${s.length.toString(16)}\r\n${s}\r\n`;
    const answer = await exchange(
      port,
      'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
      chunk(`"${'y'.repeat(200)}"`) + '0\r\n\r\n',
    );
    assert.equal(answer.status, 503);
    assert.equal(json(answer.text).code, 'overloaded');
    assert.equal(app.admission.bodyMemory, 0);
  });

  test('requests in flight: limits.maxInFlight waiting requests are served, one more is 503 overloaded at once', async () => {
    const { base, app } = await serve({ maxInFlight: 2 });
    const first = fetch(`${base}/wait`);
    const second = fetch(`${base}/wait`);
    while (waiting.length < 2) await new Promise((r) => setTimeout(r, 5));
    const third = await fetch(`${base}/hello`);
    assert.equal(third.status, 503);
    assert.equal(((await third.json()) as { code: string }).code, 'overloaded');
    for (const release of waiting.splice(0)) release();
    assert.equal((await first).status, 200);
    assert.equal((await second).status, 200);
    assert.equal(app.admission.inFlight, 0);
    assert.equal((await fetch(`${base}/hello`)).status, 200);
  });
});

describe('the CPU budget from rvm.config.json', () => {
  test('limits.cpuTimeMs bounds a runaway request: 500 cpu_budget_exceeded after about that much CPU', async () => {
    const { base } = await serve({ cpuTimeMs: 150 });
    const started = Date.now();
    const res = await fetch(`${base}/spin`);
    const elapsed = Date.now() - started;
    assert.equal(res.status, 500);
    assert.equal(((await res.json()) as { code: string }).code, 'cpu_budget_exceeded');
    assert.ok(elapsed >= 150 && elapsed < 900, `answered after ${elapsed} ms`);
  });
});

describe('the wall-clock deadline', () => {
  test('a request waiting past limits.wallTimeMs is answered 503 deadline_exceeded and logged; the server keeps serving', async () => {
    const { base, log, app } = await serve({ wallTimeMs: 300 });
    const started = Date.now();
    const res = await fetch(`${base}/forever`);
    const elapsed = Date.now() - started;
    assert.equal(res.status, 503);
    assert.equal(((await res.json()) as { code: string }).code, 'deadline_exceeded');
    assert.ok(elapsed >= 300 && elapsed < 2000, `answered after ${elapsed} ms`);
    assert.ok(
      log.errors.some((l) => /GET \/forever abandoned: no answer within 300 ms/.test(l)),
      log.errors.join('\n'),
    );
    assert.equal(app.watchdog.size, 0);
    assert.equal((await fetch(`${base}/hello`)).status, 200);
  });

  test('an abandoned request runs no further instruction when what it waited for settles later', async () => {
    const { base, log } = await serve({ wallTimeMs: 200 });
    const res = await fetch(`${base}/late-log`);
    assert.equal(res.status, 503);
    for (const release of waiting.splice(0)) release();
    await new Promise((r) => setTimeout(r, 100));
    assert.ok(!log.lines.some((l) => l.includes('ran after the deadline')), log.lines.join('\n'));
    // Answered and logged once, by the dispatcher: the abort reason adds no runtime-error line.
    assert.equal(log.errors.filter((l) => l.includes('late-log') || l.includes('deadline_exceeded')).length, 1, log.errors.join('\n'));
  });

  test('a request whose client closed its connection is abandoned and logged as 499', async () => {
    const { port, log, app } = await serve();
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.on('connect', () => resolve()));
    socket.write('GET /forever HTTP/1.1\r\nHost: x\r\n\r\n');
    while (app.watchdog.size === 0) await new Promise((r) => setTimeout(r, 5));
    socket.destroy();
    const deadline = Date.now() + 2000;
    while (app.watchdog.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.equal(app.watchdog.size, 0);
    assert.equal(app.admission.inFlight, 0);
    assert.ok(
      log.lines.some((l) => /GET \/forever 499/.test(l)),
      log.lines.join('\n'),
    );
  });
});

describe('multipart framing counts toward the body limit', () => {
  test('a preamble past the body limit plus MULTIPART_FRAMING_BYTES is refused with 413 before the rest is read', async () => {
    const { port } = await serve();
    const limit = 1024 * 1024 + MULTIPART_FRAMING_BYTES;
    const preamble = Buffer.alloc(limit + 1, 'p');
    const body = Buffer.concat([preamble, Buffer.from('\r\n--b\r\nContent-Disposition: form-data; name="name"\r\n\r\nann\r\n--b--\r\n')]);
    const answer = await exchange(
      port,
      `POST /form HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: ${body.length}\r\n\r\n`,
      body,
    );
    assert.equal(answer.status, 413);
    assert.equal(json(answer.text).code, 'payload_too_large');
  });

  test('a preamble within it is accepted', async () => {
    const { port } = await serve();
    const body = Buffer.concat([
      Buffer.alloc(MULTIPART_FRAMING_BYTES - 200, 'p'),
      Buffer.from('\r\n--b\r\nContent-Disposition: form-data; name="name"\r\n\r\nann\r\n--b--\r\n'),
    ]);
    const answer = await exchange(
      port,
      `POST /form HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: ${body.length}\r\n\r\n`,
      body,
    );
    assert.equal(answer.status, 201, answer.text);
  });
});

describe('per-client caps', () => {
  /** Opens a connection and resolves once it is either usable (true) or closed by the server (false). */
  function hold(port: number, from: string): Promise<{ socket: Socket; open: boolean }> {
    return new Promise((resolve) => {
      const socket = connect({ port, host: '127.0.0.1', localAddress: from });
      socket.on('error', () => {});
      socket.on('close', () => resolve({ socket, open: false }));
      // A connection the server accepted answers a request; one it cut is closed before that.
      socket.on('connect', () => {
        socket.write('GET /hello HTTP/1.1\r\nHost: x\r\n\r\n');
        socket.once('data', () => resolve({ socket, open: true }));
      });
    });
  }

  test('limits.maxConnectionsPerClient connections from one address are served, one more is closed; another address is still served', async () => {
    const { port, base } = await serve({ maxConnectionsPerClient: 5 });
    const held = await Promise.all(Array.from({ length: 5 }, () => hold(port, '127.0.0.1')));
    assert.deepEqual(
      held.map((h) => h.open),
      [true, true, true, true, true],
    );
    const sixth = await hold(port, '127.0.0.1');
    assert.equal(sixth.open, false);
    const other = await hold(port, '127.0.0.2');
    assert.equal(other.open, true);
    for (const h of [...held, other]) h.socket.destroy();
    // Closed connections give their slots back.
    await new Promise((r) => setTimeout(r, 50));
    assert.equal((await fetch(`${base}/hello`)).status, 200);
  });

  test('limits.maxConnections in all: past it new connections are closed', async () => {
    const { port } = await serve({ maxConnections: 3 });
    const held = await Promise.all([hold(port, '127.0.0.1'), hold(port, '127.0.0.2'), hold(port, '127.0.0.3')]);
    assert.deepEqual(
      held.map((h) => h.open),
      [true, true, true],
    );
    assert.equal((await hold(port, '127.0.0.4')).open, false);
    for (const h of held) h.socket.destroy();
  });

  test('limits.maxStreamsPerClient event streams per address; one more is 503 too_many_streams', async () => {
    // The reference (and its event stream) is served in dev mode.
    const { port } = await serve({ maxStreamsPerClient: 2 }, true);
    const open = (from: string) =>
      new Promise<{ socket: Socket; head: string }>((resolve) => {
        const socket = connect({ port, host: '127.0.0.1', localAddress: from });
        socket.setEncoding('utf8');
        socket.on('error', () => {});
        socket.once('data', (d: string) => resolve({ socket, head: d }));
        socket.write('GET /_app/rest-api/events HTTP/1.1\r\nHost: x\r\n\r\n');
      });
    const streams = [await open('127.0.0.1'), await open('127.0.0.1')];
    for (const s of streams) assert.match(s.head, /^HTTP\/1\.1 200/);
    const third = await open('127.0.0.1');
    assert.match(third.head, /^HTTP\/1\.1 503/);
    assert.match(third.head, /too_many_streams/);
    const elsewhere = await open('127.0.0.2');
    assert.match(elsewhere.head, /^HTTP\/1\.1 200/);
    for (const s of [...streams, third, elsewhere]) s.socket.destroy();
  });
});
