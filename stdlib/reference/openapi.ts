/**
 * The OpenAPI document of a running app, built from the same introspection the server runs on:
 * paths and operations from the routes, parameters and bodies from `query {}`/`validate {}`,
 * responses inferred from the handlers plus the errors of guards and validation, and the
 * `x-rvm-*` extensions the reference page renders from. 3.1 natively; 3.0 as a downgrade.
 */
import { basename } from 'node:path';
import { VALIDATION_ERROR_SCHEMA, type AppIntrospection, type FieldInfo, type GuardInfo, type JsonSchema, type RouteInfo } from '../../plugins/sdk.js';
import { downgradeTo30 } from './downgrade.js';
import { REQUEST_REFUSED, operationResponses, requestRefusedResponse } from './openapi-responses.js';
import { ERROR_SCHEMA, FILE_MEDIA_TYPE, bodySchema, cloneJson, fieldSchema, recordComponentNames, recordTypeSchema } from './schemas.js';

/** The OpenAPI versions the export writes. */
export type OpenApiVersion = '3.1' | '3.0';

export interface OpenApiOptions {
  version: OpenApiVersion;
  /** The `servers[0].url`; `/` (the server the document came from) by default. */
  serverUrl?: string;
}

/** An OpenAPI document as plain JSON data. */
export type OpenApiDocument = Record<string, unknown>;

/** The version string each rendering declares. */
const OPENAPI_31 = '3.1.0';
/** Title when the config names none and there is no folder (a bundle). */
const DEFAULT_TITLE = 'rvm app';
const DEFAULT_VERSION = '0.0.0';
/** The tag of routes at `/` itself (a path segment can never be `/`, so it cannot clash). */
const ROOT_TAG = '/';
/** An `ANY` route answers these methods; GET routes also answer HEAD, which OpenAPI implies. */
const ANY_METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
/** Method order within a path item, as OpenAPI tools list them. */
const METHOD_ORDER = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'];

/** Builds the OpenAPI document of `app` (3.1, or its 3.0 rendering). */
export function buildOpenApi(app: AppIntrospection, options: OpenApiOptions): OpenApiDocument {
  const doc = buildDocument(app, options.serverUrl ?? '/');
  return options.version === '3.0' ? downgradeTo30(doc) : doc;
}

/** The title and version of `info`: `name`/`version` of rvm.config.json, else the folder name and 0.0.0. */
export function appInfo(app: AppIntrospection): { title: string; version: string } {
  const config = app.settings.config;
  const name = typeof config.name === 'string' && config.name.trim() !== '' ? config.name.trim() : null;
  const folder = app.settings.dir !== null ? basename(app.settings.dir) : '';
  const version = typeof config.version === 'string' || typeof config.version === 'number' ? String(config.version) : DEFAULT_VERSION;
  return { title: name ?? (folder !== '' ? folder : DEFAULT_TITLE), version };
}

/** `info.license` from the SPDX identifier under `license` in rvm.config.json (`"MIT"`), if any. */
function licenseOf(app: AppIntrospection): { license?: { name: string; identifier: string } } {
  const license = app.settings.config.license;
  return typeof license === 'string' && license.trim() !== '' ? { license: { name: license.trim(), identifier: license.trim() } } : {};
}

