/**
 * Rate-limit keys. Each kind lives in its own namespace (`key:`, `ip:`, `user:`, `route:`), so a
 * raw key can never collide with an IP's or a user's, nor with a route guard's.
 */
import { createHash } from 'node:crypto';
import type { RequestInfo } from '../../plugins/sdk.js';
import { canonicalIp, clientPrefix } from '../../plugins/sdk.js';

/**
 * Longest key kept as written; longer ones are replaced by their SHA-256, so what a request can
 * put into a key never costs more than this per entry.
 */
export const MAX_KEY_LENGTH = 256;
/**
 * IPv6 prefix that names one client: a /64 is the smallest block one subscriber usually gets, so
 * rotating through its own addresses does not escape a limit.
 */
export const IPV6_CLIENT_PREFIX = 64;

function bounded(text: string): string {
  return text.length <= MAX_KEY_LENGTH ? text : `sha256:${createHash('sha256').update(text).digest('base64url')}`;
}

/** The store key of a raw key given to `rate_limit(key, ...)`. */
export function rawKey(key: string): string {
  return `key:${bounded(key)}`;
}

/**
 * The client part of a key: an IPv4 address, or the /64 of an IPv6 one, in canonical form, so
 * `9.9.9.9:1234`, `::ffff:9.9.9.9` and `9.9.9.9` are one client; other text is kept as it is.
 */
export function clientOf(ip: string): string {
  const canonical = canonicalIp(ip);
  if (canonical === null) return ip;
  return canonical.indexOf(':') === -1 ? canonical : clientPrefix(canonical, IPV6_CLIENT_PREFIX);
}

/** The store key of `rate_limit_ip(ip, ...)`. */
export function ipKey(ip: string): string {
  return `ip:${bounded(clientOf(ip))}`;
}

/** The store key of `rate_limit_user(id, ...)`. */
export function userKey(id: string): string {
  return `user:${bounded(id)}`;
}

/** The store key of the `rate_limit` guard: the matched route (as written), policy and client. */
export function guardKey(request: RequestInfo, limit: number, windowSeconds: number): string {
  return `route:${bounded(routeOf(request))}|${limit}/${windowSeconds}|${bounded(clientOf(request.ip))}`;
}

function routeOf(request: RequestInfo): string {
  return request.route ?? `${request.method} ${request.path}`;
}

/** Most guard keys one policy remembers; past it the memory starts over, so it never grows with the clients. */
export const MAX_REMEMBERED_GUARD_KEYS = 10_000;

/**
 * The guard keys of one policy, remembered by route and client IP. A key built afresh for every
 * request is a new string the store must flatten and hash before its Map finds the window: that
 * cost ~200 ns a request, eight times the sliding window itself. A remembered key is hashed once.
 */
export class GuardKeys {
  private readonly byRoute = new Map<string, Map<string, string>>();
  private remembered = 0;

  constructor(
    private readonly limit: number,
    private readonly windowSeconds: number,
  ) {}

  /** Keys remembered now. */
  get size(): number {
    return this.remembered;
  }

  of(request: RequestInfo): string {
    const route = routeOf(request);
    const ip = request.ip;
    let byClient = this.byRoute.get(route);
    const known = byClient?.get(ip);
    if (known !== undefined) return known;
    if (this.remembered >= MAX_REMEMBERED_GUARD_KEYS) {
      this.byRoute.clear();
      this.remembered = 0;
      byClient = undefined;
    }
    if (byClient === undefined) this.byRoute.set(route, (byClient = new Map()));
    const key = guardKey(request, this.limit, this.windowSeconds);
    byClient.set(ip, key);
    this.remembered++;
    return key;
  }
}
