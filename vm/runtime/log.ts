/**
 * The app log: one line per request plus whatever natives write. Lines are batched, so a busy
 * server does not pay one stream write per request, and encoded into a byte buffer as they come:
 * a batch kept as a string is a rope of hundreds of pieces that a young-generation collection
 * copies and the write must flatten and encode (measured under load: ~200 ns of every request).
 *
 * Every line, whatever writes it, passes one encoder (`encodeLogText`): request-derived text and
 * error messages cannot break a line, forge another or send escape sequences to a terminal.
 */

/**
 * Where the runtime and plugins write log lines. Lines arrive as raw text (error messages may
 * quote a request); an implementation writes each through `encodeLogText`, as the built-in ones do.
 */
export interface Logger {
  info(line: string): void;
  /** The request line, `GET /path 200 0.4ms`: given in parts, so it is written without building a string. */
  request(method: string, path: string, status: number, ms: number): void;
  error(line: string): void;
  /** Writes everything batched so far (on shutdown). */
  flush(): void;
}

/**
 * Characters batched before a write is forced: about 200 request lines, enough to amortise the
 * write; measured under load, 64 KiB batches doubled the time spent in young collections.
 */
export const LOG_BUFFER_BYTES = 8 * 1024;

/** Longest a line waits in the buffer: short enough to read logs live, long enough to batch writes. */
export const LOG_FLUSH_MS = 50;

/** A writable the logger writes to (process.stdout, a file stream, a test sink): UTF-8 bytes, or a string for errors. */
export interface LineSink {
  write(chunk: Uint8Array | string): unknown;
}

/**
 * What never reaches a log line raw: C0 controls (line breaks, ESC that starts ANSI sequences,
 * tab), DEL, C1 controls (a terminal takes U+009B as ESC [), the Unicode line and paragraph
 * separators, and the bidirectional overrides that make a line read other than it is.
 */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
const UNSAFE_ALL = new RegExp(UNSAFE.source, 'g');

/**
 * Text made safe for one log line: `\n`, `\r` and `\t` as those escapes, other unsafe
 * characters as `\xNN` (up to U+00FF) or `\u{NNNN}`; everything else unchanged. Text without
 * them is returned as it is (no copy).
 */
export function encodeLogText(text: string): string {
  return UNSAFE.test(text) ? text.replace(UNSAFE_ALL, escapeUnsafe) : text;
}

function escapeUnsafe(c: string): string {
  if (c === '\n') return '\\n';
  if (c === '\r') return '\\r';
  if (c === '\t') return '\\t';
  const code = c.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
}

/** Most bytes one UTF-16 unit of method or path can take in a line: `\u{2028}` is 8. */
const MAX_BYTES_PER_UNIT = 8;

/** An error for the server's log: its stack where it has one (never sent to clients). */
export function describeError(err: unknown): string {
  return err instanceof Error ? (err.stack ?? err.message) : String(err);
}

/** The request line as text: `GET /path 200 0.4ms` (the batching logger writes the same bytes). */
export function formatRequestLine(method: string, path: string, status: number, ms: number): string {
  const tenths = tenthsOf(ms);
  return `${encodeLogText(method)} ${encodeLogText(path)} ${wholeOrZero(status)} ${Math.floor(tenths / 10)}.${tenths % 10}ms`;
}

/** The request line's numbers, for both of its writers: whole non-negative, or 0. */
function wholeOrZero(n: number): number {
  return Number.isSafeInteger(n) && n >= 0 ? n : 0;
}

/** Milliseconds as whole tenths (one decimal, without toFixed on the hot path). */
function tenthsOf(ms: number): number {
  return wholeOrZero(Math.round(ms * 10));
}

export interface LoggerOptions {
  /** Info lines go here (default process.stdout). */
  stream?: LineSink;
  /** Error lines go here (default process.stderr). */
  errorStream?: LineSink;
  /** Drop info lines; errors are still written. */
  quiet?: boolean;
}

/** Creates a batching logger. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const logger = new BatchingLogger(options.stream ?? process.stdout, options.errorStream ?? process.stderr, options.quiet === true);
  // The flush timer is unref'd: whatever is still buffered is written when the process exits.
  if (LIVE.size === 0) process.once('exit', () => LIVE.forEach((ref) => ref.deref()?.flush()));
  LIVE.add(new WeakRef(logger));
  return logger;
}

/** Loggers to flush at exit; weak, so a logger of a closed app can be collected. */
const LIVE = new Set<WeakRef<BatchingLogger>>();

class BatchingLogger implements Logger {
  /** Lines not yet written, as UTF-8; handed to the stream whole, so a new one follows each write. */
  private bytes = Buffer.allocUnsafe(LOG_BUFFER_BYTES);
  private used = 0;
  private scheduled = false;
  /** Bound once, so scheduling a flush allocates no closure per line. */
  private readonly flushSoon = (): void => {
    this.scheduled = false;
    this.flush();
  };

