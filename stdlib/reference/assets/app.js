// The API reference page: loads the OpenAPI document, renders the collapsed route list in one
// pass, builds a route's details when it is expanded, and handles every interaction through a
// few delegated listeners (no listener per route), so 500 routes render at once.
import { esc, groupsOf, matches, needsCsrf, routesOf } from './model.js';
import { renderDetails, renderDiagnostics, renderGroups, renderRestartNotice } from './render.js';
import { buildSnippets } from './snippets.js';
import { fetchCsrfToken, historyHtml, loadAuth, loadHistory, readRequest, recordHistory, resultHtml, saveAuth, send } from './try-it.js';

// Beside this module: `/_app/rest-api/assets/app.js` → `/_app/rest-api/openapi.json`.
const SPEC_URL = new URL('../openapi.json', import.meta.url).href;
const EVENTS_URL = new URL('../events', import.meta.url).href;
const THEME_KEY = 'rvm-reference-theme';

/** How long a copy button says "Copied". */
const COPIED_MS = 1500;

const state = {
  doc: null,
  routes: [],
  byAnchor: new Map(),
  byId: new Map(),
  /** li.route elements by anchor, refreshed at each render. */
  items: new Map(),
  /** What the user typed, by route id then input id: survives collapsing and live reloads. */
  values: new Map(),
  files: new Map(),
  auth: loadAuth(),
  csrf: null,
  loading: null,
  reloadAgain: false,
};

const $ = (id) => document.getElementById(id);

function announce(text) {
  const el = $('announce');
  if (el) {
    el.textContent = '';
    requestAnimationFrame(() => (el.textContent = text));
  }
}

async function fetchSpec() {
  const res = await fetch(SPEC_URL, { cache: 'no-store', credentials: 'same-origin', headers: { accept: 'application/json' } });
  if (!res.ok) throw new Error(`${SPEC_URL} answered ${res.status}`);
  return res.json();
}

/** The list state a re-render must keep: expanded routes, focus, scroll. */
function captureView() {
  const expanded = [];
  for (const [anchor, li] of state.items)
    if (li.querySelector('.route-toggle')?.getAttribute('aria-expanded') === 'true') expanded.push(state.byAnchor.get(anchor)?.id);
  return { expanded: expanded.filter(Boolean), focus: document.activeElement?.id || null, scroll: window.scrollY };
}

function render(doc) {
  performance.mark('rvm-render-start');
  const view = captureView();
  state.doc = doc;
  state.routes = routesOf(doc);
  state.byAnchor = new Map(state.routes.map((r) => [r.anchor, r]));
  state.byId = new Map(state.routes.map((r) => [r.id, r]));
  const title = typeof doc.info?.title === 'string' && doc.info.title ? doc.info.title : 'API reference';
  $('title').textContent = title;
  document.title = `${title} — API reference`;
  $('version').textContent = doc.info?.version ? `version ${doc.info.version}` : '';
  $('diagnostics').innerHTML = renderRestartNotice(doc['x-rvm-restart-needed']) + renderDiagnostics(doc['x-rvm-errors']);
  document.body.dataset.generation = String(doc['x-rvm-generation'] ?? '');
  const main = $('routes');
  main.innerHTML = state.routes.length > 0 ? renderGroups(groupsOf(state.routes)) : '<p class="note" data-testid="no-routes">This app has no routes yet.</p>';
  state.items = new Map([...main.querySelectorAll('li.route')].map((li) => [li.dataset.anchor, li]));
  for (const id of view.expanded) {
    const route = state.byId.get(id);
    if (route) expand(route);
  }
  applySearch();
  if (view.focus) $(view.focus)?.focus({ preventScroll: true });
  window.scrollTo(0, view.scroll);
  // For benchmarks: `performance.getEntriesByName('rvm-render')`.
  performance.measure('rvm-render', 'rvm-render-start');
}

function expand(route) {
  const li = state.items.get(route.anchor);
  if (!li) return;
  const details = li.querySelector('.route-details');
  if (details.childElementCount === 0) {
    details.innerHTML = renderDetails(state.doc, route);
    restoreInputs(route, details);
  }
  details.hidden = false;
  li.querySelector('.route-toggle').setAttribute('aria-expanded', 'true');
  li.classList.add('open');
  updateSnippets(route);
}

function collapse(route) {
  const li = state.items.get(route.anchor);
  if (!li) return;
  li.querySelector('.route-details').hidden = true;
  li.querySelector('.route-toggle').setAttribute('aria-expanded', 'false');
  li.classList.remove('open');
}

function restoreInputs(route, details) {
  const values = state.values.get(route.id);
  const files = state.files.get(route.id);
  for (const input of details.querySelectorAll('[data-in]')) {
    if (input.type === 'file') {
      const file = files?.get(input.id);
      if (file && typeof DataTransfer === 'function') {
        const dt = new DataTransfer();
        dt.items.add(file);
        input.files = dt.files;
      }
    } else if (values?.has(input.id)) input.value = values.get(input.id);
  }
}

