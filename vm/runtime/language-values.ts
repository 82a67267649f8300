/**
 * The language's own values of a request: `request` (its fields made on first read), `response`
 * (live status and headers of the draft) and case-insensitive headers.
 */
import type { RequestInfo } from '../host/context.js';
import { HostObject, type Value, type ValueObject } from '../values.js';
import type { DraftResponse } from './response.js';

/** Where `request`'s fields come from (the request's context): each made once, on first read. */
export interface RequestSources {
  readonly request: RequestInfo;
  /** False until the body was read: `request` written out then shows a null body. */
  readonly bodyKnown: boolean;
  cookiesValue(): Value;
  rawQueryValue(): Value;
  paramsValue(): Value;
  rawBodyValue(): Value;
}

/** Field names of the `request` value, in the order `keys()` lists them. */
const REQUEST_FIELDS = ['method', 'path', 'url', 'headers', 'ip', 'cookies', 'query', 'params', 'body', 'id'];

/** `request` as the language sees it. */
export class RequestValue extends HostObject {
  readonly typeName = 'request';
  private _headers: HeadersValue | null = null;

  constructor(private readonly ctx: RequestSources) {
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
export class ResponseValue extends HostObject {
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
