/**
 * An upstream API for `http_fetch` tests: a real node:http server on 127.0.0.1 (the only address
 * tests reach) answering a few fixed paths: JSON, text, echo, redirects, a slow answer, a large
 * one, and one that never ends. It records what it received.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request the upstream received. */
export interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export interface FakeUpstream {
  /** `http://127.0.0.1:PORT` */
  readonly origin: string;
  readonly port: number;
  readonly received: Received[];
  /** How many answers were cut off because the client went away. */
  readonly aborted: number;
  close(): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse, body: string, upstream: { port: number; onAbort(): void }) => void;

const ROUTES: Record<string, Handler> = {
  '/json': (_req, res) => {
    res.setHeader('content-type', 'application/json; charset=utf-8');
    res.setHeader('x-multi', ['a', 'b']);
    res.end('{"ok":true,"items":[1,2,3]}');
  },
  '/problem': (_req, res) => {
    res.statusCode = 404;
    res.setHeader('content-type', 'application/problem+json');
    res.end('{"title":"missing"}');
  },
  '/broken-json': (_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end('{"ok":');
  },
  '/text': (_req, res) => {
    res.setHeader('content-type', 'text/plain; charset=utf-8');
    res.end('héllo');
  },
  '/echo': (req, res, body) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ method: req.method, headers: req.headers, body }));
  },
  '/slow': (_req, res, _body, up) => {
    const timer = setTimeout(() => res.end('late'), 5_000);
    res.on('close', () => {
      clearTimeout(timer);
      if (!res.writableFinished) up.onAbort();
    });
  },
  '/big': (_req, res) => {
    res.setHeader('content-type', 'text/plain');
    // Declared for HEAD too, as a file server declares it.
    res.setHeader('content-length', 64 * 1024);
    res.end('x'.repeat(64 * 1024));
  },
  '/endless': (_req, res, _body, up) => {
    // No content-length: the client learns the size only by reading.
    res.setHeader('content-type', 'text/plain');
    const chunk = Buffer.alloc(16 * 1024, 120);
    const timer = setInterval(() => res.write(chunk), 1);
    res.on('close', () => {
      clearInterval(timer);
      up.onAbort();
    });
  },
};

function redirect(res: ServerResponse, status: number, location: string): void {
  res.statusCode = status;
  res.setHeader('location', location);
  res.end();
}

/** Starts the upstream on a free loopback port. */
export async function startUpstream(): Promise<FakeUpstream> {
  const received: Received[] = [];
  let aborted = 0;
  let port = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      received.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      const url = new URL(req.url!, 'http://upstream');
      const status = Number(url.searchParams.get('status') ?? 302);
      // /to?url=U&status=N redirects to U; /loop redirects to itself.
      if (url.pathname === '/to') return redirect(res, status, url.searchParams.get('url')!);
      if (url.pathname === '/loop') return redirect(res, 302, '/loop');
      const handler = ROUTES[url.pathname];
      if (handler === undefined) {
        res.statusCode = 404;
        return void res.end('no such path');
      }
      handler(req, res, body, { port, onAbort: () => aborted++ });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    received,
    get aborted() {
      return aborted;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
