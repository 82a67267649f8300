/**
 * The primary-held store (spec/stores.md): under `--workers N` without Redis the cluster primary holds
 * the shared state — one key/value store and the rate-limit windows — and every worker reaches it
 * over its IPC channel. Each request runs to completion synchronously in the primary's single
 * thread, so a compare-and-set or a window hit is one atomic step across all workers, and the
 * windows run on one clock (the primary's). The state lives as long as the primary: a worker that
 * dies and is restarted finds it intact.
 *
 * Messages (JSON over the channel, as cluster and `fork` send them) carry batches: a worker sends
 * the requests of one event-loop turn together, and the primary answers them together, so a
 * loaded worker pays one message and one system call for many requests. Both lists are flat
 * (numbers and strings, no object per request): JSON reads and writes them about four times
 * faster than objects, which is most of what a request costs the two processes.
 *   requests `{ rvmStore: 1, batch, requests: [op, ...args, op, ...args, …] }` — `batch` the
 *            worker's number for it, `op` an index into STORE_OPS followed by that operation's
 *            arguments in the order of its method's parameters (OP_ARITY of them); a value that may be
 *            `undefined` (`value`, `expected`, `next`) goes boxed, `[]` or `[v]`, because JSON
 *            turns an `undefined` in a list into `null`, which `compareAndSet` must tell apart;
 *            an absent `ttlMs` goes as `false`;
 *   replies  `{ rvmStore: 1, batch, replies: [...] }` — one per request, in its order: `0` for
 *            undefined; `1, v` for the value v; `2, allowed (0|1), remaining, resetAt` for a
 *            window; `3, message, code | null` for a request that failed.
 * Messages without `rvmStore: 1` are someone else's (the cluster's own `{ rvm: … }`) and ignored.
 */
import { RvmError, type Value } from '../../values.js';
import type { KeyValueStore, WindowResult } from '../../host/stores.js';
import { createInProcessStore, type InProcessStore, type InProcessStoreOptions } from './memory.js';
import { OutageLog, StoreUnavailableError, storeOutageLines, type OutageLogTarget } from './unavailable.js';

/**
 * How long a worker waits for the primary's answer before the request fails 503: a healthy
 * primary answers in well under a millisecond even with thousands queued, so a second means it
 * is hung or gone, and a client still gets its answer long before it gives up.
 */
export const IPC_COMMAND_TIMEOUT_MS = 1_000;

/** The operations a worker may ask of the primary; a request names one by its index here. */
export const STORE_OPS = ['get', 'set', 'delete', 'compareAndSet', 'hit', 'peek', 'reset'] as const;
/** One of STORE_OPS. */
export type StoreOp = (typeof STORE_OPS)[number];
/** STORE_OPS' indexes, as requests carry them. */
const [GET, SET, DELETE, COMPARE_AND_SET, HIT, PEEK, RESET] = STORE_OPS.keys();

/** How many arguments follow each operation in a request list, by its index in STORE_OPS. */
export const OP_ARITY: readonly number[] = [1, 3, 1, 4, 3, 3, 1];

/** The tags of a reply list. */
const UNDEFINED = 0;
const VALUE = 1;
const WINDOW = 2;
const FAILED = 3;

/** A worker's message: the requests of one turn of its event loop, flat (see above). */
export interface StoreRequests {
  rvmStore: 1;
  batch: number;
  requests: unknown[];
}

/** The primary's message: the replies to one StoreRequests, flat and in its order. */
export interface StoreReplies {
  rvmStore: 1;
  batch: number;
  replies: unknown[];
}

/**
 * One end of an IPC channel: a cluster `Worker` or a `fork`ed `ChildProcess` seen from the
 * primary, or `process` seen from a worker. `send`'s callback receives the failure of a send on a
 * closed channel (without it Node raises an 'error' event instead).
 */
export interface IpcChannel {
  send(message: unknown, callback: (error: Error | null) => void): unknown;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  on(event: 'disconnect', listener: () => void): unknown;
  off(event: 'message', listener: (message: unknown) => void): unknown;
  off(event: 'disconnect', listener: () => void): unknown;
  /** False once the channel is closed (the other end exited or disconnected). */
  readonly connected?: boolean;
}

