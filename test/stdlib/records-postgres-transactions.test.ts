/**
 * `transaction { }` blocks on a real PostgreSQL serialise as spec/plugins/records.md promises
 * ("Transactions"), seen through requests to an app: concurrent withdrawals never pay out
 * more than the balance, concurrent increments lose none, transfers in opposite orders all
 * complete (no deadlock, no 503) and keep the sum; and, at the store level, a write outside any
 * transaction to a row a transaction has read waits for it (no lost update).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { loadApp } from '../../tools/host.js';
import { inject } from '../../vm/runtime/http/inject.js';
import { captureLogger } from '../../vm/runtime/log.js';
import type { App } from '../../vm/runtime/app.js';
import { PostgresStore } from '../../stdlib/records/postgres.js';
import type { ChargeMemory, TableSpec } from '../../stdlib/records/store.js';
import { usePostgres } from '../support/postgres.js';

const server = usePostgres();

/** The app's Account type as the store sees it (for the store-level case). */
const ACCOUNTS: TableSpec = {
  name: 'accounts',
  file: 'app/accounts.rvm',
  line: 1,
  col: 1,
  columns: [
    { name: 'name', type: 'text', optional: false, unique: false, index: false },
    { name: 'balance', type: 'int', optional: false, unique: false, index: false },
  ],
};
let databases = 0;

