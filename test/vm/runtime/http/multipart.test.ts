import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from '../../../../vm/runtime/http/inject.js';
import {
  DEFAULT_MAX_FILE_BYTES,
  MAX_MULTIPART_FIELDS,
  MAX_MULTIPART_FIELD_BYTES,
  MAX_MULTIPART_FILES,
  MAX_MULTIPART_HEADER_BYTES,
  MAX_MULTIPART_HEADER_PAIRS,
  MAX_MULTIPART_PARTS,
  formatBytes,
} from '../../../../vm/runtime/http/multipart.js';
import { startServer, type RunningServer } from '../../../../vm/runtime/http/server.js';
import type { RouteMatch, RouteTarget, UploadSpec } from '../../../../vm/runtime/types.js';
import type { AppHandle } from '../../../../vm/runtime/app-handle.js';
import { UploadedFile } from '../../../../vm/runtime/http/upload.js';
import { fakeApp, type FakeApp, type FakeHandler } from '../fake-app.js';
import { SAMPLES } from '../file-samples.js';

// Temporary files of this process go to a folder of our own, so the test can see every one.
const TEMP = mkdtempSync(join(tmpdir(), 'rvm-multipart-test-'));
process.env.TMPDIR = TEMP;

const FILE_LIMIT = 1024;
const BODY_LIMIT = 4096;

/** Files the handlers saw, to check their paths afterwards. */
let seen: UploadedFile[] = [];

function files(value: unknown): UploadedFile[] {
  if (value instanceof UploadedFile) return [value];
  if (Array.isArray(value)) return value.flatMap(files);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(files);
  return [];
}

const echo: FakeHandler = (ctx) => {
  const body = ctx.request.body as Record<string, unknown>;
  seen = files(body);
  for (const f of seen) {
    const info = statSync(f.path!);
    assert.equal(info.size, f.size, 'the file on disk holds every byte');
    assert.equal(info.mode & 0o777, 0o600);
  }
  ctx.respond(200, { kind: ctx.bodyKind, body: body as never, paths: seen.map((f) => f.path) as never });
};

const UPLOADS: Record<string, UploadSpec> = {
  '/upload': { files: { avatar: FILE_LIMIT, docs: FILE_LIMIT * 4 } },
  '/boom': { files: { avatar: FILE_LIMIT } },
};

/** The fake app, with each route's upload spec added to its target as the linker does. */
function uploadApp(): AppHandle {
  const base = fakeApp(
    [
      ['POST', '/upload', echo],
      ['POST', '/plain', echo],
      [
        'POST',
        '/boom',
        (ctx) => {
          seen = files(ctx.request.body);
          throw new Error('handler failed');
        },
      ],
      ['GET', '/hello', (ctx) => void ctx.respond(200, { hello: true })],
    ],
    { settings: { bodyLimit: BODY_LIMIT } },
  );
  const router = {
    add: base.router.add.bind(base.router),
    match(method: string, path: string): RouteMatch<RouteTarget> {
      const m = base.router.match(method, path);
      if (m.kind !== 'found' || UPLOADS[path] === undefined) return m;
      return { ...m, value: { ...m.value, uploads: UPLOADS[path] } };
    },
  };
  return Object.assign(Object.create(base) as AppHandle, { router });
}

const app = uploadApp();
const log = (Object.getPrototypeOf(app) as FakeApp).log;

interface Part {
  name?: string;
  filename?: string;
  type?: string;
  data?: string | Uint8Array;
  /** Raw header lines added before the Content-Disposition. */
  before?: string[];
}

const BOUNDARY = '----rvmTestBoundary7MA4YWxk';
const CONTENT_TYPE = `multipart/form-data; boundary=${BOUNDARY}`;

function encode(parts: Part[], boundary = BOUNDARY): Buffer {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    let head = `--${boundary}\r\n`;
    for (const line of p.before ?? []) head += `${line}\r\n`;
    if (p.name !== undefined) head += `Content-Disposition: form-data; name="${p.name}"${p.filename !== undefined ? `; filename="${p.filename}"` : ''}\r\n`;
    if (p.type !== undefined) head += `Content-Type: ${p.type}\r\n`;
    chunks.push(Buffer.from(`${head}\r\n`), Buffer.from(p.data ?? ''), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

function post(url: string, body: Buffer, contentType = CONTENT_TYPE) {
  return inject(app, { method: 'POST', url, headers: { 'content-type': contentType }, body });
}

/** Waits (briefly) for the background cleanup; true when every path is gone. */
async function removed(paths: Array<string | null>): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    if (paths.every((p) => p !== null && !existsSync(p))) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return false;
}

/** Waits until no upload directory is left in our temp folder. */
async function tempEmpty(): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    if (readdirSync(TEMP).length === 0) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return false;
}

