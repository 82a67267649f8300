/**
 * set_cors_headers(options): CORS for the current request. It reflects the request's Origin
 * only when the options allow it, always adds `Vary: Origin`, and answers a preflight itself.
 */
import { RUNTIME, RvmError, normalizeOrigin, typeName } from '../../plugins/sdk.js';
import type { CallContext, Halt, PluginApi, Value, ValueObject } from '../../plugins/sdk.js';
import { absent, expectBool, expectInt, isPlainObject } from '../../plugins/sdk.js';

/**
 * Largest Access-Control-Max-Age accepted: Firefox caps preflight caching at 24 hours (Chromium
 * at 2), so a larger value would only suggest a cache no browser keeps.
 */
export const MAX_CORS_MAX_AGE = 86_400;

/** RFC 9110 token: methods and header names. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** A requested header list as browsers send it: tokens separated by commas. */
const HEADER_LIST = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+(?:[ \t]*,[ \t]*[!#$%&'*+\-.^_`|~0-9A-Za-z]+)*$/;
const OPTION_NAMES = ['origins', 'methods', 'headers', 'credentials', 'max_age', 'expose'];

/** Checked options of one set_cors_headers call. */
export interface CorsOptions {
  /** Normalised allowed origins. */
  origins: Set<string>;
  /** `'*'` was listed: any origin, without credentials. */
  anyOrigin: boolean;
  methods: string[];
  /** Allowed request headers; null reflects what the preflight asks for. */
  headers: string[] | null;
  credentials: boolean;
  maxAge: number | null;
  expose: string[];
}

/** Checks the options object; throws type_error or invalid_argument naming the option. */
export function parseCorsOptions(value: Value | undefined): CorsOptions {
  if (!isPlainObject(value)) throw new RvmError(`set_cors_headers() expects an options object, got ${typeName(value)}`, RUNTIME.type_error);
  for (const key of Object.keys(value)) {
    if (!OPTION_NAMES.includes(key))
      throw new RvmError(`set_cors_headers() has no option '${key}' (options: ${OPTION_NAMES.join(', ')})`, RUNTIME.invalid_argument);
  }
  const origins = new Set<string>();
  let anyOrigin = false;
  for (const entry of textList(value, 'origins', true)) {
    if (entry === '*') {
      anyOrigin = true;
      continue;
    }
    const origin = normalizeOrigin(entry);
    if (origin === null)
      throw new RvmError(`set_cors_headers(): ${JSON.stringify(entry)} is not an origin like 'https://app.example.com' or '*'`, RUNTIME.invalid_argument);
    origins.add(origin);
  }
  const credentials = absent(value.credentials) ? false : expectBool('set_cors_headers', 'credentials', value.credentials);
  if (anyOrigin && credentials) {
    // The Fetch standard forbids `*` with credentials; reflecting every origin instead would hand any site the user's session.
    throw new RvmError("set_cors_headers(): origins '*' cannot be combined with credentials: true; list the origins", RUNTIME.invalid_argument);
  }
  let maxAge: number | null = null;
  if (!absent(value.max_age)) {
    maxAge = expectInt('set_cors_headers', 'max_age', value.max_age);
    if (maxAge < 0 || maxAge > MAX_CORS_MAX_AGE)
      throw new RvmError(`set_cors_headers(): max_age must be 0 to ${MAX_CORS_MAX_AGE} seconds, got ${maxAge}`, RUNTIME.invalid_argument);
  }
  return {
    origins,
    anyOrigin,
    methods: tokens(value, 'methods', true).map((m) => m.toUpperCase()),
    headers: absent(value.headers) ? null : tokens(value, 'headers', false),
    credentials,
    maxAge,
    expose: tokens(value, 'expose', false),
  };
}

/** The value for Access-Control-Allow-Origin, or null when `origin` is not allowed. */
export function allowedOrigin(options: CorsOptions, origin: string | undefined): string | null {
  if (origin === undefined) return null;
  if (options.anyOrigin) return '*';
  const normalized = normalizeOrigin(origin);
  return normalized !== null && options.origins.has(normalized) ? origin : null;
}

/**
 * Applies CORS to the current request. A preflight (`OPTIONS` with
 * `Access-Control-Request-Method`) is answered here with 204, and HALT is returned; otherwise
 * the headers are set and null is returned.
 */
export function applyCors(ctx: CallContext, options: CorsOptions): Halt | null {
  const response = ctx.response;
  const headers = ctx.request.headers;
  addVary(ctx, 'Origin');
  const originHeader = headers.origin;
  const allowed = allowedOrigin(options, typeof originHeader === 'string' ? originHeader : undefined);
  const preflight = ctx.request.method === 'OPTIONS' && headers['access-control-request-method'] !== undefined;
  if (allowed !== null) {
    response.setHeader('access-control-allow-origin', allowed);
    if (options.credentials) response.setHeader('access-control-allow-credentials', 'true');
  }
  if (!preflight) {
    if (allowed !== null && options.expose.length > 0) response.setHeader('access-control-expose-headers', options.expose.join(', '));
    return null;
  }
  if (allowed !== null) {
    response.setHeader('access-control-allow-methods', options.methods.join(', '));
    const requested = headers['access-control-request-headers'];
    if (options.headers !== null) {
      if (options.headers.length > 0) response.setHeader('access-control-allow-headers', options.headers.join(', '));
    } else {
      // Like the cors packages of Express and Fastify: without a list, the origin (already
      // trusted) may send the headers it asks for; the answer then depends on them.
      addVary(ctx, 'Access-Control-Request-Headers');
      if (typeof requested === 'string' && HEADER_LIST.test(requested.trim())) response.setHeader('access-control-allow-headers', requested.trim());
    }
    if (options.maxAge !== null) response.setHeader('access-control-max-age', String(options.maxAge));
  }
  // A refused origin also gets its answer here, without CORS headers: the browser then blocks the request.
  return ctx.respond(204, null, 'empty');
}

/** Registers set_cors_headers. */
export function registerCors(rvm: PluginApi): void {
  rvm.native('set_cors_headers', (ctx, options) => applyCors(ctx, parseCorsOptions(options)), {
    params: [
      {
        name: 'options',
        type: 'object',
        doc: "{origins: ['https://app.example.com'], methods: ['GET', 'POST'], headers?: [...], credentials?: bool, max_age?: seconds, expose?: [...]}",
      },
    ],
    returns: 'null',
    doc: "CORS: when the request's Origin is one of origins (or origins has '*' and credentials is not set), sets Access-Control-Allow-Origin to it (Allow-Credentials, Expose-Headers as asked); always adds Vary: Origin. A preflight (OPTIONS with Access-Control-Request-Method) is answered at once with 204 and Access-Control-Allow-Methods/Headers/Max-Age (for an allowed origin), ending the request: call it in a _middleware.rvm so preflights reach it. Without headers, the headers the preflight requests are allowed. '*' with credentials, a malformed origin, an unknown option or max_age over 86400 is an invalid_argument error.",
  });
}

/** Adds `field` to the Vary header unless it is already there. */
function addVary(ctx: CallContext, field: string): void {
  const current = ctx.response.getHeader('vary');
  const text = current === undefined ? '' : Array.isArray(current) ? current.join(', ') : current;
  const fields = text.split(',').map((f) => f.trim().toLowerCase());
  if (fields.includes('*') || fields.includes(field.toLowerCase())) return;
  ctx.response.setHeader('vary', text.trim() === '' ? field : `${text}, ${field}`);
}

function textList(options: ValueObject, key: string, required: boolean): string[] {
  const value = options[key];
  if (absent(value)) {
    if (required) throw new RvmError(`set_cors_headers() needs the option ${key} (a list of text)`, RUNTIME.invalid_argument);
    return [];
  }
  if (!Array.isArray(value) || !value.every((v): v is string => typeof v === 'string')) {
    throw new RvmError(`set_cors_headers() expects ${key} to be a list of text, got ${typeName(value)}`, RUNTIME.type_error);
  }
  return value;
}

function tokens(options: ValueObject, key: string, required: boolean): string[] {
  const list = textList(options, key, required);
  for (const item of list) {
    if (!TOKEN.test(item))
      throw new RvmError(
        `set_cors_headers(): ${JSON.stringify(item)} in ${key} is not a valid ${key === 'methods' ? 'method' : 'header name'}`,
        RUNTIME.invalid_argument,
      );
  }
  return list;
}
