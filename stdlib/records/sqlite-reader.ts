/**
 * Reads of the SQLite store that may take long (a sort of a whole table, a `contains` scan, a
 * deep offset) run here, off the event loop: on worker threads, each with its own read-only
 * connection to the store's file. WAL lets them read beside the store's writer; they see what is
 * committed, which is what a read outside a transaction saw before.
 *
 * better-sqlite3 cannot interrupt a statement from another thread, so a read whose request is
 * abandoned (deadline, client gone) terminates its thread: the request has its 503 at once from
 * the runtime, the thread ends (terminating a worker stops its statement) and a new one is
 * started for the next read. A thread counts against SQLITE_READER_THREADS until it has ended,
 * and at most SQLITE_READ_QUEUE reads wait for one; past that a read answers 503 `overloaded`.
 * So a flood of slow queries holds a bounded share of the CPU and memory, whatever its size.
 */
import { Worker } from 'node:worker_threads';
import { DatabaseUnavailableError, StoreOverloadedError, type StopSignal } from './store.js';

/** Threads (each running one read) per process: the reads that run at once, terminated ones still ending included. */
export const SQLITE_READER_THREADS = 2;
/**
 * Reads waiting for a thread; one more answers 503 `overloaded`. As many as admission lets in by
 * default (`limits.maxInFlight`): a burst of cheap reads sent here (counts) waits its turn rather
 * than being refused. A flood of slow ones is bounded by the threads, and each waits at most
 * until its request's deadline.
 */
export const SQLITE_READ_QUEUE = 1024;
/** The `Retry-After` of that 503, in seconds (admission's). */
export const SQLITE_READ_RETRY_AFTER_S = 1;

/** What a thread is started with. */
export interface ReaderThreadData {
  path: string;
  busyTimeoutMs: number;
  statementCacheSize: number;
}

/** One read, sent to a thread. */
export interface ReadRequest {
  sql: string;
  params: unknown[];
  /** Only the first row (or undefined), not the list. */
  first: boolean;
}

/** A thread's answer: the rows as arrays, or the driver's error (its message and SQLite code). */
export type ReadReply = { rows: unknown[][] | unknown[] | undefined } | { error: { message: string; code: string | undefined } };

export interface ReaderOptions extends ReaderThreadData {
  threads?: number;
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
  worker: Worker;
  /** The read it runs, or null when idle. */
  job: Job | null;
  /** Terminated: it takes no more reads and leaves the count when it has exited. */
  ending: boolean;
}

const THREAD_ENTRY = new URL('./sqlite-reader-thread.js', import.meta.url);

export class SqliteReader {
  private readonly threads = new Set<Thread>();
  private readonly idle: Thread[] = [];
  private readonly queue: Job[] = [];
  private readonly maxThreads: number;
  private readonly maxQueue: number;
  private closed = false;

  constructor(private readonly options: ReaderOptions) {
    this.maxThreads = options.threads ?? SQLITE_READER_THREADS;
    this.maxQueue = options.queue ?? SQLITE_READ_QUEUE;
  }

  /** How many threads exist (running, idle or ending): never more than the limit. */
  get threadCount(): number {
    return this.threads.size;
  }

  /** How many reads have started on a thread (tests tell by it where a read ran). */
  started = 0;

  /** The rows of `sql` (the first only with `first`), read on a thread; rejects with the driver's error, or the abort reason once `stop` fires. */
  read(sql: string, params: unknown[], first: boolean, stop?: StopSignal): Promise<unknown> {
    if (this.closed) return Promise.reject(new DatabaseUnavailableError('the database is closed'));
    const signal = stop?.signal ?? null;
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const job: Job = { sql, params, first, resolve, reject, signal, onAbort: null, thread: null };
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
   * Starts a thread ahead of the first read, unless one exists: a thread takes a few hundred
   * milliseconds to start on a busy machine, which the first expensive read should not wait.
   */
  warm(): void {
    if (!this.closed && this.threads.size === 0) this.idle.push(this.spawn());
  }

  /** Ends every thread; reads still waiting fail 503. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) this.settle(job).reject(new DatabaseUnavailableError('the database is closed'));
    await Promise.all(
      [...this.threads].map((thread) => {
        thread.ending = true;
        return thread.worker.terminate();
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
    const worker = new Worker(THREAD_ENTRY, { workerData: { path, busyTimeoutMs, statementCacheSize } satisfies ReaderThreadData });
    const thread: Thread = { worker, job: null, ending: false };
    // Idle until a read starts on it: it must not keep the process alive.
    worker.unref();
    this.threads.add(thread);
    worker.on('message', (reply: ReadReply) => this.answered(thread, reply));
    worker.on('error', (error) => {
      const job = thread.job;
      thread.job = null;
      if (job !== null) this.settle(job).reject(error);
    });
    worker.on('exit', () => {
      this.threads.delete(thread);
      const at = this.idle.indexOf(thread);
      if (at >= 0) this.idle.splice(at, 1);
      const job = thread.job;
      thread.job = null;
      if (job !== null) this.settle(job).reject(new DatabaseUnavailableError('the database reader stopped'));
      this.next();
      // One this reader terminated is replaced at once, so the next read finds a thread ready;
      // one that failed by itself (the file unreadable) is not, or it would fail again and again.
      if (thread.ending) this.warm();
    });
    return thread;
  }

  private start(thread: Thread, job: Job): void {
    this.started++;
    job.thread = thread;
    thread.job = job;
    // A running read keeps the process alive; an idle thread does not.
    thread.worker.ref();
    thread.worker.postMessage({ sql: job.sql, params: job.params, first: job.first } satisfies ReadRequest);
  }

  private answered(thread: Thread, reply: ReadReply): void {
    if (thread.ending) return;
    const job = thread.job;
    thread.job = null;
    if (job !== null) {
      const settled = this.settle(job);
      if ('rows' in reply) settled.resolve(reply.rows);
      else settled.reject(Object.assign(new Error(reply.error.message), { code: reply.error.code }));
    }
    thread.worker.unref();
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

  /** The request of `job` was abandoned: it leaves the queue, or its thread is terminated (and replaced by the next read). */
  private abandon(job: Job): void {
    const thread = job.thread;
    if (thread === null) {
      const at = this.queue.indexOf(job);
      if (at >= 0) this.queue.splice(at, 1);
    } else {
      thread.job = null;
      thread.ending = true;
      void thread.worker.terminate();
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
