/**
 * Built-in endpoints under /_app/: registered by plugins through the SDK, answered before user
 * middleware, with the app's introspection, and able to stream server-sent events.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:http';
import { loadApp } from '../../../tools/host.js';
import { inject } from '../../../vm/runtime/http/inject.js';
import { startServer } from '../../../vm/runtime/http/server.js';
import { captureLogger } from '../../../vm/runtime/log.js';
import { definePlugin, fromJson, type Value } from '../../../plugins/sdk.js';

/** Streams opened by test/ticks that have closed again. */
let closedTicks = 0;

const introspect = definePlugin({
  name: 'introspect',
  version: '1.0.0',
  setup(rvm) {
    // A streaming endpoint that, like many, does not look at the method.
    rvm.endpoint(
      'test/ticks',
      (ctx) => {
        const stream = ctx.stream(200, 'text/event-stream');
        const timer = setInterval(() => stream.write('data: tick\n\n'), 1000);
        timer.unref();
        stream.onClose(() => {
          clearInterval(timer);
          closedTicks++;
        });
      },
      { doc: 'Ticks.' },
    );
    rvm.endpoint('test/routes', (ctx, app) => ctx.respond(200, fromJson({ generation: app.generation, routes: app.routes(), errors: app.errors() })), {
      doc: 'The routes.',
    });
    rvm.endpoint(
      'test/events',
      (ctx, app) => {
        const stream = ctx.stream(200, 'text/event-stream');
        stream.write(`event: hello\ndata: ${app.generation}\n\n`);
        const off = app.onReload(() => stream.write(`event: reload\ndata: ${app.generation}\n\n`));
        stream.onClose(off);
      },
      { doc: 'Reload events.' },
    );
  },
});

function app(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'rvm-builtin-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

describe('built-in endpoints', () => {
  test('answer under /_app/, skip user middleware, and see the routes as the server runs them', async () => {
    const dir = app({
      '_middleware.rvm': `middleware { response { status: 401 json: { error: 'no', code: 'unauthorized' } } }`,
      'users.rvm': `/// Creates a user.
route POST /users {
  validate {
    /// Where we write.
    email: text @email
    role: text @one_of('user', 'admin') @default('user')
  }
  response.created(body)
}`,
    });
    const instance = await loadApp(dir, { cache: false, logger: captureLogger(), plugins: [introspect] });
    try {
      const res = await inject(instance, { url: '/_app/test/routes' });
      assert.equal(res.status, 200, 'the middleware answering 401 does not apply');
      const { routes } = res.json() as {
        routes: {
          path: string;
          doc: string;
          body: { name: string; schema: Record<string, Value>; decorators: { name: string; message: string | null }[] }[];
        }[];
      };
      assert.equal(routes[0]!.doc, 'Creates a user.');
      const [email, role] = routes[0]!.body;
      assert.deepEqual(email!.schema, { type: 'string', format: 'email', description: 'Where we write.' });
      assert.equal(email!.decorators[0]!.message, 'must be a valid email address');
      assert.deepEqual(role!.schema, { type: 'string', enum: ['user', 'admin'], default: 'user' });
      assert.equal((await inject(instance, { url: '/_app/nothing' })).status, 404);
      const wrongMethod = await inject(instance, { method: 'POST', url: '/_app/test/routes' });
      assert.equal(wrongMethod.status, 405);
      assert.equal(wrongMethod.headers.allow, 'GET');
      assert.equal((await inject(instance, { method: 'POST', url: '/users', body: {} })).status, 401, 'user routes still go through middleware');
    } finally {
      await instance.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('stream server-sent events, one per reload, until the client goes away', async () => {
    const dir = app({ 'a.rvm': `route GET /a { response.ok(1) }` });
    const instance = await loadApp(dir, { cache: false, dev: true, logger: captureLogger(), plugins: [introspect] });
    const server = await startServer(instance, { port: 0, host: '127.0.0.1' });
    try {
      const received: string[] = [];
      const done = new Promise<void>((resolve, reject) => {
        const req = request(`${server.url}/_app/test/events`, (res) => {
          assert.equal(res.headers['content-type'], 'text/event-stream');
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            received.push(chunk);
            if (received.join('').includes('event: hello')) {
              if (received.length === 1) void instance.reload();
            }
            if (received.join('').includes('event: reload')) {
              req.destroy();
              resolve();
            }
          });
        });
        req.on('error', (e) => (e.message.includes('aborted') || e.message.includes('socket hang up') ? resolve() : reject(e)));
        req.end();
      });
      await done;
      assert.match(received.join(''), /event: hello\ndata: 0\n\n/);
      assert.match(received.join(''), /event: reload\ndata: 1\n\n/);
    } finally {
      await server.close();
      await instance.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('closing the server ends open streams instead of waiting out the grace period', async () => {
    const dir = app({ 'a.rvm': `route GET /a { response.ok(1) }` });
    const instance = await loadApp(dir, { cache: false, logger: captureLogger(), plugins: [introspect] });
    const server = await startServer(instance, { port: 0, host: '127.0.0.1' });
    try {
      const ended = new Promise<void>((resolve, reject) => {
        const req = request(`${server.url}/_app/test/events`, (res) => {
          res.once('data', () => {
            const started = Date.now();
            res.once('end', () => {
              assert.ok(Date.now() - started < 1000);
              resolve();
            });
            void server.close();
          });
          res.resume();
        });
        req.on('error', reject);
        req.end();
      });
      await ended;
    } finally {
      await server.close();
      await instance.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('HEAD of a streaming endpoint answers its headers and ends the stream, so nothing it set up is left behind', async () => {
    const dir = app({ 'a.rvm': `route GET /a { response.ok(1) }` });
    const instance = await loadApp(dir, { cache: false, logger: captureLogger(), plugins: [introspect] });
    try {
      const before = closedTicks;
      for (let i = 0; i < 3; i++) {
        const res = await inject(instance, { method: 'HEAD', url: '/_app/test/ticks' });
        assert.equal(res.status, 200);
        assert.equal(res.headers['content-type'], 'text/event-stream');
        assert.equal(res.body, '');
      }
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(closedTicks - before, 3, 'every stream closed, its timer cleared');
    } finally {
      await instance.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
