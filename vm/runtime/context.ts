/**
 * The per-request context: what natives and guards see (`CallContext`) and the language values
 * the VM reads (`request`, `params`, `query`, `body`, `response`, `state`). Everything is computed on
 * first read, so a handler that touches nothing pays for nothing.
 */
import { PassThrough } from 'node:stream';
import {
  HALT,
  type AppSettings,
  type BodyKind,
  type CallContext,
  type Halt,
  type RequestInfo,
  type RequestOrigin,
  type ResponseStream,
} from '../host/context.js';
import type { KeyValueStore } from '../host/stores.js';
import { HostObject, RvmError, fromJson, type Value, type ValueObject } from '../values.js';
import { HTTP, RUNTIME } from '../errors.js';
import { type Admission, bodyMemoryFactor, overloaded } from './http/admission.js';
import { DROPPED, HttpError, NO_BODY, addField, decodeFormComponent, hasBody, readBodyThen, type ParsedBody } from './http/body.js';
import { resolveClient, type ClientAddress, type TrustProxy } from './http/client-address.js';
import { Budget } from '../interp/budget.js';
import { parseCookies } from './http/cookies.js';
import { RequestOrigins } from './request-origin.js';
import { describeError, type Logger } from './log.js';
import { DraftResponse, defaultErrorCode, defaultErrorMessage, errorBody } from './response.js';
import type { IncomingRequest, UploadSpec } from './types.js';
import type { ValidationPlans } from './validate.js';
import type { VmHost } from '../interp/program.js';
import type { RouteMeta } from '../bytecode/module.js';
import { failStatement, respondStatement } from './statements.js';
import type { AbandonReason } from './watchdog.js';

/** What a context needs from the app (an `AppHandle` has all of it). */
export interface ContextDeps {
  readonly settings: AppSettings;
  readonly store: KeyValueStore;
  readonly log: Logger;
  /** Also receives each `log()` message, untagged (conformance tests read them). */
  readonly onAppLog?: (message: string) => void;
  /** Charges body memory; without it (unit tests) bodies are read uncounted. */
  readonly admission?: Admission;
  /** The routes' validation (VALIDATE), replaced with the router on hot reload; without it (unit tests) a route that validates fails. */
  readonly validation?: ValidationPlans;
}

/** The route a context serves, as far as the context needs it. */
export interface ContextRoute {
  readonly meta: { readonly method: string; readonly path: string };
  /** Declared file fields and their limits, for reading a multipart body. */
  readonly uploads?: UploadSpec;
}

/** Where the raw parsed body lives until and after it is read; shared by the context and its request view. */
interface BodySlot {
  parsed: ParsedBody | null;
}

/** Longest `X-Request-Id` reused as the request id; longer ones are replaced, not trusted. */
export const MAX_REQUEST_ID_LENGTH = 128;

/** Distinguishes ids of different processes (workers) behind one log. */
const ID_PREFIX =
  (process.pid % 1296).toString(36).padStart(2, '0') +
  Math.floor(Math.random() * 1296)
    .toString(36)
    .padStart(2, '0');
let idCounter = 0;

/** A fresh request id: process prefix plus a base-36 counter. */
export function nextRequestId(): string {
  return `${ID_PREFIX}-${(++idCounter).toString(36)}`;
}

/** True for an `X-Request-Id` safe to echo into logs: 1–128 of `A-Za-z0-9._:-`. */
function saneRequestId(id: string): boolean {
  if (id.length === 0 || id.length > MAX_REQUEST_ID_LENGTH) return false;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    const ok = (c >= 48 && c <= 58) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 45 || c === 46 || c === 95;
    if (!ok) return false;
  }
  return true;
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Parses a query string (no `?`): `a=1&a=2&b` → `{ a: ['1','2'], b: '' }`, proto-safe. */
export function parseQuery(raw: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  if (raw === '') return out;
  let start = 0;
  while (start <= raw.length) {
    let end = raw.indexOf('&', start);
    if (end === -1) end = raw.length;
    if (end > start) {
      const eq = raw.indexOf('=', start);
      const hasValue = eq !== -1 && eq < end;
      const key = decodeFormComponent(raw.slice(start, hasValue ? eq : end));
      addField(out, key, hasValue ? decodeFormComponent(raw.slice(eq + 1, end)) : '');
    }
    start = end + 1;
  }
  return out;
}

