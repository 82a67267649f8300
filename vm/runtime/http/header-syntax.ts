/** What an HTTP header name and value may hold (RFC 9110 §5.1, §5.5), for headers rvm sends. */

/** RFC 9110 token: the only characters a header name may contain. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/**
 * What Node will write in a header value: tab, visible ASCII, Latin-1. CR/LF would split the
 * header block (header injection); anything else makes Node throw when the message is sent.
 */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** True when `name` is an HTTP token. */
export function isHeaderName(name: string): boolean {
  return HEADER_NAME.test(name);
}

/** True when `value` can be sent as a header value as it is. */
export function isHeaderValue(value: string): boolean {
  return HEADER_VALUE.test(value);
}
