/**
 * The stores' parts on their own: UUIDv7 layout and monotonicity, cursors (garbage, another
 * order, the length limit), LIKE escaping, values never in SQL text, the statement cache bound,
 * identifier and index-name limits.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { uuidv7Source } from '../../stdlib/records/uuid.js';
import { MAX_CURSOR_LENGTH, decodeCursor, encodeCursor } from '../../stdlib/records/cursor.js';
import { ShapeCache, escapeLike, selectStatement } from '../../stdlib/records/sql.js';
import { checkQuery } from '../../stdlib/records/query.js';
import { MAX_IDENTIFIER_LENGTH, tableOf } from '../../stdlib/records/columns.js';
import { indexName } from '../../stdlib/records/schema.js';
import { postgresDialect } from '../../stdlib/records/postgres.js';
import { sqliteDialect } from '../../stdlib/records/sqlite.js';
import { InvalidQueryError } from '../../stdlib/records/store.js';
import { PEOPLE } from './records-conformance.js';

test('UUIDv7: 48-bit ms timestamp, version 7, variant 10, strictly increasing within a millisecond and when the clock steps back', () => {
  const ms = 1_700_000_000_123;
  // A source of its own: the process's has made ids at later times in the files run before this one.
  const uuidv7At = uuidv7Source();
  const ids = [uuidv7At(ms), uuidv7At(ms), uuidv7At(ms), uuidv7At(ms - 5000), uuidv7At(ms + 1)];
  for (const { id } of ids) {
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  }
  assert.equal(parseInt(ids[0]!.id.replace(/-/g, '').slice(0, 12), 16), ms);
  assert.equal(ids[3]!.ms, ms, 'a clock stepping back keeps the last millisecond');
  const texts = ids.map((i) => i.id);
  assert.deepEqual([...texts].sort(), texts);
  assert.equal(new Set(texts).size, texts.length);
});

const SECRET = 'cursor-test-secret';

test('a cursor round-trips; garbage, another order, or an over-long cursor is InvalidQueryError', () => {
  const order = [{ field: 'age', desc: true }];
  const row = { id: '01900000-0000-7000-8000-000000000000', age: 3, name: 'x' };
  const cursor = encodeCursor(order, row, SECRET);
  assert.match(cursor, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  assert.deepEqual(decodeCursor(cursor, order, SECRET), [3, row.id]);
  assert.deepEqual(
    decodeCursor(cursor, [...order, { field: 'id', desc: true }], SECRET),
    [3, row.id],
    'id last is implied, in the direction of the key before it',
  );
  const invalid = (value: unknown, ord = order) =>
    assert.throws(
      () => decodeCursor(value, ord, SECRET),
      (e: unknown) => e instanceof InvalidQueryError && e.code === 'invalid_query',
    );
  invalid(encodeCursor(order, row, SECRET), [{ field: 'age', desc: false }]);
  invalid(cursor, [...order, { field: 'id', desc: false }]);
  for (const bad of ['', '!!!', 'e30', Buffer.from('[1]').toString('base64url'), Buffer.from('{"o":"age","v":[1]}').toString('base64url'), 42, null])
    invalid(bad);
  fc.assert(
    fc.property(fc.string(), (text) => {
      try {
        decodeCursor(text, order, SECRET);
      } catch (error) {
        assert.ok(error instanceof InvalidQueryError);
      }
    }),
  );
  const long = encodeCursor(order, { ...row, age: 'x'.repeat(10_000) }, SECRET);
  invalid(long);
  const padded = (n: number) => encodeCursor(order, { ...row, age: 'y'.repeat(n) }, SECRET);
  let n = 0;
  while (padded(n + 1).length <= MAX_CURSOR_LENGTH) n++;
  assert.equal(decodeCursor(padded(n), order, SECRET).length, 2, 'a cursor at the limit is read');
  invalid(padded(n + 3));
});

test('a cursor is signed with the app secret: a forged, altered or foreign-signed one is InvalidQueryError', () => {
  const order = [{ field: 'age', desc: false }];
  const row = { id: '01900000-0000-7000-8000-000000000000', age: 3 };
  const cursor = encodeCursor(order, row, SECRET);
  const [payload, mac] = cursor.split('.') as [string, string];
  const refused = (value: string, why: RegExp) =>
    assert.throws(
      () => decodeCursor(value, order, SECRET),
      (e: unknown) => e instanceof InvalidQueryError && why.test(e.message),
    );
  // The values changed (a later page skipped to, or a value probed), the signature kept.
  const altered = Buffer.from(JSON.stringify({ o: 'age,id', v: [99, row.id] })).toString('base64url');
  refused(`${altered}.${mac}`, /not made by this app/);
  refused(payload, /not a cursor text/);
  refused(encodeCursor(order, row, 'another app'), /not made by this app/);
  refused(`${payload}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`, /not made by this app/);
  assert.deepEqual(decodeCursor(cursor, order, SECRET), [3, row.id]);
});

test('LIKE metacharacters are escaped', () => {
  assert.equal(escapeLike('50%_off\\'), '50\\%\\_off\\\\');
});

test('values never reach the SQL text, on either dialect', () => {
  const table = tableOf(PEOPLE);
  fc.assert(
    fc.property(fc.string({ minLength: 3 }), (text) => {
      for (const dialect of [sqliteDialect, postgresDialect]) {
        const statement = selectStatement(
          dialect,
          table,
          checkQuery(table, {
            filter: { name: { contains: text, ne: text }, email: { in: [text] } },
            order: [{ field: 'name', desc: true }],
            limit: 5,
            offset: 0,
            after: [text, '01900000-0000-7000-8000-000000000000'],
          }),
        );
        const other = selectStatement(
          dialect,
          table,
          checkQuery(table, {
            filter: { name: { contains: 'abc', ne: 'abc' }, email: { in: ['abc'] } },
            order: [{ field: 'name', desc: true }],
            limit: 5,
            offset: 0,
            after: ['abc', '01900000-0000-7000-8000-000000000000'],
          }),
        );
        assert.equal(statement.sql, other.sql, 'one shape, one text');
      }
    }),
  );
});

test('the statement cache keeps at most its size, evicting the least recently used', () => {
  const cache = new ShapeCache<number>(3);
  let made = 0;
  for (const sql of ['a', 'b', 'c', 'a', 'd', 'b']) cache.get(sql, () => ++made);
  assert.equal(cache.count, 3);
  assert.ok(cache.full);
  assert.equal(made, 5, "'a' was reused; 'b' was evicted by 'd' and made again");
  assert.ok(cache.has('a') && cache.has('d') && cache.has('b') && !cache.has('c'));
});

test('names are identifiers of at most MAX_IDENTIFIER_LENGTH characters; long index names stay unique and within 63', () => {
  const spec = (name: string) => ({ ...PEOPLE, name, columns: [{ name: 'f', type: 'text' as const, optional: true, unique: true, index: false }] });
  assert.equal(tableOf(spec('t'.repeat(MAX_IDENTIFIER_LENGTH))).name.length, MAX_IDENTIFIER_LENGTH);
  assert.throws(() => tableOf(spec('t'.repeat(MAX_IDENTIFIER_LENGTH + 1))));
  assert.throws(() => tableOf(spec('users; DROP TABLE x')));
  assert.throws(() => tableOf({ ...PEOPLE, columns: [{ name: 'id', type: 'text', optional: true, unique: false, index: false }] }));
  const a = indexName('t'.repeat(60), 'first_field', true);
  const b = indexName('t'.repeat(60), 'second_field', true);
  assert.ok(a.length <= 63 && b.length <= 63 && a !== b && a.endsWith('_key'));
  assert.equal(indexName('users', 'email', true), 'users_email_key');
});
