/**
 * The records conformance suite: what every RecordStore (SQLite, PostgreSQL, the in-memory model)
 * must answer alike. `recordsConformance(name, makeStore)` registers it; `makeStore` returns a
 * fresh, empty store for each test. `matches` and `compareRows` are the reference semantics of
 * filters and order that the answers are checked against. `atOnceFirst` runs it on a store's
 * synchronous form.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  ConflictError,
  DatabaseUnavailableError,
  InvalidQueryError,
  LATER,
  MAX_LIMIT,
  MAX_QUERY_ROWS,
  ResultMemoryError,
  UnstorableValueError,
  type Filter,
  type Operation,
  type OrderKey,
  type RecordOperations,
  type RecordOps,
  type RecordStore,
  type Records,
  type Row,
  type StoredValue,
  type TableSpec,
} from '../../stdlib/records/store.js';
import { MAX_IN_VALUES } from '../../stdlib/records/query.js';
import { hostileSqlText } from '../support/hostile-sql.js';
import { MAX_INDEXED_TEXT_BYTES } from '../../stdlib/records/columns.js';
import { decodeCursor, encodeCursor, effectiveOrder } from '../../stdlib/records/cursor.js';

const OPERATIONS: readonly Operation[] = ['insert', 'update', 'delete', 'find', 'select', 'count'];

/**
 * `records` as the records provider uses them: each operation in the synchronous form first, and
 * in the asynchronous one when that answers LATER; a transaction begun from them likewise.
 */