function buildDocument(app: AppIntrospection, serverUrl: string): OpenApiDocument {
  const routes = [...app.routes()].sort(byPathThenMethod);
  const paths: Record<string, Record<string, unknown>> = {};
  const tags = new Map<string, number>();
  const schemes = new Map<string, JsonSchema>();
  const ids = new Set<string>();
  const explicit = new Set(routes.map((r) => `${r.method.toLowerCase()} ${r.openapiPath}`));
  const types = app.types?.() ?? [];
  const components = recordComponentNames(types);

  for (const route of routes) {
    const methods = route.method === 'ANY' ? ANY_METHODS.filter((m) => !explicit.has(`${m} ${route.openapiPath}`)) : [route.method.toLowerCase()];
    const tag = tagOf(route);
    tags.set(tag, (tags.get(tag) ?? 0) + 1);
    const item = (paths[route.openapiPath] ??= {});
    for (const method of methods) item[method] = operation(route, method, tag, ids, components);
  }
  for (const path of Object.keys(paths)) paths[path] = sortMethods(paths[path]!);
  // A guard's scheme (a plugin's own, described) wins over one a middleware was found to ask for under the same name.
  for (const route of routes) for (const m of route.middleware ?? []) for (const s of m.security) schemes.set(s.name, s.scheme);
  for (const route of routes) for (const g of route.guards) for (const s of g.security ?? []) schemes.set(s.name, s.scheme);

  // The routes that hand out each scheme's credential (those calling jwt_create(), for bearerAuth).
  const issuers = new Map<string, string[]>();
  for (const route of routes) {
    for (const name of new Set((route.natives ?? []).flatMap((n) => n.issues))) {
      const list = issuers.get(name) ?? [];
      list.push(`${route.method} ${route.openapiPath}`);
      issuers.set(name, list);
    }
  }

  const { title, version } = appInfo(app);
  const restart = app.restartNeeded?.() ?? [];
  // Said in the description too, so any OpenAPI viewer shows it, not only rvm's page.
  const notice =
    restart.length > 0
      ? `**Restart needed**: ${restart.join(', ')} changed; plugins load once per process, so the server runs their old code until rvm run restarts.\n\n`
      : '';
  return {
    openapi: OPENAPI_31,
    info: {
      title,
      version,
      ...licenseOf(app),
      description: `${notice}Generated by rvm from the routes the server runs: what is documented here is what is served.`,
    },
    servers: [{ url: serverUrl }],
    tags: [...tags].map(([name, count]) => ({ name, description: `${count} route${count === 1 ? '' : 's'} under ${name === ROOT_TAG ? '/' : `/${name}`}` })),
    paths,
    components: {
      schemas: {
        Error: cloneJson(ERROR_SCHEMA),
        ValidationError: cloneJson(VALIDATION_ERROR_SCHEMA),
        ...Object.fromEntries(types.map((t) => [components.get(t.name)!, recordTypeSchema(t)])),
      },
      responses: { [REQUEST_REFUSED]: requestRefusedResponse() },
      securitySchemes: Object.fromEntries(
        [...schemes].sort(([a], [b]) => (a < b ? -1 : 1)).map(([name, scheme]) => [name, describedScheme(scheme, issuers.get(name))]),
      ),
    },
    'x-rvm-generation': app.generation,
    'x-rvm-restart-needed': [...restart],
    'x-rvm-errors': app.errors().map((d) => {
      const out: Record<string, unknown> = { file: d.file, line: d.line, col: d.col, code: d.code, message: d.message };
      if (d.hint !== undefined) out.hint = d.hint;
      if (d.sourceLine !== undefined) out.sourceLine = d.sourceLine;
      return out;
    }),
  };
}

/** One operation of `route` under `method` (an `ANY` route has one per method). */
function operation(route: RouteInfo, method: string, tag: string, ids: Set<string>, components: ReadonlyMap<string, string>): Record<string, unknown> {
  const { summary, description } = docParts(route.doc ?? '');
  const op: Record<string, unknown> = {
    operationId: uniqueId(`${method}_${pathWords(route.openapiPath)}`, ids),
    summary: summary !== '' ? summary : `${route.method} ${route.openapiPath}`,
  };
  if (description !== '') op.description = description;
  op.tags = [tag];
  const parameters = [...pathParameters(route), ...(route.query ?? []).map(queryParameter)];
  if (parameters.length > 0) op.parameters = parameters;
  const body = route.body;
  if (body !== null) op.requestBody = requestBody(body);
  op.responses = operationResponses(route, components);
  // A public operation says so (`security: []`): linters (Redocly's recommended rules) refuse an
  // operation whose access is left unsaid.
  op.security = securityOf(gatesOf(route)) ?? [];
  op['x-rvm-route'] = `${route.method} ${route.openapiPath}`;
  op['x-rvm-source'] = `${route.file}:${route.line}`;
  op['x-rvm-guards'] = route.guards.map(guardExtension);
  op['x-rvm-body-kind'] = body === null ? null : body.some((f) => f.type === 'file') ? 'multipart' : 'json';
  op['x-rvm-csrf'] = route.guards.some((g) => g.name === 'csrf');
  return op;
}

