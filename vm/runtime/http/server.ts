/**
 * The node:http transport: adapts each request to `IncomingRequest`, runs `dispatch`, writes the
 * result with one `writeHead` + `end`. Finite timeouts everywhere, malformed HTTP answered 400,
 * graceful close.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { announcesBody } from './body.js';
import { dispatch } from '../dispatch.js';
import type { AppHandle } from '../app-handle.js';
import { describeError, type Logger } from '../log.js';
import { catalogueResponse, errorBody, errorResponse } from '../response.js';
import { overloaded } from './admission.js';
import { HTTP, type HttpErrorEntry } from '../../errors.js';
import { reasonPhrase } from '../../http-status.js';
import type { IncomingRequest, OutgoingResponse } from '../types.js';
import type { AppSettings } from '../../host/context.js';
import { resolveClient } from './client-address.js';
import { connectionHolder, responseStarted, skipDrain } from './node-internals.js';

/** Time to receive the complete header block: bounds slow-loris clients that trickle headers. */
export const HEADERS_TIMEOUT_MS = 30_000;
/** Time to receive the complete request, body included: bounds slow uploads. */
export const REQUEST_TIMEOUT_MS = 60_000;
/** How long an idle keep-alive connection stays open: Node's default, longer than common client pools expect. */
export const KEEP_ALIVE_TIMEOUT_MS = 5_000;
/** Largest header block accepted; more is answered 431. Twice Node's default, for big cookies and tokens. */
export const MAX_HEADER_BYTES = 16 * 1024;
/** How long close() lets in-flight requests finish before cutting their connections. */
export const SHUTDOWN_GRACE_MS = 10_000;
/**
 * Connections the kernel queues before the server accepts them (capped by net.core.somaxconn).
 * Under the reliability bench's floods node's 511 overflowed (the kernel's ListenOverflows grew
 * by tens of thousands): an overflowing queue drops handshakes of every client, not only the
 * flood's, and each dropped one waits for TCP's retransmission.
 */
export const LISTEN_BACKLOG = 4096;
/** How often Node checks connections against the header/request timeouts (its default of 30 s is coarser than the timeouts). */
export const CONNECTIONS_CHECK_INTERVAL_MS = 1_000;

export interface ServerOptions {
  port: number;
  host: string;
  /** Overrides for tests; the named constants are the defaults. */
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  keepAliveTimeoutMs?: number;
  shutdownGraceMs?: number;
}

/** A listening server. */
export interface RunningServer {
  /** Base URL to print, e.g. `http://127.0.0.1:3000`. */
  url: string;
  port: number;
  /** Graceful: stop accepting, let in-flight requests finish (at most the grace period), flush logs. */
  close(): Promise<void>;
  server: http.Server;
}

/** node:http's request as an `IncomingRequest`; the socket is asked for its address only when read. */
class NodeIncoming implements IncomingRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: http.IncomingMessage;

  constructor(private readonly req: http.IncomingMessage) {
    this.method = req.method ?? 'GET';
    this.url = req.url ?? '/';
    this.headers = req.headers;
    this.body = req;
    if (!announcesBody(req.headers)) skipDrain(req);
  }

  get remoteAddress(): string {
    return this.req.socket.remoteAddress ?? '';
  }

  get gone(): boolean {
    return this.req.socket.destroyed;
  }

  get encrypted(): boolean {
    return (this.req.socket as Socket & { encrypted?: boolean }).encrypted === true;
  }
}

/**
 * A response body at least this large is charged to the result budget (`limits.maxResultMemory`)
 * until it is sent: one a slow reader does not take stays in the process, and forty of them
 * were gigabytes. Smaller bodies are not counted (nothing on the common path).
 */
export const CHARGED_RESPONSE_BYTES = 64 * 1024;

