/**
 * multipart/form-data bodies, streamed with busboy: text fields are collected like a urlencoded
 * form; each file a route declares streams to a private temporary file (only its first bytes stay
 * in memory, for sniffing) under that field's byte limit; any other file part is discarded unread
 * to disk. A body over a limit stops being read at once and is refused with 413: the body as sent,
 * framing (preamble, part headers, epilogue) included, may have at most the body limit, the
 * declared files' limits and MULTIPART_FRAMING_BYTES.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type busboy from 'busboy';
import { HttpError } from './http-error.js';
import { HTTP } from '../../errors.js';
import { SNIFF_BYTES, sniffMime } from './sniff.js';
import type { IncomingRequest, ParsedBody, UploadSpec } from '../types.js';
import { UploadedFile } from './upload.js';
import { onFirstUse } from '../../on-first-use.js';

/** busboy, loaded by the first multipart body: most apps never receive one. */
const loadBusboy = onFirstUse(() => createRequire(import.meta.url)('busboy') as typeof busboy);

/** A file field without `@max_size`: enough for photos and office documents, small enough for any disk. */
export const DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024;
/** Text fields per body: HTML forms rarely carry more than a few dozen; each costs a map entry. */
export const MAX_MULTIPART_FIELDS = 100;
/** One text field (also capped by the body limit): a long comment fits, a smuggled file does not. */
export const MAX_MULTIPART_FIELD_BYTES = 64 * 1024;
/** File parts per body, declared or not: every declared one holds a file descriptor while it streams. */
export const MAX_MULTIPART_FILES = 10;
/** Parts of any kind, including nameless ones busboy skips: no more than fields and files together. */
export const MAX_MULTIPART_PARTS = MAX_MULTIPART_FIELDS + MAX_MULTIPART_FILES;
/**
 * Header lines kept per part. busboy 1.x fixes this (its MAX_HEADER_PAIRS of 2000, compared with
 * `<`; the `headerPairs` option is not read): later lines are ignored, so a part whose
 * Content-Disposition comes after them has no name and is dropped. Named so it is documented and tested.
 */
export const MAX_MULTIPART_HEADER_PAIRS = 1999;
/**
 * Bytes of one part's header block, fixed by busboy (Node's header limit; busboy's count is
 * within a few bytes of the bytes sent): a bigger block is malformed (400). Together with the
 * line limit, this is what bounds a part header in memory.
 */
export const MAX_MULTIPART_HEADER_BYTES = 16 * 1024;

/**
 * Bytes of framing (boundary lines, part headers, preamble, epilogue) allowed beyond the body
 * limit and the declared files' limits: a hundred parts' ordinary headers and one header block
 * at MAX_MULTIPART_HEADER_BYTES fit; a preamble of megabytes does not.
 */
export const MULTIPART_FRAMING_BYTES = 64 * 1024;

/**
 * Prefix of the per-request temporary directory, followed by the owning process's pid and
 * mkdtemp's six characters: a later start tells a dead process's leftovers from a live one's.
 */
const TEMP_PREFIX = 'rvm-upload-';
/** An upload directory's name: the pid is absent in those made before it was part of the name. */
const UPLOAD_DIR_NAME = /^rvm-upload-(?:(\d+)-)?[A-Za-z0-9]{6}$/;
/**
 * An upload directory older than this is a leftover whoever owns it: no request lives a day,
 * and the pid in its name may since have been given to another process.
 */
export const STALE_UPLOAD_MS = 24 * 60 * 60 * 1000;
/** Owner read/write only: uploads may be private documents. */
const FILE_MODE = 0o600;

/**
 * Streams a multipart body. `spec` names the file fields to keep and their limits; `bodyLimit`
 * bounds the text fields together and the file parts that are discarded. The result's `cleanup`
 * removes the temporary files; a failure carries the same as `HttpError.cleanup`.
 */