const isRequests = (m: unknown): m is StoreRequests =>
  typeof m === 'object' &&
  m !== null &&
  (m as StoreRequests).rvmStore === 1 &&
  typeof (m as StoreRequests).batch === 'number' &&
  Array.isArray((m as StoreRequests).requests);

const isReplies = (m: unknown): m is StoreReplies =>
  typeof m === 'object' &&
  m !== null &&
  (m as StoreReplies).rvmStore === 1 &&
  typeof (m as StoreReplies).batch === 'number' &&
  Array.isArray((m as StoreReplies).replies);

/** A value that may be undefined, as it crosses in a list: `[]` or `[v]`. */
const box = (v: Value | undefined): unknown[] => (v === undefined ? [] : [v]);
function unbox(boxed: unknown): Value | undefined {
  if (!Array.isArray(boxed) || boxed.length > 1) throw new Error('store request with a value that is not boxed');
  return boxed.length === 1 ? (boxed[0] as Value) : undefined;
}
/** A TTL as it crosses: `false` for none (JSON turns NaN and Infinity into `null`, which the state refuses as invalid). */
const ttl = (v: unknown): number | undefined => (v === false ? undefined : (v as number));

export interface PrimaryStoreOptions {
  /** The primary's clock (epoch ms) for TTLs and windows; tests pass their own. */
  now?: () => number;
  /** Options of the in-process store that holds the state (key caps, sweep period). */
  state?: Omit<InProcessStoreOptions, 'now'>;
}

/** The primary's side: the shared state, answering the requests of every attached channel. */
export class PrimaryStore {
  /** The state itself: values and windows, in this process. */
  readonly state: InProcessStore;
  private readonly now: () => number;

  /** A store with empty state. */
  constructor(options: PrimaryStoreOptions = {}) {
    this.now = options.now ?? Date.now;
    this.state = createInProcessStore({ ...options.state, now: this.now });
  }

  /** Serves the requests arriving on `channel` (a worker); returns a function that stops serving it. */
  attach(channel: IpcChannel): () => void {
    const listener = (message: unknown): void => {
      if (!isRequests(message)) return;
      const reply = this.answerAll(message);
      if (channel.connected === false) return;
      // A worker that died between its request and this reply: nothing to tell, nothing to raise.
      channel.send(reply, () => {});
    };
    channel.on('message', listener);
    return () => channel.off('message', listener);
  }

  /**
   * Answers a worker's batch, each request run to completion in order. An operation it does not
   * know ends the batch (its arguments cannot be told from the next request): that request is
   * answered with an error, and the worker fails the ones after it as unanswered.
   */
  answerAll(message: StoreRequests): StoreReplies {
    const list = message.requests;
    const replies: unknown[] = [];
    for (let i = 0; i < list.length; ) {
      const op = list[i];
      // Only a number names an operation: `OP_ARITY['1']` would read as 1 too, and a request
      // whose reply no case writes would shift every later reply onto the wrong request.
      const arity = typeof op === 'number' ? OP_ARITY[op] : undefined;
      if (arity === undefined) {
        replies.push(FAILED, `unknown store operation ${JSON.stringify(op)}`, null);
        break;
      }
      try {
        this.run(op as number, list, i + 1, replies);
      } catch (error) {
        const e = error as { message?: unknown; code?: unknown };
        replies.push(FAILED, String(e?.message ?? error), typeof e?.code === 'string' ? e.code : null);
      }
      i += 1 + arity!;
    }
    return { rvmStore: 1, batch: message.batch, replies };
  }

  /** Stops the sweep timers. */
  close(): void {
    this.state.close();
  }

