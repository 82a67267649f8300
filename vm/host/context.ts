/**
 * What a native, guard or endpoint sees of the request it runs for (`CallContext`) and of the
 * app (`AppSettings`, `Limits`, `SecretSource`), and `HALT`, the answer that ends a handler.
 */
import type { Value } from '../values.js';
import type { TrustProxy } from '../runtime/http/client-address.js';
import type { KeyValueStore } from './stores.js';

/** Returned by a native that has answered the request: the VM ends the handler at once. */
export const HALT: unique symbol = Symbol('rvm.halt');

export type Halt = typeof HALT;

/** Read-only view of the incoming request. Header names are lower-case. */
export interface RequestInfo {
  readonly id: string;
  readonly method: string;
  readonly path: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The client's canonical address: the peer, or behind trusted proxies the right-most untrusted `X-Forwarded-For` entry. */
  readonly ip: string;
  /** True when the connection came from a trusted proxy, so its `X-Forwarded-*` headers are honoured. */
  readonly proxied: boolean;
  /** TLS on the connection, or from a trusted proxy `X-Forwarded-Proto: https`. */
  readonly secure: boolean;
  readonly params: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string | string[]>>;
  readonly cookies: Readonly<Record<string, string>>;
  /** The raw parsed body (JSON value, form fields) or null; null until it is read, after the route's guards. */
  readonly body: unknown;
  /** The route that matched, as written: `GET /users/:id` (null for built-in endpoints). */
  readonly route: string | null;
}

export type BodyKind = 'json' | 'text' | 'html' | 'empty' | 'stream';

/** The response being built. It is buffered until the middleware chain unwinds. */
export interface ResponseDraft {
  status: number;
  readonly headers: Map<string, string | string[]>;
  body: unknown;
  kind: BodyKind;
  /** True once a helper, `response {}` or `fail` answered. */
  answered: boolean;
  setHeader(name: string, value: string | string[]): void;
  appendHeader(name: string, value: string): void;
  getHeader(name: string): string | string[] | undefined;
  removeHeader(name: string): void;
}

/** Settings the app was started with (rvm.config.json, overridden by env). */
export interface AppSettings {
  readonly dir: string | null;
  readonly dev: boolean;
  readonly bodyLimit: number;
  /** Which proxies are trusted (`false`, `true`, a hop count or a list); decide per request with `request.proxied`. */
  readonly trustProxy: TrustProxy;
  /** The isolation limits (spec/language.md §7.3): rvm.config.json `limits`, else their defaults. */
  readonly limits: Limits;
  /** What outbound requests (`http_fetch`) may reach beyond the public Internet: rvm.config.json `outbound`. */
  readonly outbound: OutboundSettings;
  readonly config: Readonly<Record<string, unknown>>;
  /** Secret files and the environment of this app. */
  readonly secrets: SecretSource;
  /**
   * How many processes serve this app on this machine: N under `rvm run --workers N`, else 1.
   * A plugin holding a per-process resource (a database pool) divides its budget by it.
   */
  readonly workers: number;
}

/** The `outbound` setting: host names, addresses and CIDR ranges reachable although not public (spec/plugins/fetch.md). */
export interface OutboundSettings {
  readonly allow: readonly string[];
}

/** The limits that keep one request from taking time, memory or connections from the others. */
export interface Limits {
  /** CPU time one request's VM may use, natives included (500 `cpu_budget_exceeded`). */
  readonly cpuTimeMs: number;
  /** How long a request runs before it yields the event loop to the others. */
  readonly timeSliceMs: number;
  /** Wall-clock time from a request's arrival to its answer, awaits included (503 `deadline_exceeded`; 408 `request_timeout` is the server's, for a request whose headers arrive too slowly). */
  readonly wallTimeMs: number;
  /** Requests being served at once; past it, 503 `overloaded`. */
  readonly maxInFlight: number;
  /** Bytes of request bodies held in memory at once, raw and parsed; past it, 503 `overloaded`. */
  readonly maxBodyMemory: number;
  /** Bytes of query results (`ctx.chargeMemory`) and large response bodies not yet sent, held at once; past it, 503 `overloaded`. */
  readonly maxResultMemory: number;
  /** Bytes of one response body; a handler answering more gets 500 `response_too_large`. */
  readonly maxResponseBytes: number;
  /** Open connections to the server; past it, new ones are closed at once. */
  readonly maxConnections: number;
  /** Open connections from one client address (not a trusted proxy); past it, new ones are closed at once. */
  readonly maxConnectionsPerClient: number;
  /** Open server-sent event streams per client address. */
  readonly maxStreamsPerClient: number;
}

