/**
 * The record provider: `T.new`, `T.create`, `T.find`, `T.find_by`, `T.where`, `T.page`,
 * `T.count`, `T.update`, `T.delete` for every `type T`, and the statements `save r`, `delete r`
 * and `transaction { }`, over any RecordStore. Writes are validated by the type's decorators
 * (422 `validation_failed` with `details`, the request-validation shape); store failures answer
 * with their codes (409 `conflict`, 400 `invalid_query`, 503 `database_unavailable`).
 */
import {
  HTTP,
  OutageLog,
  RvmError,
  getField,
  isPlainObject,
  typeName,
  type CallContext,
  type ErrorResponseSpec,
  type FieldProblem,
  type Halt,
  type OutageLines,
  type RecordMethod,
  type RecordProvider,
  type RecordType,
  type Value,
  type ValueObject,
} from '../../plugins/sdk.js';
import {
  ConflictError,
  DatabaseUnavailableError,
  InvalidQueryError,
  StoreOverloadedError,
  UnstorableValueError,
  own,
  put,
  LATER,
  type Operation,
  type Query,
  type RecordOperations,
  type RecordOps,
  type RecordStore,
  type Records,
  type Row,
  type TableSpec,
  type Transaction,
} from './store.js';
import { RecordValue, SYSTEM_FIELDS, shapeOf, storedValue, unknownField, type TypeShape } from './record.js';
import { QueryProblem, UNVALIDATED_HINT, buildQuery, invalidQuery, walkFields, walkFilter, walkId, walkOptions } from './query.js';
import { tableSpecOf } from './table.js';
import { encodeCursor } from './cursor.js';

/** Where a request keeps its open transaction (`ctx.locals`). */
const TRANSACTION = 'records.transaction';

/** What any record method can answer instead of its value (answerFailure), for the reference. */
const READ_ERRORS: ErrorResponseSpec[] = [
  { status: HTTP.invalid_query.status, code: HTTP.invalid_query.code, description: 'A filter, option or `after` cursor the store refuses.' },
  { status: HTTP.database_unavailable.status, code: HTTP.database_unavailable.code, description: 'The database could not be reached.' },
  { status: HTTP.overloaded.status, code: HTTP.overloaded.code, description: 'The rows read would pass the result memory.', headers: ['Retry-After'] },
];
/** What a write can answer besides: a refused value, or a clash with a `@unique` field. */
const WRITE_ERRORS: ErrorResponseSpec[] = [
  ...READ_ERRORS,
  { status: HTTP.conflict.status, code: HTTP.conflict.code, description: 'A `@unique` field already holds the value.' },
  { status: HTTP.validation_failed.status, code: HTTP.validation_failed.code, description: "The type's decorators refuse the record (with `details`)." },
];

/**
 * The database's outages as the app log tells them: the cause once, when a request first answers
 * 503 database_unavailable, and once more when a request reaches the database again, however many
 * fail meanwhile (a line per failed request would bury the rest of the log, spec/deploy.md).
 */
const DATABASE_OUTAGE: OutageLines = {
  down: (cause) => `records: ${cause}; requests that need it answer 503 database_unavailable until it is back`,
  back: 'records: the database is available again',
};

/**
 * A store's failure (or a query the provider refused) as the answer it makes; anything else is
 * rethrown. `shape` is the type a write stored, whose `@hidden` fields a refusal does not name.
 */
