/**
 * The PostgreSQL store (when `DATABASE_URL` is set): a bounded `pg` pool with a connect timeout
 * and a statement timeout. Columns: `uuid` ids, `timestamptz` date-times (returned as ISO-8601
 * UTC with milliseconds), `date` dates (returned as `YYYY-MM-DD`), `jsonb` lists and objects (as
 * the domains `rvm_list`/`rvm_object`, so the live schema tells them apart), BOOLEAN, BIGINT,
 * DOUBLE PRECISION, and text with the "C" collation so text orders by code point as on SQLite.
 * Connection failures and timeouts become DatabaseUnavailableError; a unique violation a
 * ConflictError naming the field. Schema sync runs under `pg_advisory_xact_lock`, so several
 * processes starting at once sync once; transactions run under another advisory lock, one at a
 * time (BEGIN_SERIALISED), their reads locking the rows they read. Every statement has a
 * client-side timeout too, so a hung server answers 503 and its connections are discarded.
 */
import { createRequire } from 'node:module';
import type pg from 'pg';
import type { PoolClient, QueryArrayConfig } from 'pg';
import { onFirstUse } from '../../plugins/sdk.js';
import {
  ConflictError,
  DatabaseUnavailableError,
  type ChargeMemory,
  type RecordOps,
  type RecordStore,
  type SchemaPlan,
  type StoredValue,
  type TableSpec,
  type Transaction,
} from './store.js';
import { tableOf, type StoredType } from './columns.js';
import { STATEMENT_CACHE_SIZE, quote, type Dialect, type Statement } from './sql.js';
import { DelegatedOps, SqlPlans, laterOps, resultTooLarge, type Executor, type Tables } from './ops.js';
import { rowBytes } from './row-bytes.js';
import { duplicateValues, indexName, planSchema, syncSteps, uniqueIndexesToMake, type LiveSchema, type LiveTable } from './schema.js';

/** Connections per process: PostgreSQL's default max_connections (100) shared by several workers. */
export const PG_POOL_SIZE = 10;
/** How long opening a connection may take before 503: a database that is down or unreachable must answer fast, not hang requests. */
export const PG_CONNECT_TIMEOUT_MS = 5000;
/** The longest one statement may run (server-side): a runaway query must not hold a connection forever. */
export const PG_STATEMENT_TIMEOUT_MS = 10_000;
/**
 * How much longer than the statement timeout a client waits for any answer before it gives the
 * connection up (503, the connection discarded): the statement timeout is enforced by the server,
 * and a server that is hung (stopped, its machine frozen) enforces nothing.
 */
export const PG_QUERY_TIMEOUT_MARGIN_MS = 1000;
/** The advisory lock key of schema sync (any fixed pair; 'rvm', 'sync'). */
const SYNC_LOCK = [0x72766d, 0x73796e63] as const;
/**
 * How a `transaction { }` block begins: with the transaction-level advisory lock of records
 * writers ('rvm', 'txns'; not the sync key), in the same round trip as BEGIN. Blocks then run one
 * at a time across processes and machines, as SQLite's BEGIN IMMEDIATE makes them: a block's
 * read-modify-write cannot interleave with another's, and two blocks never wait for each other's
 * rows (transfers in opposite orders cannot deadlock). Waiting for the lock is a statement, so
 * the statement timeout bounds it (503 database_unavailable, never a hang).
 */
const BEGIN_SERIALISED = `BEGIN; SELECT pg_advisory_xact_lock(${0x72766d}, ${0x74786e73})`;

const COLUMN_TYPES: Record<StoredType, string> = {
  text: 'text COLLATE "C"',
  int: 'bigint',
  number: 'double precision',
  bool: 'boolean',
  date: 'date',
  datetime: 'timestamptz',
  list: 'rvm_list',
  object: 'rvm_object',
  uuid: 'uuid',
};
const ARRAY_TYPES: Record<StoredType, string> = {
  text: 'text[]',
  int: 'bigint[]',
  number: 'float8[]',
  bool: 'boolean[]',
  date: 'date[]',
  datetime: 'timestamptz[]',
  list: 'jsonb[]',
  object: 'jsonb[]',
  uuid: 'uuid[]',
};
/** information_schema's data_type (or domain) → stored type. */
const STORED_TYPES: Record<string, StoredType> = {
  text: 'text',
  bigint: 'int',
  'double precision': 'number',
  boolean: 'bool',
  date: 'date',
  'timestamp with time zone': 'datetime',
  rvm_list: 'list',
  rvm_object: 'object',
  uuid: 'uuid',
};