/**
 * A doc comment's first sentence, its lines joined (a comment wraps wherever the line was full,
 * so a line break ends nothing), and the rest. A sentence ends at `.`, `!` or `?` before a space
 * or the end, or at a blank line; `e.g.` and `i.e.` end none.
 */
export function docParts(doc: string): { summary: string; description: string } {
  const text = doc.trim();
  const sentenceEnd = /(?<!\b(?:e\.g|i\.e))[.!?](?=\s|$)|\n\s*\n/g;
  const end = sentenceEnd.exec(text);
  const cut = end === null ? text.length : end[0].startsWith('\n') ? end.index : end.index + 1;
  return {
    summary: text
      .slice(0, cut)
      .replace(/\s*\n\s*/g, ' ')
      .trim(),
    description: text.slice(cut).trim(),
  };
}

/** A copy of `scheme` whose description also names the routes that issue its credential. */
function describedScheme(scheme: JsonSchema, issuedBy: readonly string[] | undefined): JsonSchema {
  const out = cloneJson(scheme);
  if (issuedBy === undefined) return out;
  const routes = issuedBy.map((r) => `\`${r}\``).join(', ');
  out.description = `${typeof out.description === 'string' ? `${out.description} ` : ''}Issued by ${routes}.`;
  return out;
}

/** `/items/{id}` → `items_id`; `/` → `root`. */
function pathWords(path: string): string {
  const words = path
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== '');
  return words.length > 0 ? words.join('_') : 'root';
}

function uniqueId(base: string, ids: Set<string>): string {
  let id = base;
  for (let n = 2; ids.has(id); n++) id = `${base}_${n}`;
  ids.add(id);
  return id;
}

/** The first path segment, grouping routes by path prefix. */
function tagOf(route: RouteInfo): string {
  const first = route.openapiPath.split('/')[1] ?? '';
  return first === '' ? ROOT_TAG : first;
}

function pathParameters(route: RouteInfo): Record<string, unknown>[] {
  const last = route.path.split('/').pop() ?? '';
  const wildcard = last.startsWith('*') ? last.slice(1) : null;
  return route.params.map((name) => {
    const param: Record<string, unknown> = { name, in: 'path', required: true, schema: { type: 'string' } };
    if (name === wildcard) {
      param.description = 'The rest of the path, slashes included.';
      param['x-rvm-wildcard'] = true;
    }
    return param;
  });
}

function queryParameter(field: FieldInfo): Record<string, unknown> {
  const param: Record<string, unknown> = { name: field.name, in: 'query', required: field.required };
  if (field.doc !== null) param.description = field.doc;
  // A list is sent as the key repeated (`?tag=a&tag=b`), which is what form + explode describe.
  if (field.type === 'list') {
    param.style = 'form';
    param.explode = true;
  }
  param.schema = fieldSchema(field);
  return param;
}

/**
 * JSON (strict types) plus an urlencoded form (text coerced), as the server reads any body; with
 * a file field, multipart first, and JSON and the form beside it (without the files) when no
 * file is required, since the server takes those too.
 */
