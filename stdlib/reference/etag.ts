/** Conditional answers of the reference's endpoints: the page, its assets and the OpenAPI exports. */
import type { CallContext, Halt } from '../../plugins/sdk.js';

/** True when an `If-None-Match` header value lists `etag` (weak or strong) or is `*`. */
export function etagMatches(header: string | string[] | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const values = (Array.isArray(header) ? header.join(',') : header).split(',');
  return values.some((v) => {
    const tag = v.trim();
    return tag === '*' || tag === etag || tag === `W/${etag}`;
  });
}

/** Answers `text` with its ETag and cache policy, or 304 without a body when the client already holds that version. */
export function answerWithEtag(ctx: CallContext, text: string, etag: string, contentType: string, cacheControl: string): Halt {
  ctx.response.setHeader('cache-control', cacheControl);
  ctx.response.setHeader('etag', etag);
  if (etagMatches(ctx.request.headers['if-none-match'], etag)) return ctx.respond(304, null, 'empty');
  ctx.response.setHeader('content-type', contentType);
  return ctx.respond(200, text, 'text');
}
