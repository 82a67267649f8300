/**
 * The `outbound.allow` setting of rvm.config.json: the host names, addresses and CIDR ranges an
 * outbound request (`http_fetch`) may reach although they are not public (spec/plugins/fetch.md).
 * Checked once when the config is loaded; compiled once by the plugin that sends.
 */
import { cidrContains, nonPublicGroup, parseCidr, parseIp, type CidrRange, type IpWords } from './client-address.js';

/** Most entries the list may hold: each request may test its addresses against all of them. */
export const MAX_OUTBOUND_ALLOW = 256;
/** Longest DNS name (RFC 1035 §2.3.4, written without the final dot). */
const MAX_HOST_NAME = 253;
/** A DNS name as URLs carry it: labels of letters, digits, `-` and `_`, separated by dots. */
const HOST_NAME = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/** The list compiled for requests: names allowed whatever they resolve to, and allowed address ranges. */
export interface OutboundAllow {
  readonly hosts: ReadonlySet<string>;
  readonly ranges: readonly CidrRange[];
}

/** A host name as compared with the list: lower case, without a final dot. */
export function hostKey(host: string): string {
  const lower = host.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

/**
 * Checks an `outbound.allow` value (a list of host names, addresses and CIDR ranges) and returns
 * it as stored: trimmed, host names in lower case. Throws RangeError naming the bad entry (its
 * `cause`).
 */
export function parseOutboundAllow(value: unknown): readonly string[] {
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) throw new RangeError('must be a list of host names, addresses and CIDR ranges');
  if (value.length > MAX_OUTBOUND_ALLOW) throw new RangeError(`may list at most ${MAX_OUTBOUND_ALLOW} entries`);
  const entries = value.map((entry: string) => {
    const text = entry.trim();
    if (parseCidr(text) !== null) return text;
    const host = hostKey(text);
    if (host.length > MAX_HOST_NAME || !HOST_NAME.test(host))
      throw new RangeError(`'${entry}' is neither a host name, an address nor a CIDR range`, { cause: entry });
    return host;
  });
  return Object.freeze(entries);
}

/** Compiled lists, per stored list (frozen, so never stale). */
const compiled = new WeakMap<readonly string[], OutboundAllow>();

/** The stored list compiled for requests. */
export function compileOutboundAllow(entries: readonly string[]): OutboundAllow {
  let allow = compiled.get(entries);
  if (allow === undefined) {
    const hosts = new Set<string>();
    const ranges: CidrRange[] = [];
    for (const entry of entries) {
      const range = parseCidr(entry);
      if (range === null) hosts.add(hostKey(entry));
      else ranges.push(range);
    }
    compiled.set(entries, (allow = { hosts, ranges }));
  }
  return allow;
}

/** True when the host name (or an address written as a host) is listed. */
export function allowsHost(allow: OutboundAllow, host: string): boolean {
  if (allow.hosts.has(hostKey(host))) return true;
  const words = parseIp(host);
  return words !== null && allowsAddress(allow, words);
}

/** Bits of a range that is one address. */
const ONE_ADDRESS = 128;

/**
 * True when the address lies in a listed address or range. A cloud metadata service (it hands
 * out the machine's credentials) is reached only when listed itself, never through a wider
 * range that happens to hold it (`169.254.0.0/16`).
 */
export function allowsAddress(allow: OutboundAllow, address: IpWords): boolean {
  const exactOnly = nonPublicGroup(address) === 'metadata';
  for (const range of allow.ranges) if ((!exactOnly || range.bits === ONE_ADDRESS) && cidrContains(range, address)) return true;
  return false;
}
