/**
 * The response helpers (`response.ok(v)`, `response.not_found(msg)`, ...): natives named
 * `response.*` that answer the request and end the handler.
 */
import { RvmError, toText, typeName } from '../../plugins/sdk.js';
import type { BodyKind, CallContext, Halt, PluginApi, Value } from '../../plugins/sdk.js';
import { absent } from './args.js';

/** Statuses `response.redirect` accepts: the redirections that carry a Location. */
const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);
/**
 * Range of `response.json(status, v)`. 1xx are interim responses Node cannot send as the final
 * answer, so the lowest final status is 200.
 */
const MIN_JSON_STATUS = 200;
const MAX_JSON_STATUS = 599;
/** Control characters would split the Location header (CR/LF) or make it unsendable. */
const URL_CONTROL = /[\x00-\x1f\x7f]/;
/** Spaces and non-ASCII are sent percent-encoded (UTF-8), as browsers do. */
const URL_NEEDS_ENCODING = /[^\x21-\x7e]+/g;

/** A success helper: status, body kind and the doc of its value. */
interface SuccessHelper {
  name: string;
  status: number;
  doc: string;
}

const SUCCESS: readonly SuccessHelper[] = [
  { name: 'ok', status: 200, doc: 'Answers 200 with the value as JSON (null when left out) and ends the handler.' },
  { name: 'created', status: 201, doc: 'Answers 201 Created with the value as JSON (null when left out) and ends the handler.' },
  { name: 'accepted', status: 202, doc: 'Answers 202 Accepted with the value as JSON (null when left out) and ends the handler.' },
];

/** The error helpers: each answers with the error body `{"error": message, "code": ...}`. */
const ERRORS: readonly { name: string; status: number }[] = [
  { name: 'bad_request', status: 400 },
  { name: 'unauthorized', status: 401 },
  { name: 'forbidden', status: 403 },
  { name: 'not_found', status: 404 },
  { name: 'conflict', status: 409 },
  { name: 'unprocessable', status: 422 },
  { name: 'too_many_requests', status: 429 },
];

/** Registers the fifteen `response.*` helpers. */
export function registerResponses(rvm: PluginApi): void {
  for (const helper of SUCCESS) {
    rvm.native(`response.${helper.name}`, (ctx, v) => ctx.respond(helper.status, v ?? null, 'json'), {
      params: [{ name: 'value', type: 'any', optional: true }],
      returns: 'never',
      doc: helper.doc,
    });
  }

  rvm.native('response.no_content', (ctx) => ctx.respond(204, null, 'empty'), {
    params: [],
    returns: 'never',
    doc: 'Answers 204 No Content with an empty body and ends the handler.',
  });

  rvm.native('response.redirect', (ctx, url, status) => redirect(ctx, url, status), {
    params: [
      { name: 'url', type: 'text' },
      { name: 'status', type: 'int', optional: true },
    ],
    returns: 'never',
    doc: 'Answers with a Location header set to the URL and an empty body; status is 302 by default and must be 301, 302, 303, 307 or 308 (else invalid_argument); a URL with CR, LF or other control characters is an invalid_header error; spaces and non-ASCII characters are percent-encoded.',
  });

  for (const helper of ERRORS) {
    rvm.native(`response.${helper.name}`, (ctx, message) => ctx.fail(helper.status, absent(message) ? undefined : toText(message)), {
      params: [{ name: 'message', type: 'text', optional: true }],
      returns: 'never',
      doc: `Answers ${helper.status} with the error body {"error": message, "code": ...} (the status's standard message and code, e.g. 'Not found' / not_found, when left out) and ends the handler.`,
    });
  }

  rvm.native(
    'response.json',
    (ctx, status, v) => {
      if (typeof status !== 'number' || !Number.isInteger(status) || status < MIN_JSON_STATUS || status > MAX_JSON_STATUS) {
        throw new RvmError(`response.json() expects a status between ${MIN_JSON_STATUS} and ${MAX_JSON_STATUS}, got ${describe(status)}`, 'invalid_argument');
      }
      return ctx.respond(status, v ?? null, 'json');
    },
    {
      params: [
        { name: 'status', type: 'int' },
        { name: 'value', type: 'any' },
      ],
      returns: 'never',
      doc: `Answers with the given status (an int from ${MIN_JSON_STATUS} to ${MAX_JSON_STATUS}, else invalid_argument) and the value as JSON, and ends the handler.`,
    },
  );

  rvm.native('response.text', (ctx, s) => body(ctx, s, 'text'), {
    params: [{ name: 's', type: 'text' }],
    returns: 'never',
    doc: 'Answers 200 with the text (any other value in its text form) as text/plain; charset=utf-8, and ends the handler.',
  });

  rvm.native('response.html', (ctx, s) => body(ctx, s, 'html'), {
    params: [{ name: 's', type: 'text' }],
    returns: 'never',
    doc: 'Answers 200 with the text as text/html; charset=utf-8 (it is sent as written, not escaped), and ends the handler.',
  });
}

function body(ctx: CallContext, s: Value | undefined, kind: BodyKind): Halt {
  return ctx.respond(200, toText(s ?? null), kind);
}

function redirect(ctx: CallContext, url: Value | undefined, status: Value | undefined): Halt {
  if (typeof url !== 'string') throw new RvmError(`response.redirect() expects url to be text, got ${typeName(url)}`, 'type_error');
  const code = absent(status) ? 302 : status;
  if (typeof code !== 'number' || !REDIRECT_STATUSES.has(code)) {
    throw new RvmError(`response.redirect() expects status 301, 302, 303, 307 or 308, got ${describe(code)}`, 'invalid_argument');
  }
  if (URL_CONTROL.test(url)) throw new RvmError('response.redirect() refuses a URL with a line break or control character', 'invalid_header');
  ctx.response.setHeader('location', url.replace(URL_NEEDS_ENCODING, (run) => encodeURIComponent(run)));
  return ctx.respond(code, null, 'empty');
}

function describe(v: Value | undefined): string {
  return typeof v === 'number' ? String(v) : typeName(v);
}
