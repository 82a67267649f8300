/**
 * The app log: one line per request plus whatever natives write. Lines are batched, so a busy
 * server does not pay one stream write per request, but in small batches: lines kept for long
 * survive young-generation collections and get copied and promoted, which costs a busy server
 * more than the formatting and the writes together.
 */

/** Where the runtime and plugins write log lines. */
export interface Logger {
  info(line: string): void;
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

/** A writable the logger writes to (process.stdout, a file stream, a test sink). */
export interface LineSink {
  write(chunk: string): unknown;
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
  private buffer = '';
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

  info(line: string): void {
    if (this.quiet) return;
    this.buffer += line + '\n';
    if (this.buffer.length >= LOG_BUFFER_BYTES) this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      // A short timer, not setImmediate: under load one write then carries hundreds of lines.
      setTimeout(this.flushSoon, LOG_FLUSH_MS).unref();
    }
  }

  error(line: string): void {
    // Keep order when both go to the same place: what was logged before the error comes first.
    this.flush();
    this.errorStream.write(line + '\n');
  }

  flush(): void {
    if (this.buffer === '') return;
    const out = this.buffer;
    this.buffer = '';
    this.stream.write(out);
  }
}

/** A logger for tests: keeps lines in arrays, writes nothing. */
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
    info: (line) => void lines.push(line),
    error: (line) => void errors.push(line),
    flush: () => {},
  };
}
