/**
 * One `http_fetch` call on the wire: the request through undici, the redirects it follows (each
 * hop's host checked again), the answer read under its cap and charged to the request's memory,
 * and every failure as a coded runtime error that names the host, never a secret.
 */
import { createRequire } from 'node:module';
import type * as undici from 'undici';
import type { Dispatcher } from 'undici';
import { RUNTIME, RvmError, fromJson, onFirstUse, parseJsonValue, readCapped } from '../../plugins/sdk.js';
import type { CallContext, OutboundAllow, Value } from '../../plugins/sdk.js';
import { checkLiteralHost } from './address-guard.js';
import { checkedUrl, type RequestPlan } from './request-plan.js';

/** undici, loaded at the first call: an app that never fetches never loads it. */
export const loadUndici = onFirstUse(() => createRequire(import.meta.url)('undici') as typeof undici);

/** Redirects followed at most: real APIs redirect once or twice; a loop must end early. */
export const MAX_REDIRECTS = 5;
/** Statuses that redirect (RFC 9110 §15.4); 300 and 304 carry no redirect to follow. */
const REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);
/** Headers that carry credentials: never sent on to another host (the Fetch standard drops `authorization` too). */
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];
/** A JSON content type: `application/json`, or any `+json` suffix (`application/problem+json`). */
const JSON_TYPE = /^application\/(?:[^;\s]*\+)?json\s*(?:;|$)/i;

/** The request's result memory is spent: the request answers 503 `overloaded`, as a query that reads too many rows does. */
export class MemoryRefused extends Error {}

/** The answer as the language sees it: `{status, headers, json, text}`. */
function answerValue(ctx: CallContext, status: number, headers: Record<string, string | string[] | undefined>, bytes: Buffer): Value {
  const text = bytes.toString('utf8');
  ctx.budget.chargeText(text.length);
  const flat: Record<string, string> = Object.create(null);
  const names = Object.keys(headers);
  ctx.budget.chargeItems(names.length);
  // A repeated header's values joined as the Fetch standard's Headers.get joins them.
  for (const name of names) {
    const value = headers[name];
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  let json: Value = null;
  const type = flat['content-type'];
  if (type !== undefined && JSON_TYPE.test(type) && text !== '') {
    try {
      json = parseJsonValue('http_fetch', text, ctx.budget);
    } catch (error) {
      // Malformed JSON is left in `text` for the caller to read; only the budget stops the call.
      if (!(error instanceof RvmError && error.code === RUNTIME.invalid_json)) throw error;
    }
  }
  return { status, headers: fromJson(flat), json, text };
}

/** The next hop of a redirect, checked against the plan's policy; the plan is changed to send it. */
export function redirectTo(plan: RequestPlan, from: URL, status: number, location: string): URL {
  let next: URL;
  try {
    next = checkedUrl(new URL(location, from).href);
  } catch {
    throw new RvmError(`http_fetch() was redirected from ${from.host} to a URL that is not http: or https:`, RUNTIME.fetch_redirect_refused);
  }
  if (from.protocol === 'https:' && next.protocol === 'http:') {
    throw new RvmError(
      `http_fetch() was redirected from https://${from.host} to http://${next.host}: refused, it would send the request in clear`,
      RUNTIME.fetch_redirect_refused,
    );
  }
  if (next.hostname !== from.hostname) {
    if (plan.redirects !== 'any_host') {
      throw new RvmError(
        `http_fetch() was redirected from ${from.host} to ${next.host}: another host needs follow_redirects: 'any_host'`,
        RUNTIME.fetch_redirect_refused,
      );
    }
    for (const name of [...CREDENTIAL_HEADERS, ...plan.secretHeaders]) delete plan.headers[name];
  }
  // 303 always, and 301/302 after a POST (as browsers and the Fetch standard do), become a GET without body.
  if (status === 303 ? plan.method !== 'HEAD' : (status === 301 || status === 302) && plan.method === 'POST') {
    plan.method = 'GET';
    plan.body = null;
    delete plan.headers['content-type'];
  }
  return next;
}

/** The error a failed transfer stands for; the request's own abort passes through as it is. */
function transferFailure(error: unknown, plan: RequestPlan, ctx: CallContext, timeout: AbortSignal): unknown {
  if (ctx.budget.signal.aborted) return ctx.budget.signal.reason;
  // Our own refusals, the connection's DNS check (checkedLookup) included, pass as they are.
  if (error instanceof RvmError || error instanceof MemoryRefused) return error;
  if (timeout.aborted) return new RvmError(`http_fetch() got no whole answer from ${plan.url.host} within ${plan.timeoutMs} ms`, RUNTIME.fetch_timeout);
  const code = (error as { code?: unknown }).code;
  return new RvmError(`http_fetch() could not reach ${plan.url.host}${typeof code === 'string' ? ` (${code})` : ''}`, RUNTIME.fetch_failed);
}

/**
 * Sends the plan through `dispatcher` (whose connections check the addresses names resolve to)
 * and answers `{status, headers, json, text}`. Aborted with the request (`ctx.budget.signal`) or
 * after `plan.timeoutMs`, whichever comes first.
 */
export async function send(ctx: CallContext, plan: RequestPlan, allow: OutboundAllow, dispatcher: Dispatcher): Promise<Value> {
  const timeout = AbortSignal.timeout(plan.timeoutMs);
  const signal = AbortSignal.any([ctx.budget.signal, timeout]);
  try {
    for (let hops = 0; ; hops++) {
      const url = plan.url;
      checkLiteralHost(allow, url.hostname);
      const res = await loadUndici().request(url, { method: plan.method as Dispatcher.HttpMethod, headers: plan.headers, body: plan.body, signal, dispatcher });
      const location = res.headers.location;
      if (plan.redirects !== 'none' && REDIRECTS.has(res.statusCode) && typeof location === 'string') {
        await res.body.dump();
        if (hops === MAX_REDIRECTS)
          throw new RvmError(`http_fetch() was redirected more than ${MAX_REDIRECTS} times, last by ${url.host}`, RUNTIME.fetch_too_many_redirects);
        plan.url = redirectTo(plan, url, res.statusCode, location);
        continue;
      }
      const tooLarge = () => new RvmError(`http_fetch() answer from ${url.host} is over max_bytes (${plan.maxBytes} bytes)`, RUNTIME.fetch_too_large);
      // The answer to HEAD declares the length of a body it does not send.
      if (plan.method !== 'HEAD' && Number(res.headers['content-length']) > plan.maxBytes) {
        res.body.destroy();
        throw tooLarge();
      }
      const bytes = await readCapped(res.body, plan.maxBytes, (n) => {
        if (!ctx.chargeMemory(n)) throw new MemoryRefused();
      });
      if (bytes === null) throw tooLarge();
      return answerValue(ctx, res.statusCode, res.headers, bytes);
    }
  } catch (error) {
    throw transferFailure(error, plan, ctx, timeout);
  }
}