function answerFailure(ctx: CallContext, e: unknown, outage: OutageLog, shape?: TypeShape): Halt {
  if (e instanceof QueryProblem) return answerFailure(ctx, invalidQuery(e, ctx.app.dev), outage);
  if (e instanceof ConflictError) return ctx.fail(409, e.field === null ? 'Conflict' : `Conflict: ${e.field} is already taken`, 'conflict');
  if (e instanceof InvalidQueryError) return ctx.fail(400, e.message, 'invalid_query');
  if (e instanceof UnstorableValueError) return refuse(ctx, shape ?? null, [{ field: e.field, rule: e.rule, message: e.message }]);
  if (e instanceof DatabaseUnavailableError) {
    outage.failed(e, ctx);
    return ctx.fail(503, 'The database is unavailable', 'database_unavailable');
  }
  if (e instanceof StoreOverloadedError) return ctx.fail(503, 'The server is busy; try again shortly', 'overloaded', { 'retry-after': String(e.retryAfterS) });
  throw e;
}

/**
 * The 400 of a write given the client's data as it came (`User.create(request.body)`, through a
 * variable the compiler could not follow): the client would choose every field, `role` and
 * `@hidden` ones included. Null for anything else: the validated `body`, or fields the code named.
 */
function unvalidated(ctx: CallContext, shape: TypeShape, input: Value | undefined, what: string): Halt | null {
  if (!isPlainObject(input) || ctx.requestOrigin(input) !== 'raw') return null;
  return ctx.fail(400, `${shape.type.name}.${what} was given the request's data as the client sent it (${UNVALIDATED_HINT})`, 'invalid_query');
}

/**
 * The 422 of a refused write: request validation's body. Its details name visible fields only: a
 * `@hidden` field is the route's to set, never the client's, so its failure goes to the app log.
 */
function refuse(ctx: CallContext, shape: TypeShape | null, details: FieldProblem[]): Halt {
  const shown: ValueObject[] = [];
  for (const d of details) {
    if (shape?.hidden.has(d.field)) ctx.log(`${shape.type.name}: the @hidden field '${d.field}' ${d.message} (${d.rule})`);
    else shown.push({ ...d });
  }
  return ctx.respond(422, { error: 'Validation failed', code: 'validation_failed', details: shown });
}

/** The declared fields of `input` (an object or a record), system fields left out; undeclared ones are problems. */
function declaredFields(shape: TypeShape, input: Value | undefined): { fields: ValueObject; unknown: FieldProblem[] } {
  const fields: ValueObject = {};
  const unknown: FieldProblem[] = [];
  if (input instanceof RecordValue) return { fields: input.fields() as ValueObject, unknown };
  if (input === undefined || input === null) return { fields, unknown };
  if (!isPlainObject(input)) throw new RvmError(`${shape.type.name} fields are an object, got ${typeName(input)}`, 'type_error');
  for (const [name, value] of Object.entries(input)) {
    if (SYSTEM_FIELDS.includes(name)) continue;
    if (!shape.declared.has(name)) unknown.push({ field: name, rule: 'unknown_field', message: `is not a field of ${shape.type.name}` });
    else put(fields, name, value);
  }
  return { fields, unknown };
}

/** Validates a whole record; the stored form of its fields, or every failure. */
function validated(shape: TypeShape, fields: ValueObject): { row: Row; errors: null } | { row: null; errors: FieldProblem[] } {
  const result = shape.type.validate(fields);
  if (result.errors !== null) return { row: null, errors: result.errors };
  const row: Row = {};
  for (const f of shape.type.fields) {
    if (!Object.hasOwn(result.value, f.name)) continue;
    let value = storedValue(result.value[f.name]!);
    // One spelling per instant, so every store compares and returns datetimes alike.
    if (f.type === 'datetime' && typeof value === 'string') value = new Date(value).toISOString();
    put(row, f.name, value);
  }
  return { row, errors: null };
}

/** Where a provider's store comes from: acquired at start (only when the app declares types), released at close. */
export interface StoreSource {
  /** How the start line names the database (`sqlite .rvm/data.sqlite`), never a password. */
  readonly name: string;
  acquire(): RecordStore;
  release(): Promise<void>;
}

