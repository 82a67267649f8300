/**
 * Well-known text formats: `@email`, `@url`, `@phone`, `@uuid`, `@credit_card`, `@ip`, `@ipv4`,
 * `@ipv6` and `@hostname`. Where JSON Schema names a format, the rule is the one ajv-formats
 * applies to it, so a client validating against the published schema agrees with the server.
 */
import { isIP, isIPv4, isIPv6 } from 'node:net';
import type { Arbitrary, FastCheck } from '../../plugins/sdk.js';
import { anyText } from './arbitraries.js';
import { textCheck, type ValidatorTable } from './common.js';

/** RFC 5321: a forward-path holds at most 256 octets, two of them the angle brackets. */
export const MAX_EMAIL_LENGTH = 254;
/** RFC 5321 §4.5.3.1.1: the local part is at most 64 octets. */
const MAX_EMAIL_LOCAL_LENGTH = 64;
/** RFC 1035: a domain name is at most 253 characters written without the final dot. */
const MAX_HOSTNAME_LENGTH = 253;
/**
 * Longest URL accepted: 2083 characters, the classic browser limit pydantic's HttpUrl also uses;
 * longer URLs break in practice.
 */
export const MAX_URL_LENGTH = 2083;

/**
 * ajv-formats' `email` with DNS label lengths: a dot-atom local part (RFC 5322 atext, single dots
 * between atoms), @, two or more labels. Length limits are checked first, which also bounds the
 * regex's work.
 */
const EMAIL =
  /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;
/** One DNS label (RFC 1123): letters, digits, inner hyphens, 1–63 characters. */
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;
/** E.164 digits (7–15, leading + optional) with up to two separators (space ( ) . -) between digits. */
const PHONE = /^\+?\(?\d(?:[ ().-]{0,2}\d){6,14}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** 13–19 digits, single spaces or dashes allowed between them. */
const CARD = /^\d(?:[ -]?\d){12,18}$/;
/** Whitespace, control characters and backslashes never belong in a URL as sent. */
const URL_FORBIDDEN = /[\s\u0000-\u001f\u007f\\]/;
const URL_START = /^https?:\/\/[^/]/i;

/** Labels joined by dots, at most 253 characters. */
function isDomain(s: string): boolean {
  return s.length > 0 && s.length <= MAX_HOSTNAME_LENGTH && s.split('.').every((l) => LABEL.test(l));
}

/** RFC 1123 host name; one final dot (the root) is allowed. */
export function isHostname(s: string): boolean {
  return isDomain(s.endsWith('.') ? s.slice(0, -1) : s);
}

/** A practical address: dot-atom local part, a domain of two or more labels, length limits of RFC 5321. */
export function isEmail(s: string): boolean {
  if (s.length > MAX_EMAIL_LENGTH) return false;
  const at = s.indexOf('@');
  if (at < 1 || at > MAX_EMAIL_LOCAL_LENGTH) return false;
  return EMAIL.test(s);
}

/** An absolute http(s) URL with a host, as the WHATWG URL parser reads it. */
export function isUrl(s: string): boolean {
  if (s.length > MAX_URL_LENGTH || !URL_START.test(s) || URL_FORBIDDEN.test(s)) return false;
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

/** The Luhn checksum over `digits` holds. */
function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** 13–19 digits (single spaces or dashes between them) passing the Luhn checksum. */
export function isCardNumber(s: string): boolean {
  return CARD.test(s) && luhn(s.replace(/[ -]/g, ''));
}

/** The digit that completes `payload` to a Luhn-valid number. */
function luhnDigit(payload: string): string {
  for (let d = 0; d <= 9; d++) if (luhn(payload + d)) return String(d);
  return '0';
}

/** Zone ids (`fe80::1%eth0`) name an interface of one host: meaningless in a request, so refused. */
function isIp(s: string): boolean {
  return !s.includes('%') && isIP(s) !== 0;
}

function isIpv6(s: string): boolean {
  return !s.includes('%') && isIPv6(s);
}

/** Constants that fail, plus arbitrary text that fails. */
function failing(fc: FastCheck, test: (s: string) => boolean, samples: string[]): Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(...samples),
    anyText(fc).filter((s) => !test(s)),
  );
}

/** A DNS label; never `??--…`, which IDNA reserves (`xn--` is punycode the URL parser must decode). */
function label(fc: FastCheck): Arbitrary<string> {
  return fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,8}[a-z0-9])?$/).filter((l) => l.slice(2, 4) !== '--');
}

function domain(fc: FastCheck): Arbitrary<string> {
  return fc.tuple(fc.array(label(fc), { minLength: 1, maxLength: 3 }), fc.stringMatching(/^[a-z]{2,6}$/)).map(([ls, tld]) => [...ls, tld].join('.'));
}

