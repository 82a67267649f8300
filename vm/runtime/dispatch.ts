/**
 * One request from transport to response: admission, split the URL, built-ins, route match
 * (404/405), context, `app.execute` (which reads the body after the route's guards),
 * finalisation, one log line. Stays synchronous unless a step (reload, body, an async native)
 * actually returns a Promise; a request that waits is watched for its deadline and its client.
 */
import { performance } from 'node:perf_hooks';
import { HALT } from '../host/context.js';
import { overloaded } from './http/admission.js';
import { HttpError, NO_BODY, hasBody } from './http/body.js';
import { RequestContext } from './context.js';
import { describeError } from './log.js';
import { HTTP } from '../errors.js';
import { catalogueBody, catalogueResponse, errorResponse, withoutBody } from './response.js';
import type { Value } from '../values.js';
import { answered, finalize, release, type Result } from './answer.js';
import { BUILTIN_PREFIX, type IncomingRequest, type OutgoingResponse, type RouteTarget } from './types.js';
import type { AppHandle } from './app-handle.js';
import type { AbandonReason, Watched } from './watchdog.js';

/**
 * A body left unread (a guard refused, 404, 405) up to this size is read and dropped by node so
 * the connection can carry the next request; a bigger or chunked one closes the connection
 * instead of being read for nothing.
 */
export const UNREAD_BODY_DRAIN_BYTES = 64 * 1024;

/**
 * Where a response that was not ready at once goes (the server's writer): handed over in the
 * promise turn that finishes it, instead of one turn later through the returned Promise.
 */
export type Deliver<T> = (target: T, out: OutgoingResponse) => void;

/**
 * Handles one request; returns the response, or a Promise only when some step was asynchronous.
 * With `deliver`, that Promise's response is also given to `deliver(target, response)`.
 */
export function dispatch<T>(app: AppHandle, incoming: IncomingRequest, target?: T, deliver?: Deliver<T>): Result {
  const start = performance.now();
  const url = incoming.url;
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  if (!app.admission.enter()) return done(app, incoming, path, start, httpErrorResponse(app, incoming, path, overloaded('requests in flight')));
  const state: RequestState = { ctx: null };
  let result: Result;
  try {
    result = handle(app, incoming, path, q === -1 ? '' : url.slice(q + 1), state);
  } catch (err) {
    result = internalError(app, incoming, path, err);
  }
  if (!(result instanceof Promise)) {
    app.admission.leave();
    return done(app, incoming, path, start, result);
  }
  const pending = new Pending(app, incoming, path, start, state, target, deliver);
  app.watchdog.add(pending);
  // Neither step may reject: with `deliver` nobody waits on the returned Promise.
  const finished = result.then(
    (out) => pending.finish(out),
    (err: unknown) => pending.fail(err),
  );
  // With `deliver` the server is handed the answer; otherwise (inject) the caller awaits it, and
  // an abandoned request must settle it too.
  if (deliver !== undefined) return finished;
  return new Promise<OutgoingResponse>((resolve) => {
    pending.settle = resolve;
    void finished.then(resolve);
  });
}

/** A request that went asynchronous: answered once, by whichever comes first — its result or the watchdog. */
class Pending<T> implements Watched {
  slot = -1;
  readonly deadline: number;
  /** Set once an answer went out; later ones (the result of an abandoned request) are dropped. */
  private settled = false;
  /** Resolves the Promise inject() awaits. */
  settle: ((out: OutgoingResponse) => void) | null = null;

  constructor(
    private readonly app: AppHandle,
    private readonly incoming: IncomingRequest,
    private readonly path: string,
    private readonly start: number,
    private readonly state: RequestState,
    private readonly target: T | undefined,
    private readonly deliver: Deliver<T> | undefined,
  ) {
    this.deadline = start + app.settings.limits.wallTimeMs;
  }

  gone(): boolean {
    return this.incoming.gone === true;
  }

  abandon(reason: AbandonReason): void {
    if (this.settled) return;
    const { app, incoming, path } = this;
    this.state.ctx?.abandon(reason);
    const wallTimeMs = app.settings.limits.wallTimeMs;
    if (reason === 'deadline_exceeded') app.log.error(`${incoming.method} ${path} abandoned: no answer within ${wallTimeMs} ms`);
    this.finish(abandonedResponse(reason, wallTimeMs));
  }

