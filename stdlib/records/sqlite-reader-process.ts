/**
 * The process of a SQLite reader (sqlite-reader.ts): its own read-only connection to the store's
 * file, running one statement at a time and answering its rows as arrays. A process, not a
 * worker thread, because only a process can be stopped in the middle of a statement: SQLite runs
 * it in native code, where terminating a thread does not reach (the thread would run the
 * statement to its end, for minutes, after its request was answered). Kept free of the rest of
 * rvm, so a process starts quickly when a killed one is replaced.
 */
import Database from 'better-sqlite3';
import { constants, setPriority } from 'node:os';
import type { ReadReply, ReadRequest, ReaderData } from './sqlite-reader.js';
import { rowBytes } from './row-bytes.js';

const { path, busyTimeoutMs, statementCacheSize } = JSON.parse(process.argv[2] ?? '{}') as ReaderData;
// The server's event loop comes first (nice 19): a core busy with long reads still runs it (and
// every cheap request) as soon as it has work.
setPriority(constants.priority.PRIORITY_LOW);
/** The driver's error as a reply: its message and SQLite code. */
function failure(error: unknown): ReadReply {
  const { message, code } = error as { message?: unknown; code?: unknown };
  return { error: { message: String(message), code: typeof code === 'string' ? code : undefined } };
}

/** The connection, or why it could not be opened (told to the first read, then this reader ends). */
let db: Database.Database | null = null;
let unopened: ReadReply | null = null;
try {
  db = new Database(path, { readonly: true, fileMustExist: true });
  // The event loop is not this process's: it may wait for a locked file as SQLite does.
  db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  // As on the store's own connection: `contains` and `starts_with` compare case.
  db.pragma('case_sensitive_like = ON');
} catch (error) {
  unopened = failure(error);
}

/** Prepared statements by SQL text; forgotten all at once when full (shapes are few, and a reader is short-lived under attack). */
const statements = new Map<string, Database.Statement>();

function prepared(sql: string): Database.Statement {
  let statement = statements.get(sql);
  if (statement === undefined) {
    if (statements.size >= statementCacheSize) statements.clear();
    statement = db!.prepare(sql).raw(true);
    statements.set(sql, statement);
  }
  return statement;
}

/** The rows of a list read, stepped and counted: null once they pass `most` (nothing more is read, nothing sent). */
function rowsWithin(statement: Database.Statement, params: unknown[], most: number): unknown[][] | null {
  const rows: unknown[][] = [];
  let bytes = 0;
  for (const row of statement.iterate(...params) as Iterable<unknown[]>) {
    bytes += rowBytes(row);
    // Leaving the loop closes the iterator: the statement stops stepping.
    if (bytes > most) return null;
    rows.push(row);
  }
  return rows;
}

process.on('message', ({ sql, params, first, most }: ReadRequest) => {
  if (unopened !== null) {
    // Not started again by the server (it ended by itself): every read would fail the same way.
    process.send!(unopened, () => process.exit(1));
    return;
  }
  let reply: ReadReply;
  try {
    const statement = prepared(sql);
    if (first) reply = { rows: statement.get(...params) as unknown[] | undefined };
    else if (most === undefined) reply = { rows: statement.all(...params) as unknown[][] };
    else {
      const rows = rowsWithin(statement, params, most);
      reply = rows === null ? { tooLarge: true } : { rows };
    }
  } catch (error) {
    reply = failure(error);
  }
  process.send!(reply);
});
// The server went away (it ended, or was killed): so does its reader.
process.on('disconnect', () => process.exit(0));
