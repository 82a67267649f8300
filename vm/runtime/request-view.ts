/**
 * The request as natives see it (`ctx.request`, RequestInfo): read-only, every derived field
 * (id, query, cookies, client address, TLS) computed on first read. And the request id.
 */
import type { RequestInfo } from '../host/context.js';
import { addField, decodeFormComponent } from './http/body.js';
import { resolveClient, type ClientAddress, type TrustProxy } from './http/client-address.js';
import { parseCookies } from './http/cookies.js';
import type { BodyState } from './body-state.js';
import type { IncomingRequest } from './types.js';

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
export class RequestView implements RequestInfo {
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
    private readonly bodyState: BodyState,
    private readonly trustProxy: TrustProxy,
    private readonly matched: { readonly method: string; readonly path: string } | null,
  ) {}

  get route(): string | null {
    if (this._route === null && this.matched !== null) this._route = `${this.matched.method} ${this.matched.path}`;
    return this._route;
  }

  /** The raw parsed body; null until it is read (after the route's guards). */
  get body(): unknown {
    return this.bodyState.value();
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
