/**
 * The in-memory record store, the reference model of store.ts: writes, `@unique`, filters with
 * SQL's null semantics, total order with keyset cursors, limit and offset, and transactions that
 * nobody sees before commit and that serialise writers.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryStore } from '../../stdlib/records/memory.js';
import { ConflictError, InvalidQueryError, LATER, type Query, type Row, type TableSpec } from '../../stdlib/records/store.js';
import { isoTimestamp, uuidv7At } from '../../stdlib/records/uuid.js';
import { atOnceFirst, recordsConformance } from './records-conformance.js';

const PEOPLE: TableSpec = {
  name: 'Person',
  columns: [
    { name: 'name', type: 'text', optional: true, unique: false, index: false },
    { name: 'email', type: 'text', optional: true, unique: true, index: false },
    { name: 'age', type: 'int', optional: false, unique: false, index: true },
    { name: 'role', type: 'text', optional: true, unique: false, index: false, default: 'user' },
    { name: 'tags', type: 'list', optional: true, unique: false, index: false },
  ],
  file: 'people.rvm',
  line: 1,
  col: 1,
};

async function store(): Promise<MemoryStore> {
  const s = new MemoryStore();
  await s.sync([PEOPLE], { allowDestructive: false });
  return s;
}

function query(extra: Partial<Query> = {}): Query {
  return { filter: {}, order: [], limit: 50, offset: 0, ...extra };
}

async function names(s: MemoryStore, q: Partial<Query>): Promise<(string | null)[]> {
  return (await s.select('Person', query(q))).map((r) => r.name as string | null);
}

async function seed(s: MemoryStore): Promise<void> {
  await s.insert('Person', { name: 'al', age: 20, tags: ['x'] });
  await s.insert('Person', { name: 'bo', age: 40, role: 'admin', tags: ['x', 'y'] });
  await s.insert('Person', { name: 'cy', age: 40 });
  await s.insert('Person', { name: null, age: 30 });
}

describe('memory store', () => {
  test('insert sets a UUIDv7 id, equal ISO time stamps and defaults; rows are copies', async () => {
    const s = await store();
    const row = await s.insert('Person', { name: 'al', age: 20, tags: ['x'] });
    assert.match(row.id as string, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.match(row.created_at as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(row.created_at, row.updated_at);
    assert.equal(row.role, 'user');
    assert.equal(row.email, null);
    (row.tags as string[]).push('mutated');
    assert.deepEqual((await s.find('Person', row.id as string))!.tags, ['x']);
  });

  test('update changes the given fields and updated_at; delete answers whether a row went', async () => {
    const s = await store();
    const row = await s.insert('Person', { name: 'al', age: 20 });
    const updated = await s.update('Person', row.id as string, { age: 21 });
    assert.equal(updated!.age, 21);
    assert.equal(updated!.name, 'al');
    assert.equal(await s.update('Person', 'nope', { age: 1 }), null);
    assert.equal(await s.delete('Person', row.id as string), true);
    assert.equal(await s.delete('Person', row.id as string), false);
    assert.equal(await s.find('Person', row.id as string), null);
  });

  test('a @unique clash is a ConflictError naming the field, on insert and update; nulls never clash', async () => {
    const s = await store();
    await s.insert('Person', { email: 'a@b.co', age: 1 });
    await s.insert('Person', { age: 2 });
    await s.insert('Person', { age: 3 });
    const other = await s.insert('Person', { email: 'c@d.co', age: 4 });
    await assert.rejects(
      async () => s.insert('Person', { email: 'a@b.co', age: 5 }),
      (e: unknown) => e instanceof ConflictError && e.field === 'email',
    );
    await assert.rejects(async () => s.update('Person', other.id as string, { email: 'a@b.co' }), ConflictError);
    assert.equal(await s.count('Person', {}), 4);
  });

  test('filters: equality, operators, null as is_null, and comparisons with a null field are false', async () => {
    const s = await store();
    await seed(s);
    assert.deepEqual(await names(s, { filter: { age: 40 }, order: [{ field: 'name', desc: false }] }), ['bo', 'cy']);
    assert.deepEqual(await names(s, { filter: { name: null } }), [null]);
    assert.deepEqual(await names(s, { filter: { name: { ne: 'al' } }, order: [{ field: 'name', desc: false }] }), ['bo', 'cy']);
    assert.deepEqual(await names(s, { filter: { name: { is_null: false }, age: { gte: 30, lt: 41 } } }), ['bo', 'cy']);
    assert.deepEqual(await names(s, { filter: { name: { in: ['al', 'cy'] } } }), ['al', 'cy']);
    assert.deepEqual(await names(s, { filter: { name: { not_in: ['al'] } } }), ['bo', 'cy']);
    assert.deepEqual(await names(s, { filter: { name: { starts_with: 'b' } } }), ['bo']);
    assert.deepEqual(await names(s, { filter: { name: { contains: 'y' } } }), ['cy']);
    assert.deepEqual(await names(s, { filter: { tags: { contains: 'y' } } }), ['bo']);
    assert.equal(await s.count('Person', { role: 'admin' }), 1);
    await assert.rejects(async () => s.count('Person', { nmae: 'al' }), InvalidQueryError);
  });

  test('order: the keys, then id; null first ascending and last descending', async () => {
    const s = await store();
    await seed(s);
    assert.deepEqual(await names(s, { order: [{ field: 'name', desc: false }] }), [null, 'al', 'bo', 'cy']);
    assert.deepEqual(await names(s, { order: [{ field: 'name', desc: true }] }), ['cy', 'bo', 'al', null]);
    // Ties on age are broken by id in the same direction: newest first here (ids increase).
    assert.deepEqual(await names(s, { order: [{ field: 'age', desc: true }] }), ['cy', 'bo', null, 'al']);
    assert.deepEqual(await names(s, { order: [{ field: 'age', desc: false }] }), ['al', null, 'bo', 'cy']);
    await assert.rejects(async () => s.select('Person', query({ order: [{ field: 'nope', desc: false }] })), InvalidQueryError);
  });

  test('limit and offset, and keyset positions: rows strictly after the cursor values', async () => {
    const s = await store();
    await seed(s);
    const order = [{ field: 'age', desc: true }];
    assert.deepEqual(await names(s, { order, limit: 2, offset: 1 }), ['bo', null]);
    const first = await s.select('Person', query({ order, limit: 2 }));
    const last = first.at(-1)!;
    assert.deepEqual(await names(s, { order, after: [last.age!, last.id!] }), [null, 'al']);
    await assert.rejects(async () => s.select('Person', query({ order, after: [40] })), InvalidQueryError);
  });

  test('a transaction sees its own writes; nobody else does before commit; rollback drops them', async () => {
    const s = await store();
    const tx = await s.begin();
    const row = await tx.insert('Person', { name: 'al', age: 1 });
    assert.equal((await tx.find('Person', row.id as string))!.name, 'al');
    assert.equal(await s.find('Person', row.id as string), null);
    await tx.rollback();
    assert.equal(await s.count('Person', {}), 0);
    const tx2 = await s.begin();
    await tx2.insert('Person', { name: 'bo', age: 2 });
    await tx2.commit();
    assert.equal(await s.count('Person', {}), 1);
    await assert.rejects(async () => tx2.commit(), /already finished/);
  });

  test('writers are serialised: a write waits for the open transaction', async () => {
    const s = await store();
    const tx = await s.begin();
    const events: string[] = [];
    const outside = s.insert('Person', { name: 'later', age: 2 }).then(() => events.push('outside'));
    await tx.insert('Person', { name: 'first', age: 1 });
    await new Promise((r) => setTimeout(r, 10));
    events.push('commit');
    await tx.commit();
    await outside;
    assert.deepEqual(events, ['commit', 'outside']);
    assert.equal(await s.count('Person', {}), 2);
  });

  test('fields named like Object.prototype members are ordinary fields', async () => {
    const s = new MemoryStore();
    const odd: TableSpec = {
      name: 'Odd',
      columns: ['__proto__', 'constructor', 'toString'].map((name) => ({
        name,
        type: 'text' as const,
        optional: true,
        unique: name === 'constructor',
        index: false,
      })),
      file: 'odd.rvm',
      line: 1,
      col: 1,
    };
    await s.sync([odd], { allowDestructive: false });
    const fields = JSON.parse('{"__proto__": "p", "constructor": "c"}') as Row;
    const row = await s.insert('Odd', fields);
    assert.equal(Object.getPrototypeOf(row), Object.prototype);
    // biome-ignore lint/suspicious/noProto: the record field named __proto__, an own property, is what this reads
    assert.deepEqual([row.__proto__, row.constructor, row.toString], ['p', 'c', null]);
    assert.equal(await s.count('Odd', { toString: null }), 1);
    assert.equal(await s.count('Odd', JSON.parse('{"__proto__": "p"}') as Row), 1);
    await assert.rejects(async () => s.insert('Odd', { constructor: 'c' }), ConflictError);
    assert.equal((await s.insert('Odd', {})).constructor, null);
  });

  test('sync creates tables and adds columns with their default; diff only reports', async () => {
    const s = new MemoryStore();
    assert.deepEqual((await s.diff([PEOPLE])).applied, ['create table Person']);
    await s.sync([PEOPLE], { allowDestructive: false });
    await s.insert('Person', { age: 1 });
    const wider: TableSpec = {
      ...PEOPLE,
      columns: [...PEOPLE.columns, { name: 'level', type: 'int', optional: true, unique: false, index: false, default: 3 }],
    };
    assert.deepEqual((await s.diff([wider])).applied, ['add column Person.level']);
    await s.sync([wider], { allowDestructive: false });
    assert.equal((await s.select('Person', query()))[0]!.level, 3);
    await assert.rejects(async () => s.count('Nope', {}), InvalidQueryError);
  });

  test('the synchronous form answers reads at once, and writes at once unless a transaction holds the write lock (LATER, nothing written)', async () => {
    const s = await store();
    const row = s.now.insert('Person', { name: 'al', age: 20 }) as Row;
    assert.equal(row.name, 'al');
    const tx = await s.begin();
    assert.equal(s.now.insert('Person', { name: 'bo', age: 1 }), LATER);
    assert.equal(s.now.delete('Person', row.id as string), LATER);
    assert.deepEqual(s.now.find('Person', row.id as string), row);
    assert.equal(tx.now!.count('Person', {}), 1);
    await tx.commit();
    assert.equal(s.now.count('Person', {}), 1);
    assert.equal(s.now.delete('Person', row.id as string), true);
    assert.throws(() => s.now.count('Nope', {}), InvalidQueryError);
  });
});

describe('record ids and time stamps', () => {
  test('uuidv7 ids made in one millisecond still increase, and carry the time', () => {
    const now = Date.UTC(2026, 0, 1);
    const ids = Array.from({ length: 5000 }, () => uuidv7At(now).id);
    assert.deepEqual([...ids].sort(), ids);
    assert.equal(new Set(ids).size, ids.length);
    assert.equal(parseInt(ids[0]!.replace(/-/g, '').slice(0, 12), 16) >= now, true);
    for (const id of ids.slice(0, 10)) assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  test('time stamps are ISO-8601 UTC with milliseconds', () => {
    assert.equal(isoTimestamp(Date.UTC(2026, 10, 25, 9, 5, 3, 7)), '2026-11-25T09:05:03.007Z');
  });
});

// The reference model answers the stores' conformance suite unchanged: the same semantics exactly.
recordsConformance('memory', async () => new MemoryStore());
recordsConformance('memory, at once', async () => atOnceFirst(new MemoryStore()));
