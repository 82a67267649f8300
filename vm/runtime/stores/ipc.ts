/**
 * The primary-held store (DESIGN §10): under `--workers N` without Redis the cluster primary holds
 * the shared state — one key/value store and the rate-limit windows — and every worker reaches it
 * over its IPC channel. Each request runs to completion synchronously in the primary's single
 * thread, so a compare-and-set or a window hit is one atomic step across all workers, and the
 * windows run on one clock (the primary's). The state lives as long as the primary: a worker that
 * dies and is restarted finds it intact.
 *
 * Messages (JSON over the channel, as cluster and `fork` send them) carry batches: a worker sends
 * the requests of one event-loop turn together, and the primary answers them together, so a
 * loaded worker pays one message and one system call for many requests.
 *   requests `{ rvmStore: 1, requests: [{ id, op, args }, …] }` — `op` one of STORE_OPS, `args` an
 *            object whose absent properties stand for `undefined` (JSON would turn an `undefined`
 *            in an array into `null`, which `compareAndSet` must tell apart);
 *   replies  `{ rvmStore: 1, replies: [{ id, ok: true, value? }, …] }` (no `value`: undefined) or
 *            `{ id, ok: false, error: { message, code } }` for a request that failed.
 * Messages without `rvmStore: 1` are someone else's (the cluster's own `{ rvm: … }`) and ignored.
 */
import { RvmError, type Value } from '../../values.js';
import type { KeyValueStore, WindowResult } from '../../../plugins/contract.js';
import { createMemoryStore, type MemoryStore, type MemoryStoreOptions } from '../store.js';
import { OutageLog, StoreUnavailableError } from './unavailable.js';

/**
 * How long a worker waits for the primary's answer before the request fails 503: a healthy
 * primary answers in well under a millisecond even with thousands queued, so a second means it
 * is hung or gone, and a client still gets its answer long before it gives up.
 */
export const IPC_COMMAND_TIMEOUT_MS = 1_000;

/** The operations a worker may ask of the primary. */
export const STORE_OPS = ['get', 'set', 'delete', 'compareAndSet', 'hit', 'peek', 'reset'] as const;
/** One of STORE_OPS. */
export type StoreOp = (typeof STORE_OPS)[number];

/** The arguments of every operation, by name; an absent property is `undefined`. */
export interface StoreArgs {
  key: string;
  value?: Value;
  ttlMs?: number;
  expected?: Value;
  next?: Value;
  limit?: number;
  windowMs?: number;
}

/** One request from a worker. */
export interface StoreRequest {
  id: number;
  op: StoreOp;
  args: StoreArgs;
}

/** The primary's answer to one request. */
export type StoreReply = { id: number; ok: true; value?: unknown } | { id: number; ok: false; error: { message: string; code?: string } };

/** A worker's message: the requests of one turn of its event loop. */
export interface StoreRequests {
  rvmStore: 1;
  requests: StoreRequest[];
}

/** The primary's message: the replies to one StoreRequests, in its order. */
export interface StoreReplies {
  rvmStore: 1;
  replies: StoreReply[];
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

const isRequests = (m: unknown): m is StoreRequests => typeof m === 'object' && m !== null && (m as StoreRequests).rvmStore === 1 && Array.isArray((m as StoreRequests).requests);

const isReplies = (m: unknown): m is StoreReplies => typeof m === 'object' && m !== null && (m as StoreReplies).rvmStore === 1 && Array.isArray((m as StoreReplies).replies);

export interface PrimaryStoreOptions {
  /** The primary's clock (epoch ms) for TTLs and windows; tests pass their own. */
  now?: () => number;
  /** Options of the in-process store that holds the state (key caps, sweep period). */
  state?: Omit<MemoryStoreOptions, 'now'>;
}

/** The primary's side: the shared state, answering the requests of every attached channel. */
export class PrimaryStore {
  /** The state itself: values and windows, in this process. */
  readonly state: MemoryStore;
  private readonly now: () => number;