/** A store on a schema of its own, made for the test, with a pool of `max` connections. */
async function storeInSchema(schema: string, max: number): Promise<PostgresStore> {
  const admin = new pg.Client({ connectionString: server().url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  return new PostgresStore({ connectionString: server().url, schema, max });
}

const APP = `type Account {
  name: text @unique
  balance: int
}

route POST /accounts {
  validate {
    name: text
    balance: int
  }
  response.created(Account.create(body))
}
route GET /accounts/:id {
  response.ok(Account.find(params.id))
}
route POST /withdraw/:id {
  balance = null
  transaction {
    a = Account.find(params.id)
    a.balance = a.balance - 10
    if a.balance < 0 { fail 409 'insufficient funds' }
    save a
    balance = a.balance
  }
  response.ok(balance)
}
route POST /increment/:id {
  transaction {
    a = Account.find(params.id)
    a.balance = a.balance + 1
    save a
  }
  response.ok(true)
}
route POST /transfer {
  transaction {
    from = Account.find(body.from)
    to = Account.find(body.to)
    from.balance = from.balance - body.amount
    to.balance = to.balance + body.amount
    save from
    save to
  }
  response.ok(true)
}
`;

/** An app on a database of its own, closed and removed after the test. */
async function serve(t: { after(fn: () => unknown): void }): Promise<App> {
  const url = await server().createDatabase(`tx_${++databases}`);
  const dir = mkdtempSync(join(tmpdir(), 'rvm-records-tx-'));
  writeFileSync(join(dir, 'app.rvm'), APP);
  const app = await loadApp(dir, { cache: false, logger: captureLogger(), settings: { env: { DATABASE_URL: url } } });
  t.after(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return app;
}

async function account(app: App, name: string, balance: number): Promise<string> {
  const res = await inject(app, { method: 'POST', url: '/accounts', body: { name, balance } });
  assert.equal(res.status, 201, res.body);
  return res.json().id;
}

async function balanceOf(app: App, id: string): Promise<number> {
  return (await inject(app, { url: `/accounts/${id}` })).json().balance;
}

/** How many answers had each status, as `{ "200": n, … }`. */
function statuses(answers: { status: number }[]): Record<string, number> {
  const count: Record<string, number> = {};
  for (const a of answers) count[a.status] = (count[a.status] ?? 0) + 1;
  return count;
}

test('40 concurrent withdrawals of 10 from a balance of 100: exactly 10 pay out, 30 answer 409, the balance ends at 0', async (t) => {
  const app = await serve(t);
  const id = await account(app, 'ann', 100);
  const answers = await Promise.all(Array.from({ length: 40 }, () => inject(app, { method: 'POST', url: `/withdraw/${id}` })));
  assert.deepEqual(
    statuses(answers),
    { 200: 10, 409: 30 },
    answers
      .filter((a) => a.status !== 200 && a.status !== 409)
      .map((a) => a.body)
      .join('\n'),
  );
  assert.deepEqual(
    answers
      .filter((a) => a.status === 200)
      .map((a) => a.json())
      .sort((a, b) => a - b),
    [0, 10, 20, 30, 40, 50, 60, 70, 80, 90],
  );
  assert.equal(await balanceOf(app, id), 0);
});

test('300 concurrent increments in transactions end at exactly 300', async (t) => {
  const app = await serve(t);
  const id = await account(app, 'counter', 0);
  const answers = await Promise.all(Array.from({ length: 300 }, () => inject(app, { method: 'POST', url: `/increment/${id}` })));
  assert.deepEqual(
    statuses(answers),
    { 200: 300 },
    answers
      .filter((a) => a.status !== 200)
      .map((a) => a.body)
      .slice(0, 3)
      .join('\n'),
  );
  assert.equal(await balanceOf(app, id), 300);
});

test('50 transfers A→B and 50 B→A at once all answer 200 (no deadlock, no 503) and keep the sum', async (t) => {
  const app = await serve(t);
  const a = await account(app, 'a', 1000);
  const b = await account(app, 'b', 1000);
  const answers = await Promise.all(
    Array.from({ length: 100 }, (_, i) =>
      inject(app, { method: 'POST', url: '/transfer', body: i % 2 === 0 ? { from: a, to: b, amount: 3 } : { from: b, to: a, amount: 5 } }),
    ),
  );
  assert.deepEqual(
    statuses(answers),
    { 200: 100 },
    answers
      .filter((r) => r.status !== 200)
      .map((r) => r.body)
      .slice(0, 3)
      .join('\n'),
  );
  assert.deepEqual([await balanceOf(app, a), await balanceOf(app, b)], [1000 - 50 * 3 + 50 * 5, 1000 + 50 * 3 - 50 * 5]);
});

test('a write outside any transaction to a row a transaction has read waits for its end: neither change is lost', async () => {
  const store = await storeInSchema('lost_update', 2);
  try {
    await store.sync([ACCOUNTS], { allowDestructive: false });
    const id = (await store.insert('accounts', { name: 'shared', balance: 100 })).id as string;
    const tx = await store.begin();
    const read = (await tx.find('accounts', id))!;
    let outsideDone = false;
    const outside = Promise.resolve(store.update('accounts', id, { name: 'renamed' })).then((row) => {
      outsideDone = true;
      return row;
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(outsideDone, false, 'the outside write waits while the transaction is open');
    // The transaction writes back the whole row as it read it (what `save` does), its balance changed.
    await tx.update('accounts', id, { name: read.name, balance: (read.balance as number) + 5 });
    await tx.commit();
    const after = (await outside)!;
    assert.deepEqual([after.name, after.balance], ['renamed', 105]);
  } finally {
    await store.close();
  }
});

test("a transaction's reads charged to the result budget leave no timer behind (the client's read timeout is cleared with the answer)", async () => {
  const store = await storeInSchema('charged_reads', 1);
  const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
  const readInTransaction = async (charge?: ChargeMemory) => {
    const tx = await store.begin();
    const rows = await tx.select('accounts', { filter: {}, order: [], limit: 10, offset: 0, ...(charge ? { charge } : {}) });
    await tx.commit();
    return rows;
  };
  try {
    await store.sync([ACCOUNTS], { allowDestructive: false });
    await store.insert('accounts', { name: 'one', balance: 1 });
    assert.equal((await readInTransaction()).length, 1);
    const unchargedTimers = timers();
    let charged = 0;
    const charge = (bytes: number) => {
      charged += bytes;
      return true;
    };
    const rows = await readInTransaction(Object.assign(charge, { most: 1_000_000 }));
    assert.equal(rows.length, 1);
    assert.ok(charged > 0, 'the rows were charged');
    assert.equal(timers(), unchargedTimers, 'the charged read left a timer running');
  } finally {
    await store.close();
  }
});
