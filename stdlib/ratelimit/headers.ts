/**
 * Rate-limit response headers in both forms clients read: the widely used `RateLimit-Limit`,
 * `RateLimit-Remaining`, `RateLimit-Reset` (seconds), and the IETF draft's (httpapi-ratelimit-headers)
 * `RateLimit-Policy: "default";q=LIMIT;w=WINDOW` and `RateLimit: "default";r=REMAINING;t=SECONDS`.
 */

/** The policy name in the IETF form; rvm has one policy per guard use. */
const POLICY = 'default';

/** Whole seconds from `nowMs` until `resetAtMs`, rounded up so a client waiting that long is never early; 0 when past. */
export function secondsUntil(resetAtMs: number, nowMs: number): number {
  return Math.max(0, Math.ceil((resetAtMs - nowMs) / 1000));
}

/**
 * The headers for `remaining` of `limit` with the window resetting in `resetSeconds`;
 * `RateLimit-Policy` only when the window is known.
 */
export function rateLimitHeaders(limit: number, remaining: number, resetSeconds: number, windowSeconds?: number): Record<string, string> {
  const headers: Record<string, string> = {
    'RateLimit-Limit': String(limit),
    'RateLimit-Remaining': String(remaining),
    'RateLimit-Reset': String(resetSeconds),
  };
  // The draft's w is whole seconds; a fractional window is announced as the next whole second.
  if (windowSeconds !== undefined) headers['RateLimit-Policy'] = `"${POLICY}";q=${limit};w=${Math.ceil(windowSeconds)}`;
  headers['RateLimit'] = rateLimitField(remaining, resetSeconds);
  return headers;
}

/** The IETF `RateLimit` field value: `"default";r=REMAINING;t=SECONDS`. */
export function rateLimitField(remaining: number | string, resetSeconds: number | string): string {
  return `"${POLICY}";r=${remaining};t=${resetSeconds}`;
}
