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
