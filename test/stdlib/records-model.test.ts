/**
 * The model test of the record stores: random sequences of insert, update, delete, find, select
 * (filters with every operator, orders, limits, offsets, and keyset `after` from the previous
 * page) and count, applied side by side to the MemoryStore (the model), a SqliteStore on
 * `:memory:` and a PostgresStore on a real server. Every answer must be the same: rows (ids
 * compared through the logical key of the insert that made them; time stamps aside, as each
 * store stamps its own clock), counts, booleans, and the code of any error. Concurrent
 * transactions (transfers and withdrawals) must reach the model's final state on every store.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import pg from 'pg';
import { MemoryStore } from '../../stdlib/records/memory.js';
import { SqliteStore } from '../../stdlib/records/sqlite.js';
import { PostgresStore } from '../../stdlib/records/postgres.js';
import type { Filter, FilterOp, OrderKey, RecordStore, Row, StoredValue, TableSpec } from '../../stdlib/records/store.js';
import { usePostgres } from '../support/postgres.js';
import { PEOPLE } from './records-conformance.js';

/**
 * Sequences per run and commands per sequence: 30 × up to 24 keeps the PostgreSQL side to a few
 * hundred commands (a few seconds), as the CI budget asks; FC_MODEL_RUNS raises it for a soak.
 */
const MODEL_RUNS = Number(process.env.FC_MODEL_RUNS) || 30;
const MAX_COMMANDS = 24;

/** The conformance suite's table under another name: every field type, a unique and an indexed field. */
const ITEMS: TableSpec = { ...PEOPLE, name: 'items', file: 'app/items.rvm', line: 1 };

// Small domains, so filters hit, ties happen and the unique email clashes.
const texts = fc.constantFrom('a', 'A', 'ab', 'aB', 'b', 'b%c', '_x', 'x_', '\\', "o'k", 'é', 'e', '☃', '😀', '', 'a b', 'Z');
const emails = fc.constantFrom('e1@x', 'e2@x', 'E1@x', 'e3@x');
const ints = fc.oneof(fc.integer({ min: -3, max: 5 }), fc.constantFrom(2 ** 40, -(2 ** 40)));
const numbers = fc.constantFrom(-1.5, 0, 0.25, 1, 2.5, 1e10, -3);
const dates = fc.constantFrom('1999-12-31', '2000-01-01', '2000-02-29', '2024-06-01');
const datetimes = fc.constantFrom('2024-01-02T03:04:05.006Z', '2024-01-02T03:04:05.007Z', '2023-05-01T00:00:00.000Z', '2024-06-01T10:00:00.000Z');
const listItems = fc.oneof(texts, fc.integer({ min: -2, max: 2 }), fc.boolean());
const lists = fc.array(listItems, { maxLength: 3 });
const objects = fc.dictionary(fc.constantFrom('k', 'j', 'x y'), fc.oneof(texts, fc.integer({ min: 0, max: 3 }), fc.constant(null)), {
  maxKeys: 2,
  noNullPrototype: true,
});

/** A value for each field (null where the field is optional). */
const VALUES: Record<string, fc.Arbitrary<StoredValue>> = {
  name: texts,
  email: fc.option(emails, { freq: 3 }),
  age: fc.option(ints, { freq: 4 }),
  score: fc.option(numbers, { freq: 4 }),
  active: fc.boolean(),
  born: fc.option(dates, { freq: 4 }),
  seen: fc.option(datetimes, { freq: 4 }),
  tags: fc.option(lists, { freq: 4 }),
  meta: fc.option(objects, { freq: 4 }),
};
/** Scalars a filter compares each field with. */
const SCALARS: Record<string, fc.Arbitrary<StoredValue>> = {
  name: texts,
  email: emails,
  age: ints,
  score: numbers,
  active: fc.boolean(),
  born: dates,
  seen: datetimes,
};
const ORDERABLE = ['name', 'email', 'age', 'score', 'active', 'born', 'seen'];

const fieldsArb = fc.record(VALUES, { requiredKeys: ['name'] }) as fc.Arbitrary<Row>;
const changesArb = fc.record(VALUES, { requiredKeys: [] }).map((changes) => {
  const out = changes as Row;
  if (out.name === null) delete out.name;
  if (out.active === null) delete out.active;
  return out;
});

