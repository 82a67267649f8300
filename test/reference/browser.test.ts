/**
 * The API reference page in a real browser: Debian's Chromium driven by playwright-core against a
 * temporary app served in dev mode (hot reload on). Covers the route list and details, Try It for
 * JSON and multipart routes, the snippets (the cURL and fetch ones executed against the server),
 * credentials kept across reloads, CSRF, live updates and diagnostics over SSE, search, deep
 * links, theme, and an axe-core WCAG 2.1 AA pass.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SignJWT } from 'jose';
import type { Browser } from 'playwright-core';
import { axeScan, browserUnavailable, launchChromium, serveApp, tinyPng, type AxeFinding, type TestApp } from './browser-helpers.js';
import { FIXTURE_FILES, JWT_SECRET } from './fixture-app.js';
import { expand, inPage, luminance, openReference, route, send, shownRoutes, snippet, withPage } from './page-driver.js';

const execFileAsync = promisify(execFile);

/** CI installs Chromium, so there a missing browser is a failure, not a skip. */
const unavailable = process.env.CI ? null : browserUnavailable();
const hasCurl = spawnSync('sh', ['-c', 'command -v curl'], { encoding: 'utf8' }).status === 0;

/** Each test's bound: a hung wait fails it long before the file's. */
const TEST_TIMEOUT_MS = 60_000;
/** How long a live update (file change → reload → SSE → re-render) may take. */
const LIVE_TIMEOUT_MS = 10_000;
const EVERY_ROUTE = ['DELETE /items/{id}', 'GET /items/{id}', 'GET /me', 'GET /mine', 'GET /office', 'POST /avatars', 'POST /items', 'POST /notes'];
const PNG = tinyPng(4);
const PNG_NAME = 'dot.png';

type Json = Record<string, unknown>;
interface Operation extends Json {
  operationId: string;
  responses: Record<string, unknown>;
  'x-rvm-route': string;
  'x-rvm-source': string;
  'x-rvm-guards': { name: string; args: unknown[] }[];
}

let browser: Browser;
let served: TestApp;
let adminToken: string;

async function spec(): Promise<{ doc: Json; ops: Operation[] }> {
  const doc = (await (await fetch(`${served.origin}/_app/rest-api/openapi.json`)).json()) as Json;
  const ops: Operation[] = [];
  for (const item of Object.values(doc.paths as Record<string, Record<string, Operation>>)) ops.push(...Object.values(item));
  return { doc, ops };
}

/** A route's body and query fields as the document lists them: name → decorator names. */
function specFields(op: Operation): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const add = (props: Record<string, Json> | undefined): void => {
    for (const [name, p] of Object.entries(props ?? {}))
      out.set(
        name,
        ((p['x-rvm-decorators'] as { name: string }[] | undefined) ?? []).map((d) => d.name),
      );
  };
  for (const p of (op.parameters as { in: string; name: string; schema: Json }[] | undefined) ?? []) {
    if (p.in === 'query') add({ [p.name]: p.schema });
  }
  const content = (op.requestBody as { content?: Record<string, { schema?: { properties?: Record<string, Json> } }> } | undefined)?.content ?? {};
  add(Object.values(content)[0]?.schema?.properties);
  return out;
}

function parse(text: string): unknown {
  return JSON.parse(text);
}

/** Runs a fetch snippet in this process, `console.log` captured, as it would run in Node 20. */
async function runFetchSnippet(code: string): Promise<{ status: number; body: unknown }> {
  const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor as new (...args: string[]) => (...a: unknown[]) => Promise<void>;
  const logged: unknown[][] = [];
  await new AsyncFunction('console', code)({ log: (...a: unknown[]) => logged.push(a) });
  assert.equal(logged.length, 1, 'the snippet logs once');
  return { status: logged[0]![0] as number, body: parse(logged[0]![1] as string) };
}

/** Runs a cURL snippet through the shell in `cwd`; asynchronous, since this process serves it. */
async function runCurlSnippet(code: string, cwd: string): Promise<{ status: number; body: unknown }> {
  const out = await execFileAsync('sh', ['-c', `${code} --silent --max-time 10 --write-out '\\n%{http_code}'`], { cwd, encoding: 'utf8' });
  const cut = out.stdout.lastIndexOf('\n');
  return { status: Number(out.stdout.slice(cut + 1)), body: parse(out.stdout.slice(0, cut)) };
}