  /** A store with empty state. */
  constructor(options: PrimaryStoreOptions = {}) {
    this.now = options.now ?? Date.now;
    this.state = createMemoryStore({ ...options.state, now: this.now });
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

  /** Answers a worker's batch, each request run to completion in order. */
  answerAll(message: StoreRequests): StoreReplies {
    return { rvmStore: 1, replies: message.requests.map((request) => this.answer(request)) };
  }

  /** Runs one request to completion (synchronously: this is what makes every operation atomic). */
  answer(request: StoreRequest): StoreReply {
    const id = request?.id;
    try {
      const value = this.run(request.op, request.args ?? ({} as StoreArgs));
      return value === undefined ? { id, ok: true } : { id, ok: true, value };
    } catch (error) {
      const e = error as { message?: unknown; code?: unknown };
      return {
        id,
        ok: false,
        error: { message: String(e?.message ?? error), ...(typeof e?.code === 'string' ? { code: e.code } : {}) },
      };
    }
  }

  /** Stops the sweep timers. */
  close(): void {
    this.state.close();
  }

  private run(op: StoreOp, a: StoreArgs): unknown {
    if (typeof a.key !== 'string') throw new Error(`store request ${op} without a key`);
    switch (op) {
      case 'get':
        return this.state.get(a.key);
      case 'set':
        return this.state.set(a.key, a.value as Value, a.ttlMs);
      case 'delete':
        return this.state.delete(a.key);
      case 'compareAndSet':
        return this.state.compareAndSet(a.key, a.expected, a.next, a.ttlMs);
      case 'hit':
        return this.state.hit(a.key, a.limit!, a.windowMs!, this.now());
      case 'peek':
        return this.state.peek(a.key, a.limit!, a.windowMs!, this.now());
      case 'reset':
        return this.state.reset(a.key);
      default:
        throw new Error(`unknown store operation ${String(op)}`);
    }
  }
}

export interface IpcStoreOptions {
  /** Where the start and end of an outage are logged, once each (default: nowhere). */
  log?: (line: string) => void;
  /** How long to wait for each answer (default IPC_COMMAND_TIMEOUT_MS). */
  timeoutMs?: number;
}

/** The requests sent in one message, timed together: one timer per batch, not per request. */
interface Batch {
  /** Requests of the batch still waiting for their reply. */
  waiting: number;
  timer: NodeJS.Timeout | null;
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
  batch: Batch;
}

/**
 * A worker's side: `ctx.store` and the rate-limit windows, each call a request to the primary.
 * Every method answers a Promise; it rejects with StoreUnavailableError when the channel is closed
 * (at once) or the primary does not answer within the timeout, and with the primary's own error
 * (an RvmError with its code, such as `invalid_ttl`) otherwise. Values cross as JSON.
 */
export class IpcStore implements KeyValueStore {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private readonly timeoutMs: number;
  private readonly outage: OutageLog | undefined;
  /** Requests made in this turn of the event loop, sent together when it ends (`flush`). */
  private queued: StoreRequest[] = [];
  private readonly onMessage = (message: unknown): void => {
    if (!isReplies(message)) return;
    this.outage?.reached();
    for (const reply of message.replies) {
      const p = this.pending.get(reply.id);
      // A reply after its timeout finds nobody waiting: the request already failed 503.
      if (p === undefined) continue;
      this.settle(reply.id);
      if (reply.ok) p.resolve(reply.value);
      else p.reject(new RvmError(reply.error.message, reply.error.code));
    }
  };
  private readonly onDisconnect = (): void => {
    for (const [id, p] of [...this.pending]) {
      this.settle(id);
      p.reject(this.unavailable('the primary process closed the channel'));
    }
  };

  /** A store asking the primary at the other end of `channel` (in a worker: `process`). */
  constructor(
    private readonly channel: IpcChannel = process as unknown as IpcChannel,
    options: IpcStoreOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? IPC_COMMAND_TIMEOUT_MS;
    this.outage = options.log === undefined ? undefined : new OutageLog('the primary process (--workers)', options.log);
    channel.on('message', this.onMessage);
    channel.on('disconnect', this.onDisconnect);
  }

