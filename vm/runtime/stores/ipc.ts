/**
 * The primary-held store (spec/stores.md): under `--workers N` without Redis the cluster primary holds
 * the shared state — one key/value store and the rate-limit windows — and every worker reaches it
 * over its IPC channel. Each request runs to completion synchronously in the primary's single
 * thread, so a compare-and-set or a window hit is one atomic step across all workers, and the
 * windows run on one clock (the primary's). The state lives as long as the primary: a worker that
 * dies and is restarted finds it intact.
 *
 * A worker sends the requests of one event-loop turn together, and the primary answers them
 * together, so a loaded worker pays one message and one system call for many requests. What the
 * messages hold is ipc-codec.ts, the one table both sides read.
 */
import type { Value } from '../../values.js';
import type { KeyValueStore, WindowResult } from '../../host/stores.js';
import { createInProcessStore, type InProcessStore, type InProcessStoreOptions } from './memory.js';
import {
  FAILED,
  isReplies,
  isRequests,
  readFields,
  replyKindOf,
  requestOpAt,
  STORE_OP_CODECS,
  writeRequest,
  type StoreOpCodec,
  type StoreReplies,
  type StoreRequests,
} from './ipc-codec.js';
import { OutageLog, StoreUnavailableError, storeOutageLines, type OutageLogTarget } from './unavailable.js';
import { TurnBatch } from './turn-batch.js';

/** The operations a worker asks of the primary (ipc-codec.ts). */
const [GET, SET, DELETE, COMPARE_AND_SET, HIT, PEEK, RESET] = STORE_OP_CODECS;

/**
 * How long a worker waits for the primary's answer before the request fails 503: a healthy
 * primary answers in well under a millisecond even with thousands queued, so a second means it
 * is hung or gone, and a client still gets its answer long before it gives up.
 */
export const IPC_COMMAND_TIMEOUT_MS = 1_000;

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
   * know ends the batch (its fields cannot be told from the next request): that request is
   * answered with an error, and the worker fails the ones after it as unanswered.
   */
  answerAll(message: StoreRequests): StoreReplies {
    const list = message.requests;
    const replies: unknown[] = [];
    for (let at = 0; at < list.length; ) {
      const op = requestOpAt(list, at);
      if (op === undefined) {
        FAILED.write(new Error(`unknown store operation ${JSON.stringify(list[at])}`), replies);
        break;
      }
      try {
        op.reply(op.call(this.state, readFields(op, list, at + 1), this.now), replies);
      } catch (error) {
        FAILED.write(error, replies);
      }
      at += 1 + op.fields.length;
    }
    return { rvmStore: 1, batch: message.batch, replies };
  }

  /** Stops the sweep timers. */
  close(): void {
    this.state.close();
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
  /** Requests made in this turn of the event loop, flat as sent; their promises wait in `turn`, which sends them together (`flush`). */
  private queued: unknown[] = [];
  private readonly turn = new TurnBatch<Pending>((pending) => this.flush(pending));
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
      const kind = replyKindOf(replies[at]);
      if (kind === undefined) {
        // The primary stopped at a request it could not read (see answerAll): the rest have no
        // answer, which a client sees as any store that does not answer (503 store_unavailable).
        p.reject(new StoreUnavailableError('the primary process did not answer this store request'));
        continue;
      }
      const value = kind.read(replies, at + 1);
      at += 1 + kind.width;
      if (kind === FAILED) p.reject(value as Error);
      else p.resolve(value);
    }
  };
  private readonly onDisconnect = (): void => {
    const queued = this.turn.take();
    this.queued = [];
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
    return this.request(GET, [key]);
  }

  /** Sets `key` to `value`, for `ttlMs` when given. */
  async set(key: string, value: Value, ttlMs?: number): Promise<void> {
    await this.request(SET, [key, value, ttlMs]);
  }

  /** Removes `key`. */
  async delete(key: string): Promise<void> {
    await this.request(DELETE, [key]);
  }

  /** The contract's atomic compare-and-set, run as one step in the primary. */
  compareAndSet(key: string, expected: Value | undefined, next: Value | undefined, ttlMs?: number): Promise<boolean> {
    return this.request(COMPARE_AND_SET, [key, expected, next, ttlMs]);
  }

  /**
   * Checks and, when allowed, counts one request of `key` (RateLimitStore's `hit`). `now` is
   * ignored: the window runs on the primary's clock, one clock for all workers.
   */
  hit(key: string, limit: number, windowMs: number, _now?: number): Promise<WindowResult> {
    return this.request(HIT, [key, limit, windowMs]);
  }

  /** Like `hit`, without counting. */
  peek(key: string, limit: number, windowMs: number, _now?: number): Promise<WindowResult> {
    return this.request(PEEK, [key, limit, windowMs]);
  }

  /** Forgets every request counted for `key`. */
  async reset(key: string): Promise<void> {
    await this.request(RESET, [key]);
  }

  /** Requests awaiting an answer. */
  get inFlight(): number {
    let n = this.turn.size;
    for (const batch of this.sent.values()) n += batch.pending.length;
    return n;
  }

  /** Stops listening on the channel; requests still waiting fail as unavailable. */
  close(): void {
    this.channel.off('message', this.onMessage);
    this.channel.off('disconnect', this.onDisconnect);
    this.onDisconnect();
  }

  /** Queues the request `op(...args)`, sent with the others of this turn (`flush`). */
  private request<Args extends unknown[], Result>(op: StoreOpCodec<Args, Result>, args: Args): Promise<Result> {
    // `process.send` is undefined in a process started without a channel (not a worker).
    if (this.channel.connected === false || typeof this.channel.send !== 'function') {
      return Promise.reject(this.unavailable('the channel to the primary process is closed'));
    }
    writeRequest(op, args, this.queued);
    return new Promise((resolve, reject) => this.turn.add({ resolve, reject }));
  }

  /** Sends the requests of a turn as one message, timed as one batch. */
  private flush(pending: Pending[]): void {
    const requests = this.queued;
    this.queued = [];
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
  }

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