function keep(route, input) {
  if (input.type === 'file') {
    if (!state.files.has(route.id)) state.files.set(route.id, new Map());
    const file = input.files?.[0];
    if (file) state.files.get(route.id).set(input.id, file);
    else state.files.get(route.id).delete(input.id);
    return;
  }
  if (!state.values.has(route.id)) state.values.set(route.id, new Map());
  state.values.get(route.id).set(input.id, input.value);
}

function updateSnippets(route) {
  const details = state.items.get(route.anchor)?.querySelector('.route-details');
  if (!details || details.hidden) return;
  const { req } = readRequest(state.doc, route, details, state.auth, state.csrf, location.origin);
  const snippets = buildSnippets(req);
  for (const [lang, text] of Object.entries(snippets)) {
    const code = details.querySelector(`[data-testid="snippet-${lang}"]`);
    if (code) code.textContent = text;
  }
}

const pendingSnippets = new Set();
function scheduleSnippets(route) {
  if (pendingSnippets.size === 0) {
    requestAnimationFrame(() => {
      for (const r of pendingSnippets) updateSnippets(r);
      pendingSnippets.clear();
    });
  }
  pendingSnippets.add(route);
}

function refreshOpenSnippets() {
  for (const r of state.routes) if (state.items.get(r.anchor)?.classList.contains('open')) scheduleSnippets(r);
}

function applySearch() {
  const query = $('search').value.trim();
  let shown = 0;
  for (const r of state.routes) {
    const li = state.items.get(r.anchor);
    const hit = query === '' || matches(r, query);
    if (li && li.hidden === hit) li.hidden = !hit;
    if (hit) shown++;
  }
  for (const section of $('routes').querySelectorAll('section.group')) {
    section.hidden = section.querySelector('li.route:not([hidden])') === null;
  }
  $('search-count').textContent = query === '' ? `${state.routes.length} routes` : `${shown} of ${state.routes.length} routes`;
}

function openHash(focus) {
  const anchor = decodeURIComponent(location.hash.slice(1));
  const route = state.byAnchor.get(anchor);
  if (!route) return;
  const li = state.items.get(anchor);
  if (li.hidden) {
    $('search').value = '';
    applySearch();
  }
  expand(route);
  li.scrollIntoView({ block: 'start' });
  if (focus) li.querySelector('.route-toggle').focus({ preventScroll: true });
}

function routeOf(el) {
  const li = el.closest('li.route');
  return li ? state.byAnchor.get(li.dataset.anchor) : undefined;
}

async function copy(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // No clipboard API (plain HTTP on another host, or permission refused): the old way.
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.className = 'offscreen';
    document.body.append(area);
    area.select();
    let ok = false;
    try {
      ok = document.execCommand('copy');
    } catch {
      ok = false;
    }
    area.remove();
    return ok;
  }
}

async function sendRoute(route, form) {
  const details = form.closest('.route-details');
  const button = form.querySelector('[data-testid="send"]');
  if (button.getAttribute('aria-disabled') === 'true') return;
  button.setAttribute('aria-disabled', 'true');
  const result = details.querySelector('.result');
  result.hidden = false;
  result.setAttribute('aria-busy', 'true');
  try {
    if (needsCsrf(route)) state.csrf = (await fetchCsrfToken()) ?? state.csrf;
    const { req, files, errors } = readRequest(state.doc, route, details, state.auth, state.csrf, location.origin);
    if (errors.length > 0) {
      result.innerHTML = `<p class="error" data-testid="response-error">${errors.map(([f, e]) => `${esc(f)} ${esc(e)}`).join('<br>')}</p>`;
      return;
    }
    const answer = await send(req, files);
    result.innerHTML = resultHtml(answer);
    $('history-list').innerHTML = historyHtml(recordHistory(route, req, answer));
    updateSnippets(route);
  } finally {
    result.removeAttribute('aria-busy');
    button.removeAttribute('aria-disabled');
  }
}

function isDark() {
  const set = document.documentElement.getAttribute('data-theme');
  if (set === 'dark' || set === 'light') return set === 'dark';
  return window.matchMedia?.('(prefers-color-scheme: dark)').matches === true;
}

/** The button names what it switches to: "Dark mode" in the light theme, "Light mode" in the dark one. */
function syncThemeButton() {
  const button = $('theme-toggle');
  button.setAttribute('aria-pressed', String(isDark()));
  button.textContent = isDark() ? 'Light mode' : 'Dark mode';
}

function toggleTheme() {
  const next = isDark() ? 'light' : 'dark';
  document.documentElement.setAttribute('data-theme', next);
  try {
    localStorage.setItem(THEME_KEY, next);
  } catch {
    // Not kept across reloads; the toggle still works now.
  }
  syncThemeButton();
}

function editable(el) {
  return el instanceof HTMLElement && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
}

