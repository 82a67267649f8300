/**
 * Record filters, options and cursors checked against a type: the one walker behind both the
 * compile-time check (what the compiler knew, UNKNOWN accepted) and the run-time one
 * (InvalidQueryError, 400). Also the record value: declared fields only, system fields read-only,
 * `@hidden` fields out of its JSON and text forms.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RawRequestArg, RvmError, UNKNOWN, toText, type RecordType, type Value } from '../../plugins/sdk.js';
import { TEST_APP } from '../../plugins/testing.js';
import {
  MAX_IN_VALUES,
  MAX_OFFSET,
  QueryProblem,
  buildQuery,
  checkFilter,
  checkQuery,
  invalidQuery,
  walkFields,
  walkFilter,
  walkOptions,
  type RequestWalk,
} from '../../stdlib/records/query.js';
import { tableOf } from '../../stdlib/records/columns.js';
import { PEOPLE } from './records-conformance.js';
import { MAX_CURSOR_LENGTH, encodeCursor } from '../../stdlib/records/cursor.js';
import { RecordValue, shapeOf } from '../../stdlib/records/record.js';
import { InvalidQueryError, MAX_LIMIT, MAX_QUERY_ROWS, type Query } from '../../stdlib/records/store.js';

const field = (name: string, type: RecordType['fields'][number]['type'], decorators: string[] = []) => ({
  name,
  type,
  optional: false,
  required: true,
  decorators: decorators.map((d) => ({ name: d, args: [] })),
  doc: null,
});

const USER: RecordType = {
  name: 'User',
  fields: [field('email', 'text'), field('age', 'int'), field('admin', 'bool'), field('tags', 'list'), field('secret', 'text', ['hidden'])],
  doc: null,
  file: 'users.rvm',
  line: 1,
  col: 1,
  validate: (input) => ({ value: input, errors: null }),
};
const shape = shapeOf(USER);

/** A request none of whose data reached the filter. */
const WALK: RequestWalk = { requestOrigin: () => null, app: TEST_APP };
const SECRET = TEST_APP.secrets.appSecret();

function problem(run: () => unknown): QueryProblem {
  try {
    run();
  } catch (e) {
    assert.ok(e instanceof QueryProblem, String(e));
    return e;
  }
  return assert.fail('expected a QueryProblem');
}

