/**
 * `GET /_app/rest-api/events`: server-sent events telling an open reference page that the app
 * was reloaded (`event: reload`, data `{"generation":N,"errors":K}`), so it refetches the spec.
 */
import { HTTP } from '../../plugins/sdk.js';
import type { AppIntrospection, EndpointFn } from '../../plugins/sdk.js';

/** Comment lines this often keep proxies (which drop idle connections after 30–60 s) from closing the stream. */
export const HEARTBEAT_MS = 25_000;
/** How soon a browser reconnects after the stream drops (a restarted dev server is back within a second). */
export const RETRY_MS = 1000;
/** Open streams per app: each holds a socket and a listener; a page needs one, a runaway script should not get thousands. */
export const MAX_EVENT_STREAMS = 100;
/** How long a refused client should wait before trying again, in seconds. */
const BUSY_RETRY_AFTER_S = 5;

/** Open streams per app; the app outlives the plugin instances each reload sets up. */
const OPEN = new WeakMap<AppIntrospection, number>();
/** Open streams per app and client address (`limits.maxStreamsPerClient`), so one client cannot hold every slot. */
const OPEN_BY_CLIENT = new WeakMap<AppIntrospection, Map<string, number>>();

/** How many event streams of `app` are open now. */
export function openEventStreams(app: AppIntrospection): number {
  return OPEN.get(app) ?? 0;
}

/** The event a reload sends. */
export function reloadEvent(app: AppIntrospection): string {
  return `event: reload\ndata: ${JSON.stringify({ generation: app.generation, errors: app.errors().length })}\n\n`;
}

/** The endpoint: a stream per client, ended (and unsubscribed) when the client goes away. */
export const eventsEndpoint: EndpointFn = (ctx, app) => {
  if (ctx.request.method === 'HEAD') {
    ctx.response.setHeader('content-type', 'text/event-stream');
    return ctx.respond(200, null, 'empty');
  }
  const open = OPEN.get(app) ?? 0;
  const byClient = OPEN_BY_CLIENT.get(app) ?? new Map<string, number>();
  OPEN_BY_CLIENT.set(app, byClient);
  const client = ctx.request.ip;
  const mine = byClient.get(client) ?? 0;
  if (open >= MAX_EVENT_STREAMS || mine >= ctx.app.limits.maxStreamsPerClient) {
    return ctx.fail(HTTP.too_many_streams.status, 'Too many open reference event streams', HTTP.too_many_streams.code, {
      'Retry-After': String(BUSY_RETRY_AFTER_S),
    });
  }
  OPEN.set(app, open + 1);
  byClient.set(client, mine + 1);
  const stream = ctx.stream(200, 'text/event-stream');
  stream.write(`retry: ${RETRY_MS}\n\n`);
  const off = app.onReload(() => stream.write(reloadEvent(app)));
  const heartbeat = setInterval(() => stream.write(': heartbeat\n\n'), HEARTBEAT_MS);
  heartbeat.unref();
  stream.onClose(() => {
    off();
    clearInterval(heartbeat);
    OPEN.set(app, (OPEN.get(app) ?? 1) - 1);
    const left = (byClient.get(client) ?? 1) - 1;
    if (left === 0) byClient.delete(client);
    else byClient.set(client, left);
  });
};
