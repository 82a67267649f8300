/**
 * Request data cannot steer a record query or write (spec/plugins/records.md, "Request data is validated before
 * it is written"), over a real socket on
 * the app's SQLite file and on a real PostgreSQL: an operator object the client sent (raw or
 * validated, at any depth, through a variable) is 400 `invalid_query` while one the route wrote
 * is honoured; a write given the client's data as it came is 400 at run time; a `@hidden` field
 * is compared only for equality or is_null and never orders; cursors are signed with the app
 * secret and carry no hidden value; answers name visible fields only, and in production none.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { loadApp } from '../../tools/host.js';
import { startServer, type RunningServer } from '../../vm/runtime/http/server.js';
import { captureLogger, type CaptureLogger } from '../../vm/runtime/log.js';
import type { App } from '../../vm/runtime/app.js';
import { usePostgres } from '../support/postgres.js';
import { makeTempFolder } from '../support/temp-app.js';

const APP = `type User {
  email: text @unique
  name: text
  token_hash?: text @hidden
}

type Key {
  label: text
  key_hash: text @hidden
}

route POST /keys {
  validate {
    label: text
  }
  response.created(Key.create(body))
}

route POST /seed {
  for n in ['ada', 'bob', 'cy'] {
    User.create({ email: n + '@example.com', name: n, token_hash: 'hash-of-' + n })
  }
  response.created({ ok: true })
}

route POST /login {
  u = User.find_by({ email: request.body.email })
  if u == null { fail 404 'nobody' }
  response.ok(u)
}

route POST /login-deep {
  cond = request.body.who.email
  response.ok(User.where({ email: cond }))
}

route POST /login-validated {
  validate {
    email: object
  }
  response.ok(User.where({ email: body.email }))
}

route POST /listed {
  validate {
    emails: list
  }
  response.ok(len(User.where({ email: { in: body.emails } })))
}

route GET /prefix {
  response.ok(len(User.where({ email: { starts_with: query.p } })))
}

route GET /by-query {
  response.ok(len(User.where({ email: query.email })))
}

route POST /create-raw {
  data = request.body
  response.created(User.create(data))
}

route POST /create-nested {
  response.created(User.create(request.body.user))
}

route GET /new-raw {
  q = request.query
  u = User.new(q)
  response.ok(u.name)
}

route PATCH /users/:id {
  changes = request.body
  response.ok(User.update(params.id, changes))
}

route POST /create-validated {
  validate {
    email: text
    name: text
  }
  response.created(User.create(body))
}

route GET /by-token {
  response.ok(len(User.where({ token_hash: query.t })))
}

route GET /hidden-op {
  cond = {}
  cond[query.op] = query.v
  response.ok(len(User.where({ token_hash: cond })))
}

route GET /sorted {
  response.ok(User.where({}, { order: query.key }))
}

route GET /filtered {
  filter = {}
  filter[query.field] = 'x'
  response.ok(User.where(filter))
}

route GET /page {
  response.ok(User.page({}, { order: query.order ?? 'name', limit: 1, after: query.after }))
}
`;

interface Served {
  app: App;
  logger: CaptureLogger;
  server: RunningServer;
  dir: string;
}

async function serve(options: { dev: boolean; env?: Record<string, string> }): Promise<Served> {
  const dir = makeTempFolder({ 'app.rvm': APP });
  const logger = captureLogger();
  const app = await loadApp(dir, { cache: false, dev: options.dev, logger, settings: { env: { APP_SECRET: 'request-data-test-secret', ...options.env } } });
  const server = await startServer(app, { port: 0, host: '127.0.0.1' });
  return { app, server, dir, logger };
}

async function stop(s: Served): Promise<void> {
  await s.server.close();
  await s.app.close();
  rmSync(s.dir, { recursive: true, force: true });
}

interface Answer {
  status: number;
  body: unknown;
}

async function send(s: Served, method: string, path: string, body?: unknown): Promise<Answer> {
  const init: RequestInit = { method };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers = { 'content-type': 'application/json' };
  }
  const res = await fetch(s.server.url + path, init);
  const text = await res.text();
  return { status: res.status, body: text === '' ? null : (JSON.parse(text) as unknown) };
}

function refused(answer: Answer, message?: RegExp): void {
  assert.equal(answer.status, 400, JSON.stringify(answer.body));
  const body = answer.body as { code: string; error: string };
  assert.equal(body.code, 'invalid_query');
  if (message) assert.match(body.error, message);
}

/** The attacks every store must hold against, on a seeded app. */
function requestDataCases(served: () => Served): void {
  test('an operator object in the body is refused; the plain value finds its user', async () => {
    const s = served();
    refused(await send(s, 'POST', '/login', { email: { ne: null } }), /condition on 'email' is an object from the request/);
    refused(await send(s, 'POST', '/login', { email: { in: ['ada@example.com', 'bob@example.com'] } }));
    refused(await send(s, 'POST', '/login', { email: { starts_with: '' } }));
    const found = await send(s, 'POST', '/login', { email: 'ada@example.com' });
    assert.equal(found.status, 200);
    assert.equal((found.body as { name: string }).name, 'ada');
  });

  test('at any depth, through a variable, and from the validated body too', async () => {
    const s = served();
    refused(await send(s, 'POST', '/login-deep', { who: { email: { ne: null } } }));
    assert.deepEqual((await send(s, 'POST', '/login-deep', { who: { email: 'bob@example.com' } })).body, [
      { ...((await send(s, 'POST', '/login', { email: 'bob@example.com' })).body as object) },
    ]);
    refused(await send(s, 'POST', '/login-validated', { email: { ne: null } }));
  });

  test("an operator the route wrote is honoured, its values from the request; a list for 'in' is a value", async () => {
    const s = served();
    assert.deepEqual(await send(s, 'GET', '/prefix?p=ad'), { status: 200, body: 1 });
    assert.deepEqual(await send(s, 'POST', '/listed', { emails: ['ada@example.com', 'cy@example.com'] }), { status: 200, body: 2 });
  });

  test('the query string builds no objects: email[ne]=x is a key of its own, a repeated key a list of text', async () => {
    const s = served();
    assert.deepEqual(await send(s, 'GET', '/by-query?email[ne]=x'), { status: 200, body: 0 });
    assert.deepEqual(await send(s, 'GET', '/by-query?email%5Bne%5D=x'), { status: 200, body: 0 });
    refused(await send(s, 'GET', '/by-query?email=ada@example.com&email=bob@example.com'), /compared with a list/);
  });

  test('a write given the request data as it came is refused at run time; the validated body is the way', async () => {
    const s = served();
    const extra = { email: 'eve@example.com', name: 'eve', token_hash: 'chosen-by-the-client' };
    refused(await send(s, 'POST', '/create-raw', extra), /User\.create was given the request's data as the client sent it \(validate the body and pass `body`/);
    refused(await send(s, 'POST', '/create-nested', { user: extra }));
    refused(await send(s, 'GET', '/new-raw?name=eve&token_hash=x'), /User\.new/);
    const created = await send(s, 'POST', '/create-validated', extra);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = (created.body as { id: string }).id;
    refused(await send(s, 'PATCH', `/users/${id}`, { token_hash: 'chosen-by-the-client' }), /User\.update/);
    assert.deepEqual(await send(s, 'GET', '/by-token?t=chosen-by-the-client'), { status: 200, body: 0 }, 'validation dropped the hidden field');
  });

  test('a failed write names visible fields only: a @hidden one the route left unset is logged, not answered', async () => {
    const s = served();
    assert.deepEqual(await send(s, 'POST', '/keys', { label: 'k' }), {
      status: 422,
      body: { error: 'Validation failed', code: 'validation_failed', details: [] },
    });
    assert.ok(
      s.logger.lines.some((l) => l.includes("Key: the @hidden field 'key_hash' is required (required)")),
      s.logger.lines.join('\n'),
    );
  });

  test('a @hidden field is found by equality, never by a range, a prefix or a list, and never orders', async () => {
    const s = served();
    assert.deepEqual(await send(s, 'GET', '/by-token?t=hash-of-bob'), { status: 200, body: 1 });
    for (const op of ['starts_with', 'gt', 'ne', 'contains', 'lt']) refused(await send(s, 'GET', `/hidden-op?op=${op}&v=hash-of-a`), /a @hidden field/);
    assert.deepEqual(await send(s, 'GET', '/hidden-op?op=eq&v=hash-of-cy'), { status: 200, body: 1 });
    for (const key of ['token_hash', '-token_hash']) refused(await send(s, 'GET', `/sorted?key=${key}`), /cannot order by 'token_hash'/);
  });

  test('a cursor is signed: it carries no hidden value, and a forged or altered one is refused', async () => {
    const s = served();
    const first = await send(s, 'GET', '/page');
    assert.equal(first.status, 200);
    const next = (first.body as { next: string }).next;
    const [payload, mac] = next.split('.') as [string, string];
    const decoded = Buffer.from(payload, 'base64url').toString('utf8');
    assert.doesNotMatch(decoded, /hash-of/);
    assert.deepEqual((JSON.parse(decoded) as { v: unknown[] }).v[0], 'ada');
    const second = await send(s, 'GET', `/page?after=${next}`);
    assert.equal((second.body as { items: { name: string }[] }).items[0]!.name, 'bob');
    // The client rewrites the values to jump or probe, keeping the signature; or signs nothing.
    const altered = Buffer.from(JSON.stringify({ o: 'name,id', v: ['bob', '00000000-0000-7000-8000-000000000000'] })).toString('base64url');
    refused(await send(s, 'GET', `/page?after=${altered}.${mac}`), /invalid cursor: not made by this app/);
    refused(await send(s, 'GET', `/page?after=${altered}`), /invalid cursor/);
    refused(await send(s, 'GET', `/page?order=token_hash`), /cannot order by 'token_hash'/);
  });
}

describe('request data and records, SQLite, in production', () => {
  let s: Served;
  before(async () => {
    s = await serve({ dev: false });
    const seeded = await send(s, 'POST', '/seed');
    assert.equal(seeded.status, 201, JSON.stringify(seeded.body));
  });
  after(() => stop(s));
  requestDataCases(() => s);

  test('a production answer names no field: no list, no nearest name', async () => {
    for (const path of ['/sorted?key=nmae', '/filtered?field=token_has', '/filtered?field=emial']) {
      const answer = await send(s, 'GET', path);
      refused(answer);
      const message = (answer.body as { error: string }).error;
      assert.doesNotMatch(message, /fields are|did you mean|token_hash|email'\?/, message);
    }
  });
});

describe('request data and records, SQLite, in dev', () => {
  let s: Served;
  before(async () => {
    s = await serve({ dev: true });
    const seeded = await send(s, 'POST', '/seed');
    assert.equal(seeded.status, 201, JSON.stringify(seeded.body));
  });
  after(() => stop(s));

  test('a dev answer suggests visible fields only', async () => {
    const near = await send(s, 'GET', '/filtered?field=token_has');
    refused(near, /fields are id, email, name, created_at, updated_at/);
    assert.doesNotMatch((near.body as { error: string }).error, /token_hash/);
    refused(await send(s, 'GET', '/sorted?key=nmae'), /did you mean 'name'\?/);
  });
});

describe('request data and records, PostgreSQL', () => {
  const postgres = usePostgres();
  let s: Served;
  before(async () => {
    s = await serve({ dev: false, env: { DATABASE_URL: postgres().url } });
    const seeded = await send(s, 'POST', '/seed');
    assert.equal(seeded.status, 201, JSON.stringify(seeded.body));
  });
  after(() => stop(s));
  requestDataCases(() => s);
});