  /** Logs, hands the answer over, frees the slot. A failed log line must not keep the answer from the client. */
  finish(out: OutgoingResponse): OutgoingResponse {
    if (this.settled) return out;
    this.settled = true;
    const app = this.app;
    app.watchdog.delete(this);
    app.admission.leave();
    let answer = out;
    try {
      answer = done(app, this.incoming, this.path, this.start, out);
    } catch (err) {
      reportBug(app, 'could not finish the response', err);
    }
    if (this.deliver !== undefined) {
      try {
        this.deliver(this.target as T, answer);
      } catch (err) {
        reportBug(app, 'could not finish the response', err);
      }
    }
    this.settle?.(answer);
    return answer;
  }

  fail(err: unknown): OutgoingResponse {
    let out: OutgoingResponse;
    try {
      out = internalError(this.app, this.incoming, this.path, err);
    } catch {
      out = catalogueResponse(HTTP.internal_error);
    }
    return this.finish(out);
  }
}

/** What the steps of one request share: the context, once a route runs (the watchdog aborts it). */
interface RequestState {
  ctx: RequestContext | null;
}

/** The answer of an abandoned request: 503 past the deadline; 499 (nginx's "client closed request") for the log when the client left. */
function abandonedResponse(reason: AbandonReason, wallTimeMs: number): OutgoingResponse {
  if (reason === 'client_gone') return catalogueResponse(HTTP.client_gone, HTTP.client_gone.message, { connection: 'close' });
  return catalogueResponse(HTTP.deadline_exceeded, `The request took longer than ${wallTimeMs} ms`, { connection: 'close' });
}

/** Logs a runtime bug with its stack, unless logging is what failed. */
function reportBug(app: AppHandle, what: string, err: unknown): void {
  try {
    app.log.error(`${what}: ${describeError(err)}`);
  } catch {
    // Nothing left to tell it to.
  }
}

/** Strips the body for HEAD and writes the request's log line: the path only, as query strings may carry tokens that don't belong in logs. */
function done(app: AppHandle, incoming: IncomingRequest, path: string, start: number, out: OutgoingResponse): OutgoingResponse {
  const method = incoming.method;
  app.log.request(method, path, out.status, performance.now() - start);
  // A body nobody read (never set flowing) that is too big to drain closes the connection.
  if (hasBody(incoming) && incoming.body!.readableFlowing === null && !drainable(incoming)) out.headers.connection = 'close';
  return method === 'HEAD' ? withoutBody(out) : out;
}

/** A body small enough to read and drop for keep-alive (UNREAD_BODY_DRAIN_BYTES). */
function drainable(incoming: IncomingRequest): boolean {
  const length = incoming.headers['content-length'];
  return typeof length === 'string' && Number(length) <= UNREAD_BODY_DRAIN_BYTES;
}

function handle(app: AppHandle, incoming: IncomingRequest, path: string, rawQuery: string, state: RequestState): Result {
  // Origin-form only (`/path?query`): absolute-form and `*` are for proxies, not an app.
  if (path.charCodeAt(0) !== 47) return catalogueResponse(HTTP.bad_request, 'Request target must be a path starting with /');
  if (!validPath(path)) return catalogueResponse(HTTP.bad_request, 'Malformed request path');
  const ready = app.ready();
  // ready() first, so built-ins (the reference) also see a reload that was pending.
  if (ready instanceof Promise) return ready.then(() => route(app, incoming, path, rawQuery, state));
  return route(app, incoming, path, rawQuery, state);
}

const NO_MIDDLEWARE: readonly number[] = [];