/** One condition on `field`: plain equality, or an operator object (one or two operators). */
function conditionArb(field: string): fc.Arbitrary<StoredValue | Partial<Record<FilterOp, StoredValue>>> {
  if (field === 'tags')
    return fc.oneof(
      listItems.map((v) => ({ contains: v })),
      fc.boolean().map((b) => ({ is_null: b })),
    );
  if (field === 'meta') return fc.boolean().map((b) => ({ is_null: b }));
  const scalar = SCALARS[field]!;
  const ops: [FilterOp, fc.Arbitrary<StoredValue>][] = [
    ['eq', fc.option(scalar, { freq: 5 })],
    ['ne', fc.option(scalar, { freq: 5 })],
    ['in', fc.array(scalar, { maxLength: 3 })],
    ['not_in', fc.array(scalar, { minLength: 1, maxLength: 3 })],
    ['is_null', fc.boolean()],
  ];
  if (field !== 'active') for (const op of ['gt', 'gte', 'lt', 'lte'] as const) ops.push([op, scalar]);
  if (field === 'name' || field === 'email') ops.push(['contains', texts], ['starts_with', texts]);
  const one = fc.constantFrom(...ops).chain(([op, value]) => value.map((v) => [op, v] as const));
  return fc.oneof(
    fc.option(scalar, { freq: 5 }),
    fc.array(one, { minLength: 1, maxLength: 2 }).map((pairs) => Object.fromEntries(pairs) as Partial<Record<FilterOp, StoredValue>>),
  );
}

const filterArb: fc.Arbitrary<Filter> = fc
  .uniqueArray(fc.constantFrom(...Object.keys(VALUES)), { maxLength: 2 })
  .chain((fields) =>
    fields.length === 0
      ? fc.constant({})
      : fc.tuple(...fields.map(conditionArb)).map((conds) => Object.fromEntries(fields.map((f, i) => [f, conds[i]!])) as Filter),
  );
const orderArb: fc.Arbitrary<OrderKey[]> = fc.uniqueArray(fc.record({ field: fc.constantFrom(...ORDERABLE), desc: fc.boolean() }), {
  maxLength: 3,
  selector: (k) => k.field,
});

/** A command of a sequence; `key` picks among the logical rows made so far (deleted ones too). */
type Command =
  | { kind: 'insert'; fields: Row }
  | { kind: 'update'; key: number; changes: Row }
  | { kind: 'delete'; key: number }
  | { kind: 'find'; key: number }
  | { kind: 'select'; filter: Filter; order: OrderKey[]; limit: number; offset: number; pages: number }
  | { kind: 'count'; filter: Filter };

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 5, arbitrary: fieldsArb.map((fields) => ({ kind: 'insert' as const, fields })) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('update' as const), key: fc.nat(40), changes: changesArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), key: fc.nat(40) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('find' as const), key: fc.nat(40) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('select' as const),
      filter: filterArb,
      order: orderArb,
      limit: fc.integer({ min: 1, max: 6 }),
      offset: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.nat(4) }),
      pages: fc.integer({ min: 1, max: 4 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('count' as const), filter: filterArb }) },
);

/** The keyset position after `row` in `order`: the values of the order's keys, up to and ending with `id` (store.ts Query.after). */
function afterRow(order: readonly OrderKey[], row: Row): StoredValue[] {
  const values: StoredValue[] = [];
  const seen = new Set<string>();
  for (const { field } of order) {
    if (seen.has(field)) continue;
    seen.add(field);
    values.push(row[field] ?? null);
    if (field === 'id') return values;
  }
  values.push(row.id ?? null);
  return values;
}

/** One store under test and the ids it gave to each logical row. */
interface Subject {
  name: string;
  store: RecordStore;
  ids: (string | null)[];
}

/** What an answer looks like once store-specific ids and clocks are taken out. */
type Outcome = { ok: unknown } | { error: string };

function logical(subject: Subject, row: Row | null): unknown {
  if (row === null) return null;
  const { id, created_at: created, updated_at: updated, ...fields } = row;
  assert.ok(typeof created === 'string' && typeof updated === 'string' && updated >= created, `${subject.name}: time stamps ${created} ≤ ${updated}`);
  const key = subject.ids.indexOf(id as string);
  assert.ok(key >= 0, `${subject.name} answered a row id it never made: ${String(id)}`);
  return { key, ...fields };
}

async function outcome(run: () => Promise<unknown>): Promise<Outcome> {
  try {
    return { ok: await run() };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return { error: typeof code === 'string' && !/^SQLITE|^\d/.test(code) ? code : `uncoded: ${String(error)}` };
  }
}