describe('the reference page in Chromium', { skip: unavailable ?? false, timeout: 180_000 }, () => {
  before(async () => {
    browser = await launchChromium();
    served = await serveApp({ ...FIXTURE_FILES, [PNG_NAME]: PNG }, { env: { JWT_SECRET } });
    adminToken = await new SignJWT({ sub: 'u-ada', role: 'admin' })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode(JWT_SECRET));
  });

  after(async () => {
    await browser?.close();
    await served?.close();
  });

  test('lists every route with its data-route, expands by keyboard and click, shows every detail', { timeout: TEST_TIMEOUT_MS }, async () => {
    const { ops } = await spec();
    await withPage(browser, {}, async (page) => {
      await openReference(page, served.origin);
      const keys = await page.locator('li.route').evaluateAll((els) => els.map((el) => el.getAttribute('data-route')));
      assert.deepEqual([...keys].sort(), EVERY_ROUTE);
      assert.deepEqual([...new Set(ops.map((o) => o['x-rvm-route']))].sort(), EVERY_ROUTE, 'the page and the document name the same routes');
      assert.equal(await page.getByTestId('search-count').textContent(), `${EVERY_ROUTE.length} routes`);

      // Keyboard: a native button, so Enter and Space toggle it.
      const toggle = route(page, 'GET /items/{id}').getByTestId('route-toggle');
      await toggle.focus();
      await page.keyboard.press('Enter');
      assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
      await page.keyboard.press('Space');
      assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
      await page.keyboard.press('Enter');
      assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
      assert.equal(new URL(page.url()).hash, '#get-items-id');
      await page.keyboard.press('Tab');
      const [outlineStyle, outlineWidth] = await inPage<[string, string]>(
        page,
        '[getComputedStyle(document.activeElement).outlineStyle, getComputedStyle(document.activeElement).outlineWidth]',
      );
      assert.ok(outlineStyle !== 'none' && parseFloat(outlineWidth) >= 2, `keyboard focus is visible (${outlineStyle} ${outlineWidth})`);

      const get = route(page, 'GET /items/{id}');
      assert.equal(await get.getByTestId('source').textContent(), 'api/items.rvm:4');
      assert.equal(await get.locator('.doc code').first().textContent(), 'fields', 'the doc comment, code spans kept');
      assert.match((await get.locator('.guard[data-guard=rate_limit]').textContent()) ?? '', /rate_limit\(1000, 60\).*at most 1000 requests per 60 s/);
      assert.equal(await get.locator('.field[data-field=id]').count(), 1, 'the path parameter');

      // Click every other route open, then hold each against the document.
      for (const key of EVERY_ROUTE) await expand(page, key);
      for (const op of ops) {
        const li = route(page, op['x-rvm-route']);
        const statuses = await li.locator('li.response').evaluateAll((els) => els.map((el) => el.getAttribute('data-status')));
        assert.deepEqual(statuses, Object.keys(op.responses), `${op['x-rvm-route']}: every response status`);
        const guards = await li.locator('li.guard').evaluateAll((els) => els.map((el) => el.getAttribute('data-guard')));
        assert.deepEqual(
          guards,
          op['x-rvm-guards'].map((g) => g.name),
          `${op['x-rvm-route']}: every guard`,
        );
        for (const [field, decorators] of specFields(op)) {
          const shown = await li.locator(`.field[data-field="${field}"] code.dec`).allTextContents();
          assert.deepEqual(
            shown.map((d) => d.replace(/^@(\w+).*$/s, '$1')),
            decorators,
            `${op['x-rvm-route']} ${field}: every decorator`,
          );
        }
      }
      const items = route(page, 'POST /items');
      const decorators = await items.locator('code.dec').allTextContents();
      for (const d of ['@minLength(3)', '@maxLength(40)', '@email', "@one_of('book', 'film')", "@default('book')", '@min(1)', '@max(100)']) {
        assert.ok(decorators.includes(d), `${d} is shown as written (got ${decorators.join(' ')})`);
      }
      assert.match((await items.locator('.field[data-field=count]').textContent()) ?? '', /must be at least 1/, 'with its message');
      const del = route(page, 'DELETE /items/{id}');
      assert.match((await del.locator('.guard[data-guard=role]').textContent()) ?? '', /role\("admin"\)/);
      assert.match((await del.locator('.guard[data-guard=auth]').textContent()) ?? '', /bearerAuth/);
      const office = route(page, 'GET /office').locator('.guard[data-guard=from_office]');
      assert.match((await office.textContent()) ?? '', /defined at api\/account\.rvm:2.*Lets through only callers who send the office header/s);
      assert.match((await route(page, 'POST /avatars').textContent()) ?? '', /file upload/);
    });
  });

  test('Try It on the JSON route: the prefilled example is accepted (201), a broken field gives 422 with details', { timeout: TEST_TIMEOUT_MS }, async () => {
    await withPage(browser, {}, async (page) => {
      await openReference(page, served.origin);
      const li = await expand(page, 'POST /items');
      const name = li.getByLabel('name', { exact: true });
      assert.notEqual(await name.inputValue(), '', 'prefilled');
      assert.equal(
        await li.getByTestId('input-body-kind').inputValue(),
        '',
        'an optional field (its @default) is not sent until chosen: the server applies the default',
      );
      await name.fill('Dune');
      const ok = await send(li);
      assert.equal(ok.status, 201);
      const created = parse(ok.body) as Json;
      assert.equal(created.name, 'Dune');
      assert.equal(created.kind, 'book');
      assert.equal(created.email, await li.getByTestId('input-body-email').inputValue());
      assert.equal(created.count, Number(await li.getByTestId('input-body-count').inputValue()), 'sent as a number');
      assert.match((await li.getByTestId('response-headers').textContent()) ?? '', /content-type: application\/json/);
      assert.ok(Number(await li.getByTestId('response-time').getAttribute('data-ms')) >= 0);

      await li.getByTestId('input-body-email').fill('not an address');
      await li.getByTestId('input-body-count').fill('0');
      const bad = await send(li);
      assert.equal(bad.status, 422);
      const body = parse(bad.body) as { code: string; details: { field: string; rule: string }[] };
      assert.equal(body.code, 'validation_failed');
      assert.deepEqual(body.details.map((d) => `${d.field}:${d.rule}`).sort(), ['count:min', 'email:email']);
      assert.equal(await page.getByTestId('history-entry').count(), 2, 'both sends are in the history');
    });
  });

  test('Try It uploads a real file as multipart; the snippets of each request run and answer the same', { timeout: TEST_TIMEOUT_MS }, async (t) => {
    await withPage(browser, {}, async (page) => {
      await openReference(page, served.origin);
      const li = await expand(page, 'POST /avatars');
      await li.getByLabel('caption', { exact: true }).fill("Ada's cat");
      await li.getByTestId('input-body-avatar').setInputFiles({ name: PNG_NAME, mimeType: 'image/png', buffer: PNG });
      const shown = await send(li);
      assert.equal(shown.status, 201);
      const expected = { caption: "Ada's cat", type: 'image/png', size: PNG.length, name: PNG_NAME };
      assert.deepEqual(parse(shown.body), expected, 'the server received the file');

      const curl = await snippet(li, 'curl');
      assert.match(curl, /-F 'avatar=@dot\.png'/);
      assert.match(curl, /--form-string 'caption=Ada'\\''s cat'/);
      const fetchCode = await snippet(li, 'fetch');
      assert.match(fetchCode, /new FormData\(\)/);
      assert.match(fetchCode, /openAsBlob\('dot\.png'\)/);
      const dart = await snippet(li, 'dart');
      assert.match(dart, /http\.MultipartRequest\('POST', uri\)/);
      assert.match(dart, /http\.MultipartFile\.fromPath\('avatar', 'dot\.png'\)/);

      const absolute = fetchCode.replace("openAsBlob('dot.png')", `openAsBlob(${JSON.stringify(join(served.dir, PNG_NAME))})`);
      assert.deepEqual(await runFetchSnippet(absolute), { status: 201, body: expected }, 'fetch snippet = Try It');
      if (hasCurl) assert.deepEqual(await runCurlSnippet(curl, served.dir), { status: 201, body: expected }, 'cURL snippet = Try It');
      else t.diagnostic('curl is not installed: the cURL snippet was not executed');

      // Not an image by its bytes: the server refuses it, whatever the name says.
      await li.getByTestId('input-body-avatar').setInputFiles({ name: 'fake.png', mimeType: 'image/png', buffer: Buffer.from('just text') });
      assert.equal((await send(li)).status, 422);

      // The JSON route and the GET route: each snippet answers what Try It answered.
      const items = await expand(page, 'POST /items');
      const triedJson = await send(items);
      assert.equal(triedJson.status, 201);
      const jsonCurl = await snippet(items, 'curl');
      assert.match(jsonCurl, /--data '\{"name":/);
      assert.match(await snippet(items, 'fetch'), /body: JSON\.stringify\(/);
      assert.match(await snippet(items, 'dart'), /jsonEncode\(/);
      assert.deepEqual(await runFetchSnippet(await snippet(items, 'fetch')), { status: 201, body: parse(triedJson.body) });
      if (hasCurl) assert.deepEqual(await runCurlSnippet(jsonCurl, served.dir), { status: 201, body: parse(triedJson.body) });

      const get = await expand(page, 'GET /items/{id}');
      await get.getByTestId('input-path-id').fill('a b/c');
      await get.getByTestId('input-query-fields').fill('name & price');
      await get.getByTestId('input-query-page').fill('2');
      const triedGet = await send(get);
      assert.equal(triedGet.status, 200);
      assert.deepEqual(parse(triedGet.body), { id: 'a b/c', page: 2, fields: 'name & price' });
      const getCurl = await snippet(get, 'curl');
      assert.ok(getCurl.includes("/items/a%20b%2Fc?fields=name%20%26%20price&page=2'"), `path and query encoded: ${getCurl}`);
      assert.doesNotMatch(getCurl, /--data|-F |--form/, 'no body on GET');
      const getFetch = await snippet(get, 'fetch');
      assert.doesNotMatch(getFetch, /body:/);
      assert.match(await snippet(get, 'dart'), /http\.get\(/);
      assert.doesNotMatch(await snippet(get, 'dart'), /body:/);
      assert.deepEqual(await runFetchSnippet(getFetch), { status: 200, body: parse(triedGet.body) });
      if (hasCurl) assert.deepEqual(await runCurlSnippet(getCurl, served.dir), { status: 200, body: parse(triedGet.body) });
    });
  });

  test('a bearer token set once is kept across reloads and sent; CSRF routes get their token fetched', { timeout: TEST_TIMEOUT_MS }, async () => {
    await withPage(browser, {}, async (page) => {
      await openReference(page, served.origin);
      let me = await expand(page, 'GET /me');
      assert.equal((await send(me)).status, 401, 'without a token');
      let mine = await expand(page, 'GET /mine');
      assert.equal((await send(mine)).status, 401, 'the app guard calling auth_user() refuses a caller without a token');

      await page.getByTestId('authorize').locator('summary').click();
      await page.getByLabel('Bearer token').fill(adminToken);
      assert.match((await page.getByTestId('auth-status').textContent()) ?? '', /bearer token/);
      await page.reload();
      await page.waitForSelector('body[data-ready="true"]');
      assert.equal(await page.getByTestId('auth-bearer').inputValue(), adminToken, 'kept in sessionStorage across the reload');
      assert.equal(
        await inPage<boolean>(
          page,
          `Object.keys(sessionStorage).length > 0 && Object.keys(localStorage).every((k) => !localStorage.getItem(k).includes(${JSON.stringify(adminToken)}))`,
        ),
        true,
        'in session storage only',
      );

      me = await expand(page, 'GET /me');
      const shown = await send(me);
      assert.equal(shown.status, 200);
      assert.deepEqual(parse(shown.body), { sub: 'u-ada' });
      assert.ok((await snippet(me, 'curl')).includes(`-H 'Authorization: Bearer ${adminToken}'`));
      // The app's own guard calls auth_user(): the document says it takes the token, so Try It sends it.
      mine = await expand(page, 'GET /mine');
      const mineSent = await send(mine);
      assert.equal(mineSent.status, 200);
      assert.deepEqual(parse(mineSent.body), { mine: 'u-ada' });
      assert.ok((await snippet(mine, 'curl')).includes(`-H 'Authorization: Bearer ${adminToken}'`));
      const del = await expand(page, 'DELETE /items/{id}');
      assert.equal((await send(del)).status, 204, 'auth + role(admin) pass with the admin token');

      const notes = await expand(page, 'POST /notes');
      const csrfFetched = page.waitForRequest((r) => new URL(r.url()).pathname === '/_app/csrf');
      const saved = await send(notes);
      await csrfFetched;
      assert.equal(saved.status, 201);
      assert.equal((parse(saved.body) as Json).note, await notes.getByTestId('input-body-text').inputValue());
      const cookies = await page.context().cookies();
      const csrf = cookies.find((c) => c.name === 'rvm_csrf');
      assert.ok(csrf, 'the CSRF cookie was set');
      assert.match(await snippet(notes, 'curl'), /-H 'X-CSRF-Token: [^<']+'/);
    });
  });

  test('live: an edited route file updates the open page without a reload; a broken one shows its diagnostic until fixed', {
    timeout: TEST_TIMEOUT_MS,
  }, async () => {
    const original = FIXTURE_FILES['api/items.rvm']!;
    try {
      await withPage(browser, {}, async (page) => {
        await openReference(page, served.origin);
        await page.getByTestId('live-status').filter({ hasText: /Live/ }).waitFor();
        const generation = Number(await page.locator('body').getAttribute('data-generation'));
        await inPage(page, 'window.__sameDocument = true');
        const li = await expand(page, 'POST /items');
        await li.getByTestId('input-body-name').fill('Typed before the change');

        served.write(
          'api/items.rvm',
          original.replace('    /// How many copies.', '    /// A note for the shelf.\n    note?: text @maxLength(10)\n    /// How many copies.'),
        );
        await li.getByTestId('input-body-note').waitFor({ timeout: LIVE_TIMEOUT_MS });
        assert.equal(await inPage(page, 'window.__sameDocument'), true, 'updated in place, not reloaded');
        assert.ok(Number(await page.locator('body').getAttribute('data-generation')) > generation);
        assert.equal(await li.getByTestId('input-body-name').inputValue(), 'Typed before the change', 'what the user typed is kept');
        assert.equal(await li.getByTestId('route-toggle').getAttribute('aria-expanded'), 'true', 'the route stays open');

        served.write('api/items.rvm', `${original}\nroute GET /broken {\n  x = (1 +\n}\n`);
        const diagnostic = page.getByTestId('diagnostic');
        await diagnostic.waitFor({ timeout: LIVE_TIMEOUT_MS });
        const { doc } = await spec();
        const [error] = doc['x-rvm-errors'] as { file: string; line: number; col: number; code: string }[];
        assert.ok(error, 'the document carries the diagnostic');
        const where = await diagnostic.locator('.diag-where').textContent();
        assert.match(where ?? '', /^api\/items\.rvm:\d+:\d+$/);
        assert.equal(where, `${error.file}:${error.line}:${error.col}`);
        assert.equal(await diagnostic.locator('.diag-code').textContent(), error.code);
        assert.match(error.code, /^E_[A-Z_]+$/);
        assert.equal(await page.getByTestId('diagnostics').getAttribute('role'), 'alert');
        assert.equal(await route(page, 'POST /items').count(), 1, 'the last good version is still listed');

        served.write('api/items.rvm', original);
        await diagnostic.waitFor({ state: 'detached', timeout: LIVE_TIMEOUT_MS });
        await li.getByTestId('input-body-note').waitFor({ state: 'detached', timeout: LIVE_TIMEOUT_MS });
        assert.equal(await inPage(page, 'window.__sameDocument'), true);
      });
    } finally {
      // Only after a failure: rewriting the same text would trigger one more reload during the next test.
      if (readFileSync(join(served.dir, 'api/items.rvm'), 'utf8') !== original) served.write('api/items.rvm', original);
    }
  });

  test('search filters by path, field and guard; a deep link opens its route; the theme toggles, persists and follows the OS', {
    timeout: TEST_TIMEOUT_MS,
  }, async () => {
    await withPage(browser, { colorScheme: 'light' }, async (page) => {
      await openReference(page, served.origin);
      const search = page.getByTestId('search');
      const cases: [string, string[]][] = [
        ['avatars', ['POST /avatars']],
        ['caption', ['POST /avatars']],
        ['rate_limit', ['GET /items/{id}']],
        ['from_office', ['GET /office']],
        ['role admin', ['DELETE /items/{id}']],
        ['post items', ['POST /items']],
      ];
      for (const [query, expected] of cases) {
        await search.fill(query);
        assert.deepEqual(await shownRoutes(page), expected, `search "${query}"`);
      }
      assert.equal(await page.getByTestId('search-count').textContent(), `1 of ${EVERY_ROUTE.length} routes`);
      await search.press('Escape');
      assert.equal(await search.inputValue(), '');
      assert.equal((await shownRoutes(page)).length, EVERY_ROUTE.length);
      await page.locator('body').click({ position: { x: 1, y: 1 } });
      await page.keyboard.press('/');
      assert.equal(await inPage(page, "document.activeElement.getAttribute('data-testid')"), 'search', '/ focuses the search');

      // A deep link opens and focuses its route.
      await page.goto(`${served.origin}/_app/rest-api#post-avatars`);
      await page.waitForSelector('body[data-ready="true"]');
      const toggle = route(page, 'POST /avatars').getByTestId('route-toggle');
      await page.locator('li[data-route="POST /avatars"] [aria-expanded="true"]').waitFor();
      assert.equal(await toggle.evaluate((el) => el === el.ownerDocument.activeElement), true, 'focused');
      assert.equal(await route(page, 'POST /avatars').getAttribute('id'), 'post-avatars');

      // Theme: light by the OS, toggled to dark, kept across a reload, and back.
      const background = (): Promise<string> => inPage(page, 'getComputedStyle(document.body).backgroundColor');
      const theme = page.getByTestId('theme-toggle');
      assert.equal(await theme.getAttribute('aria-pressed'), 'false');
      assert.equal(await theme.textContent(), 'Dark mode', 'the button names what it switches to');
      const light = await background();
      await theme.click();
      assert.equal(await page.locator('html').getAttribute('data-theme'), 'dark');
      assert.equal(await theme.getAttribute('aria-pressed'), 'true');
      assert.equal(await theme.textContent(), 'Light mode');
      assert.ok(luminance(await background()) < luminance(light), 'darker');
      await page.reload();
      await page.waitForSelector('body[data-ready="true"]');
      assert.equal(await page.locator('html').getAttribute('data-theme'), 'dark', 'kept in localStorage');
      assert.equal(await theme.getAttribute('aria-pressed'), 'true');
      await theme.click();
      assert.equal(await page.locator('html').getAttribute('data-theme'), 'light');
    });
    // A fresh context with no stored choice follows prefers-color-scheme, also when it changes.
    await withPage(browser, { colorScheme: 'dark' }, async (page) => {
      await openReference(page, served.origin);
      const theme = page.getByTestId('theme-toggle');
      assert.equal(await theme.getAttribute('aria-pressed'), 'true');
      const dark = luminance(await inPage(page, 'getComputedStyle(document.body).backgroundColor'));
      assert.ok(dark < 0.2, `a dark background (luminance ${dark})`);
      await page.emulateMedia({ colorScheme: 'light' });
      await page.locator('[data-testid=theme-toggle][aria-pressed="false"]').waitFor();
      assert.ok(luminance(await inPage(page, 'getComputedStyle(document.body).backgroundColor')) > 0.8);
    });
  });

  test('axe-core finds no serious or critical WCAG 2.1 AA violation, light or dark, collapsed, expanded or answered', {
    timeout: TEST_TIMEOUT_MS,
  }, async (t) => {
    const serious: string[] = [];
    for (const colorScheme of ['light', 'dark'] as const) {
      await withPage(browser, { colorScheme }, async (page) => {
        const scan = async (state: string): Promise<void> => {
          const found: AxeFinding[] = await axeScan(page);
          for (const v of found) {
            const line = `${colorScheme}, ${state}: ${v.kind} ${v.impact} ${v.id} (${v.help}) at ${v.targets.length} element(s): ${v.targets.slice(0, 3).join(' | ')}`;
            if (v.kind === 'violation' && (v.impact === 'serious' || v.impact === 'critical')) serious.push(line);
            else t.diagnostic(line);
          }
        };
        await openReference(page, served.origin);
        await scan('collapsed');
        const li = await expand(page, 'POST /items');
        await page.getByTestId('authorize').locator('summary').click();
        await scan('route expanded, authorize open');
        await li.getByTestId('input-body-count').fill('0');
        assert.equal((await send(li)).status, 422);
        await li.locator('.result-headers summary').click();
        await scan('response shown');
      });
    }
    assert.deepEqual(serious, [], 'no serious or critical violation');
  });
});
