/**
 * The client side of tests over real sockets: one GET that does not follow redirects, reading a
 * Set-Cookie back as the `Cookie` a browser would send, and requests on a shared keep-alive agent.
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
    const req = httpRequest({ host: '127.0.0.1', port, path, method, agent, headers: body === undefined ? {} : { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.once('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}
