/**
 * The reference page at /_app/rest-api: self-contained (every asset served by rvm, hashed URLs,
 * strict CSP, no external URL), and the browser modules render app text escaped.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadApp } from '../../tools/host.js';
import { inject, type InjectResponse } from '../../vm/runtime/http/inject.js';
import { captureLogger } from '../../vm/runtime/log.js';
import { definePlugin, type PluginDefinition } from '../../plugins/sdk.js';
import { STANDARD_PLUGINS } from '../../stdlib/index.js';
import { buildBundle, registerPage } from '../../stdlib/reference/page.js';

type App = Awaited<ReturnType<typeof loadApp>>;

/** The page's plugin when the standard library does not carry it (it does once `reference` is in). */
const extra: PluginDefinition[] = STANDARD_PLUGINS.some((p) => p.name === 'reference')
  ? []
  : [definePlugin({ name: 'reference-page', version: '1.0.0', setup: (rvm) => registerPage(rvm) })];

/** One hashed module URL, as an import specifier must be. */
const ASSET_URL_ONE = /^\/_app\/rest-api\/assets\/[a-z0-9.-]+\.js\?v=[0-9a-f]{8}$/;
const ASSET_URL = /\/_app\/rest-api\/assets\/([a-z0-9.-]+)\?v=([0-9a-f]+)/g;

function header(res: InjectResponse, name: string): string {
  const value = res.headers[name];
  return Array.isArray(value) ? value.join(', ') : (value ?? '');
}

function sha8(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 8);
}

function assetRefs(text: string): { name: string; hash: string; url: string }[] {
  return [...text.matchAll(ASSET_URL)].map((m) => ({ name: m[1]!, hash: m[2]!, url: m[0] }));
}

let dir: string;
let app: App;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rvm-ref-page-'));
  mkdirSync(join(dir, 'api'));
  writeFileSync(
    join(dir, 'api', 'items.rvm'),
    `/// Creates an item. <script>alert('x')</script> https://docs.example.org/items
route POST /items {
  validate {
    /// The <b>name</b>.
    name: text @min(3)
  }
  response.created(body)
}`,
  );
  app = await loadApp(dir, { cache: false, dev: true, logger: captureLogger(), plugins: extra });
});