  /** The value of `key`, or undefined when absent or expired. */
  get(key: string): Promise<Value | undefined> {
    return this.request('get', { key }) as Promise<Value | undefined>;
  }

  /** Sets `key` to `value`, for `ttlMs` when given. */
  async set(key: string, value: Value, ttlMs?: number): Promise<void> {
    await this.request('set', { key, value, ttlMs });
  }

  /** Removes `key`. */
  async delete(key: string): Promise<void> {
    await this.request('delete', { key });
  }

  /** The contract's atomic compare-and-set, run as one step in the primary. */
  compareAndSet(key: string, expected: Value | undefined, next: Value | undefined, ttlMs?: number): Promise<boolean> {
    return this.request('compareAndSet', { key, expected, next, ttlMs }) as Promise<boolean>;
  }

  /**
   * Checks and, when allowed, counts one request of `key` (RateLimitStore's `hit`). `now` is
   * ignored: the window runs on the primary's clock, one clock for all workers.
   */
  hit(key: string, limit: number, windowMs: number, _now?: number): Promise<WindowResult> {
    return this.request('hit', { key, limit, windowMs }) as Promise<WindowResult>;
  }

  /** Like `hit`, without counting. */
  peek(key: string, limit: number, windowMs: number, _now?: number): Promise<WindowResult> {
    return this.request('peek', { key, limit, windowMs }) as Promise<WindowResult>;
  }

  /** Forgets every request counted for `key`. */
  async reset(key: string): Promise<void> {
    await this.request('reset', { key });
  }

  /** Requests awaiting an answer. */
  get inFlight(): number {
    return this.pending.size;
  }

  /** Stops listening on the channel; requests still waiting fail as unavailable. */
  close(): void {
    this.channel.off('message', this.onMessage);
    this.channel.off('disconnect', this.onDisconnect);
    this.onDisconnect();
  }

  private request(op: StoreOp, args: StoreArgs): Promise<unknown> {
    // `process.send` is undefined in a process started without a channel (not a worker).
    if (this.channel.connected === false || typeof this.channel.send !== 'function') {
      return Promise.reject(this.unavailable('the channel to the primary process is closed'));
    }
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, batch: this.batch });
      this.batch.waiting++;
      if (this.queued.push({ id, op, args }) === 1) setImmediate(this.flush);
    });
  }

  /** The batch the requests of this turn join. */
  private batch: Batch = { waiting: 0, timer: null };

  /** Sends the queued requests as one message, timed as one batch. */
  private readonly flush = (): void => {
    const requests = this.queued;
    const batch = this.batch;
    this.queued = [];
    this.batch = { waiting: 0, timer: null };
    // Every request of the batch already failed (the channel closed meanwhile): nothing to send.
    if (batch.waiting === 0) return;
    const fail = (message: string): void => {
      for (const { id } of requests) this.pending.get(id)?.reject(this.unavailable(message));
      for (const { id } of requests) this.settle(id);
    };
    batch.timer = setTimeout(() => fail(`the primary process did not answer within ${this.timeoutMs} ms`), this.timeoutMs);
    this.channel.send({ rvmStore: 1, requests } satisfies StoreRequests, (error) => {
      if (error !== null && error !== undefined) fail(`the channel to the primary process failed: ${error.message}`);
    });
  };

  /** The error for a request that could not reach the primary, its outage logged once. */
  private unavailable(message: string): StoreUnavailableError {
    const error = new StoreUnavailableError(message);
    this.outage?.failed(error);
    return error;
  }

  /** Forgets request `id`; its batch's timer stops once none of the batch is waiting. */
  private settle(id: number): void {
    const p = this.pending.get(id);
    if (p === undefined) return;
    this.pending.delete(id);
    if (--p.batch.waiting === 0 && p.batch.timer !== null) clearTimeout(p.batch.timer);
  }
}