  /**
   * Runs the operation `op` on the arguments at `list[at…]` to completion (synchronously: this is
   * what makes every operation atomic) and appends its reply.
   */
  private run(op: number, list: unknown[], at: number, replies: unknown[]): void {
    const key = list[at];
    if (typeof key !== 'string') throw new Error(`store request ${STORE_OPS[op]} without a key`);
    switch (op) {
      case GET: {
        const value = this.state.get(key);
        if (value === undefined) replies.push(UNDEFINED);
        else replies.push(VALUE, value);
        return;
      }
      case SET:
        this.state.set(key, unbox(list[at + 1]) as Value, ttl(list[at + 2]));
        replies.push(UNDEFINED);
        return;
      case DELETE:
        this.state.delete(key);
        replies.push(UNDEFINED);
        return;
      case COMPARE_AND_SET:
        replies.push(VALUE, this.state.compareAndSet(key, unbox(list[at + 1]), unbox(list[at + 2]), ttl(list[at + 3])));
        return;
      case HIT:
      case PEEK: {
        const limit = list[at + 1] as number;
        const windowMs = list[at + 2] as number;
        const w = op === HIT ? this.state.hit(key, limit, windowMs, this.now()) : this.state.peek(key, limit, windowMs, this.now());
        replies.push(WINDOW, w.allowed ? 1 : 0, w.remaining, w.resetAt);
        return;
      }
      case RESET:
        this.state.reset(key);
        replies.push(UNDEFINED);
        return;
    }
  }
}

export interface IpcStoreOptions {
  /** Where the start and end of an outage are logged, once each (default: nowhere). */
  log?: (line: string) => void;
  /** How long to wait for each answer (default IPC_COMMAND_TIMEOUT_MS). */
  timeoutMs?: number;
}

/** A request waiting for its reply. */
interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
}

/** The requests sent in one message, timed together: one timer per batch, not per request. */
interface Batch {
  /** The requests, in the order of the message (and of its replies). */
  pending: Pending[];
  timer: NodeJS.Timeout;
}

/**
 * A worker's side: `ctx.store` and the rate-limit windows, each call a request to the primary.
 * Every method answers a Promise; it rejects with StoreUnavailableError when the channel is closed
 * (at once) or the primary does not answer within the timeout, and with the primary's own error
 * (an RvmError with its code, such as `invalid_ttl`) otherwise. Values cross as JSON.
 */
export class IpcStore implements KeyValueStore {
  /** Batches sent and not yet answered, by number. */
  private readonly sent = new Map<number, Batch>();
  private nextBatch = 1;
  private readonly timeoutMs: number;
  private readonly outage = new OutageLog(storeOutageLines('the primary process (--workers)'));
  /** Where the outage's lines go. */
  private readonly logTo: OutageLogTarget;
  /** Requests made in this turn of the event loop (flat, as sent) and their promises, sent together when it ends (`flush`). */
  private queued: unknown[] = [];
  private queuedPending: Pending[] = [];
  private readonly onMessage = (message: unknown): void => {
    if (!isReplies(message)) return;
    this.outage.reached(this.logTo);
    const batch = this.sent.get(message.batch);
    // A reply after its timeout finds nobody waiting: the batch already failed 503.
    if (batch === undefined) return;
    this.settle(message.batch, batch);
    const replies = message.replies;
    let at = 0;
    for (const p of batch.pending) {
      switch (replies[at]) {
        case UNDEFINED:
          p.resolve(undefined);
          at += 1;
          break;
        case VALUE:
          p.resolve(replies[at + 1]);
          at += 2;
          break;
        case WINDOW:
          p.resolve({ allowed: replies[at + 1] === 1, remaining: replies[at + 2] as number, resetAt: replies[at + 3] as number } satisfies WindowResult);
          at += 4;
          break;
        case FAILED:
          p.reject(new RvmError(String(replies[at + 1]), (replies[at + 2] as string | null) ?? undefined));
          at += 3;
          break;
        default:
          // The primary stopped at a request it could not read (see answerAll): the rest have no
          // answer, which a client sees as any store that does not answer (503 store_unavailable).
          p.reject(new StoreUnavailableError('the primary process did not answer this store request'));
      }
    }
  };
  private readonly onDisconnect = (): void => {
    const queued = this.queuedPending;
    this.queued = [];
    this.queuedPending = [];
    for (const p of queued) p.reject(this.unavailable('the primary process closed the channel'));
    for (const [n, batch] of [...this.sent]) {
      this.settle(n, batch);
      for (const p of batch.pending) p.reject(this.unavailable('the primary process closed the channel'));
    }
  };

  /** A store asking the primary at the other end of `channel` (in a worker: `process`). */
  constructor(
    private readonly channel: IpcChannel = process as unknown as IpcChannel,
    options: IpcStoreOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? IPC_COMMAND_TIMEOUT_MS;
    this.logTo = { log: options.log ?? (() => {}) };
    channel.on('message', this.onMessage);
    channel.on('disconnect', this.onDisconnect);
  }

