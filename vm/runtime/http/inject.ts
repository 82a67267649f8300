/**
 * In-process requests without sockets (Fastify's `inject`): the same `dispatch` the server runs,
 * for unit and conformance tests.
 */
import { Readable } from 'node:stream';
import { dispatch } from '../dispatch.js';
import type { AppHandle } from '../app-handle.js';
import type { IncomingRequest, OutgoingResponse } from '../types.js';

/**
 * A request to inject. An object body is sent as JSON with `content-type: application/json`; a
 * FormData body as multipart/form-data with its boundary.
 */
export interface InjectRequest {
  method?: string;
  url: string;
  headers?: Record<string, string>;
  body?: string | Buffer | FormData | object;
  /** Default `127.0.0.1`. */
  remoteAddress?: string;
  /** As if the connection were TLS. */
  encrypted?: boolean;
}

/** The response as a client would see it; `body` decoded as UTF-8 (empty for HEAD and 204). */
export interface InjectResponse {
  status: number;
  headers: Record<string, string | string[]>;
  body: string;
  // biome-ignore lint/suspicious/noExplicitAny: parsed JSON for a test to walk, typed as fetch's Response.json() is
  json(): any;
}

/** Runs one request through `dispatch` and returns the response. */
export async function inject(app: AppHandle, req: InjectRequest): Promise<InjectResponse> {
  const headers: Record<string, string> = {};
  if (req.headers !== undefined) for (const name of Object.keys(req.headers)) headers[name.toLowerCase()] = req.headers[name];
  let bytes: Buffer | null = null;
  if (req.body !== undefined) {
    if (typeof req.body === 'string') bytes = Buffer.from(req.body);
    else if (Buffer.isBuffer(req.body)) bytes = req.body;
    else if (req.body instanceof FormData) {
      // The fetch API's own encoder: real multipart bytes and the matching boundary.
      const encoded = new Response(req.body);
      bytes = Buffer.from(await encoded.arrayBuffer());
      headers['content-type'] ??= encoded.headers.get('content-type') ?? 'multipart/form-data';
    } else {
      bytes = Buffer.from(JSON.stringify(req.body));
      headers['content-type'] ??= 'application/json';
    }
    headers['content-length'] ??= String(bytes.length);
  }
  const incoming: IncomingRequest = {
    method: (req.method ?? 'GET').toUpperCase(),
    url: req.url,
    headers,
    remoteAddress: req.remoteAddress ?? '127.0.0.1',
    encrypted: req.encrypted === true,
    body: bytes === null ? null : Readable.from([bytes]),
  };
  const out = await dispatch(app, incoming);
  const body = await bodyText(out.body);
  return {
    status: out.status,
    headers: { ...out.headers },
    body,
    json: () => JSON.parse(body),
  };
}

/** The body as text; a stream is read to its end (an endless stream never resolves: use a socket for those). */
async function bodyText(body: OutgoingResponse['body']): Promise<string> {
  if (body === null) return '';
  if (typeof body === 'string') return body;
  if (Buffer.isBuffer(body)) return body.toString('utf8');
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}