/** The read-only request view (`ctx.request`); derived fields are computed on first read. */
class RequestView implements RequestInfo {
  private _id: string | null = null;
  private _query: Record<string, string | string[]> | null = null;
  private _cookies: Record<string, string> | null = null;
  private _client: ClientAddress | null = null;
  private _secure: boolean | null = null;
  private _route: string | null = null;

  constructor(
    private readonly incoming: IncomingRequest,
    readonly path: string,
    private readonly rawQuery: string,
    readonly params: Record<string, string>,
    private readonly slot: BodySlot,
    private readonly trustProxy: TrustProxy,
    private readonly matched: { readonly method: string; readonly path: string } | null,
  ) {}

  get route(): string | null {
    if (this._route === null && this.matched !== null) this._route = `${this.matched.method} ${this.matched.path}`;
    return this._route;
  }

  /** The raw parsed body; null until it is read (after the route's guards). */
  get body(): unknown {
    const parsed = this.slot.parsed;
    if (parsed === null) return null;
    if (parsed.value !== DROPPED) return parsed.value;
    const again = { ...parsed, value: parsed.reparse!() };
    this.slot.parsed = again;
    return again.value;
  }

  get method(): string {
    return this.incoming.method;
  }
  get url(): string {
    return this.incoming.url;
  }
  get headers(): Record<string, string | string[] | undefined> {
    return this.incoming.headers;
  }

  get id(): string {
    if (this._id === null) {
      const given = firstHeader(this.incoming.headers['x-request-id']);
      this._id = given !== undefined && saneRequestId(given) ? given : nextRequestId();
    }
    return this._id;
  }

  get query(): Record<string, string | string[]> {
    return (this._query ??= parseQuery(this.rawQuery));
  }

  get cookies(): Record<string, string> {
    return (this._cookies ??= parseCookies(this.incoming.headers.cookie));
  }

  /** The client's canonical address: the peer, or behind trusted proxies the right-most untrusted `X-Forwarded-For` entry. */
  get ip(): string {
    return this.client().ip;
  }

  /** True when the peer is a trusted proxy: its `X-Forwarded-*` headers are honoured. */
  get proxied(): boolean {
    return this.client().proxied;
  }

  private client(): ClientAddress {
    return (this._client ??= resolveClient(this.trustProxy, this.incoming.remoteAddress, this.incoming.headers['x-forwarded-for']));
  }

  /** TLS on the connection, or `X-Forwarded-Proto: https` from a trusted proxy. */
  get secure(): boolean {
    if (this._secure === null) {
      let secure = this.incoming.encrypted;
      if (!secure && this.proxied) {
        const proto = firstHeader(this.incoming.headers['x-forwarded-proto']);
        if (proto !== undefined) {
          const comma = proto.indexOf(',');
          secure = (comma === -1 ? proto : proto.slice(0, comma)).trim().toLowerCase() === 'https';
        }
      }
      this._secure = secure;
    }
    return this._secure;
  }
}

/** What `next()` runs: the rest of the middleware chain and the route. */
export type NextHandler = () => Value | Promise<Value>;

const UNSET: unique symbol = Symbol('unset');

/** The context of one request: `CallContext` for natives, and the machine's host (`VmHost`): the language values it reads, the steps it hands over. */
export class RequestContext implements VmHost {
  readonly request: RequestView;
  readonly response = new DraftResponse();
  /** The request's fuel, CPU time and abort state, shared by every execution of its chunks. */
  readonly budget: Budget;
  readonly app: AppSettings;
  readonly store: KeyValueStore;
  /** Set by the pipeline inside middleware; null elsewhere. */
  nextHandler: NextHandler | null = null;
  /** Removes the request's temporary upload files; the dispatcher runs it once the response is final. */
  bodyCleanup: (() => Promise<void>) | null = null;

