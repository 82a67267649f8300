/**
 * The seams of the HTTP runtime: what the transport (server, inject) hands the app, what the
 * router stores, and what the app does with a matched request.
 */
import type { Readable } from 'node:stream';
import type { PathSegment } from '../lang.js';
import type { ResponseMeta, RouteMeta } from '../bytecode/module.js';
import type { CalledNativeInfo, GuardInfo, MiddlewareInfo } from '../../plugins/contract.js';
import type { Admission } from './http/admission.js';
import type { ContextDeps, RequestContext } from './context.js';
import type { Watchdog } from './watchdog.js';

/** Prefix of the runtime's own paths (reference, spec); they bypass user middleware. */
export const BUILTIN_PREFIX = '/_app/';

/** A request as the transport received it, independent of node:http (inject builds one directly). */
export interface IncomingRequest {
  method: string;
  /** Path and query as sent: `/users/7?x=1`. */
  url: string;
  /** Lower-case names, as node:http gives them. */
  headers: Record<string, string | string[] | undefined>;
  /** Peer address (before any trusted proxy header). */
  remoteAddress: string;
  /** True when the connection itself is TLS. */
  encrypted: boolean;
  /** The body stream; null when there is none. Whether a stream carries a body is `hasBody`'s to say (body.ts). */
  body: Readable | null;
  /** True once the client's connection is closed (the request is then abandoned); absent: never. */
  readonly gone?: boolean;
}

/** A finished response, ready to be written. */
export interface OutgoingResponse {
  status: number;
  headers: Record<string, string | string[]>;
  /** A Readable for streamed responses (server-sent events), written as it comes. */
  body: Buffer | string | Readable | null;
}

/** A route of the app as the router stores it: its metadata, where it came from, its linked chunks and its guards. */
export interface RouteTarget {
  meta: RouteMeta;
  /** Source file relative to the app dir. */
  file: string;
  /** Index of the route chunk in the linked program. */
  chunk: number;
  /** Linked chunk indices of the middleware that wrap this route, outermost first. */
  middleware: number[];
  /** Its guards in written order, resolved against the app and the plugins (the reference's). */
  guards: GuardInfo[];
  /**
   * What it can answer: its own inferred responses and those of every `fn` it calls, however
   * deep. Worked out on first read (the reference's), so a start that binds lazily stays lazy.
   */
  responses(): ResponseMeta[];
  /** The natives it calls, itself or through its `fn`s, that declare error responses or headers; worked out on first read. */
  natives(): CalledNativeInfo[];
  /** What its middleware can answer and asks of the caller, outermost first; worked out on first read. */
  middlewareInfo(): MiddlewareInfo[];
  /** Declared file fields and their byte limits, when the route takes uploads. */
  uploads?: UploadSpec;
}

/** The file fields a route accepts and the most bytes each may have; reading stops there. */
export interface UploadSpec {
  files: Record<string, number>;
}

export type RouteMatch<T> =
  | { kind: 'found'; value: T; params: Record<string, string> }
  | { kind: 'method_not_allowed'; allowed: string[] }
  | { kind: 'not_found' };

/** A router: add routes, then match a method and a path (no query). HEAD falls back to GET. */
export interface Router<T> {
  add(method: string, segments: PathSegment[], value: T): void;
  match(method: string, path: string): RouteMatch<T>;
}

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