/** Starts listening; resolves once the port is bound. */
export function startServer(app: AppHandle, options: ServerOptions): Promise<RunningServer> {
  const headersTimeout = options.headersTimeoutMs ?? HEADERS_TIMEOUT_MS;
  const requestTimeout = Math.max(options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS, headersTimeout);
  const grace = options.shutdownGraceMs ?? SHUTDOWN_GRACE_MS;
  let closing = false;
  /** Open streamed responses: they never finish on their own, so closing ends them. */
  const streams = new Map<http.ServerResponse, NodeJS.ReadableStream>();

  /** `out`, its large body charged until the response is done (sent or its connection gone); 503 `overloaded` past the budget. */
  const chargedUntilSent = (res: http.ServerResponse, out: OutgoingResponse, body: string | Buffer): OutgoingResponse => {
    const bytes = Buffer.byteLength(body);
    if (!app.admission.chargeResult(bytes)) {
      const refused = overloaded('answers waiting to be sent');
      return errorResponse(refused.status, refused.code, refused.message, refused.headers);
    }
    res.once('close', () => app.admission.releaseResult(bytes));
    return out;
  };

  const write = (res: http.ServerResponse, out: OutgoingResponse): void => {
    const large = out.body;
    if ((typeof large === 'string' || Buffer.isBuffer(large)) && large.length >= CHARGED_RESPONSE_BYTES) out = chargedUntilSent(res, out, large);
    try {
      // While shutting down, keep-alive connections end after their in-flight response.
      if (closing) res.setHeader('connection', 'close');
      res.writeHead(out.status, out.headers);
      const body = out.body;
      if (body === null) res.end();
      else if (typeof body === 'string' || Buffer.isBuffer(body)) res.end(body);
      else {
        // A stream (server-sent events): written as it comes, ended when the client goes or we close.
        res.flushHeaders();
        body.pipe(res);
        streams.set(res, body);
        res.once('close', () => {
          streams.delete(res);
          body.destroy();
        });
      }
    } catch (err) {
      app.log.error(`could not write response: ${describeError(err)}`);
      if (res.headersSent) res.destroy();
      else {
        const fallback = catalogueResponse(HTTP.internal_error);
        res.writeHead(fallback.status, fallback.headers);
        res.end(fallback.body);
      }
    }
  };
  const writeFailure = (res: http.ServerResponse, err: unknown): void => {
    app.log.error(`dispatch failed: ${describeError(err)}`);
    write(res, catalogueResponse(HTTP.internal_error));
  };

  // An answer ready at once is written at once when it can go out now. One queued behind an
  // earlier response of its connection (pipelined requests) is written a microtask later, after
  // node's parser has gone through the whole packet: writing it from inside the parser's callback
  // interleaves the buffering with the parsing (paired runs: +2 % req/s with 10 requests in
  // flight; deferring every answer cost 3-4 % more CPU per request without pipelining, so the
  // common case is left alone). Kept as pairs in one array, written in order.
  const ready: (http.ServerResponse | OutgoingResponse)[] = [];
  const writeReady = (): void => {
    for (let i = 0; i < ready.length; i += 2) write(ready[i] as http.ServerResponse, ready[i + 1] as OutgoingResponse);
    ready.length = 0;
  };
  const writeSoon = (res: http.ServerResponse, out: OutgoingResponse): void => {
    if (ready.length === 0 && connectionHolder(res.socket) === res) return write(res, out);
    if (ready.length === 0) queueMicrotask(writeReady);
    ready.push(res, out);
  };

  const server = http.createServer(
    {
      headersTimeout,
      requestTimeout,
      keepAliveTimeout: options.keepAliveTimeoutMs ?? KEEP_ALIVE_TIMEOUT_MS,
      maxHeaderSize: MAX_HEADER_BYTES,
      connectionsCheckingInterval: Math.min(CONNECTIONS_CHECK_INTERVAL_MS, Math.max(10, Math.floor(headersTimeout / 4))),
    },
    (req, res) => {
      let out: OutgoingResponse | Promise<OutgoingResponse>;
      try {
        // An answer that takes a promise turn is written by dispatch, as soon as it is ready.
        out = dispatch(app, new NodeIncoming(req), res, write);
      } catch (err) {
        writeFailure(res, err);
        return;
      }
      if (!(out instanceof Promise)) writeSoon(res, out);
    },
  );
  server.keepAliveTimeout = options.keepAliveTimeoutMs ?? KEEP_ALIVE_TIMEOUT_MS;
  server.on('clientError', onClientError);
  capConnections(server, app.settings);

  let closed: Promise<void> | null = null;
  const close = (): Promise<void> =>
    (closed ??= new Promise<void>((resolve) => {
      closing = true;
      const timer = setTimeout(() => server.closeAllConnections(), grace);
      timer.unref();
      server.close(() => {
        clearTimeout(timer);
        app.log.flush();
        resolve();
      });
      for (const [res, body] of streams) {
        body.unpipe(res);
        res.end();
      }
      server.closeIdleConnections();
    }));

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: options.port, host: options.host, backlog: LISTEN_BACKLOG }, () => {
      server.off('error', reject);
      const port = (server.address() as AddressInfo).port;
      resolve({ url: `http://${displayHost(options.host)}:${port}`, port, close, server });
    });
  });
}