  private readonly logger: Logger;
  private readonly onAppLog: ((message: string) => void) | undefined;
  private _locals: Map<string, unknown> | null = null;
  private readonly incoming: IncomingRequest;
  private readonly admission: Admission | undefined;
  private readonly validation: ValidationPlans | undefined;
  private readonly slot: BodySlot;
  /** Body memory charged to the admission budget, released by `releaseMemory`. */
  private charged = 0;
  /** Result memory charged by natives (`chargeMemory`), released by `releaseMemory`. */
  private resultCharged = 0;
  private bodyChecks: ((ctx: CallContext) => void | Halt)[] | null = null;
  private endListeners: (() => void | Promise<void>)[] | null = null;
  private _body: Value | typeof UNSET = UNSET;
  private _rawBodyValue: Value | typeof UNSET = UNSET;
  private _requestValue: RequestValue | null = null;
  private _paramsValue: Value | null = null;
  private _queryValue: Value | null = null;
  private _rawQueryValue: Value | null = null;
  private _responseValue: ResponseValue | null = null;
  private _stateValue: ValueObject | null = null;
  private _cookiesValue: Value | null = null;
  private origins: RequestOrigins | null = null;

  constructor(
    incoming: IncomingRequest,
    path: string,
    rawQuery: string,
    params: Record<string, string>,
    deps: ContextDeps,
    /** The body when it is known already (NO_BODY for preflight and built-ins); null: read it from `incoming` at READ_BODY. */
    parsedBody: ParsedBody | null = NO_BODY,
    /** The route that matched: its method and path as written (`request.route`) and its uploads. */
    private readonly route: ContextRoute | null = null,
  ) {
    this.app = deps.settings;
    this.budget = new Budget({ cpuMs: deps.settings.limits.cpuTimeMs, sliceMs: deps.settings.limits.timeSliceMs });
    this.store = deps.store;
    this.logger = deps.log;
    this.onAppLog = deps.onAppLog;
    this.incoming = incoming;
    this.admission = deps.admission;
    this.validation = deps.validation;
    this.slot = { parsed: parsedBody };
    this.request = new RequestView(incoming, path, rawQuery, params, this.slot, deps.settings.trustProxy, route === null ? null : route.meta);
  }

  /** How the body arrived (`json`, `form`, `text`, `none`): validation coerces form text only. */
  get bodyKind(): ParsedBody['kind'] {
    const parsed = this.slot.parsed;
    return parsed === null ? 'none' : parsed.kind;
  }

  /**
   * READ_BODY: reads and parses the body the first time (charging body memory), then runs the
   * checks guards left for it (`afterBody`). Undefined at once when it was read; HALT when the
   * body was refused (400, 413, 415, 503) or a check answered.
   */
  readBody(): void | Halt | Promise<void | Halt> {
    return this.readBodyThen(same);
  }

  /** `readBody`, continued with `then` of its outcome in the same promise turn (at once when nothing was to read). */
  readBodyThen<T>(then: (outcome: void | Halt) => T | Promise<T>): T | Promise<T> {
    if (this.slot.parsed !== null) return then(undefined);
    if (!hasBody(this.incoming)) return then(this.bodyRead(NO_BODY));
    return readBodyThen(
      this.incoming,
      this.app.bodyLimit,
      this.route?.uploads,
      (body) => then(this.bodyRead(body)),
      (err) => then(this.bodyRefused(err)),
      this.admission === undefined ? undefined : (bytes, type) => this.chargeBody(bytes, type),
    );
  }

  /**
   * Ends the request's work: the watchdog answered it (deadline passed, client gone). The VM
   * runs no further instruction for it and natives listening to its AbortSignal stop.
   */
  abandon(reason: AbandonReason): void {
    this.abandoned = reason;
    const message = reason === 'client_gone' ? 'the client closed its connection' : `no answer within ${this.app.limits.wallTimeMs} ms`;
    this.budget.abort(new RvmError(message, reason));
  }

  /** Why the request was abandoned, or null while it runs. */
  abandoned: AbandonReason | null = null;

