/**
 * The error every shared store throws (rejects with) when it cannot be reached or does not answer
 * in time, whatever the store; the runtime answers it 503 `store_unavailable`.
 */
import { HTTP } from '../../errors.js';

/** A shared store (Redis, or the primary process under `--workers`) could not be reached or did not answer within its command timeout. */
export class StoreUnavailableError extends Error { readonly code = HTTP.store_unavailable.code; }
