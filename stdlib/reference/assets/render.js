// HTML for the route list, a route's details, schemas and diagnostics. Everything that comes
// from the app (names, doc comments, examples) goes through esc(). Builds strings; no DOM.
import { esc, fieldsOf, needsCsrf } from './model.js';
import {
  constraints,
  decoratorText,
  deref,
  exampleFor,
  fieldExamples,
  flatten,
  isFileSchema,
  MAX_SCHEMA_DEPTH,
  refName,
  schemaType,
  typeLabel,
} from './schema.js';
import { SNIPPET_LANGUAGES } from './snippets.js';
import { REASONS } from './statuses.js';

/** Methods with a colour of their own; the rest share one. */
const COLOURED = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);

/** The reason phrase of a status, or ''. */
export function reason(status) {
  return REASONS[status] ?? '';
}

/** The CSS class of a method badge. */
export function methodClass(method) {
  return `m-${COLOURED.has(method) ? method.toLowerCase() : 'other'}`;
}

/** A doc comment as paragraphs, `code` spans kept. */
export function docHtml(text) {
  if (!text) return '';
  return String(text)
    .split(/\n\s*\n/)
    .map((para) => {
      const lines = para.trim().split('\n');
      if (lines.every((l) => /^\s*[-*] /.test(l))) return `<ul>${lines.map((l) => `<li>${inlineHtml(l.replace(/^\s*[-*] /, ''))}</li>`).join('')}</ul>`;
      return `<p>${lines.map(inlineHtml).join('<br>')}</p>`;
    })
    .join('');
}