  /**
   * VALIDATE passed: `body` becomes the validated fields. A large JSON body that the language has
   * not touched yet drops its parsed form (a request may wait long after this, for a password
   * hash or a database); `request.body` parses it again from its bytes should it be read.
   */
  validated(value: Value): void {
    this.body = value;
    const parsed = this.slot.parsed;
    if (parsed !== null && parsed.reparse !== undefined && this._rawBodyValue === UNSET) this.slot.parsed = { ...parsed, value: DROPPED };
  }

  /** What body validation reads: a large JSON body's declared members alone (json-scan.ts), else the parsed body. */
  bodyFields(names: readonly string[]): unknown {
    const parsed = this.slot.parsed;
    if (parsed !== null && parsed.value === DROPPED && parsed.project !== undefined) return parsed.project(names);
    return this.request.body;
  }

  /** Runs `check` right after the body is read, before validation (the `_csrf` form field). */
  afterBody(check: (ctx: CallContext) => void | Halt): void {
    (this.bodyChecks ??= []).push(check);
  }

  /** Leaves `listener` for the end of the request (`ended`). */
  atEnd(listener: () => void | Promise<void>): void {
    (this.endListeners ??= []).push(listener);
  }

  /** Runs what natives left for the end of the request, once, in order; a failure is logged. */
  ended(): void {
    const listeners = this.endListeners;
    if (listeners === null) return;
    this.endListeners = null;
    const failed = (err: unknown): void => this.logger.error(`[${this.request.id}] end of request: ${describeError(err)}`);
    for (const listener of listeners) {
      try {
        const result = listener();
        if (result instanceof Promise) result.catch(failed);
      } catch (err) {
        failed(err);
      }
    }
  }

  chargeMemory(bytes: number): boolean {
    if (this.admission === undefined) return true;
    if (!this.admission.chargeResult(bytes)) return false;
    this.resultCharged += bytes;
    return true;
  }

  /** Gives back the body and result memory this request was charged; the dispatcher calls it once the answer is out. */
  releaseMemory(): void {
    if (this.charged !== 0) {
      this.admission!.release(this.charged);
      this.charged = 0;
    }
    if (this.resultCharged !== 0) {
      this.admission!.releaseResult(this.resultCharged);
      this.resultCharged = 0;
    }
  }

  private bodyRead(body: ParsedBody): void | Halt {
    this.slot.parsed = body;
    if (body.cleanup !== undefined) this.bodyCleanup = body.cleanup;
    const checks = this.bodyChecks;
    if (checks === null) return;
    for (const check of checks) if (check(this) === HALT) return HALT;
  }

  private bodyRefused(err: unknown): Halt {
    if (!(err instanceof HttpError)) throw err;
    this.slot.parsed = NO_BODY;
    if (err.cleanup !== undefined) this.bodyCleanup = err.cleanup;
    if (err.status >= 500 && err.cause !== undefined) this.logger.error(`[${this.request.id}] ${err.message}: ${describeError(err.cause)}`);
    if (err.headers !== undefined) for (const name of Object.keys(err.headers)) this.response.setHeader(name, err.headers[name]!);
    return this.respond(err.status, errorBody(err.message, err.code, err.details) as unknown as Value, 'json');
  }

  private chargeBody(rawBytes: number, mediaType: string): HttpError | null {
    const bytes = rawBytes * bodyMemoryFactor(mediaType);
    if (!this.admission!.charge(bytes)) return overloaded('request bodies in memory');
    this.charged += bytes;
    return null;
  }

  get locals(): Map<string, unknown> {
    return (this._locals ??= new Map());
  }

  /** The ambient `body`: the raw parsed body as a language value until the pipeline replaces it with the validated one. */
  get body(): Value {
    if (this._body === UNSET) this._body = this.rawBodyValue();
    return this._body;
  }
  set body(value: Value) {
    this._body = value;
  }

  log(message: string): void {
    this.logger.info(`[${this.request.id}] ${message}`);
    this.onAppLog?.(message);
  }

