// Code snippets (cURL, JavaScript fetch, Dart package:http) for one request as the user filled
// it in. Pure functions without the DOM, so node tests import this file as it is served.

/**
 * A request to render.
 * @typedef {object} SnippetRequest
 * @property {string} method          GET, POST, ...
 * @property {string} origin          scheme, host and port: `http://localhost:3000`
 * @property {string} path            OpenAPI style: `/items/{id}`
 * @property {Record<string, string>} [pathParams]
 * @property {Array<[string, string]>} [query]    name/value pairs, in order, repeats allowed
 * @property {Array<[string, string]>} [headers]
 * @property {Array<[string, string]>} [cookies]
 * @property {SnippetBody | null} [body]
 */

/**
 * The body: JSON (`value`), urlencoded form (`fields`), or multipart (`fields` and `files`, each
 * file as [field name, file name]).
 * @typedef {{ kind: 'json', value: unknown }
 *   | { kind: 'form', fields: Array<[string, string]> }
 *   | { kind: 'multipart', fields: Array<[string, string]>, files: Array<[string, string]> }} SnippetBody
 */

/** Methods that never carry a body (fetch refuses one; servers ignore it). */
const BODYLESS = new Set(['GET', 'HEAD']);

/** The languages, in the order the page shows them. */
export const SNIPPET_LANGUAGES = [
  { id: 'curl', label: 'cURL' },
  { id: 'fetch', label: 'JavaScript fetch' },
  { id: 'dart', label: 'Flutter (Dart http)' },
];

/** True when a request with this method may have a body. */
export function mayHaveBody(method) {
  return !BODYLESS.has(String(method).toUpperCase());
}

/** The body actually sent: none for GET and HEAD, whatever the form held. */
export function effectiveBody(req) {
  return mayHaveBody(req.method) && req.body ? req.body : null;
}

/** The path with each `{name}` replaced by its URL-encoded value (a missing value stays visible, encoded). */
export function expandPath(path, params = {}) {
  return path.replace(/\{([^}]+)\}/g, (whole, name) => {
    const value = Object.hasOwn(params, name) ? params[name] : undefined;
    return encodeURIComponent(value === undefined || value === null || value === '' ? whole : String(value));
  });
}

/** `a=1&b=x%20y` from name/value pairs, every part encoded with encodeURIComponent. */
export function queryString(pairs = []) {
  return pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
}

/** The full URL: origin, expanded path and encoded query. */
export function requestUrl(req) {
  const query = queryString(req.query ?? []);
  return `${req.origin}${expandPath(req.path, req.pathParams ?? {})}${query ? `?${query}` : ''}`;
}

/** A POSIX shell word: single quotes, each `'` written as `'\''`. */
export function shellQuote(text) {
  return `'${String(text).replace(/'/g, "'\\''")}'`;
}

/** Control characters a string literal must not hold as they are. */
const CONTROL = /[\u0000-\u001f\u007f\u2028\u2029]/g;

