/**
 * The client side of browser-like tests: one GET over a real socket that does not follow
 * redirects, and reading a Set-Cookie back as the `Cookie` a browser would send.
 */
import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';

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