  /** The value of `key`, or undefined when absent or expired. */
  get(key: string): Promise<Value | undefined> {
    return this.request(GET, key) as Promise<Value | undefined>;
  }

  /** Sets `key` to `value`, for `ttlMs` when given. */
  async set(key: string, value: Value, ttlMs?: number): Promise<void> {
    await this.request(SET, key, box(value), ttlMs ?? false);
  }

  /** Removes `key`. */
  async delete(key: string): Promise<void> {
    await this.request(DELETE, key);
  }

  /** The contract's atomic compare-and-set, run as one step in the primary. */
  compareAndSet(key: string, expected: Value | undefined, next: Value | undefined, ttlMs?: number): Promise<boolean> {
    return this.request(COMPARE_AND_SET, key, box(expected), box(next), ttlMs ?? false) as Promise<boolean>;
  }

  /**
   * Checks and, when allowed, counts one request of `key` (RateLimitStore's `hit`). `now` is
   * ignored: the window runs on the primary's clock, one clock for all workers.
   */
  hit(key: string, limit: number, windowMs: number, _now?: number): Promise<WindowResult> {
    return this.request(HIT, key, limit, windowMs) as Promise<WindowResult>;
  }

  /** Like `hit`, without counting. */
  peek(key: string, limit: number, windowMs: number, _now?: number): Promise<WindowResult> {
    return this.request(PEEK, key, limit, windowMs) as Promise<WindowResult>;
  }

  /** Forgets every request counted for `key`. */
  async reset(key: string): Promise<void> {
    await this.request(RESET, key);
  }

  /** Requests awaiting an answer. */
  get inFlight(): number {
    let n = this.queuedPending.length;
    for (const batch of this.sent.values()) n += batch.pending.length;
    return n;
  }

  /** Stops listening on the channel; requests still waiting fail as unavailable. */
  close(): void {
    this.channel.off('message', this.onMessage);
    this.channel.off('disconnect', this.onDisconnect);
    this.onDisconnect();
  }

  /** Queues operation `op` (an index into STORE_OPS) with its arguments, as they cross (see the top of this file). */
  private request(op: number, key: string, a?: unknown, b?: unknown, c?: unknown): Promise<unknown> {
    // `process.send` is undefined in a process started without a channel (not a worker).
    if (this.channel.connected === false || typeof this.channel.send !== 'function') {
      return Promise.reject(this.unavailable('the channel to the primary process is closed'));
    }
    const q = this.queued;
    const arity = OP_ARITY[op]!;
    q.push(op, key);
    if (arity > 1) q.push(a);
    if (arity > 2) q.push(b);
    if (arity > 3) q.push(c);
    return new Promise((resolve, reject) => {
      if (this.queuedPending.push({ resolve, reject }) === 1) setImmediate(this.flush);
    });
  }

  /** Sends the queued requests as one message, timed as one batch. */
  private readonly flush = (): void => {
    const requests = this.queued;
    const pending = this.queuedPending;
    this.queued = [];
    this.queuedPending = [];
    // Every request of the turn already failed (the channel closed meanwhile): nothing to send.
    if (pending.length === 0) return;
    const n = this.nextBatch++;
    const fail = (message: string): void => {
      const batch = this.sent.get(n);
      if (batch === undefined) return;
      this.settle(n, batch);
      for (const p of batch.pending) p.reject(this.unavailable(message));
    };
    const timer = setTimeout(() => fail(`the primary process did not answer within ${this.timeoutMs} ms`), this.timeoutMs);
    this.sent.set(n, { pending, timer });
    this.channel.send({ rvmStore: 1, batch: n, requests } satisfies StoreRequests, (error) => {
      if (error !== null && error !== undefined) fail(`the channel to the primary process failed: ${error.message}`);
    });
  };

  /** The error for a request that could not reach the primary, its outage logged once. */
  private unavailable(message: string): StoreUnavailableError {
    const error = new StoreUnavailableError(message);
    this.outage.failed(error, this.logTo);
    return error;
  }

  /** Forgets batch `n`, answered or failed, and stops its timer. */
  private settle(n: number, batch: Batch): void {
    this.sent.delete(n);
    clearTimeout(batch.timer);
  }
}
