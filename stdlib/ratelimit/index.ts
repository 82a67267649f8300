/**
 * The `ratelimit` standard plugin: exact sliding-window limits by key, IP, user or route, with the
 * `rate_limit(limit, window_seconds)` guard. The windows live in `ctx.store` (in this process, in
 * the primary under `--workers`, or in Redis: spec/stores.md); the clock is injectable for tests.
 */
import { HTTP, RUNTIME, RvmError, SecretText, argumentProblem, definePlugin, revealText, typeName } from '../../plugins/sdk.js';
import type { CallContext, GuardFn, GuardUse, Halt, PluginApi, PluginDefinition, Value, ValueObject, WindowResult } from '../../plugins/sdk.js';
import { rateLimitField, rateLimitHeaders, secondsUntil } from './headers.js';
import { GuardKeys, ipKey, rawKey, userKey } from './keys.js';

/**
 * Largest limit: the exact window keeps one timestamp (8 bytes) per counted request, so a full
 * key costs at most 800 KB; quotas beyond this want a coarser counter.
 */
export const MAX_LIMIT = 100_000;
/** Longest window: one year, beyond which a "rate" is a quota better kept in records. */
export const MAX_WINDOW_SECONDS = 366 * 24 * 60 * 60;

/** What the plugin can be built with; the defaults serve apps. */
export interface RateLimitPluginOptions {
  /** Clock in epoch ms (default Date.now); a shared store keeps its own. */
  now?: () => number;
}

function invalid(message: string): RvmError {
  return new RvmError(message, RUNTIME.invalid_argument);
}

function limitArg(fn: string, v: Value | undefined): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > MAX_LIMIT) {
    throw invalid(`${fn}() expects limit to be an int from 1 to ${MAX_LIMIT}, got ${typeof v === 'number' ? v : typeName(v)}`);
  }
  return v;
}

function windowArg(fn: string, v: Value | undefined): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0 || v > MAX_WINDOW_SECONDS) {
    throw invalid(`${fn}() expects window_seconds to be a number above 0 and at most ${MAX_WINDOW_SECONDS}, got ${typeof v === 'number' ? v : typeName(v)}`);
  }
  return v;
}

/** A key, id or address: text (a secret is revealed: natives that take keys accept them) or a number. */
function keyArg(fn: string, param: string, v: Value | undefined): string {
  if (typeof v === 'string') return v;
  if (v instanceof SecretText) return revealText(v);
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  throw invalid(`${fn}() expects ${param} to be text or a number, got ${typeName(v)}`);
}

/** The language value of a result: `{ allowed, remaining, reset_at }` with reset_at in Unix seconds. */
function resultValue(r: WindowResult): Value {
  const out: ValueObject = { allowed: r.allowed, remaining: r.remaining, reset_at: Math.ceil(r.resetAt / 1000) };
  return out;
}

/** Whether `error` says the shared store could not be reached (the one failure failing open forgives). */
function unreachable(error: unknown): boolean {
  return error instanceof RvmError && error.code === HTTP.store_unavailable.code;
}

/**
 * Whether limits let requests through while the store cannot be reached (`"rateLimit":
 * {"failOpen": true}`); by default such a request answers 503 `store_unavailable`, as a limit
 * that cannot be checked is not enforced.
 */
function failOpenOf(rvm: PluginApi): boolean {
  const config = rvm.app.config.rateLimit;
  if (config === undefined) return false;
  const section = typeof config === 'object' && config !== null && !Array.isArray(config) ? (config as Record<string, unknown>) : null;
  if (section === null) throw new Error(`rvm.config.json: rateLimit must be an object, got ${JSON.stringify(config)}`);
  for (const key of Object.keys(section)) {
    if (key === 'maxKeys') throw new Error('rvm.config.json: rateLimit.maxKeys is now store.maxWindowKeys (the windows live in the store)');
    if (key !== 'failOpen') throw new Error(`rvm.config.json: unknown setting rateLimit.${key} (known: failOpen)`);
  }
  const failOpen = section.failOpen ?? false;
  if (typeof failOpen !== 'boolean') throw new Error(`rvm.config.json: rateLimit.failOpen must be true or false, got ${JSON.stringify(failOpen)}`);
  return failOpen;
}

