/**
 * A request `rvm fuzz` sends: built from the fields' wire values, turned into an `inject()`
 * request (JSON text, or FormData with the files as Blobs), and printed as a `curl` command
 * that reproduces it against `rvm run`.
 */
import type { FileSample } from '../plugins/sdk.js';
import type { InjectRequest } from '../vm/runtime/http/inject.js';
import type { Wire } from './fuzz-values.js';

/** One part of a multipart body. */
export type Part = { name: string; text: string } | { name: string; file: FileSample };

/** A request as the fuzzer built it. */
export interface FuzzRequest {
  method: string;
  /** Path and query: `/search?q=a`. */
  url: string;
  headers: Record<string, string>;
  body: { kind: 'json'; text: string } | { kind: 'multipart'; parts: Part[] } | null;
}

/** Where the printed `curl` commands send the request: `rvm run`'s default address. */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:3000';
/** Files up to this size are inlined in the `curl` command (base64); larger ones are described. */
const MAX_INLINE_FILE_BYTES = 4096;

/** Builds a request: `body` is null for routes without a `validate {}` block. */
export function buildRequest(
  method: string,
  path: string,
  query: [string, Wire][] | null,
  body: { transport: 'json' | 'multipart'; fields: [string, Wire][] } | null,
  headers: Record<string, string>,
): FuzzRequest {
  let url = path;
  if (query !== null) {
    const pairs: string[] = [];
    for (const [name, wire] of query) {
      if (wire.kind !== 'texts') continue;
      for (const text of wire.values) pairs.push(`${encodeURIComponent(name)}=${encodeURIComponent(text)}`);
    }
    if (pairs.length > 0) url += `?${pairs.join('&')}`;
  }
  if (body === null) return { method, url, headers: { ...headers }, body: null };
  if (body.transport === 'json') {
    const object: Record<string, unknown> = {};
    for (const [name, wire] of body.fields) {
      const value = wire.kind === 'json' ? wire.value : wire.kind === 'texts' ? wire.values[0] : null;
      // defineProperty: a field named `__proto__` must be sent as a key, not set the prototype.
      Object.defineProperty(object, name, { value, enumerable: true, writable: true, configurable: true });
    }
    return { method, url, headers: { ...headers, 'content-type': 'application/json' }, body: { kind: 'json', text: JSON.stringify(object) } };
  }
  const parts: Part[] = [];
  for (const [name, wire] of body.fields) {
    if (wire.kind === 'file') parts.push({ name, file: wire.file });
    else if (wire.kind === 'texts') for (const text of wire.values) parts.push({ name, text });
    else parts.push({ name, text: typeof wire.value === 'string' ? wire.value : JSON.stringify(wire.value) });
  }
  return { method, url, headers: { ...headers }, body: { kind: 'multipart', parts } };
}

/** The request as `inject()` takes it. */
export function toInject(request: FuzzRequest): InjectRequest {
  const out: InjectRequest = { method: request.method, url: request.url, headers: { ...request.headers } };
  if (request.body?.kind === 'json') out.body = request.body.text;
  else if (request.body?.kind === 'multipart') {
    const form = new FormData();
    for (const part of request.body.parts) {
      if ('file' in part) form.append(part.name, new Blob([part.file.bytes]), part.file.name);
      else form.append(part.name, part.text);
    }
    out.body = form;
  }
  return out;
}

/** A shell word: single-quoted, or `$'…'` with escapes when it holds control characters. */
export function shellQuote(text: string): string {
  // C0 controls and DEL cannot stand inside single quotes readably.
  if (!/[\u0000-\u001f\u007f]/.test(text)) return `'${text.replace(/'/g, `'\\''`)}'`;
  let out = "$'";
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (ch === "'" || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}'`;
}

/** A printable `curl` command that sends the same request to `base` (files inlined when small). */
export function toCurl(request: FuzzRequest, base: string = DEFAULT_BASE_URL): string {
  const words = ['curl', '-i', '-X', request.method, shellQuote(base + request.url)];
  for (const [name, value] of Object.entries(request.headers)) words.push('-H', shellQuote(`${name}: ${value}`));
  if (request.body?.kind === 'json') words.push('--data-raw', shellQuote(request.body.text));
  else if (request.body?.kind === 'multipart') {
    for (const part of request.body.parts) {
      if ('text' in part) {
        words.push('--form-string', shellQuote(`${part.name}=${part.text}`));
        continue;
      }
      const { name, bytes } = part.file;
      // bash process substitution keeps the command self-contained; curl sends the given file name.
      const source =
        bytes.length <= MAX_INLINE_FILE_BYTES
          ? `<(printf %s ${Buffer.from(bytes).toString('base64')} | base64 -d)`
          : shellQuote(`FILE_OF_${bytes.length}_BYTES`);
      words.push('-F', `${shellQuote(`${part.name}=@`)}${source}${shellQuote(`;filename=${name}`)}`);
    }
  }
  return words.join(' ');
}

/** The request as plain data for a JSON report (files as name, size and, when small, base64). */
export function describeRequest(request: FuzzRequest): Record<string, unknown> {
  const body =
    request.body === null
      ? null
      : request.body.kind === 'json'
        ? request.body.text
        : request.body.parts.map((p) =>
            'text' in p
              ? { name: p.name, value: p.text }
              : {
                  name: p.name,
                  filename: p.file.name,
                  size: p.file.bytes.length,
                  ...(p.file.bytes.length <= MAX_INLINE_FILE_BYTES ? { base64: Buffer.from(p.file.bytes).toString('base64') } : {}),
                },
          );
  return { method: request.method, url: request.url, headers: request.headers, body };
}
