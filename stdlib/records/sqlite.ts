/**
 * The SQLite store (the default): one better-sqlite3 connection per process on
 * `app/.rvm/data.sqlite`, in WAL mode with `synchronous=NORMAL`, a busy timeout and foreign keys
 * on; every write and transaction in `BEGIN IMMEDIATE`, so several worker processes share the
 * file without SQLITE_BUSY failures mid-transaction.
 *
 * Concurrency inside one process: better-sqlite3 is synchronous, so a single statement never
 * interleaves with another. Only a Transaction spans awaits (the VM runs between its
 * statements), and on a shared connection anything another request ran in that span would join
 * the transaction: its reads would see uncommitted rows and its writes would vanish with a
 * rollback. So one Gate orders the connection: a transaction holds it from begin to commit or
 * rollback, and every other statement (reads too) waits its turn. A second connection per
 * transaction would let reads go on, but not for `:memory:` databases and at the cost of a
 * connection per open transaction; transactions are short, and a wait is bounded by
 * `lockWaitMs` (then DatabaseUnavailableError, 503), so the simple rule wins.
 *
 * Statements run on the event loop, and one that reads a whole table would stop every other
 * request for its duration (a sort of 400,000 rows took 28 s). So a read outside a transaction
 * runs there only when its plan is an index seek reaching few rows (a lookup by id or by a
 * unique field, a short page of an indexed filter): anything else goes to the reader processes
 * (sqlite-reader.ts), which see the committed rows and need not pass the gate. Reads inside a
 * transaction stay on this connection, which holds the transaction's own writes; so does every
 * statement of a `:memory:` database, which no other connection can open.
 */
import type Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import {
  ConflictError,
  DatabaseUnavailableError,
  LATER,
  type RecordOps,
  type RecordOpsNow,
  type RecordStore,
  type SchemaPlan,
  type StoredValue,
  type TableSpec,
  type Transaction,
} from './store.js';
import { tableOf, type StoredType } from './columns.js';
import { STATEMENT_CACHE_SIZE, ShapeCache, quote, type Dialect, type Statement } from './sql.js';
import { DelegatedOps, SqlPlans, chargedRows, laterOps, nowOps, type Executor, type StatementPlan, type Tables } from './ops.js';
import { duplicateValues, planSchema, syncSteps, uniqueIndexesToMake, type LiveSchema, type LiveTable } from './schema.js';
import { Gate } from './gate.js';
import { SqliteReader } from './sqlite-reader.js';
import { onFirstUse } from '../../plugins/sdk.js';

/** better-sqlite3, loaded when the first store opens: an app without records never loads it. */
const loadBetterSqlite3 = onFirstUse(() => createRequire(import.meta.url)('better-sqlite3') as typeof Database);

/**
 * How long a statement retries a database file another process has locked (a worker writing)
 * before 503. SQLite's own busy_timeout would wait with the event loop blocked, every queued
 * statement in turn; so it is 0, and the store retries asynchronously (BUSY_RETRY_MS).
 */
export const SQLITE_BUSY_TIMEOUT_MS = 5000;
/** The pauses between retries of a locked file: short at first (most locks are one write), then every 50 ms. */
const BUSY_RETRY_MS = [1, 2, 5, 10, 20, 50];
/** How long a statement waits for this process's open transaction to finish before 503: a transaction left open must not hang every request. */
export const SQLITE_LOCK_WAIT_MS = 5000;
/**
 * The most rows (limit + offset) a read may reach and still run on the event loop, its plan an
 * index seek: the largest page (MAX_LIMIT), read in about a millisecond.
 */
export const SQLITE_INLINE_MAX_ROWS = 1000;

/** A step of a query plan that reads only the rows an index finds (EXPLAIN QUERY PLAN's wording). */
const SEEK_STEP = /^SEARCH \S+ USING (?:INTEGER PRIMARY KEY|(?:COVERING )?INDEX )/;

