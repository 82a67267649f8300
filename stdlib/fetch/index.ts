/**
 * The `fetch` standard plugin: `http_fetch(url, options?)`, outbound HTTP for route code
 * (spec/plugins/fetch.md). Public addresses only, unless rvm.config.json `outbound.allow` lists
 * more; each call bounded in time and size and charged to the request that makes it.
 */
import { HTTP, OVERLOADED_RETRY_AFTER_S, compileOutboundAllow, definePlugin } from '../../plugins/sdk.js';
import type { Dispatcher } from 'undici';
import type { PluginApi, PluginDefinition } from '../../plugins/sdk.js';
import { checkedLookup, systemResolve, type Resolve } from './address-guard.js';
import { DEFAULT_MAX_BYTES, DEFAULT_TIMEOUT_MS, MAX_MAX_BYTES, MAX_TIMEOUT_MS, planRequest } from './request-plan.js';
import { MAX_REDIRECTS, MemoryRefused, loadUndici, send } from './send.js';

/** What tests change: the resolver (no outside DNS in tests). */
export interface FetchOptions {
  resolve?: Resolve;
}

/** Registers http_fetch for the app `rvm` loads. */
export function registerFetch(rvm: PluginApi, options: FetchOptions = {}): void {
  const allow = compileOutboundAllow(rvm.app.outbound.allow);
  const resolve = options.resolve ?? systemResolve;
  // One pool of connections per app, made at the first call; idle sockets do not keep the process up.
  let dispatcher: Dispatcher | undefined;
  const agent = (): Dispatcher => (dispatcher ??= new (loadUndici().Agent)({ connect: { lookup: checkedLookup(allow, resolve) } }));

  rvm.native(
    'http_fetch',
    async (ctx, url, options) => {
      const plan = planRequest(url, options, ctx.budget);
      try {
        return await send(ctx, plan, allow, agent());
      } catch (error) {
        if (!(error instanceof MemoryRefused)) throw error;
        return ctx.fail(HTTP.overloaded.status, HTTP.overloaded.message, HTTP.overloaded.code, { 'retry-after': String(OVERLOADED_RETRY_AFTER_S) });
      }
    },
    {
      params: [
        { name: 'url', type: 'text', selfChecked: true, doc: 'An absolute http: or https: URL, text or a secret, without user name or password.' },
        {
          name: 'options',
          type: 'object',
          optional: true,
          doc:
            `{method, headers, json | form | body, timeout_ms, max_bytes, follow_redirects}: method GET (default), HEAD, POST, PUT, PATCH, DELETE or OPTIONS; ` +
            `headers an object of texts, numbers, bools or secrets; json a value sent as JSON, form an object sent as a form, body a text or secret (text/plain unless headers say otherwise); ` +
            `timeout_ms 1–${MAX_TIMEOUT_MS} (default ${DEFAULT_TIMEOUT_MS}); max_bytes 1–${MAX_MAX_BYTES} (default ${DEFAULT_MAX_BYTES}); ` +
            `follow_redirects true (default: the same host, up to ${MAX_REDIRECTS}), false, or 'any_host'.`,
        },
      ],
      returns: 'object',
      doc:
        'Sends an HTTP request and answers {status, headers, json, text}: every status (4xx and 5xx too), header names in lower case, json the parsed body when the content type is JSON (null otherwise, or when it does not parse), text the body as UTF-8. ' +
        'Loopback, private, link-local, CGNAT, multicast and metadata addresses are refused (fetch_refused_address), also after DNS and on every redirect, unless rvm.config.json outbound.allow lists them. ' +
        'Secrets in the URL, headers and body are sent as they are and never shown in errors. Failures are catchable errors: fetch_invalid_url, fetch_refused_address, fetch_timeout, fetch_too_large, fetch_failed, fetch_redirect_refused, fetch_too_many_redirects. ' +
        'See spec/plugins/fetch.md.',
    },
  );
}

/** The fetch plugin as apps load it. */
export const fetch: PluginDefinition = definePlugin({
  name: 'fetch',
  version: '1.0.0',
  setup: (rvm) => registerFetch(rvm),
});

export default fetch;
