/**
 * The `responses` of one operation: what the handler can answer (inferred from its code), plus
 * every error its guards, its validation and the body parser can end the request with — each
 * status once, error bodies as the shared `Error`/`ValidationError` with their codes listed.
 */
import { STATUS_CODES } from 'node:http';
import { HTTP, defaultErrorCode, type ErrorResponseSpec, type JsonSchema, type RouteInfo } from '../../plugins/sdk.js';
import { ERROR_REF, VALIDATION_ERROR_REF, errorBodyCode, isValidationBody, responseSchema } from './schemas.js';

/** What reading a request body can fail with before validation runs. */
const BODY_ERRORS: readonly ErrorResponseSpec[] = (
  [
    [HTTP.bad_request, 'The body could not be read (bad UTF-8, a malformed form or multipart body, or it ended early).'],
    [HTTP.invalid_json, 'The JSON body is malformed or nests too deeply.'],
    [HTTP.payload_too_large, 'The body, or an uploaded file, is larger than the limit.'],
    [HTTP.unsupported_media_type, 'The content type or charset is not one the route accepts.'],
  ] as const
).map(([entry, description]) => ({ status: entry.status, code: entry.code, description }));

/** Methods whose requests carry a body (RFC 9110 gives GET, HEAD and OPTIONS bodies no meaning). */
const BODY_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The name under `components/responses` of what any request can be refused with before its route runs. */
export const REQUEST_REFUSED = 'RequestRefused';

/**
 * What the server answers any request with before a route runs (so every operation lists it, as
 * the `4XX` range): a malformed request or path, headers too large, headers sent too slowly.
 */
export function requestRefusedResponse(): Record<string, unknown> {
  const refusals = [HTTP.bad_request, HTTP.request_timeout, HTTP.headers_too_large];
  return {
    description: `The request was refused before any route ran: ${refusals.map((e) => `${e.status} \`${e.code}\``).join(', ')} (a malformed request or path, headers that arrive too slowly, headers too large).`,
    content: { 'application/json': { schema: errorSchema(refusals.map((e) => e.code)) } },
  };
}

/** What the headers guards list mean, for the reference; others get a generic description. */
const HEADER_DOCS: Readonly<Record<string, { description: string; schema: JsonSchema }>> = {
  'WWW-Authenticate': { description: 'The authentication scheme to use (RFC 9110), e.g. `Bearer`.', schema: { type: 'string' } },
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 0 } },
  'RateLimit-Limit': { description: 'Requests allowed in the window.', schema: { type: 'integer', minimum: 0 } },
  'RateLimit-Remaining': { description: 'Requests left in the current window.', schema: { type: 'integer', minimum: 0 } },
  'RateLimit-Reset': { description: 'Seconds until the window frees a request.', schema: { type: 'integer', minimum: 0 } },
  'RateLimit-Policy': { description: 'The limit and window, as the IETF RateLimit draft writes them (`10;w=60`).', schema: { type: 'string' } },
  RateLimit: { description: 'Remaining requests and reset, as the IETF RateLimit draft writes them.', schema: { type: 'string' } },
  Allow: { description: 'The methods the route allows.', schema: { type: 'string' } },
  Location: { description: 'Where the redirect points.', schema: { type: 'string' } },
  'Set-Cookie': { description: 'A cookie the route sets (or deletes), named in the description of the native that sets it.', schema: { type: 'string' } },
};

/** Everything known about one status before it is written out. */
interface StatusGroup {
  /** Who answers it, with the media type they answer in (null: no body). */
  lines: { text: string; contentType: string | null }[];
  /** Non-error bodies by content type (inference already merged equal ones). */
  content: Map<string, JsonSchema[]>;
  /** Error codes, in the order first seen. */
  errors: Set<string>;
  /** `code: description` of guard and body errors → who answers it (one line for several guards). */
  errorLines: Map<string, string[]>;
  validation: boolean;
  headers: Set<string>;
}

/**
 * The OpenAPI `responses` object of a route, statuses in ascending order; records of the types
 * in `components` (type name → schema name) are `$ref`s to their schemas.
 */
export function operationResponses(route: RouteInfo, components: ReadonlyMap<string, string> = new Map()): Record<string, unknown> {
  const groups = new Map<number, StatusGroup>();
  const group = (status: number): StatusGroup => {
    let g = groups.get(status);
    if (g === undefined)
      groups.set(status, (g = { lines: [], content: new Map(), errors: new Set(), errorLines: new Map(), validation: false, headers: new Set() }));
    return g;
  };

  // The middleware answers first, outermost first; then the route's own answers.
  const answers = [
    ...(route.middleware ?? []).flatMap((m) => m.responses.map((r) => ({ r, where: `${m.file}, line ${r.line}` }))),
    ...route.responses.map((r) => ({ r, where: `line ${r.line}` })),
  ];
  for (const { r, where } of answers) {
    const g = group(r.status);
    g.lines.push({
      text:
        r.source === 'validate'
          ? `a field fails validation (\`validate\`/\`query\`, ${where}): every failing field is listed in \`details\``
          : `\`${r.source}\` (${where})`,
      contentType: r.contentType,
    });
    if (r.source === 'response.redirect') g.headers.add('Location');
    if (r.contentType === null) continue;
    const members = Array.isArray(r.schema.anyOf) && Object.keys(r.schema).length === 1 ? (r.schema.anyOf as JsonSchema[]) : [r.schema];
    for (const schema of members) {
      if (r.contentType === 'application/json' && isValidationBody(schema)) {
        g.validation = true;
        continue;
      }
      const code = r.contentType === 'application/json' ? errorBodyCode(schema) : undefined;
      if (code !== undefined) {
        g.errors.add(code ?? defaultErrorCode(r.status));
        continue;
      }
      const byType = g.content.get(r.contentType);
      if (byType === undefined) g.content.set(r.contentType, [responseSchema(schema, components)]);
      else byType.push(responseSchema(schema, components));
    }
  }

  for (const guard of route.guards) {
    for (const spec of guard.responses) {
      // An app guard's own descriptions only say where it fails; its doc comment says why.
      const described = guard.source === 'app' && guard.doc !== null ? { ...spec, description: `${guard.doc} (${spec.description})` } : spec;
      addError(group(spec.status), described, `guard \`${guard.name}\``);
    }
  }
  // Every route reads the body a request sends (after its guards), validated or not; methods that
  // carry one list what reading it fails with (a GET's body has no meaning in HTTP: not offered).
  if (route.body !== null || BODY_METHODS.has(route.method)) for (const spec of BODY_ERRORS) addError(group(spec.status), spec, 'body');
  const middlewareNatives = (route.middleware ?? []).flatMap((m) => m.natives.map((n) => ({ ...n, where: ` in ${m.file}` })));
  for (const native of [...middlewareNatives, ...(route.natives ?? []).map((n) => ({ ...n, where: '' }))]) {
    for (const spec of native.responses) addError(group(spec.status), spec, `\`${native.name}()\`${native.where}`);
    // Headers a native adds go out with whatever the handler answers, never with an error body.
    for (const [status, g] of groups) if (status < 400) for (const header of native.headers) g.headers.add(header);
  }

  const out: Record<string, unknown> = {};
  const statuses = [...groups.keys()].sort((a, b) => a - b);
  for (const status of statuses) out[String(status)] = renderGroup(status, groups.get(status)!);
  // A route that only redirects answers, for a client that follows, whatever the target answers.
  const redirectsOnly = !statuses.some((s) => s >= 200 && s < 300) && statuses.some((s) => s >= 300 && s < 400);
  if (statuses.length === 0) out.default = { description: 'Any response.' };
  else if (redirectsOnly) out.default = { description: 'Whatever the redirect target answers, for a client that follows it.' };
  out['4XX'] = { $ref: `#/components/responses/${REQUEST_REFUSED}` };
  return out;
}