function emails(fc: FastCheck): Arbitrary<string> {
  const atom = fc.stringMatching(/^[a-zA-Z0-9!#$%&'*+/=?^_`{|}~-]{1,10}$/);
  const mine = fc.tuple(fc.array(atom, { minLength: 1, maxLength: 3 }), domain(fc)).map(([atoms, d]) => `${atoms.join('.')}@${d}`);
  return fc.oneof(mine, fc.emailAddress().filter(isEmail));
}

function urls(fc: FastCheck): Arbitrary<string> {
  const port = fc.option(
    fc.integer({ min: 1, max: 65535 }).map((p) => `:${p}`),
    { nil: '' },
  );
  const path = fc.array(fc.stringMatching(/^[a-zA-Z0-9._~-]{0,8}$/), { maxLength: 3 }).map((segs) => segs.map((s) => `/${s}`).join(''));
  const query = fc.option(fc.stringMatching(/^\?[a-z]{1,5}=[a-z0-9]{0,5}$/), { nil: '' });
  // A one-label host starts with a letter: the URL standard reads one of digits (`08`, `0x1`) as an IPv4 number.
  const name = label(fc).filter((l) => l.charCodeAt(0) >= 97);
  const host = fc.oneof(domain(fc), name, fc.ipV4());
  const mine = fc.tuple(fc.constantFrom('http', 'https', 'HTTPS'), host, port, path, query).map(([s, h, p, pa, q]) => `${s}://${h}${p}${pa}${q}`);
  return fc.oneof(mine, fc.webUrl({ validSchemes: ['http', 'https'] }).filter(isUrl));
}

function phones(fc: FastCheck): Arbitrary<string> {
  const sep = fc.stringMatching(/^[ ().-]{0,2}$/);
  return fc
    .tuple(fc.constantFrom('', '+', '+(', '('), fc.array(fc.tuple(fc.integer({ min: 0, max: 9 }), sep), { minLength: 7, maxLength: 15 }))
    .map(([prefix, parts]) => prefix + parts.map(([d, s], i) => (i === parts.length - 1 ? String(d) : `${d}${s}`)).join(''));
}

function cards(fc: FastCheck): Arbitrary<string> {
  return fc
    .tuple(fc.stringMatching(/^[0-9]{12,18}$/), fc.constantFrom('', ' ', '-'))
    .map(([payload, sep]) => (payload + luhnDigit(payload)).replace(/(\d{4})(?=\d)/g, `$1${sep}`));
}

function wrongCards(fc: FastCheck): Arbitrary<string> {
  const wrongCheck = fc.stringMatching(/^[0-9]{12,18}$/).map((p) => p + String((Number(luhnDigit(p)) + 1) % 10));
  const wrongLength = fc.oneof(fc.stringMatching(/^[0-9]{1,11}$/), fc.stringMatching(/^[0-9]{20,24}$/)).map((p) => p + luhnDigit(p));
  return fc.oneof(wrongCheck, wrongLength, fc.constantFrom('', '4111 1111 1111 111a', '4111--1111-1111-1111', ' 4111111111111111'));
}

/** The format validators of this module. */
export const FORMAT_VALIDATORS: ValidatorTable = {
  email: {
    types: ['text'],
    params: [],
    doc: `An e-mail address: dot-atom local part (letters, digits, !#$%&'*+/=?^_\`{|}~- and single dots), @, a domain of two or more DNS labels; at most ${MAX_EMAIL_LENGTH} characters.`,
    build: () => textCheck(isEmail),
    message: () => 'must be a valid email address',
    schema: () => ({ format: 'email' }),
    arbitraries: {
      accepts: (fc) => emails(fc),
      rejects: (fc) =>
        failing(fc, isEmail, [
          '',
          'plainaddress',
          '@example.com',
          'a@',
          'a@b',
          'a..b@example.com',
          '.a@example.com',
          'a.@example.com',
          'a b@example.com',
          'a@-example.com',
          'a@example-.com',
          'a@exa_mple.com',
          'a@@example.com',
          'a@example..com',
          `${'a'.repeat(65)}@example.com`,
          `a@${'b'.repeat(250)}.com`,
        ]),
    },
  },

  url: {
    types: ['text'],
    params: [],
    doc: `An absolute http or https URL with a host (as the WHATWG URL parser reads it), no spaces, at most ${MAX_URL_LENGTH} characters.`,
    build: () => textCheck(isUrl),
    message: () => 'must be a valid http or https URL',
    schema: () => ({ format: 'uri' }),
    arbitraries: {
      accepts: (fc) => urls(fc),
      rejects: (fc) =>
        failing(fc, isUrl, [
          '',
          'example.com',
          'ftp://example.com',
          'http://',
          'https://',
          'http:// example.com',
          'http:///path',
          'mailto:a@example.com',
          'javascript:alert(1)',
          '//example.com',
          'http:example.com',
          'https://exa mple.com',
          'http://a\\b',
        ]),
    },
  },

  phone: {
    types: ['text'],
    params: [],
    doc: "A phone number in E.164 spirit: an optional +, 7 to 15 digits, with spaces, dots, dashes or parentheses between them, e.g. '+1 (555) 123-4567'.",
    build: () => textCheck((s) => PHONE.test(s)),
    message: () => 'must be a valid phone number',
    schema: () => ({ pattern: PHONE.source }),
    arbitraries: {
      accepts: (fc) => phones(fc),
      rejects: (fc) =>
        fc.oneof(
          fc.stringMatching(/^\+?[0-9]{1,6}$/),
          fc.stringMatching(/^\+?[0-9]{16,20}$/),
          failing(fc, (s) => PHONE.test(s), ['', '+', '++1234567', '12345a67', '123---4567', 'phone', '+1 555 CALL NOW', '1234567+']),
        ),
    },
  },

  uuid: {
    types: ['text'],
    params: [],
    doc: 'A UUID in its canonical 8-4-4-4-12 hexadecimal form (RFC 9562; any version and variant, nil and max included, either letter case).',
    build: () => textCheck((s) => UUID.test(s)),
    message: () => 'must be a valid UUID',
    schema: () => ({ format: 'uuid' }),
    arbitraries: {
      accepts: (fc) =>
        fc.oneof(
          fc.uuid(),
          fc.uuid().map((u) => u.toUpperCase()),
          fc.constantFrom('00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff'),
        ),
      rejects: (fc) =>
        fc.oneof(
          fc.uuid().map((u) => u.replace('-', '')),
          fc.uuid().map((u) => `{${u}}`),
          fc.uuid().map((u) => `urn:uuid:${u}`),
          fc.uuid().map((u) => `${u.slice(0, -1)}g`),
          failing(fc, (s) => UUID.test(s), ['', '123e4567-e89b-12d3-a456-42661417400', '123e4567e89b12d3a456426614174000']),
        ),
    },
  },

  credit_card: {
    types: ['text'],
    params: [],
    doc: 'A payment card number: 13 to 19 digits, single spaces or dashes allowed between them, passing the Luhn checksum.',
    build: () => textCheck(isCardNumber),
    message: () => 'must be a valid card number',
    schema: () => ({ pattern: CARD.source }),
    arbitraries: {
      accepts: (fc) => cards(fc),
      rejects: (fc) => wrongCards(fc),
    },
  },

  ip: {
    types: ['text'],
    params: [],
    doc: 'An IPv4 address (dotted quad, no leading zeros) or an IPv6 address (without a zone id).',
    build: () => textCheck(isIp),
    message: () => 'must be a valid IP address',
    schema: () => ({ anyOf: [{ format: 'ipv4' }, { format: 'ipv6' }] }),
    arbitraries: {
      accepts: (fc) => fc.oneof(fc.ipV4(), fc.ipV6()),
      rejects: (fc) => failing(fc, isIp, ['', '256.1.1.1', '1.1.1', '01.1.1.1', '1.1.1.1.1', ':::', '1::1::1', 'fe80::1%eth0', 'localhost', ' 1.1.1.1']),
    },
  },

  ipv4: {
    types: ['text'],
    params: [],
    doc: 'An IPv4 address in dotted-quad form, each part 0-255 without leading zeros.',
    build: () => textCheck((s) => isIPv4(s)),
    message: () => 'must be a valid IPv4 address',
    schema: () => ({ format: 'ipv4' }),
    arbitraries: {
      accepts: (fc) => fc.ipV4(),
      rejects: (fc) =>
        fc.oneof(
          fc.ipV6(),
          failing(fc, (s) => isIPv4(s), ['', '256.1.1.1', '1.1.1', '01.1.1.1', '1.1.1.1.1', '1.1.1.1 ', '::1']),
        ),
    },
  },

  ipv6: {
    types: ['text'],
    params: [],
    doc: 'An IPv6 address (RFC 4291 text forms, :: compression and embedded IPv4 included; no zone id).',
    build: () => textCheck(isIpv6),
    message: () => 'must be a valid IPv6 address',
    schema: () => ({ format: 'ipv6' }),
    arbitraries: {
      accepts: (fc) => fc.ipV6(),
      rejects: (fc) => fc.oneof(fc.ipV4(), failing(fc, isIpv6, ['', ':::', '1::1::1', '12345::', 'fe80::1%eth0', 'g::1', '1:2:3:4:5:6:7:8:9'])),
    },
  },

  hostname: {
    types: ['text'],
    params: [],
    doc: `A host name (RFC 1123): dot-separated labels of letters, digits and inner hyphens, each 1-63 characters, at most ${MAX_HOSTNAME_LENGTH} in all; one final dot allowed.`,
    build: () => textCheck(isHostname),
    message: () => 'must be a valid hostname',
    schema: () => ({ format: 'hostname' }),
    arbitraries: {
      accepts: (fc) =>
        fc.oneof(
          domain(fc),
          label(fc),
          domain(fc).map((d) => `${d}.`),
          fc.domain().filter(isHostname),
        ),
      rejects: (fc) =>
        failing(fc, isHostname, [
          '',
          '-a.com',
          'a-.com',
          'a..com',
          'a_b.com',
          '.',
          'a.com..',
          `${'a'.repeat(64)}.com`,
          'exa mple.com',
          'ä.com',
          `${`${'a'.repeat(63)}.`.repeat(4)}aa`,
        ]),
    },
  },
};