const COLUMN_TYPES: Record<StoredType, string> = {
  text: 'TEXT',
  int: 'INTEGER',
  number: 'REAL',
  bool: 'BOOLEAN',
  date: 'DATE',
  datetime: 'DATETIME',
  list: 'JSON_LIST',
  object: 'JSON_OBJECT',
  uuid: 'TEXT',
};
/** A declared column type of SQLite → stored type (the id, TEXT, reads as text). */
const STORED_TYPES = new Map<string, StoredType>(
  Object.entries(COLUMN_TYPES)
    .filter(([t]) => t !== 'uuid')
    .map(([t, sql]) => [sql, t as StoredType]),
);

function textLiteral(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/** SQLite's dialect: `?` placeholders, booleans as 0/1, lists and objects as JSON text (json_each for membership). */
export const sqliteDialect: Dialect = {
  name: 'sqlite',
  param: () => '?',
  columnType: (type) => COLUMN_TYPES[type],
  encode(type, value) {
    if (value === null) return null;
    if (type === 'bool') return value ? 1 : 0;
    if (type === 'list' || type === 'object') return JSON.stringify(value);
    return value;
  },
  decode(type, raw) {
    if (type === 'bool') return raw === 1 || raw === 1n;
    if (type === 'list' || type === 'object') return JSON.parse(raw as string) as StoredValue;
    if (typeof raw === 'bigint') return Number(raw);
    return raw as StoredValue;
  },
  inList: (column, param) => `${column} IN (SELECT value FROM json_each(${param}))`,
  encodeList: (type, values) => JSON.stringify(type === 'bool' ? values.map((v) => (v ? 1 : 0)) : values),
  listContains(column, param, needle) {
    if (needle === 'bool') return `EXISTS (SELECT 1 FROM json_each(${column}) WHERE type = ${param})`;
    const types = needle === 'text' ? `type = 'text'` : `type IN ('integer', 'real')`;
    return `EXISTS (SELECT 1 FROM json_each(${column}) WHERE ${types} AND value = ${param})`;
  },
  encodeNeedle: (needle) => (typeof needle === 'boolean' ? String(needle) : needle),
  literal(type, value) {
    if (type === 'bool') return value ? '1' : '0';
    if (type === 'int' || type === 'number') return String(value);
    if (type === 'list' || type === 'object') return textLiteral(JSON.stringify(value));
    return textLiteral(String(value));
  },
};

/** Error codes of a database that cannot be used now (locked, full, unreadable): 503, not a bug. */
const UNAVAILABLE = /^SQLITE_(LOCKED|IOERR|FULL|CANTOPEN|READONLY|CORRUPT|NOTADB|PROTOCOL|NOMEM)/;

/** SQLITE_BUSY: another process holds the file's write lock; worth retrying for a while (retryBusy). */
class FileLockedError extends DatabaseUnavailableError {}

/** Something to wait on: Atomics.wait on it sleeps the thread (only while a database opens). */
const SLEEPER = new Int32Array(new SharedArrayBuffer(4));

/**
 * Runs `work` again while another process holds the file, for at most `waitMs`, sleeping
 * between attempts as retryBusy does. For opening only: workers starting together on a new file
 * all switch it to WAL, and SQLite refuses all but one at once (to avoid a deadlock) instead of
 * waiting. The server is not serving yet, so the thread may sleep.
 */
function whileLocked<T>(work: () => T, waitMs: number): T {
  const deadline = Date.now() + waitMs;
  for (let attempt = 0; ; attempt++) {
    try {
      return work();
    } catch (error) {
      const code = (error as { code?: unknown })?.code;
      if (!(typeof code === 'string' && code.startsWith('SQLITE_BUSY')) || Date.now() >= deadline) throw error;
      Atomics.wait(SLEEPER, 0, 0, BUSY_RETRY_MS[Math.min(attempt, BUSY_RETRY_MS.length - 1)]!);
    }
  }
}

/** A driver error as one of the store's coded errors (others are bugs and pass through). */
function mapError(error: unknown): unknown {
  const code = (error as { code?: unknown })?.code;
  if (typeof code !== 'string') return error;
  if (code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
    const m = /constraint failed: [^.\s]+\.([A-Za-z0-9_]+)/.exec((error as Error).message);
    const field = m ? m[1]! : null;
    return new ConflictError(field ? `a record with this ${field} already exists` : 'a record with these values already exists', field);
  }
  if (code.startsWith('SQLITE_BUSY')) return new FileLockedError(`the database is unavailable (${code}): another process is writing`);
  if (UNAVAILABLE.test(code)) return new DatabaseUnavailableError(`the database is unavailable (${code})`);
  return error;
}

/** A charged read of at most this many rows is read at once and charged right after, not stepped (SqliteStore.perform). */
export const SQLITE_READ_AT_ONCE_ROWS = 100;

/** Options of the SQLite store (tests shorten the waits and narrow the reader). */
export interface SqliteStoreOptions {
  busyTimeoutMs?: number;
  lockWaitMs?: number;
  /** SQLITE_READERS and SQLITE_READ_QUEUE. */
  readers?: number;
  readQueue?: number;
}

/** A statement shape: prepared on the store's connection, and for a read, whether it runs there. */
interface Shape {
  prepared: Database.Statement;
  /** Whether the read runs on the event loop (its plan is an index seek), learned at its first read. */
  inline: boolean | undefined;
}

/** A plan that reads: the kind that may run on a reader process. */
type ReadPlan<T> = Extract<StatementPlan<T>, { how: 'rows' | 'first' }>;

function isRead<T>(plan: StatementPlan<T>): plan is ReadPlan<T> {
  return plan.how === 'first' || (plan.how === 'rows' && !plan.write);
}

/** Both forms of the operations, over one executor. */
interface BothForms {
  ops: RecordOps;
  now: RecordOpsNow;
}

/** Records in one SQLite file (or `:memory:`). */
export class SqliteStore extends DelegatedOps implements RecordStore {
  readonly kind = 'sqlite';
  private readonly db: Database.Database;
  private readonly tables: Tables = new Map();
  private readonly shapes = new ShapeCache<Shape>();
  /** Where expensive reads run; null for `:memory:`. */
  private readonly reader: SqliteReader | null;
  private readonly gate: Gate;
  protected readonly ops: RecordOps;
  readonly now: RecordOpsNow;
  /** How long a statement retries a file another process locked (SQLITE_BUSY_TIMEOUT_MS). */
  private readonly busyWaitMs: number;
  /** Runs a function in BEGIN IMMEDIATE … COMMIT (ROLLBACK when it throws). */
  private readonly immediate: (work: () => unknown) => unknown;

  /** Opens (creating when missing) the database file at `path`, or `:memory:`. */
  constructor(path: string, options: SqliteStoreOptions = {}) {
    super();
    try {
      if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
      this.db = new (loadBetterSqlite3())(path);
      const db = this.db;
      whileLocked(() => db.pragma('journal_mode = WAL'), options.busyTimeoutMs ?? SQLITE_BUSY_TIMEOUT_MS);
      this.db.pragma('synchronous = NORMAL');
      this.db.pragma('busy_timeout = 0');
      this.db.pragma('foreign_keys = ON');
      // `contains` and `starts_with` are LIKE patterns, which SQLite folds to ASCII case by default; PostgreSQL's do not.
      this.db.pragma('case_sensitive_like = ON');
    } catch (error) {
      throw mapError(error);
    }
    this.busyWaitMs = options.busyTimeoutMs ?? SQLITE_BUSY_TIMEOUT_MS;
    const wait = options.lockWaitMs ?? SQLITE_LOCK_WAIT_MS;
    this.gate = new Gate(wait, () => new DatabaseUnavailableError(`the database was busy for ${wait} ms (a transaction is open)`));
    const tx = this.db.transaction((work: () => unknown) => work());
    this.immediate = (work) => tx.immediate(work);
    this.reader =
      path === ':memory:'
        ? null
        : new SqliteReader({
            path,
            busyTimeoutMs: this.busyWaitMs,
            statementCacheSize: STATEMENT_CACHE_SIZE,
            readers: options.readers,
            queue: options.readQueue,
          });
    this.reader?.warm();
    ({ ops: this.ops, now: this.now } = this.forms(false));
  }

  /**
   * The shape of `sql`, prepared once. One that returns rows answers them as arrays (cheaper
   * than objects; decodeRow reads by position), whichever method runs it.
   */
  private shape(sql: string): Shape {
    return this.shapes.get(sql, () => {
      const statement = this.db.prepare(sql);
      // `inline` is set here, unknown yet, so every shape has one layout (a monomorphic read on the hot path).
      return { prepared: statement.reader ? statement.raw(true) : statement, inline: undefined };
    });
  }

  /** Internal (tests): how many reads have run on the reader processes. */
  get offloadedReads(): number {
    return this.reader?.started ?? 0;
  }

  /** Whether a read outside a transaction runs on the event loop (the header says when). */
  private runsInline(shape: Shape, st: Statement): boolean {
    if (this.reader === null) return true;
    if (st.reach === undefined || st.reach > SQLITE_INLINE_MAX_ROWS) return false;
    return (shape.inline ??= this.isSeek(st));
  }

  /** Whether every step of the statement's plan is an index seek (no scan, no sort of all matches). */
  private isSeek(st: Statement): boolean {
    let plan: { detail: string }[];
    try {
      plan = this.db.prepare(`EXPLAIN QUERY PLAN ${st.sql}`).all(...st.params) as { detail: string }[];
    } catch (error) {
      throw mapError(error);
    }
    return plan.every((step) => SEEK_STEP.test(step.detail));
  }

  /** The shape of a statement, prepared once; a failure to prepare is the store's coded error. */
  private shapeOf(st: Statement): Shape {
    try {
      return this.shape(st.sql);
    } catch (error) {
      throw mapError(error);
    }
  }

  /** Runs one statement now (the caller holds the gate); writes outside a transaction get their own BEGIN IMMEDIATE. */
  private execute<T>(write: boolean, inTransaction: boolean, work: () => T): T {
    try {
      return write && !inTransaction ? (this.immediate(work) as T) : work();
    } catch (error) {
      throw mapError(error);
    }
  }

  /**
   * Runs `work` again while another process holds the file's write lock (SQLITE_BUSY), pausing
   * without blocking the event loop, for at most `busyWaitMs`; then the error as 503. With
   * `gated`, each attempt takes the gate and the pauses leave it free, so this process's reads
   * (WAL lets them read past another process's write) go on while a write waits for the file.
   */
  private async retryBusy<T>(work: () => T, gated: boolean): Promise<T> {
    const deadline = Date.now() + this.busyWaitMs;
    for (let attempt = 0; ; attempt++) {
      try {
        return gated ? await this.gate.run(work) : work();
      } catch (error) {
        const left = deadline - Date.now();
        if (!(error instanceof FileLockedError) || left <= 0) throw error;
        // The last pause ends at the deadline, so a write gives up after the whole busy wait, not a pause before it.
        const pause = Math.min(BUSY_RETRY_MS[Math.min(attempt, BUSY_RETRY_MS.length - 1)]!, left);
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  }

  /**
   * Runs a plan's statement on this connection and answers its result (the caller holds the gate,
   * or its transaction does). With `charge`, each row is charged as it comes (ChargeMemory): a
   * large read is stepped a row at a time, so reading stops once the budget is spent; a small one
   * is read at once (stepping costs ~20 % on a page of 20) and charged right after.
   */
  private perform<T>(plan: StatementPlan<T>, prepared: Database.Statement, inTransaction: boolean): T {
    const { params, limit } = plan.statement;
    switch (plan.how) {
      case 'changes':
        return plan.answer(this.execute(true, inTransaction, () => prepared.run(...params).changes));
      case 'first':
        return plan.answer(this.execute(false, inTransaction, () => prepared.get(...params) as unknown[] | undefined));
      case 'rows': {
        const { write, charge } = plan;
        const rows = this.execute(write, inTransaction, () => {
          if (write || charge === undefined) return prepared.all(...params) as unknown[][];
          const small = limit !== undefined && limit <= SQLITE_READ_AT_ONCE_ROWS;
          return chargedRows((small ? prepared.all(...params) : prepared.iterate(...params)) as Iterable<unknown[]>, charge);
        });
        return plan.answer(rows);
      }
    }
  }

  /**
   * A read on a reader process; its driver errors become the store's coded errors. Charged rows
   * are charged when they arrive: the reader counts them as it steps and sends none past the
   * budget's size (`charge.most`), so a listing that could never be held costs the event loop no
   * copy of its rows.
   */
  private async offload<T>(plan: ReadPlan<T>): Promise<T> {
    const { sql, params } = plan.statement;
    const first = plan.how === 'first';
    const charge = first ? undefined : plan.charge;
    let raw: unknown;
    try {
      raw = await this.reader!.read(sql, params, first, plan.stop, charge?.most);
    } catch (error) {
      throw mapError(error);
    }
    if (first) return plan.answer(raw as unknown[] | undefined);
    return plan.answer(charge === undefined ? (raw as unknown[][]) : chargedRows(raw as unknown[][], charge));
  }

  /**
   * How plans run outside a transaction (through the gate) or inside one (holding it). Outside,
   * `now` runs a statement when the gate is free and nobody waits, and answers it with no promise
   * (the request goes on without suspending); it answers LATER, the statement not run, when a
   * transaction holds the gate, when the read goes to a reader process, or when another process
   * holds the file (SQLITE_BUSY, failed at once: busy_timeout is 0). `later` waits its turn at the
   * gate and retries a locked file (retryBusy), or reads on a reader process. Inside a transaction
   * every statement runs at once on this connection, which holds the transaction's own writes.
   */
  private executor(inTransaction: boolean, open: () => void): Required<Executor> {
    if (inTransaction) {
      const now = <T>(plan: StatementPlan<T>): T => {
        open();
        return this.perform(plan, this.shapeOf(plan.statement).prepared, true);
      };
      return { now, later: async (plan) => now(plan) };
    }
    return {
      now: (plan) => {
        const shape = this.shapeOf(plan.statement);
        if ((isRead(plan) && !this.runsInline(shape, plan.statement)) || !this.gate.tryEnter()) return LATER;
        try {
          return this.perform(plan, shape.prepared, false);
        } catch (error) {
          if (error instanceof FileLockedError) return LATER;
          throw error;
        } finally {
          this.gate.release();
        }
      },
      later: async (plan) => {
        const shape = this.shapeOf(plan.statement);
        if (isRead(plan) && !this.runsInline(shape, plan.statement)) return this.offload(plan);
        return this.retryBusy(() => this.perform(plan, shape.prepared, false), true);
      },
    };
  }

  /** Internal: the operations in both forms, outside a transaction or inside one (`open` checks it is still open). */
  forms(inTransaction: boolean, open: () => void = () => {}): BothForms {
    const plans = new SqlPlans(sqliteDialect, this.tables);
    const executor = this.executor(inTransaction, open);
    return { ops: laterOps(plans, executor), now: nowOps(plans, executor.now) };
  }

  private readLive(specs: readonly TableSpec[]): LiveSchema {
    const live: LiveSchema = new Map();
    // SQLite compares table names without case: `user` answers for `User` too.
    const named = this.db.prepare(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name = ? COLLATE NOCASE`).pluck();
    const columns = this.db.prepare('SELECT name, type FROM pragma_table_info(?)');
    const indexes = this.db.prepare('SELECT name FROM pragma_index_list(?)');
    for (const spec of specs) {
      const name = named.get(spec.name) as string | undefined;
      if (name === undefined) continue;
      if (name !== spec.name) {
        live.set(spec.name, { caseTwin: name });
        continue;
      }
      const cols = columns.all(spec.name) as { name: string; type: string }[];
      const table: LiveTable = {
        columns: new Map(cols.map((c) => [c.name, STORED_TYPES.get(c.type.toUpperCase()) ?? c.type])),
        indexes: new Set((indexes.all(spec.name) as { name: string }[]).map((i) => i.name)),
        hasRows: this.db.prepare(`SELECT 1 FROM ${quote(spec.name)} LIMIT 1`).get() !== undefined,
      };
      const repeats = (column: string): boolean => this.db.prepare(`${duplicateValues(spec.name, column)} LIMIT 1`).get() !== undefined;
      if (table.hasRows) table.duplicated = new Set(uniqueIndexesToMake(spec, table).filter(repeats));
      live.set(spec.name, table);
    }
    return live;
  }

  async sync(tables: readonly TableSpec[], options: { allowDestructive: boolean }): Promise<SchemaPlan> {
    const checked = tables.map(tableOf);
    // Several workers start on one file together: a sync that finds another's write lock waits
    // for it as a write does (retryBusy), rather than failing the start with SQLITE_BUSY.
    const plan = await this.retryBusy(
      () =>
        this.execute(true, false, () => {
          const { run, withheld } = syncSteps(planSchema(sqliteDialect, tables, this.readLive(tables)), options.allowDestructive);
          for (const step of run) for (const sql of step.sql) this.db.exec(sql);
          return { applied: run.map((s) => s.description), withheld };
        }),
      true,
    );
    // A table with withheld changes keeps the shape it had: its declared one does not exist in the database.
    for (const table of checked) if (!plan.withheld.some((c) => c.table === table.name)) this.tables.set(table.name, table);
    return plan;
  }

  async diff(tables: readonly TableSpec[]): Promise<SchemaPlan> {
    return this.gate.run(() => {
      try {
        const steps = planSchema(sqliteDialect, tables, this.readLive(tables));
        return { applied: steps.apply.map((s) => s.description), withheld: steps.withheld };
      } catch (error) {
        throw mapError(error);
      }
    });
  }

  async begin(): Promise<Transaction> {
    await this.gate.enter();
    try {
      await this.retryBusy(() => {
        try {
          this.db.exec('BEGIN IMMEDIATE');
        } catch (error) {
          throw mapError(error);
        }
      }, false);
    } catch (error) {
      this.gate.release();
      throw error;
    }
    return new SqliteTransaction(this, (finish) => {
      try {
        if (this.db.inTransaction) this.db.exec(finish);
      } catch (error) {
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
        throw mapError(error);
      } finally {
        this.gate.release();
      }
    });
  }

  async close(): Promise<void> {
    await this.reader?.close();
    await this.gate.run(() => this.db.close());
  }
}

/** A transaction on the SQLite store: it holds the store's gate until commit or rollback. */
class SqliteTransaction extends DelegatedOps implements Transaction {
  private done = false;
  protected readonly ops: RecordOps;
  readonly now: RecordOpsNow;

  constructor(
    store: SqliteStore,
    private readonly finish: (sql: 'COMMIT' | 'ROLLBACK') => void,
  ) {
    super();
    ({ ops: this.ops, now: this.now } = store.forms(true, () => {
      if (this.done) throw new Error('the transaction has already finished');
    }));
  }

  async commit(): Promise<void> {
    this.end('COMMIT');
  }
  async rollback(): Promise<void> {
    this.end('ROLLBACK');
  }

  private end(sql: 'COMMIT' | 'ROLLBACK'): void {
    if (this.done) throw new Error('the transaction has already finished');
    this.done = true;
    this.finish(sql);
  }
}
