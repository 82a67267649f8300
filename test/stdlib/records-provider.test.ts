/**
 * The records provider over a store, driven through a fake call context: write validation (422
 * with details), store failures as answers (409, 400, 503), and transactions per request —
 * nested ones refused, one left open rolled back when the request ends.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { HALT, RvmError, type RecordType, type Value } from '../../plugins/sdk.js';
import { fakeContext } from '../../plugins/testing.js';
import { recordProvider } from '../../stdlib/records/provider.js';
import { MemoryStore } from '../../stdlib/records/memory.js';
import { SqliteStore } from '../../stdlib/records/sqlite.js';
import { DatabaseUnavailableError, type RecordStore } from '../../stdlib/records/store.js';
import { RecordValue } from '../../stdlib/records/record.js';

const NOTE: RecordType = {
  name: 'Note',
  fields: [{ name: 'title', type: 'text', optional: false, required: true, decorators: [{ name: 'unique', args: [] }], doc: null }],
  doc: null,
  file: 'notes.rvm',
  line: 1,
  col: 1,
  // Stands in for the validators: a title is required and at most 5 characters.
  validate: (input) => {
    const title = input.title;
    if (typeof title !== 'string') return { value: null, errors: [{ field: 'title', rule: 'required', message: 'is required' }] };
    if (title.length > 5) return { value: null, errors: [{ field: 'title', rule: 'max', message: 'must be at most 5 characters' }] };
    return { value: { title }, errors: null };
  },
};

function setup(store: RecordStore = new MemoryStore()) {
  const provider = recordProvider(store);
  provider.declare!([NOTE]);
  const call = (name: string, ctx: ReturnType<typeof fakeContext>, ...args: Value[]) => provider.methods[name]!.fn(ctx, NOTE, ...args);
  return { provider, store, call };
}

/** A store whose every operation fails as a database that is down. */
function downStore(): RecordStore {
  const down = () => Promise.reject(new DatabaseUnavailableError('connection refused'));
  return {
    kind: 'down',
    insert: down,
    update: down,
    delete: down,
    find: down,
    select: down,
    count: down,
    sync: down,
    diff: down,
    begin: down,
    close: async () => {},
  };
}

