/**
 * Reading and parsing request bodies: JSON, urlencoded forms and plain text, under a byte limit;
 * multipart/form-data is streamed by multipart.ts. Every failure is an HttpError the dispatcher
 * answers with the error body.
 */
import type { Readable } from 'node:stream';
import { readMultipart } from './multipart.js';
import { HttpError } from './http-error.js';
import { HTTP, type HttpErrorEntry } from '../../errors.js';
import { nextTurn } from '../../interp/scheduler.js';
import { projectMembers, scanJson } from './json-scan.js';
import type { IncomingRequest, ParsedBody, UploadSpec } from '../types.js';

export { HttpError } from './http-error.js';

/**
 * Bodies larger than this wait for their turn of the event loop before they are parsed
 * (scheduler.ts); smaller ones parse in well under a millisecond, at once.
 */
export const PARSE_IN_TURN_BYTES = 64 * 1024;

/**
 * Deepest nesting accepted in a JSON body. JSON.parse copes with more, but everything after it
 * (conversion to language values, validation) recurses, and no real API nests this deep.
 */
export const MAX_JSON_DEPTH = 128;

/** How the body arrived: the validation layer coerces form and multipart text but keeps JSON strict. */
export type { ParsedBody, ParsedBodyKind } from '../types.js';

/** The parsed value of a large JSON body not built, or dropped after validation, until `request.body` asks for it. */
export const DROPPED: unique symbol = Symbol('dropped');

/** The parsed form of a request without a body. */
export const NO_BODY: ParsedBody = Object.freeze({ kind: 'none', value: null }) as ParsedBody;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** True when the request announces a body (a non-zero content-length, or chunked transfer). */
export function hasBody(request: IncomingRequest): boolean {
  return request.body !== null && announcesBody(request.headers);
}

/** RFC 9112 §6.3: a request has a body only if its headers say so, with content-length or transfer-encoding. */
export function announcesBody(headers: IncomingRequest['headers']): boolean {
  const length = headers['content-length'];
  if (length !== undefined) return length !== '0';
  return headers['transfer-encoding'] !== undefined;
}

/**
 * Charges body memory before it is held: `rawBytes` more bytes of a body of `mediaType` (the
 * caller knows what they cost once parsed). An HttpError (503 overloaded) refuses the body.
 */
export type ChargeBody = (rawBytes: number, mediaType: string) => HttpError | null;

/**
 * Reads the whole body (at most `limit` bytes) and parses it by its content type. Multipart
 * bodies are streamed instead: declared files (`uploads`) go to disk under their own limits,
 * and `limit` bounds the rest. One Promise from the first byte to the parsed body, rejected with
 * the HttpError the body is refused with (400, 413, 415, 503).
 */
export function readBody(request: IncomingRequest, limit: number, uploads?: UploadSpec, charge: ChargeBody = noCharge): Promise<ParsedBody> {
  const stream = request.body;
  if (stream === null) return Promise.resolve(NO_BODY);
  const header = request.headers['content-type'];
  const contentType = parseContentType(typeof header === 'string' ? header : undefined);
  const declaredHeader = request.headers['content-length'];
  const declared = typeof declaredHeader === 'string' ? Number(declaredHeader) : NaN;
  if (contentType.type === 'multipart/form-data') {
    // Declared files go to disk; what stays in memory (fields, framing) is bounded by `limit`.
    const refused = charge(Number.isFinite(declared) ? Math.min(declared, limit) : limit, contentType.type);
    return refused === null ? readMultipart(request, uploads, limit) : refuseUnread(stream, refused);
  }
  if (declared > limit) return refuseUnread(stream, tooLarge(limit));
  // A declared length is charged before the first byte is read; a chunked body as it arrives.
  if (Number.isFinite(declared)) {
    const refused = charge(declared, contentType.type);
    if (refused !== null) return refuseUnread(stream, refused);
    return collect(stream, limit, contentType, null);
  }
  return collect(stream, limit, contentType, (bytes) => charge(bytes, contentType.type));
}

/** The charge of a read that counts no memory (unit tests, readBody without an admission). */
function noCharge(): null {
  return null;
}

/**
 * Refuses a body without reading a byte of it. After the answer the dispatcher lets node drain a
 * small one and closes the connection on a big one (UNREAD_BODY_DRAIN_BYTES), so a refused flood
 * is never read for nothing.
 */
function refuseUnread(stream: Readable, err: HttpError): Promise<never> {
  stream.on('error', ignore);
  return Promise.reject(err);
}

