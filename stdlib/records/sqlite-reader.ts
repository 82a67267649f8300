/**
 * Reads of the SQLite store that may take long (a sort of a whole table, a `contains` scan, a
 * deep offset) run here, off the event loop: in reader processes, each with its own read-only
 * connection to the store's file. WAL lets them read beside the store's writer; they see what is
 * committed, which is what a read outside a transaction saw before.
 *
 * better-sqlite3 cannot interrupt a statement, and terminating a worker thread does not reach
 * the native code running it, so a read whose request is abandoned (deadline, client gone) kills
 * its process: the request has its 503 at once from the runtime, the statement stops with the
 * process, and a new one is started for the next read. A reader counts against SQLITE_READERS
 * until it has exited, and at most SQLITE_READ_QUEUE reads wait for one; past that a read answers
 * 503 `overloaded`. So a flood of slow queries holds a bounded share of the CPU and memory,
 * whatever its size.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { DatabaseUnavailableError, StoreOverloadedError, type StopSignal } from './store.js';
import { resultTooLarge } from './ops.js';

/** Reader processes (each running one read) per server process: the reads that run at once, killed ones still ending included. */
export const SQLITE_READERS = 2;
/**
 * Reads waiting for a thread; one more answers 503 `overloaded`. As many as admission lets in by
 * default (`limits.maxInFlight`): a burst of cheap reads sent here (counts) waits its turn rather
 * than being refused. A flood of slow ones is bounded by the threads, and each waits at most
 * until its request's deadline.
 */
export const SQLITE_READ_QUEUE = 1024;
/** The `Retry-After` of that 503, in seconds (admission's). */
export const SQLITE_READ_RETRY_AFTER_S = 1;

/** What a reader is started with. */
export interface ReaderData {
  path: string;
  busyTimeoutMs: number;
  statementCacheSize: number;
}

/** One read, sent to a reader. */
export interface ReadRequest {
  sql: string;
  params: unknown[];
  /** Only the first row (or undefined), not the list. */
  first: boolean;
  /** The most the rows may be charged (rowBytes, ChargeMemory.most); past it the reader stops and answers `tooLarge`. */
  most: number | undefined;
}

/** A reader's answer: the rows as arrays, the rows passing `most`, or the driver's error (its message and SQLite code). */
export type ReadReply = { rows: unknown[][] | unknown[] | undefined } | { tooLarge: true } | { error: { message: string; code: string | undefined } };

export interface ReaderOptions extends ReaderData {
  readers?: number;
  queue?: number;
}

interface Job extends ReadRequest {
  resolve(rows: unknown): void;
  reject(error: unknown): void;
  /** The request's signal, listened to while the read waits or runs. */
  signal: AbortSignal | null;
  onAbort: (() => void) | null;
  thread: Thread | null;
}

interface Thread {
  child: ChildProcess;
  /** The read it runs, or null when idle. */
  job: Job | null;
  /** Killed: it takes no more reads and leaves the count when it has exited. */
  ending: boolean;
}

const READER_ENTRY = new URL('./sqlite-reader-process.js', import.meta.url);

/** Whether a reader keeps this process alive: while it runs a read, not while idle. */
function holdOpen(child: ChildProcess, hold: boolean): void {
  if (hold) {
    child.ref();
    child.channel?.ref();
  } else {
    child.unref();
    child.channel?.unref();
  }
}

export class SqliteReader {
  private readonly threads = new Set<Thread>();
  private readonly idle: Thread[] = [];
  private readonly queue: Job[] = [];
  private readonly maxThreads: number;
  private readonly maxQueue: number;
  private closed = false;

  constructor(private readonly options: ReaderOptions) {
    this.maxThreads = options.readers ?? SQLITE_READERS;
    this.maxQueue = options.queue ?? SQLITE_READ_QUEUE;
  }

  /** How many readers exist (running, idle or ending): never more than the limit. */
  get readerCount(): number {
    return this.threads.size;
  }

  /** How many reads have started on a reader (tests tell by it where a read ran). */
  started = 0;

