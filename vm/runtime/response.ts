/**
 * The response side: the draft a request builds, the one error body shape, and turning a draft
 * into the status, headers and bytes the transport writes.
 */
import { Readable } from 'node:stream';
import { toText, RvmError } from '../values.js';
import { RUNTIME, type HttpErrorEntry } from '../errors.js';
import type { BodyKind, ResponseDraft } from '../host/context.js';
import type { OutgoingResponse } from './types.js';

const JSON_TYPE = 'application/json; charset=utf-8';
const TEXT_TYPE = 'text/plain; charset=utf-8';
const HTML_TYPE = 'text/html; charset=utf-8';

/** The error body every runtime-made answer uses: `{ error, code, details? }`. */
export interface ErrorBody {
  error: string;
  code: string;
  details?: unknown[];
}

/** Builds the one error body shape. */
export function errorBody(message: string, code: string, details?: unknown[]): ErrorBody {
  return details === undefined ? { error: message, code } : { error: message, code, details };
}

export { defaultErrorCode, defaultErrorMessage } from '../http-status.js';

/** RFC 7230 token: a valid header name. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** CR, LF and NUL would split or end the header block (response splitting). */
const HEADER_VALUE_UNSAFE = /[\r\n\0]/;

/** Header names already checked, by their lower-case form: plugins set the same few names on every request. */
const CHECKED_NAMES = new Map<string, string>();
/** Names remembered at most: an app that sets ever new names is checked every time, never grows this. */
export const MAX_CHECKED_NAMES = 1024;

/** The lower-case key of a valid header name and value; throws RvmError invalid_header otherwise. */
function checkedHeader(name: string, value: string | string[]): string {
  let key = CHECKED_NAMES.get(name);
  if (key === undefined) {
    if (!HEADER_NAME.test(name)) throw new RvmError(`invalid header name '${name}'`, RUNTIME.invalid_header);
    key = name.toLowerCase();
    if (CHECKED_NAMES.size < MAX_CHECKED_NAMES) CHECKED_NAMES.set(name, key);
  }
  if (typeof value === 'string') {
    if (HEADER_VALUE_UNSAFE.test(value)) throw new RvmError(`invalid value for header '${name}'`, RUNTIME.invalid_header);
  } else {
    for (const v of value) {
      if (typeof v !== 'string' || HEADER_VALUE_UNSAFE.test(v)) throw new RvmError(`invalid value for header '${name}'`, RUNTIME.invalid_header);
    }
  }
  return key;
}

/** The response a request builds; buffered until the middleware chain unwinds. Header names are lower-case. */
export class DraftResponse implements ResponseDraft {
  status = 200;
  body: unknown = null;
  kind: BodyKind = 'json';
  answered = false;
  /** Created on first use: most responses set no header. */
  private map: Map<string, string | string[]> | null = null;

  get headers(): Map<string, string | string[]> {
    return (this.map ??= new Map());
  }

  /** True when any header was set (lets finalisation skip the Map). */
  get hasHeaders(): boolean {
    return this.map !== null && this.map.size > 0;
  }

  setHeader(name: string, value: string | string[]): void {
    const key = checkedHeader(name, value);
    this.headers.set(key, typeof value === 'string' ? value : [...value]);
  }

  appendHeader(name: string, value: string): void {
    const key = checkedHeader(name, value);
    const prev = this.headers.get(key);
    if (prev === undefined) this.headers.set(key, value);
    else if (Array.isArray(prev)) prev.push(value);
    else this.headers.set(key, [prev, value]);
  }

  getHeader(name: string): string | string[] | undefined {
    return this.map?.get(name.toLowerCase());
  }

  removeHeader(name: string): void {
    this.map?.delete(name.toLowerCase());
  }
}

/** True for statuses that never carry a body (1xx, 204, 304). */
function bodyless(status: number): boolean {
  return status < 200 || status === 204 || status === 304;
}

/** A handler answered a body of more than `limits.maxResponseBytes`: answered 500 `response_too_large` instead (answer.ts). */
export class ResponseTooLargeError extends Error {
  constructor(
    readonly bytes: number,
    readonly maxBytes: number,
  ) {
    super(`a response body of ${bytes} bytes is over limits.maxResponseBytes (${maxBytes})`);
  }
}

/**
 * Serialises a draft: body by kind, content-type unless one was set, content-length; 204 when
 * never answered; ResponseTooLargeError for a body over `maxBytes`. (HEAD drops the body in
 * dispatch, for every answer.)
 */
export function finalizeResponse(draft: ResponseDraft, maxBytes: number = Infinity): OutgoingResponse {
  const headers: Record<string, string | string[]> = {};
  if (!(draft instanceof DraftResponse) || draft.hasHeaders) for (const [name, value] of draft.headers) headers[name] = value;
  if (!draft.answered) return { status: 204, headers, body: null };
  const status = draft.status;
  if (bodyless(status) || draft.kind === 'empty') {
    if (!bodyless(status)) headers['content-length'] = '0';
    return { status, headers, body: null };
  }
  if (draft.kind === 'stream') return { status, headers, body: draft.body as Readable };
  let body: string;
  let type: string;
  switch (draft.kind) {
    case 'text':
      body = typeof draft.body === 'string' ? draft.body : toText(draft.body as never);
      type = TEXT_TYPE;
      break;
    case 'html':
      body = typeof draft.body === 'string' ? draft.body : toText(draft.body as never);
      type = HTML_TYPE;
      break;
    default:
      body = stringifyJson(draft.body === undefined ? null : draft.body);
      type = JSON_TYPE;
  }
  const bytes = Buffer.byteLength(body);
  if (bytes > maxBytes) throw new ResponseTooLargeError(bytes, maxBytes);
  if (headers['content-type'] === undefined) headers['content-type'] = type;
  headers['content-length'] = String(bytes);
  return { status, headers, body };
}

/** JSON text of a response value; host objects (records, secrets) serialise through their toJSON, which JSON.stringify calls itself. */
export function stringifyJson(value: unknown): string {
  return JSON.stringify(value) ?? 'null';
}

/** A response the runtime answers itself (404, 405, 413, 500, ...), with the error body (and its `details`, when given). */
export function errorResponse(status: number, code: string, message: string, extraHeaders?: Record<string, string>, details?: unknown[]): OutgoingResponse {
  const body = JSON.stringify(errorBody(message, code, details));
  const headers: Record<string, string | string[]> = { 'content-type': JSON_TYPE, 'content-length': String(Buffer.byteLength(body)) };
  if (extraHeaders !== undefined) for (const name of Object.keys(extraHeaders)) headers[name.toLowerCase()] = extraHeaders[name];
  return { status, headers, body };
}

/** The error body of a catalogue entry: its code, its default message unless one is given. */
export function catalogueBody(entry: HttpErrorEntry, message: string = entry.message, details?: unknown[]): ErrorBody {
  return errorBody(message, entry.code, details);
}

/** The response of a catalogue entry: its status and code, its default message unless one is given. */
export function catalogueResponse(entry: HttpErrorEntry, message: string = entry.message, extraHeaders?: Record<string, string>): OutgoingResponse {
  return errorResponse(entry.status, entry.code, message, extraHeaders);
}

/** The same response without its body (for HEAD), keeping content-length. */
export function withoutBody(out: OutgoingResponse): OutgoingResponse {
  if (out.body === null) return out;
  // A stream nobody will read is ended here, so whatever feeds it learns (its close listeners
  // unsubscribe, clear timers): an endpoint that streams would otherwise leak one per HEAD.
  if (out.body instanceof Readable) out.body.destroy();
  return { status: out.status, headers: out.headers, body: null };
}
