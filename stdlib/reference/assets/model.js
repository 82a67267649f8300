// The OpenAPI document as the page uses it: one entry per operation, grouped by tag, with the
// text search runs over. No DOM.
import { deref } from './schema.js';

/** HTTP methods an OpenAPI path item may hold, in the order the page lists them. */
const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options', 'trace'];

/** Methods a CSRF guard checks (the others pass without a token). */
const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Escapes text for HTML content and attribute values. */
export function esc(value) {
  return String(value ?? '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** `get-items-id` from an operationId (or method and path): lower-case words joined by dashes. */
export function anchorFor(operationId, method, path) {
  const raw = operationId || `${method} ${path}`;
  const words = String(raw)
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return words || 'route';
}

/** The body of an operation: its kind (json, form, multipart), media type and object schema. */
export function bodyOf(doc, op) {
  const requestBody = deref(doc, op.requestBody);
  const content = requestBody?.content;
  if (!content || typeof content !== 'object') return null;
  const types = Object.keys(content);
  const declared = op['x-rvm-body-kind'];
  const byKind = { json: 'application/json', form: 'application/x-www-form-urlencoded', multipart: 'multipart/form-data' };
  const mediaType = declared && content[byKind[declared]] ? byKind[declared] : types[0];
  if (mediaType === undefined) return null;
  let kind = declared;
  if (!kind) kind = mediaType.includes('multipart') ? 'multipart' : mediaType.includes('urlencoded') ? 'form' : 'json';
  return { kind, mediaType, schema: deref(doc, content[mediaType]?.schema ?? {}), required: requestBody.required === true, types };
}

/** Path and query parameters of an operation (path-level ones merged in), references resolved. */
export function parametersOf(doc, pathItem, op) {
  const byKey = new Map();
  for (const list of [pathItem.parameters, op.parameters]) {
    if (!Array.isArray(list)) continue;
    for (const raw of list) {
      const p = deref(doc, raw);
      if (p && typeof p.name === 'string') byKey.set(`${p.in}:${p.name}`, p);
    }
  }
  return [...byKey.values()];
}

function guardText(g) {
  const args = Array.isArray(g?.args) ? g.args.map((a) => JSON.stringify(a)).join(' ') : '';
  return `${g?.name ?? ''} ${args} ${g?.doc ?? ''}`;
}

/**
 * One entry per operation, in document order: key (`x-rvm-route`: `GET /items/{id}`), id
 * (method and path, unique), anchor, method, path,
 * tag, summary, the operation, and the lower-case text search matches against.
 */
export function routesOf(doc) {
  const routes = [];
  const anchors = new Set();
  const paths = doc && typeof doc.paths === 'object' && doc.paths ? doc.paths : {};
  for (const [path, pathItem] of Object.entries(paths)) {
    if (!pathItem || typeof pathItem !== 'object') continue;
    for (const lower of METHODS) {
      const op = pathItem[lower];
      if (!op || typeof op !== 'object') continue;
      const method = lower.toUpperCase();
      const key = typeof op['x-rvm-route'] === 'string' ? op['x-rvm-route'] : `${method} ${path}`;
      let anchor = anchorFor(op.operationId, method, path);
      for (let n = 2; anchors.has(anchor); n++) anchor = `${anchorFor(op.operationId, method, path)}-${n}`;
      anchors.add(anchor);
      const params = parametersOf(doc, pathItem, op);
      const body = bodyOf(doc, op);
      const guards = Array.isArray(op['x-rvm-guards']) ? op['x-rvm-guards'] : [];
      const tag = Array.isArray(op.tags) && op.tags.length > 0 ? String(op.tags[0]) : 'default';
      const summary = typeof op.summary === 'string' && op.summary ? op.summary : '';
      const search = [
        key,
        summary,
        op.description ?? '',
        op.operationId ?? '',
        tag,
        ...params.map((p) => p.name),
        ...Object.keys(body?.schema?.properties ?? {}),
        ...guards.map(guardText),
      ]
        .join('\n')
        .toLowerCase();
      // ANY routes share one x-rvm-route across methods; `id` tells the operations apart.
      routes.push({ key, id: `${method} ${path}`, anchor, method, path, tag, summary, op, pathItem, params, body, guards, search, index: routes.length });
    }
  }
  return routes;
}

/** Routes grouped by tag, groups in order of first appearance. */
export function groupsOf(routes) {
  const groups = new Map();
  for (const r of routes) {
    if (!groups.has(r.tag)) groups.set(r.tag, []);
    groups.get(r.tag).push(r);
  }
  return [...groups.entries()].map(([tag, list]) => ({ tag, routes: list }));
}

/** True when every whitespace-separated word of `query` occurs in the route's text. */
export function matches(route, query) {
  const words = String(query).toLowerCase().split(/\s+/).filter(Boolean);
  return words.every((w) => route.search.includes(w));
}

/** True when a CSRF token must go with this route's request. */
export function needsCsrf(route) {
  return route.op['x-rvm-csrf'] === true && UNSAFE.has(route.method);
}

/** The security schemes a route accepts (names resolved in components), plus whether any guard answers 401. */
export function authOf(doc, route) {
  const requirements = Array.isArray(route.op.security) ? route.op.security : Array.isArray(doc.security) ? doc.security : [];
  const schemes = doc.components?.securitySchemes ?? {};
  const used = [];
  for (const req of requirements) for (const name of Object.keys(req ?? {})) if (schemes[name]) used.push(deref(doc, schemes[name]));
  const bearer =
    used.some((s) => s.type === 'http' && String(s.scheme).toLowerCase() === 'bearer') || used.some((s) => s.type === 'oauth2' || s.type === 'openIdConnect');
  const apiKeys = used.filter((s) => s.type === 'apiKey').map((s) => ({ in: s.in, name: s.name }));
  const answers401 = route.guards.some((g) => Array.isArray(g?.responses) && g.responses.some((r) => Number(r.status) === 401));
  return { bearer: bearer || (used.length === 0 && answers401), apiKeys };
}

/**
 * Every input of a route: path and query parameters and body fields, each with its location,
 * schema (references resolved), required flag, description and decorators as written.
 */
export function fieldsOf(doc, route) {
  const fields = [];
  for (const p of route.params) {
    if (p.in !== 'path' && p.in !== 'query') continue;
    const schema = deref(doc, p.schema ?? {});
    const decorators = p['x-rvm-decorators'] ?? schema['x-rvm-decorators'] ?? [];
    fields.push({
      loc: p.in,
      name: p.name,
      schema,
      required: p.in === 'path' || p.required === true,
      description: p.description ?? schema.description ?? '',
      decorators,
    });
  }
  const body = route.body;
  if (body) {
    const required = new Set(Array.isArray(body.schema.required) ? body.schema.required : []);
    for (const [name, raw] of Object.entries(body.schema.properties ?? {})) {
      const schema = deref(doc, raw);
      fields.push({
        loc: 'body',
        name,
        schema,
        required: required.has(name),
        description: schema.description ?? '',
        decorators: schema['x-rvm-decorators'] ?? [],
      });
    }
  }
  return fields;
}
