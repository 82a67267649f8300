/**
 * The request-shape guards of core: `ip(cidr, ...)` (client address in a range), `time(start, end)`
 * (wall-clock window) and `method(m, ...)` (allowed methods). Guard arguments are constants of the
 * route: each guard's `checkArgs` runs its argument parser at load, so a malformed one is the
 * compile error E_GUARD_ARGS; requests reuse the parsed arguments.
 */
import { HTTP, RUNTIME, RvmError, argumentProblem, typeName } from '../../plugins/sdk.js';
import type { GuardUse, PluginApi, Value } from '../../plugins/sdk.js';
import { cidrContains, parseCidr, parseIp, type CidrRange } from '../../plugins/sdk.js';

/** Methods `method()` accepts: those a route may declare (ANY is not a request method). */
const HTTP_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
/** Parsed argument sets kept per guard; arguments are route constants, so this only stops a pathological app. */
const MAX_CACHED_ARGUMENTS = 1024;
/** `HH:MM`, 00:00 to 23:59. */
const CLOCK_TIME = /^([01][0-9]|2[0-3]):([0-5][0-9])$/;

/** What the guards need from outside: the clock (ms since the epoch), injectable for tests. */
export interface GuardOptions {
  now?: () => number;
}

/** A small per-guard cache from an argument list (constants of one route) to its parsed form. */
function argumentCache<T>(parse: (args: Value[]) => T): (args: Value[]) => T {
  const cache = new Map<string, T>();
  return (args) => {
    let key = '';
    for (const a of args) key += (typeof a === 'string' ? a : `\u0000${typeName(a)}`) + '\u0001';
    let parsed = cache.get(key);
    if (parsed === undefined) {
      parsed = parse(args);
      if (cache.size >= MAX_CACHED_ARGUMENTS) cache.clear();
      cache.set(key, parsed);
    }
    return parsed;
  };
}

function textArg(guard: string, param: string, v: Value): string {
  if (typeof v !== 'string') throw new RvmError(`${guard}() expects ${param} to be text, got ${typeName(v)}`, RUNTIME.invalid_argument);
  return v;
}

/** Registers the ip, time and method guards. */
export function registerGuards(rvm: PluginApi, options: GuardOptions = {}): void {
  registerIpGuard(rvm);
  registerTimeGuard(rvm, options.now ?? Date.now, rvm.app.config.timezone);
  registerMethodGuard(rvm);
}

function registerIpGuard(rvm: PluginApi): void {
  const ranges = argumentCache((args): CidrRange[] =>
    args.map((a) => {
      const text = textArg('ip', 'each range', a);
      const range = parseCidr(text);
      if (range === null)
        throw new RvmError(`ip() expects IPv4 or IPv6 addresses or CIDR ranges such as '10.0.0.0/8', got '${text}'`, RUNTIME.invalid_argument);
      return range;
    }),
  );
  rvm.guard(
    'ip',
    (ctx, args, use) => {
      const allowed = ranges(args);
      if (use.mode === 'optional') return;
      const client = parseIp(ctx.request.ip);
      if (client !== null) for (const range of allowed) if (cidrContains(range, client)) return;
      return ctx.fail(HTTP.ip_forbidden.status, 'Your address is not allowed here', HTTP.ip_forbidden.code);
    },
    {
      checkArgs: (args) => argumentProblem(() => ranges([...args])),
      params: [
        { name: 'range', type: 'text', doc: "An IPv4 or IPv6 CIDR range ('10.0.0.0/8', '2001:db8::/32') or a single address." },
        { name: 'more', type: 'text', rest: true, doc: 'Further ranges; the client may be in any of them.' },
      ],
      doc:
        'Lets the request through only when the client address (request.ip: the peer, or behind trusted proxies (trustProxy) the right-most X-Forwarded-For entry that is not a proxy) lies in one of the ranges; ' +
        'IPv4-mapped IPv6 addresses match IPv4 ranges. Otherwise 403 ip_forbidden. A malformed range is a compile error (E_GUARD_ARGS).',
      responses: [{ status: HTTP.ip_forbidden.status, code: HTTP.ip_forbidden.code, description: 'The client address is outside the allowed ranges.' }],
    },
  );
}

/** A wall-clock window in minutes of the day: [start, end), wrapping past midnight when start > end. */
interface TimeWindow {
  start: number;
  end: number;
}

function clockMinutes(text: string): number {
  const m = CLOCK_TIME.exec(text);
  if (m === null) throw new RvmError(`time() expects times as 'HH:MM' from 00:00 to 23:59, got '${text}'`, RUNTIME.invalid_argument);
  return Number(m[1]) * 60 + Number(m[2]);
}

/** True when `minute` (of the day) lies in the window. */
export function inTimeWindow(window: TimeWindow, minute: number): boolean {
  return window.start < window.end ? minute >= window.start && minute < window.end : minute >= window.start || minute < window.end;
}