/** Parses a complete body by its (parsed) content type. */
function parseBody({ type, charset }: ContentType, bytes: Buffer): ParsedBody {
  if (bytes.length === 0) return NO_BODY;
  if (charset !== null && charset !== 'utf-8' && charset !== 'utf8' && charset !== 'us-ascii') {
    throw new HttpError(HTTP.unsupported_media_type, `Unsupported charset '${charset}': send UTF-8`);
  }
  if (type === 'application/json' || type.endsWith('+json')) {
    const text = jsonText(bytes);
    return bytes.length > PARSE_IN_TURN_BYTES ? scannedJson(text) : { kind: 'json', value: parseJsonText(text) };
  }
  if (type === 'application/x-www-form-urlencoded') return { kind: 'form', value: parseForm(decode(bytes, HTTP.bad_request)) };
  if (type === 'text/plain') return { kind: 'text', value: decode(bytes, HTTP.bad_request) };
  const shown = type === '' ? 'a body without content-type' : `content-type '${type}'`;
  throw new HttpError(HTTP.unsupported_media_type, `Unsupported media type: ${shown}`);
}

/** Media type (lower-case, no parameters) and charset (lower-case, or null) of a content-type. */
export interface ContentType {
  readonly type: string;
  readonly charset: string | null;
}

/** Content-type headers already parsed: clients send the same one or two on every request. */
const PARSED_TYPES = new Map<string, ContentType>();
/** Headers remembered at most: a client that sends ever new ones is parsed every time, never grows this. */
const MAX_PARSED_TYPES = 64;

const NO_CONTENT_TYPE: ContentType = Object.freeze({ type: '', charset: null });

/** Splits a content-type header into its media type and charset. */
export function parseContentType(header: string | undefined): ContentType {
  if (header === undefined) return NO_CONTENT_TYPE;
  let parsed = PARSED_TYPES.get(header);
  if (parsed === undefined) {
    parsed = Object.freeze(splitContentType(header));
    if (PARSED_TYPES.size < MAX_PARSED_TYPES) PARSED_TYPES.set(header, parsed);
  }
  return parsed;
}

function splitContentType(header: string): ContentType {
  const semi = header.indexOf(';');
  if (semi === -1) return { type: header.trim().toLowerCase(), charset: null };
  const type = header.slice(0, semi).trim().toLowerCase();
  let charset: string | null = null;
  for (const param of header.slice(semi + 1).split(';')) {
    const eq = param.indexOf('=');
    if (eq === -1 || param.slice(0, eq).trim().toLowerCase() !== 'charset') continue;
    charset = param
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase();
  }
  return { type, charset };
}

/**
 * Reads a stream into one Buffer and resolves with it parsed by `contentType`, or rejects (413 as
 * soon as `limit` is passed, or what parsing threw). The first of end, error, close or the limit
 * settles it; the listeners stay (removing four per request costs more than the stream they die
 * with) but ignore what follows.
 */
function collect(stream: Readable, limit: number, contentType: ContentType, charge: ((bytes: number) => HttpError | null) | null): Promise<ParsedBody> {
  return new Promise((resolve, reject) => {
    let chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const fail = (err: unknown): void => {
      settled = true;
      chunks = [];
      reject(err);
    };
    const parse = (bytes: Buffer): void => {
      try {
        resolve(parseBody(contentType, bytes));
      } catch (err) {
        reject(err);
      }
    };
    stream.on('data', (chunk: Buffer | string): void => {
      if (settled) return;
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      size += buf.length;
      if (size > limit) {
        fail(tooLarge(limit, CLOSE));
        stop(stream);
        return;
      }
      const refused = charge === null ? null : charge(buf.length);
      if (refused !== null) {
        fail(refused);
        stop(stream);
        return;
      }
      chunks.push(buf);
    });
    stream.on('end', (): void => {
      if (settled) return;
      settled = true;
      const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
      chunks = [];
      // Parsing a large body holds the event loop (1 MiB of JSON objects: 30-50 ms): one per turn,
      // in turn with the VM's slices, so several finishing together do not stack their parses.
      if (size > PARSE_IN_TURN_BYTES) void nextTurn().then(() => parse(bytes));
      else parse(bytes);
    });
    stream.on('error', (err: Error): void => {
      if (!settled) fail(new HttpError(HTTP.bad_request, `Could not read the request body: ${err.message}`));
    });
    stream.on('close', (): void => {
      if (!settled) fail(new HttpError(HTTP.bad_request, 'The request body ended early'));
    });
  });
}

/**
 * Stops reading a body refused half way: its answer closes the connection (CLOSE), so the rest
 * is never read. Draining it instead would read for as long as the client cares to send.
 */
function stop(stream: Readable): void {
  stream.on('error', ignore);
  stream.pause();
}

function ignore(): void {}

/** The header of an answer after which the connection cannot carry another request. */
const CLOSE = { connection: 'close' };

function tooLarge(limit: number, headers?: Record<string, string>): HttpError {
  return new HttpError(HTTP.payload_too_large, `Request body is larger than the limit of ${limit} bytes`, headers);
}

function decode(bytes: Buffer, entry: HttpErrorEntry): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new HttpError(entry, 'Request body is not valid UTF-8');
  }
}