function textLiteral(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/** PostgreSQL's dialect: `$n` placeholders, arrays for `in`, jsonb containment for list membership. */
export const postgresDialect: Dialect = {
  name: 'postgres',
  param: (n) => `$${n}`,
  columnType: (type) => COLUMN_TYPES[type],
  encode: (type, value) => (value !== null && (type === 'list' || type === 'object') ? JSON.stringify(value) : value),
  decode(type, raw) {
    switch (type) {
      case 'int':
      case 'number':
        return Number(raw);
      case 'datetime':
        // The pool's type parser already made the text ISO-8601 UTC (TYPES): parsing it again would cost a Date per value.
        return typeof raw === 'string' ? raw : (raw as Date).toISOString();
      case 'list':
      case 'object':
        return (typeof raw === 'string' ? JSON.parse(raw) : raw) as StoredValue;
      default:
        return raw as StoredValue;
    }
  },
  inList: (column, param, type) => `${column} = ANY(${param}::${ARRAY_TYPES[type]})`,
  encodeList: (_type, values) => values,
  listContains: (column, param) => `${column} @> ${param}::jsonb`,
  encodeNeedle: (needle) => JSON.stringify([needle]),
  literal(type, value) {
    if (type === 'bool') return value ? 'TRUE' : 'FALSE';
    if (type === 'int' || type === 'number') return String(value);
    if (type === 'list' || type === 'object') return `${textLiteral(JSON.stringify(value))}::jsonb`;
    return textLiteral(String(value));
  },
};

const OID_INT8 = 20;
const OID_DATE = 1082;
const OID_TIMESTAMPTZ = 1184;

/** PostgreSQL's text of a timestamptz in UTC under the ISO DateStyle (`2026-11-25 09:05:03.007+00`): date, time, fraction. */
const UTC_TIMESTAMP = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?\+00$/;

/**
 * A timestamptz as PostgreSQL writes it, as ISO-8601 UTC with milliseconds (finer digits cut, as
 * a Date cuts them). Text in UTC is rewritten directly, without a Date; any other (another
 * session time zone or DateStyle, BC, years past 9999) goes through `parse`, pg's own parser.
 */
export function timestamptzIso(text: string, parse: (value: string) => unknown): string {
  const m = UTC_TIMESTAMP.exec(text);
  if (m === null) return (parse(text) as Date).toISOString();
  return `${m[1]}T${m[2]}.${`${m[3] ?? ''}000`.slice(0, 3)}Z`;
}

/** pg, loaded when the first PostgreSQL store opens: an app on SQLite or without records never loads it. */
const loadPg = onFirstUse(() => createRequire(import.meta.url)('pg') as typeof pg);

/** Type parsers of the pool: bigint as a number (only safe integers are stored), dates as their text, timestamptz as ISO-8601 UTC. */
const TYPES = {
  getTypeParser(oid: number, format?: string): (value: string) => unknown {
    if (oid === OID_INT8) return (v: string) => Number(v);
    if (oid === OID_DATE) return (v: string) => v;
    const parse = loadPg().types.getTypeParser(oid, format as 'text') as (value: string) => unknown;
    if (oid === OID_TIMESTAMPTZ) return (v: string) => timestamptzIso(v, parse);
    return parse;
  },
};

/** SQLSTATE classes of a database that cannot serve now: connection (08), resources (53), operator intervention (57: shutdown, statement timeout), lock wait (55P03), retryable conflicts (40001, 40P01). */
const UNAVAILABLE_STATE = /^(08|53|57|55P03|40001|40P01)/;

/** Whether a pg error is the server's answer (it has a SQLSTATE); any other failure is the connection's. */
function fromServer(error: unknown): error is { code: string; severity: string; message: string; constraint?: unknown; table?: unknown } {
  const e = error as { code?: unknown; severity?: unknown } | null;
  return typeof e?.severity === 'string' && typeof e.code === 'string';
}

/**
 * Whether a failure left the connection unusable: anything but the server's answer (refused,
 * reset, terminated, or no answer within the query timeout, after which the unanswered query
 * still holds the connection). Such a connection is discarded, never sent another statement.
 */
function lostConnection(error: unknown): boolean {
  return error instanceof Error && !fromServer(error) && !(error instanceof ConflictError) && !(error instanceof DatabaseUnavailableError);
}

/** A pg error as one of the store's coded errors; `tables` names the field of a unique violation. */
function mapError(error: unknown, tables: Tables): unknown {
  if (error instanceof ConflictError || error instanceof DatabaseUnavailableError) return error;
  if (fromServer(error)) {
    if (error.code === '23505') {
      const field = conflictField(tables, String(error.table ?? ''), String(error.constraint ?? ''));
      return new ConflictError(field ? `a record with this ${field} already exists` : 'a record with these values already exists', field);
    }
    if (UNAVAILABLE_STATE.test(error.code)) return new DatabaseUnavailableError(`the database is unavailable (${error.code}: ${error.message})`);
    return error;
  }
  // No SQLSTATE: the connection failed (refused, reset, timed out, terminated). The driver's
  // words are the cause the app log shows (`connect ECONNREFUSED 10.0.0.6:5432`), never a client;
  // an AggregateError (every address of a host refused) has only its code.
  if (error instanceof Error)
    return new DatabaseUnavailableError(`the database is unavailable (${error.message || String((error as { code?: unknown }).code ?? error.name)})`);
  return error;
}

function conflictField(tables: Tables, table: string, constraint: string): string | null {
  const t = tables.get(table);
  if (!t) return null;
  if (constraint === `${table}_pkey`) return 'id';
  for (const column of t.spec.columns) if (indexName(table, column.name, true) === constraint) return column.name;
  return null;
}

/** Options of the PostgreSQL store. */
export interface PostgresStoreOptions {
  connectionString: string;
  /** Pool size (default PG_POOL_SIZE). */
  max?: number;
  connectTimeoutMs?: number;
  statementTimeoutMs?: number;
  /** A schema to work in instead of the connection's default (tests use one per case); it must exist. */
  schema?: string;
}

/** What ChargedQuery reaches of pg's Query (8.x): each DataRow message as it arrives, and the callback that settles it. */
interface QueryInternals {
  handleDataRow(message: { fields: unknown[] }): void;
  callback?: (err: Error | null, result: unknown) => void;
}

/**
 * A query whose rows are charged as they arrive, each DataRow before it is parsed. Once the
 * budget refuses one, the rest are read off the socket and dropped unparsed (the connection stays
 * in step, and goes back to the pool healthy), and the query then fails with ResultMemoryError.
 * So one query holds at most the budget. The class is made when pg is loaded.
 */
const loadChargedQuery = onFirstUse(() => {
  const Query = loadPg().Query;
  return class ChargedQuery extends Query {
    refused = false;

    constructor(
      config: QueryArrayConfig,
      private readonly charge: ChargeMemory,
    ) {
      super(config);
    }

    handleDataRow(message: { fields: unknown[] }): void {
      if (this.refused) return;
      if (!this.charge(rowBytes(message.fields))) {
        this.refused = true;
        return;
      }
      (Query.prototype as unknown as QueryInternals).handleDataRow.call(this, message);
    }
  };
});

/** Records in a PostgreSQL database. */
export class PostgresStore extends DelegatedOps implements RecordStore {
  readonly kind = 'postgres';
  private readonly pool: pg.Pool;
  private readonly tables: Tables = new Map();
  /** Prepared statement names by SQL text; past STATEMENT_CACHE_SIZE shapes run unprepared, so each connection's prepared set stays bounded. */
  private readonly names = new Map<string, string>();
  protected readonly ops: RecordOps;

  constructor(options: PostgresStoreOptions) {
    super();
    if (options.schema !== undefined && !/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(options.schema))
      throw new Error(`schema name '${options.schema}' is not an identifier`);
    const connectTimeout = options.connectTimeoutMs ?? PG_CONNECT_TIMEOUT_MS;
    const statementTimeout = options.statementTimeoutMs ?? PG_STATEMENT_TIMEOUT_MS;
    const driver = loadPg();
    this.pool = new driver.Pool({
      connectionString: options.connectionString,
      max: options.max ?? PG_POOL_SIZE,
      // The connect timeout bounds opening a connection (a server down or unreachable: 503 within
      // it), set on each client. Not on the pool, where pg-pool would also arm a timer for every
      // request queued for a busy connection: a cost per request under load, and a 503
      // database_unavailable for a database that is up but busy. A queued request is bounded
      // by the request's own wall-time limit instead, and by the query timeout of the clients
      // it waits for (a hung server's clients fail and are discarded, and new ones time out).
      Client: class extends driver.Client {
        constructor(config?: pg.ClientConfig) {
          super({ ...config, connectionTimeoutMillis: connectTimeout });
        }
      },
      statement_timeout: statementTimeout,
      // Client-side: pg-pool discards a pool query's client that failed; a transaction's or
      // schema sync's client is released as broken (lostConnection).
      query_timeout: statementTimeout + PG_QUERY_TIMEOUT_MARGIN_MS,
      options: options.schema ? `-c search_path=${options.schema}` : undefined,
      types: TYPES,
    });
    // An idle connection that breaks (the server restarted) is dropped by the pool; the next query reports it.
    this.pool.on('error', () => {});
    this.ops = laterOps(new SqlPlans(postgresDialect, this.tables), this.executor(this.pool));
  }

  private config(st: Statement): QueryArrayConfig {
    let name = this.names.get(st.sql);
    if (name === undefined && this.names.size < STATEMENT_CACHE_SIZE) {
      name = `rvm_${this.names.size}`;
      this.names.set(st.sql, name);
    }
    // Rows as arrays: decodeRow reads columns by position.
    return name === undefined ? { text: st.sql, values: st.params, rowMode: 'array' } : { name, text: st.sql, values: st.params, rowMode: 'array' };
  }

  /** Statements on the pool, or on a transaction's client (`open` checks it is still open, `lost` hears of a connection that failed). */
  private executor(on: pg.Pool | PoolClient, open: () => void = () => {}, lost: () => void = () => {}): Executor {
    const fail = (error: unknown): never => {
      if (lostConnection(error)) lost();
      throw mapError(error, this.tables);
    };
    // One `then` per statement, taking the answer and mapping the failure at once: each promise
    // more on this path is garbage on every request.
    const query = <T>(st: Statement, answer: (r: pg.QueryArrayResult) => T): Promise<T> => {
      open();
      return on.query(this.config(st)).then(answer, fail);
    };
    // A charged query is a pg Query object: the pool answers it with a promise (and releases its
    // connection after), a checked-out client with the object itself, settled by its callback.
    // That callback is set before the query is sent: the client wraps it in the one that clears
    // the query's read timeout (set after, it replaced that wrapper, and each query of a
    // transaction left a timer holding its rows for the whole timeout).
    const onPool = on === this.pool;
    const charged = <T>(st: Statement, charge: ChargeMemory, answer: (rows: unknown[][]) => T): Promise<T> => {
      open();
      const q = new (loadChargedQuery())(this.config(st), charge);
      const answered = onPool
        ? null
        : new Promise<pg.QueryArrayResult>((resolve, reject) => {
            (q as unknown as QueryInternals).callback = (err, result) => (err ? reject(err) : resolve(result as pg.QueryArrayResult));
          });
      const sent = on.query(q) as unknown;
      const settled = answered ?? (sent as Promise<pg.QueryArrayResult>);
      return settled.then((result) => {
        if (q.refused) throw resultTooLarge();
        return answer(result.rows);
      }, fail);
    };
    return {
      later: (plan) => {
        switch (plan.how) {
          case 'rows':
            return plan.charge === undefined ? query(plan.statement, (r) => plan.answer(r.rows)) : charged(plan.statement, plan.charge, plan.answer);
          case 'first':
            return query(plan.statement, (r) => plan.answer(r.rows[0]));
          case 'changes':
            return query(plan.statement, (r) => plan.answer(r.rowCount ?? 0));
        }
      },
    };
  }

  /** A client of the pool with an error listener (a checked-out client that breaks must not crash the process). */
  private async connect(): Promise<PoolClient> {
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw mapError(error, this.tables);
    }
    client.on('error', ignore);
    return client;
  }

  private release(client: PoolClient, broken: boolean): void {
    client.off('error', ignore);
    client.release(broken ? true : undefined);
  }

  private async readLive(client: PoolClient, specs: readonly TableSpec[]): Promise<LiveSchema> {
    const live: LiveSchema = new Map();
    for (const spec of specs) {
      const columns = await client.query<{ column_name: string; data_type: string; domain_name: string | null }>(
        'SELECT column_name, data_type, domain_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1',
        [spec.name],
      );
      if (columns.rows.length === 0) {
        // Quoted names keep their case: `user` is another table than `User`, holding its rows.
        const twin = await client.query<{ table_name: string }>(
          'SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND lower(table_name) = lower($1) LIMIT 1',
          [spec.name],
        );
        if (twin.rows.length > 0) live.set(spec.name, { caseTwin: twin.rows[0]!.table_name });
        continue;
      }
      const indexes = await client.query<{ indexname: string }>('SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = $1', [
        spec.name,
      ]);
      const rows = await client.query(`SELECT 1 FROM ${quote(spec.name)} LIMIT 1`);
      const table: LiveTable = {
        columns: new Map(columns.rows.map((c) => [c.column_name, STORED_TYPES[c.domain_name ?? ''] ?? STORED_TYPES[c.data_type] ?? c.data_type])),
        indexes: new Set(indexes.rows.map((i) => i.indexname)),
        hasRows: rows.rows.length > 0,
      };
      if (table.hasRows) {
        table.duplicated = new Set();
        for (const column of uniqueIndexesToMake(spec, table)) {
          if ((await client.query(`${duplicateValues(spec.name, column)} LIMIT 1`)).rows.length > 0) table.duplicated.add(column);
        }
      }
      live.set(spec.name, table);
    }
    return live;
  }

  /** Runs `work` on one client in a transaction holding the schema lock. */
  private async locked<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    const client = await this.connect();
    let broken = false;
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1, $2)', [...SYNC_LOCK]);
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      broken = lostConnection(error);
      if (!broken) await client.query('ROLLBACK').catch(() => (broken = true));
      throw mapError(error, this.tables);
    } finally {
      this.release(client, broken);
    }
  }

  async sync(tables: readonly TableSpec[], options: { allowDestructive: boolean }): Promise<SchemaPlan> {
    const checked = tables.map(tableOf);
    const plan = await this.locked(async (client) => {
      for (const [domain, kind] of [
        ['rvm_list', 'array'],
        ['rvm_object', 'object'],
      ] as const) {
        const found = await client.query('SELECT 1 FROM pg_type WHERE typname = $1 AND typnamespace = current_schema()::regnamespace', [domain]);
        if (found.rows.length === 0) await client.query(`CREATE DOMAIN ${domain} AS jsonb CHECK (jsonb_typeof(VALUE) = '${kind}')`);
      }
      const { run, withheld } = syncSteps(planSchema(postgresDialect, tables, await this.readLive(client, tables)), options.allowDestructive);
      for (const step of run) for (const sql of step.sql) await client.query(sql);
      return { applied: run.map((s) => s.description), withheld };
    });
    // A table with withheld changes keeps the shape it had: its declared one does not exist in the database.
    for (const table of checked) if (!plan.withheld.some((c) => c.table === table.name)) this.tables.set(table.name, table);
    return plan;
  }

  async diff(tables: readonly TableSpec[]): Promise<SchemaPlan> {
    return this.locked(async (client) => {
      const steps = planSchema(postgresDialect, tables, await this.readLive(client, tables));
      return { applied: steps.apply.map((s) => s.description), withheld: steps.withheld };
    });
  }

  async begin(): Promise<Transaction> {
    const client = await this.connect();
    try {
      await client.query(BEGIN_SERIALISED);
    } catch (error) {
      this.release(client, true);
      throw mapError(error, this.tables);
    }
    return new PostgresTransaction(this, client);
  }

  /** Internal: the ops of a transaction on its client; its reads lock the rows they read. */
  opsFor(client: PoolClient, open: () => void, lost: () => void): RecordOps {
    return laterOps(new SqlPlans(postgresDialect, this.tables, true), this.executor(client, open, lost));
  }

  /**
   * Internal: ends a transaction with COMMIT or ROLLBACK and returns its client to the pool. A
   * client whose connection was lost is discarded without a word to the server, which would
   * only wait out another query timeout.
   */
  async finish(client: PoolClient, sql: 'COMMIT' | 'ROLLBACK', lost: boolean): Promise<void> {
    if (lost) {
      this.release(client, true);
      if (sql === 'COMMIT') throw new DatabaseUnavailableError('the database is unavailable (the connection was lost)');
      return;
    }
    let ended: pg.QueryResult;
    try {
      ended = await client.query(sql);
    } catch (error) {
      if (sql === 'COMMIT' && !lostConnection(error)) await client.query('ROLLBACK').catch(() => {});
      this.release(client, true);
      throw mapError(error, this.tables);
    }
    this.release(client, false);
    // PostgreSQL answers COMMIT of a transaction a failed statement aborted with ROLLBACK, not an error.
    if (sql === 'COMMIT' && ended.command === 'ROLLBACK') throw new Error('the transaction was rolled back: a statement in it failed');
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

function ignore(): void {}

/** A transaction on its own pooled connection. */
class PostgresTransaction extends DelegatedOps implements Transaction {
  private done = false;
  /** A statement of it failed on the connection itself: the client is discarded at the end. */
  private lost = false;
  protected readonly ops: RecordOps;

  constructor(
    private readonly store: PostgresStore,
    private readonly client: PoolClient,
  ) {
    super();
    this.ops = store.opsFor(
      client,
      () => {
        if (this.done) throw new Error('the transaction has already finished');
      },
      () => (this.lost = true),
    );
  }

  commit(): Promise<void> {
    return this.end('COMMIT');
  }
  rollback(): Promise<void> {
    return this.end('ROLLBACK');
  }

  private async end(sql: 'COMMIT' | 'ROLLBACK'): Promise<void> {
    if (this.done) throw new Error('the transaction has already finished');
    this.done = true;
    await this.store.finish(this.client, sql, this.lost);
  }
}
