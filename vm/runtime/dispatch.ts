/**
 * One request from transport to response: split the URL, built-ins, route match (404/405),
 * body, context, `app.execute`, finalisation, one log line. Stays synchronous unless a step
 * (reload, body, an async native) actually returns a Promise.
 */
import { performance } from 'node:perf_hooks';
import { HttpError, NO_BODY, hasBody, readBodyThen, type ParsedBody } from './body.js';
import { RequestContext } from './context.js';
import { describeError } from './log.js';
import { errorBody, errorResponse, finalizeResponse, withoutBody } from './response.js';
import type { AppHandle, IncomingRequest, OutgoingResponse, RouteMatch, RouteTarget } from './types.js';

/** Prefix of the runtime's own paths (reference, spec); they bypass user middleware. */
export const BUILTIN_PREFIX = '/_app/';

type Found = Extract<RouteMatch<RouteTarget>, { kind: 'found' }>;
type Result = OutgoingResponse | Promise<OutgoingResponse>;

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
  let result: Result;
  try {
    result = handle(app, incoming, path, q === -1 ? '' : url.slice(q + 1));
  } catch (err) {
    result = internalError(app, incoming, path, err);
  }
  if (result instanceof Promise) {
    // Neither step may reject: with `deliver` nobody waits on the returned Promise.
    // A failed log line must not keep the answer from being delivered (the client would wait).
    const finish = (out: OutgoingResponse): OutgoingResponse => {
      let answer = out;
      try {
        answer = done(app, incoming, path, start, out);
      } catch (err) {
        reportBug(app, 'could not finish the response', err);
      }
      if (deliver !== undefined) {
        try {
          deliver(target as T, answer);
        } catch (err) {
          reportBug(app, 'could not finish the response', err);
        }
      }
      return answer;
    };
    const fail = (err: unknown): OutgoingResponse => {
      let out: OutgoingResponse;
      try {
        out = internalError(app, incoming, path, err);
      } catch {
        out = errorResponse(500, 'internal_error', 'Internal server error');
      }
      return finish(out);
    };
    return result.then(finish, fail);
  }
  return done(app, incoming, path, start, result);
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
  return method === 'HEAD' ? withoutBody(out) : out;
}

function handle(app: AppHandle, incoming: IncomingRequest, path: string, rawQuery: string): Result {
  // Origin-form only (`/path?query`): absolute-form and `*` are for proxies, not an app.
  if (path.charCodeAt(0) !== 47) return errorResponse(400, 'bad_request', 'Request target must be a path starting with /');
  if (!validPath(path)) return errorResponse(400, 'bad_request', 'Malformed request path');
  const ready = app.ready();
  // ready() first, so built-ins (the reference) also see a reload that was pending.
  if (ready instanceof Promise) return ready.then(() => route(app, incoming, path, rawQuery));
  return route(app, incoming, path, rawQuery);
}

function route(app: AppHandle, incoming: IncomingRequest, path: string, rawQuery: string): Result {
  if (path.startsWith(BUILTIN_PREFIX)) {
    const builtin = app.builtin(incoming, path, rawQuery);
    if (builtin !== null) return builtin;
  }
  const match = app.router.match(incoming.method, path);
  if (match.kind === 'not_found') return errorResponse(404, 'not_found', 'Not found');
  if (match.kind === 'method_not_allowed') {
    if (incoming.method === 'OPTIONS') return preflight(app, incoming, path, rawQuery, match.allowed);
    return errorResponse(405, 'method_not_allowed', `Method ${incoming.method} not allowed`, { allow: match.allowed.join(', ') });
  }
  if (!hasBody(incoming)) return run(app, incoming, path, rawQuery, match, NO_BODY);
  // The route runs as the read settles: the body costs one promise turn, not one per step.
  return readBodyThen(
    incoming,
    app.settings.bodyLimit,
    match.value.uploads,
    (body) => {
      if (body.cleanup === undefined) return run(app, incoming, path, rawQuery, match, body);
      return thenCleanUp(app, body.cleanup, () => run(app, incoming, path, rawQuery, match, body));
    },
    (err: unknown) => {
      if (!(err instanceof HttpError)) throw err;
      if (err.cleanup !== undefined) cleanUp(app, err.cleanup);
      return httpErrorResponse(app, incoming, path, err);
    },
  );
}

/** Runs `answer`, then (success, error or throw) starts `cleanup` without waiting for it. */
function thenCleanUp(app: AppHandle, cleanup: () => Promise<void>, answer: () => Result): Result {
  let result: Result;
  try {
    result = answer();
  } catch (err) {
    cleanUp(app, cleanup);
    throw err;
  }
  if (result instanceof Promise) return result.finally(() => cleanUp(app, cleanup));
  cleanUp(app, cleanup);
  return result;
}

/** Removes a request's temporary files in the background: the response never waits for the disk. */
function cleanUp(app: AppHandle, cleanup: () => Promise<void>): void {
  cleanup().catch((err: unknown) => {
    app.log.error(`could not remove temporary upload files: ${err instanceof Error ? err.message : String(err)}`);
  });
}

/** The error body of an HttpError, with its details; a 5xx logs its cause. */
function httpErrorResponse(app: AppHandle, incoming: IncomingRequest, path: string, err: HttpError): OutgoingResponse {
  if (err.status >= 500) {
    const cause = describeError(err.cause ?? err.message);
    app.log.error(`${incoming.method} ${path} ${err.message}: ${cause}`);
  }
  const out = errorResponse(err.status, err.code, err.message, err.headers);
  if (err.details === undefined) return out;
  const body = JSON.stringify(errorBody(err.message, err.code, err.details));
  out.headers['content-length'] = String(Buffer.byteLength(body));
  return { status: out.status, headers: out.headers, body };
}

function run(app: AppHandle, incoming: IncomingRequest, path: string, rawQuery: string, match: Found, body: ParsedBody): Result {
  const ctx = new RequestContext(incoming, path, rawQuery, match.params, app, body, match.value.meta);
  return answered(ctx, app.execute(ctx, match.value));
}

/** The response once whatever ran for `ctx` is done: at once when it was synchronous. */
export function answered(ctx: RequestContext, pending: void | Promise<unknown>): Result {
  if (pending instanceof Promise) return pending.then(() => finalizeResponse(ctx.response));
  return finalizeResponse(ctx.response);
}

/** OPTIONS without an OPTIONS route: the path's middleware may answer (CORS preflight), else 204 + Allow. */
function preflight(app: AppHandle, incoming: IncomingRequest, path: string, rawQuery: string, allowed: string[]): Result {
  const methods = allowed.includes('OPTIONS') ? allowed : [...allowed, 'OPTIONS'].sort();
  // Any route of the path gives the middleware chain and the params: they share the folder.
  const some = app.router.match(allowed[0]!, path);
  if (some.kind !== 'found') return errorResponse(404, 'not_found', 'Not found');
  const ctx = new RequestContext(incoming, path, rawQuery, some.params, app, NO_BODY, some.value.meta);
  return answered(ctx, app.preflight(ctx, some.value, methods));
}

/** A bug escaped `execute` (or the runtime): log it with its stack, answer a generic 500. */
function internalError(app: AppHandle, incoming: IncomingRequest, path: string, err: unknown): OutgoingResponse {
  if (err instanceof HttpError) return httpErrorResponse(app, incoming, path, err);
  const detail = describeError(err);
  app.log.error(`${incoming.method} ${path} internal error: ${detail}`);
  return errorResponse(500, 'internal_error', 'Internal server error');
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