export function readMultipart(request: IncomingRequest, spec: UploadSpec | undefined, bodyLimit: number): Promise<ParsedBody> {
  return new MultipartReader(request, spec, bodyLimit).read();
}

/** State of one multipart read; `read()` is called once. */
class MultipartReader {
  /** Fields and files in the order they were sent; a file's value is set when it is complete. */
  private readonly entries: Array<{ name: string; value: unknown }> = [];
  private readonly fieldLimit: number;
  /** Text bytes kept plus file bytes discarded: together at most the body limit. */
  private otherBytes = 0;
  private fileCount = 0;
  private dir: Promise<string> | null = null;
  /** Files still being written; each settles when its descriptor is closed. */
  private readonly writing = new Set<Promise<void>>();
  private readonly streams = new Set<WriteStream>();
  private settled = false;
  private resolve!: (body: ParsedBody) => void;
  private reject!: (err: HttpError) => void;
  private parser: busboy.Busboy | null = null;
  private readonly cleanup = (): Promise<void> => this.removeFiles();

  constructor(
    private readonly request: IncomingRequest,
    private readonly spec: UploadSpec | undefined,
    private readonly bodyLimit: number,
  ) {
    this.fieldLimit = Math.min(MAX_MULTIPART_FIELD_BYTES, bodyLimit);
  }