/** A `\u` escape of a UTF-16 surrogate somewhere in a JSON text (a pair, a lone one, or `\\u…` text): the rare body that needs the exact check. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
/** Each escape of a JSON text in turn; `\\` is consumed whole, so the text `\\ud800` holds no escape of a surrogate. */
const ESCAPE = /\\(?:u([0-9a-fA-F]{4})|[^u])/g;

/**
 * Whether a JSON text's strings decode to a lone surrogate: an escaped high surrogate not
 * followed at once by an escaped low one, or a low one alone. Only escapes can make one (the
 * text itself is checked UTF-8), so a body without a surrogate escape costs one scan for it.
 */
export function hasLoneSurrogateEscape(text: string): boolean {
  // Most bodies hold no `\u` escape at all: a plain search rules them out faster than the pattern.
  if (text.indexOf('\\u') === -1 || !SURROGATE_ESCAPE.test(text)) return false;
  /** Where an escaped high surrogate ended, while it waits for its low half. */
  let highEnd = -1;
  ESCAPE.lastIndex = 0;
  for (let m = ESCAPE.exec(text); m !== null; m = ESCAPE.exec(text)) {
    const unit = m[1] === undefined ? -1 : parseInt(m[1], 16);
    const low = unit >= 0xdc00 && unit <= 0xdfff;
    if (highEnd !== -1) {
      if (!low || m.index !== highEnd) return true;
      highEnd = -1;
    } else if (unit >= 0xd800 && unit <= 0xdbff) highEnd = m.index + m[0].length;
    else if (low) return true;
  }
  return highEnd !== -1;
}

/**
 * The text of a JSON body: UTF-8 without its byte order mark, refused when it nests too deep to
 * walk, or when a string of it would decode to a lone surrogate (400 `invalid_text`: it would
 * not survive UTF-8 — a database, a response, a header — as written).
 */
function jsonText(bytes: Buffer): string {
  let text = decode(bytes, HTTP.invalid_json);
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (hasLoneSurrogateEscape(text))
    throw new HttpError(HTTP.invalid_text, 'JSON body holds a lone UTF-16 surrogate (a \\uD800–\\uDFFF escape without its pair)');
  if (text.length > 2 * MAX_JSON_DEPTH && jsonDepth(text) > MAX_JSON_DEPTH) {
    throw new HttpError(HTTP.invalid_json, `JSON body nests deeper than ${MAX_JSON_DEPTH} levels`);
  }
  return text;
}

function parseJsonText(text: string): unknown {
  try {
    // JSON.parse defines `__proto__` keys as own data properties, never as the prototype; every
    // later copy goes through fromJson/setField (defineProperty), so they stay data.
    return JSON.parse(text);
  } catch (err) {
    throw new HttpError(HTTP.invalid_json, `Malformed JSON body: ${(err as Error).message}`);
  }
}

/**
 * A large JSON body, checked but not built (json-scan.ts): validation parses the members it
 * declares, and the whole value is parsed only if the route reads `request.body`.
 */
function scannedJson(text: string): ParsedBody {
  const scan = scanJson(text);
  // Not JSON: JSON.parse says why, in the words of a small body's answer.
  if (scan === null) return { kind: 'json', value: parseJsonText(text) };
  const reparse = (): unknown => JSON.parse(text);
  if (scan.kind === 'object') return { kind: 'json', value: DROPPED, reparse, project: (names) => projectMembers(text, scan.members, names) };
  // Validation answers "must be an object" alike for any array, string or number.
  return { kind: 'json', value: DROPPED, reparse, project: () => (text.trim() === 'null' ? null : []) };
}

/** Deepest `[`/`{` nesting in a JSON text, ignoring brackets inside strings. */
function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      if (++depth > max) max = depth;
    } else if (c === 93 || c === 125) depth--;
  }
  return max;
}

/** Parses `a=1&b=2&a=3` into `{ a: ['1', '3'], b: '2' }` (proto-safe). */
export function parseForm(text: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  if (text === '') return out;
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const key = decodeFormComponent(eq === -1 ? pair : pair.slice(0, eq));
    const value = eq === -1 ? '' : decodeFormComponent(pair.slice(eq + 1));
    addField(out, key, value);
  }
  return out;
}

/** Decodes one form/query component: `+` is a space, a malformed escape is kept as written. */
export function decodeFormComponent(s: string): string {
  if (s.indexOf('+') !== -1) s = s.replace(/\+/g, ' ');
  if (s.indexOf('%') === -1) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Adds a field, turning a repeated key into a list; `__proto__` stays an ordinary key. */
export function addField(out: Record<string, string | string[]>, key: string, value: string): void {
  if (Object.hasOwn(out, key)) {
    const prev = out[key];
    if (Array.isArray(prev)) prev.push(value);
    else out[key] = [prev, value];
  } else if (key === '__proto__') {
    Object.defineProperty(out, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    out[key] = value;
  }
}