after(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the page', () => {
  test('answers HTML with the strict headers and a CSP that allows only its own origin', async () => {
    const res = await inject(app, { url: '/_app/rest-api' });
    assert.equal(res.status, 200);
    assert.match(header(res, 'content-type'), /^text\/html/);
    const csp = header(res, 'content-security-policy');
    for (const directive of [
      "script-src 'self'",
      "style-src 'self'",
      "connect-src 'self'",
      "img-src 'self' data:",
      "frame-ancestors 'none'",
      "base-uri 'none'",
      "form-action 'none'",
    ]) {
      assert.ok(csp.includes(directive), `CSP has ${directive}`);
    }
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:/);
    assert.equal(header(res, 'x-content-type-options'), 'nosniff');
    assert.equal(header(res, 'referrer-policy'), 'no-referrer');
  });

  test('has no external URL, no inline script or style, and no inline event handler', async () => {
    const html = (await inject(app, { url: '/_app/rest-api' })).body;
    assert.doesNotMatch(html, /https?:\/\//, 'the page names no other origin');
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'every script has a src');
    assert.doesNotMatch(html, /<style|\sstyle=/, 'no inline styles');
    assert.doesNotMatch(html, /\son[a-z]+=/i, 'no inline handlers');
    for (const m of html.matchAll(/\s(?:src|href)="([^"]*)"/g)) {
      assert.match(m[1]!, /^(\/|#|data:,$)/, `${m[1]} is same-origin`);
    }
  });

  test('references its assets by content hash, and each is served with its type', async () => {
    const html = (await inject(app, { url: '/_app/rest-api' })).body;
    const refs = assetRefs(html);
    assert.deepEqual(new Set(refs.map((r) => r.name)), new Set(['app.css', 'app.js', 'theme.js']));
    const types: Record<string, RegExp> = { '.js': /^text\/javascript/, '.css': /^text\/css/ };
    for (const ref of refs) {
      const res = await inject(app, { url: ref.url });
      assert.equal(res.status, 200, ref.url);
      assert.match(header(res, 'content-type'), types[ref.name.slice(ref.name.lastIndexOf('.'))]!);
      assert.equal(ref.hash, sha8(res.body), `${ref.name}: the URL carries the hash of what is served`);
      assert.match(header(res, 'cache-control'), /immutable/);
      assert.equal(header(res, 'x-content-type-options'), 'nosniff');
    }
  });

  test('every module the entry imports is served under its own hashed URL, and none reaches outside', async () => {
    const seen = new Map<string, string>();
    const queue = assetRefs((await inject(app, { url: '/_app/rest-api' })).body);
    while (queue.length > 0) {
      const ref = queue.shift()!;
      if (seen.has(ref.name)) continue;
      const res = await inject(app, { url: ref.url });
      assert.equal(res.status, 200, ref.url);
      assert.equal(ref.hash, sha8(res.body), ref.url);
      seen.set(ref.name, res.body);
      if (ref.name.endsWith('.js')) {
        for (const m of res.body.matchAll(/\bfrom\s*['"]([^'"]+)['"]/g)) assert.match(m[1]!, ASSET_URL_ONE, `${ref.name} imports ${m[1]} by hashed URL`);
        queue.push(...assetRefs(res.body));
      }
      assert.doesNotMatch(res.body, /\bimport\s*\(?\s*['"]https?:|url\(\s*['"]?https?:|@import/, `${ref.name} loads nothing from elsewhere`);
    }
    for (const name of ['app.js', 'model.js', 'render.js', 'schema.js', 'snippets.js', 'try-it.js']) assert.ok(seen.has(name), `${name} is reached`);
  });

  test('a stale or missing hash revalidates, a known ETag answers 304, HEAD has no body', async () => {
    const ref = assetRefs((await inject(app, { url: '/_app/rest-api' })).body).find((r) => r.name === 'app.css')!;
    const stale = await inject(app, { url: '/_app/rest-api/assets/app.css?v=00000000' });
    assert.equal(stale.status, 200);
    assert.equal(header(stale, 'cache-control'), 'no-cache');
    const etag = header(stale, 'etag');
    assert.equal(etag, `"${ref.hash}"`);
    const again = await inject(app, { url: '/_app/rest-api/assets/app.css', headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);
    assert.equal(again.body, '');
    const head = await inject(app, { method: 'HEAD', url: '/_app/rest-api' });
    assert.equal(head.status, 200);
    assert.equal(head.body, '');
    assert.equal((await inject(app, { url: '/_app/rest-api/assets/nothing.js' })).status, 404);
  });

  test('the page matches If-None-Match as the OpenAPI export does: weak, listed or `*` answers 304, another tag 200', async () => {
    const etag = header(await inject(app, { url: '/_app/rest-api' }), 'etag');
    for (const sent of [`W/${etag}`, `"other", ${etag}`, '*']) {
      const res = await inject(app, { url: '/_app/rest-api', headers: { 'if-none-match': sent } });
      assert.equal(res.status, 304, sent);
      assert.equal(res.body, '', sent);
    }
    assert.equal((await inject(app, { url: '/_app/rest-api', headers: { 'if-none-match': '"other"' } })).status, 200);
  });
});

describe('building the bundle', () => {
  const template = '<link href="{{asset:a.css}}"><script type="module" src="{{asset:a.js}}"></script>';

  test('a module hash covers what it imports: changing a dependency changes the importer URL', () => {
    const one = buildBundle(
      new Map([
        ['index.html', template],
        ['a.css', 'x{}'],
        ['a.js', "import { b } from './b.js';"],
        ['b.js', 'export const b = 1;'],
      ]),
    );
    const two = buildBundle(
      new Map([
        ['index.html', template],
        ['a.css', 'x{}'],
        ['a.js', "import { b } from './b.js';"],
        ['b.js', 'export const b = 2;'],
      ]),
    );
    assert.notEqual(one.assets.get('a.js')!.hash, two.assets.get('a.js')!.hash);
    assert.match(one.assets.get('a.js')!.body, /from '\/_app\/rest-api\/assets\/b\.js\?v=[0-9a-f]{8}'/);
    assert.notEqual(one.html.body, two.html.body);
  });

  test('a missing asset or an import cycle fails at load, not in the browser', () => {
    assert.throws(
      () =>
        buildBundle(
          new Map([
            ['index.html', template],
            ['a.css', ''],
            ['a.js', "import './missing.js';"],
          ]),
        ),
      /missing\.js/,
    );
    assert.throws(
      () =>
        buildBundle(
          new Map([
            ['index.html', template],
            ['a.css', ''],
            ['a.js', "import './b.js';"],
            ['b.js', "import './a.js';"],
          ]),
        ),
      /cycle/,
    );
    assert.throws(() => buildBundle(new Map([['index.html', '{{asset:gone.css}}']])), /gone\.css/);
  });
});

interface RenderModule {
  renderGroups(groups: unknown): string;
  renderDetails(doc: unknown, route: unknown): string;
  renderDiagnostics(errors: unknown): string;
}
interface ModelModule {
  routesOf(doc: unknown): { key: string; anchor: string }[];
  groupsOf(routes: unknown): unknown;
}

const assetModule = async <T>(name: string): Promise<T> => (await import(new URL(`../../../stdlib/reference/assets/${name}`, import.meta.url).href)) as T;

describe('rendering app text', () => {
  test('doc comments, names and diagnostics are escaped; each route carries data-route and an anchor', async () => {
    const doc = (await inject(app, { url: '/_app/rest-api/openapi.json' })).json();
    const { routesOf, groupsOf } = await assetModule<ModelModule>('model.js');
    const { renderGroups, renderDetails, renderDiagnostics } = await assetModule<RenderModule>('render.js');
    const routes = routesOf(doc);
    assert.equal(routes[0]!.key, 'POST /items');
    const list = renderGroups(groupsOf(routes));
    assert.match(list, /<li class="route" id="post-items" data-route="POST \/items"/);
    const html = list + renderDetails(doc, routes[0]);
    assert.doesNotMatch(html, /<script|<b>/, 'app text never becomes markup');
    assert.match(html, /&lt;script&gt;alert\(&#39;x&#39;\)&lt;\/script&gt;/);
    assert.match(html, /<code class="dec"[^>]*>@min\(3\)<\/code>/);
    assert.match(html, /<label for="in-post-items-body-0">name<\/label>/);
    const diag = renderDiagnostics([
      { file: 'a.rvm', line: 2, col: 5, code: 'E_X', message: '<img src=x onerror=alert(1)>', sourceLine: 'route <x>', hint: 'try "y"' },
    ]);
    assert.doesNotMatch(diag, /<img|<x>/);
    assert.match(diag, /a\.rvm:2:5/);
    assert.match(diag, /route &lt;x&gt;\n {4}\^/);
  });
});