/** How the plugin reaches the windows: the clock, and what an unreachable store means. */
interface Windows {
  now: () => number;
  failOpen: boolean;
}

/**
 * `then` for a window answer: `f` on the result, on the spot when the store answered at once (the
 * in-process store: no Promise, no closure). Unreachable and failing open, `open()` answers.
 */
function settle<R>(w: Windows, answer: WindowResult | Promise<WindowResult>, f: (r: WindowResult) => R, open: () => R): R | Promise<R> {
  if (!(answer instanceof Promise)) return f(answer);
  return answer.then(f, (error: unknown) => {
    if (w.failOpen && unreachable(error)) return open();
    throw error;
  });
}

/** Builds the ratelimit plugin; `ratelimit` below is the one apps load. */
export function createRateLimitPlugin(options: RateLimitPluginOptions = {}): PluginDefinition {
  const now = options.now ?? Date.now;
  return definePlugin({
    name: 'ratelimit',
    version: '1.0.0',
    setup(rvm) {
      const windows: Windows = { now, failOpen: failOpenOf(rvm) };
      registerNatives(rvm, windows);
      rvm.guard('rate_limit', rateLimitGuard(windows), {
        checkArgs: (args) =>
          argumentProblem(() => {
            limitArg('rate_limit', args[0] ?? null);
            windowArg('rate_limit', args[1] ?? null);
          }),
        params: [
          { name: 'limit', type: 'int', doc: `Requests allowed per window (1 to ${MAX_LIMIT}).` },
          { name: 'window_seconds', type: 'number', doc: 'Length of the sliding window in seconds.' },
        ],
        doc:
          'Allows at most limit requests per client IP (request.ip; /64 for IPv6) to this route (method and path pattern) in any window_seconds, as an exact sliding window. ' +
          'Every response carries RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, RateLimit-Policy and RateLimit; over the limit it answers 429 too_many_requests with Retry-After. ' +
          '`rate_limit(...): optional` counts and sends the headers but never rejects. ' +
          'When the shared store cannot be reached it answers 503 store_unavailable, or lets the request through without headers with "rateLimit": {"failOpen": true}.',
        responses: [
          {
            status: HTTP.too_many_requests.status,
            code: HTTP.too_many_requests.code,
            description: 'Too many requests from this client to this route in the window; retry after Retry-After seconds.',
            headers: ['Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'RateLimit-Policy', 'RateLimit'],
          },
        ],
      });
    },
  });
}

/** What one `rate_limit(limit, window)` use needs per request, computed once: its numbers and constant header texts. */
interface Policy {
  limit: number;
  windowSeconds: number;
  windowMs: number;
  limitText: string;
  policyText: string;
  keys: GuardKeys;
}

/** Validated policies by limit, then window: guard arguments are route constants, so this stays small. */
function policyCache(): (limit: Value | undefined, window: Value | undefined) => Policy {
  const byLimit = new Map<unknown, Map<unknown, Policy>>();
  return (limit, window) => {
    let byWindow = byLimit.get(limit);
    let policy = byWindow?.get(window);
    if (policy === undefined) {
      const l = limitArg('rate_limit', limit);
      const w = windowArg('rate_limit', window);
      const headers = rateLimitHeaders(l, 0, 0, w);
      policy = {
        limit: l,
        windowSeconds: w,
        windowMs: w * 1000,
        limitText: headers['RateLimit-Limit']!,
        policyText: headers['RateLimit-Policy']!,
        keys: new GuardKeys(l, w),
      };
      if (byWindow === undefined) byLimit.set(limit, (byWindow = new Map()));
      byWindow.set(window, policy);
    }
    return policy;
  };
}

function rateLimitGuard(w: Windows): GuardFn {
  const policyOf = policyCache();
  return (ctx, args, use) => {
    const policy = policyOf(args[0], args[1]);
    const t = w.now();
    const r = ctx.store.hit(policy.keys.of(ctx.request), policy.limit, policy.windowMs, t);
    // No closure on the synchronous path (the in-process store): this runs on every request of a limited route.
    if (!(r instanceof Promise)) return answer(ctx, use, policy, t, r);
    return settle(
      w,
      r,
      (settled) => answer(ctx, use, policy, t, settled),
      () => undefined,
    );
  };
}

/** The guard's verdict on one hit: a 429 over the limit, else the rate-limit headers (the tightest policy's, with several). */
function answer(ctx: CallContext, use: GuardUse, policy: Policy, t: number, r: WindowResult): Halt | undefined {
  const seconds = secondsUntil(r.resetAt, t);
  if (!r.allowed && use.mode === 'required') {
    const headers = rateLimitHeaders(policy.limit, r.remaining, seconds, policy.windowSeconds);
    // Never earlier than the reset, and at least a second: a 429 always means "wait".
    headers['Retry-After'] = String(Math.max(1, seconds));
    return ctx.fail(HTTP.too_many_requests.status, 'Too many requests, slow down', HTTP.too_many_requests.code, headers);
  }
  // With several rate_limit guards on a route, the headers show the tightest.
  const response = ctx.response;
  const shown = response.getHeader('ratelimit-remaining');
  if (shown !== undefined && Number(shown) < r.remaining) return undefined;
  // Set directly (no intermediate object): this runs on every request of a limited route.
  const remaining = String(r.remaining);
  const reset = String(seconds);
  response.setHeader('RateLimit-Limit', policy.limitText);
  response.setHeader('RateLimit-Remaining', remaining);
  response.setHeader('RateLimit-Reset', reset);
  response.setHeader('RateLimit-Policy', policy.policyText);
  response.setHeader('RateLimit', rateLimitField(remaining, reset));
  return undefined;
}

// limitArg and windowArg check them: out of range, of whatever type, is invalid_argument (as the guard's).
const KEY_PARAMS = (what: string, doc: string) => [
  { name: what, type: 'any' as const, doc },
  { name: 'limit', type: 'int' as const, selfChecked: true, doc: `Requests allowed per window (1 to ${MAX_LIMIT}).` },
  { name: 'window_seconds', type: 'number' as const, selfChecked: true, doc: 'Length of the sliding window in seconds.' },
];

const RESULT_DOC =
  'Returns {allowed, remaining, reset_at}: reset_at is absolute Unix seconds, the moment the oldest counted request leaves the window (one more request becomes allowed).';

function registerNatives(rvm: PluginApi, w: Windows): void {
  /** Failing open, an unreachable store answers "allowed, nothing counted". */
  const openResult = (limit: number) => () => resultValue({ allowed: true, remaining: limit, resetAt: w.now() });
  const hit = (ctx: CallContext, key: string, limit: number, windowSeconds: number) =>
    settle(w, ctx.store.hit(key, limit, windowSeconds * 1000, w.now()), resultValue, openResult(limit));

  rvm.native(
    'rate_limit',
    (ctx, key, limit, window) => hit(ctx, rawKey(keyArg('rate_limit', 'key', key)), limitArg('rate_limit', limit), windowArg('rate_limit', window)),
    {
      params: KEY_PARAMS('key', 'Any text naming what is limited (a secret is accepted).'),
      returns: 'object',
      doc: `Checks and counts one request of key against an exact sliding window of at most limit requests per window_seconds (a refused request is not counted). ${RESULT_DOC}`,
    },
  );

  rvm.native(
    'rate_limit_check',
    (ctx, key, limit, window) => {
      const l = limitArg('rate_limit_check', limit);
      const seconds = windowArg('rate_limit_check', window);
      return settle(w, ctx.store.peek(rawKey(keyArg('rate_limit_check', 'key', key)), l, seconds * 1000, w.now()), resultValue, openResult(l));
    },
    {
      params: KEY_PARAMS('key', 'The key, as given to rate_limit.'),
      returns: 'object',
      doc: `Like rate_limit without counting: whether one more request of key would be allowed now. ${RESULT_DOC}`,
    },
  );

  rvm.native(
    'rate_limit_ip',
    (ctx, ip, limit, window) => hit(ctx, ipKey(keyArg('rate_limit_ip', 'ip', ip)), limitArg('rate_limit_ip', limit), windowArg('rate_limit_ip', window)),
    {
      params: KEY_PARAMS('ip', 'A client address, usually request.ip; IPv6 addresses count per /64.'),
      returns: 'object',
      doc: `rate_limit for a client address, in its own namespace (never shared with rate_limit keys or users). ${RESULT_DOC}`,
    },
  );

  rvm.native(
    'rate_limit_user',
    (ctx, id, limit, window) =>
      hit(ctx, userKey(keyArg('rate_limit_user', 'user_id', id)), limitArg('rate_limit_user', limit), windowArg('rate_limit_user', window)),
    {
      params: KEY_PARAMS('user_id', 'The user id (text or number), e.g. auth_user().sub.'),
      returns: 'object',
      doc: `rate_limit for a user id, in its own namespace (never shared with rate_limit keys or addresses). ${RESULT_DOC}`,
    },
  );

  rvm.native(
    'rate_limit_reset',
    (ctx, key) => {
      const done = ctx.store.reset(rawKey(keyArg('rate_limit_reset', 'key', key)));
      if (!(done instanceof Promise)) return null;
      return done.then(
        () => null,
        (error: unknown) => {
          if (w.failOpen && unreachable(error)) return null;
          throw error;
        },
      );
    },
    {
      params: [{ name: 'key', type: 'any', doc: 'The key, as given to rate_limit.' }],
      returns: 'null',
      doc: 'Forgets every request counted for key (e.g. after a successful login); the next rate_limit(key, ...) starts a fresh window.',
    },
  );

  rvm.native(
    'rate_limit_headers',
    (_ctx, remaining, limit, resetAt, window) => {
      if (typeof remaining !== 'number' || !Number.isInteger(remaining) || remaining < 0)
        throw invalid(`rate_limit_headers() expects remaining to be an int of at least 0, got ${typeName(remaining)}`);
      const l = limitArg('rate_limit_headers', limit);
      if (typeof resetAt !== 'number' || !Number.isFinite(resetAt))
        throw invalid(`rate_limit_headers() expects reset_at to be Unix seconds, got ${typeName(resetAt)}`);
      const seconds = window === undefined || window === null ? undefined : windowArg('rate_limit_headers', window);
      return rateLimitHeaders(l, remaining, secondsUntil(resetAt * 1000, w.now()), seconds) as ValueObject;
    },
    {
      // Checked with their ranges above: a wrong one, of whatever type, is invalid_argument.
      params: [
        { name: 'remaining', type: 'int', selfChecked: true, doc: 'remaining from a rate_limit result.' },
        { name: 'limit', type: 'int', selfChecked: true, doc: 'The limit used.' },
        { name: 'reset_at', type: 'number', selfChecked: true, doc: 'reset_at from a rate_limit result (Unix seconds).' },
        { name: 'window_seconds', type: 'number', optional: true, selfChecked: true, doc: 'The window used; adds RateLimit-Policy when given.' },
      ],
      returns: 'object',
      doc: 'The rate-limit headers as an object for set_headers: RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset (seconds from now until reset_at, rounded up), RateLimit ("default";r=REMAINING;t=SECONDS) and, when window_seconds is given, RateLimit-Policy ("default";q=LIMIT;w=WINDOW).',
    },
  );
}

/** The ratelimit plugin as apps load it. */
export const ratelimit = createRateLimitPlugin();

export default ratelimit;
