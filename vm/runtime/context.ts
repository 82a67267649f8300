/**
 * The per-request context, composed of the request view (request-view.ts), the body state
 * (body-state.ts) and the draft response (response.ts), with a thin adapter for the VM: what
 * natives and guards see (`CallContext`) and the language values the VM reads (`request`,
 * `params`, `query`, `body`, `response`, `state`; their wrappers are language-values.ts).
 * Everything is computed on first read, so a handler that touches nothing pays for nothing.
 */
import { PassThrough } from 'node:stream';
import { HALT, type AppSettings, type BodyKind, type CallContext, type Halt, type RequestOrigin, type ResponseStream } from '../host/context.js';
import type { KeyValueStore } from '../host/stores.js';
import { RvmError, fromJson, type Value, type ValueObject } from '../values.js';
import { HTTP, RUNTIME } from '../errors.js';
import type { Admission } from './http/admission.js';
import { HttpError, NO_BODY, hasBody } from './http/body.js';
import { Budget } from '../interp/budget.js';
import { callLambda } from '../interp/interpreter.js';
import { RequestOrigins } from './request-origin.js';
import { describeError, type Logger } from './log.js';
import { DraftResponse, defaultErrorCode, defaultErrorMessage, errorBody } from './response.js';
import type { IncomingRequest, ParsedBody, ParsedBodyKind, UploadSpec } from './types.js';
import type { ValidationPlans } from './validate.js';
import type { VmHost } from '../interp/program.js';
import type { RouteMeta } from '../bytecode/module.js';
import { failStatement, respondStatement } from './statements.js';
import type { AbandonReason } from './watchdog.js';
import { BodyState } from './body-state.js';
import { RequestView } from './request-view.js';
import { RequestValue, ResponseValue, type RequestSources } from './language-values.js';

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

/** What `next()` runs: the rest of the middleware chain and the route. */
export type NextHandler = () => Value | Promise<Value>;

const UNSET: unique symbol = Symbol('unset');

/** The context of one request: `CallContext` for natives, and the machine's host (`VmHost`): the language values it reads, the steps it hands over. */
export class RequestContext implements VmHost, RequestSources {
  readonly request: RequestView;
  readonly response = new DraftResponse();
  /** The request's fuel, CPU time and abort state, shared by every execution of its chunks. */
  readonly budget: Budget;
  readonly app: AppSettings;
  readonly store: KeyValueStore;
  /** Set by the pipeline inside middleware; null elsewhere. */
  nextHandler: NextHandler | null = null;

  private readonly logger: Logger;
  private readonly onAppLog: ((message: string) => void) | undefined;
  private _locals: Map<string, unknown> | null = null;
  private readonly incoming: IncomingRequest;
  private readonly admission: Admission | undefined;
  private readonly validation: ValidationPlans | undefined;
  /** The request's body: read once, its memory, the checks left for it, its upload files. */
  readonly bodyState: BodyState;
  /** Result memory charged by natives (`chargeMemory`), released by `releaseMemory`. */
  private resultCharged = 0;
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
    this.bodyState = new BodyState(parsedBody, deps.admission);
    this.request = new RequestView(incoming, path, rawQuery, params, this.bodyState, deps.settings.trustProxy, route === null ? null : route.meta);
  }

  /** How the body arrived (`json`, `form`, `text`, `none`): validation coerces form text only. */
  get bodyKind(): ParsedBodyKind {
    return this.bodyState.kind;
  }

  /**
   * READ_BODY: reads and parses the body the first time (charging body memory), then runs the
   * checks guards left for it (`afterBody`). Undefined at once when it was read; HALT when the
   * body was refused (400, 413, 415, 503) or a check answered.
   */
  readBody(): void | Halt | Promise<void | Halt> {
    const state = this.bodyState;
    if (state.known) return;
    if (!hasBody(this.incoming)) return state.settle(NO_BODY, this);
    return state.read(this.incoming, this.app.bodyLimit, this.route?.uploads).then(
      (body) => state.settle(body, this),
      (err: unknown) => this.bodyRefused(err),
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
    // Only while the language holds no reference to the raw body.
    if (this._rawBodyValue === UNSET) this.bodyState.dropParsed();
  }

  /** What body validation reads: a large JSON body's declared members alone (json-scan.ts), else the parsed body. */
  bodyFields(names: readonly string[]): unknown {
    return this.bodyState.fields(names);
  }

  /** Runs `check` right after the body is read, before validation (the `_csrf` form field). */
  afterBody(check: (ctx: CallContext) => void | Halt): void {
    this.bodyState.afterBody(check);
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
    this.bodyState.release();
    if (this.resultCharged !== 0) {
      this.admission!.releaseResult(this.resultCharged);
      this.resultCharged = 0;
    }
  }

  private bodyRefused(err: unknown): Halt {
    if (!(err instanceof HttpError)) throw err;
    this.bodyState.refuse(err);
    if (err.status >= 500 && err.cause !== undefined) this.logger.error(`[${this.request.id}] ${err.message}: ${describeError(err.cause)}`);
    if (err.headers !== undefined) for (const name of Object.keys(err.headers)) this.response.setHeader(name, err.headers[name]!);
    return this.respond(err.status, errorBody(err.message, err.code, err.details) as unknown as Value, 'json');
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

  call(f: Value, ...args: Value[]): Value {
    return callLambda(f, args);
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
    if (!this.bodyState.known)
      throw new RvmError('the body is not read yet: write `request.body` or `body` where you use it, not through a copy of `request`', RUNTIME.body_not_read);
    // Parsed bodies are already language values: JSON.parse makes plain data (a `__proto__` key
    // is an own data property), forms and multipart are built proto-safe; no copy is needed.
    this._rawBodyValue = (this.request.body ?? null) as Value;
    return this._rawBodyValue;
  }

  /** True once the body was read (or is known to be absent). */
  get bodyKnown(): boolean {
    return this.bodyState.known;
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
