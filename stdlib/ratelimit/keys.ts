/**
 * Rate-limit keys. Each kind lives in its own namespace (`key:`, `ip:`, `user:`, `route:`), so a
 * raw key can never collide with an IP's or a user's, nor with a route guard's.
 */
import { createHash } from 'node:crypto';
import type { RequestInfo } from '../../plugins/sdk.js';
import { clientPrefix } from '../core/ip-address.js';

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

/** The client part of a key: an IPv4 address, or the /64 of an IPv6 one. */
export function clientOf(ip: string): string {
  // IPv4 (the runtime already unwraps IPv4-mapped addresses) is the key as it is.
  return ip.indexOf(':') === -1 ? ip : clientPrefix(ip, IPV6_CLIENT_PREFIX);
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
  const route = request.route ?? `${request.method} ${request.path}`;
  return `route:${bounded(route)}|${limit}/${windowSeconds}|${bounded(clientOf(request.ip))}`;
}
