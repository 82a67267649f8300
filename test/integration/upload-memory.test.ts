/**
 * An upload over its limit is refused without the server buffering it: `rvm run --prod` serves
 * a route with `avatar: file @max_size('5MB')`, ten clients send 6 MB at once, and the server's
 * resident memory (from /proc) must grow by well under 6 MB per concurrent upload.
 */
import { startRvm } from './rvm-run.js';
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const MB = 1024 * 1024;
const CONCURRENT = 10;
const UPLOAD_BYTES = 6 * MB;
/**
 * Allowed RSS growth per concurrent upload. A server that buffered each upload up to its 5 MB
 * limit would grow by more than 5 MB each. What remains for a streaming server is V8's lag in
 * collecting socket read buffers: even a bare node:http server that reads 5 MB and discards it
 * shows about 3.1–3.4 MB per upload here (Node 20, default heap), so the bound sits above that
 * floor and below buffering.
 */
const MAX_GROWTH_PER_UPLOAD = 4 * MB;

const APP = `
route POST /upload {
  validate {
    avatar: file @max_size('5MB')
  }
  response.created({ ok: true })
}
`;

const BOUNDARY = 'rvmMemoryTestBoundary';
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0]);

/** Resident and peak resident memory of a process, in bytes. */
function memory(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

/**
 * Streams one multipart upload of `fileBytes` (a PNG header then filler) over a raw socket from
 * one reused chunk, and resolves with the status line once the server answers or closes.
 */
function upload(port: number, fileBytes: number): Promise<{ status: number; sent: number; response: string }> {
  return new Promise((resolve) => {
    const head = Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="avatar"; filename="big.png"\r\nContent-Type: image/png\r\n\r\n`);
    const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
    const socket = connect(port, '127.0.0.1');
    const chunk = Buffer.alloc(64 * 1024, 0x41);
    let sent = PNG.length;
    let response = '';
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      socket.destroy();
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1] ?? 0), sent, response });
    };
    socket.on('data', (d) => {
      response += d.toString('latin1');
      if (response.includes('\r\n\r\n') && response.includes('}')) finish();
    });
    socket.on('error', finish);
    socket.on('close', finish);
    const pump = () => {
      while (!done && sent < fileBytes) {
        const n = Math.min(chunk.length, fileBytes - sent);
        sent += n;
        if (!socket.write(chunk.subarray(0, n))) {
          socket.once('drain', pump);
          return;
        }
      }
      if (!done) socket.write(tail);
    };
    socket.write(
      `POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=${BOUNDARY}\r\n` +
        `Content-Length: ${head.length + fileBytes + tail.length}\r\n\r\n`,
    );
    socket.write(head);
    socket.write(PNG);
    pump();
  });
}

describe('upload memory', () => {
  let dir: string;
  let temp: string;
  let child: ChildProcess;
  let port: number;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rvm-upload-app-'));
    temp = mkdtempSync(join(tmpdir(), 'rvm-upload-tmp-'));
    writeFileSync(join(dir, 'upload.rvm'), APP);
    const running = await startRvm(dir, { ...process.env, TMPDIR: temp });
    child = running.child;
    port = running.port;
  });

  after(() => {
    child?.kill();
    rmSync(dir, { recursive: true, force: true });
    rmSync(temp, { recursive: true, force: true });
  });

  test('the route accepts a small upload (the limit comes from @max_size)', async () => {
    const small = await upload(port, 64 * 1024);
    assert.equal(small.status, 201, small.response);
  });

  test(`${CONCURRENT} concurrent 6 MB uploads to a 5 MB field: all 413, memory grows well under 6 MB each`, async () => {
    // Warm up the refusal path, then let the heap settle before the baseline.
    assert.equal((await upload(port, UPLOAD_BYTES)).status, 413);
    await new Promise((r) => setTimeout(r, 500));
    const baseline = memory(child.pid!);
    let peak = baseline.rss;
    const sampler = setInterval(() => (peak = Math.max(peak, memory(child.pid!).rss)), 5);
    const results = await Promise.all(Array.from({ length: CONCURRENT }, () => upload(port, UPLOAD_BYTES)));
    clearInterval(sampler);
    const after = memory(child.pid!);
    peak = Math.max(peak, after.rss, after.hwm > baseline.hwm ? after.hwm : 0);
    for (const r of results) {
      assert.equal(r.status, 413, r.response);
      assert.match(r.response, /"rule":"max_size"/);
      assert.match(r.response, /must be at most 5 MB/);
    }
    const perUpload = (peak - baseline.rss) / CONCURRENT;
    console.log(
      `upload memory: baseline RSS ${(baseline.rss / MB).toFixed(1)} MB, peak ${(peak / MB).toFixed(1)} MB, ` +
        `growth ${((peak - baseline.rss) / MB).toFixed(2)} MB for ${CONCURRENT} concurrent 6 MB uploads = ${(perUpload / MB).toFixed(2)} MB per upload`,
    );
    assert.ok(perUpload < MAX_GROWTH_PER_UPLOAD, `RSS grew ${(perUpload / MB).toFixed(2)} MB per upload`);
    // Every partial file is gone.
    for (let i = 0; i < 100 && readdirSync(temp).length > 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(readdirSync(temp), []);
  });
});