describe('record queries', () => {
  test('a filter names declared fields (and id, created_at, updated_at), with the nearest name', () => {
    assert.deepEqual(walkFilter(shape, { email: 'a', id: 'x', created_at: { gt: '2026-01-01T00:00:00.000Z' } }), {
      email: 'a',
      id: 'x',
      created_at: { gt: '2026-01-01T00:00:00.000Z' },
    });
    const p = problem(() => walkFilter(shape, { emial: 'a' }));
    assert.match(p.message, /'emial' is not a field of User/);
    assert.equal(p.hint, "did you mean 'email'?");
  });

  test('operators must exist and fit the field; values must be of its type', () => {
    assert.equal(problem(() => walkFilter(shape, { email: { start_with: 'a' } })).hint, "did you mean 'starts_with'?");
    assert.match(problem(() => walkFilter(shape, { age: { starts_with: 'a' } })).message, /does not apply to 'age'/);
    assert.match(problem(() => walkFilter(shape, { age: 'old' })).message, /takes an int/);
    assert.match(problem(() => walkFilter(shape, { admin: { gt: true } })).message, /does not apply/);
    assert.match(problem(() => walkFilter(shape, { age: { in: 3 } })).message, /takes a list/);
    assert.match(problem(() => walkFilter(shape, { age: { in: [1, null] } })).message, /without null/);
    assert.match(problem(() => walkFilter(shape, { age: { is_null: 1 } })).message, /true or false/);
    assert.match(problem(() => walkFilter(shape, { tags: 'x' })).message, /list field/);
    assert.deepEqual(walkFilter(shape, { tags: { contains: 'x' }, age: null }), { tags: { contains: 'x' }, age: null });
  });

  test('what the compiler could not know passes unchecked; what it knew is checked', () => {
    assert.deepEqual(walkFilter(shape, { email: UNKNOWN, age: { gt: UNKNOWN } }), { email: UNKNOWN, age: { gt: UNKNOWN } });
    assert.deepEqual(walkFilter(shape, UNKNOWN), {});
    assert.ok(problem(() => walkFilter(shape, { emial: UNKNOWN })));
    assert.ok(problem(() => walkOptions(shape, { limit: UNKNOWN, ordr: UNKNOWN })));
  });

  test('options: order keys, a limit from 1 to MAX_LIMIT, an offset, a cursor; unknown names with a hint', () => {
    const o = walkOptions(shape, { order: ['-age', 'email'], limit: MAX_LIMIT, offset: 3 });
    assert.deepEqual(o.order, [
      { field: 'age', desc: true },
      { field: 'email', desc: false },
    ]);
    assert.equal(o.limit, MAX_LIMIT);
    assert.equal(walkOptions(shape, null).limit, 50);
    assert.match(problem(() => walkOptions(shape, { limit: MAX_LIMIT + 1 })).message, /from 1 to 1000/);
    assert.match(problem(() => walkOptions(shape, { limit: 0 })).message, /from 1 to 1000/);
    assert.equal(problem(() => walkOptions(shape, { order: '-agee' })).hint, "did you mean 'age'?");
    assert.match(problem(() => walkOptions(shape, { order: 'tags' })).message, /cannot order by 'tags'/);
    assert.equal(problem(() => walkOptions(shape, { lmit: 3 })).hint, "did you mean 'limit'?");
  });

  test("fields given to create or update: declared ones, never the store's own", () => {
    walkFields(shape, { email: UNKNOWN, age: 3, tags: ['a'] }, 'User.create');
    assert.equal(problem(() => walkFields(shape, { emial: UNKNOWN }, 'User.create')).hint, "did you mean 'email'?");
    assert.match(problem(() => walkFields(shape, { id: 'x' }, 'User.create')).message, /set by the store/);
    assert.match(problem(() => walkFields(shape, { tags: 'x' }, 'User.create')).message, /list field/);
  });

  test('at run time a problem is InvalidQueryError (400 invalid_query), with the hint in its message', () => {
    assert.throws(
      () => buildQuery(shape, { emial: 'x' }, null, WALK),
      (e: unknown) => e instanceof InvalidQueryError && e.code === 'invalid_query' && /did you mean 'email'/.test(e.message),
    );
  });

  test('an operator object from the request is refused; one the code wrote is honoured, even holding request values', () => {
    const sent = { email: { ne: null }, ages: [1, 2] } as Value as { email: Value; ages: Value };
    const walk: RequestWalk = { requestOrigin: (v) => (v === sent.email || v === sent.ages ? 'raw' : null), app: TEST_APP };
    const p = problem(() => walkFilter(shape, { email: sent.email }, walk));
    assert.match(p.message, /condition on 'email' is an object from the request/);
    assert.deepEqual(walkFilter(shape, { age: { in: sent.ages } }, walk), { age: { in: [1, 2] } }, "the route wrote 'in'; the list holds values");
    assert.deepEqual(walkFilter(shape, { email: { ne: null } }, walk), { email: { ne: null } });
    const validated = { role: { in: ['a'] } } as Value as { role: Value };
    const fromValidated: RequestWalk = { requestOrigin: (v) => (v === validated.role ? 'validated' : null), app: TEST_APP };
    assert.ok(
      problem(() => walkFilter(shape, { email: validated.role }, fromValidated)),
      'validated data chooses no operator either',
    );
  });

  test('a @hidden field is compared only for equality or is_null, and never orders', () => {
    assert.deepEqual(walkFilter(shape, { secret: 'h' }), { secret: 'h' });
    assert.deepEqual(walkFilter(shape, { secret: { eq: 'h' } }), { secret: { eq: 'h' } });
    assert.deepEqual(walkFilter(shape, { secret: { is_null: true } }), { secret: { is_null: true } });
    for (const op of ['ne', 'gt', 'gte', 'lt', 'lte', 'starts_with', 'contains', 'in', 'not_in']) {
      const value = op === 'in' || op === 'not_in' ? ['h'] : 'h';
      const p = problem(() => walkFilter(shape, { secret: { [op]: value } }));
      assert.match(p.message, new RegExp(`operator '${op}' does not apply to 'secret', a @hidden field`));
      assert.match(p.hint ?? '', /eq, is_null/);
    }
    assert.match(problem(() => walkOptions(shape, { order: '-secret' })).message, /cannot order by 'secret', a @hidden field/);
    assert.match(problem(() => walkOptions(shape, { order: ['email', 'secret'] })).message, /cannot order by 'secret'/);
  });

  test('hints name visible fields only, and a production answer names none', () => {
    const near = problem(() => walkFilter(shape, { secre: 'x' }));
    assert.doesNotMatch(near.hint ?? '', /secret/);
    assert.match(near.hint ?? '', /^fields are id, email, age, admin, tags, created_at, updated_at$/);
    assert.equal(problem(() => walkOptions(shape, { order: 'secrett' })).hint?.includes('secret'), false);
    const dev = invalidQuery(near, true).message;
    const prod = invalidQuery(near, false).message;
    assert.match(dev, /fields are id, email/);
    assert.equal(prod, "filter field 'secre' is not a field of User");
    assert.match(
      invalidQuery(
        problem(() => walkFilter(shape, { emial: 'x' })),
        false,
      ).message,
      /^filter field 'emial' is not a field of User$/,
    );
    assert.throws(
      () => buildQuery(shape, { emial: 'x' }, null, { ...WALK, app: { ...TEST_APP, dev: false } }),
      (e: unknown) => e instanceof InvalidQueryError && !e.message.includes('email'),
    );
    // A hint about operators names no field: it stays.
    assert.match(
      invalidQuery(
        problem(() => walkFilter(shape, { email: { start_with: 'a' } })),
        false,
      ).message,
      /did you mean 'starts_with'/,
    );
  });

  test('a write given the request data as it came is a compile-time problem saying to validate it', () => {
    for (const source of ['request.body', 'request.query', 'body']) {
      const p = problem(() => walkFields(shape, new RawRequestArg(source), 'User.create'));
      assert.match(p.message, new RegExp(`User.create takes ${source.replace('.', '\\.')}, the request's data as the client sent it`));
      assert.match(p.hint ?? '', /validate the body and pass `body`/);
    }
    walkFields(shape, UNKNOWN, 'User.create');
    assert.deepEqual(walkFilter(shape, new RawRequestArg('request.query')), {}, 'a filter from the request is checked at run time');
  });

  test("buildQuery decodes `after` with the stores' cursor; a damaged or foreign one is invalid_query saying what to pass", () => {
    const cursor = encodeCursor([{ field: 'age', desc: true }], { age: 40, id: 'abc', email: 'x' }, SECRET);
    assert.deepEqual(buildQuery(shape, {}, { order: '-age', after: cursor }, WALK).after, [40, 'abc']);
    for (const [options, why] of [
      [{ order: '-age', after: 'not base64!' }, 'not a cursor text'],
      [{ order: 'email', after: cursor }, 'made for another order'],
      [{ order: '-age', after: 'x'.repeat(MAX_CURSOR_LENGTH + 1) }, 'longer than'],
    ] as const) {
      assert.throws(
        () => buildQuery(shape, {}, options, WALK),
        (e: unknown) =>
          e instanceof InvalidQueryError && e.message.includes(why) && e.message.endsWith("in option 'after' (pass page().next as it is, with the same order)"),
        why,
      );
    }
  });
});

