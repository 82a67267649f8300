/**
 * The raw node:http peer of the HTTP benchmark: the same routes as bench/apps/hello, routed by
 * hand with JSON.parse/stringify; POST /api/users validates the user-creation rules by hand and answers
 * 422 with rvm's error shape. Usage: `node dist/bench/servers/node-http.js PORT`.
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

/** ajv-formats' `email` (its fast mode), the check the other two servers apply. */
const EMAIL =
  /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;

interface FieldError {
  field: string;
  rule: string;
  message: string;
}

/** The user-creation rules, written by hand: every failing field, then the declared fields only. */
function validateUser(body: unknown): { errors: FieldError[] } | { user: { email: string; name: string; role: string } } {
  const errors: FieldError[] = [];
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return { errors: [{ field: 'body', rule: 'type', message: 'must be an object' }] };
  const { email, name, role = 'user' } = body as Record<string, unknown>;
  if (email === undefined || email === null) errors.push({ field: 'email', rule: 'required', message: 'is required' });
  else if (typeof email !== 'string') errors.push({ field: 'email', rule: 'type', message: 'must be text' });
  else if (!EMAIL.test(email)) errors.push({ field: 'email', rule: 'email', message: 'must be a valid email address' });
  if (name === undefined || name === null) errors.push({ field: 'name', rule: 'required', message: 'is required' });
  else if (typeof name !== 'string') errors.push({ field: 'name', rule: 'type', message: 'must be text' });
  else if ([...name].length < 2) errors.push({ field: 'name', rule: 'minLength', message: 'must be at least 2 characters' });
  if (role !== null && typeof role !== 'string') errors.push({ field: 'role', rule: 'type', message: 'must be text' });
  else if (role !== null && role !== 'user' && role !== 'admin') errors.push({ field: 'role', rule: 'one_of', message: "must be one of 'user', 'admin'" });
  if (errors.length > 0) return { errors };
  return { user: { email: email as string, name: name as string, role: (role ?? 'user') as string } };
}

/** Reads a JSON body (at most BODY_LIMIT bytes) and hands it to `handle`; 413 and 400 as rvm answers them. */
function withJsonBody(req: IncomingMessage, res: ServerResponse, handle: (body: unknown) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size <= BODY_LIMIT) chunks.push(chunk);
  });
  req.on('end', () => {
    if (size > BODY_LIMIT) return sendJson(res, 413, { error: 'Payload too large', code: 'payload_too_large' });
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return sendJson(res, 400, { error: 'Malformed JSON', code: 'bad_request' });
    }
    handle(body);
  });
}

function createUser(req: IncomingMessage, res: ServerResponse): void {
  withJsonBody(req, res, (body) => {
    const result = validateUser(body);
    if ('errors' in result) return sendJson(res, 422, { error: 'Validation failed', code: 'validation_failed', details: result.errors });
    sendJson(res, 201, result.user);
  });
}

function echo(req: IncomingMessage, res: ServerResponse): void {
  withJsonBody(req, res, (body) => sendJson(res, 200, body));
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
  if (req.method === 'POST' && path === '/api/users') return createUser(req, res);
  sendJson(res, 404, { error: 'Not found', code: 'not_found' });
});

const port = Number(process.argv[2] ?? 3000);
server.listen(port, '127.0.0.1', () => console.log(`node:http listening on http://127.0.0.1:${port}`));