function hex(ch) {
  const code = ch.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

const SHORT_ESCAPES = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** A single-quoted JavaScript string literal. */
export function jsString(text) {
  return `'${String(text)
    .replace(/\\/g, '\\\\')
    .replace(/'/g, "\\'")
    .replace(CONTROL, (c) => SHORT_ESCAPES[c] ?? hex(c))}'`;
}

/** A single-quoted Dart string literal (`$` escaped: Dart interpolates it). */
export function dartString(text) {
  return `'${String(text)
    .replace(/\\/g, '\\\\')
    .replace(/'/g, "\\'")
    .replace(/\$/g, '\\$')
    .replace(CONTROL, (c) => SHORT_ESCAPES[c] ?? `\\u{${c.charCodeAt(0).toString(16)}}`)}'`;
}

/** A JSON value as a Dart literal (maps, lists, strings, numbers, booleans, null), indented. */
export function dartLiteral(value, indent = '') {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return dartString(value);
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  if (typeof value === 'boolean') return String(value);
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((v) => `${inner}${dartLiteral(v, inner)},`).join('\n')}\n${indent}]`;
  }
  const entries = Object.entries(value);
  if (entries.length === 0) return '<String, dynamic>{}';
  return `{\n${entries.map(([k, v]) => `${inner}${dartString(k)}: ${dartLiteral(v, inner)},`).join('\n')}\n${indent}}`;
}

/** Pretty JSON re-indented to start at `indent`. */
function prettyJson(value, indent) {
  return JSON.stringify(value ?? null, null, 2).replace(/\n/g, `\n${indent}`);
}

function hasUniqueNames(pairs) {
  return new Set(pairs.map(([k]) => k)).size === pairs.length;
}

function cookieHeader(cookies) {
  return cookies.map(([k, v]) => `${k}=${v}`).join('; ');
}

/** cURL (POSIX shell) for the request. */
export function curlSnippet(req) {
  const method = String(req.method).toUpperCase();
  const body = effectiveBody(req);
  const lines = [];
  if (method === 'HEAD') lines.push(`curl --head ${shellQuote(requestUrl(req))}`);
  else if (method === 'GET') lines.push(`curl ${shellQuote(requestUrl(req))}`);
  else lines.push(`curl -X ${method} ${shellQuote(requestUrl(req))}`);
  for (const [name, value] of req.headers ?? []) lines.push(`-H ${shellQuote(`${name}: ${value}`)}`);
  if ((req.cookies ?? []).length > 0) lines.push(`-b ${shellQuote(cookieHeader(req.cookies))}`);
  if (body?.kind === 'json') {
    lines.push(`-H ${shellQuote('content-type: application/json')}`);
    lines.push(`--data ${shellQuote(JSON.stringify(body.value ?? null))}`);
  } else if (body?.kind === 'form') {
    // curl encodes the value after `=`; the name is encoded here (it must hold no `=` or `@`).
    for (const [name, value] of body.fields) lines.push(`--data-urlencode ${shellQuote(`${encodeURIComponent(name)}=${value}`)}`);
    if (body.fields.length === 0) lines.push(`--data ''`);
  } else if (body?.kind === 'multipart') {
    // --form-string: a value starting with @ or < is sent as text, never read from a file.
    for (const [name, value] of body.fields) lines.push(`--form-string ${shellQuote(`${name}=${value}`)}`);
    for (const [name, file] of body.files) lines.push(`-F ${shellQuote(`${name}=@${curlFileName(file)}`)}`);
  }
  return lines.join(' \\\n  ');
}

/** A file name for `-F name=@file`: double-quoted when it holds a character curl would read as syntax. */
function curlFileName(file) {
  return /[;,"\\\s]/.test(file) ? `"${file.replace(/["\\]/g, (c) => `\\${c}`)}"` : file;
}

/** JavaScript `fetch` for the request (runs in a browser and in Node 20). */
export function fetchSnippet(req) {
  const method = String(req.method).toUpperCase();
  const body = effectiveBody(req);
  const pre = [];
  const options = [`  method: ${jsString(method)},`];
  const headers = [...(req.headers ?? [])];
  if (body?.kind === 'json') headers.push(['content-type', 'application/json']);
  const cookies = req.cookies ?? [];
  if (cookies.length > 0) headers.push(['cookie', cookieHeader(cookies)]);
  if (headers.length > 0) {
    options.push('  headers: {');
    for (const [name, value] of headers) options.push(`    ${jsString(name)}: ${jsString(value)},`);
    options.push('  },');
  }
  if (body?.kind === 'json') {
    options.push(`  body: JSON.stringify(${prettyJson(body.value, '  ')}),`);
  } else if (body?.kind === 'form') {
    const fields = body.fields;
    const init = hasUniqueNames(fields)
      ? `{ ${fields.map(([k, v]) => `${jsString(k)}: ${jsString(v)}`).join(', ')} }`
      : `[${fields.map(([k, v]) => `[${jsString(k)}, ${jsString(v)}]`).join(', ')}]`;
    options.push(`  body: new URLSearchParams(${fields.length === 0 ? '' : init}),`);
  } else if (body?.kind === 'multipart') {
    pre.push('const form = new FormData();');
    for (const [name, value] of body.fields) pre.push(`form.append(${jsString(name)}, ${jsString(value)});`);
    if (body.files.length > 0) {
      pre.push('// In a browser, append the File of an <input type="file"> instead of openAsBlob (Node 20).');
      pre.push("const { openAsBlob } = await import('node:fs');");
      for (const [name, file] of body.files) pre.push(`form.append(${jsString(name)}, await openAsBlob(${jsString(file)}), ${jsString(file)});`);
    }
    options.push('  body: form,');
  }
  // Browsers send their own cookies with credentials; the cookie header above is for Node.
  options.push("  credentials: 'include',");
  const call = [`const response = await fetch(${jsString(requestUrl(req))}, {`, ...options, '});'];
  const read = method === 'HEAD' ? 'console.log(response.status);' : 'console.log(response.status, await response.text());';
  return [...pre, ...(pre.length > 0 ? [''] : []), ...call, read].join('\n');
}