describe('record value', () => {
  test('its JSON and text forms leave @hidden fields out; code still reads them', () => {
    const r = new RecordValue(shape, { id: 'i', email: 'a@b.co', age: 3, admin: false, tags: [], secret: 'hash', created_at: 't', updated_at: 't' });
    assert.equal(r.get('secret'), 'hash');
    assert.deepEqual(Object.keys(r.toJSON() as object), ['id', 'email', 'age', 'admin', 'tags', 'created_at', 'updated_at']);
    assert.ok(!toText(r).includes('hash'));
    assert.ok(!JSON.stringify(r).includes('hash'));
  });

  test('writes: declared fields only; id and time stamps are read-only', () => {
    const r = new RecordValue(shape, { email: 'a@b.co' });
    r.set('age', 4);
    assert.equal(r.get('age'), 4);
    assert.equal(r.get('admin'), null);
    assert.equal(r.id, null);
    assert.throws(
      () => r.set('agee', 1),
      (e: unknown) => e instanceof RvmError && e.code === 'unknown_field' && /did you mean 'age'/.test(e.message),
    );
    assert.throws(
      () => r.get('nope'),
      (e: unknown) => e instanceof RvmError && e.code === 'unknown_field',
    );
    assert.throws(
      () => r.get('secrett'),
      (e: unknown) => e instanceof RvmError && e.code === 'unknown_field' && !e.message.includes("'secret'"),
      'the nearest name is never a @hidden field',
    );
    assert.throws(
      () => r.set('id', 'x'),
      (e: unknown) => e instanceof RvmError && e.code === 'read_only',
    );
    assert.deepEqual(r.fields(), { email: 'a@b.co', age: 4 });
  });
});

