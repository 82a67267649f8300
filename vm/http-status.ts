/**
 * The one table of the HTTP statuses rvm names: the reason phrase (RFC 9110), the `response.*`
 * helper that answers it, and the error code an error status answers with when none is given.
 * (408 and 431 name no default code: only the server answers them, with its own codes, and
 * `fail 408` keeps answering `http_408`.) The runtime's default error bodies, the compiler's response inference and the reference page's
 * reason phrases (`stdlib/reference/assets/statuses.js`, generated from this table) all read it.
 */
import { HTTP, type HttpCode } from './errors.js';

/** One status: its reason phrase, the helper answering it, the default error code (error statuses). */
export interface StatusEntry {
  readonly status: number;
  readonly reason: string;
  readonly helper?: string;
  readonly error?: HttpCode;
}

/** The statuses rvm names, ascending. */
export const STATUSES: readonly StatusEntry[] = [
  { status: 200, reason: 'OK', helper: 'ok' },
  { status: 201, reason: 'Created', helper: 'created' },
  { status: 202, reason: 'Accepted', helper: 'accepted' },
  { status: 204, reason: 'No Content', helper: 'no_content' },
  { status: 301, reason: 'Moved Permanently' },
  { status: 302, reason: 'Found', helper: 'redirect' },
  { status: 303, reason: 'See Other' },
  { status: 304, reason: 'Not Modified' },
  { status: 307, reason: 'Temporary Redirect' },
  { status: 308, reason: 'Permanent Redirect' },
  { status: 400, reason: 'Bad Request', helper: 'bad_request', error: 'bad_request' },
  { status: 401, reason: 'Unauthorized', helper: 'unauthorized', error: 'unauthorized' },
  { status: 403, reason: 'Forbidden', helper: 'forbidden', error: 'forbidden' },
  { status: 404, reason: 'Not Found', helper: 'not_found', error: 'not_found' },
  { status: 405, reason: 'Method Not Allowed', error: 'method_not_allowed' },
  { status: 408, reason: 'Request Timeout' },
  { status: 409, reason: 'Conflict', helper: 'conflict', error: 'conflict' },
  { status: 410, reason: 'Gone', error: 'gone' },
  { status: 413, reason: 'Content Too Large', error: 'payload_too_large' },
  { status: 415, reason: 'Unsupported Media Type', error: 'unsupported_media_type' },
  { status: 422, reason: 'Unprocessable Content', helper: 'unprocessable', error: 'unprocessable' },
  { status: 429, reason: 'Too Many Requests', helper: 'too_many_requests', error: 'too_many_requests' },
  { status: 431, reason: 'Request Header Fields Too Large' },
  { status: 500, reason: 'Internal Server Error', error: 'internal_error' },
  { status: 503, reason: 'Service Unavailable', error: 'service_unavailable' },
];

const BY_STATUS: ReadonlyMap<number, StatusEntry> = new Map(STATUSES.map((s) => [s.status, s]));

/** The reason phrase of a status, or '' for one rvm does not name. */
export function reasonPhrase(status: number): string {
  return BY_STATUS.get(status)?.reason ?? '';
}

/** The machine code for an error status when none is given: `forbidden` for 403, else `http_<status>`. */
export function defaultErrorCode(status: number): string {
  return BY_STATUS.get(status)?.error ?? `http_${status}`;
}

/** The human message for an error status when none is given. */
export function defaultErrorMessage(status: number): string {
  const code = BY_STATUS.get(status)?.error;
  return code !== undefined ? HTTP[code].message : status >= 500 ? 'Server error' : 'Request failed';
}

/** The status a `response.*` helper answers with; throws for a name the table does not hold. */
export function helperStatus(helper: string): number {
  const entry = STATUSES.find((s) => s.helper === helper);
  if (entry === undefined) throw new Error(`no status for response helper '${helper}'`);
  return entry.status;
}

/** The helpers of the table with their statuses, in status order. */
export function statusHelpers(): { helper: string; status: number }[] {
  return STATUSES.filter((s) => s.helper !== undefined).map((s) => ({ helper: s.helper!, status: s.status }));
}
