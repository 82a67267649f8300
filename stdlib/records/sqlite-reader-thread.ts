/**
 * The worker thread of a SQLite reader (sqlite-reader.ts): its own read-only connection to the
 * store's file, running one statement at a time and answering its rows as arrays. Kept free of
 * the rest of rvm, so a thread starts in milliseconds when a terminated one is replaced.
 */
import Database from 'better-sqlite3';
import { constants, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type { ReadReply, ReadRequest, ReaderThreadData } from './sqlite-reader.js';

const { path, busyTimeoutMs, statementCacheSize } = workerData as ReaderThreadData;
// The event loop comes first (nice 19): on Linux this lowers only this thread, so a core busy with long
// reads still runs the loop (and every cheap request) as soon as it has work.
setPriority(constants.priority.PRIORITY_LOW);
const db = new Database(path, { readonly: true, fileMustExist: true });
// The event loop is not this thread's: it may wait for a locked file as SQLite does.
db.pragma(`busy_timeout = ${busyTimeoutMs}`);
// As on the store's own connection: `contains` and `starts_with` compare case.
db.pragma('case_sensitive_like = ON');

/** Prepared statements by SQL text; forgotten all at once when full (shapes are few, and a thread is short-lived under attack). */
const statements = new Map<string, Database.Statement>();

function prepared(sql: string): Database.Statement {
  let statement = statements.get(sql);
  if (statement === undefined) {
    if (statements.size >= statementCacheSize) statements.clear();
    statement = db.prepare(sql).raw(true);
    statements.set(sql, statement);
  }
  return statement;
}

parentPort!.on('message', ({ sql, params, first }: ReadRequest) => {
  let reply: ReadReply;
  try {
    const statement = prepared(sql);
    reply = { rows: (first ? statement.get(...params) : statement.all(...params)) as unknown[][] | unknown[] | undefined };
  } catch (error) {
    const { message, code } = error as { message?: unknown; code?: unknown };
    reply = { error: { message: String(message), code: typeof code === 'string' ? code : undefined } };
  }
  parentPort!.postMessage(reply);
});
