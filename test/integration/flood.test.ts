/**
 * Issue 12's floods against `rvm run --prod` in a child process, as an attacker would send them:
 * 300 parallel 1 MiB JSON bodies of empty objects to an Argon2 registration route (before: the
 * heap ran out and the process died), and thousands of sockets from one address (before: every
 * one was accepted, until file descriptors ran out for everyone). The process must live, stay
 * under 1 GB resident, and keep answering a probe.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_MAX_CONNECTIONS_PER_CLIENT } from '../../vm/runtime/limits.js';
import { startRvm } from './rvm-run.js';

const MB = 1024 * 1024;
/** How long the sockets past the per-client limit may take to be closed by the server. */
const SETTLE_MS = 10_000;
/** The resident size the process must stay under. */
const MAX_RSS = 1024 * MB;

const APP = `
route GET /hello { response.ok({ hello: true }) }
/// The showcase's registration: validation, then an Argon2id hash behind a one-slot queue.
route POST /auth/register {
  validate {
    email: text @email
    password: text @minLength(8) @maxLength(128)
  }
  password_hash = argon2_hash(body.password)
  response.created({ email: lower(body.email) })
}
`;

/** Peak resident memory of a process, in bytes. */
function peakRss(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? NaN) * 1024;
}

/** One request on its own connection; resolves with the status (0 when the connection failed). */
function send(port: number, head: string, body: Buffer = Buffer.alloc(0), from = '127.0.0.1'): Promise<number> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress: from });
    let answer = '';
    const done = (status: number) => {
      socket.destroy();
      resolve(status);
    };
    socket.on('data', (d) => {
      answer += d.toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(answer);
      if (m) done(Number(m[1]));
    });
    socket.on('error', () => done(0));
    socket.on('close', () => done(Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0)));
    socket.setTimeout(60_000, () => done(0));
    socket.write(head);
    if (body.length > 0) socket.write(body);
  });
}

describe('floods against rvm run --prod', () => {
  let dir: string;
  let child: ChildProcess;
  let port: number;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rvm-flood-'));
    writeFileSync(join(dir, 'app.rvm'), APP);
    const running = await startRvm(dir);
    child = running.child;
    port = running.port;
  });

  after(() => {
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  test('300 parallel 1 MiB bodies of empty objects: refused past the body-memory budget, the process lives under 1 GB and keeps serving', async () => {
    // 1 MiB (minus the braces) of `{},` inside a registration body: about 349,000 objects.
    const filler = '{},'.repeat(Math.floor((MB - 100) / 3)).slice(0, -1);
    const body = Buffer.from(`{"email":"a@example.com","password":"password123","x":[${filler}]}`);
    assert.ok(body.length <= MB);
    const head = `POST /auth/register HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    // From two addresses: 300 connections from one would pass limits.maxConnectionsPerClient (256),
    // whose cut connections (status 0) are the next test's subject, not this one's.
    const statuses = await Promise.all(Array.from({ length: 300 }, (_, i) => send(port, head, body, i % 2 === 0 ? '127.0.0.1' : '127.0.0.3')));
    assert.equal(child.exitCode, null, 'the server process died');
    assert.ok(
      statuses.every((s) => s === 201 || s === 503),
      `unexpected statuses: ${[...new Set(statuses)].join(', ')}`,
    );
    assert.ok(statuses.includes(503), 'nothing was refused: the body-memory budget did not hold');
    assert.ok(statuses.includes(201), 'nothing was served');
    assert.equal(await send(port, 'GET /hello HTTP/1.1\r\nHost: x\r\n\r\n'), 200);
    const rss = peakRss(child.pid!);
    assert.ok(rss < MAX_RSS, `peak RSS ${Math.round(rss / MB)} MB`);
  });

  test('2,000 sockets from one address: at most maxConnectionsPerClient stay open, another address is still served', async () => {
    const sockets: Socket[] = [];
    let closedByServer = 0;
    await Promise.all(
      Array.from(
        { length: 2000 },
        () =>
          new Promise<void>((resolve) => {
            const socket = connect({ port, host: '127.0.0.1' });
            sockets.push(socket);
            socket.on('error', () => resolve());
            socket.on('close', () => {
              closedByServer++;
              resolve();
            });
            socket.on('connect', () => resolve());
          }),
      ),
    );
    // The server closes the sockets past the limit as it accepts them, which a loaded machine
    // spreads over a while: the count must come down to the limit, and a server that kept them
    // would keep it at 2,000 until the deadline.
    const stillOpen = () => sockets.filter((s) => !s.destroyed).length;
    for (const deadline = Date.now() + SETTLE_MS; stillOpen() > DEFAULT_MAX_CONNECTIONS_PER_CLIENT && Date.now() < deadline; )
      await new Promise((r) => setTimeout(r, 50));
    const open = stillOpen();
    assert.ok(open <= DEFAULT_MAX_CONNECTIONS_PER_CLIENT, `${open} sockets of one address stayed open`);
    assert.ok(closedByServer >= 2000 - DEFAULT_MAX_CONNECTIONS_PER_CLIENT);
    assert.equal(await send(port, 'GET /hello HTTP/1.1\r\nHost: x\r\n\r\n', undefined, '127.0.0.2'), 200);
    for (const s of sockets) s.destroy();
    assert.equal(child.exitCode, null);
  });
});
