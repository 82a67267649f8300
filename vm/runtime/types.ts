/**
 * The seams of the HTTP runtime: what the transport (server, inject) hands the app, what the
 * router stores, and what the app does with a matched request.
 */
import type { Readable } from 'node:stream';
import type { PathSegment } from '../lang.js';
import type { ResponseMeta, RouteMeta } from '../bytecode/module.js';
import type { CalledNativeInfo, GuardInfo, MiddlewareInfo } from '../host/introspection.js';

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

export type ParsedBodyKind = 'none' | 'json' | 'form' | 'multipart' | 'text';

/**
 * A parsed body: JSON data, form fields (text, or a list of text for repeated keys), multipart
 * fields (the same, plus UploadedFile values for declared file fields), text, or null.
 */
export interface ParsedBody {
  kind: ParsedBodyKind;
  value: unknown;
  /**
   * A large JSON body parses again from its bytes: once validated, its parsed form (1 MiB of
   * small objects is ~21 MB of heap) need not wait in memory with its request (see
   * RequestContext.validated).
   */
  reparse?: () => unknown;
  /**
   * A large JSON body: the named top-level members alone, parsed from the scanned text (its
   * `value` is DROPPED until something reads the whole body). What validation reads.
   */
  project?: (names: readonly string[]) => unknown;
  /** Removes the request's temporary upload files; run once the response is final. */
  cleanup?: () => Promise<void>;
}
