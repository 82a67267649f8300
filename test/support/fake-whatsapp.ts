/**
 * A fake WhatsApp Cloud API for tests: a real node:http server on 127.0.0.1 that answers
 * `POST /{version}/{phone-number-id}/messages` as the Cloud API does. It checks the bearer token,
 * the path and the JSON of both message shapes (text and authentication template) exactly,
 * records every well-formed message, and can be told to answer the next sends with a Cloud API
 * error, late, or not at all. Written from the Cloud API's documented shapes, not from rvm's code.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { isDeepStrictEqual } from 'node:util';

/** A message the fake accepted. */
export interface FakeMessage {
  to: string;
  type: 'text' | 'template';
  /** The text message's body. */
  text?: string;
  /** The template's name and language. */
  template?: { name: string; language: string };
  /** The code the template carried (the same in its body and its button). */
  code?: string;
  /** The request's JSON as sent. */
  json: unknown;
}

/** What the fake does with a send: answer a Cloud API error code, wait first, or hang. */
export type FakeBehaviour =
  | { error: number }
  | { delayMs: number }
  /** Never sends the headers. */
  | 'hang'
  /** Sends the headers and part of the body, then nothing. */
  | 'stall-body'
  /** Answers 200 with something that is not the Cloud API's answer. */
  | 'garbage';

export interface FakeWhatsApp {
  /** The base URL to give as WHATSAPP_API_URL (`http://127.0.0.1:PORT/v23.0`). */
  readonly apiUrl: string;
  readonly token: string;
  readonly phoneNumberId: string;
  /** Every well-formed message, in order (error answers included: they were well formed). */
  readonly messages: FakeMessage[];
  /** Requests refused as malformed, with the reason. */
  readonly refused: { status: number; reason: string }[];
  /** Queues behaviours for the next sends (after them, sends succeed). */
  next(...behaviours: FakeBehaviour[]): void;
  close(): Promise<void>;
}

/** The HTTP status the Cloud API answers each error code with. */
const STATUS_BY_CODE: Readonly<Record<number, number>> = { 190: 401, 130429: 429, 131056: 429 };
const VERSION = 'v23.0';

function cloudError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      error: { message, type: 'OAuthException', code, error_data: { messaging_product: 'whatsapp', details: message }, fbtrace_id: 'AbCdEf123' },
    }),
  );
}

const E164 = /^\+[1-9][0-9]{7,14}$/;

/** The message if `json` is exactly one of the two documented shapes, else why not. */
export function readMessage(json: unknown): FakeMessage | string {
  if (json === null || typeof json !== 'object') return 'body is not a JSON object';
  const m = json as Record<string, unknown>;
  if (typeof m.to !== 'string' || !E164.test(m.to)) return `to is not an E.164 number: ${JSON.stringify(m.to)}`;
  if (m.type === 'text') {
    const text = (m.text as Record<string, unknown> | undefined)?.body;
    if (typeof text !== 'string' || text.length === 0 || text.length > 4096) return 'text.body must be 1–4096 characters';
    const expected = { messaging_product: 'whatsapp', recipient_type: 'individual', to: m.to, type: 'text', text: { preview_url: false, body: text } };
    if (!isDeepStrictEqual(json, expected)) return `not the text message shape: ${JSON.stringify(json)}`;
    return { to: m.to, type: 'text', text, json };
  }
  if (m.type === 'template') {
    const t = m.template as Record<string, unknown> | undefined;
    const name = t?.name;
    const language = (t?.language as Record<string, unknown> | undefined)?.code;
    const components = t?.components as { parameters?: { text?: unknown }[] }[] | undefined;
    const code = components?.[0]?.parameters?.[0]?.text;
    if (typeof name !== 'string' || name === '' || typeof language !== 'string' || language === '') return 'template needs a name and a language code';
    if (typeof code !== 'string' || code === '' || code.length > 15) return 'the code parameter must be 1–15 characters';
    const expected = {
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: m.to,
      type: 'template',
      template: {
        name,
        language: { code: language },
        components: [
          { type: 'body', parameters: [{ type: 'text', text: code }] },
          { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: code }] },
        ],
      },
    };
    if (!isDeepStrictEqual(json, expected)) return `not the authentication template shape: ${JSON.stringify(json)}`;
    return { to: m.to, type: 'template', template: { name, language }, code, json };
  }
  return `unknown message type ${JSON.stringify(m.type)}`;
}

/** Starts the fake on 127.0.0.1 at a free port. */
export async function startFakeWhatsApp(options: { token?: string; phoneNumberId?: string } = {}): Promise<FakeWhatsApp> {
  const token = options.token ?? 'fake-wa-token-0123456789';
  const phoneNumberId = options.phoneNumberId ?? '1098765432101';
  const messages: FakeMessage[] = [];
  const refused: FakeWhatsApp['refused'] = [];
  const queue: FakeBehaviour[] = [];
  let sequence = 0;

  const refuse = (res: ServerResponse, status: number, code: number, reason: string): void => {
    refused.push({ status, reason });
    cloudError(res, status, code, reason);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.method !== 'POST' || req.url !== `/${VERSION}/${phoneNumberId}/messages`) return refuse(res, 404, 100, `unknown path ${req.method} ${req.url}`);
    if (req.headers.authorization !== `Bearer ${token}`) return refuse(res, 401, 190, 'Invalid OAuth access token');
    if (!String(req.headers['content-type']).startsWith('application/json')) return refuse(res, 400, 100, 'content-type is not application/json');
    let json: unknown;
    try {
      json = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return refuse(res, 400, 100, 'body is not JSON');
    }
    const message = readMessage(json);
    if (typeof message === 'string') return refuse(res, 400, 100, message);
    messages.push(message);
    const behaviour = queue.shift();
    if (behaviour === 'hang') return;
    if (behaviour === 'stall-body') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '200' });
      res.write('{"messaging_product":');
      return;
    }
    if (behaviour === 'garbage') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>maintenance</html>');
      return;
    }
    if (behaviour !== undefined && 'error' in behaviour)
      return cloudError(res, STATUS_BY_CODE[behaviour.error] ?? 400, behaviour.error, `error ${behaviour.error}`);
    if (behaviour !== undefined && 'delayMs' in behaviour) await new Promise((r) => setTimeout(r, behaviour.delayMs));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        messaging_product: 'whatsapp',
        contacts: [{ input: message.to, wa_id: message.to.slice(1) }],
        messages: [{ id: `wamid.fake${++sequence}` }],
      }),
    );
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    apiUrl: `http://127.0.0.1:${port}/${VERSION}`,
    token,
    phoneNumberId,
    messages,
    refused,
    next: (...behaviours) => void queue.push(...behaviours),
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A TCP server on 127.0.0.1 that accepts connections and never says a word: given as an
 * `https://` URL, the TLS handshake never completes, so the client's connect timeout runs out.
 */
export async function startSilentServer(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: TcpServer = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}/${VERSION}`,
    close() {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
