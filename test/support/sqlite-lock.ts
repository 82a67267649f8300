/**
 * Another process holding a SQLite file's write lock, for the fault tests: a child that opens
 * the file, takes the lock (BEGIN IMMEDIATE), says so, and lets go when told.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

/** A held lock; `release` rolls back, closes the file and waits for the child to exit. */
export interface HeldLock {
  release(): Promise<void>;
}

/** Starts a child holding the write lock of the SQLite file at `path`; resolves once it holds it. */
export function lockHolder(path: string): Promise<HeldLock> {
  const betterSqlite = createRequire(import.meta.url).resolve('better-sqlite3');
  const program = `
    const Database = require(${JSON.stringify(betterSqlite)});
    const db = new Database(${JSON.stringify(path)});
    db.exec('BEGIN IMMEDIATE');
    process.stdout.write('locked\\n');
    process.stdin.resume();
    process.stdin.on('end', () => { db.exec('ROLLBACK'); db.close(); process.exit(0); });
  `;
  const child = spawn(process.execPath, ['-e', program], { stdio: ['pipe', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the lock holder exited early (${code})`)));
    child.stdout.once('data', () => {
      child.removeAllListeners('exit');
      resolve({
        release: () =>
          new Promise<void>((done) => {
            child.once('exit', () => done());
            child.stdin.end();
          }),
      });
    });
  });
}