describe('the check of a query against a table: what every store runs', () => {
  const table = tableOf(PEOPLE);
  const ID = '01900000-0000-7000-8000-00000000000A';
  const query = (q: Partial<Query>): Query => ({ filter: {}, order: [], limit: 10, offset: 0, ...q });

  test('a checked query: columns resolved, values canonical, the effective order, cursor values checked', () => {
    const checked = checkQuery(
      table,
      query({
        filter: {
          name: 'Ada',
          age: { gte: 0, in: [1, 2] },
          seen: { lt: '2026-01-02T03:04:05+01:00' },
          id: ID,
          tags: { contains: 'x' },
          meta: { is_null: true },
        },
        order: [{ field: 'age', desc: true }],
        after: [3, ID],
        offset: 5,
      }),
    );
    assert.deepEqual(
      checked.conditions.map((c) => [c.field.name, c.op, c.value]),
      [
        ['name', 'eq', 'Ada'],
        ['age', 'gte', 0],
        ['age', 'in', [1, 2]],
        ['seen', 'lt', '2026-01-02T02:04:05.000Z'],
        ['id', 'eq', ID.toLowerCase()],
        ['tags', 'contains', 'x'],
        ['meta', 'is_null', true],
      ],
    );
    assert.deepEqual(
      checked.order.map((k) => [k.field.name, k.desc]),
      [
        ['age', true],
        ['id', true],
      ],
    );
    assert.deepEqual(checked.after, [3, ID.toLowerCase()]);
    assert.deepEqual([checked.limit, checked.offset], [10, 5]);
    assert.equal(checkQuery(table, query({})).after, null);
  });

  test('each kind of bad query is one InvalidQueryError, saying what is wrong', () => {
    const refused = (q: Partial<Query>, message: RegExp) =>
      assert.throws(
        () => checkQuery(table, query(q)),
        (e: unknown) => e instanceof InvalidQueryError && e.code === 'invalid_query' && message.test(e.message),
        message.source,
      );
    // Not a filter, an unknown field or operator (with the nearest name), an operator the column does not take.
    refused({ filter: [] as unknown as Query['filter'] }, /a filter is an object/);
    refused({ filter: { nmae: 'x' } }, /unknown field 'nmae' of people \(did you mean 'name'\?\)/);
    refused({ filter: { name: { eqq: 'x' } } }, /unknown operator 'eqq' on field 'name' \(did you mean 'eq'\?\)/);
    refused(
      { filter: { age: { contains: 1 } } },
      /operator 'contains' does not apply to int field 'age' \(it takes eq, ne, gt, gte, lt, lte, in, not_in, is_null\)/,
    );
    refused({ filter: { tags: ['a'] } }, /operator 'eq' does not apply to list field 'tags'/);
    refused({ filter: { id: { starts_with: '0190' } } }, /operator 'starts_with' does not apply to uuid field 'id'/);
    // A value that does not fit its column, null where an operator needs a value, a malformed operand.
    refused({ filter: { age: 1.5 } }, /field 'age' needs an integer/);
    refused({ filter: { born: '2001-02-29' } }, /field 'born' needs a date/);
    refused({ filter: { age: { gt: null } } }, /operator 'gt' of field 'age' needs a value, not null/);
    refused({ filter: { age: { in: 3 } } }, /operator 'in' of field 'age' needs a list/);
    refused({ filter: { age: { in: [1, null] } } }, /operator 'in' of field 'age' needs a value, not null/);
    refused({ filter: { age: { not_in: Array.from({ length: MAX_IN_VALUES + 1 }, (_, i) => i) } } }, /takes at most 1000 values/);
    refused({ filter: { name: { is_null: 'yes' } } }, /operator 'is_null' of field 'name' needs true or false/);
    refused({ filter: { tags: { contains: ['a'] } } }, /operator 'contains' of list field 'tags' needs a text, number or bool/);
    // An order that names no sortable column, a cursor that does not fit, bounds.
    refused({ order: 'name' as unknown as Query['order'] }, /order is a list of keys/);
    refused({ order: [{ desc: true } as unknown as Query['order'][number]] }, /an order key names a field/);
    refused({ order: [{ field: 'agee', desc: false }] }, /unknown field 'agee' of people \(did you mean 'age'\?\)/);
    refused({ order: [{ field: 'meta', desc: false }] }, /object field 'meta' cannot order a query/);
    refused({ after: ['x', ID] }, /invalid cursor: it does not fit this order/);
    refused({ after: [null] }, /field 'id' needs a UUID/);
    refused({ limit: 0 }, new RegExp(`limit must be an integer from 1 to ${MAX_QUERY_ROWS}`));
    refused({ offset: MAX_OFFSET + 1 }, new RegExp(`offset must be an integer from 0 to ${MAX_OFFSET}`));
  });

  test('a count checks its filter alone, the same way', () => {
    assert.deepEqual(
      checkFilter(table, { score: { lte: -0 } }).map((c) => [c.field.name, c.op, Object.is(c.value, 0)]),
      [['score', 'lte', true]],
    );
    assert.throws(() => checkFilter(table, { score: 'high' }), /field 'score' needs a finite number/);
  });
});
