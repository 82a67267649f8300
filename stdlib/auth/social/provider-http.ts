/**
 * Calls to a provider: the options every oauth4webapi request gets (a timeout joined with the
 * request's abort signal; plain HTTP allowed only to loopback) and the one error type a sign-in
 * fails with, carrying its catalogue entry, so the natives answer coded errors and never a 500.
 */
import type * as OAuth from 'oauth4webapi';
import { HTTP, onFirstUse, readCapped, type CallContext, type HttpErrorEntry } from '../../../plugins/sdk.js';
import { isLoopbackHttp, type ProviderConfig } from './providers.js';

/** oauth4webapi, imported by the first sign-in: an app without social login never loads it. */
export const loadOauth = onFirstUse(() => import('oauth4webapi'));

/**
 * Most bytes of one provider answer read. Tokens, profiles and e-mail lists are a few KiB, a key
 * set (Microsoft's carries certificates) tens of KiB; more is not a provider's answer, and is not
 * held in memory.
 */
export const MAX_PROVIDER_ANSWER_BYTES = 256 * 1024;

/** A sign-in that cannot go on: the coded answer, and a message safe to show (no token, no code). */
export class SocialFailure extends Error {
  constructor(
    readonly entry: HttpErrorEntry,
    message: string = entry.message,
  ) {
    super(message);
  }
}

/**
 * oauth4webapi's per-request options for a call to `url`: it ends after the configuration's
 * timeout, or when the request is aborted, and its answer is read under MAX_PROVIDER_ANSWER_BYTES.
 */
export function requestOptions(
  oauth: typeof OAuth,
  ctx: CallContext,
  config: ProviderConfig,
  url: string,
): { signal: AbortSignal; [OAuth.allowInsecureRequests]: boolean; [OAuth.customFetch]: typeof cappedFetch } {
  // A timer of our own rather than AbortSignal.timeout(): AbortSignal.any() holds its sources
  // weakly, and a timeout signal nothing else references can be collected before it fires (seen
  // under load: a hung provider was waited for past the limit). The timer holds the controller.
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new DOMException(`no answer within ${config.timeoutMs} ms`, 'TimeoutError')), config.timeoutMs);
  timer.unref();
  ctx.atEnd(() => clearTimeout(timer));
  return {
    signal: AbortSignal.any([ctx.budget.signal, deadline.signal]),
    // oauth4webapi refuses http: endpoints unless told; only a loopback fake or dev proxy may be one.
    [oauth.allowInsecureRequests]: isLoopbackHttp(url),
    [oauth.customFetch]: cappedFetch,
  };
}

/**
 * fetch, with the answer read whole before oauth4webapi parses it, under MAX_PROVIDER_ANSWER_BYTES:
 * a bigger one fails the sign-in with 502 `oauth_provider_answer_too_large`.
 */
async function cappedFetch(url: string, options: OAuth.CustomFetchOptions<string, unknown>): Promise<Response> {
  const response = await fetch(url, options as RequestInit);
  if (response.body === null) return response;
  const bytes = await readCapped(response.body, MAX_PROVIDER_ANSWER_BYTES);
  if (bytes === null)
    throw new SocialFailure(HTTP.oauth_provider_answer_too_large, `${new URL(url).pathname} answered more than ${MAX_PROVIDER_ANSWER_BYTES} bytes`);
  return new Response(bytes, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** True when `error` is a failed request (refused connection, timeout, abort) rather than an answer. */
export function isTransportError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return error.name === 'TimeoutError' || error.name === 'AbortError' || (error instanceof TypeError && /fetch failed|terminated|network/i.test(error.message));
}

/** The coded failure of a request that got no answer: 504 on timeout, 502 otherwise. */
export function transportFailure(error: unknown, what: string): SocialFailure {
  const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
  return timedOut
    ? new SocialFailure(HTTP.oauth_provider_timeout, `${what} did not answer in time`)
    : new SocialFailure(HTTP.oauth_provider_unavailable, `${what} could not be reached`);
}

/**
 * Runs one request to a provider: a request that got no answer is 502/504, and anything else the
 * client library refuses before an answer is read is 502 too, so no provider reaches a 500.
 */
export async function callProvider<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof SocialFailure) throw error;
    if (isTransportError(error)) throw transportFailure(error, what);
    throw new SocialFailure(HTTP.oauth_provider_unavailable, `${what} could not be asked: ${error instanceof Error ? error.message : 'unexpected failure'}`);
  }
}

/** The JSON body of a provider answer, or 502 when it is not JSON. */
export async function jsonBody(response: Response, what: string): Promise<unknown> {
  try {
    return await response.json();
  } catch (error) {
    if (isTransportError(error)) throw transportFailure(error, what);
    throw new SocialFailure(HTTP.oauth_provider_unavailable, `${what} answered something that is not JSON`);
  }
}