/** What `rvm db` reaches of a provider this module made: the app's tables and where its store comes from. */
export interface SchemaAccess {
  /** The declared tables of the app, as last linked. */
  tables(): readonly TableSpec[];
  /** The name of the database (`sqlite .rvm/data.sqlite`). */
  readonly database: string;
  /** The store, acquired for the caller; `release` gives it back. */
  acquire(): RecordStore;
  release(): Promise<void>;
}

const access = new WeakMap<RecordProvider, SchemaAccess>();

/** The schema access of a provider made by recordProvider over a StoreSource; null for any other. */
export function schemaAccess(provider: RecordProvider): SchemaAccess | null {
  return access.get(provider) ?? null;
}

/** What a withheld change asks of the developer. */
const WITHHELD_HINT = 'run `rvm db diff` to see the SQL, then `rvm db apply --allow-destructive` to apply it';

/** The provider over `source`: a store given whole (tests), or one acquired when the app starts. */
export function recordProvider(source: RecordStore | StoreSource): RecordProvider {
  let tables: TableSpec[] = [];
  let synced: Promise<void> | null = null;
  const given = 'sync' in source ? source : null;
  let acquired: RecordStore | null = null;
  /** The store; a source's is acquired by the first use when the app was not started. */
  const current = (): RecordStore => given ?? (acquired ??= (source as StoreSource).acquire());

  /** Whether the store has been brought to the app's types (record operations then start at once). */
  let isSynced = false;
  const outage = new OutageLog(DATABASE_OUTAGE);

  /** Brings the store to the app's types once per link (the first record operation waits for it). */
  const ready = (): Promise<void> => {
    if (synced !== null) return synced;
    const attempt: Promise<void> = current()
      .sync(tables, { allowDestructive: false })
      .then(
        (plan) => {
          if (plan.withheld.length > 0) {
            throw new RvmError(
              `the database needs changes rvm will not make by itself: ${plan.withheld.map((c) => c.description).join('; ')}`,
              'internal_error',
            );
          }
          // Unless the app was linked again meanwhile (its types then wait for their own sync).
          if (synced === attempt) isSynced = true;
        },
        (e: unknown) => {
          // A database that was down is tried again by the next request.
          if (synced === attempt) synced = null;
          throw e;
        },
      );
    synced = attempt;
    return attempt;
  };

  /** The records of this request: its open transaction, else the store. */
  const recordsOf = (ctx: CallContext): Records => (ctx.locals.get(TRANSACTION) as Transaction | undefined) ?? current();

  /**
   * Runs `work` on the request's records once the store is ready and answers `answer` of its
   * result; store failures answer.
   */
  const later = <T>(
    ctx: CallContext,
    work: (ops: RecordOps) => Promise<T>,
    answer: (value: T) => Value | Halt = asValue,
    shape?: TypeShape,
  ): Value | Halt | Promise<Value | Halt> => {
    let result: Promise<T>;
    try {
      result = isSynced ? work(recordsOf(ctx)) : ready().then(() => work(recordsOf(ctx)));
    } catch (e) {
      return answerFailure(ctx, e, outage, shape);
    }
    // The answer and the failure in one `then`: one promise per operation on a network database.
    // Only during an outage does a success also end it (a closure more per operation then, not always).
    const answered = outage.isDown
      ? (value: T) => {
          outage.reached(ctx);
          return answer(value);
        }
      : answer;
    return result.then(answered, (e: unknown) => answerFailure(ctx, e, outage, shape));
  };

  /**
   * Runs one operation with the arguments `args` makes and answers `answer` of its result. This is
   * where the form is chosen: records that answer at once (SQLite, its connection free) are
   * answered at once, so the request does not suspend; LATER, or records without the synchronous
   * form, and the operation runs in the asynchronous one.
   */
  const run = <K extends Operation>(
    ctx: CallContext,
    operation: K,
    args: () => RecordOperations[K]['args'],
    answer: (value: RecordOperations[K]['result']) => Value | Halt = asValue,
    shape?: TypeShape,
  ): Value | Halt | Promise<Value | Halt> => {
    let given: RecordOperations[K]['args'];
    try {
      given = args();
      const now = isSynced ? recordsOf(ctx).now : undefined;
      if (now !== undefined) {
        const result = now[operation](...given);
        if (result !== LATER) {
          outage.reached(ctx);
          return answer(result);
        }
      }
    } catch (e) {
      return answerFailure(ctx, e, outage, shape);
    }
    return later(ctx, (ops) => ops[operation](...given), answer, shape);
  };

  /** `query` with its rows charged to the request's result memory (`where` and `page`: up to MAX_LIMIT rows of any size). */
  const charged = (ctx: CallContext, query: Query): Query => {
    query.charge = Object.assign((bytes: number) => ctx.chargeMemory(bytes), { most: ctx.app.limits.maxResultMemory });
    return query;
  };

  const record = (shape: TypeShape, row: Row | null): Value => (row === null ? null : new RecordValue(shape, row));
  const asValue = <T>(value: T): Value | Halt => value as unknown as Value | Halt;

  const method = (
    params: RecordMethod['params'],
    returns: string,
    doc: string,
    fn: (ctx: CallContext, shape: TypeShape, ...args: Value[]) => Value | Halt | Promise<Value | Halt>,
  ): RecordMethod => ({
    params,
    returns,
    doc,
    responses: READ_ERRORS,
    fn: (ctx, type, ...args) => fn(ctx, shapeOf(type), ...args),
  });

  const create = (ctx: CallContext, shape: TypeShape, input: Value | undefined): Value | Halt | Promise<Value | Halt> => {
    const refused = unvalidated(ctx, shape, input, 'create');
    if (refused !== null) return refused;
    const { fields, unknown } = declaredFields(shape, input);
    if (unknown.length > 0) return refuse(ctx, shape, unknown);
    const checked = validated(shape, fields);
    if (checked.errors !== null) return refuse(ctx, shape, checked.errors);
    return run(
      ctx,
      'insert',
      () => [shape.type.name, checked.row],
      (row) => record(shape, row),
      shape,
    );
  };

  const methods: Record<string, RecordMethod> = {
    new: method([{ name: 'fields', type: 'object', optional: true }], 'record', 'A record of the type, not stored until `save`.', (ctx, shape, input) => {
      const refused = unvalidated(ctx, shape, input, 'new');
      if (refused !== null) return refused;
      const { fields, unknown } = declaredFields(shape, input);
      if (unknown.length > 0) throw unknownField(shape, unknown[0]!.field);
      return new RecordValue(shape, fields as Row);
    }),
    create: method(
      [{ name: 'fields', type: 'object' }],
      'record',
      'Validates and stores a new record; returns it with its id and time stamps.',
      (ctx, shape, input) => create(ctx, shape, input),
    ),
    find: method([{ name: 'id', type: 'text' }], 'record?', 'The record with this id, or null.', (ctx, shape, id) =>
      run(
        ctx,
        'find',
        () => [shape.type.name, id as string],
        (row) => record(shape, row),
      ),
    ),
    find_by: method([{ name: 'filter', type: 'object' }], 'record?', 'The first record the filter matches (by id), or null.', (ctx, shape, filter) =>
      run(
        ctx,
        'select',
        () => [shape.type.name, { filter: walkFilter(shape, filter!, ctx), order: [], limit: 1, offset: 0 }, ctx.budget],
        (rows) => record(shape, rows[0] ?? null),
      ),
    ),
    where: method(
      [
        { name: 'filter', type: 'object' },
        { name: 'options', type: 'object', optional: true },
      ],
      'records',
      'The records the filter matches, in `order` (then by id), at most `limit` (50 by default, 1000 at most).',
      (ctx, shape, filter, options) =>
        run(
          ctx,
          'select',
          () => [shape.type.name, charged(ctx, buildQuery(shape, filter!, options ?? null, ctx)), ctx.budget],
          (rows) => rows.map((row) => new RecordValue(shape, row)),
        ),
    ),
    page: method(
      [
        { name: 'filter', type: 'object' },
        { name: 'options', type: 'object', optional: true },
      ],
      'page',
      'One page of the records the filter matches: `{items, next}`, `next` the cursor to pass as `after` (null on the last page).',
      (ctx, shape, filter, options) => {
        let query: Query;
        return run(
          ctx,
          'select',
          () => {
            query = charged(ctx, buildQuery(shape, filter!, options ?? null, ctx));
            // One row more than asked tells whether a next page exists.
            return [shape.type.name, { ...query, limit: query.limit + 1 }, ctx.budget];
          },
          (rows) => {
            const items = rows.slice(0, query.limit);
            const next = rows.length > query.limit ? encodeCursor(query.order, items.at(-1)!, ctx.app.secrets.appSecret()) : null;
            return { items: items.map((row) => new RecordValue(shape, row)), next };
          },
        );
      },
    ),
    count: method([{ name: 'filter', type: 'object', optional: true }], 'int', 'How many records the filter matches (all without one).', (ctx, shape, filter) =>
      run(ctx, 'count', () => [shape.type.name, walkFilter(shape, filter ?? null, ctx), ctx.budget]),
    ),
    update: method(
      [
        { name: 'id', type: 'text' },
        { name: 'changes', type: 'object' },
      ],
      'record?',
      'Validates and stores the changes to the record with this id; returns it updated, or null when there is none.',
      (ctx, shape, id, changes) => {
        const refused = unvalidated(ctx, shape, changes, 'update');
        if (refused !== null) return refused;
        const { fields, unknown } = declaredFields(shape, changes);
        if (unknown.length > 0) return refuse(ctx, shape, unknown);
        return later(
          ctx,
          async (ops) => {
            const old = await ops.find(shape.type.name, id as string);
            if (old === null) return null;
            const merged = new RecordValue(shape, old).fields() as ValueObject;
            for (const [name, value] of Object.entries(fields)) put(merged, name, value);
            const checked = validated(shape, merged);
            if (checked.errors !== null) return refuse(ctx, shape, checked.errors);
            const row: Row = {};
            for (const name of Object.keys(fields)) put(row, name, own(checked.row, name));
            return record(shape, await ops.update(shape.type.name, id as string, row));
          },
          asValue,
          shape,
        );
      },
    ),
    delete: method([{ name: 'id', type: 'text' }], 'bool', 'Deletes the record with this id; true when there was one.', (ctx, shape, id) =>
      run(ctx, 'delete', () => [shape.type.name, id as string]),
    ),
  };
  for (const write of ['create', 'update']) methods[write]!.responses = WRITE_ERRORS;

  const takeTransaction = (ctx: CallContext): Transaction => {
    const tx = ctx.locals.get(TRANSACTION) as Transaction | undefined;
    if (tx === undefined) throw new RvmError('no transaction is open', 'internal_error');
    ctx.locals.delete(TRANSACTION);
    return tx;
  };

  const provider: RecordProvider = {
    methods,
    decorators: ['hidden', 'unique', 'index'],
    declare(types: readonly RecordType[]) {
      tables = types.map(tableSpecOf);
      synced = null;
      isSynced = false;
    },
    async start() {
      if (tables.length === 0 || given !== null) return { database: null, problems: [] };
      const store = current();
      try {
        const plan = await store.sync(tables, { allowDestructive: false });
        if (plan.withheld.length === 0) {
          synced = Promise.resolve();
          isSynced = true;
        }
        const problems = plan.withheld.map((c) => ({
          message: `the database's ${c.table} table does not match the type, and rvm will not change it by itself: ${c.description}`,
          hint: c.remedy ?? WITHHELD_HINT,
          file: c.file,
          line: c.line,
          col: c.col,
        }));
        return { database: (source as StoreSource).name, problems };
      } catch (e) {
        await provider.close!();
        throw e;
      }
    },
    async close() {
      if (acquired === null) return;
      acquired = null;
      synced = null;
      isSynced = false;
      await (source as StoreSource).release();
    },
    checkCall(type, name, args) {
      const shape = shapeOf(type);
      try {
        if (name === 'where' || name === 'page') {
          walkFilter(shape, args[0] ?? null);
          walkOptions(shape, args[1] ?? null);
        } else if (name === 'find_by' || name === 'count') {
          walkFilter(shape, args[0] ?? null);
        } else if (name === 'create' || name === 'new') {
          walkFields(shape, args[0] ?? null, `${type.name}.${name}`);
        } else if (name === 'update') {
          walkId(args[0], `${type.name}.update`);
          walkFields(shape, args[1] ?? null, `${type.name}.update`);
        } else if (name === 'find' || name === 'delete') {
          walkId(args[0], `${type.name}.${name}`);
        }
        return null;
      } catch (e) {
        if (e instanceof QueryProblem) return { message: e.message, hint: e.hint };
        throw e;
      }
    },
    save(ctx, value) {
      if (!(value instanceof RecordValue)) throw new RvmError(`'save' takes a record (from T.new, T.create, T.find…), got ${typeName(value)}`, 'not_a_record');
      const shape = value.shape;
      const checked = validated(shape, value.fields() as ValueObject);
      if (checked.errors !== null) return refuse(ctx, shape, checked.errors);
      const id = value.id;
      return later(
        ctx,
        async (ops) => {
          const row = id === null ? await ops.insert(shape.type.name, checked.row) : await ops.update(shape.type.name, id, checked.row);
          if (row === null) throw new RvmError(`this ${shape.type.name} was deleted since it was read`, 'record_missing');
          value.replace(row);
          return null;
        },
        asValue,
        shape,
      );
    },
    delete(ctx, value) {
      if (!(value instanceof RecordValue)) throw new RvmError(`'delete' takes a record, got ${typeName(value)}`, 'not_a_record');
      const id = value.id;
      if (id === null) throw new RvmError(`this ${value.typeName} was never saved`, 'record_missing');
      return run(
        ctx,
        'delete',
        () => [value.typeName, id],
        () => null,
      );
    },
    begin(ctx) {
      if (ctx.locals.has(TRANSACTION)) throw new RvmError('a transaction is already open in this request', 'nested_transaction');
      return later(ctx, async () => {
        const tx = await current().begin();
        ctx.locals.set(TRANSACTION, tx);
        // A request that ends inside the block (fail, an answer from a fn, a limit) rolls it back.
        ctx.atEnd(() => {
          if (ctx.locals.get(TRANSACTION) !== tx) return;
          ctx.locals.delete(TRANSACTION);
          return tx.rollback();
        });
        return null;
      });
    },
    commit(ctx) {
      const tx = takeTransaction(ctx);
      return later(ctx, async () => {
        try {
          await tx.commit();
        } catch (e) {
          // A commit that failed leaves nothing half-open (a pooled connection goes back).
          await tx.rollback().catch(() => undefined);
          throw e;
        }
        return null;
      });
    },
    async rollback(ctx, error): Promise<Value | Halt> {
      try {
        await takeTransaction(ctx).rollback();
      } catch (e) {
        return answerFailure(ctx, e, outage);
      }
      // The error the block raised, raised again with its message and code (`err.code` in a catch).
      const message = String(getField(error, 'message') ?? 'the transaction failed');
      const code = String(getField(error, 'code') ?? 'runtime_error');
      throw new RvmError(message, code);
    },
  };
  if (given === null) {
    const from = source as StoreSource;
    access.set(provider, { tables: () => tables, database: from.name, acquire: () => from.acquire(), release: () => from.release() });
  }
  return provider;
}
