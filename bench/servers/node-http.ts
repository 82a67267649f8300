/**
 * The raw node:http peer of the HTTP benchmark: the same three routes as bench/apps/hello,
 * routed by hand with JSON.parse/stringify. Usage: `node dist/bench/servers/node-http.js PORT`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

/** Largest body the echo route reads, as rvm's default JSON limit (1 MiB). */
const BODY_LIMIT = 1024 * 1024;

const USER_PREFIX = '/users/';

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function echo(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size <= BODY_LIMIT) chunks.push(chunk);
  });
  req.on('end', () => {
    if (size > BODY_LIMIT) return sendJson(res, 413, { error: 'Payload too large', code: 'payload_too_large' });
    try {
      sendJson(res, 200, JSON.parse(Buffer.concat(chunks).toString('utf8')));
    } catch {
      sendJson(res, 400, { error: 'Malformed JSON', code: 'bad_request' });
    }
  });
}

const server = createServer((req, res) => {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  if (req.method === 'GET' && path === '/hello') return sendJson(res, 200, { message: 'hello' });
  if (req.method === 'GET' && path.startsWith(USER_PREFIX) && path.indexOf('/', USER_PREFIX.length) < 0) {
    const id = decodeURIComponent(path.slice(USER_PREFIX.length));
    return sendJson(res, 200, { id: Number.parseInt(id, 10), name: `user ${id}` });
  }
  if (req.method === 'POST' && path === '/echo') return echo(req, res);
  sendJson(res, 404, { error: 'Not found', code: 'not_found' });
});

const port = Number(process.argv[2] ?? 3000);
server.listen(port, '127.0.0.1', () => console.log(`node:http listening on http://127.0.0.1:${port}`));