after(() => rmSync(TEMP, { recursive: true, force: true }));

describe('multipart through inject', () => {
  test('text fields, repeated names as lists; kind multipart', async () => {
    const form = new FormData();
    form.append('email', 'a@b.co');
    form.append('tag', 'x');
    form.append('tag', 'y');
    const res = await inject(app, { method: 'POST', url: '/plain', body: form });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json(), { kind: 'multipart', body: { email: 'a@b.co', tag: ['x', 'y'] }, paths: [] });
  });

  test('a declared file is streamed to disk, sniffed, sized, and removed after the request', async () => {
    const form = new FormData();
    form.append('avatar', new Blob([SAMPLES.png]), 'me.pdf');
    form.append('note', 'hi');
    const res = await inject(app, { method: 'POST', url: '/upload', body: form });
    assert.equal(res.status, 200);
    const out = res.json();
    assert.deepEqual(out.body, { avatar: { name: 'me.pdf', type: 'image/png', size: SAMPLES.png.length }, note: 'hi' });
    assert.equal(seen.length, 1);
    const path = seen[0].path!;
    assert.ok(path.startsWith(TEMP), 'in the private temp directory');
    assert.ok(path.startsWith(join(TEMP, `rvm-upload-${process.pid}-`)), "in a directory naming its process, so a later start can sweep a killed one's");
    assert.ok(!path.includes('me.pdf'), "never the client's name in the path");
    assert.deepEqual(Buffer.from(seen[0].head), Buffer.from(SAMPLES.png));
    assert.ok(await removed([path]), 'temp file removed');
    assert.ok(await tempEmpty(), 'temp directory removed');
  });

  test('a repeated file field is a list of files, in the order sent, among the text fields', async () => {
    const form = new FormData();
    form.append('docs', new Blob([SAMPLES.pdf, Buffer.alloc(3000, 32)]), 'a.pdf');
    form.append('title', 't');
    form.append('docs', new Blob([SAMPLES.text]), 'b.txt');
    const res = await inject(app, { method: 'POST', url: '/upload', body: form });
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.json().body), ['docs', 'title']);
    assert.deepEqual(
      res.json().body.docs.map((d: { type: string }) => d.type),
      ['application/pdf', 'text/plain'],
    );
    assert.ok(await removed(seen.map((f) => f.path)));
  });

  test('undeclared file parts are never written to disk', async () => {
    assert.ok(await tempEmpty(), 'earlier uploads are cleaned up');
    const form = new FormData();
    form.append('avatar', new Blob([SAMPLES.png]), 'x.png');
    form.append('other', new Blob([SAMPLES.pdf]), 'y.pdf');
    const res = await inject(app, { method: 'POST', url: '/plain', body: form });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json().body, {});
    assert.deepEqual(readdirSync(TEMP), [], 'no temp directory was even created');
    const declared = await post('/upload', encode([{ name: 'other', filename: 'y.pdf', data: SAMPLES.pdf }]));
    assert.deepEqual(declared.json().body, {});
    assert.deepEqual(readdirSync(TEMP), []);
  });

  test('a file name with folders is reduced to its base name, and never reaches the path', async () => {
    const res = await post('/upload', encode([{ name: 'avatar', filename: '../../etc/passwd', data: 'root' }]));
    assert.equal(res.json().body.avatar.name, 'passwd');
    assert.ok(!seen[0].path!.includes('passwd'));
  });

  test('an empty part with an empty file name (an unselected file input) is no file', async () => {
    const res = await post(
      '/upload',
      encode([
        { name: 'avatar', filename: '', type: 'application/octet-stream' },
        { name: 'a', data: '1' },
      ]),
    );
    assert.equal(res.status, 200);
    assert.deepEqual(res.json().body, { a: '1' });
  });

  test('an empty file with a name is a file of size 0', async () => {
    const res = await post('/upload', encode([{ name: 'avatar', filename: 'empty.txt' }]));
    assert.deepEqual(res.json().body.avatar, { name: 'empty.txt', type: 'application/octet-stream', size: 0 });
  });

  test('__proto__ fields stay own data', async () => {
    const res = await post(
      '/plain',
      encode([
        { name: '__proto__', data: 'x' },
        { name: 'constructor', data: 'y' },
      ]),
    );
    assert.equal(res.status, 200);
    assert.deepEqual(res.json().body, JSON.parse('{"__proto__":"x","constructor":"y"}'));
    assert.equal(({} as Record<string, unknown>).x, undefined);
  });

  test('a disk that cannot take the upload → 500 internal_error, logged with its cause', async () => {
    process.env.TMPDIR = join(TEMP, 'missing', 'folder');
    try {
      const before = log.errors.length;
      const res = await post('/upload', encode([{ name: 'avatar', filename: 'a.png', data: SAMPLES.png }]));
      assert.equal(res.status, 500);
      assert.deepEqual(res.json(), { error: 'Could not store the upload', code: 'internal_error' });
      assert.equal(log.errors.length, before + 1);
      assert.match(log.errors[before], /ENOENT/);
    } finally {
      process.env.TMPDIR = TEMP;
    }
  });

  test('the handler failing (500) still removes the files', async () => {
    const res = await post('/boom', encode([{ name: 'avatar', filename: 'a.png', data: SAMPLES.png }]));
    assert.equal(res.status, 500);
    assert.equal(seen.length, 1);
    assert.ok(await removed([seen[0].path]));
  });
});