/** One line of a doc comment: escaped, `code` spans kept. */
export function inlineHtml(text) {
  return esc(String(text).trim()).replace(/`([^`\n]+)`/g, '<code>$1</code>');
}

/** The collapsed list: one section per tag, one item per route, details built on expansion. */
export function renderGroups(groups) {
  const out = [];
  for (const [i, g] of groups.entries()) {
    const id = `group-${i}`;
    out.push(
      `<section class="group" aria-labelledby="${id}" data-group="${esc(g.tag)}"><h2 id="${id}" class="group-title">${esc(g.tag)}</h2><ul class="route-list">`,
    );
    for (const r of g.routes) out.push(routeItem(r));
    out.push('</ul></section>');
  }
  return out.join('');
}

function routeItem(r) {
  const a = r.anchor;
  const summary = r.summary && r.summary !== r.key ? `<span class="route-summary">${esc(r.summary)}</span>` : '';
  const locks =
    r.guards.length > 0
      ? `<span class="route-guards"><span class="visually-hidden">guards:</span> ${r.guards.map((g) => `<span class="chip">${esc(g.name)}</span>`).join(' ')}</span>`
      : '';
  return (
    `<li class="route" id="${a}" data-route="${esc(r.key)}" data-anchor="${a}">` +
    `<h3 class="route-head"><button type="button" class="route-toggle" aria-expanded="false" aria-controls="details-${a}" data-testid="route-toggle">` +
    // The spaces separate the parts in the button's accessible name (flex layout ignores them).
    `<span class="method ${methodClass(r.method)}">${esc(r.method)}</span> <span class="route-path">${esc(r.path)}</span> ${summary} ${locks}</button></h3>` +
    `<div class="route-details" id="details-${a}" hidden></div></li>`
  );
}

function decoratorList(decorators) {
  if (!Array.isArray(decorators) || decorators.length === 0) return '';
  const items = decorators.map((d) => {
    const text = decoratorText(d);
    const msg = d.message ? `<span class="dec-msg">${esc(d.message)}</span>` : '';
    return `<li><code class="dec"${d.message ? ` title="${esc(d.message)}"` : ''}>${esc(text)}</code>${msg}</li>`;
  });
  return `<ul class="decorators" aria-label="Validation">${items.join('')}</ul>`;
}

function fieldRow(doc, f) {
  const dflt = f.schema.default !== undefined ? `<span class="default">default <code>${esc(JSON.stringify(f.schema.default))}</code></span>` : '';
  const extra = constraints(f.schema).filter((c) => !c.startsWith('one of') || !(f.decorators ?? []).some((d) => d.name === 'one_of' || d.name === 'oneOf'));
  return (
    `<li class="field" data-field="${esc(f.name)}"><div class="field-head"><code class="field-name">${esc(f.name)}</code>` +
    `<span class="type">${esc(typeLabel(doc, f.schema))}</span>` +
    `<span class="${f.required ? 'req' : 'opt'}">${f.required ? 'required' : 'optional'}</span>${dflt}</div>` +
    (f.description ? `<div class="field-doc">${docHtml(f.description)}</div>` : '') +
    decoratorList(f.decorators) +
    (extra.length > 0 && (f.decorators ?? []).length === 0 ? `<p class="constraints">${esc(extra.join(' · '))}</p>` : '') +
    `</li>`
  );
}

function fieldSection(doc, title, fields, note = '') {
  if (fields.length === 0) return '';
  return `<section class="part"><h4>${esc(title)}${note ? ` <span class="note">${esc(note)}</span>` : ''}</h4><ul class="fields">${fields.map((f) => fieldRow(doc, f)).join('')}</ul></section>`;
}

/** Human words for a guard's arguments where they have a meaning of their own (rate limits). */
function guardDetail(g) {
  const args = Array.isArray(g.args) ? g.args : [];
  if (g.name === 'rate_limit' && args.length >= 2) return `at most ${args[0]} requests per ${args[1]} s`;
  if (g.name === 'role' && args.length > 0) return `role ${args.map((a) => String(a)).join(' or ')}`;
  return '';
}

function guardsSection(route) {
  const guards = route.guards;
  if (guards.length === 0 && !needsCsrf(route)) return '';
  const items = guards.map((g) => {
    const call = Array.isArray(g.args) && g.args.length > 0 ? `${g.name}(${g.args.map((a) => JSON.stringify(a)).join(', ')})` : g.name;
    const detail = guardDetail(g);
    const origin = g.source === 'app' ? `defined at ${g.origin}` : `from plugin ${g.origin}`;
    const answers =
      Array.isArray(g.responses) && g.responses.length > 0
        ? `<ul class="guard-answers">${g.responses.map((r) => `<li><span class="status ${statusClass(r.status)}">${esc(r.status)}</span> <code>${esc(r.code)}</code> ${esc(r.description)}</li>`).join('')}</ul>`
        : '';
    return (
      `<li class="guard" data-guard="${esc(g.name)}"><div class="guard-head"><code>${esc(call)}</code>` +
      `<span class="${g.mode === 'optional' ? 'opt' : 'req'}">${esc(g.mode ?? 'required')}</span>` +
      (detail ? `<span class="guard-detail">${esc(detail)}</span>` : '') +
      (Array.isArray(g.security) && g.security.length > 0 ? `<span class="chip">security: ${esc(g.security.map((s) => s.name).join(' or '))}</span>` : '') +
      (Array.isArray(g.state) && g.state.length > 0 ? `<span class="chip">sets ${esc(g.state.map((f) => `state.${f}`).join(', '))}</span>` : '') +
      `<span class="origin">${esc(origin)}</span></div>${g.doc ? `<div class="guard-doc">${docHtml(g.doc)}</div>` : ''}${answers}</li>`
    );
  });
  return `<section class="part"><h4>Guards</h4><ul class="guards">${items.join('')}</ul></section>`;
}

/** `s2` … `s5`: the colour family of a status. */
export function statusClass(status) {
  // A range (`4XX`) is coloured as its class.
  const n = Number(String(status).replace(/XX$/i, '00'));
  return Number.isFinite(n) ? `s${Math.floor(n / 100)}` : 's0';
}

/** A schema as a nested list: names, types, required, constraints, descriptions. */
export function schemaTree(doc, raw, depth = 0) {
  const schema = flatten(doc, raw);
  if (depth > MAX_SCHEMA_DEPTH) return '<p class="note">…</p>';
  const type = schemaType(schema);
  if (type === 'object' && schema.properties && Object.keys(schema.properties).length > 0) {
    const required = new Set(Array.isArray(schema.required) ? schema.required : []);
    const rows = Object.entries(schema.properties).map(([name, prop]) => {
      const p = flatten(doc, prop);
      const nested = schemaType(p) === 'object' || schemaType(p) === 'array' ? schemaTree(doc, prop, depth + 1) : '';
      const words = constraints(p);
      return (
        `<li><code class="field-name">${esc(name)}</code><span class="type">${esc(typeLabel(doc, prop))}</span>` +
        (required.has(name) ? '<span class="req">required</span>' : '') +
        (words.length > 0 ? `<span class="constraints">${esc(words.join(' · '))}</span>` : '') +
        (p.description ? `<span class="field-doc">${inlineHtml(p.description)}</span>` : '') +
        nested +
        `</li>`
      );
    });
    return `<ul class="tree">${rows.join('')}</ul>`;
  }
  if (type === 'array' && schema.items) {
    const items = flatten(doc, schema.items);
    const inner = schemaType(items) === 'object' || schemaType(items) === 'array' ? schemaTree(doc, schema.items, depth + 1) : '';
    return inner ? `<div class="tree-items"><span class="note">items:</span>${inner}</div>` : '';
  }
  const alts = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(alts) && depth === 0) {
    return `<ul class="tree">${alts.map((a) => `<li><span class="type">${esc(typeLabel(doc, a))}</span>${schemaTree(doc, a, depth + 1)}</li>`).join('')}</ul>`;
  }
  return '';
}

/** Named examples of a response body, collapsed. */
function examplesHtml(media) {
  const examples = media?.examples && typeof media.examples === 'object' ? Object.entries(media.examples) : [];
  if (media?.example !== undefined) examples.unshift(['example', { value: media.example }]);
  if (examples.length === 0) return '';
  const items = examples.map(
    ([name, ex]) => `<p class="note">${esc(ex?.summary || name)}</p><pre tabindex="0">${esc(JSON.stringify(ex?.value ?? null, null, 2))}</pre>`,
  );
  return `<details class="examples"><summary>Example${examples.length === 1 ? '' : 's'} (${examples.length})</summary>${items.join('')}</details>`;
}

function responsesSection(doc, route) {
  const responses = route.op.responses ?? {};
  const rows = Object.entries(responses).map(([status, raw]) => {
    const r = deref(doc, raw);
    const content = r?.content && typeof r.content === 'object' ? r.content : {};
    const [mediaType, media] = Object.entries(content)[0] ?? [];
    const schema = media?.schema;
    const label = schema ? typeLabel(doc, schema) : '';
    const tree = schema ? schemaTree(doc, schema) : '';
    const named = schema ? refName(schema) : null;
    const headers = r?.headers && typeof r.headers === 'object' ? Object.keys(r.headers) : [];
    const [firstLine, ...rest] = String(r?.description ?? '').split('\n');
    const more = rest.join('\n').trim();
    return (
      `<li class="response" data-status="${esc(status)}"><div class="response-head"><span class="status ${statusClass(status)}">${esc(status)}</span>` +
      `<span class="response-desc">${inlineHtml(firstLine || reason(status))}</span>` +
      (mediaType ? `<span class="note">${esc(mediaType)}${label ? ` · ${esc(named ?? label)}` : ''}</span>` : '') +
      (headers.length > 0 ? `<span class="note">headers: ${esc(headers.join(', '))}</span>` : '') +
      `</div>${more ? `<div class="response-doc">${docHtml(more)}</div>` : ''}${tree}${examplesHtml(media)}</li>`
    );
  });
  if (rows.length === 0) return '';
  return `<section class="part"><h4>Responses</h4><ul class="responses">${rows.join('')}</ul></section>`;
}

/** The id of a Try It input: stable across reloads while the route keeps its fields. */
export function inputId(route, f, i) {
  return `in-${route.anchor}-${f.loc}-${i}`;
}

/** A field's example as the text its input shows. */
function exampleText(example, schema) {
  if (example === null || example === undefined) return '';
  const type = schemaType(schema);
  if (type === 'object' || type === 'array') return JSON.stringify(example, null, 2);
  return typeof example === 'string' ? example : JSON.stringify(example);
}

/** Names of fields whose value is typed hidden, as a password is. */
const SECRET_FIELD = /password|passphrase|secret/i;

/** The input type of a text field: `password` for fields named like one, so Try It does not show them. */
export function textInputType(f) {
  return SECRET_FIELD.test(f.name) ? 'password' : 'text';
}

/**
 * A field's input holding `value`; `placeholder` shows an optional field's example while it is
 * empty, so it is sent only once the user fills it in.
 */
function inputHtml(route, f, i, value, placeholder) {
  const id = inputId(route, f, i);
  const type = schemaType(f.schema);
  const attrs = `id="${id}" name="${esc(f.name)}" data-in="${f.loc}" data-field="${esc(f.name)}" data-testid="input-${f.loc}-${esc(f.name)}"${f.required ? ' aria-required="true"' : ''} aria-describedby="${id}-hint"`;
  if (isFileSchema(f.schema)) return `<input type="file" ${attrs}>`;
  if (type === 'boolean' || Array.isArray(f.schema.enum)) {
    const options = type === 'boolean' ? [true, false] : f.schema.enum;
    const opts = [
      `<option value="">(not sent)</option>`,
      ...options.map((o) => {
        const text = typeof o === 'string' ? o : JSON.stringify(o);
        return `<option value="${esc(text)}"${text === value ? ' selected' : ''}>${esc(text)}</option>`;
      }),
    ];
    return `<select ${attrs}>${opts.join('')}</select>`;
  }
  if (f.loc === 'body' && (type === 'object' || type === 'array')) {
    const lines = (value || placeholder).split('\n').length;
    return `<textarea ${attrs} rows="${Math.min(12, Math.max(3, lines))}"${placeholderAttr(placeholder)} spellcheck="false" class="json-input">${esc(value)}</textarea>`;
  }
  const mode = type === 'integer' ? ' inputmode="numeric"' : type === 'number' ? ' inputmode="decimal"' : '';
  return `<input type="${textInputType(f)}" ${attrs}${mode} value="${esc(value)}"${placeholderAttr(placeholder)} autocomplete="off" spellcheck="false">`;
}

function placeholderAttr(placeholder) {
  return placeholder ? ` placeholder="${esc(placeholder)}"` : '';
}

function tryItSection(doc, route, fields) {
  const bodyExamples = route.body ? fieldExamples(doc, route.body.schema) : {};
  const rows = fields.map((f, i) => {
    const example = f.loc === 'body' ? bodyExamples[f.name] : exampleFor(doc, f.schema, f.name);
    const shown = f.loc !== 'body' && Array.isArray(example) ? example.join(',') : exampleText(example, f.schema);
    // Required fields start with a value the server accepts; optional ones empty (their example
    // as the placeholder), since an empty input is not sent: a PATCH sends only what is filled.
    const value = f.required ? shown : '';
    const list = f.loc !== 'body' && schemaType(f.schema) === 'array' ? 'comma-separated' : '';
    const hint = [f.loc, typeLabel(doc, f.schema), list, f.required ? 'required' : 'optional; leave empty to omit'].filter(Boolean).join(' · ');
    return (
      `<div class="try-row"><label for="${inputId(route, f, i)}">${esc(f.name)}</label>` +
      inputHtml(route, f, i, value, f.required ? '' : shown) +
      `<span class="hint" id="${inputId(route, f, i)}-hint">${esc(hint)}</span></div>`
    );
  });
  const csrf = needsCsrf(route) ? '<p class="hint">A CSRF token is fetched from <code>/_app/csrf</code> and sent as <code>X-CSRF-Token</code>.</p>' : '';
  return (
    `<section class="part try" aria-labelledby="try-${route.anchor}"><h4 id="try-${route.anchor}">Try it</h4>` +
    `<form class="try-form" data-anchor="${route.anchor}" novalidate>${rows.join('') || '<p class="hint">No parameters.</p>'}${csrf}` +
    `<div class="try-actions"><button type="submit" class="button primary" data-testid="send">Send</button>` +
    `<button type="button" class="button" data-action="reset" data-testid="reset">Reset</button></div></form>` +
    `<div class="result" data-testid="response" aria-live="polite" hidden></div></section>`
  );
}

function snippetsSection(route) {
  const blocks = SNIPPET_LANGUAGES.map(
    (l) =>
      `<figure class="snippet" data-lang="${l.id}"><figcaption><span id="cap-${route.anchor}-${l.id}">${esc(l.label)}</span>` +
      `<button type="button" class="button small" data-action="copy" data-lang="${l.id}" data-testid="copy-${l.id}" aria-label="Copy ${esc(l.label)} snippet">Copy</button></figcaption>` +
      `<pre tabindex="0" role="region" aria-labelledby="cap-${route.anchor}-${l.id}"><code data-testid="snippet-${l.id}"></code></pre></figure>`,
  );
  return `<section class="part snippets"><h4>Code</h4>${blocks.join('')}</section>`;
}

/** A route's details: docs, source, guards, parameters, body, responses, Try It and snippets. */
export function renderDetails(doc, route) {
  const op = route.op;
  const fields = fieldsOf(doc, route);
  const source = typeof op['x-rvm-source'] === 'string' ? `<span>Source <code data-testid="source">${esc(op['x-rvm-source'])}</code></span>` : '';
  const body = route.body;
  // The summary (the doc comment's first sentence) heads the route; the description is the rest.
  const description = typeof op.description === 'string' ? op.description.trim() : '';
  const bodyNote = body ? `${body.mediaType}${body.kind === 'multipart' ? ' — file upload' : ''}` : '';
  return (
    `<div class="route-meta">${source}<span>operationId <code>${esc(op.operationId ?? '')}</code></span>` +
    `<a class="permalink" href="#${route.anchor}" data-testid="permalink">Link to this route</a></div>` +
    (description ? `<div class="doc">${docHtml(description)}</div>` : '') +
    guardsSection(route) +
    fieldSection(
      doc,
      'Path parameters',
      fields.filter((f) => f.loc === 'path'),
    ) +
    fieldSection(
      doc,
      'Query parameters',
      fields.filter((f) => f.loc === 'query'),
    ) +
    fieldSection(
      doc,
      'Body',
      fields.filter((f) => f.loc === 'body'),
      bodyNote,
    ) +
    responsesSection(doc, route) +
    tryItSection(doc, route, fields) +
    snippetsSection(route)
  );
}

/** The plugin files changed since the server started: their new code needs a restart of rvm run. */
export function renderRestartNotice(files) {
  if (!Array.isArray(files) || files.length === 0) return '';
  const items = files.map((f) => `<li><code>${esc(f)}</code></li>`).join('');
  return (
    `<section class="diag-box restart-box" aria-labelledby="restart-title" data-testid="restart-notice"><h2 id="restart-title">Restart needed</h2>` +
    `<p>These plugin files changed since <code>rvm run</code> started. Plugins are loaded once per process, so the server still runs their old code: restart <code>rvm run</code> to use them.</p><ul>${items}</ul></section>`
  );
}

/** The compile errors of the last reload, each with its source line and a caret. */
export function renderDiagnostics(errors) {
  if (!Array.isArray(errors) || errors.length === 0) return '';
  const items = errors.map((d) => {
    const where = `${d.file ?? '?'}:${d.line ?? '?'}:${d.col ?? '?'}`;
    const caret =
      typeof d.sourceLine === 'string' ? `<pre class="diag-source">${esc(d.sourceLine)}\n${' '.repeat(Math.max(0, Number(d.col ?? 1) - 1))}^</pre>` : '';
    return (
      `<li class="diag" data-testid="diagnostic"><p><code class="diag-where">${esc(where)}</code> <strong class="diag-code">${esc(d.code ?? '')}</strong> ${esc(d.message ?? '')}</p>` +
      caret +
      (d.hint ? `<p class="diag-hint">${esc(d.hint)}</p>` : '') +
      `</li>`
    );
  });
  return `<section class="diag-box" aria-labelledby="diag-title"><h2 id="diag-title">The app failed to compile — the last good version is still serving</h2><ul>${items.join('')}</ul></section>`;
}
