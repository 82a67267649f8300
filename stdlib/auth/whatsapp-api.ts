/**
 * The WhatsApp Cloud API as rvm uses it: one `POST {base}/{phone-number-id}/messages` per code,
 * a text message or an authentication template, sent with undici under fixed timeouts, and the
 * Cloud API's answer turned into a message id or a `CloudApiError` naming what went wrong.
 */
import { createRequire } from 'node:module';
import type * as undici from 'undici';
import type { Agent } from 'undici';
import { onFirstUse, readCapped } from '../../plugins/sdk.js';

/** undici, loaded when the first code is sent: an app without WhatsApp never loads it. */
const loadUndici = onFirstUse(() => createRequire(import.meta.url)('undici') as typeof undici);

/**
 * The Graph API version rvm addresses by default. Versions live about two years (v20.0 ended on
 * 2026-09-24); v23.0 (May 2025) has the message and authentication-template shapes used here.
 * `WHATSAPP_API_URL` pins another version or points at a local fake.
 */
export const WHATSAPP_DEFAULT_API_URL = 'https://graph.facebook.com/v23.0';
/** TCP and TLS set-up with graph.facebook.com takes well under a second; past 5 s it is unreachable. */
export const CONNECT_TIMEOUT_MS = 5_000;
/** The Cloud API accepts a message within a second or two; 10 s without an answer means it is stuck. */
export const HEADERS_TIMEOUT_MS = 10_000;
/** Its answers are a few hundred bytes: 5 s of silence in the middle of one means the connection is dead. */
export const BODY_TIMEOUT_MS = 5_000;
/** Most bytes of an answer read: a real one is under 1 KiB; more is not the Cloud API and is not kept. */
export const MAX_RESPONSE_BYTES = 64 * 1024;

/** The three waits of one call, in milliseconds. */
export interface CloudTimeouts {
  connectMs: number;
  headersMs: number;
  bodyMs: number;
}

/** The timeouts rvm sends with. */
export const DEFAULT_TIMEOUTS: CloudTimeouts = Object.freeze({ connectMs: CONNECT_TIMEOUT_MS, headersMs: HEADERS_TIMEOUT_MS, bodyMs: BODY_TIMEOUT_MS });

/** Where and as whom messages are sent. */
export interface CloudAccount {
  /** `https://graph.facebook.com/v23.0` or `WHATSAPP_API_URL`, without a trailing slash. */
  baseUrl: string;
  phoneNumberId: string;
  token: string;
}

/** A message body as the Cloud API takes it (text or template). */
export type CloudMessage = Record<string, unknown>;

/** A text message (only delivered inside the user's 24-hour customer-service window). */
export function textMessage(to: string, body: string): CloudMessage {
  return { messaging_product: 'whatsapp', recipient_type: 'individual', to, type: 'text', text: { preview_url: false, body } };
}

/**
 * An authentication-template message: the code as the body parameter and as the copy-code
 * button's URL parameter, as Meta's auth-otp template requires.
 */
export function templateMessage(to: string, name: string, language: string, code: string): CloudMessage {
  return {
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    to,
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
}

/** Why a message was not sent. */
export type CloudFailure = 'window_closed' | 'undeliverable' | 'throttled' | 'token_expired' | 'template' | 'refused' | 'timeout' | 'unreachable';

/** A send that failed; `apiCode` is the Cloud API's `error.code` when it gave one. Never carries the token or the message. */
export class CloudApiError extends Error {
  constructor(
    readonly failure: CloudFailure,
    readonly httpStatus: number | null,
    readonly apiCode: number | null,
  ) {
    super(`WhatsApp Cloud API: ${failure}${apiCode === null ? '' : ` (error ${apiCode})`}${httpStatus === null ? '' : `, HTTP ${httpStatus}`}`);
  }
}

/** The Cloud API's `error.code`s rvm tells apart (Meta's Cloud API error reference); every other code is `refused`. */
const FAILURE_BY_CODE: ReadonlyMap<number, CloudFailure> = new Map([
  [131047, 'window_closed'],
  [131026, 'undeliverable'],
  [130429, 'throttled'],
  [131056, 'throttled'],
  [190, 'token_expired'],
  [132000, 'template'],
  [132001, 'template'],
]);

/** The failure an error answer stands for, from its `error.code`. */
export function failureOf(apiCode: number | null): CloudFailure {
  return (apiCode !== null && FAILURE_BY_CODE.get(apiCode)) || 'refused';
}

/** An undici dispatcher that holds connections to the Cloud API with the given timeouts. */
export function cloudAgent(timeouts: CloudTimeouts): Agent {
  return new (loadUndici().Agent)({ connect: { timeout: timeouts.connectMs }, headersTimeout: timeouts.headersMs, bodyTimeout: timeouts.bodyMs });
}

/** The JSON of `text`, or undefined when it is not JSON. */
function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The failure a transport error stands for: a timeout, or no connection at all. */
function transportFailure(error: unknown): CloudApiError {
  const { errors } = loadUndici();
  const timedOut = error instanceof errors.ConnectTimeoutError || error instanceof errors.HeadersTimeoutError || error instanceof errors.BodyTimeoutError;
  return new CloudApiError(timedOut ? 'timeout' : 'unreachable', null, null);
}

/**
 * Sends `message` and answers the Cloud API's message id (`wamid.…`). Throws CloudApiError when
 * it is refused, times out or cannot be reached; when `signal` aborts (the request was abandoned)
 * the wait ends at once with the signal's reason.
 */
export async function sendCloudMessage(account: CloudAccount, message: CloudMessage, dispatcher: Agent, signal?: AbortSignal): Promise<string> {
  const url = `${account.baseUrl}/${encodeURIComponent(account.phoneNumberId)}/messages`;
  let status: number;
  let text: string;
  try {
    const res = await loadUndici().request(url, {
      method: 'POST',
      dispatcher,
      signal,
      headers: { authorization: `Bearer ${account.token}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(message),
    });
    status = res.statusCode;
    // An answer over the cap is not the Cloud API's: read as empty, it is refused below.
    text = (await readCapped(res.body, MAX_RESPONSE_BYTES))?.toString('utf8') ?? '';
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    throw transportFailure(error);
  }
  const answer = jsonOf(text) as { messages?: { id?: unknown }[]; error?: { code?: unknown } } | undefined;
  if (status >= 200 && status < 300) {
    const id = answer?.messages?.[0]?.id;
    if (typeof id === 'string') return id;
    throw new CloudApiError('refused', status, null);
  }
  const code = answer?.error?.code;
  const apiCode = typeof code === 'number' && Number.isInteger(code) ? code : null;
  throw new CloudApiError(failureOf(apiCode), status, apiCode);
}
