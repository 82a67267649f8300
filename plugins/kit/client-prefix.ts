/**
 * The part of a client address that names one client, as rate limits key by: the runtime's own
 * address parsing, so a limit and `request.ip` agree on every address.
 */
import { formatIp, isIpv4, parseIp } from '../../vm/runtime/http/client-address.js';

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