describe('records provider', () => {
  test('create validates the whole record: failures answer 422 with every detail, undeclared fields included', async () => {
    const { call } = setup();
    const ctx = fakeContext();
    assert.equal(await call('create', ctx, { title: 'too long' }), HALT);
    assert.deepEqual(ctx.answers[0], {
      status: 422,
      kind: 'json',
      body: { error: 'Validation failed', code: 'validation_failed', details: [{ field: 'title', rule: 'max', message: 'must be at most 5 characters' }] },
    });
    const ctx2 = fakeContext();
    assert.equal(await call('create', ctx2, { title: 'ok', colour: 'red' }), HALT);
    assert.deepEqual((ctx2.answers[0]!.body as { details: unknown }).details, [{ field: 'colour', rule: 'unknown_field', message: 'is not a field of Note' }]);
  });

  test('a unique clash answers 409 conflict; a run-time filter naming an unknown field 400 invalid_query', async () => {
    const { call } = setup();
    assert.ok((await call('create', fakeContext(), { title: 'a' })) instanceof RecordValue);
    const ctx = fakeContext();
    assert.equal(await call('create', ctx, { title: 'a' }), HALT);
    assert.deepEqual([ctx.failures[0]!.status, ctx.failures[0]!.code], [409, 'conflict']);
    const ctx2 = fakeContext();
    assert.equal(await call('where', ctx2, { titel: 'a' }), HALT);
    assert.deepEqual([ctx2.failures[0]!.status, ctx2.failures[0]!.code], [400, 'invalid_query']);
    assert.match(ctx2.failures[0]!.message, /did you mean 'title'/);
  });

  test("the request's data as it came is refused as a write and as an operator object (400 invalid_query)", async () => {
    const { call } = setup();
    const sent = JSON.parse('{"title":"x","where":{"title":{"ne":null}}}') as { title: Value; where: { title: Value } };
    const ctx = fakeContext({ request: { body: sent } });
    for (const method of ['create', 'new']) {
      assert.equal(await call(method, ctx, sent as unknown as Value), HALT);
      assert.deepEqual([ctx.failures.at(-1)!.status, ctx.failures.at(-1)!.code], [400, 'invalid_query']);
      assert.match(ctx.failures.at(-1)!.message, new RegExp(`Note\\.${method} was given the request's data as the client sent it`));
    }
    assert.equal(await call('update', ctx, '01900000-0000-7000-8000-000000000000', sent.where as Value), HALT);
    assert.equal(ctx.failures.at(-1)!.code, 'invalid_query');
    for (const method of ['find_by', 'where', 'count', 'page']) {
      assert.equal(await call(method, ctx, { title: sent.where.title }), HALT, method);
      assert.match(ctx.failures.at(-1)!.message, /condition on 'title' is an object from the request/);
    }
    // The same shapes written by the code pass.
    assert.ok((await call('create', fakeContext(), { title: 'x' })) instanceof RecordValue);
    assert.equal(await call('count', fakeContext({ request: { body: sent } }), { title: { ne: null } }), 1);
  });

  test('a database that is down answers 503 database_unavailable, and is tried again by the next call', async () => {
    const { call } = setup(downStore());
    for (let i = 0; i < 2; i++) {
      const ctx = fakeContext();
      assert.equal(await call('find', ctx, 'x'), HALT);
      assert.deepEqual([ctx.failures[0]!.status, ctx.failures[0]!.code], [503, 'database_unavailable']);
    }
  });

  test('a transaction left open when the request ends is rolled back, and frees the writers', { timeout: 5000 }, async () => {
    const { provider, call, store } = setup();
    const ctx = fakeContext();
    await provider.begin(ctx);
    await call('create', ctx, { title: 'kept?' });
    // Another request's write waits for the open transaction.
    let written = false;
    const other = Promise.resolve(call('create', fakeContext(), { title: 'b' })).then(() => (written = true));
    await new Promise((r) => setTimeout(r, 5));
    assert.equal(written, false);
    await ctx.end();
    await other;
    assert.equal(await store.count('Note', {}), 1);
    assert.equal(await store.count('Note', { title: 'kept?' }), 0);
  });

  test("a second begin in one request is nested_transaction; rollback raises the block's error again", async () => {
    const { provider } = setup();
    const ctx = fakeContext();
    await provider.begin(ctx);
    assert.throws(
      () => provider.begin(ctx),
      (e: unknown) => e instanceof RvmError && e.code === 'nested_transaction',
    );
    await assert.rejects(
      Promise.resolve(provider.rollback(ctx, { message: 'boom', code: 'division_by_zero' })),
      (e: unknown) => e instanceof RvmError && e.code === 'division_by_zero' && e.message === 'boom',
    );
    await provider.begin(ctx);
    await provider.commit(ctx);
  });

  test('on a store with a synchronous form a call answers at once, no Promise; one the store answers LATER waits in the asynchronous form', async () => {
    const store = new SqliteStore(':memory:');
    try {
      const { call, provider } = setup(store);
      const ctx = fakeContext();
      // The first call brings the store to the types, and waits for it.
      const created = await call('create', ctx, { title: 'a' });
      assert.ok(created instanceof RecordValue);
      const found = call('find', ctx, created.id);
      assert.ok(found instanceof RecordValue && found.id === created.id);
      assert.equal(call('count', ctx), 1);
      // Another request's transaction holds the connection: the call waits for it, then answers.
      const tx = await store.begin();
      const waiting = call('count', fakeContext());
      assert.ok(waiting instanceof Promise);
      await tx.rollback();
      assert.equal(await waiting, 1);
      // A failure thrown by the synchronous form is answered as the asynchronous form's would be.
      const other = fakeContext();
      assert.equal(call('create', other, { title: 'a' }), HALT);
      assert.equal(other.failures[0]?.code, 'conflict');
      // `delete r` answers at once too.
      assert.equal(provider.delete(fakeContext(), created), null);
      assert.equal(call('count', ctx), 0);
    } finally {
      await store.close();
    }
  });

  test('save and delete take records only', () => {
    const { provider } = setup();
    assert.throws(
      () => provider.save(fakeContext(), { title: 'x' }),
      (e: unknown) => e instanceof RvmError && e.code === 'not_a_record',
    );
    assert.throws(
      () => provider.delete(fakeContext(), 'x'),
      (e: unknown) => e instanceof RvmError && e.code === 'not_a_record',
    );
  });
});
