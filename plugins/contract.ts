/**
 * The plugin contract: the types a plugin and the runtime agree on (natives, guards, validators,
 * endpoints, the call context) and `HALT`. The machine and the runtime import this module, never
 * the SDK facade (plugins/sdk.ts), which re-exports it with the helpers plugin authors use.
 */
import type { Constant, FieldType, Literal } from '../vm/lang.js';
import type { JsonSchema } from '../vm/bytecode/module.js';
import type { HostObject, Value, ValueObject } from '../vm/values.js';
import type { TrustProxy } from '../vm/runtime/http/client-address.js';
import type { Budget } from '../vm/interp/budget.js';

/** Returned by a native that has answered the request: the VM ends the handler at once. */
export const HALT: unique symbol = Symbol('rvm.halt');
export type Halt = typeof HALT;

/**
 * The type a parameter expects. A native's arguments are checked against it before its body
 * runs (a `type_error` naming the native and the parameter), unless the parameter is
 * `selfChecked`; `any` checks nothing.
 */
export type ParamType = 'text' | 'int' | 'number' | 'bool' | 'list' | 'object' | 'any';

/**
 * What an argument of each type is once checked: `number` is finite, `int` a whole number,
 * `object` a plain object or a host object with keys (`request.headers`).
 */
export interface ParamValues {
  text: string;
  int: number;
  number: number;
  bool: boolean;
  list: Value[];
  object: ValueObject | HostObject;
  any: Value;
}

export interface ParamSpec {
  name: string;
  type?: ParamType;
  /** May be left out (trailing parameters only). */
  optional?: boolean;
  /** Takes any number of further arguments. */
  rest?: boolean;
  /**
   * The native checks this argument itself and receives it as it came: for a parameter that
   * also takes other values (a secret for text) or answers a wrong one with its own error code.
   * `type` still documents what it expects.
   */
  selfChecked?: boolean;
  doc?: string;
}

export interface NativeMeta {
  params: ParamSpec[];
  /** Type of the result for `rvm check` and the reference: `text`, `bool`, `object`, ... */
  returns?: string;
  doc: string;
  /** `middleware`: callable only inside a `middleware { }` block (e.g. `next()`). */
  scope?: 'middleware';
  /** Error responses calling it can end the request with (`auth_user()` → 401), for the reference. */
  responses?: ErrorResponseSpec[];
  /** Headers calling it adds to whatever the route answers (`Set-Cookie`), for the reference. */
  headers?: string[];
  /**
   * The schemes it authenticates the caller by, any one of them (`auth_user()`): a
   * `guard_definition` that calls it, itself or through its `fn`s, requires them.
   */
  security?: SecuritySchemeSpec[];
  /** The schemes whose credential it hands out (`jwt_create()`: `bearerAuth`): the document names the routes that call it. */
  issues?: string[];
}

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
  readonly config: Readonly<Record<string, unknown>>;
  /** Secret files and the environment of this app. */
  readonly secrets: SecretSource;
  /**
   * How many processes serve this app on this machine: N under `rvm run --workers N`, else 1.
   * A plugin holding a per-process resource (a database pool) divides its budget by it.
   */
  readonly workers: number;
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

/** The outcome of a sliding-window `hit` or `peek`. */
export interface WindowResult {
  /** Whether this request is (for `peek`: would be) allowed. */
  allowed: boolean;
  /** How many more requests the key may make right now. */
  remaining: number;
  /** Epoch ms at which the oldest counted request leaves the window (one more becomes allowed); `now` when none is counted. */
  resetAt: number;
}

/**
 * The state plugins keep between requests, behind `ctx.store`: values with a TTL, and exact
 * sliding windows (rate limits). In process for one process, held by the primary under
 * `--workers N`, on Redis for many machines (spec/stores.md); each method answers a value or a
 * Promise. A store that cannot be reached rejects with code `store_unavailable` (answered 503).
 */
/**
 * The prefix of security state in a KeyValueStore: replay marks, attempt counters, one-time
 * codes. Such keys are held apart from other values with a budget of their own and are never
 * evicted to make room for other keys; when that budget is full a new one is refused (503
 * `store_full`) rather than a live one forgotten (spec/stores.md). Give every such key a TTL.
 */
