/**
 * The error every shared store throws (rejects with) when it cannot be reached or does not answer
 * in time, whatever the store. An RvmError, so route code can catch it by its code (a rate limit
 * that chooses to fail open); uncaught, the runtime answers it 503 `store_unavailable`.
 */
import { HTTP } from '../../errors.js';
import { RvmError } from '../../values.js';

/** A shared store (Redis, or the primary process under `--workers`) could not be reached or did not answer within its command timeout. */
export class StoreUnavailableError extends RvmError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, HTTP.store_unavailable.code);
    this.name = 'StoreUnavailableError';
    if (options !== undefined) this.cause = options.cause;
  }
}

/**
 * A new security key (SECURITY_KEY_PREFIX) refused because the store holds its budget of live
 * ones: forgetting a replay mark or an attempt counter would let a code be replayed or guessed
 * again, so the request fails 503 `store_full` instead. Not `store_unavailable`: a rate limit that
 * fails open on an unreachable store must not fail open on this.
 */
export class StoreFullError extends RvmError {
  constructor(message: string) {
    super(message, HTTP.store_full.code);
    this.name = 'StoreFullError';
  }
}

/** Where an outage's lines go. */
export interface OutageLogTarget {
  log(line: string): void;
}

/** The two lines an outage is told in: when it starts (with its cause) and when it ends. */
export interface OutageLines {
  down(cause: string): string;
  readonly back: string;
}

/**
 * Logs an outage (a shared store, the database) once when it starts and once when it ends,
 * however many calls fail meanwhile: a flood of identical lines would hide everything else in the
 * log (and cost the time the server needs while it is degraded). The log comes with each call,
 * so a line can go to the log of the request that saw the change (a CallContext is one).
 */
export class OutageLog {
  private down = false;

  constructor(private readonly lines: OutageLines) {}

  /** Whether the last call failed. */
  get isDown(): boolean {
    return this.down;
  }

  /** A call could not reach the service. */
  failed(error: Error, to: OutageLogTarget): void {
    if (this.down) return;
    this.down = true;
    to.log(this.lines.down(error.message));
  }

  /** A call reached the service. */
  reached(to: OutageLogTarget): void {
    if (!this.down) return;
    this.down = false;
    to.log(this.lines.back);
  }
}

/** The outage lines of the shared store `what` (`Redis at redis://127.0.0.1:6379`). */
export function storeOutageLines(what: string): OutageLines {
  return {
    down: (cause) => `store unavailable: ${what}: ${cause}; requests that need it answer 503 store_unavailable until it is back`,
    back: `store available again: ${what}`,
  };
}
