// Try It: reads what the user typed into a request (the same one the snippets show), sends it
// with the browser's cookies, and keeps the credentials and a short history in sessionStorage.
import { authOf, esc, fieldsOf, needsCsrf } from './model.js';
import { inputId, reason, statusClass } from './render.js';
import { schemaType } from './schema.js';
import { effectiveBody, requestUrl } from './snippets.js';

/** Requests kept in the history: enough to compare a few attempts, small enough to scan. */
export const HISTORY_LIMIT = 10;

/** A Try It request that has not answered by then is aborted. */
const SEND_TIMEOUT_MS = 30000;

/** Response bodies longer than this are cut in the page (the network tab has the rest). */
const MAX_SHOWN_BODY = 200000;

const AUTH_KEY = 'rvm-reference-auth';
const HISTORY_KEY = 'rvm-reference-history';

/** Where the crypto plugin hands out CSRF tokens (it also sets the rvm_csrf cookie). */
const CSRF_URL = '/_app/csrf';

function storage() {
  try {
    return window.sessionStorage;
  } catch {
    return null;
  }
}

/** The bearer token and API key set in the Authorize panel. */
export function loadAuth() {
  try {
    const saved = JSON.parse(storage()?.getItem(AUTH_KEY) ?? '{}');
    return { bearer: typeof saved.bearer === 'string' ? saved.bearer : '', apiKey: typeof saved.apiKey === 'string' ? saved.apiKey : '' };
  } catch {
    return { bearer: '', apiKey: '' };
  }
}

/** Keeps the credentials for this tab, across reloads. */
export function saveAuth(auth) {
  try {
    storage()?.setItem(AUTH_KEY, JSON.stringify({ bearer: auth.bearer, apiKey: auth.apiKey }));
  } catch {
    // Storage full or disabled: the values still work until the page is closed.
  }
}

/** The last requests sent, newest first. */
export function loadHistory() {
  try {
    const list = JSON.parse(storage()?.getItem(HISTORY_KEY) ?? '[]');
    return Array.isArray(list) ? list.slice(0, HISTORY_LIMIT) : [];
  } catch {
    return [];
  }
}

function remember(entry) {
  const list = [entry, ...loadHistory()].slice(0, HISTORY_LIMIT);
  try {
    storage()?.setItem(HISTORY_KEY, JSON.stringify(list));
  } catch {
    // Not kept; the request itself went through.
  }
  return list;
}

/** Placeholder file name a snippet shows for a required file field left empty, so it never drops the field. */
function placeholderFile(f) {
  const names = (f.decorators ?? []).map((d) => d.name);
  if (names.includes('image')) return `${f.name}.png`;
  if (names.includes('document')) return `${f.name}.pdf`;
  return `${f.name}.bin`;
}

/**
 * The file name the snippets upload for a file input: the chosen file's; for a required field
 * left empty a placeholder (the request needs one); null for an optional one, which, like any
 * optional field left empty, is not sent.
 */
function snippetFile(f, file) {
  if (file) return file.name;
  return f.required ? placeholderFile(f) : null;
}

/** Typed JSON from an input's text, by the field's schema; null on text that is not what the type needs. */
function jsonValue(text, schema) {
  const type = schemaType(schema);
  if ((type === 'integer' || type === 'number') && /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(text.trim())) return { value: Number(text) };
  if (type === 'boolean' && (text === 'true' || text === 'false')) return { value: text === 'true' };
  if (type === 'object' || type === 'array' || (Array.isArray(schema.enum) && typeof schema.enum[0] !== 'string')) {
    try {
      return { value: JSON.parse(text) };
    } catch {
      return type === 'object' || type === 'array' ? { error: 'is not valid JSON' } : { value: text };
    }
  }
  // Anything else goes as typed, so a wrong value shows the server's own validation answer.
  return { value: text };
}

/** Auth headers the route accepts, from what the Authorize panel holds. */
export function authHeaders(doc, route, auth) {
  const headers = [];
  const { bearer, apiKeys } = authOf(doc, route);
  if (bearer && auth.bearer) headers.push(['Authorization', `Bearer ${auth.bearer}`]);
  if (auth.apiKey) for (const k of apiKeys) if (k.in === 'header' && k.name) headers.push([k.name, auth.apiKey]);
  if (auth.apiKey && apiKeys.length === 0 && route.guards.some((g) => g.name === 'api_key')) headers.push(['X-API-Key', auth.apiKey]);
  return headers;
}

/**
 * The request the form describes: `req` for the snippets (files by name), `files` (the File
 * objects to upload) and `errors` (field → problem) when an input can't be read.
 */
