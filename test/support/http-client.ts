/**
 * The client side of tests over real sockets: one GET that does not follow redirects, reading a
 * Set-Cookie back as the `Cookie` a browser would send, requests on a shared keep-alive agent,
 * and requests each on a connection of its own (spread over a cluster's workers as clients are).
 */
import assert from 'node:assert/strict';
import { request as httpRequest, type Agent, type IncomingHttpHeaders } from 'node:http';

/** An answer as the client received it. */
export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  json(): Record<string, unknown>;
}

/** One GET over a socket, redirects not followed. */
export function get(url: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'GET', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode!, headers: res.headers, body, json: () => JSON.parse(body) as Record<string, unknown> });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** The whole Set-Cookie line for cookie `name` (asserting there is one). */
export function cookieLine(answer: Answer, name: string): string {
  const line = (answer.headers['set-cookie'] ?? []).find((l) => l.startsWith(`${name}=`));
  assert.ok(line, `expected a Set-Cookie for ${name}, got ${JSON.stringify(answer.headers['set-cookie'])}`);
  return line;
}

/** The `name=value` a browser sends back for a Set-Cookie line. */
export function pair(line: string): string {
  return line.split(';')[0]!;
}

/** One request to 127.0.0.1:`port` on `agent` (keep-alive connections shared by a load), a JSON body when given; the status and the body text. */
export function send(agent: Agent, port: number, method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path, method, agent, headers: body === undefined ? {} : { 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.once('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** An answer to `sendFresh`, with how long it took. */
export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** Milliseconds from sending to the end of the answer. */
  ms: number;
}

/**
 * One request on a connection of its own (no agent, `Connection: close`), so concurrent sends
 * spread over the workers of a cluster as separate clients do. A JSON `body` is sent as
 * application/json. Rejects when no answer has ended within `timeoutMs` (the socket is destroyed).
 */
export function sendFresh(url: string, options: { method?: string; body?: unknown; headers?: Record<string, string>; timeoutMs: number }): Promise<Reply> {
  const started = performance.now();
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  const headers: Record<string, string> = { connection: 'close', ...(payload === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers };
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: options.method ?? 'GET', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - started });
      });
      res.on('error', reject);
    });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`${options.method ?? 'GET'} ${url}: no answer within ${options.timeoutMs} ms`));
    }, options.timeoutMs);
    req.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    req.end(payload);
  });
}

/** Sends to every URL at once, each on its own connection; the replies in the same order. */
export function sendAll(
  urls: readonly string[],
  options: { method?: string; body?: unknown; headers?: Record<string, string>; timeoutMs: number },
): Promise<Reply[]> {
  return Promise.all(urls.map((url) => sendFresh(url, options)));
}

/** How many replies had each status: `{200: 100, 429: 300}`. */
export function statusCounts(replies: readonly Reply[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const r of replies) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
}