export const SECURITY_KEY_PREFIX = 'rvm.security:';

export interface KeyValueStore {
  get(key: string): Value | undefined | Promise<Value | undefined>;
  set(key: string, value: Value, ttlMs?: number): void | Promise<void>;
  delete(key: string): void | Promise<void>;
  /**
   * Sets `key` to `next` (removes it when `next` is undefined) only if its value is still
   * `expected` (undefined: absent or expired), as one atomic step; true when it did. Values are
   * compared as JSON. Single-use facts (a TOTP step accepted, a code's attempts) rest on it:
   * of two requests racing on one key, exactly one wins, in one process or across many.
   */
  compareAndSet(key: string, expected: Value | undefined, next: Value | undefined, ttlMs?: number): boolean | Promise<boolean>;
  /**
   * Checks and, when allowed, counts one request of `key` in an exact sliding window: allowed iff
   * fewer than `limit` requests were allowed in `(now - windowMs, now]`; a refused one is not
   * counted. Windows live apart from values (`delete` never touches one). `now` is the caller's
   * clock; a shared store runs on its own (the primary's, the Redis server's), one for all.
   */
  hit(key: string, limit: number, windowMs: number, now: number): WindowResult | Promise<WindowResult>;
  /** Like `hit`, without counting. */
  peek(key: string, limit: number, windowMs: number, now: number): WindowResult | Promise<WindowResult>;
  /** Forgets every request counted in `key`'s window. */
  reset(key: string): void | Promise<void>;
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
  readonly budget: Budget;
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

export type NativeFn = (ctx: CallContext, ...args: Value[]) => Value | Halt | Promise<Value | Halt>;

/** The value one declared parameter gives the body: its checked type, `Value` when untyped or self-checked. */
export type ParamValue<P extends ParamSpec> = P extends { selfChecked: true } ? Value : P['type'] extends ParamType ? ParamValues[P['type']] : Value;

/**
 * The arguments a native's body receives for parameters declared as a literal list: each of its
 * checked type, optional ones possibly null or left out, a rest one as the rest. Parameters not
 * known literally give `Value[]`.
 */
export type NativeArgs<P extends readonly ParamSpec[]> = P extends readonly [infer H extends ParamSpec, ...infer T extends readonly ParamSpec[]]
  ? H extends { rest: true }
    ? ParamValue<H>[]
    : H extends { optional: true }
      ? [(ParamValue<H> | null)?, ...NativeArgs<T>]
      : [ParamValue<H>, ...NativeArgs<T>]
  : P extends readonly []
    ? []
    : Value[];

/** A native as its author writes it: the body sees its arguments already checked against `params`. */
export type CheckedNativeFn<P extends readonly ParamSpec[]> = (ctx: CallContext, ...args: NativeArgs<P>) => Value | Halt | Promise<Value | Halt>;

/** How a guard is used on a route. */
export interface GuardUse {
  mode: 'required' | 'optional';
}

/** A guard lets the request through by returning, or ends it with `return ctx.fail(...)`. */
export type GuardFn = (ctx: CallContext, args: Value[], use: GuardUse) => void | Halt | Promise<void | Halt>;

/** An error a guard or validator can produce, for the reference and OpenAPI. */
export interface ErrorResponseSpec {
  status: number;
  code: string;
  description: string;
  headers?: string[];
}

export interface GuardMeta {
  params: ParamSpec[];
  doc: string;
  /**
   * Checks a use's constant arguments at load (`rate_limit(0, 60)`, `ip('10.0.0.0/33')`): a
   * message makes it a compile error instead of a 500 on the first request.
   */
  checkArgs?(args: readonly Literal[]): string | null;
  /**
   * What the app must configure for the guard to work (a key, a list of keys): a message makes a
   * warning at each use (`rvm check`, the start of `rvm run`), before requests answer 500.
   */
  checkSetup?(app: AppSettings): string | null;
  /** OpenAPI security scheme this guard implements, if any; a list when any one of them lets the caller in. */
  security?: SecuritySchemeSpec | SecuritySchemeSpec[];
  responses?: ErrorResponseSpec[];
}

/** An OpenAPI security scheme under the name the document's components list it by. */
export interface SecuritySchemeSpec {
  name: string;
  /** The Security Scheme Object; its `description` says where the credential comes from. */
  scheme: JsonSchema;
}

/** fast-check, as the fuzzer and the property tests hand it to a validator's arbitraries. */
export type FastCheck = typeof import('fast-check').default;
export type Arbitrary<T> = import('fast-check').Arbitrary<T>;

/** What an arbitrary produces for a `file` field: a file name and the bytes to upload. */
export interface FileSample {
  name: string;
  bytes: Uint8Array;
}

/** Bounds one validator use puts on a value, per dimension: `@min(8)` on text → `{ length: { min: 8 } }`. */
export type Bounds = Partial<Record<'value' | 'length' | 'items' | 'size', { min?: number; max?: number }>>;

/**
 * Why a validator refuses its arguments, with a hint on what to write instead (shown under the
 * compile error). `checkArgs` may return this or just the message.
 */
export interface ArgsProblem {
  message: string;
  hint?: string;
}

/**
 * A validator (`@email`, `@min(8)`) registered by a plugin. Everything about one use is decided
 * once, at load: argument checks (compile errors), the check function, its message and schema.
 */
export interface ValidatorSpec {
  /** Field types it applies to; on another type it is a compile error. */
  types: readonly FieldType[];
  /** Arguments by name and type, checked at compile time (count and literal types). */
  params: ParamSpec[];
  /** One sentence for `rvm validators` and the reference. */
  doc: string;
  /** Other spellings (`min_length` for `minLength`); they don't count as validators. */
  aliases?: string[];
  /**
   * Checks beyond count and type (a regex that compiles, a size that parses): a message, or an
   * ArgsProblem with a hint, makes it a compile error at the decorator; null accepts.
   */
  checkArgs?(args: readonly Literal[], type: FieldType): string | ArgsProblem | null;
  /**
   * Builds the check for one use: true when `value` (already of the field's type; an
   * UploadedFile for `file`) passes. A check that compares with other fields (`@same`) declares
   * `input` as its second parameter; such checks run once every field is typed, and `input`
   * holds them all. Checks that don't declare it run in the first pass.
   */
  build(args: readonly Literal[], type: FieldType): (value: Value, input: ValueObject) => boolean;
  /** The message when a value fails, e.g. "must be at least 8 characters". */
  message(args: readonly Literal[], type: FieldType): string;
  /** JSON Schema / OpenAPI keywords this use adds to its field. */
  schema?(args: readonly Literal[], type: FieldType): JsonSchema;
  /** Bounds this use implies, so `@min(10) @max(5)` is a compile error. */
  bounds?(args: readonly Literal[], type: FieldType): Bounds;
  /** `file` fields: the most bytes an upload may have; reading stops there. */
  uploadLimit?(args: readonly Literal[]): number;
  /** Values it accepts and, where meaningful, rejects: for property tests and `rvm fuzz`. */
  arbitraries?: {
    accepts(fc: FastCheck, args: readonly Literal[], type: FieldType): Arbitrary<unknown>;
    rejects?(fc: FastCheck, args: readonly Literal[], type: FieldType): Arbitrary<unknown> | null;
  };
}

/** A guard of a route as introspection shows it: what it is, what it takes and how it can answer. */
export interface GuardInfo {
  name: string;
  args: Literal[];
  mode: 'required' | 'optional';
  /** `plugin`: registered by a plugin; `app`: a `guard_definition` of the app. */
  source: 'plugin' | 'app';
  /** The plugin that registers it, or the `file:line` of its guard_definition. */
  origin: string;
  doc: string | null;
  /** OpenAPI security schemes, for guards that authenticate: any one of them lets the caller in. */
  security?: SecuritySchemeSpec[];
  /** An app guard's: the fields of the request's `state` it sets (`state.user = auth_user()`), which the handler may read. */
  state?: string[];
  /** The error responses it can end the request with. */
  responses: ErrorResponseSpec[];
}

/** One decorator of a field, as written and as documented. */
export interface DecoratorInfo {
  name: string;
  /** As written, folded: literals, and for @default also lists and objects. */
  args: Constant[];
  /** What a failing value is told ("must be at least 8 characters"); null for presence rules. */
  message: string | null;
  /** JSON Schema keywords it contributes. */
  schema: JsonSchema;
}

/** A field of a `validate {}` or `query {}` block. */
export interface FieldInfo {
  name: string;
  type: FieldType;
  optional: boolean;
  required: boolean;
  doc: string | null;
  line: number;
  decorators: DecoratorInfo[];
  /** The field's JSON Schema: its type plus every decorator's keywords. */
  schema: JsonSchema;
}

/** One response a route can produce, inferred from the code. */
export interface ResponseInfo {
  status: number;
  source: string;
  contentType: string | null;
  schema: JsonSchema;
  line: number;
}

/** A route as the server runs it: everything the API reference shows. */
export interface RouteInfo {
  method: string;
  /** As written: `/users/:id`. */
  path: string;
  /** OpenAPI style: `/users/{id}`. */
  openapiPath: string;
  params: string[];
  file: string;
  line: number;
  doc: string | null;
  guards: GuardInfo[];
  body: FieldInfo[] | null;
  query: FieldInfo[] | null;
  responses: ResponseInfo[];
  /** The natives it calls (itself or through its `fn`s) that declare error responses or headers, for the reference. */
  natives?: CalledNativeInfo[];
  /** The `_middleware.rvm` blocks around it, outermost first: they answer before it can (a 401). */
  middleware?: MiddlewareInfo[];
}

/** A `middleware { }` block around a route, with what it can answer instead of the route. */
export interface MiddlewareInfo {
  /** Its file: `api/_middleware.rvm`. */
  file: string;
  line: number;
  doc: string | null;
  /** Its own answers and those of the `fn`s it calls. */
  responses: ResponseInfo[];
  /** The natives it calls that declare error responses, headers or schemes (auth_user()). */
  natives: CalledNativeInfo[];
  /**
   * The schemes it lets a caller in by, any one of them: those of the natives it calls and, when
   * it answers 401, the headers and cookies it reads (Authorization is a bearer token).
   */
  security: SecuritySchemeSpec[];
}

/** A native a route calls, with what calling it can answer and the headers it adds. */
export interface CalledNativeInfo {
  name: string;
  responses: ErrorResponseSpec[];
  headers: string[];
  /** The schemes it authenticates by (NativeMeta.security); empty for most. */
  security: SecuritySchemeSpec[];
  /** The schemes whose credential it hands out (NativeMeta.issues); empty for most. */
  issues: string[];
}

/** A `type` declaration of the app, as the API reference shows it. */
export interface TypeInfo {
  name: string;
  file: string;
  line: number;
  doc: string | null;
  /** Every declared field, `@hidden` ones included (their decorators say so). */
  fields: FieldInfo[];
}

/** A problem found compiling the app (`file:line:col`, code, message, hint). */
export interface DiagnosticInfo {
  file: string;
  line: number;
  col: number;
  severity: 'error' | 'warning';
  code: string;
  message: string;
  hint?: string;
  sourceLine?: string;
}

/** The running app, for built-in endpoints such as the API reference. */
export interface AppIntrospection {
  readonly settings: AppSettings;
  /** The routes being served now (after the last good reload). */
  routes(): readonly RouteInfo[];
  /** Errors of the last reload when it failed (the previous version keeps serving); else empty. */
  errors(): readonly DiagnosticInfo[];
  /** The app's `type` declarations, sorted by name; absent where types are not known (as none). */
  types?(): readonly TypeInfo[];
  /**
   * Plugin files of the app changed since this process loaded them (dev mode), relative to the app
   * folder: plugins load once per process, so the app runs their old code until `rvm run` restarts.
   * Absent or empty when there are none.
   */
  restartNeeded?(): readonly string[];
  /** Grows by one at every reload attempt and when restartNeeded() changes; caches key on it. */
  readonly generation: number;
  /** Calls `listener` after every reload attempt; returns the unsubscribe function. */
  onReload(listener: () => void): () => void;
}

/** A server-sent stream opened by `ctx.stream()`. */
export interface ResponseStream {
  write(text: string): void;
  end(): void;
  readonly closed: boolean;
  /** Called once when the client goes away or the stream ends. */
  onClose(listener: () => void): void;
}

/** A built-in endpoint under `/_app/`: answers like a native (`ctx.respond`, `ctx.fail`, `ctx.stream`). */
export type EndpointFn = (ctx: CallContext, app: AppIntrospection) => Value | Halt | void | Promise<Value | Halt | void>;

export interface EndpointMeta {
  /** Methods it answers; GET (and HEAD) by default. */
  methods?: string[];
  doc: string;
}

// ---------------------------------------------------------------------------------------------
// Records: the one plugin that answers `type` declarations, `save`, `delete` and `transaction`

/** A declared field of a record type (`type User { email: text @email @unique }`). */
export interface RecordField {
  readonly name: string;
  readonly type: FieldType;
  /** Written `name?:`. */
  readonly optional: boolean;
  /** Neither optional nor defaulted. */
  readonly required: boolean;
  /** As written, arguments folded: validators and the provider's own decorators (`@hidden`). */
  readonly decorators: readonly { readonly name: string; readonly args: readonly Constant[] }[];
  readonly doc: string | null;
}

/** One failing field of a write, as the 422 body's `details` lists it (request validation's shape). */
export interface FieldProblem {
  field: string;
  rule: string;
  message: string;
}

/** A `type` declaration of the app, as the record provider receives it. */
export interface RecordType {
  readonly name: string;
  readonly fields: readonly RecordField[];
  readonly doc: string | null;
  /** Where it is declared (relative to the app). */
  readonly file: string;
  readonly line: number;
  readonly col: number;
  /**
   * Runs the fields' validators on a whole record as request validation runs them (presence,
   * type, every decorator; JSON strictness): the declared fields after defaults, or every failure.
   */
  validate(input: ValueObject): { value: ValueObject; errors: null } | { value: null; errors: FieldProblem[] };
}

/** Stands for an argument value the compiler could not know (`{ role: query.role }` knows the key only). */
export const UNKNOWN: unique symbol = Symbol('rvm.unknown');

/**
 * Stands for an argument the compiler saw is the request's data as the client sent it:
 * `request.body`, `request.query`, `request.params`, `request.headers`, `request.cookies`, or
 * `body` and `query` in a route that does not validate them. `source` is how the code wrote it.
 */
export class RawRequestArg {
  constructor(readonly source: string) {}
}

/** What the compiler knew of one call argument: a constant, request data, or a list or object literal holding UNKNOWN values. */
export type KnownArg = Literal | typeof UNKNOWN | RawRequestArg | KnownArg[] | { [key: string]: KnownArg };

/** A method every record type answers: `User.create(body)` calls `fn(ctx, User, body)`. */
export interface RecordMethod {
  /** Receives the type, then the call's arguments, checked against `params` as a native's are. */
  fn(ctx: CallContext, type: RecordType, ...args: Value[]): Value | Halt | Promise<Value | Halt>;
  params: ParamSpec[];
  /** What a call answers, read by the compiler's inference: `record`, `record?`, `records`, `page`, or a result type as a native's (`int`). */
  returns?: string;
  doc: string;
  /** Error responses calling it can end the request with (a write's 409 `conflict`), for the reference. */
  responses?: ErrorResponseSpec[];
}

/** Why a call's known arguments are refused at compile time, with the nearest name. */
export interface RecordCallProblem {
  message: string;
  hint?: string;
}

/** A change the record provider will not make by itself at start, at the type's declaration. */
export interface RecordStartProblem {
  message: string;
  hint?: string;
  file: string;
  line: number;
  col: number;
}

/**
 * The record provider: `T.m(...)` for every `type T` and provider method `m`, and the statements
 * `save r`, `delete r` and `transaction { }`. One plugin of an app may register it.
 */
export interface RecordProvider {
  /** By name (lower-case words): `create`, `find`, `where`… */
  methods: Readonly<Record<string, RecordMethod>>;
  /** Decorators only type fields take (`hidden`, `unique`, `index`); the validators plan every other one. */
  decorators: readonly string[];
  /** Told the app's record types whenever the app is linked, before any call. */
  declare?(types: readonly RecordType[]): void;
  /**
   * Called once the app is linked, before it serves (at start and at each dev reload): opens the
   * database when the app declares types and brings it to them. `database` names it for the start
   * line (`sqlite .rvm/data.sqlite`, never a password), null when none was opened; each problem
   * is a change the provider will not make by itself, and stops the start (or the reload).
   */
  start?(): Promise<{ database: string | null; problems: readonly RecordStartProblem[] }>;
  /** Releases what `start` opened (the app closed, or a reload replaced this version). */
  close?(): Promise<void>;
  /**
   * Checks what the compiler knew of a call's arguments (constant filters, option names): a
   * problem is a compile error at the call (`E_RECORD_QUERY`); null accepts.
   */
  checkCall?(type: RecordType, method: string, args: readonly KnownArg[]): RecordCallProblem | null;
  /** `save r`: inserts a record made by `T.new`, or updates a stored one. */
  save(ctx: CallContext, record: Value): Value | Halt | Promise<Value | Halt>;
  /** `delete r`. */
  delete(ctx: CallContext, record: Value): Value | Halt | Promise<Value | Halt>;
  /** Before a `transaction` block. */
  begin(ctx: CallContext): Value | Halt | Promise<Value | Halt>;
  /** After a `transaction` block that ran to its end. */
  commit(ctx: CallContext): Value | Halt | Promise<Value | Halt>;
  /** The block raised `error` (`{message, code}`): rolls back, then throws it again as an RvmError. */
  rollback(ctx: CallContext, error: Value): Value | Halt | Promise<Value | Halt>;
}

/** What `setup` receives. */
export interface PluginApi {
  /** The settings of the app the plugin is loaded into. */
  readonly app: AppSettings;
  /**
   * A native: the registry checks each argument against its declared parameter (type,
   * optional, rest) before `fn` runs, so `fn` receives the types `params` names.
   */
  native<const P extends readonly ParamSpec[]>(name: string, fn: CheckedNativeFn<P>, meta: Omit<NativeMeta, 'params'> & { params: P }): void;
  guard(name: string, fn: GuardFn, meta: GuardMeta): void;
  validator(name: string, spec: ValidatorSpec): void;
  /**
   * A built-in endpoint at `/_app/<path>` (e.g. `rest-api/openapi.json`). Built-ins skip user
   * middleware and set their own headers.
   */
  endpoint(path: string, fn: EndpointFn, meta: EndpointMeta): void;
  /** The record provider of the app (one per app: a second is `E_PLUGIN_CLASH`). */
  records(provider: RecordProvider): void;
  /**
   * One line `rvm run` prints at start under the app's URL, aligned with its own
   * (`  Database:      PostgreSQL 127.0.0.1:5432/app, pool 5 per worker`): what the plugin
   * uses that an operator should see. `label` is a capitalised word or two (at most 13
   * characters), `text` one line; never a secret (a password, a token). Callable in `setup` and
   * until the app serves (a record provider's `start`); the same plugin announcing a label again
   * replaces its line, another plugin's label is `E_PLUGIN_CLASH`.
   */
  announce(label: string, text: string): void;
  /**
   * Reads the app's stored records from another plugin (auth_user() merges the stored `User`).
   * The loader always gives it; optional so that hand-made APIs (test doubles) may leave it out.
   */
  readonly storedRecords?: StoredRecords;
}

/** Stored records as a plugin other than the record provider reads them. */
export interface StoredRecords {
  /**
   * What `T.find(id)` answers for the app's `type` named `type` (a record value, or null), or
   * null when the app declares no such type or no plugin provides records.
   */
  find(ctx: CallContext, type: string, id: string): Value | Halt | Promise<Value | Halt>;
  /** Whether the app declares a type named `type` and a plugin provides records (so `find` reads a store). */
  declares(type: string): boolean;
}

export interface PluginDefinition {
  name: string;
  version: string;
  /** Names of plugins that must be loaded first. */
  dependencies?: string[];
  setup(rvm: PluginApi): void | Promise<void>;
}
