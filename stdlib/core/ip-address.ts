/**
 * IP addresses and CIDR ranges for the `ip()` guard and rate-limit keys. Every address is held as
 * eight 16-bit words of IPv6; an IPv4 address is its IPv4-mapped form `::ffff:a.b.c.d`, so
 * `::ffff:10.0.0.1` and `10.0.0.1` are the same address and an IPv4 CIDR `/n` is IPv6 `/96+n`.
 */

/** Words of an IPv6 address. */
const WORDS = 8;
/** Bits in an address (IPv6; IPv4 lives in the last 32). */
const ADDRESS_BITS = 128;
/** Prefix bits the IPv4-mapped range `::ffff:0:0/96` takes before the IPv4 address. */
const MAPPED_PREFIX_BITS = 96;
/** Longest text taken as an address: a full IPv6 with an embedded IPv4 is 45 characters, a zone adds a few. */
const MAX_ADDRESS_LENGTH = 64;

/** An address as eight 16-bit words (IPv4 as `::ffff:a.b.c.d`). */
export type IpWords = Uint16Array;

/** A CIDR range: an address and how many leading bits must match. */
export interface CidrRange {
  words: IpWords;
  bits: number;
  /** True when written as IPv4 (for display and keys). */
  v4: boolean;
}

/** Parses dotted IPv4 into its 32-bit value; null when malformed (no leading zeros, four parts, 0–255). */
function parseIpv4(text: string): number | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let value = 0;
  for (const part of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part)) return null;
    const n = Number(part);
    if (n > 255) return null;
    value = value * 256 + n;
  }
  return value;
}

function mappedWords(v4: number): IpWords {
  const words = new Uint16Array(WORDS);
  words[5] = 0xffff;
  words[6] = Math.floor(v4 / 65536);
  words[7] = v4 % 65536;
  return words;
}

/** Parses the hex groups of one side of `::`, the last group may be dotted IPv4; null when malformed. */
function parseGroups(text: string, allowV4Tail: boolean): number[] | null {
  if (text === '') return [];
  const groups = text.split(':');
  const out: number[] = [];
  for (let i = 0; i < groups.length; i++) {
    const g = groups[i]!;
    if (allowV4Tail && i === groups.length - 1 && g.indexOf('.') !== -1) {
      const v4 = parseIpv4(g);
      if (v4 === null) return null;
      out.push(Math.floor(v4 / 65536), v4 % 65536);
    } else {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
      out.push(parseInt(g, 16));
    }
  }
  return out;
}

function parseIpv6(text: string): IpWords | null {
  const zone = text.indexOf('%');
  if (zone !== -1) text = text.slice(0, zone);
  const gap = text.indexOf('::');
  if (gap !== -1 && text.indexOf('::', gap + 1) !== -1) return null;
  const words = new Uint16Array(WORDS);
  if (gap === -1) {
    const groups = parseGroups(text, true);
    if (groups === null || groups.length !== WORDS) return null;
    words.set(groups);
    return words;
  }
  const head = parseGroups(text.slice(0, gap), false);
  const tail = parseGroups(text.slice(gap + 2), true);
  if (head === null || tail === null || head.length + tail.length > WORDS - 1) return null;
  words.set(head, 0);
  words.set(tail, WORDS - tail.length);
  return words;
}

/** Parses an IPv4 or IPv6 address (a `%zone` is ignored); null when it is not one. */
export function parseIp(text: string): IpWords | null {
  if (text.length === 0 || text.length > MAX_ADDRESS_LENGTH) return null;
  if (text.indexOf(':') === -1) {
    const v4 = parseIpv4(text);
    return v4 === null ? null : mappedWords(v4);
  }
  return parseIpv6(text);
}

/** True for an IPv4 address or an IPv4-mapped IPv6 one. */
export function isIpv4(words: IpWords): boolean {
  for (let i = 0; i < 5; i++) if (words[i] !== 0) return false;
  return words[5] === 0xffff;
}

/**
 * Parses `10.0.0.0/8`, `2001:db8::/32`, or a plain address (a range of one). Host bits beyond the
 * prefix are ignored, as most firewalls do. Null when malformed.
 */
export function parseCidr(text: string): CidrRange | null {
  const slash = text.indexOf('/');
  const address = slash === -1 ? text : text.slice(0, slash);
  const words = parseIp(address.trim());
  if (words === null) return null;
  const v4 = address.indexOf(':') === -1;
  if (slash === -1) return { words, bits: ADDRESS_BITS, v4 };
  const prefix = text.slice(slash + 1).trim();
  if (!/^(0|[1-9][0-9]{0,2})$/.test(prefix)) return null;
  const n = Number(prefix);
  if (n > (v4 ? 32 : ADDRESS_BITS)) return null;
  return { words, bits: v4 ? MAPPED_PREFIX_BITS + n : n, v4 };
}

/** True when `address` lies in `range`. */
export function cidrContains(range: CidrRange, address: IpWords): boolean {
  let bits = range.bits;
  for (let i = 0; i < WORDS && bits > 0; i++, bits -= 16) {
    const mask = bits >= 16 ? 0xffff : (0xffff << (16 - bits)) & 0xffff;
    if ((range.words[i]! & mask) !== (address[i]! & mask)) return false;
  }
  return true;
}

/**
 * The part of an address that names one client, as text: the IPv4 address itself, or the
 * leading `prefixBits` of an IPv6 address (a /64 is what one subscriber usually gets, so keying
 * by it stops a client from escaping a limit by rotating through its own addresses).
 */
export function clientPrefix(text: string, prefixBits: number): string {
  const words = parseIp(text);
  if (words === null) return text;
  if (isIpv4(words)) return `${words[6]! >> 8}.${words[6]! & 0xff}.${words[7]! >> 8}.${words[7]! & 0xff}`;
  const kept: string[] = [];
  let bits = prefixBits;
  for (let i = 0; i < WORDS && bits > 0; i++, bits -= 16) {
    const mask = bits >= 16 ? 0xffff : (0xffff << (16 - bits)) & 0xffff;
    kept.push((words[i]! & mask).toString(16));
  }
  return `${kept.join(':')}::/${prefixBits}`;
}
