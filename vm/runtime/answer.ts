/**
 * The end of a request's work: once whatever ran for a context is done, its draft becomes the
 * response and the body's memory and temporary files are given back. The dispatcher (routes,
 * preflight) and the app (built-in endpoints) both finish requests here.
 */
import type { RequestContext } from './context.js';
import { HTTP, RUNTIME } from '../errors.js';
import { RvmError } from '../values.js';
import { ResponseTooLargeError, catalogueResponse, errorResponse, finalizeResponse } from './response.js';
import type { OutgoingResponse } from './types.js';
import type { AppHandle } from './app-handle.js';

/** The response, or a Promise of it when something still runs. */
export type Result = OutgoingResponse | Promise<OutgoingResponse>;

/** The response once whatever ran for `ctx` is done (at once when it was synchronous); the body's memory and files are given back. */
export function answered(app: AppHandle, ctx: RequestContext, pending: void | Promise<unknown>): Result {
  if (pending instanceof Promise) {
    return pending.then(
      () => finalize(app, ctx),
      (err: unknown) => {
        release(app, ctx);
        throw err;
      },
    );
  }
  return finalize(app, ctx);
}

/**
 * The finished response of `ctx`, its body given back; 500 `response_too_large` (logged) for a
 * body over `limits.maxResponseBytes`, and 500 `not_data` (logged; its code shown in dev mode, as
 * a runtime error's) for a body holding a lambda, which its JSON refuses.
 */
export function finalize(app: AppHandle, ctx: RequestContext): OutgoingResponse {
  try {
    return finalizeResponse(ctx.response, ctx.app.limits.maxResponseBytes);
  } catch (err) {
    if (err instanceof RvmError && err.code === RUNTIME.not_data) {
      app.log.error(`[${ctx.request.id}] runtime error ${err.code} in the response: ${err.message}`);
      return ctx.app.dev ? errorResponse(HTTP.internal_error.status, err.code, err.message) : catalogueResponse(HTTP.internal_error);
    }
    if (!(err instanceof ResponseTooLargeError)) throw err;
    app.log.error(`[${ctx.request.id}] ${err.message}`);
    return catalogueResponse(HTTP.response_too_large);
  } finally {
    // After serialising: the rows charged to the request are still held while their JSON is built.
    release(app, ctx);
  }
}

/** Gives back the body and result memory of `ctx` and removes its temporary files (in the background). */
export function release(app: AppHandle, ctx: RequestContext): void {
  ctx.releaseMemory();
  ctx.ended();
  const cleanup = ctx.bodyState.cleanup;
  if (cleanup !== null) {
    ctx.bodyState.cleanup = null;
    cleanUp(app, cleanup);
  }
}

/** Removes a request's temporary files in the background: the response never waits for the disk. */
function cleanUp(app: AppHandle, cleanup: () => Promise<void>): void {
  cleanup().catch((err: unknown) => {
    app.log.error(`could not remove temporary upload files: ${err instanceof Error ? err.message : String(err)}`);
  });
}