/** Applies one command to one subject, the answer made comparable. */
async function apply(subject: Subject, command: Command): Promise<Outcome> {
  const { store, ids } = subject;
  const idOf = (key: number): string =>
    ids.length === 0 ? '01900000-0000-7000-8000-000000000000' : (ids[key % ids.length] ?? '01900000-0000-7000-8000-000000000000');
  switch (command.kind) {
    case 'insert':
      return outcome(async () => {
        const row = await store.insert('items', command.fields);
        ids.push(row.id as string);
        return logical(subject, row);
      });
    case 'update':
      return outcome(async () => logical(subject, await store.update('items', idOf(command.key), command.changes)));
    case 'delete':
      return outcome(async () => store.delete('items', idOf(command.key)));
    case 'find':
      return outcome(async () => logical(subject, await store.find('items', idOf(command.key))));
    case 'count':
      return outcome(async () => store.count('items', command.filter));
    case 'select':
      return outcome(async () => {
        const pages: unknown[] = [];
        let after: StoredValue[] | undefined;
        for (let i = 0; i < command.pages; i++) {
          const rows = await store.select('items', {
            filter: command.filter,
            order: command.order,
            limit: command.limit,
            offset: i === 0 ? command.offset : 0,
            ...(after ? { after } : {}),
          });
          pages.push(rows.map((r) => logical(subject, r)));
          if (rows.length < command.limit) break;
          after = afterRow(command.order, rows[rows.length - 1]!);
        }
        return pages;
      });
  }
}

/** Runs `commands` on every subject in step; the model's answer is the expected one. */
async function runSequence(subjects: Subject[], commands: Command[]): Promise<void> {
  for (const [i, command] of commands.entries()) {
    const answers = await Promise.all(subjects.map((s) => apply(s, command)));
    for (const [j, answer] of answers.entries()) {
      if (j === 0) continue;
      assert.deepEqual(answer, answers[0], `command ${i} ${JSON.stringify(command)}: ${subjects[j]!.name} differs from ${subjects[0]!.name}`);
    }
  }
}

const server = usePostgres();
let schemas = 0;

/**
 * A test's PostgreSQL side: a store in a schema of its own, synced once, and a client that empties
 * its table. Every sequence starts from the empty table, as from the fresh memory and SQLite
 * stores: a fresh schema and sync per sequence cost the server ~0.3 s each, most of the file's time.
 */
interface PostgresSide {
  store: PostgresStore;
  /** Empties the table, for the next sequence. */
  empty(): Promise<void>;
  close(): Promise<void>;
}

async function postgresSide(): Promise<PostgresSide> {
  const schema = `model_${++schemas}`;
  const admin = new pg.Client({ connectionString: server().url, options: `-c search_path=${schema}` });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  const store = new PostgresStore({ connectionString: server().url, schema, max: 2 });
  await store.sync([ITEMS], { allowDestructive: false });
  return {
    store,
    async empty() {
      await admin.query('TRUNCATE items');
    },
    async close() {
      await store.close();
      await admin.end();
    },
  };
}

/** The three stores of one sequence, each with no rows: a new memory and SQLite store, `postgres`'s emptied. */
async function subjects(postgres: PostgresSide): Promise<Subject[]> {
  const list: Subject[] = [
    { name: 'memory', store: new MemoryStore(), ids: [] },
    { name: 'sqlite', store: new SqliteStore(':memory:'), ids: [] },
  ];
  for (const s of list) await s.store.sync([ITEMS], { allowDestructive: false });
  await postgres.empty();
  return [...list, { name: 'postgres', store: postgres.store, ids: [] }];
}

/** Closes the stores `subjects` opened (not `postgres`'s, which the test closes). */
async function closeSubjects(list: Subject[]): Promise<void> {
  await Promise.all(list.filter((s) => s.name !== 'postgres').map((s) => s.store.close()));
}

/** Runs `body` with a test's PostgreSQL side, closed however it ends. */
async function withPostgres(body: (postgres: PostgresSide) => Promise<void>): Promise<void> {
  const postgres = await postgresSide();
  try {
    await body(postgres);
  } finally {
    await postgres.close();
  }
}

