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

/**
 * Logs a shared store's outage once when it starts and once when it ends, however many requests
 * fail meanwhile: a flood of identical lines would hide everything else in the log (and cost the
 * time the server needs while it is degraded).
 */
export class OutageLog {
  private down = false;

  /** `what` names the store in the lines (`Redis at redis://127.0.0.1:6379`); `write` takes each line. */
  constructor(
    private readonly what: string,
    private readonly write: (line: string) => void,
  ) {}

  /** A call could not reach the store. */
  failed(error: Error): void {
    if (this.down) return;
    this.down = true;
    this.write(`store unavailable: ${this.what}: ${error.message}; requests that need it answer 503 store_unavailable until it is back`);
  }

  /** A call reached the store. */
  reached(): void {
    if (!this.down) return;
    this.down = false;
    this.write(`store available again: ${this.what}`);
  }
}