function requestBody(fields: readonly FieldInfo[]): Record<string, unknown> {
  const files = fields.filter((f) => f.type === 'file');
  const content: Record<string, unknown> = {};
  if (files.length > 0) {
    const media: Record<string, unknown> = { schema: bodySchema(fields) };
    const encoding: Record<string, unknown> = {};
    for (const f of files) {
      const type = fileContentType(f);
      if (type !== null) encoding[f.name] = { contentType: type };
    }
    if (Object.keys(encoding).length > 0) media.encoding = encoding;
    content['multipart/form-data'] = media;
  }
  if (!files.some((f) => f.required)) {
    // One schema object under both types: the document is read-only data, and the text repeats it.
    const schema = bodySchema(fields.filter((f) => f.type !== 'file'));
    content['application/json'] = { schema };
    content['application/x-www-form-urlencoded'] = { schema };
  }
  return { required: fields.some((f) => f.required), content };
}

/** The media types a file field accepts, as an encoding `contentType` (comma-separated), or null for any. */
function fileContentType(field: FieldInfo): string | null {
  const schema = field.schema;
  const listed = schema['x-mime-types'];
  if (Array.isArray(listed) && listed.length > 0) return listed.map(String).join(', ');
  const type = schema.contentMediaType;
  return typeof type === 'string' && type !== FILE_MEDIA_TYPE ? type : null;
}

/** What a request passes before the handler: a middleware (always required) or a guard. */
type Gate = Pick<GuardInfo, 'mode' | 'security'>;

/** The route's middleware, outermost first, then its guards. */
function gatesOf(route: RouteInfo): Gate[] {
  return [...(route.middleware ?? []).map((m): Gate => ({ mode: 'required', security: m.security })), ...route.guards];
}

/**
 * Who may call. Each required guard (or middleware) lets a caller in by any one of its schemes, and every one of
 * them must: one requirement per way to satisfy them all, the smallest only (`auth` and `csrf`:
 * bearer + CSRF token, or cookie + CSRF token). With only optional guards, anonymous or any of
 * their schemes (`[{}, {bearerAuth: []}]`). Null when no guard authenticates (public).
 */
function securityOf(gates: readonly Gate[]): Record<string, string[]>[] | null {
  let ways: Set<string>[] = [new Set()];
  const optional = new Set<string>();
  for (const g of gates) {
    const names = (g.security ?? []).map((s) => s.name);
    if (names.length === 0) continue;
    if (g.mode === 'optional') for (const name of names) optional.add(name);
    else ways = ways.flatMap((way) => names.map((name) => new Set([...way, name])));
  }
  // A way holding every scheme of a smaller one (or of an equal, earlier one) asks for more than needed.
  const within = (other: Set<string>, way: Set<string>): boolean => [...other].every((name) => way.has(name));
  const smallest = ways.filter((way, i) => !ways.some((other, j) => j !== i && within(other, way) && (other.size < way.size || j < i)));
  if (smallest[0]!.size > 0) return smallest.map((way) => Object.fromEntries([...way].map((name) => [name, []])));
  if (optional.size > 0) return [{}, ...[...optional].map((name) => ({ [name]: [] }))];
  return null;
}

function guardExtension(g: GuardInfo): Record<string, unknown> {
  const out: Record<string, unknown> = { name: g.name, args: [...g.args], mode: g.mode, source: g.source, origin: g.origin, doc: g.doc };
  if (g.security) out.security = g.security.map((s) => ({ name: s.name }));
  if (g.state) out.state = [...g.state];
  out.responses = g.responses.map((r) => ({ status: r.status, code: r.code, description: r.description }));
  return out;
}

function byPathThenMethod(a: RouteInfo, b: RouteInfo): number {
  if (a.openapiPath !== b.openapiPath) return a.openapiPath < b.openapiPath ? -1 : 1;
  return a.method < b.method ? -1 : a.method > b.method ? 1 : 0;
}

function sortMethods(item: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(item).sort(([a], [b]) => METHOD_ORDER.indexOf(a) - METHOD_ORDER.indexOf(b)));
}