  read(): Promise<ParsedBody> {
    return new Promise<ParsedBody>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
      this.start();
    });
  }

  private start(): void {
    const stream = this.request.body as Readable;
    let parser: busboy.Busboy;
    try {
      parser = loadBusboy()({
        headers: { 'content-type': String(this.request.headers['content-type']) },
        // busboy marks a value truncated on reaching its limit; one more byte lets "exactly at the limit" pass.
        limits: { fields: MAX_MULTIPART_FIELDS, fieldSize: this.fieldLimit + 1, files: MAX_MULTIPART_FILES, parts: MAX_MULTIPART_PARTS + 1 },
        // Browsers send raw UTF-8 in `filename="…"`.
        defParamCharset: 'utf8',
      });
    } catch (err) {
      this.fail(badRequest(`Malformed multipart/form-data content type: ${(err as Error).message}`));
      return;
    }
    this.parser = parser;
    parser.on('field', (name, text, info) => this.onField(name, text, info.valueTruncated));
    parser.on('file', (name, file, info) => this.onFile(name, file, info.filename));
    parser.on('fieldsLimit', () => this.tooMany('max_fields', `at most ${MAX_MULTIPART_FIELDS} text fields`));
    parser.on('filesLimit', () => this.tooMany('max_files', `at most ${MAX_MULTIPART_FILES} files`));
    // Emitted when the part one past the limit has been read (see `parts` above).
    parser.on('partsLimit', () => this.tooMany('max_parts', `at most ${MAX_MULTIPART_PARTS} parts`));
    parser.on('error', (err: Error) => this.fail(badRequest(`Malformed multipart body: ${err.message}`)));
    parser.on('close', () => void this.finish());
    stream.on('error', () => this.fail(badRequest('The request body ended early')));
    stream.on('close', () => {
      if (!stream.readableEnded) this.fail(badRequest('The request body ended early'));
    });
    stream.pipe(parser);
    // Framing counts too: a preamble or epilogue is not a part, and busboy skips it unseen.
    const rawLimit = this.bodyLimit + MULTIPART_FRAMING_BYTES + (this.spec === undefined ? 0 : Object.values(this.spec.files).reduce((a, b) => a + b, 0));
    let raw = 0;
    stream.on('data', (chunk: Buffer) => {
      raw += chunk.length;
      if (raw > rawLimit) this.fail(tooLarge(`Request body is larger than ${formatBytes(rawLimit)}`, null, 'max_body', rawLimit));
    });
  }

  private onField(name: string | undefined, text: string, truncated: boolean): void {
    if (this.settled || name === undefined) return;
    if (truncated) {
      this.fail(tooLarge(`Field '${name}' is larger than ${formatBytes(this.fieldLimit)}`, name, 'max_field_size', this.fieldLimit));
      return;
    }
    if (!this.countOther(Buffer.byteLength(text))) return;
    this.entries.push({ name, value: text });
  }

  private onFile(name: string | undefined, file: Readable, filename: string | undefined): void {
    const limit = name === undefined || this.spec === undefined || !Object.hasOwn(this.spec.files, name) ? undefined : this.spec.files[name];
    if (this.settled || limit === undefined) {
      this.discard(file);
      return;
    }
    this.store(name!, file, filename ?? '', limit);
  }

  /** Reads an undeclared file part to nowhere, still counting it against the body limit. */
  private discard(file: Readable): void {
    file.on('data', (chunk: Buffer) => this.countOther(chunk.length));
    file.on('error', ignore);
    file.resume();
  }

  /** Streams a declared file to a temporary file, stopping the whole body when it passes `limit`. */
  private store(name: string, file: Readable, filename: string, limit: number): void {
    const head = Buffer.allocUnsafe(SNIFF_BYTES);
    let headLength = 0;
    let size = 0;
    let out: WriteStream | null = null;
    const index = this.fileCount++;
    const entry: { name: string; value: unknown } = { name, value: undefined };
    this.entries.push(entry);
    // Until the directory exists the part stays paused: busboy and the request wait (backpressure).
    file.pause();
    file.on('error', ignore);
    const written = (async () => {
      const dir = await (this.dir ??= mkdtemp(join(tmpdir(), `${TEMP_PREFIX}${process.pid}-`)));
      if (this.settled) return;
      // Never the client's name in the path: the index is unique within the private directory.
      const path = join(dir, String(index));
      out = createWriteStream(path, { flags: 'wx', mode: FILE_MODE });
      this.streams.add(out);
      const closed = new Promise<void>((resolve, reject) => {
        out!.on('close', resolve);
        out!.on('error', reject);
      });
      file.on('data', (chunk: Buffer) => {
        if (this.settled) return;
        size += chunk.length;
        if (size > limit) {
          this.fail(tooLarge(`File '${name}' is larger than ${formatBytes(limit)}`, name, 'max_size', limit));
          return;
        }
        if (headLength < SNIFF_BYTES) headLength += chunk.copy(head, headLength, 0, SNIFF_BYTES - headLength);
        if (!out!.write(chunk)) file.pause();
      });
      out.on('drain', () => file.resume());
      file.on('end', () => out!.end());
      file.resume();
      await closed;
      this.streams.delete(out);
      if (this.settled) return;
      // An empty part with an empty name is a browser's unselected file input: no file.
      if (size === 0 && filename === '') return;
      const sniffHead = new Uint8Array(head.subarray(0, headLength));
      entry.value = new UploadedFile(filename, sniffMime(sniffHead, size <= SNIFF_BYTES), size, path, sniffHead);
    })();
    const tracked = written.catch((err: unknown) => {
      this.fail(storageError(err));
    });
    this.writing.add(tracked);
    void tracked.finally(() => this.writing.delete(tracked));
  }

  /** Counts bytes against the body limit; false (and the body refused) once it is passed. */
  private countOther(bytes: number): boolean {
    this.otherBytes += bytes;
    if (this.otherBytes <= this.bodyLimit) return true;
    this.fail(tooLarge(`Form fields and discarded files are larger than ${formatBytes(this.bodyLimit)}`, null, 'max_body', this.bodyLimit));
    return false;
  }

  private tooMany(rule: string, limit: string): void {
    this.fail(new HttpError(HTTP.payload_too_large, `Too many multipart parts: ${limit}`, CLOSE, [{ field: null, rule, message: limit }]));
  }

  /** The parser is done: wait for the files still being written, then answer. */
  private async finish(): Promise<void> {
    while (this.writing.size > 0) await Promise.all(this.writing);
    if (this.settled) return;
    this.settled = true;
    const value: Record<string, unknown> = {};
    for (const { name, value: v } of this.entries) if (v !== undefined) addValue(value, name, v);
    this.resolve({ kind: 'multipart', value, cleanup: this.cleanup });
  }

  /**
   * Refuses the body: stop feeding the parser, stop reading the request (the 413 carries
   * `Connection: close`, so the rest is never read), close open files; cleanup deletes them.
   */
  private fail(err: HttpError): void {
    if (this.settled) return;
    this.settled = true;
    const stream = this.request.body as Readable;
    if (this.parser !== null) {
      stream.unpipe(this.parser);
      this.parser.removeAllListeners('close');
      this.parser.on('error', ignore);
      this.parser.destroy();
    }
    stream.pause();
    stream.on('error', ignore);
    for (const out of this.streams) out.destroy();
    err.cleanup = this.cleanup;
    this.reject(err);
  }

  private async removeFiles(): Promise<void> {
    await Promise.allSettled([...this.writing]);
    if (this.dir === null) return;
    const dir = await this.dir.catch(() => null);
    if (dir !== null) await rm(dir, { recursive: true, force: true });
  }
}

