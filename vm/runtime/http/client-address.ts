/**
 * Client addresses: parsing and canonical text of IPv4/IPv6 addresses, CIDR ranges, the
 * `trustProxy` setting, and the client of a request from its socket peer and `X-Forwarded-For`.
 * The runtime (`request.ip`, `request.secure`), the `ip()` guard, rate-limit keys and the CSRF
 * origin check all decide through this one module, so they always agree on who the client is.
 *
 * Every address is held as eight 16-bit words of IPv6; an IPv4 address is its IPv4-mapped form
 * `::ffff:a.b.c.d`, so `::ffff:10.0.0.1` and `10.0.0.1` are the same address and an IPv4 CIDR
 * `/n` is IPv6 `/96+n`.
 */

/** Words of an IPv6 address. */
const WORDS = 8;
/** Bits in an address (IPv6; IPv4 lives in the last 32). */
const ADDRESS_BITS = 128;
/** Prefix bits the IPv4-mapped range `::ffff:0:0/96` takes before the IPv4 address. */
const MAPPED_PREFIX_BITS = 96;
/** Longest text taken as an address: a full IPv6 with an embedded IPv4 is 45 characters, a zone adds a few. */
const MAX_ADDRESS_LENGTH = 64;
/**
 * Largest hop count `trustProxy` accepts: real deployments have one to three proxies; a larger
 * number is a typo that would let clients choose their address.
 */
export const MAX_PROXY_HOPS = 16;
/** Most entries a trusted-proxy list may hold; each request may test the peer against all of them. */
export const MAX_TRUSTED_PROXIES = 64;

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

/** Parses an IPv4 or IPv6 address as written, without brackets or port (a `%zone` is ignored); null when it is not one. */
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
 * The canonical text of an address: dotted IPv4 for IPv4 and IPv4-mapped IPv6, else IPv6 in
 * RFC 5952 form (lower case, no leading zeros, the longest run of two or more zero words as `::`).
 */
export function formatIp(words: IpWords): string {
  if (isIpv4(words)) return `${words[6]! >> 8}.${words[6]! & 0xff}.${words[7]! >> 8}.${words[7]! & 0xff}`;
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < WORDS; ) {
    if (words[i] !== 0) {
      i++;
      continue;
    }
    let end = i;
    while (end < WORDS && words[end] === 0) end++;
    if (end - i > bestLength) {
      bestStart = i;
      bestLength = end - i;
    }
    i = end;
  }
  const hex = (from: number, to: number): string => Array.from(words.subarray(from, to), (w) => w.toString(16)).join(':');
  if (bestStart === -1) return hex(0, WORDS);
  return `${hex(0, bestStart)}::${hex(bestStart + bestLength, WORDS)}`;
}

/**
 * The canonical text of an address as clients and proxies write it (an `X-Forwarded-For`
 * entry): surrounding spaces, `[...]` brackets and a `:port` are stripped, IPv4-mapped IPv6
 * becomes IPv4. Null when it is not an address (`009.9.9.9`, `unknown`, a host name).
 */