function route(app: AppHandle, incoming: IncomingRequest, path: string, rawQuery: string, state: RequestState): Result {
  if (path.startsWith(BUILTIN_PREFIX)) {
    const builtin = app.builtin(incoming, path, rawQuery);
    if (builtin !== null) return builtin;
  }
  const match = app.router.match(incoming.method, path);
  if (match.kind === 'not_found') {
    // Built-in paths never run user middleware, not even when there is no such built-in.
    const chain = path.startsWith(BUILTIN_PREFIX) ? NO_MIDDLEWARE : app.rootMiddleware;
    if (chain.length === 0) return catalogueResponse(HTTP.not_found);
    const ctx = new RequestContext(incoming, path, rawQuery, {}, app);
    return answered(
      app,
      ctx,
      app.around(ctx, chain, () => ctx.respond(HTTP.not_found.status, catalogueBody(HTTP.not_found) as unknown as Value)),
    );
  }
  if (match.kind === 'method_not_allowed') return unmatchedMethod(app, incoming, path, rawQuery, match.allowed);
  // The body is read by the route itself, after its guards (READ_BODY).
  const target = match.value;
  const body = hasBody(incoming);
  const ctx = new RequestContext(incoming, path, rawQuery, match.params, app, body ? null : NO_BODY, target);
  state.ctx = ctx;
  // Nothing runs before READ_BODY of a route without middleware and guards: its body is read
  // here and the route starts with it known, instead of its fiber suspending at READ_BODY.
  if (body && target.middleware.length === 0 && target.meta.guards.length === 0) {
    const read = ctx.readBody();
    if (read instanceof Promise) return read.then((outcome) => (outcome === HALT ? finalize(app, ctx) : runRoute(app, ctx, target)));
    if (read === HALT) return finalize(app, ctx);
  }
  return runRoute(app, ctx, target);
}

/** Runs the route for `ctx`; the body's memory and files are given back however it ends. */
function runRoute(app: AppHandle, ctx: RequestContext, target: RouteTarget): Result {
  let pending: void | Promise<void>;
  try {
    pending = app.execute(ctx, target);
  } catch (err) {
    release(app, ctx);
    throw err;
  }
  return answered(app, ctx, pending);
}

/** The error body of an HttpError, with its details; a 5xx logs its cause. */
function httpErrorResponse(app: AppHandle, incoming: IncomingRequest, path: string, err: HttpError): OutgoingResponse {
  // A refusal the server chose (503 overloaded) is not an incident; a failure with a cause is.
  if (err.status >= 500 && err.cause !== undefined) {
    const cause = describeError(err.cause);
    app.log.error(`${incoming.method} ${path} ${err.message}: ${cause}`);
  }
  return errorResponse(err.status, err.code, err.message, err.headers, err.details);
}

/**
 * A path that has routes, none for this method: the path's middleware runs (any route of the
 * path gives the chain and the params: they share the folder) around the answer — for OPTIONS
 * 204 with `Allow` unless the middleware answers (CORS preflight), else 405 with `Allow`.
 */
function unmatchedMethod(app: AppHandle, incoming: IncomingRequest, path: string, rawQuery: string, allowed: string[]): Result {
  const preflight = incoming.method === 'OPTIONS';
  const methods = preflight && !allowed.includes('OPTIONS') ? [...allowed, 'OPTIONS'].sort() : allowed;
  const some = app.router.match(allowed[0]!, path);
  if (some.kind !== 'found') return catalogueResponse(HTTP.not_found);
  const chain = some.value.middleware;
  if (!preflight && chain.length === 0)
    return catalogueResponse(HTTP.method_not_allowed, `Method ${incoming.method} not allowed`, { allow: methods.join(', ') });
  const ctx = new RequestContext(incoming, path, rawQuery, some.params, app, NO_BODY, some.value);
  const answer = (): void => {
    ctx.response.setHeader('allow', methods.join(', '));
    if (preflight) ctx.respond(204, null, 'empty');
    else ctx.respond(HTTP.method_not_allowed.status, catalogueBody(HTTP.method_not_allowed, `Method ${incoming.method} not allowed`) as unknown as Value);
  };
  return answered(app, ctx, app.around(ctx, chain, answer));
}

/** A bug escaped `execute` (or the runtime): log it with its stack, answer a generic 500. */
function internalError(app: AppHandle, incoming: IncomingRequest, path: string, err: unknown): OutgoingResponse {
  if (err instanceof HttpError) return httpErrorResponse(app, incoming, path, err);
  const detail = describeError(err);
  app.log.error(`${incoming.method} ${path} internal error: ${detail}`);
  return catalogueResponse(HTTP.internal_error);
}

/** No NUL, and every `%` starts a valid escape that is not `%00`. */
export function validPath(path: string): boolean {
  if (path.indexOf('%') === -1) return path.indexOf('\0') === -1;
  for (let i = 0; i < path.length; i++) {
    const c = path.charCodeAt(i);
    if (c === 0) return false;
    if (c !== 37) continue;
    const hi = hexValue(path.charCodeAt(i + 1));
    const lo = hexValue(path.charCodeAt(i + 2));
    if (hi < 0 || lo < 0 || (hi === 0 && lo === 0)) return false;
    i += 2;
  }
  return true;
}

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 65 && c <= 70) return c - 55;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}