describe('multipart limits', () => {
  test('a file exactly at its limit passes; one byte more → 413 max_size, closed, nothing left', async () => {
    const at = await post('/upload', encode([{ name: 'avatar', filename: 'a.bin', data: Buffer.alloc(FILE_LIMIT, 1) }]));
    assert.equal(at.status, 200);
    assert.equal(at.json().body.avatar.size, FILE_LIMIT);
    const over = await post('/upload', encode([{ name: 'avatar', filename: 'a.bin', data: Buffer.alloc(FILE_LIMIT + 1, 1) }]));
    assert.equal(over.status, 413);
    assert.equal(over.headers.connection, 'close');
    assert.deepEqual(over.json(), {
      error: over.json().error,
      code: 'payload_too_large',
      details: [{ field: 'avatar', rule: 'max_size', message: 'must be at most 1 KB' }],
    });
    assert.ok(await tempEmpty(), 'the partial file is deleted');
  });

  test('text fields: MAX_MULTIPART_FIELDS pass, one more → 413 max_fields', async () => {
    const fields = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `f${i}`, data: 'v' }));
    const at = await post('/plain', encode(fields(MAX_MULTIPART_FIELDS)));
    assert.equal(at.status, 200);
    assert.equal(Object.keys(at.json().body).length, MAX_MULTIPART_FIELDS);
    const over = await post('/plain', encode(fields(MAX_MULTIPART_FIELDS + 1)));
    assert.equal(over.status, 413);
    assert.equal(over.json().code, 'payload_too_large');
    assert.equal(over.json().details[0].rule, 'max_fields');
  });

  test('files: MAX_MULTIPART_FILES pass, one more → 413 max_files', async () => {
    const parts = (n: number) => Array.from({ length: n }, (_, i) => ({ name: 'docs', filename: `${i}.txt`, data: 'text' }));
    const at = await post('/upload', encode(parts(MAX_MULTIPART_FILES)));
    assert.equal(at.status, 200);
    assert.equal(at.json().body.docs.length, MAX_MULTIPART_FILES);
    const over = await post('/upload', encode(parts(MAX_MULTIPART_FILES + 1)));
    assert.equal(over.status, 413);
    assert.equal(over.json().details[0].rule, 'max_files');
    assert.ok(await tempEmpty());
  });

  test('parts: MAX_MULTIPART_PARTS pass, one more → 413 max_parts (nameless parts count too)', async () => {
    const junk = (n: number) => Array.from({ length: n }, () => ({ before: ['X-Junk: 1'], data: 'x' }));
    assert.equal((await post('/plain', encode(junk(MAX_MULTIPART_PARTS)))).status, 200);
    const over = await post('/plain', encode(junk(MAX_MULTIPART_PARTS + 1)));
    assert.equal(over.status, 413);
    assert.equal(over.json().details[0].rule, 'max_parts');
  });

  test('one text field: the field limit passes, one byte more → 413 max_field_size', async () => {
    const big = fakeApp([['POST', '/plain', echo]], { settings: { bodyLimit: 1024 * 1024 } });
    const send = (n: number) =>
      inject(big, { method: 'POST', url: '/plain', headers: { 'content-type': CONTENT_TYPE }, body: encode([{ name: 'bio', data: 'é'.repeat(n / 2) }]) });
    assert.equal((await send(MAX_MULTIPART_FIELD_BYTES)).status, 200);
    const over = await send(MAX_MULTIPART_FIELD_BYTES + 2);
    assert.equal(over.status, 413);
    assert.deepEqual(over.json().details, [{ field: 'bio', rule: 'max_field_size', message: 'must be at most 64 KB' }]);
  });

  test('a body limit smaller than the field limit bounds each field', async () => {
    assert.equal((await post('/plain', encode([{ name: 'bio', data: 'x'.repeat(BODY_LIMIT) }]))).status, 200);
    const over = await post('/plain', encode([{ name: 'bio', data: 'x'.repeat(BODY_LIMIT + 1) }]));
    assert.equal(over.status, 413);
    assert.equal(over.json().details[0].rule, 'max_field_size');
  });

  test('text fields and discarded files together: the body limit passes, one byte more → 413 max_body', async () => {
    const half = BODY_LIMIT / 2;
    assert.equal(
      (
        await post(
          '/plain',
          encode([
            { name: 'a', data: 'x'.repeat(half) },
            { name: 'b', data: 'x'.repeat(half) },
          ]),
        )
      ).status,
      200,
    );
    const over = await post(
      '/plain',
      encode([
        { name: 'a', data: 'x'.repeat(half) },
        { name: 'b', data: 'x'.repeat(half + 1) },
      ]),
    );
    assert.equal(over.status, 413);
    assert.equal(over.json().details[0].rule, 'max_body');
    const file = await post('/plain', encode([{ name: 'junk', filename: 'j.bin', data: Buffer.alloc(BODY_LIMIT + 1) }]));
    assert.equal(file.status, 413);
    assert.equal(file.json().details[0].rule, 'max_body');
    assert.deepEqual(readdirSync(TEMP), []);
  });

  test('header lines per part: a Content-Disposition within MAX_MULTIPART_HEADER_PAIRS counts, past it the part is nameless', async () => {
    const filler = (n: number) => Array.from({ length: n }, () => 'X: y');
    const at = await post('/plain', encode([{ name: 'a', data: '1', before: filler(MAX_MULTIPART_HEADER_PAIRS - 1) }]));
    assert.equal(at.status, 200);
    assert.deepEqual(at.json().body, { a: '1' });
    const over = await post('/plain', encode([{ name: 'a', data: '1', before: filler(MAX_MULTIPART_HEADER_PAIRS) }]));
    assert.equal(over.status, 200);
    assert.deepEqual(over.json().body, {});
  });

  test('a part header block just under MAX_MULTIPART_HEADER_BYTES passes; at it → 400', async () => {
    // busboy counts the block its own way (a few bytes either side), so this is tested near the
    // limit: the sent block, both header lines and the blank line, of the given length.
    const block = (length: number) => {
      const disposition = 'Content-Disposition: form-data; name="a"\r\n';
      const fixed = disposition.length + 'X: \r\n'.length + 2;
      return [{ before: [`X: ${'y'.repeat(length - fixed)}`], name: 'a', data: '1' }];
    };
    const under = await post('/plain', encode(block(MAX_MULTIPART_HEADER_BYTES - 8)));
    assert.equal(under.status, 200);
    assert.deepEqual(under.json().body, { a: '1' });
    const at = await post('/plain', encode(block(MAX_MULTIPART_HEADER_BYTES)));
    assert.equal(at.status, 400);
    assert.equal(at.json().code, 'bad_request');
  });

  test('the default file limit and the byte formatting', () => {
    assert.equal(DEFAULT_MAX_FILE_BYTES, 10 * 1024 * 1024);
    assert.equal(formatBytes(5 * 1024 * 1024), '5 MB');
    assert.equal(formatBytes(1.5 * 1024 * 1024), '1.5 MB');
    assert.equal(formatBytes(500 * 1024), '500 KB');
    assert.equal(formatBytes(300), '300 bytes');
  });
});