test('memory, SQLite and PostgreSQL answer every random command sequence alike', () =>
  withPostgres(async (postgres) => {
    await fc.assert(
      fc.asyncProperty(fc.array(commandArb, { minLength: 1, maxLength: MAX_COMMANDS }), async (commands) => {
        const list = await subjects(postgres);
        try {
          await runSequence(list, commands);
        } finally {
          await closeSubjects(list);
        }
      }),
      { numRuns: MODEL_RUNS },
    );
  }));

test('the model runner notices a store that answers differently', () =>
  withPostgres(async (postgres) => {
    const list = await subjects(postgres);
    try {
      const commands: Command[] = [
        { kind: 'insert', fields: { name: 'a', age: 1 } },
        { kind: 'insert', fields: { name: 'b', age: 2 } },
      ];
      await runSequence(list, commands);
      // A write the model does not see: the next query must tell them apart.
      await list[1]!.store.update('items', list[1]!.ids[0]!, { age: 3 });
      await assert.rejects(
        runSequence(list, [{ kind: 'select', filter: { age: { gt: 1 } }, order: [], limit: 5, offset: 0, pages: 1 }]),
        /sqlite differs from memory/,
      );
      await assert.rejects(runSequence(list, [{ kind: 'find', key: 0 }]), /sqlite differs/);
    } finally {
      await closeSubjects(list);
    }
  }));

/**
 * A concurrent transaction of the model: money moved between accounts 1 and 2, or 10 withdrawn
 * from account 0 unless that would overdraw it. Run in any serial order they end the same (the
 * transfers add up; the first five withdrawals pay, the rest are refused), so every store must
 * reach the model's final state; a lost update or an overdraft tells them apart.
 */
type Move = { kind: 'transfer'; from: number; to: number; amount: number } | { kind: 'withdraw'; from: number; amount: number };

const ACCOUNTS = 3;
const moveArb: fc.Arbitrary<Move> = fc.oneof(
  fc.record({
    kind: fc.constant('transfer' as const),
    from: fc.integer({ min: 1, max: 2 }),
    to: fc.integer({ min: 1, max: 2 }),
    amount: fc.integer({ min: 1, max: 9 }),
  }),
  fc.record({ kind: fc.constant('withdraw' as const), from: fc.constant(0), amount: fc.constant(10) }),
);

/**
 * One move as a `transaction { }` block runs it: read, compute, write back, commit (or roll
 * back a refused withdrawal). Answers whether it was refused.
 */
async function move(store: RecordStore, ids: string[], m: Move): Promise<boolean> {
  const tx = await store.begin();
  try {
    const from = (await tx.find('items', ids[m.from]!))!;
    if (m.kind === 'withdraw' && (from.age as number) < m.amount) {
      await tx.rollback();
      return true;
    }
    await tx.update('items', ids[m.from]!, { age: (from.age as number) - m.amount });
    if (m.kind === 'transfer') {
      const to = (await tx.find('items', ids[m.to]!))!;
      await tx.update('items', ids[m.to]!, { age: (to.age as number) + m.amount });
    }
    await tx.commit();
    return false;
  } catch (error) {
    await tx.rollback();
    throw error;
  }
}

test('concurrent transactions reach the same final state on memory, SQLite and PostgreSQL: no update lost, no withdrawal past the balance', () =>
  withPostgres(async (postgres) => {
    await fc.assert(
      fc.asyncProperty(fc.array(moveArb, { minLength: 10, maxLength: 40 }), async (moves) => {
        const list = await subjects(postgres);
        try {
          const finals = await Promise.all(
            list.map(async ({ store }) => {
              const ids: string[] = [];
              for (let i = 0; i < ACCOUNTS; i++) ids.push((await store.insert('items', { name: `acct${i}`, age: 50 })).id as string);
              // Every move at once: each store must run them as if one after another.
              const refused = (await Promise.all(moves.map((m) => move(store, ids, m)))).filter(Boolean).length;
              const balances = await Promise.all(ids.map(async (id) => (await store.find('items', id))!.age));
              return { balances, refused };
            }),
          );
          const withdrawals = moves.filter((m) => m.kind === 'withdraw').length;
          assert.deepEqual(finals[0]!.balances[0], 50 - 10 * Math.min(withdrawals, 5), 'the model pays out at most the balance');
          for (const [i, final] of finals.entries()) assert.deepEqual(final, finals[0], `${list[i]!.name} differs from ${list[0]!.name}`);
        } finally {
          await closeSubjects(list);
        }
      }),
      { numRuns: 5 },
    );
  }));