/** Where plugins read keys: `app/.secrets/NAME` files and the environment. */
export interface SecretSource {
  /**
   * `.secrets/NAME` without its trailing newline, or null when absent. A name outside
   * `[A-Za-z0-9._-]+` or a path leaving `.secrets/` (symlink) throws RvmError.
   */
  read(name: string): string | null;
  /** An environment variable. */
  env(name: string): string | undefined;
  /** The app's signing secret: APP_SECRET, else `.secrets/app_secret`, generated there on first use. */
  appSecret(): string;
}

/** What a native or guard sees of the request it runs for. */
export interface CallContext {
  readonly request: RequestInfo;
  readonly response: ResponseDraft;
  readonly app: AppSettings;
  readonly store: KeyValueStore;
  /** Per-request scratch space for plugins (e.g. the authenticated user). */
  readonly locals: Map<string, unknown>;
  /**
   * The request's CPU budget, shared by all its executions. A native whose work grows with its
   * input charges it first (`chargeText(n)`, `chargeItems(n)`); one that waits passes
   * `budget.signal` on, so the wait ends when the request is aborted.
   */
  readonly budget: NativeBudget;
  /** Writes one line to the app log, tagged with the request id. */
  log(message: string): void;
  /** Answers with `body` (a value or text) and ends the handler: `return ctx.respond(...)`. */
  respond(status: number, body: Value, kind?: BodyKind): Halt;
  /**
   * Answers with the error body `{"error","code"}` and ends the request: `return ctx.fail(...)`.
   * Message and code default to the status's (`Forbidden`, `forbidden` for 403).
   */
  fail(status: number, message?: string, code?: string, headers?: Record<string, string>): Halt;
  /**
   * Runs `check` right after the request body is read, before validation; it may answer
   * (`return ctx.fail(...)`). Guards run before the body is read (spec/language.md §7.3): a guard that
   * needs a body field (the `_csrf` form field) leaves its check here.
   */
  afterBody(check: (ctx: CallContext) => void | Halt): void;
  /**
   * Runs `listener` once, when the request's work is done and its answer is final, however it
   * ended (an answer, `fail`, a runtime error, a limit): for giving back what a native holds for
   * the request, such as an open transaction. Its failure is logged, never answered.
   */
  atEnd(listener: () => void | Promise<void>): void;
  /**
   * Charges `bytes` that this request holds (rows read from a database) to the process-wide
   * budget `limits.maxResultMemory`, given back when the request ends. False, and nothing
   * charged, when that would pass the budget: the native stops taking memory and answers 503
   * `overloaded`. Charge before or while the memory is taken, not after.
   */
  chargeMemory(bytes: number): boolean;
  /**
   * Calls a lambda the native was given (`map(xs, x => x * 2)`) with `args` and returns its value,
   * synchronously and on this request's budget (a unit of fuel and a call level per call). A
   * runtime error inside it is thrown with the lambda's line; so is `wrong_arity` when `args`
   * do not match its parameters, and `lambda_cannot_wait` when it reaches a native that waits.
   * Only while the native runs, never after an await.
   */
  call(f: Value, ...args: Value[]): Value;
  /** Middleware only: runs the rest of the chain; resolves once the handler has answered. */
  next(): Value | Promise<Value>;
  /**
   * Answers with a stream (server-sent events: `text/event-stream`) the caller writes to for as
   * long as it likes; the request is answered at once. Built-in endpoints only.
   */
  stream(status: number, contentType: string): ResponseStream;
  /**
   * Where an object or list came from, by identity: 'raw' when it is (or is inside) what the
   * client sent, as parsed (`request.body`, `request.query`, `params`, `request.cookies`; `body`
   * and `query` of a route that does not validate them), 'validated' when it is inside the
   * validated `body` or `query`, null when the route's code made it (or it is no object).
   */
  requestOrigin(value: Value): RequestOrigin;
}

/** Where an object of a request came from (`CallContext.requestOrigin`). */
export type RequestOrigin = 'raw' | 'validated' | null;

/** A server-sent stream opened by `ctx.stream()`. */
export interface ResponseStream {
  write(text: string): void;
  end(): void;
  readonly closed: boolean;
  /** Called once when the client goes away or the stream ends. */
  onClose(listener: () => void): void;
}

/**
 * The request's CPU budget as a native sees it (the machine's own is vm/interp/budget.ts): work
 * that grows with its input is charged before it is done, and a native that waits passes
 * `signal` on, so the wait ends with the request.
 */
export interface NativeBudget {
  /** Records `units` of work about to be done (one unit ≈ one loop iteration of the VM). */
  charge(units: number): void;
  /** Charges the work of scanning or building `chars` characters of text. */
  chargeText(chars: number): void;
  /** Charges the work of building or visiting `items` list items or object keys. */
  chargeItems(items: number): void;
  /** Aborted together with the request (its deadline, its client gone, its budget spent). */
  readonly signal: AbortSignal;
}
