/**
 * The language's answering statements, `response { }` and `fail`, as the runtime builds their
 * answer: the machine hands over the values the program computed, and the host checks them
 * against HTTP (fields, status ranges, headers) before it answers.
 */
import type { CallContext, Halt } from '../host/context.js';
import { RUNTIME } from '../errors.js';
import { RESPONSE_FIELDS } from '../lang.js';
import { HostObject, RvmError, getField, toText, type Value, type ValueObject } from '../values.js';

const RESPONSE_FIELD_SET: ReadonlySet<string> = new Set(RESPONSE_FIELDS);

/** The `response { status json text html headers }` statement: checks its fields and answers. */
export function respondStatement(ctx: CallContext, fields: Value): Halt {
  const f = fields as ValueObject;
  for (const key of Object.keys(f)) {
    if (!RESPONSE_FIELD_SET.has(key)) throw new RvmError(`unknown response field '${key}'`, RUNTIME.invalid_argument);
  }
  const status = f.status ?? 200;
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 100 || status > 599) {
    throw new RvmError(`response status must be an int between 100 and 599, got ${toText(status)}`, RUNTIME.invalid_status);
  }
  const headers = f.headers ?? null;
  if (headers !== null) {
    if (typeof headers !== 'object' || Array.isArray(headers)) throw new RvmError('response headers must be an object', RUNTIME.type_error);
    const names = headers instanceof HostObject ? headers.keys() : Object.keys(headers);
    for (const name of names) ctx.response.setHeader(name, toText(getField(headers, name)));
  }
  if (f.text !== undefined) return ctx.respond(status, toText(f.text), 'text');
  if (f.html !== undefined) return ctx.respond(status, toText(f.html), 'html');
  if (f.json !== undefined) return ctx.respond(status, f.json, 'json');
  return ctx.respond(status, null, status === 204 || status === 304 ? 'empty' : 'json');
}

/** The `fail` statement: a status 400–599 and an optional message (else the status's own). */
export function failStatement(ctx: CallContext, status: Value, message: Value): Halt {
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 400 || status > 599) {
    throw new RvmError(`fail needs a status between 400 and 599, got ${toText(status)}`, RUNTIME.invalid_status);
  }
  return ctx.fail(status, message === null ? undefined : toText(message));
}