export function atOnceFirst<R extends Records>(records: R): R {
  const now = records.now!;
  const later: RecordOps = records;
  const first =
    <K extends Operation>(operation: K) =>
    async (...args: RecordOperations[K]['args']): Promise<RecordOperations[K]['result']> => {
      const result = now[operation](...args);
      return result === LATER ? later[operation](...args) : result;
    };
  const operations = new Map<string | symbol, unknown>(OPERATIONS.map((operation) => [operation, first(operation)]));
  return new Proxy(records, {
    get(target, key) {
      if (operations.has(key)) return operations.get(key);
      if (key === 'begin') return async () => atOnceFirst(await (target as unknown as RecordStore).begin());
      const value: unknown = Reflect.get(target, key);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** The table most cases use. */
export const PEOPLE: TableSpec = {
  name: 'people',
  file: 'app/types.rvm',
  line: 3,
  col: 1,
  columns: [
    { name: 'name', type: 'text', optional: false, unique: false, index: false },
    { name: 'email', type: 'text', optional: true, unique: true, index: false },
    { name: 'age', type: 'int', optional: true, unique: false, index: true },
    { name: 'score', type: 'number', optional: true, unique: false, index: false },
    { name: 'active', type: 'bool', optional: false, default: true, unique: false, index: false },
    { name: 'born', type: 'date', optional: true, unique: false, index: false },
    { name: 'seen', type: 'datetime', optional: true, unique: false, index: false },
    { name: 'tags', type: 'list', optional: true, unique: false, index: false },
    { name: 'meta', type: 'object', optional: true, unique: false, index: false },
  ],
};

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Total order of stored scalars as both databases sort them: text by code point, nulls least. */
export function compareValues(a: StoredValue, b: StoredValue): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? -1 : 1;
  if (typeof a === 'string' && typeof b === 'string') return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  return (a as number) - (b as number);
}

/** Rows in `order` (id last, nulls first ascending and last descending). */
export function compareRows(order: readonly OrderKey[]): (a: Row, b: Row) => number {
  const keys = effectiveOrder(order);
  return (a, b) => {
    for (const { field, desc } of keys) {
      const c = compareValues(a[field] ?? null, b[field] ?? null);
      if (c !== 0) return desc ? -c : c;
    }
    return 0;
  };
}

/** Whether `row` passes `filter`, with SQL's rule that a comparison with null is never true. */
export function matches(row: Row, filter: Filter): boolean {
  return Object.entries(filter).every(([field, cond]) => {
    const ops = typeof cond === 'object' && cond !== null && !Array.isArray(cond) ? cond : { eq: cond };
    const x = row[field] ?? null;
    return Object.entries(ops).every(([op, v]) => {
      const value = v as StoredValue;
      switch (op) {
        case 'eq':
          return value === null ? x === null : x !== null && compareValues(x, value) === 0;
        case 'ne':
          return value === null ? x !== null : x !== null && compareValues(x, value) !== 0;
        case 'gt':
          return x !== null && compareValues(x, value) > 0;
        case 'gte':
          return x !== null && compareValues(x, value) >= 0;
        case 'lt':
          return x !== null && compareValues(x, value) < 0;
        case 'lte':
          return x !== null && compareValues(x, value) <= 0;
        case 'in':
          return x !== null && (value as StoredValue[]).some((w) => compareValues(x, w) === 0);
        case 'not_in':
          return (value as StoredValue[]).length === 0 || (x !== null && !(value as StoredValue[]).some((w) => compareValues(x, w) === 0));
        case 'contains':
          if (Array.isArray(x)) return x.some((e) => typeof e === typeof value && e === value);
          return typeof x === 'string' && x.includes(value as string);
        case 'starts_with':
          return typeof x === 'string' && x.startsWith(value as string);
        case 'is_null':
          return (x === null) === value;
        default:
          throw new Error(`no such operator ${op}`);
      }
    });
  });
}

/** Rejects (a store answers failures as rejected Promises, never throws) with an error of `kind` whose `code` is `code`. */
async function rejectsWith(answer: unknown, kind: new (...args: never[]) => Error, code: string, message?: RegExp): Promise<void> {
  await assert.rejects(Promise.resolve(answer), (error: unknown) => {
    assert.ok(error instanceof kind, `expected ${kind.name}, got ${String(error)}`);
    assert.equal((error as unknown as { code: string }).code, code);
    if (message) assert.match((error as Error).message, message);
    return true;
  });
}

const FIXTURE: Row[] = [
  {
    name: 'Ada',
    email: 'ada@x.io',
    age: 36,
    score: 9.5,
    active: true,
    born: '1815-12-10',
    seen: '2024-01-02T03:04:05.006Z',
    tags: ['math', 'poet'],
    meta: { a: 1 },
  },
  { name: 'alan', email: 'alan@x.io', age: 41, score: 7, active: false, born: '1912-06-23', seen: null, tags: ['math', 1, true], meta: null },
  { name: 'Grace', email: null, age: 85, score: -0.5, active: true, born: null, seen: '2023-05-01T00:00:00.000Z', tags: [], meta: { nested: [1, { b: 'c' }] } },
  { name: '100%_sure\\', email: "o'brien@x.io", age: null, score: null, active: true, born: '2000-02-29', seen: null, tags: ['%', '_'], meta: null },
  { name: 'Édith ☃ 😀', email: 'edith@x.io', age: 36, score: 9.5, active: false, born: '1999-12-31', seen: '2024-01-02T03:04:05.007Z', tags: null, meta: {} },
  { name: 'Ada', email: 'ada2@x.io', age: 36, score: null, active: true, born: null, seen: null, tags: ['poet'], meta: null },
];

/** A store with PEOPLE synced and the fixture inserted (in order). */
async function seeded(makeStore: () => Promise<RecordStore>): Promise<{ store: RecordStore; rows: Row[] }> {
  const store = await makeStore();
  await store.sync([PEOPLE], { allowDestructive: false });
  const rows: Row[] = [];
  for (const row of FIXTURE) rows.push(await store.insert('people', row));
  return { store, rows };
}

/** Filters covering every operator on every type it applies to. */
const FILTERS: Filter[] = [
  { name: 'Ada' },
  { email: null },
  { name: { eq: 'ada' } },
  { name: { ne: 'Ada' } },
  { email: { ne: null } },
  { age: { gt: 36 } },
  { age: { gte: 36 } },
  { age: { lt: 41 } },
  { age: { lte: 41, gt: 0 } },
  { score: { gt: -1, lt: 9.5 } },
  { active: false },
  { active: { gt: false } },
  { born: { lt: '1950-01-01' } },
  { born: { gte: '2000-02-29' } },
  { seen: { gt: '2024-01-02T03:04:05.006Z' } },
  { seen: { lte: '2024-01-02T03:04:05.006Z' } },
  { name: { in: ['Ada', 'Grace', 'nobody'] } },
  { name: { not_in: ['Ada'] } },
  { age: { in: [] } },
  { age: { not_in: [] } },
  { age: { in: [36, 85] } },
  { age: { not_in: [36] } },
  { active: { in: [true] } },
  { born: { in: ['2000-02-29'] } },
  { name: { contains: 'a' } },
  { name: { contains: 'A' } },
  { name: { contains: '%' } },
  { name: { contains: '_' } },
  { name: { contains: '\\' } },
  { name: { contains: '☃ 😀' } },
  { name: { starts_with: 'Ad' } },
  { name: { starts_with: '100%_' } },
  { name: { starts_with: '%' } },
  { email: { contains: "'" } },
  { tags: { contains: 'math' } },
  { tags: { contains: '%' } },
  { tags: { contains: 1 } },
  { tags: { contains: true } },
  { tags: { contains: 'Math' } },
  { tags: { is_null: true } },
  { meta: { is_null: false } },
  { age: { is_null: true } },
  { name: 'Ada', age: 36, active: true },
];

/** Registers the suite for one store kind. */
export function recordsConformance(name: string, makeStore: () => Promise<RecordStore>): void {
  describe(`records conformance: ${name}`, () => {
    test('insert sets id (UUIDv7), timestamps (ISO-8601 UTC, ms), defaults and nulls; find, update and delete', async () => {
      const store = await makeStore();
      try {
        await store.sync([PEOPLE], { allowDestructive: false });
        const row = await store.insert('people', { name: 'Ada', age: 36 });
        assert.match(row.id as string, UUID_V7);
        assert.match(row.created_at as string, ISO_MS);
        assert.equal(row.updated_at, row.created_at);
        assert.deepEqual(row, {
          id: row.id,
          name: 'Ada',
          email: null,
          age: 36,
          score: null,
          active: true,
          born: null,
          seen: null,
          tags: null,
          meta: null,
          created_at: row.created_at,
          updated_at: row.updated_at,
        });
        assert.deepEqual(Object.keys(row), ['id', 'name', 'email', 'age', 'score', 'active', 'born', 'seen', 'tags', 'meta', 'created_at', 'updated_at']);
        assert.deepEqual(await store.find('people', row.id as string), row);
        assert.deepEqual(await store.find('people', (row.id as string).toUpperCase()), row);
        assert.equal(await store.find('people', '01900000-0000-7000-8000-000000000000'), null);
        assert.equal(await store.find('people', "' OR 1=1 --"), null);
        const updated = await store.update('people', row.id as string, { age: 37, tags: ['x'] });
        assert.equal(updated?.age, 37);
        assert.deepEqual(updated?.tags, ['x']);
        assert.equal(updated?.created_at, row.created_at);
        assert.ok((updated!.updated_at as string) >= (row.updated_at as string));
        assert.deepEqual(await store.find('people', row.id as string), updated);
        assert.equal(await store.update('people', '01900000-0000-7000-8000-000000000000', { age: 1 }), null);
        assert.equal(await store.delete('people', row.id as string), true);
        assert.equal(await store.delete('people', row.id as string), false);
        assert.equal(await store.find('people', row.id as string), null);
      } finally {
        await store.close();
      }
    });

    test('every type round-trips as JSON data (booleans as booleans, date-times normalised to UTC ms)', async () => {
      const { store, rows } = await seeded(makeStore);
      try {
        for (const [i, row] of rows.entries()) {
          const found = await store.find('people', row.id as string);
          assert.deepEqual(found, row);
          for (const field of Object.keys(FIXTURE[i]!)) assert.deepEqual(found![field], FIXTURE[i]![field], field);
        }
        const zoned = await store.insert('people', { name: 'z', seen: '2024-06-01T12:00:00+02:00', score: -0 });
        assert.equal(zoned.seen, '2024-06-01T10:00:00.000Z');
        assert.deepEqual(await store.find('people', zoned.id as string), zoned);
        assert.ok(Object.is((await store.find('people', zoned.id as string))!.score, 0));
      } finally {
        await store.close();
      }
    });

    test('every operator selects what the reference semantics select', async () => {
      const { store, rows } = await seeded(makeStore);
      try {
        for (const filter of FILTERS) {
          const got = await store.select('people', { filter, order: [], limit: MAX_LIMIT, offset: 0 });
          const want = rows.filter((r) => matches(r, filter));
          assert.deepEqual(
            got.map((r) => r.name),
            want.map((r) => r.name),
            JSON.stringify(filter),
          );
          assert.equal(await store.count('people', filter), want.length, JSON.stringify(filter));
        }
      } finally {
        await store.close();
      }
    });

    test('order (mixed directions, nulls, id last), limit and offset', async () => {
      const { store, rows } = await seeded(makeStore);
      try {
        const orders: OrderKey[][] = [
          [],
          [{ field: 'age', desc: true }],
          [
            { field: 'age', desc: false },
            { field: 'name', desc: true },
          ],
          [{ field: 'name', desc: false }],
          [
            { field: 'score', desc: true },
            { field: 'born', desc: false },
          ],
          [
            { field: 'id', desc: true },
            { field: 'name', desc: false },
          ],
        ];
        for (const order of orders) {
          const want = [...rows].sort(compareRows(order));
          const all = await store.select('people', { filter: {}, order, limit: MAX_LIMIT, offset: 0 });
          assert.deepEqual(
            all.map((r) => r.id),
            want.map((r) => r.id),
            JSON.stringify(order),
          );
          const slice = await store.select('people', { filter: {}, order, limit: 2, offset: 3 });
          assert.deepEqual(
            slice.map((r) => r.id),
            want.slice(3, 5).map((r) => r.id),
          );
        }
        assert.deepEqual(await store.select('people', { filter: {}, order: [], limit: 5, offset: 100 }), []);
      } finally {
        await store.close();
      }
    });

    test('keyset paging over ties and nulls visits every row once, in order, for every direction mix', async () => {
      const store = await makeStore();
      try {
        await store.sync([PEOPLE], { allowDestructive: false });
        const rows: Row[] = [];
        for (let i = 0; i < 23; i++) rows.push(await store.insert('people', { name: `n${i % 3}`, age: i % 4 === 0 ? null : i % 2, active: i % 5 === 0 }));
        const orders: OrderKey[][] = [
          [],
          [{ field: 'age', desc: false }],
          [{ field: 'age', desc: true }],
          [
            { field: 'age', desc: true },
            { field: 'name', desc: false },
          ],
          [
            { field: 'name', desc: true },
            { field: 'age', desc: false },
            { field: 'active', desc: true },
          ],
        ];
        for (const order of orders) {
          const want = [...rows].sort(compareRows(order)).map((r) => r.id);
          const seen: StoredValue[] = [];
          let after: StoredValue[] | undefined;
          for (let pages = 0; pages < 20; pages++) {
            const page = await store.select('people', { filter: { name: { ne: 'none' } }, order, limit: 4, offset: 0, ...(after ? { after } : {}) });
            seen.push(...page.map((r) => r.id!));
            if (page.length < 4) break;
            after = decodeCursor(encodeCursor(order, page[page.length - 1]!, 'secret'), order, 'secret');
          }
          assert.deepEqual(seen, want, JSON.stringify(order));
        }
      } finally {
        await store.close();
      }
    });

    test('a unique clash is a ConflictError naming the field, on insert and on update', async () => {
      const { store, rows } = await seeded(makeStore);
      try {
        await rejectsWith(store.insert('people', { name: 'x', email: 'ada@x.io' }), ConflictError, 'conflict');
        await assert.rejects(
          async () => store.insert('people', { name: 'x', email: 'ada@x.io' }),
          (e: unknown) => (e as ConflictError).field === 'email',
        );
        await assert.rejects(
          async () => store.update('people', rows[1]!.id as string, { email: 'ada@x.io' }),
          (e: unknown) => e instanceof ConflictError && e.field === 'email',
        );
        await store.insert('people', { name: 'y', email: null });
        assert.equal(await store.count('people', {}), rows.length + 1);
      } finally {
        await store.close();
      }
    });

    test('a transaction commits or rolls back as one; it finishes once', async () => {
      const { store, rows } = await seeded(makeStore);
      try {
        const tx = await store.begin();
        const a = await tx.insert('people', { name: 'in-tx' });
        await tx.update('people', rows[0]!.id as string, { age: 1 });
        assert.deepEqual(await tx.find('people', a.id as string), a);
        assert.equal(await tx.count('people', {}), rows.length + 1);
        await tx.rollback();
        assert.equal(await store.find('people', a.id as string), null);
        assert.equal((await store.find('people', rows[0]!.id as string))!.age, 36);
        await assert.rejects(async () => tx.commit());
        await assert.rejects(async () => tx.insert('people', { name: 'late' }));

        const ok = await store.begin();
        const b = await ok.insert('people', { name: 'kept' });
        await ok.delete('people', rows[1]!.id as string);
        await ok.commit();
        assert.deepEqual(await store.find('people', b.id as string), b);
        assert.equal(await store.find('people', rows[1]!.id as string), null);
      } finally {
        await store.close();
      }
    });

    test('sync creates, is idempotent, adds optional and defaulted columns, withholds destructive changes and applies them when allowed', async () => {
      const store = await makeStore();
      try {
        const v1: TableSpec = {
          name: 'notes',
          file: 'app/notes.rvm',
          line: 2,
          col: 1,
          columns: [
            { name: 'title', type: 'text', optional: false, unique: false, index: false },
            { name: 'body', type: 'text', optional: true, unique: false, index: false },
          ],
        };
        assert.deepEqual((await store.sync([v1], { allowDestructive: false })).withheld, []);
        assert.deepEqual(await store.sync([v1], { allowDestructive: false }), { applied: [], withheld: [] });
        const first = await store.insert('notes', { title: 't', body: 'b' });

        const v2: TableSpec = {
          ...v1,
          columns: [
            ...v1.columns,
            { name: 'stars', type: 'int', optional: true, unique: false, index: true },
            { name: 'pinned', type: 'bool', optional: false, default: false, unique: false, index: false },
          ],
        };
        const added = await store.sync([v2], { allowDestructive: false });
        assert.equal(added.withheld.length, 0);
        assert.ok(added.applied.length >= 3, added.applied.join('; '));
        assert.deepEqual(await store.find('notes', first.id as string), {
          ...first,
          stars: null,
          pinned: false,
          created_at: first.created_at,
          updated_at: first.updated_at,
        });

        const v3: TableSpec = {
          ...v1,
          line: 7,
          col: 3,
          columns: [
            { name: 'title', type: 'int', optional: false, unique: false, index: false },
            { name: 'stars', type: 'int', optional: true, unique: false, index: true },
            { name: 'pinned', type: 'bool', optional: false, default: false, unique: false, index: false },
            { name: 'owner', type: 'text', optional: false, unique: false, index: false },
          ],
        };
        const diff = await store.diff([v3]);
        const plan = await store.sync([v3], { allowDestructive: false });
        assert.deepEqual(plan.withheld, diff.withheld);
        const described = plan.withheld.map((c) => [c.description.split(' ').slice(0, 2).join(' '), c.destructive, c.file, c.line, c.col]);
        assert.deepEqual(described.sort(), [
          ["field 'body'", true, 'app/notes.rvm', 7, 3],
          ["field 'owner'", false, 'app/notes.rvm', 7, 3],
          ["field 'title'", true, 'app/notes.rvm', 7, 3],
        ]);
        assert.ok(plan.withheld.every((c) => c.table === 'notes' && c.sql.length > 0));
        assert.match(plan.withheld.find((c) => c.description.includes('title'))!.description, /from text to int/);
        assert.deepEqual((await store.find('notes', first.id as string))!.body, 'b', 'nothing withheld was applied');

        const forced = await store.sync([v3], { allowDestructive: true });
        assert.deepEqual(forced.withheld, []);
        assert.deepEqual(await store.sync([v3], { allowDestructive: false }), { applied: [], withheld: [] });
        const after = await store.find('notes', first.id as string);
        assert.deepEqual(Object.keys(after!).sort(), ['created_at', 'id', 'owner', 'pinned', 'stars', 'title', 'updated_at']);
        assert.equal(after!.title, null);
        const fresh = await store.insert('notes', { title: 5, owner: 'me' });
        assert.equal(fresh.title, 5);
      } finally {
        await store.close();
      }
    });

    test('a new required field without default is added to an empty table; dropped decorators drop their index', async () => {
      const store = await makeStore();
      try {
        const v1: TableSpec = {
          name: 'tags',
          file: 'f',
          line: 1,
          col: 1,
          columns: [{ name: 'label', type: 'text', optional: false, unique: true, index: false }],
        };
        await store.sync([v1], { allowDestructive: false });
        const v2: TableSpec = {
          ...v1,
          columns: [
            { name: 'label', type: 'text', optional: false, unique: false, index: false },
            { name: 'kind', type: 'text', optional: false, unique: false, index: false },
          ],
        };
        const plan = await store.sync([v2], { allowDestructive: false });
        assert.deepEqual(plan.withheld, []);
        await store.insert('tags', { label: 'a', kind: 'k' });
        await store.insert('tags', { label: 'a', kind: 'k' });
        assert.equal(await store.count('tags', { label: 'a' }), 2);
      } finally {
        await store.close();
      }
    });

    test('a query reads up to MAX_QUERY_ROWS rows (a page of MAX_LIMIT and the one that tells a next page exists)', async () => {
      const store = await makeStore();
      try {
        await store.sync([PEOPLE], { allowDestructive: false });
        // In one transaction: a thousand rows, one commit.
        const tx = await store.begin();
        for (let i = 0; i < MAX_QUERY_ROWS + 1; i++) await tx.insert('people', { name: `p${i}` });
        await tx.commit();
        const got = await store.select('people', { filter: {}, order: [], limit: MAX_QUERY_ROWS, offset: 0 });
        assert.equal(got.length, MAX_QUERY_ROWS);
      } finally {
        await store.close();
      }
    });

    test('charged rows: every row read is charged before the next, and a refusal fails the query with ResultMemoryError', async () => {
      const store = await makeStore();
      try {
        await store.sync([PEOPLE], { allowDestructive: false });
        const text = 'x'.repeat(10_000);
        for (let i = 0; i < 20; i++) await store.insert('people', { name: `${i}${text}` });
        const charges: number[] = [];
        const all = await store.select('people', { filter: {}, order: [], limit: 50, offset: 0, charge: (bytes) => charges.push(bytes) > 0 });
        assert.equal(all.length, 20);
        assert.equal(charges.length, 20);
        for (const bytes of charges) assert.ok(bytes > 10_000, `a row of 10,000 characters is charged at least that: ${bytes}`);
        let refusedAt = 0;
        const refused = Promise.resolve().then(() => store.select('people', { filter: {}, order: [], limit: 50, offset: 0, charge: () => ++refusedAt < 5 }));
        await assert.rejects(refused, (e: unknown) => e instanceof ResultMemoryError && e.code === 'overloaded');
        assert.equal(refusedAt, 5, 'no row is charged after the refusal');
        // The connection is still in step: the next query answers.
        assert.equal(await store.count('people', {}), 20);
      } finally {
        await store.close();
      }
    });

    test('bad queries and writes are InvalidQueryError, with a nearest-name hint', async () => {
      const { store, rows } = await seeded(makeStore);
      try {
        const q = (over: object) => store.select('people', { filter: {}, order: [], limit: 10, offset: 0, ...over });
        await rejectsWith(q({ filter: { nmae: 'x' } }), InvalidQueryError, 'invalid_query', /unknown field 'nmae'.*did you mean 'name'/);
        await rejectsWith(q({ filter: { name: { eqq: 'x' } } }), InvalidQueryError, 'invalid_query', /did you mean 'eq'/);
        await rejectsWith(q({ order: [{ field: 'agee', desc: false }] }), InvalidQueryError, 'invalid_query', /did you mean 'age'/);
        await rejectsWith(q({ order: [{ field: 'tags', desc: false }] }), InvalidQueryError, 'invalid_query');
        await rejectsWith(q({ limit: 0 }), InvalidQueryError, 'invalid_query');
        await rejectsWith(q({ limit: MAX_QUERY_ROWS + 1 }), InvalidQueryError, 'invalid_query');
        assert.equal((await q({ limit: MAX_QUERY_ROWS })).length, rows.length);
        await rejectsWith(q({ offset: -1 }), InvalidQueryError, 'invalid_query');
        await rejectsWith(q({ filter: { age: 'ten' } }), InvalidQueryError, 'invalid_query', /age/);
        await rejectsWith(q({ filter: { age: 1.5 } }), InvalidQueryError, 'invalid_query');
        await rejectsWith(q({ filter: { seen: { gt: 'yesterday' } } }), InvalidQueryError, 'invalid_query');
        await rejectsWith(q({ filter: { born: '2001-02-29' } }), InvalidQueryError, 'invalid_query');
        await rejectsWith(q({ filter: { id: 'not-a-uuid' } }), InvalidQueryError, 'invalid_query');
        await rejectsWith(q({ filter: { age: { gt: null } } }), InvalidQueryError, 'invalid_query');
        await rejectsWith(q({ filter: { age: { contains: 1 } } }), InvalidQueryError, 'invalid_query');
        await rejectsWith(q({ filter: { tags: { eq: ['a'] } } }), InvalidQueryError, 'invalid_query');
        await rejectsWith(q({ filter: { name: { in: 'Ada' } } }), InvalidQueryError, 'invalid_query');
        await rejectsWith(q({ filter: { name: { is_null: 'yes' } } }), InvalidQueryError, 'invalid_query');
        await rejectsWith(q({ filter: { name: 'a\u0000b' } }), InvalidQueryError, 'invalid_query');
        const many = Array.from({ length: MAX_IN_VALUES }, (_, i) => i);
        assert.equal((await q({ filter: { age: { in: many } } })).length, 5);
        await rejectsWith(q({ filter: { age: { in: [...many, -1] } } }), InvalidQueryError, 'invalid_query');
        await rejectsWith(q({ after: ['x'] }), InvalidQueryError, 'invalid_query');
        await rejectsWith(store.insert('people', { nam: 'x' }), InvalidQueryError, 'invalid_query', /did you mean 'name'/);
        await rejectsWith(store.insert('people', { age: 3 }), InvalidQueryError, 'invalid_query', /'name' is required/);
        await rejectsWith(store.insert('people', { name: 'x', id: rows[0]!.id! }), InvalidQueryError, 'invalid_query', /set by the store/);
        await rejectsWith(store.update('people', rows[0]!.id as string, { name: null }), InvalidQueryError, 'invalid_query');
        await rejectsWith(store.update('people', rows[0]!.id as string, { created_at: '2020-01-01T00:00:00.000Z' }), InvalidQueryError, 'invalid_query');
        await rejectsWith(store.count('nobody', {}), InvalidQueryError, 'invalid_query');
        assert.equal(await store.count('people', {}), rows.length);
      } finally {
        await store.close();
      }
    });

    test('text comes back exactly as written; text no database can store as given is UnstorableValueError (validation_failed) on insert and update', async () => {
      const { store, rows } = await seeded(makeStore);
      try {
        const exact = ['😀 é \u2028 \uffff \u{10ffff} \t', 'x'.repeat(10_000), 'é'.repeat(MAX_INDEXED_TEXT_BYTES / 2)];
        for (const text of exact) {
          // The last fills the unique field's limit exactly (2 bytes a character).
          const email = text.length * 2 <= MAX_INDEXED_TEXT_BYTES ? text : null;
          const id = (await store.insert('people', { name: text, email, tags: [text], meta: { [text.slice(0, 50)]: text } })).id as string;
          const back = (await store.find('people', id))!;
          assert.deepEqual([back.name, back.email, back.tags, back.meta], [text, email, [text], { [text.slice(0, 50)]: text }]);
        }
        const id = rows[0]!.id as string;
        const refusals: [Row, string, string][] = [
          [{ name: 'a\u0000b' }, 'name', 'no_nul'],
          [{ name: 'a\ud800b' }, 'name', 'well_formed'],
          [{ name: '\udc00' }, 'name', 'well_formed'],
          [{ name: 'x', tags: ['a\u0000'] }, 'tags', 'no_nul'],
          [{ name: 'x', meta: { 'k\u0000': 1 } }, 'meta', 'no_nul'],
          [{ name: 'x', meta: { k: '\ud83d' } }, 'meta', 'well_formed'],
          [{ name: 'x', email: 'é'.repeat(MAX_INDEXED_TEXT_BYTES / 2) + 'x' }, 'email', 'max_indexed_bytes'],
        ];
        for (const [fields, field, rule] of refusals) {
          for (const write of [() => store.insert('people', fields), () => store.update('people', id, fields)]) {
            await rejectsWith(write(), UnstorableValueError, 'validation_failed');
            await Promise.resolve(write()).catch((e: UnstorableValueError) => assert.deepEqual([e.field, e.rule], [field, rule], JSON.stringify(fields)));
          }
        }
        // A long text in a field without an index is stored.
        assert.equal((await store.update('people', id, { name: 'n'.repeat(MAX_INDEXED_TEXT_BYTES + 1) }))!.name, 'n'.repeat(MAX_INDEXED_TEXT_BYTES + 1));
      } finally {
        await store.close();
      }
    });

    test('fields named like Object.prototype members (__proto__, constructor) are ordinary fields', async () => {
      const store = await makeStore();
      try {
        const odd: TableSpec = {
          name: 'odd',
          file: 'odd.rvm',
          line: 1,
          col: 1,
          columns: ['__proto__', 'constructor', 'toString'].map((name) => ({
            name,
            type: 'text' as const,
            optional: true,
            unique: name === 'constructor',
            index: false,
          })),
        };
        await store.sync([odd], { allowDestructive: false });
        const row = await store.insert('odd', JSON.parse('{"__proto__": "p", "constructor": "c"}') as Row);
        for (const found of [
          row,
          (await store.find('odd', row.id as string))!,
          (await store.select('odd', { filter: {}, order: [], limit: 1, offset: 0 }))[0]!,
        ]) {
          assert.equal(Object.getPrototypeOf(found), Object.prototype);
          // biome-ignore lint/suspicious/noProto: the record field named __proto__, an own property, is what this reads
          assert.deepEqual([Object.hasOwn(found, '__proto__'), found.__proto__, found.constructor, found.toString], [true, 'p', 'c', null]);
        }
        assert.equal(await store.count('odd', JSON.parse('{"__proto__": "p"}') as Filter), 1);
        const updated = await store.update('odd', row.id as string, JSON.parse('{"__proto__": "q"}') as Row);
        // biome-ignore lint/suspicious/noProto: the record field named __proto__, an own property, is what this reads
        assert.equal(Object.hasOwn(updated!, '__proto__') && updated!.__proto__, 'q');
        await rejectsWith(store.insert('odd', { constructor: 'c' }), ConflictError, 'conflict');
      } finally {
        await store.close();
      }
    });

    test('ids are UUIDv7 in creation order', async () => {
      const store = await makeStore();
      try {
        await store.sync([PEOPLE], { allowDestructive: false });
        const ids: string[] = [];
        for (let i = 0; i < 50; i++) ids.push((await store.insert('people', { name: String(i) })).id as string);
        for (const id of ids) assert.match(id, UUID_V7);
        assert.deepEqual([...ids].sort(), ids);
        const listed = await store.select('people', { filter: {}, order: [], limit: 100, offset: 0 });
        assert.deepEqual(
          listed.map((r) => r.id),
          ids,
        );
      } finally {
        await store.close();
      }
    });

    test('hostile text in every value, filter key, operator and order position is inert (property)', async () => {
      const { store, rows } = await seeded(makeStore);
      const hostile = hostileSqlText(['); DROP TABLE people; --', 'Ada', 'a']);
      const coded = (e: unknown) => e instanceof InvalidQueryError || e instanceof ConflictError || e instanceof DatabaseUnavailableError;
      try {
        await fc.assert(
          fc.asyncProperty(
            hostile,
            fc.constantFrom('eq', 'ne', 'contains', 'starts_with', 'gt', 'in'),
            fc.constantFrom('name', 'email'),
            async (text, op, field) => {
              const filter: Filter = { [field]: { [op]: op === 'in' ? [text] : text } };
              const got = await store.select('people', { filter, order: [{ field: 'name', desc: false }], limit: MAX_LIMIT, offset: 0 });
              const want = [...rows].filter((r) => matches(r, filter)).sort(compareRows([{ field: 'name', desc: false }]));
              assert.deepEqual(
                got.map((r) => r.id),
                want.map((r) => r.id),
              );
              for (const attempt of [
                () => store.select('people', { filter: { [text]: 'x' }, order: [], limit: 5, offset: 0 }),
                () => store.select('people', { filter: { name: { [text]: 'x' } }, order: [], limit: 5, offset: 0 }),
                () => store.select('people', { filter: {}, order: [{ field: text, desc: true }], limit: 5, offset: 0 }),
                () => store.count('people', { age: text }),
              ]) {
                try {
                  await attempt();
                } catch (error) {
                  assert.ok(coded(error), String(error));
                }
              }
              const id = (await store.insert('people', { name: text, email: null, tags: [text], meta: { [text]: text } }))!.id as string;
              const back = await store.find('people', id);
              assert.equal(back!.name, text);
              assert.deepEqual(back!.tags, [text]);
              assert.deepEqual(back!.meta, { [text]: text });
              assert.equal(await store.delete('people', id), true);
            },
          ),
          { numRuns: 60 },
        );
        assert.equal(await store.count('people', {}), rows.length);
      } finally {
        await store.close();
      }
    });
  });
}
