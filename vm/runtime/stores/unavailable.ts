/** The one error a shared store raises when it cannot be reached, whatever the store. */
import { HTTP } from '../../errors.js';

/**
 * A shared store (Redis, or the primary process under `--workers`) could not be reached or did
 * not answer within its command timeout; the request answers 503 `store_unavailable`.
 */
export class StoreUnavailableError extends Error { readonly code = HTTP.store_unavailable.code; }
