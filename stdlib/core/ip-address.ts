/**
 * IP addresses and CIDR ranges for the `ip()` guard and rate-limit keys: the runtime's own
 * parsing (through the SDK, so the guard and `request.ip` agree on every address), plus the
 * client prefix rate limits key by.
 */
import { formatIp, isIpv4, parseIp } from '../../plugins/sdk.js';

export { canonicalIp, cidrContains, formatIp, isIpv4, parseCidr, parseIp } from '../../plugins/sdk.js';
export type { CidrRange, IpWords } from '../../plugins/sdk.js';

/** Words of an IPv6 address. */
const WORDS = 8;

/**
 * The part of an address that names one client, as canonical text: the IPv4 address itself, or
 * the leading `prefixBits` of an IPv6 address (a /64 is what one subscriber usually gets, so
 * keying by it stops a client from escaping a limit by rotating through its own addresses).
 * Text that is not an address is returned as it is.
 */
export function clientPrefix(text: string, prefixBits: number): string {
  const words = parseIp(text);
  if (words === null) return text;
  if (isIpv4(words)) return formatIp(words);
  const kept = new Uint16Array(WORDS);
  let bits = prefixBits;
  for (let i = 0; i < WORDS && bits > 0; i++, bits -= 16) kept[i] = words[i]! & (bits >= 16 ? 0xffff : (0xffff << (16 - bits)) & 0xffff);
  return `${formatIp(kept)}/${prefixBits}`;
}