function addError(g: StatusGroup, spec: ErrorResponseSpec, who: string): void {
  const line = `\`${spec.code}\`: ${spec.description}`;
  const whos = g.errorLines.get(line);
  if (whos === undefined) g.errorLines.set(line, [who]);
  else whos.push(who);
  g.errors.add(spec.code);
  for (const header of spec.headers ?? []) g.headers.add(header);
}

/** One status as an OpenAPI Response object. */
function renderGroup(status: number, g: StatusGroup): Record<string, unknown> {
  const reason = STATUS_CODES[status] ?? 'Response';
  // Where helpers answer the status in different media types, each line says which is its.
  const mixed = new Set(g.lines.map((l) => l.contentType).filter((t) => t !== null)).size > 1;
  const lines = [...new Set(g.lines.map((l) => (mixed && l.contentType !== null ? `${l.text}: \`${l.contentType}\`` : l.text)))];
  for (const [line, whos] of g.errorLines) lines.push(`${whos.join(', ')} → ${line}`);
  const response: Record<string, unknown> = { description: lines.length > 0 ? `${reason}\n\n${lines.map((l) => `- ${l}`).join('\n')}` : reason };
  if (g.headers.size > 0) {
    const headers: Record<string, unknown> = {};
    for (const name of [...g.headers].sort()) {
      const doc = HEADER_DOCS[name] ?? { description: 'Sent with this response.', schema: { type: 'string' } };
      headers[name] = { description: doc.description, schema: { ...doc.schema } };
    }
    response.headers = headers;
  }
  const content: Record<string, unknown> = {};
  for (const [type, schemas] of g.content) {
    if (type === 'application/json') continue;
    content[type] = { schema: oneOrAny(schemas) };
  }
  const json = [...(g.content.get('application/json') ?? [])];
  if (g.errors.size > 0) json.push(errorSchema([...g.errors.keys()]));
  if (g.validation) json.push({ $ref: VALIDATION_ERROR_REF });
  if (json.length > 0) {
    const media: Record<string, unknown> = { schema: oneOrAny(json) };
    content['application/json'] = media;
  }
  if (Object.keys(content).length > 0) response.content = Object.fromEntries(Object.entries(content).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return response;
}

/** The error body restricted to the codes this status can carry. */
function errorSchema(codes: readonly string[]): JsonSchema {
  return { allOf: [{ $ref: ERROR_REF }, { type: 'object', properties: { code: { type: 'string', enum: [...codes] } } }] };
}

function oneOrAny(schemas: JsonSchema[]): JsonSchema {
  return schemas.length === 1 ? schemas[0]! : { anyOf: schemas };
}
