/**
 * The records language on a real PostgreSQL (test/support/postgres.ts): an app chosen onto it by
 * DATABASE_URL, each test on a database of its own, through the main paths: create, find,
 * where, page with a cursor, update, delete, a transaction rolled back by `fail`, a `@unique`
 * conflict, schema at start (a withheld change stops the start), and no connection left open.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadApp } from '../../tools/host.js';
import { inject } from '../../vm/runtime/http/inject.js';
import { captureLogger } from '../../vm/runtime/log.js';
import { DiagnosticError } from '../../vm/diagnostics.js';
import { openStoreCount } from '../../stdlib/records/database.js';
import { MAX_INDEXED_TEXT_BYTES } from '../../stdlib/records/columns.js';
import { usePostgres } from '../support/postgres.js';
import { tempApp } from '../support/temp-app.js';

const server = usePostgres();
let databases = 0;

/** A new empty database on the test server; its URL. */
async function freshDatabase(): Promise<string> {
  return server().createDatabase(`app_${++databases}`);
}

const APP = `type Account {
  name: text @unique
  balance: int @min(0)
  tier?: text @default('basic')
}

route POST /accounts {
  validate {
    name: text
    balance: int
  }
  response.created(Account.create(body))
}
route GET /accounts/:id {
  a = Account.find(params.id)
  if a == null { fail 404 'no such account' }
  response.ok(a)
}
route GET /rich {
  response.ok(Account.where({ balance: { gte: 100 } }, { order: '-balance' }))
}
route GET /pages {
  pages = []
  after = null
  while true {
    p = Account.page({}, { order: 'name', limit: 2, after: after })
    names = []
    for a in p.items { names = names + [a.name] }
    pages = pages + [names]
    if p.next == null { break }
    after = p.next
  }
  response.ok(pages)
}
route PATCH /accounts/:id {
  validate {
    balance?: int
  }
  a = Account.update(params.id, body)
  if a == null { fail 404 'no such account' }
  response.ok(a)
}
route DELETE /accounts/:id {
  response.ok(Account.delete(params.id))
}
route POST /move {
  from = Account.find_by({ name: body.from })
  to = Account.find_by({ name: body.to })
  transaction {
    from.balance = from.balance - body.amount
    to.balance = to.balance + body.amount
    save to
    if from.balance < 0 { fail 409 'insufficient funds' }
    save from
  }
  response.ok({ from: from.balance, to: to.balance })
}
route GET /count {
  response.ok(Account.count())
}
`;

test('create, find, where, page, update, delete, a rolled-back transaction and a conflict, on PostgreSQL', async (t) => {
  const url = await freshDatabase();
  const dir = tempApp(t, { 'app.rvm': APP });
  const logger = captureLogger();
  const app = await loadApp(dir, { cache: false, logger, settings: { env: { DATABASE_URL: url } } });
  try {
    assert.deepEqual(app.announcements, [{ label: 'Database', text: `PostgreSQL 127.0.0.1:${server().port}${new URL(url).pathname}, pool 10` }]);
    const ids: Record<string, string> = {};
    for (const [name, balance] of [
      ['ann', 50],
      ['bob', 150],
      ['cy', 300],
      ['dee', 100],
      ['eve', 0],
    ] as const) {
      const res = await inject(app, { method: 'POST', url: '/accounts', body: { name, balance } });
      assert.equal(res.status, 201, res.body);
      assert.equal(res.json().tier, 'basic');
      ids[name] = res.json().id;
    }
    const found = await inject(app, { url: `/accounts/${ids.bob}` });
    assert.equal(found.status, 200);
    assert.equal(found.json().balance, 150);
    assert.equal((await inject(app, { url: '/accounts/01a2138b-6e37-72cd-a27e-3352189097b9' })).status, 404);
    assert.equal((await inject(app, { url: '/accounts/not-a-uuid' })).status, 404);

    assert.deepEqual(
      (await inject(app, { url: '/rich' })).json().map((a: { name: string }) => a.name),
      ['cy', 'bob', 'dee'],
    );
    assert.deepEqual((await inject(app, { url: '/pages' })).json(), [['ann', 'bob'], ['cy', 'dee'], ['eve']]);

    const patched = await inject(app, { method: 'PATCH', url: `/accounts/${ids.eve}`, body: { balance: 7 } });
    assert.equal(patched.status, 200);
    assert.equal(patched.json().balance, 7);
    assert.ok(patched.json().updated_at >= patched.json().created_at);
    const refused = await inject(app, { method: 'PATCH', url: `/accounts/${ids.eve}`, body: { balance: -1 } });
    assert.equal(refused.status, 422);
    assert.equal(refused.json().code, 'validation_failed');

    const conflict = await inject(app, { method: 'POST', url: '/accounts', body: { name: 'ann', balance: 1 } });
    assert.equal(conflict.status, 409);
    assert.equal(conflict.json().code, 'conflict');

    const moved = await inject(app, { method: 'POST', url: '/move', body: { from: 'ann', to: 'bob', amount: 20 } });
    assert.deepEqual(moved.json(), { from: 30, to: 170 });
    const overdrawn = await inject(app, { method: 'POST', url: '/move', body: { from: 'ann', to: 'bob', amount: 1000 } });
    assert.equal(overdrawn.status, 409);
    assert.equal((await inject(app, { url: `/accounts/${ids.bob}` })).json().balance, 170, 'the save of `to` was rolled back');

    assert.equal((await inject(app, { method: 'DELETE', url: `/accounts/${ids.dee}` })).json(), true);
    assert.equal((await inject(app, { method: 'DELETE', url: `/accounts/${ids.dee}` })).json(), false);
    assert.equal((await inject(app, { url: '/count' })).json(), 4);
  } finally {
    await app.close();
  }
  assert.equal(openStoreCount(), 0, 'the pool is closed with the app');
});