export function canonicalIp(text: string): string | null {
  let t = text.trim();
  if (t.charCodeAt(0) === 91 /* [ */) {
    const close = t.indexOf(']');
    if (close === -1) return null;
    const rest = t.slice(close + 1);
    if (rest !== '' && !/^:[0-9]{1,5}$/.test(rest)) return null;
    t = t.slice(1, close);
    if (t.indexOf(':') === -1) return null;
  } else {
    const colon = t.indexOf(':');
    // One colon is IPv4 with a port; IPv6 has at least two.
    if (colon !== -1 && t.indexOf(':', colon + 1) === -1) {
      if (!/^[0-9]{1,5}$/.test(t.slice(colon + 1))) return null;
      t = t.slice(0, colon);
    }
  }
  const words = parseIp(t);
  return words === null ? null : formatIp(words);
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
 * Named groups a trusted-proxy list may use (Express's spellings): proxies on this host, on a
 * link, or on a private network.
 */
export const PROXY_GROUPS: Readonly<Record<string, readonly string[]>> = Object.freeze({
  loopback: ['127.0.0.0/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
});

/**
 * Ranges an outbound request (`http_fetch`) may not reach unless the app allows them: the server's
 * own host, its networks and its cloud's metadata service are not the public Internet (SSRF).
 * Sources: RFC 6890 special-purpose registries, RFC 6598 (CGNAT), RFC 4193 (ULA). The cloud
 * metadata services come first: they lie inside the link-local, unique-local and CGNAT ranges,
 * and are named apart so that only an exact listing reaches them (outbound-allow.ts).
 */
export const NON_PUBLIC_GROUPS: Readonly<Record<string, readonly string[]>> = Object.freeze({
  // AWS, Azure, GCP, Oracle and DigitalOcean (IPv4); AWS (IPv6); Alibaba Cloud.
  metadata: ['169.254.169.254', 'fd00:ec2::254', '100.100.100.200'],
  ...PROXY_GROUPS,
  unspecified: ['0.0.0.0/8', '::/128'],
  cgnat: ['100.64.0.0/10'],
  multicast: ['224.0.0.0/4', 'ff00::/8'],
  // 240.0.0.0/4 holds the limited broadcast 255.255.255.255.
  reserved: ['240.0.0.0/4', '192.0.0.0/24', '198.18.0.0/15', 'fec0::/10', '100::/64'],
});

const NON_PUBLIC: readonly (readonly [string, CidrRange])[] = Object.entries(NON_PUBLIC_GROUPS).flatMap(([group, entries]) =>
  entries.map((e) => [group, parseCidr(e)!] as const),
);

/**
 * IPv6 ranges that carry an IPv4 address a gateway forwards to, with the word it starts at:
 * IPv4-compatible `::a.b.c.d` (RFC 4291, deprecated), NAT64 `64:ff9b::/96` (RFC 6052) and 6to4
 * `2002::/16` (RFC 3056). `::ffff:a.b.c.d` needs no entry: it parses as the IPv4 address itself.
 */
const IPV4_CARRIERS: readonly (readonly [CidrRange, number])[] = [
  [parseCidr('::/96')!, 6],
  [parseCidr('64:ff9b::/96')!, 6],
  [parseCidr('2002::/16')!, 1],
];

/**
 * The group of `NON_PUBLIC_GROUPS` an address lies in (`loopback`, `uniquelocal`, …), or null for
 * a public address. An IPv6 address carrying an IPv4 one (NAT64, 6to4, IPv4-compatible) is judged
 * by the IPv4 address it carries as well.
 */
export function nonPublicGroup(address: IpWords): string | null {
  for (const [group, range] of NON_PUBLIC) if (cidrContains(range, address)) return group;
  if (isIpv4(address)) return null;
  for (const [carrier, at] of IPV4_CARRIERS) {
    if (cidrContains(carrier, address)) return nonPublicGroup(mappedWords(address[at]! * 65536 + address[at + 1]!));
  }
  return null;
}

/**
 * The `trustProxy` setting: `false` (no proxy: the socket peer is the client), `true` (one proxy
 * on a loopback, link-local or private address), a hop count (that many proxies, wherever they
 * are), or a list of trusted proxy addresses, CIDR ranges and group names.
 */
export type TrustProxy = boolean | number | readonly string[];

/** The setting compiled for requests: which hop may be a proxy, and which addresses are. */
interface ProxyTrust {
  /** Hops (the peer is hop 0) that may be proxies. */
  hops: number;
  /** Ranges a proxy must lie in; null for any address. */
  ranges: CidrRange[] | null;
}

const NO_PROXY: ProxyTrust = { hops: 0, ranges: null };
const LOCAL_PROXY: ProxyTrust = { hops: 1, ranges: rangesOf([...PROXY_GROUPS.loopback!, ...PROXY_GROUPS.linklocal!, ...PROXY_GROUPS.uniquelocal!]) };

function rangesOf(entries: readonly string[]): CidrRange[] {
  const out: CidrRange[] = [];
  for (const entry of entries) {
    const group = PROXY_GROUPS[entry];
    if (group !== undefined) out.push(...rangesOf(group));
    else {
      const range = parseCidr(entry);
      if (range === null) throw new RangeError(`must list proxy addresses, CIDR ranges or ${Object.keys(PROXY_GROUPS).join(', ')}; '${entry}' is none of them`);
      out.push(range);
    }
  }
  return out;
}

/**
 * Checks a `trustProxy` value from a config file or overrides and returns it in its stored
 * form: `true`/`false`, a hop count (0 is `false`), or a list (a comma-separated text is split).
 * Throws RangeError with a one-line reason for anything else.
 */
export function parseTrustProxy(value: unknown): TrustProxy {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < 0 || value > MAX_PROXY_HOPS) throw new RangeError(`must be a whole number of hops from 0 to ${MAX_PROXY_HOPS}`);
    return value === 0 ? false : value;
  }
  let entries: string[];
  if (typeof value === 'string')
    entries = value
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
  else if (Array.isArray(value) && value.every((v) => typeof v === 'string')) entries = value.map((s: string) => s.trim());
  else throw new RangeError('must be true, false, a hop count or a list of proxy addresses and CIDR ranges');
  if (entries.length === 0) throw new RangeError('must name at least one proxy address or range');
  if (entries.length > MAX_TRUSTED_PROXIES) throw new RangeError(`may list at most ${MAX_TRUSTED_PROXIES} proxies`);
  rangesOf(entries);
  return Object.freeze(entries);
}

/** Compiled settings, per list (lists are frozen settings, so the compiled form never goes stale). */
const compiled = new WeakMap<readonly string[], ProxyTrust>();

function proxyTrust(setting: TrustProxy): ProxyTrust {
  if (setting === false) return NO_PROXY;
  if (setting === true) return LOCAL_PROXY;
  if (typeof setting === 'number') return { hops: setting, ranges: null };
  let trust = compiled.get(setting);
  if (trust === undefined) compiled.set(setting, (trust = { hops: Infinity, ranges: rangesOf(setting) }));
  return trust;
}

function trustedHop(trust: ProxyTrust, hop: number, address: IpWords): boolean {
  if (hop >= trust.hops) return false;
  if (trust.ranges === null) return true;
  for (const range of trust.ranges) if (cidrContains(range, address)) return true;
  return false;
}

/** Who sent a request, as decided from its socket peer and `X-Forwarded-For`. */
export interface ClientAddress {
  /** The client's canonical address (the peer's own text when the peer is not an address). */
  readonly ip: string;
  /** True when the peer is a trusted proxy, so its `X-Forwarded-*` headers are honoured. */
  readonly proxied: boolean;
}

/**
 * The client of a request. Without a trusted peer it is the peer. Otherwise `X-Forwarded-For`
 * (every header line) is walked from the right: the first entry that is not a trusted proxy is
 * the client (with a hop count N: the N-th entry from the right), the left-most entry when all
 * are trusted. An entry that is not an address makes the peer the client, so garbage never
 * names a new client.
 */
export function resolveClient(setting: TrustProxy, peer: string, forwardedFor: string | readonly string[] | undefined): ClientAddress {
  const trust = proxyTrust(setting);
  // Without proxies (the default) a socket's dotted IPv4 is already canonical: no parsing per request.
  if (trust.hops === 0 && isCanonicalIpv4(peer)) return { ip: peer, proxied: false };
  const peerWords = parseIp(peer);
  const peerText = peerWords === null ? peer : formatIp(peerWords);
  if (peerWords === null || !trustedHop(trust, 0, peerWords)) return { ip: peerText, proxied: false };
  if (forwardedFor === undefined) return { ip: peerText, proxied: true };
  const header = typeof forwardedFor === 'string' ? forwardedFor : forwardedFor.join(',');
  let client = peerText;
  let hop = 0;
  for (let end = header.length; end > 0; ) {
    const comma = header.lastIndexOf(',', end - 1);
    const entry = header.slice(comma + 1, end);
    end = comma === -1 ? 0 : comma;
    if (entry.trim() === '') continue;
    const text = canonicalIp(entry);
    if (text === null) return { ip: peerText, proxied: true };
    client = text;
    if (!trustedHop(trust, ++hop, parseIp(text)!)) break;
  }
  return { ip: client, proxied: true };
}

/** True for dotted IPv4 in canonical form (four parts 0–255, no leading zeros), checked without allocating. */
function isCanonicalIpv4(text: string): boolean {
  let parts = 0;
  let digits = 0;
  let value = 0;
  for (let i = 0; i <= text.length; i++) {
    const c = i === text.length ? 46 : text.charCodeAt(i);
    if (c === 46) {
      if (digits === 0 || value > 255 || ++parts > 4) return false;
      digits = 0;
      value = 0;
    } else if (c >= 48 && c <= 57) {
      if (digits === 1 && value === 0) return false;
      value = value * 10 + (c - 48);
      digits++;
    } else return false;
  }
  return parts === 4;
}