/**
 * The minute of the day of `ms` in `timeZone` (UTC when undefined). Throws a plain Error for a
 * time zone Intl does not know, at setup, so a bad config fails the app's load.
 */
export function minuteOfDayIn(timeZone: string | undefined): (ms: number) => number {
  if (timeZone === undefined || timeZone === 'UTC') {
    return (ms) => {
      const d = new Date(ms);
      return d.getUTCHours() * 60 + d.getUTCMinutes();
    };
  }
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
  } catch {
    throw new Error(`rvm.config.json: timezone must be an IANA time zone such as 'Europe/Berlin', got ${JSON.stringify(timeZone)}`);
  }
  return (ms) => {
    let hour = 0;
    let minute = 0;
    for (const part of format.formatToParts(ms)) {
      if (part.type === 'hour') hour = Number(part.value);
      else if (part.type === 'minute') minute = Number(part.value);
    }
    return (hour % 24) * 60 + minute;
  };
}

function registerTimeGuard(rvm: PluginApi, now: () => number, timezone: unknown): void {
  if (timezone !== undefined && typeof timezone !== 'string') throw new Error('rvm.config.json: timezone must be text naming an IANA time zone');
  const minuteOfDay = minuteOfDayIn(timezone);
  const windows = argumentCache((args): TimeWindow => {
    const start = clockMinutes(textArg('time', 'start', args[0] ?? null));
    const end = clockMinutes(textArg('time', 'end', args[1] ?? null));
    if (start === end) throw new RvmError(`time() window '${args[0]}'–'${args[1]}' is empty: start and end must differ`, RUNTIME.invalid_argument);
    return { start, end };
  });
  rvm.guard(
    'time',
    (ctx, args, use) => {
      const window = windows(args);
      if (use.mode === 'optional') return;
      const minute = minuteOfDay(now());
      if (inTimeWindow(window, minute)) return;
      return ctx.fail(HTTP.outside_time_window.status, 'This route is not available at this time', HTTP.outside_time_window.code);
    },
    {
      checkArgs: (args) => argumentProblem(() => windows([...args])),
      params: [
        { name: 'start', type: 'text', doc: "First minute allowed, 'HH:MM' (inclusive)." },
        { name: 'end', type: 'text', doc: "First minute no longer allowed, 'HH:MM' (exclusive); before start means the window runs past midnight." },
      ],
      doc:
        "Lets the request through only between start (inclusive) and end (exclusive), e.g. time('09:00', '17:00'); time('22:00', '06:00') runs across midnight. " +
        'Times are UTC unless rvm.config.json sets "timezone" (IANA, e.g. "Europe/Berlin"). Otherwise 403 outside_time_window. Malformed or equal times are a compile error (E_GUARD_ARGS).',
      responses: [
        { status: HTTP.outside_time_window.status, code: HTTP.outside_time_window.code, description: 'The request came outside the allowed time window.' },
      ],
    },
  );
}

function registerMethodGuard(rvm: PluginApi): void {
  const allowedOf = argumentCache((args): { methods: ReadonlySet<string>; allow: string } => {
    const methods = new Set<string>();
    for (const a of args) {
      const m = textArg('method', 'each method', a).toUpperCase();
      if (!HTTP_METHODS.has(m)) throw new RvmError(`method() expects HTTP methods (${[...HTTP_METHODS].join(', ')}), got '${a}'`, RUNTIME.invalid_argument);
      methods.add(m);
    }
    // A GET route serves HEAD, so allowing GET allows HEAD, as the router does.
    if (methods.has('GET')) methods.add('HEAD');
    return { methods, allow: [...methods].sort().join(', ') };
  });
  rvm.guard(
    'method',
    (ctx, args, use: GuardUse) => {
      const { methods, allow } = allowedOf(args);
      if (use.mode === 'optional' || methods.has(ctx.request.method.toUpperCase())) return;
      return ctx.fail(HTTP.method_not_allowed.status, `Method ${ctx.request.method} is not allowed here`, HTTP.method_not_allowed.code, { Allow: allow });
    },
    {
      checkArgs: (args) => argumentProblem(() => allowedOf([...args])),
      params: [
        { name: 'method', type: 'text', doc: "An allowed method, e.g. 'GET'." },
        { name: 'more', type: 'text', rest: true, doc: 'Further allowed methods.' },
      ],
      doc: 'Lets the request through only for the listed methods (useful on ANY routes; GET also allows HEAD). Otherwise 405 method_not_allowed with an Allow header listing them. An unknown method is a compile error (E_GUARD_ARGS).',
      responses: [
        {
          status: HTTP.method_not_allowed.status,
          code: HTTP.method_not_allowed.code,
          description: 'The method is not one the route allows.',
          headers: ['Allow'],
        },
      ],
    },
  );
}
