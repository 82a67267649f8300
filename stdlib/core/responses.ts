/**
 * The response helpers (`response.ok(v)`, `response.not_found(msg)`, ...): natives named
 * `response.*` that answer the request and end the handler.
 */
import { RUNTIME, RESPONSE_HELPERS, RvmError, absent, toText, typeName } from '../../plugins/sdk.js';
import type { BodyKind, CallContext, Halt, PluginApi, Value } from '../../plugins/sdk.js';

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

/** A helper's status, from the one table the compiler infers responses with. */
function statusOf(name: string): number {
  return RESPONSE_HELPERS[name]!.status;
}

/** The success helpers and the doc of each. */
const SUCCESS: readonly { name: string; doc: string }[] = [
  { name: 'ok', doc: 'Answers 200 with the value as JSON (null when left out) and ends the handler.' },
  { name: 'created', doc: 'Answers 201 Created with the value as JSON (null when left out) and ends the handler.' },
  { name: 'accepted', doc: 'Answers 202 Accepted with the value as JSON (null when left out) and ends the handler.' },
];

/** The error helpers: each answers with the error body `{"error": message, "code": ...}`. */
const ERRORS: readonly string[] = Object.keys(RESPONSE_HELPERS).filter((name) => RESPONSE_HELPERS[name]!.kind === 'error');

/** Registers the fifteen `response.*` helpers. */
export function registerResponses(rvm: PluginApi): void {
  for (const helper of SUCCESS) {
    const status = statusOf(helper.name);
    rvm.native(`response.${helper.name}`, (ctx, v) => ctx.respond(status, v ?? null, 'json'), {
      params: [{ name: 'value', type: 'any', optional: true }],
      returns: 'never',
      doc: helper.doc,
    });
  }

  const noContent = statusOf('no_content');
  rvm.native('response.no_content', (ctx) => ctx.respond(noContent, null, 'empty'), {
    params: [],
    returns: 'never',
    doc: 'Answers 204 No Content with an empty body and ends the handler.',
  });

  rvm.native('response.redirect', (ctx, url, status) => redirect(ctx, url, status), {
    params: [
      { name: 'url', type: 'text' },
      // Checked in redirect(): a status that is no redirect status, of whatever type, is invalid_argument.
      { name: 'status', type: 'int', optional: true, selfChecked: true },
    ],
    returns: 'never',
    doc: 'Answers with a Location header set to the URL and an empty body; status is 302 by default and must be 301, 302, 303, 307 or 308 (else invalid_argument); a URL with CR, LF or other control characters is an invalid_header error; spaces and non-ASCII characters are percent-encoded.',
  });

  for (const name of ERRORS) {
    const status = statusOf(name);
    rvm.native(`response.${name}`, (ctx, message) => ctx.fail(status, absent(message) ? undefined : toText(message)), {
      // Another value is sent in its text form.
      params: [{ name: 'message', type: 'text', optional: true, selfChecked: true }],
      returns: 'never',
      doc: `Answers ${status} with the error body {"error": message, "code": ...} (the status's standard message and code, e.g. 'Not found' / not_found, when left out) and ends the handler.`,
    });
  }

  rvm.native(
    'response.json',
    (ctx, status, v) => {
      if (typeof status !== 'number' || !Number.isInteger(status) || status < MIN_JSON_STATUS || status > MAX_JSON_STATUS) {
        throw new RvmError(
          `response.json() expects a status between ${MIN_JSON_STATUS} and ${MAX_JSON_STATUS}, got ${describe(status)}`,
          RUNTIME.invalid_argument,
        );
      }
      return ctx.respond(status, v ?? null, 'json');
    },
    {
      params: [
        // Checked below: a status out of range, of whatever type, is invalid_argument.
        { name: 'status', type: 'int', selfChecked: true },
        { name: 'value', type: 'any' },
      ],
      returns: 'never',
      doc: `Answers with the given status (an int from ${MIN_JSON_STATUS} to ${MAX_JSON_STATUS}, else invalid_argument) and the value as JSON, and ends the handler.`,
    },
  );

  const textStatus = statusOf('text');
  rvm.native('response.text', (ctx, s) => body(ctx, textStatus, s, 'text'), {
    // Another value is sent in its text form.
    params: [{ name: 's', type: 'text', selfChecked: true }],
    returns: 'never',
    doc: 'Answers 200 with the text (any other value in its text form) as text/plain; charset=utf-8, and ends the handler.',
  });

  const htmlStatus = statusOf('html');
  rvm.native('response.html', (ctx, s) => body(ctx, htmlStatus, s, 'html'), {
    // Another value is sent in its text form.
    params: [{ name: 's', type: 'text', selfChecked: true }],
    returns: 'never',
    doc: 'Answers 200 with the text as text/html; charset=utf-8 (it is sent as written, not escaped), and ends the handler.',
  });
}

function body(ctx: CallContext, status: number, s: Value | undefined, kind: BodyKind): Halt {
  return ctx.respond(status, toText(s ?? null), kind);
}

function redirect(ctx: CallContext, url: string, status: Value | undefined): Halt {
  const code = absent(status) ? statusOf('redirect') : status;
  if (typeof code !== 'number' || !REDIRECT_STATUSES.has(code)) {
    throw new RvmError(`response.redirect() expects status 301, 302, 303, 307 or 308, got ${describe(code)}`, RUNTIME.invalid_argument);
  }
  if (URL_CONTROL.test(url)) throw new RvmError('response.redirect() refuses a URL with a line break or control character', RUNTIME.invalid_header);
  ctx.response.setHeader(
    'location',
    url.replace(URL_NEEDS_ENCODING, (run) => encodeURIComponent(run)),
  );
  return ctx.respond(code, null, 'empty');
}

function describe(v: Value | undefined): string {
  return typeof v === 'number' ? String(v) : typeName(v);
}