test('on PostgreSQL too, a withheld change stops the start at the type, and rvm keeps the rows', async (t) => {
  const url = await freshDatabase();
  const dir = tempApp(t, { 'app.rvm': APP });
  const settings = { env: { DATABASE_URL: url } };
  const app = await loadApp(dir, { cache: false, logger: captureLogger(), settings });
  try {
    assert.equal((await inject(app, { method: 'POST', url: '/accounts', body: { name: 'ann', balance: 5 } })).status, 201);
  } finally {
    await app.close();
  }
  writeFileSync(join(dir, 'app.rvm'), APP.replace('balance: int @min(0)', 'balance: number @min(0)'));
  await assert.rejects(loadApp(dir, { cache: false, logger: captureLogger(), settings }), (e: unknown) => {
    assert.ok(e instanceof DiagnosticError);
    assert.deepEqual(
      e.diagnostics.map((d) => [d.code, d.file, d.line, d.col]),
      [['E_SCHEMA_WITHHELD', 'app.rvm', 1, 1]],
    );
    assert.match(e.diagnostics[0]!.message, /field 'balance' changed from int to number/);
    return true;
  });
  assert.equal(openStoreCount(), 0);
  writeFileSync(join(dir, 'app.rvm'), APP);
  const again = await loadApp(dir, { cache: false, logger: captureLogger(), settings });
  try {
    assert.equal((await inject(again, { url: '/count' })).json(), 1);
  } finally {
    await again.close();
  }
});

test('text on PostgreSQL: stored exactly as written; NUL, a lone surrogate and an indexed text over MAX_INDEXED_TEXT_BYTES answer 422, never 500', async (t) => {
  const url = await freshDatabase();
  const dir = tempApp(t, { 'app.rvm': APP });
  const app = await loadApp(dir, { cache: false, logger: captureLogger(), settings: { env: { DATABASE_URL: url } } });
  try {
    const exact = 'a😀\u2028é\uffff\t"\\';
    const created = await inject(app, { method: 'POST', url: '/accounts', body: { name: exact, balance: 1 } });
    assert.equal(created.status, 201, created.body);
    assert.equal((await inject(app, { url: `/accounts/${created.json().id}` })).json().name, exact);
    const refused = async (body: string, field: string, rule: string) => {
      const res = await inject(app, { method: 'POST', url: '/accounts', body, headers: { 'content-type': 'application/json' } });
      assert.equal(res.status, 422, res.body);
      assert.deepEqual([res.json().code, res.json().details], ['validation_failed', [{ field, rule, message: res.json().details[0].message }]]);
    };
    await refused(JSON.stringify({ name: 'a\u0000b', balance: 1 }), 'name', 'no_nul');
    await refused(JSON.stringify({ name: 'é'.repeat(MAX_INDEXED_TEXT_BYTES / 2) + 'x', balance: 1 }), 'name', 'max_indexed_bytes');
    // Built by the route from request text: the lone half of a pair.
    const lone = await inject(app, {
      method: 'POST',
      url: '/accounts',
      body: '{"name":"\\ud83d","balance":1}',
      headers: { 'content-type': 'application/json' },
    });
    assert.deepEqual([lone.status, lone.json().code], [400, 'invalid_text']);
    const atLimit = await inject(app, { method: 'POST', url: '/accounts', body: { name: 'é'.repeat(MAX_INDEXED_TEXT_BYTES / 2), balance: 1 } });
    assert.equal(atLimit.status, 201, atLimit.body);
  } finally {
    await app.close();
  }
});