export function readRequest(doc, route, root, auth, csrfToken, origin) {
  const fields = fieldsOf(doc, route);
  const pathParams = {};
  const query = [];
  const jsonBody = {};
  const textFields = [];
  const fileParts = [];
  const files = [];
  const errors = [];
  fields.forEach((f, i) => {
    const input = root.querySelector(`#${inputId(route, f, i)}`);
    if (!input) return;
    if (input.type === 'file') {
      const file = input.files?.[0];
      const shown = snippetFile(f, file);
      if (shown !== null) fileParts.push([f.name, shown]);
      if (file) files.push([f.name, file]);
      return;
    }
    const text = input.value;
    if (text === '') return;
    if (f.loc === 'path') pathParams[f.name] = text;
    else if (f.loc === 'query') {
      // A list is sent as the key repeated (`?tag=a&tag=b`); the input takes it comma-separated.
      if (schemaType(f.schema) === 'array') for (const part of text.split(',')) query.push([f.name, part.trim()]);
      else query.push([f.name, text]);
    } else if (route.body?.kind === 'json') {
      const parsed = jsonValue(text, f.schema);
      if ('error' in parsed) errors.push([f.name, parsed.error]);
      else jsonBody[f.name] = parsed.value;
    } else textFields.push([f.name, text]);
  });
  const headers = authHeaders(doc, route, auth);
  const cookies = [];
  if (needsCsrf(route)) {
    headers.push(['X-CSRF-Token', csrfToken ?? '<token from GET /_app/csrf>']);
    if (csrfToken) cookies.push(['rvm_csrf', csrfToken]);
  }
  let body = null;
  if (route.body?.kind === 'json') body = { kind: 'json', value: jsonBody };
  else if (route.body?.kind === 'form') body = { kind: 'form', fields: textFields };
  else if (route.body?.kind === 'multipart') body = { kind: 'multipart', fields: textFields, files: fileParts };
  const req = { method: route.method, origin, path: route.path, pathParams, query, headers, cookies, body };
  return { req, files, errors };
}

/** A fresh CSRF token (and cookie); null when the server hands out none. */
export async function fetchCsrfToken() {
  try {
    const res = await fetch(CSRF_URL, { credentials: 'same-origin', cache: 'no-store', headers: { accept: 'application/json' } });
    if (!res.ok) return null;
    const data = await res.json();
    return typeof data?.token === 'string' ? data.token : null;
  } catch {
    return null;
  }
}

/** fetch() options for a request; the browser sends its cookies, the session's and the CSRF one. */
function fetchInit(req, files, signal) {
  const headers = new Headers();
  for (const [k, v] of req.headers ?? []) headers.append(k, v);
  const init = { method: req.method, headers, credentials: 'same-origin', cache: 'no-store', redirect: 'follow', signal };
  const body = effectiveBody(req);
  if (body?.kind === 'json') {
    headers.set('content-type', 'application/json');
    init.body = JSON.stringify(body.value);
  } else if (body?.kind === 'form') {
    init.body = new URLSearchParams(body.fields);
  } else if (body?.kind === 'multipart') {
    const form = new FormData();
    for (const [k, v] of body.fields) form.append(k, v);
    for (const [k, file] of files) form.append(k, file, file.name);
    init.body = form;
  }
  return init;
}

/** The answer, or the failure, of one Try It request. */
export async function send(req, files) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), SEND_TIMEOUT_MS);
  const started = performance.now();
  try {
    const res = await fetch(requestUrl(req), fetchInit(req, files, controller.signal));
    const text = await res.text();
    const ms = Math.round(performance.now() - started);
    const headers = [];
    res.headers.forEach((value, name) => headers.push([name, value]));
    return { ok: true, status: res.status, statusText: res.statusText, headers, text, ms, contentType: res.headers.get('content-type') ?? '' };
  } catch (e) {
    const ms = Math.round(performance.now() - started);
    return { ok: false, error: controller.signal.aborted ? `no answer within ${SEND_TIMEOUT_MS / 1000} s` : String(e?.message ?? e), ms };
  } finally {
    clearTimeout(timer);
  }
}

function prettyBody(text, contentType) {
  if (/json/i.test(contentType)) {
    try {
      return JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      return text;
    }
  }
  return text;
}

/** The result panel for an answer: status, time, headers and body, each with a test id. */
export function resultHtml(result) {
  if (!result.ok) {
    return `<p class="result-line"><span class="status s5" data-testid="response-status">Network error</span> <span data-testid="response-time">${result.ms} ms</span></p><p class="error" data-testid="response-error">${esc(result.error)}</p>`;
  }
  const body = prettyBody(result.text, result.contentType);
  const shown = body.length > MAX_SHOWN_BODY ? `${body.slice(0, MAX_SHOWN_BODY)}\n… (${body.length - MAX_SHOWN_BODY} more characters)` : body;
  const headers = result.headers.map(([k, v]) => `${k}: ${v}`).join('\n');
  return (
    `<p class="result-line"><span class="status ${statusClass(result.status)}" data-testid="response-status" data-status="${result.status}">${result.status} ${esc(result.statusText || reason(result.status))}</span>` +
    ` <span class="note" data-testid="response-time" data-ms="${result.ms}">${result.ms} ms</span></p>` +
    `<details class="result-headers"><summary>Headers (${result.headers.length})</summary><pre tabindex="0" data-testid="response-headers">${esc(headers)}</pre></details>` +
    `<pre class="result-body" tabindex="0" role="region" aria-label="Response body" data-testid="response-body">${esc(shown) || '<span class="note">(empty body)</span>'}</pre>`
  );
}

/** Adds a sent request to the history and returns the new list. */
export function recordHistory(route, req, result) {
  return remember({
    key: route.id,
    anchor: route.anchor,
    url: requestUrl(req),
    status: result.ok ? result.status : 0,
    ms: result.ms,
    at: new Date().toISOString(),
  });
}

/** The history list items. */
export function historyHtml(list) {
  if (list.length === 0) return '<li class="note">Nothing sent yet.</li>';
  return list
    .map((h) => {
      const time = typeof h.at === 'string' ? h.at.slice(11, 19) : '';
      const status = h.status ? `<span class="status ${statusClass(h.status)}">${esc(h.status)}</span>` : '<span class="status s5">error</span>';
      return `<li data-testid="history-entry"><a href="#${esc(h.anchor)}">${esc(h.key)}</a> ${status} <span class="note">${esc(h.ms)} ms · ${esc(time)}</span></li>`;
    })
    .join('');
}