function ignore(): void {}

/** Whether process `pid` runs (one of another user's counts: it may not be signalled, but it exists). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the upload directories a killed process left in the temporary folder: those whose
 * owning process is gone, and any older than STALE_UPLOAD_MS. A running process's stay (the
 * other workers', another server's), so every start may sweep. Answers how many were removed;
 * one that cannot be read or removed is left.
 */
export async function sweepStaleUploads(now: number = Date.now()): Promise<number> {
  const folder = tmpdir();
  let names: string[];
  try {
    names = await readdir(folder);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const match = UPLOAD_DIR_NAME.exec(name);
    if (match === null) continue;
    const path = join(folder, name);
    try {
      const ownerGone = match[1] !== undefined && !isRunning(Number(match[1]));
      if (!ownerGone && now - (await stat(path)).mtimeMs < STALE_UPLOAD_MS) continue;
      await rm(path, { recursive: true, force: true });
      removed++;
    } catch {
      // Another user's, or removed meanwhile: not ours to insist on.
    }
  }
  return removed;
}

/**
 * Every refusal closes the connection: the rest of the body is never read, so the connection
 * cannot carry another request (and a client still sending is cut off).
 */
const CLOSE = { connection: 'close' };

function badRequest(message: string): HttpError {
  return new HttpError(HTTP.bad_request, message, CLOSE);
}

function tooLarge(message: string, field: string | null, rule: string, limit: number): HttpError {
  return new HttpError(HTTP.payload_too_large, message, CLOSE, [{ field, rule, message: `must be at most ${formatBytes(limit)}` }]);
}

/** A failure of the disk, not of the request: 500, with the cause kept for the log. */
function storageError(err: unknown): HttpError {
  const error = new HttpError(HTTP.internal_error, 'Could not store the upload', CLOSE);
  error.cause = err;
  return error;
}

/** Adds a value under `key`, turning a repeated key into a list; `__proto__` stays an own key. */
function addValue(out: Record<string, unknown>, key: string, value: unknown): void {
  if (!Object.hasOwn(out, key)) {
    Object.defineProperty(out, key, { value, writable: true, enumerable: true, configurable: true });
    return;
  }
  const prev = out[key];
  if (Array.isArray(prev)) prev.push(value);
  else out[key] = [prev, value];
}

const KIB = 1024;
const MIB = 1024 * 1024;

/** Byte counts as people write them: `5 MB`, `1.5 MB`, `64 KB`, `300 bytes` (binary units). */
export function formatBytes(n: number): string {
  if (n >= MIB) return `${trimNumber(n / MIB)} MB`;
  if (n >= KIB) return `${trimNumber(n / KIB)} KB`;
  return n === 1 ? '1 byte' : `${n} bytes`;
}

function trimNumber(n: number): string {
  return String(Math.round(n * 100) / 100);
}