function onClick(event) {
  const target = event.target instanceof Element ? event.target : null;
  if (!target) return;
  const toggle = target.closest('.route-toggle');
  if (toggle) {
    const route = routeOf(toggle);
    if (!route) return;
    if (toggle.getAttribute('aria-expanded') === 'true') collapse(route);
    else {
      expand(route);
      history.replaceState(null, '', `#${route.anchor}`);
    }
    return;
  }
  const action = target.closest('[data-action]');
  if (action?.dataset.action === 'copy') {
    const code = action.closest('figure')?.querySelector('code');
    void copy(code?.textContent ?? '').then((ok) => {
      action.textContent = ok ? 'Copied' : 'Copy failed';
      announce(ok ? 'Snippet copied' : 'Copy failed');
      setTimeout(() => (action.textContent = 'Copy'), COPIED_MS);
    });
  } else if (action?.dataset.action === 'reset') {
    const route = routeOf(action);
    if (!route) return;
    state.values.delete(route.id);
    state.files.delete(route.id);
    const details = state.items.get(route.anchor).querySelector('.route-details');
    details.innerHTML = renderDetails(state.doc, route);
    updateSnippets(route);
    details.querySelector('[data-action="reset"]')?.focus();
  } else if (target.closest('#theme-toggle')) toggleTheme();
  else if (target.closest('#auth-show')) {
    const button = $('auth-show');
    const show = button.getAttribute('aria-pressed') !== 'true';
    button.setAttribute('aria-pressed', String(show));
    for (const id of ['auth-bearer', 'auth-apikey']) $(id).type = show ? 'text' : 'password';
  } else if (target.closest('#auth-clear')) {
    $('auth-bearer').value = '';
    $('auth-apikey').value = '';
    onAuthInput();
  }
}

function onAuthInput() {
  state.auth = { bearer: $('auth-bearer').value.trim(), apiKey: $('auth-apikey').value.trim() };
  saveAuth(state.auth);
  const set = [state.auth.bearer && 'bearer token', state.auth.apiKey && 'API key'].filter(Boolean);
  $('auth-status').textContent = set.length > 0 ? `Using: ${set.join(' and ')}.` : 'No credentials set.';
  refreshOpenSnippets();
}

function onInput(event) {
  const target = event.target;
  if (!(target instanceof HTMLElement)) return;
  if (target.id === 'search') return applySearch();
  if (target.id === 'auth-bearer' || target.id === 'auth-apikey') return onAuthInput();
  if (target.dataset.in) {
    const route = routeOf(target);
    if (!route) return;
    keep(route, target);
    scheduleSnippets(route);
  }
}

function onSubmit(event) {
  const form = event.target;
  if (!(form instanceof HTMLFormElement) || !form.classList.contains('try-form')) return;
  event.preventDefault();
  const route = routeOf(form);
  if (route) void sendRoute(route, form);
}

function onKeydown(event) {
  if (event.key === '/' && !editable(event.target) && !event.ctrlKey && !event.metaKey && !event.altKey) {
    event.preventDefault();
    $('search').focus();
    $('search').select();
  } else if (event.key === 'Escape' && event.target?.id === 'search' && $('search').value !== '') {
    $('search').value = '';
    applySearch();
  }
}

async function reload() {
  if (state.loading) {
    state.reloadAgain = true;
    return;
  }
  state.loading = fetchSpec()
    .then((doc) => {
      render(doc);
      announce('The reference was updated.');
    })
    .catch(() => {
      $('live-status').textContent = 'Could not load the updated description; showing the previous one.';
    })
    .finally(() => {
      state.loading = null;
      if (state.reloadAgain) {
        state.reloadAgain = false;
        void reload();
      }
    });
}

function listen() {
  if (typeof EventSource !== 'function') return;
  const events = new EventSource(EVENTS_URL);
  events.addEventListener('open', () => ($('live-status').textContent = 'Live: updates when route files change.'));
  events.addEventListener('reload', () => void reload());
  events.addEventListener('error', () => ($('live-status').textContent = 'Reconnecting for live updates…'));
}

async function start() {
  document.addEventListener('click', onClick);
  document.addEventListener('input', onInput);
  document.addEventListener('change', onInput);
  document.addEventListener('submit', onSubmit);
  document.addEventListener('keydown', onKeydown);
  window.addEventListener('hashchange', () => openHash(true));
  window.matchMedia?.('(prefers-color-scheme: dark)').addEventListener?.('change', syncThemeButton);
  syncThemeButton();
  $('auth-bearer').value = state.auth.bearer;
  $('auth-apikey').value = state.auth.apiKey;
  if (state.auth.bearer || state.auth.apiKey) onAuthInput();
  $('history-list').innerHTML = historyHtml(loadHistory());
  try {
    render(await fetchSpec());
    document.body.dataset.ready = 'true';
    if (location.hash) openHash(true);
  } catch (e) {
    $('routes').innerHTML = `<p class="error" data-testid="load-error">Could not load the API description: ${esc(String(e?.message ?? e))}</p>`;
  }
  listen();
}

void start();