  /**
   * The rows of `sql` (the first only with `first`), read by a reader; rejects with the driver's
   * error, ResultMemoryError once the rows pass `most`, or the abort reason once `stop` fires.
   */
  read(sql: string, params: unknown[], first: boolean, stop?: StopSignal, most?: number): Promise<unknown> {
    if (this.closed) return Promise.reject(new DatabaseUnavailableError('the database is closed'));
    const signal = stop?.signal ?? null;
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const job: Job = { sql, params, first, most, resolve, reject, signal, onAbort: null, thread: null };
      const thread = this.freeThread();
      if (thread === null && this.queue.length >= this.maxQueue) {
        reject(new StoreOverloadedError(`${this.maxThreads + this.maxQueue} expensive reads are running or waiting`, SQLITE_READ_RETRY_AFTER_S));
        return;
      }
      if (signal !== null) {
        job.onAbort = () => this.abandon(job);
        signal.addEventListener('abort', job.onAbort, { once: true });
      }
      if (thread === null) this.queue.push(job);
      else this.start(thread, job);
    });
  }

  /**
   * Starts a reader ahead of the first read, unless one exists: a reader takes a few hundred
   * milliseconds to start on a busy machine, which the first expensive read should not wait.
   */
  warm(): void {
    if (!this.closed && this.threads.size === 0) this.idle.push(this.spawn());
  }

  /** Ends every reader; reads still waiting fail 503. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) this.settle(job).reject(new DatabaseUnavailableError('the database is closed'));
    await Promise.all(
      [...this.threads].map((thread) => {
        thread.ending = true;
        const { child } = thread;
        if (child.exitCode !== null || child.signalCode !== null) return undefined;
        // Held open until it has exited, so the caller's await ends with it.
        holdOpen(child, true);
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGKILL');
        return exited;
      }),
    );
  }

  private freeThread(): Thread | null {
    const idle = this.idle.pop();
    if (idle !== undefined) return idle;
    return this.threads.size < this.maxThreads ? this.spawn() : null;
  }

  private spawn(): Thread {
    const { path, busyTimeoutMs, statementCacheSize } = this.options;
    const data = JSON.stringify({ path, busyTimeoutMs, statementCacheSize } satisfies ReaderData);
    // Structured clone ('advanced') carries the rows as they are; no flags of this process (a
    // heap size, a test runner's) are the reader's.
    const child = fork(READER_ENTRY, [data], { serialization: 'advanced', execArgv: [], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    const thread: Thread = { child, job: null, ending: false };
    // Idle until a read starts on it: it must not keep the process alive.
    holdOpen(child, false);
    this.threads.add(thread);
    child.on('message', (reply: ReadReply) => this.answered(thread, reply));
    child.on('error', (error) => {
      const job = thread.job;
      thread.job = null;
      if (job !== null) this.settle(job).reject(error);
    });
    child.on('exit', () => {
      this.threads.delete(thread);
      const at = this.idle.indexOf(thread);
      if (at >= 0) this.idle.splice(at, 1);
      const job = thread.job;
      thread.job = null;
      if (job !== null) this.settle(job).reject(new DatabaseUnavailableError('the database reader stopped'));
      this.next();
      // One this reader killed is replaced at once, so the next read finds a reader ready;
      // one that failed by itself (the file unreadable) is not, or it would fail again and again.
      if (thread.ending) this.warm();
    });
    return thread;
  }

  private start(thread: Thread, job: Job): void {
    this.started++;
    job.thread = thread;
    thread.job = job;
    // A running read keeps the process alive; an idle reader does not.
    holdOpen(thread.child, true);
    thread.child.send({ sql: job.sql, params: job.params, first: job.first, most: job.most } satisfies ReadRequest);
  }

  private answered(thread: Thread, reply: ReadReply): void {
    if (thread.ending) return;
    const job = thread.job;
    thread.job = null;
    if (job !== null) {
      const settled = this.settle(job);
      if ('rows' in reply) settled.resolve(reply.rows);
      else if ('tooLarge' in reply) settled.reject(resultTooLarge());
      else settled.reject(Object.assign(new Error(reply.error.message), { code: reply.error.code }));
    }
    holdOpen(thread.child, false);
    this.idle.push(thread);
    this.next();
  }

  /** Starts waiting reads on the threads free now. */
  private next(): void {
    while (this.queue.length > 0 && !this.closed) {
      const thread = this.freeThread();
      if (thread === null) return;
      this.start(thread, this.queue.shift()!);
    }
  }

  /** The request of `job` was abandoned: it leaves the queue, or its reader is killed (and replaced). */
  private abandon(job: Job): void {
    const thread = job.thread;
    if (thread === null) {
      const at = this.queue.indexOf(job);
      if (at >= 0) this.queue.splice(at, 1);
    } else {
      thread.job = null;
      thread.ending = true;
      thread.child.kill('SIGKILL');
    }
    this.settle(job).reject(job.signal!.reason);
  }

  /** Stops listening to the job's request; answers with its resolve and reject. */
  private settle(job: Job): Job {
    if (job.onAbort !== null) job.signal!.removeEventListener('abort', job.onAbort);
    job.onAbort = null;
    job.thread = null;
    return job;
  }
}