  respond(status: number, body: Value, kind: BodyKind = 'json'): Halt {
    const r = this.response;
    r.status = status;
    r.body = body;
    r.kind = kind;
    r.answered = true;
    return HALT;
  }

  fail(status: number, message?: string, code?: string, headers?: Record<string, string>): Halt {
    if (headers !== undefined) for (const name of Object.keys(headers)) this.response.setHeader(name, headers[name]);
    return this.respond(status, errorBody(message ?? defaultErrorMessage(status), code ?? defaultErrorCode(status)) as unknown as Value, 'json');
  }

  validate(route: RouteMeta, section: number): void | Halt {
    if (this.validation === undefined) throw new RvmError('VALIDATE without the validation of the app', HTTP.internal_error.code);
    return this.validation.run(this, route, section);
  }

  respondStatement(fields: Value): Halt {
    return respondStatement(this, fields);
  }

  failStatement(status: Value, message: Value): Halt {
    return failStatement(this, status, message);
  }

  next(): Value | Promise<Value> {
    if (this.nextHandler === null) throw new RvmError('next() can only be called in middleware', RUNTIME.next_outside_middleware);
    return this.nextHandler();
  }

  stream(status: number, contentType: string): ResponseStream {
    const body = new PassThrough();
    const r = this.response;
    r.status = status;
    r.body = body;
    r.kind = 'stream';
    r.answered = true;
    r.setHeader('content-type', contentType);
    r.setHeader('cache-control', 'no-cache');
    // Tell proxies (nginx) not to buffer the stream.
    r.setHeader('x-accel-buffering', 'no');
    let closed = false;
    body.once('close', () => (closed = true));
    return {
      write: (text) => {
        if (!closed) body.write(text);
      },
      end: () => {
        if (!closed) body.end();
      },
      get closed() {
        return closed;
      },
      onClose: (listener) => {
        if (closed) listener();
        else body.once('close', listener);
      },
    };
  }

  /** The language's `request` value. */
  requestValue(): Value {
    return (this._requestValue ??= new RequestValue(this));
  }

  requestOrigin(value: Value): RequestOrigin {
    if (typeof value !== 'object' || value === null) return null;
    // Only the sources the language has been handed: the others hold nothing the code can pass on.
    const raw: Value[] = [];
    const validated: Value[] = [];
    if (this._rawBodyValue !== UNSET) raw.push(this._rawBodyValue);
    if (this._rawQueryValue !== null) raw.push(this._rawQueryValue);
    if (this._paramsValue !== null) raw.push(this._paramsValue);
    if (this._cookiesValue !== null) raw.push(this._cookiesValue);
    if (this._body !== UNSET) validated.push(this._body);
    if (this._queryValue !== null) validated.push(this._queryValue);
    return (this.origins ??= new RequestOrigins()).of(value, raw, validated);
  }

  /** The language's `params` object. */
  paramsValue(): Value {
    return (this._paramsValue ??= fromJson(this.request.params));
  }

  /** The language's ambient `query`: the raw query object until `query {}` validation replaces it. */
  queryValue(): Value {
    return (this._queryValue ??= this.rawQueryValue());
  }

  /** Replaces the ambient `query` with the validated fields. */
  setQueryValue(value: Value): void {
    this._queryValue = value;
  }

  /** `request.cookies`: the cookies as a language object. */
  cookiesValue(): Value {
    return (this._cookiesValue ??= fromJson(this.request.cookies));
  }

  /** `request.query`: the raw query as a language object (text, or lists of text for repeated keys). */
  rawQueryValue(): Value {
    return (this._rawQueryValue ??= fromJson(this.request.query));
  }

  /** `request.body`: the raw parsed body as a language value. */
  rawBodyValue(): Value {
    if (this._rawBodyValue !== UNSET) return this._rawBodyValue;
    // The compiler reads the body before every `body` and `request.body` it sees; only a copy of
    // `request` read before the route's guards gets here first.
    if (this.slot.parsed === null)
      throw new RvmError('the body is not read yet: write `request.body` or `body` where you use it, not through a copy of `request`', RUNTIME.body_not_read);
    // Parsed bodies are already language values: JSON.parse makes plain data (a `__proto__` key
    // is an own data property), forms and multipart are built proto-safe; no copy is needed.
    this._rawBodyValue = (this.request.body ?? null) as Value;
    return this._rawBodyValue;
  }

