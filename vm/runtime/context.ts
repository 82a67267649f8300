/**
 * The per-request context: what natives and guards see (`CallContext`) and the language values
 * the VM reads (`request`, `params`, `query`, `body`, `response`). Everything is computed on
 * first read, so a handler that touches nothing pays for nothing.
 */
import { PassThrough } from 'node:stream';
import { HALT, type AppSettings, type BodyKind, type CallContext, type Halt, type KeyValueStore, type RequestInfo, type ResponseStream } from '../../plugins/sdk.js';
import { HostObject, RvmError, fromJson, type Value, type ValueObject } from '../values.js';
import { Budget } from '../budget.js';
import { NO_BODY, addField, decodeFormComponent, type ParsedBody } from './body.js';
import { parseCookies } from './cookies.js';
import type { Logger } from './log.js';
import { DraftResponse, defaultErrorCode, defaultErrorMessage, errorBody } from './response.js';
import type { IncomingRequest } from './types.js';

/** What a context needs from the app (an `AppHandle` has all of it). */
export interface ContextDeps {
  readonly settings: AppSettings;
  readonly store: KeyValueStore;
  readonly log: Logger;
  /** Also receives each `log()` message, untagged (conformance tests read them). */
  readonly onAppLog?: (message: string) => void;
}

/** Longest `X-Request-Id` reused as the request id; longer ones are replaced, not trusted. */
export const MAX_REQUEST_ID_LENGTH = 128;

/** Distinguishes ids of different processes (workers) behind one log. */
const ID_PREFIX = (process.pid % 1296).toString(36).padStart(2, '0') + Math.floor(Math.random() * 1296).toString(36).padStart(2, '0');
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

/** `::ffff:1.2.3.4` (IPv4 on a dual-stack socket) is reported as `1.2.3.4`. */
function normalizeIp(ip: string): string {
  return ip.startsWith('::ffff:') && ip.indexOf('.') !== -1 ? ip.slice(7) : ip;
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
  private _ip: string | null = null;
  private _secure: boolean | null = null;
  private _route: string | null = null;

  constructor(
    private readonly incoming: IncomingRequest,
    readonly path: string,
    private readonly rawQuery: string,
    readonly params: Record<string, string>,
    readonly body: unknown,
    private readonly trustProxy: boolean,
    private readonly matched: { readonly method: string; readonly path: string } | null,
  ) {}

  get route(): string | null {
    if (this._route === null && this.matched !== null) this._route = `${this.matched.method} ${this.matched.path}`;
    return this._route;
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

  /** The peer address, or with trustProxy the left-most `X-Forwarded-For` entry (the original client). */
  get ip(): string {
    if (this._ip === null) {
      let ip = this.incoming.remoteAddress;
      if (this.trustProxy) {
        const forwarded = firstHeader(this.incoming.headers['x-forwarded-for']);
        if (forwarded !== undefined) {
          const comma = forwarded.indexOf(',');
          const first = (comma === -1 ? forwarded : forwarded.slice(0, comma)).trim();
          if (first !== '') ip = first;
        }
      }
      this._ip = normalizeIp(ip);
    }
    return this._ip;
  }

  /** TLS on the connection, or with trustProxy `X-Forwarded-Proto: https` from the proxy. */
  get secure(): boolean {
    if (this._secure === null) {
      let secure = this.incoming.encrypted;
      if (!secure && this.trustProxy) {
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

/** The context of one request: `CallContext` for natives plus the language values the VM reads. */
export class RequestContext implements CallContext {
  readonly request: RequestView;
  readonly response = new DraftResponse();
  readonly budget = new Budget();
  readonly app: AppSettings;
  readonly store: KeyValueStore;
  /** How the body arrived (`json`, `form`, `text`, `none`): validation coerces form text only. */
  readonly bodyKind: ParsedBody['kind'];
  /** Set by the pipeline inside middleware; null elsewhere. */
  nextHandler: NextHandler | null = null;

  private readonly logger: Logger;
  private readonly onAppLog: ((message: string) => void) | undefined;
  private _locals: Map<string, unknown> | null = null;
  private _body: Value | typeof UNSET = UNSET;
  private _rawBodyValue: Value | typeof UNSET = UNSET;
  private _requestValue: RequestValue | null = null;
  private _paramsValue: Value | null = null;
  private _queryValue: Value | null = null;
  private _rawQueryValue: Value | null = null;
  private _responseValue: ResponseValue | null = null;

  constructor(
    incoming: IncomingRequest,
    path: string,
    rawQuery: string,
    params: Record<string, string>,
    deps: ContextDeps,
    parsedBody: ParsedBody = NO_BODY,
    /** The route that matched (method and path as written), for `request.route`. */
    route: { readonly method: string; readonly path: string } | null = null,
  ) {
    this.app = deps.settings;
    this.store = deps.store;
    this.logger = deps.log;
    this.onAppLog = deps.onAppLog;
    this.bodyKind = parsedBody.kind;
    this.request = new RequestView(incoming, path, rawQuery, params, parsedBody.value, deps.settings.trustProxy, route);
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

  next(): Value | Promise<Value> {
    if (this.nextHandler === null) throw new RvmError('next() can only be called in middleware', 'next_outside_middleware');
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

  /** `request.query`: the raw query as a language object (text, or lists of text for repeated keys). */
  rawQueryValue(): Value {
    return (this._rawQueryValue ??= fromJson(this.request.query));
  }

  /** `request.body`: the raw parsed body as a language value. */
  rawBodyValue(): Value {
    // Parsed bodies are already language values: JSON.parse makes plain data (a `__proto__` key
    // is an own data property), forms and multipart are built proto-safe; no copy is needed.
    if (this._rawBodyValue === UNSET) this._rawBodyValue = (this.request.body ?? null) as Value;
    return this._rawBodyValue;
  }

  /** The language's `response` value: live `status` and `headers` of the draft. */
  responseValue(): Value {
    return (this._responseValue ??= new ResponseValue(this.response));
  }
}

/** Field names of the `request` value, in the order `keys()` lists them. */
const REQUEST_FIELDS = ['method', 'path', 'url', 'headers', 'ip', 'cookies', 'query', 'params', 'body', 'id'];

/** `request` as the language sees it. */
class RequestValue extends HostObject {
  readonly typeName = 'request';
  private _headers: HeadersValue | null = null;
  private _cookies: Value | null = null;

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
        return (this._cookies ??= fromJson(req.cookies));
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
    for (const key of REQUEST_FIELDS) out[key] = this.get(key);
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
