/**
 * Where `http_fetch` may connect (SSRF, spec/plugins/fetch.md): public addresses, and what the
 * app lists in `outbound.allow`. A literal address is checked before the request; a host name is
 * checked inside the connection's own DNS lookup, every address it resolves to, and the socket
 * connects to the very addresses checked, so a name that changes its answer between a check and
 * the connection (DNS rebinding) cannot slip through.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { RUNTIME, RvmError, allowsAddress, allowsHost, formatIp, nonPublicGroup, parseIp, type OutboundAllow } from '../../plugins/sdk.js';

/** Resolves a host name to all its addresses (node:dns `lookup` with `all`, or a test's own). */
export type Resolve = (hostname: string, family: number) => Promise<LookupAddress[]>;

/** Names of cloud metadata services (GCP's; the others are reached by address only). */
const METADATA_HOSTS: ReadonlySet<string> = new Set(['metadata.google.internal', 'metadata.google.internal.']);

/** The system resolver, as `net.connect` itself would use it. */
export const systemResolve: Resolve = (hostname, family) =>
  new Promise((resolve, reject) => dnsLookup(hostname, { all: true, family }, (err, addresses) => (err ? reject(err) : resolve(addresses))));

/** The message of a refusal: the host and the kind of address, never the URL's path or query. */
function refused(host: string, address: string, group: string): RvmError {
  const named = host === address ? address : `${host} (${address})`;
  return new RvmError(`http_fetch() refused ${named}: a ${group} address, not listed in rvm.config.json outbound.allow`, RUNTIME.fetch_refused_address);
}

/** The refusal for one address of `host`, or null when it may be reached. */
function refusalOf(allow: OutboundAllow, host: string, address: string): RvmError | null {
  const words = parseIp(address);
  if (words === null) return new RvmError(`http_fetch() refused ${host}: it resolved to '${address}', not an address`, RUNTIME.fetch_refused_address);
  const group = nonPublicGroup(words);
  return group === null || allowsAddress(allow, words) ? null : refused(host, formatIp(words), group);
}

/**
 * Checks a URL's host before it is requested: a literal address must be public or allowed. Host
 * names are checked when they are resolved (checkedLookup).
 */
export function checkLiteralHost(allow: OutboundAllow, hostname: string): void {
  // URL keeps the brackets of an IPv6 host.
  const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  const refusal = parseIp(host) === null ? null : refusalOf(allow, host, host);
  if (refusal !== null) throw refusal;
}

/**
 * The `lookup` the connections use (net.connect's option): resolves the name, refuses it when
 * any of its addresses may not be reached, else hands those addresses to the socket. A name
 * listed in `outbound.allow` is trusted whatever it resolves to.
 */
export function checkedLookup(allow: OutboundAllow, resolve: Resolve): LookupFunction {
  const screen = (hostname: string, addresses: LookupAddress[]): Error | null => {
    if (addresses.length === 0) return Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' });
    if (allowsHost(allow, hostname)) return null;
    for (const { address } of addresses) {
      const refusal = refusalOf(allow, hostname, address);
      if (refusal !== null) return refusal;
    }
    return null;
  };
  return (hostname, options, callback) => {
    // A metadata service's own name is refused unasked, so not even its DNS query leaves.
    if (METADATA_HOSTS.has(hostname.toLowerCase()) && !allowsHost(allow, hostname)) return callback(refused(hostname, hostname, 'metadata'), '', 0);
    resolve(hostname, options.family === 4 || options.family === 6 ? options.family : 0).then(
      (addresses) => {
        const refusal = screen(hostname, addresses);
        if (refusal !== null) callback(refusal, '', 0);
        else if (options.all === true) callback(null, addresses);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
}