  /** True once the body was read (or is known to be absent). */
  get bodyKnown(): boolean {
    return this.slot.parsed !== null;
  }

  /** The language's `response` value: live `status` and `headers` of the draft. */
  responseValue(): Value {
    return (this._responseValue ??= new ResponseValue(this.response));
  }

  /** The language's `state`: made on first read, so each request has its own and one that never reads it pays nothing. */
  stateValue(): Value {
    return (this._stateValue ??= {});
  }
}

/** Field names of the `request` value, in the order `keys()` lists them. */
const REQUEST_FIELDS = ['method', 'path', 'url', 'headers', 'ip', 'cookies', 'query', 'params', 'body', 'id'];

/** `request` as the language sees it. */
class RequestValue extends HostObject {
  readonly typeName = 'request';
  private _headers: HeadersValue | null = null;

  constructor(private readonly ctx: RequestContext) {
    super();
  }

  get(key: string): Value | undefined {
    const req = this.ctx.request;
    switch (key) {
      case 'method':
        return req.method;
      case 'path':
        return req.path;
      case 'url':
        return req.url;
      case 'headers':
        return (this._headers ??= new HeadersValue(req.headers));
      case 'ip':
        return req.ip;
      case 'cookies':
        return this.ctx.cookiesValue();
      case 'query':
        return this.ctx.rawQueryValue();
      case 'params':
        return this.ctx.paramsValue();
      case 'body':
        return this.ctx.rawBodyValue();
      case 'id':
        return req.id;
    }
    return undefined;
  }

  override keys(): string[] {
    return [...REQUEST_FIELDS];
  }

  toJSON(): unknown {
    const out: Record<string, unknown> = {};
    for (const key of REQUEST_FIELDS) out[key] = key === 'body' && !this.ctx.bodyKnown ? null : this.get(key);
    return out;
  }
}

/** A case-insensitive, read-only view of headers: `request.headers['X-Api-Key']`. */
export class HeadersValue extends HostObject {
  readonly typeName = 'headers';

  /** `source` holds lower-case-keyed headers: a record (the request) or a Map (the response draft). */
  constructor(private readonly source: Readonly<Record<string, string | string[] | undefined>> | Map<string, string | string[]>) {
    super();
  }

  get(key: string): Value | undefined {
    const src = this.source;
    const name = key.toLowerCase();
    const v = src instanceof Map ? src.get(name) : Object.hasOwn(src, name) ? src[name] : undefined;
    return Array.isArray(v) ? [...v] : v;
  }

  override keys(): string[] {
    const src = this.source;
    const out: string[] = [];
    if (src instanceof Map) {
      for (const key of src.keys()) out.push(key);
    } else {
      for (const key of Object.keys(src)) if (src[key] !== undefined) out.push(key);
    }
    return out;
  }

  toJSON(): unknown {
    const out: ValueObject = {};
    for (const key of this.keys()) Object.defineProperty(out, key, { value: this.get(key) ?? null, writable: true, enumerable: true, configurable: true });
    return out;
  }
}

/**
 * `response` as the language reads it, live: `status` is what would be sent now (204 while
 * nothing has answered), `headers` the draft's headers.
 */
class ResponseValue extends HostObject {
  readonly typeName = 'response';
  private headersView: HeadersValue | null = null;

  constructor(private readonly draft: DraftResponse) {
    super();
  }

  get(key: string): Value | undefined {
    if (key === 'status') return this.draft.answered ? this.draft.status : 204;
    if (key === 'headers') return (this.headersView ??= new HeadersValue(this.draft.headers));
    return undefined;
  }

  override keys(): string[] {
    return ['status', 'headers'];
  }

  toJSON(): unknown {
    return { status: this.get('status'), headers: (this.get('headers') as HeadersValue).toJSON() };
  }
}

function same<T>(value: T): T {
  return value;
}