describe('malformed multipart', () => {
  test('a missing boundary → 400 bad_request', async () => {
    const res = await post('/plain', encode([{ name: 'a', data: '1' }]), 'multipart/form-data');
    assert.equal(res.status, 400);
    assert.equal(res.json().code, 'bad_request');
  });

  test('a body that never closes, garbage, or the wrong boundary → 400 bad_request', async () => {
    const whole = encode([{ name: 'avatar', filename: 'a.png', data: SAMPLES.png }]);
    for (const [url, body] of [
      ['/upload', whole.subarray(0, whole.length - 20)],
      ['/plain', Buffer.from('this is not multipart at all')],
      ['/plain', encode([{ name: 'a', data: '1' }], 'other-boundary')],
      ['/plain', Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="a"\r\nno blank line`)],
    ] as const) {
      const res = await post(url, body);
      assert.equal(res.status, 400, body.toString('latin1').slice(0, 40));
      assert.equal(res.json().code, 'bad_request');
      assert.equal(res.headers.connection, 'close', 'the unread rest cannot carry another request');
    }
    assert.ok(await tempEmpty(), 'the partial file of the cut body is deleted');
  });
});

/** Sends a multipart request over a raw socket in chunks until the server answers or closes. */
function upload(port: number, path: string, fileBytes: number): Promise<{ response: string; sent: number }> {
  return new Promise((resolve) => {
    const head = Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="avatar"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    );
    const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
    const length = head.length + fileBytes + tail.length;
    const socket = net.connect(port, '127.0.0.1');
    const chunk = Buffer.alloc(64 * 1024, 7);
    let sent = 0;
    let response = '';
    let stopped = false;
    const finish = () => {
      if (stopped) return;
      stopped = true;
      resolve({ response, sent });
    };
    socket.on('data', (d) => (response += d.toString('latin1')));
    socket.on('error', () => {
      stopped = true;
      socket.destroy();
      resolve({ response, sent });
    });
    socket.on('close', finish);
    const pump = () => {
      while (!stopped && sent < fileBytes) {
        const n = Math.min(chunk.length, fileBytes - sent);
        sent += n;
        if (!socket.write(chunk.subarray(0, n))) {
          socket.once('drain', pump);
          return;
        }
      }
      if (!stopped && sent >= fileBytes) socket.write(tail);
    };
    socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: ${CONTENT_TYPE}\r\nContent-Length: ${length}\r\n\r\n`);
    socket.write(head);
    pump();
  });
}

describe('multipart over a real server', () => {
  let running: RunningServer;
  before(async () => {
    running = await startServer(app, { port: 0, host: '127.0.0.1' });
  });
  after(() => running.close());

  test('a real upload with fetch and FormData', async () => {
    const form = new FormData();
    form.append('avatar', new Blob([SAMPLES.jpeg]), 'p.jpg');
    form.append('tag', 'a');
    form.append('tag', 'b');
    const res = await fetch(`${running.url}/upload`, { method: 'POST', body: form });
    assert.equal(res.status, 200);
    const out = (await res.json()) as { body: unknown; paths: string[] };
    assert.deepEqual(out.body, { avatar: { name: 'p.jpg', type: 'image/jpeg', size: SAMPLES.jpeg.length }, tag: ['a', 'b'] });
    assert.ok(await removed(out.paths));
  });

  test('an oversized upload is refused early: 413, connection closed, most of it never sent; the server keeps serving', async () => {
    const total = 64 * 1024 * 1024;
    const { response, sent } = await upload(running.port, '/upload', total);
    assert.match(response, /^HTTP\/1\.1 413 /);
    assert.match(response, /\r\nconnection: close\r\n/i);
    assert.match(response, /"rule":"max_size"/);
    // Socket buffers on both sides absorb a few MB; the rest was never accepted.
    assert.ok(sent < total / 4, `the client could send ${sent} of ${total} bytes`);
    assert.ok(await tempEmpty());
    const again = await fetch(`${running.url}/hello`);
    assert.equal(again.status, 200);
  });

  test('a client that disconnects mid-upload leaves no file behind, and the server keeps serving', async () => {
    const socket = net.connect(running.port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.write(`POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: ${CONTENT_TYPE}\r\nContent-Length: 100000\r\n\r\n`);
    socket.write(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="docs"; filename="d.txt"\r\n\r\n${'a'.repeat(500)}`);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(readdirSync(TEMP).length, 1, 'the upload was being written');
    socket.destroy();
    assert.ok(await tempEmpty());
    assert.equal((await fetch(`${running.url}/hello`)).status, 200);
  });
});