/** Dart method helpers of package:http; any other method goes through http.Request. */
const DART_HELPERS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']);

function dartMap(pairs, indent) {
  if (pairs.length === 0) return '<String, String>{}';
  return `{\n${pairs.map(([k, v]) => `${indent}  ${dartString(k)}: ${dartString(v)},`).join('\n')}\n${indent}}`;
}

/** Flutter / Dart with `package:http` for the request; files go through http.MultipartRequest. */
export function dartSnippet(req) {
  const method = String(req.method).toUpperCase();
  const body = effectiveBody(req);
  const headers = [...(req.headers ?? [])];
  const cookies = req.cookies ?? [];
  if (cookies.length > 0) headers.push(['cookie', cookieHeader(cookies)]);
  const imports = ["import 'package:http/http.dart' as http;"];
  const lines = [`  final uri = Uri.parse(${dartString(requestUrl(req))});`];
  const I = '  ';
  if (body?.kind === 'multipart') {
    lines.push(`${I}final request = http.MultipartRequest(${dartString(method)}, uri);`);
    if (headers.length > 0) lines.push(`${I}request.headers.addAll(${dartMap(headers, I)});`);
    for (const [name, value] of body.fields) lines.push(`${I}request.fields[${dartString(name)}] = ${dartString(value)};`);
    for (const [name, file] of body.files) lines.push(`${I}request.files.add(await http.MultipartFile.fromPath(${dartString(name)}, ${dartString(file)}));`);
    lines.push(`${I}final response = await http.Response.fromStream(await request.send());`);
  } else {
    let bodyArg = null;
    if (body?.kind === 'json') {
      imports.unshift("import 'dart:convert';");
      headers.push(['content-type', 'application/json']);
      bodyArg = `jsonEncode(${dartLiteral(body.value, '    ')})`;
    } else if (body?.kind === 'form') {
      if (hasUniqueNames(body.fields)) {
        // A Map<String, String> body is sent form-urlencoded, content type included.
        bodyArg = dartMap(body.fields, '    ');
      } else {
        headers.push(['content-type', 'application/x-www-form-urlencoded']);
        bodyArg = dartString(new URLSearchParams(body.fields).toString());
      }
    }
    if (DART_HELPERS.has(method)) {
      const args = [`${I}${I}uri,`];
      if (headers.length > 0) args.push(`${I}${I}headers: ${dartMap(headers, '    ')},`);
      if (bodyArg !== null) args.push(`${I}${I}body: ${bodyArg},`);
      lines.push(`${I}final response = await http.${method.toLowerCase()}(`, ...args, `${I});`);
    } else {
      lines.push(`${I}final request = http.Request(${dartString(method)}, uri);`);
      if (headers.length > 0) lines.push(`${I}request.headers.addAll(${dartMap(headers, I)});`);
      if (bodyArg !== null)
        lines.push(body?.kind === 'form' && hasUniqueNames(body.fields) ? `${I}request.bodyFields = ${bodyArg};` : `${I}request.body = ${bodyArg};`);
      lines.push(`${I}final response = await http.Response.fromStream(await request.send());`);
    }
  }
  lines.push(`${I}print(response.statusCode);`);
  if (method !== 'HEAD') lines.push(`${I}print(response.body);`);
  return [...imports, '', 'Future<void> main() async {', ...lines, '}'].join('\n');
}

/** Every snippet of the request, by language id. */
export function buildSnippets(req) {
  return { curl: curlSnippet(req), fetch: fetchSnippet(req), dart: dartSnippet(req) };
}