  constructor(
    private readonly stream: LineSink,
    private readonly errorStream: LineSink,
    private readonly quiet: boolean,
  ) {}

  info(text: string): void {
    if (this.quiet) return;
    const line = encodeLogText(text);
    const free = LOG_BUFFER_BYTES - this.used;
    // At most 3 bytes per UTF-16 unit, plus the newline; counted exactly only when that may not fit.
    let size = line.length * 3 + 1;
    if (size > free) size = Buffer.byteLength(line) + 1;
    if (size > free) {
      this.flush();
      if (size > LOG_BUFFER_BYTES) {
        this.stream.write(Buffer.from(line + '\n'));
        return;
      }
    }
    this.used += this.bytes.write(line, this.used);
    this.bytes[this.used++] = NEWLINE;
    this.batched();
  }

  request(method: string, path: string, status: number, ms: number): void {
    if (this.quiet) return;
    // Method and path at most MAX_BYTES_PER_UNIT bytes per unit (escaped); spaces, status and time digits and "ms\n" within 48.
    const most = (method.length + path.length) * MAX_BYTES_PER_UNIT + 48;
    if (most > LOG_BUFFER_BYTES - this.used) {
      this.flush();
      if (most > LOG_BUFFER_BYTES) return this.info(formatRequestLine(method, path, status, ms));
    }
    const bytes = this.bytes;
    let at = writeText(bytes, this.used, method);
    bytes[at++] = SPACE;
    at = writeText(bytes, at, path);
    bytes[at++] = SPACE;
    at = writeDigits(bytes, at, wholeOrZero(status));
    bytes[at++] = SPACE;
    const tenths = tenthsOf(ms);
    at = writeDigits(bytes, at, Math.floor(tenths / 10));
    bytes[at++] = DOT;
    bytes[at++] = DIGIT_0 + (tenths % 10);
    bytes[at++] = LETTER_M;
    bytes[at++] = LETTER_S;
    bytes[at++] = NEWLINE;
    this.used = at;
    this.batched();
  }

  /** After a line was added: write a full buffer now, else within LOG_FLUSH_MS. */
  private batched(): void {
    if (this.used >= LOG_BUFFER_BYTES - LINE_ROOM) this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      // A short timer, not setImmediate: under load one write then carries hundreds of lines.
      setTimeout(this.flushSoon, LOG_FLUSH_MS).unref();
    }
  }

  error(text: string): void {
    // Keep order when both go to the same place: what was logged before the error comes first.
    this.flush();
    this.errorStream.write(encodeLogText(text) + '\n');
  }

  flush(): void {
    if (this.used === 0) return;
    const out = this.bytes.subarray(0, this.used);
    this.bytes = Buffer.allocUnsafe(LOG_BUFFER_BYTES);
    this.used = 0;
    this.stream.write(out);
  }
}

/** Room kept free for the next line: a buffer this full is written rather than a typical line split off. */
const LINE_ROOM = 256;
const NEWLINE = 10;
const SPACE = 32;
const DOT = 46;
const DIGIT_0 = 48;
const LETTER_M = 109;
const LETTER_S = 115;

/**
 * Writes `text` encoded for the log as UTF-8 at `at`, returns the end: printable ASCII byte by
 * byte (methods and paths are), from the first other character on through `encodeLogText`.
 */
function writeText(bytes: Buffer, at: number, text: string): number {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c >= 0x7f) return at + bytes.write(encodeLogText(i === 0 ? text : text.slice(i)), at);
    bytes[at++] = c;
  }
  return at;
}

/** Writes a non-negative integer's decimal digits at `at`, returns the end. */
function writeDigits(bytes: Buffer, at: number, n: number): number {
  let width = 1;
  for (let rest = n; rest >= 10; rest = Math.floor(rest / 10)) width++;
  for (let i = at + width - 1; i >= at; i--) {
    bytes[i] = DIGIT_0 + (n % 10);
    n = Math.floor(n / 10);
  }
  return at + width;
}

/** A logger for tests: keeps lines in arrays (encoded as a real log's), writes nothing. */
export interface CaptureLogger extends Logger {
  readonly lines: string[];
  readonly errors: string[];
}

/** Creates a logger that records lines for assertions. */
export function captureLogger(): CaptureLogger {
  const lines: string[] = [];
  const errors: string[] = [];
  return {
    lines,
    errors,
    info: (line) => void lines.push(encodeLogText(line)),
    request: (method, path, status, ms) => void lines.push(formatRequestLine(method, path, status, ms)),
    error: (line) => void errors.push(encodeLogText(line)),
    flush: () => {},
  };
}
