/** The app as the transport and the dispatcher see it: what its request contexts need, and more. */
import type { ContextDeps, RequestContext } from './context.js';
import type { Admission } from './http/admission.js';
import type { IncomingRequest, OutgoingResponse, RouteTarget, Router } from './types.js';
import type { Watchdog } from './watchdog.js';

/** A loaded, linked app as the transport sees it: what its request contexts need, and more. */
export interface AppHandle extends ContextDeps {
  /** Requests in flight and body memory, against the app's limits. */
  readonly admission: Admission;
  /** Looks after requests that wait: their wall-clock deadline and their client. */
  readonly watchdog: Watchdog;
  /** The current router; replaced whole on hot reload. */
  readonly router: Router<RouteTarget>;
  /** The middleware of a request no route matches (404): the root `_middleware.rvm`, if any. */
  readonly rootMiddleware: readonly number[];
  /** Dev mode: resolves when a pending reload has finished, so the next request sees it. */
  ready(): void | Promise<void>;
  /**
   * Answers paths under `/_app/` (the reference and other built-ins). Returns null when the path
   * is not a built-in; built-ins bypass user middleware.
   */
  builtin(request: IncomingRequest, path: string, rawQuery: string): OutgoingResponse | Promise<OutgoingResponse> | null;
  /** Runs middleware → guards → validation → handler for a matched route, filling ctx.response. */
  execute(ctx: RequestContext, target: RouteTarget): void | Promise<void>;
  /**
   * A request no route answers (404, 405, an OPTIONS preflight): runs the middleware `chain`
   * around `answer`, so security headers and CORS apply and the app may shape the answer.
   */
  around(ctx: RequestContext, chain: readonly number[], answer: () => void): void | Promise<void>;
}