/**
 * spec/language.md §7.3, per client: at most `limits.maxConnections` open connections (node closes the
 * ones past it) and at most `limits.maxConnectionsPerClient` from one peer address, so one client
 * cannot take every file descriptor. A connection past a cap is closed before a byte is read.
 * A trusted proxy's connections are not counted per client: every client behind it shares its
 * address, and the proxy caps its clients itself.
 */
function capConnections(server: http.Server, settings: AppSettings): void {
  const { maxConnections, maxConnectionsPerClient } = settings.limits;
  server.maxConnections = maxConnections;
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const peer = resolveClient(settings.trustProxy, socket.remoteAddress ?? '', undefined);
    if (peer.proxied) return;
    const address = peer.ip;
    const count = (open.get(address) ?? 0) + 1;
    if (count > maxConnectionsPerClient) {
      socket.destroy();
      return;
    }
    open.set(address, count);
    socket.once('close', () => {
      const left = open.get(address)! - 1;
      if (left === 0) open.delete(address);
      else open.set(address, left);
    });
  });
}

/** The host part of a printable URL: the unspecified address is shown as localhost, IPv6 in brackets. */
function displayHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return 'localhost';
  return host.includes(':') ? `[${host}]` : host;
}

/** Raw reply for malformed HTTP: we are below node:http's response machinery here. */
function rawReply(entry: HttpErrorEntry, message: string = entry.message): string {
  const body = JSON.stringify(errorBody(message, entry.code));
  return (
    `HTTP/1.1 ${entry.status} ${reasonPhrase(entry.status)}\r\ncontent-type: application/json; charset=utf-8\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`
  );
}

/** Malformed HTTP, oversized headers or a timeout on one connection: answer it and close it, never crash. */
function onClientError(err: Error & { code?: string }, socket: Socket): void {
  // Node's own rule: reply only if no response of this connection has started writing.
  if (err.code === 'ECONNRESET' || !socket.writable || responseStarted(socket)) {
    socket.destroy();
    return;
  }
  let reply: string;
  if (err.code === 'HPE_HEADER_OVERFLOW') reply = rawReply(HTTP.headers_too_large);
  else if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') reply = rawReply(HTTP.request_timeout);
  else reply = rawReply(HTTP.bad_request, 'Malformed HTTP request');
  socket.end(reply);
}

/**
 * On SIGTERM/SIGINT: close gracefully, then exit 0 (1 if closing failed); a second signal exits
 * at once with 1. Returns a function that removes the handlers.
 */
export function installSignalHandlers(running: RunningServer, log: Logger, exit: (code: number) => void = process.exit): () => void {
  let shuttingDown = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (shuttingDown) {
      log.flush();
      exit(1);
      return;
    }
    shuttingDown = true;
    log.info(`${signal}: shutting down`);
    running.close().then(
      () => exit(0),
      () => exit(1),
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return () => {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  };
}
