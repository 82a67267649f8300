/**
 * The API reference page at `/_app/rest-api` and its assets under `/_app/rest-api/assets/`.
 *
 * The browser code is plain ES modules kept in source (`stdlib/reference/assets/`), read once at
 * load and served from memory. Every asset URL carries a hash of its content (`app.js?v=1a2b3c4d`),
 * imports between modules included, so the browser may cache them for good and still never runs a
 * stale mix after an upgrade. The page renders from `/_app/rest-api/openapi.json`; nothing here
 * depends on the app, so the HTML is the same for every request.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CallContext, Halt, PluginApi } from '../../plugins/sdk.js';
import { answerWithEtag } from './etag.js';

/** Where the assets live: from `dist/stdlib/reference/page.js` back up to the source tree. */
const ASSET_DIR = new URL('../../../stdlib/reference/assets/', import.meta.url);

/** The HTML template among the assets; served at `rest-api`, not under `assets/`. */
const TEMPLATE = 'index.html';

/** Endpoint path of the page; the assets sit under it. */
const PAGE_PATH = 'rest-api';

/** Hex digits of the content hash in asset URLs: 32 bits tell versions of one file apart. */
const HASH_LENGTH = 8;

/** Hashed URLs never change content, so browsers may keep them for a year without asking. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/** The page and unhashed asset URLs are revalidated on every load (cheap: an ETag and a 304). */
const REVALIDATE = 'no-cache';

/** Content types by file extension; anything else is not served. */
const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/**
 * Only what rvm itself serves: no CDN, no inline code, no framing. `data:` images for the SVG
 * icons CSS may embed; `connect-src 'self'` covers Try It, the spec and the event stream.
 */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/** Headers every response of the page carries. */
const STRICT_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

/** One file ready to serve. */
export interface PageAsset {
  name: string;
  contentType: string;
  body: string;
  /** Short content hash, the `v` of its URL. */
  hash: string;
  etag: string;
}

/** The page and its assets, built once. */
export interface PageBundle {
  html: PageAsset;
  assets: ReadonlyMap<string, PageAsset>;
}

function sha(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, HASH_LENGTH);
}

function asset(name: string, contentType: string, body: string): PageAsset {
  const hash = sha(body);
  return { name, contentType, body, hash, etag: `"${hash}"` };
}

/** The URL of an asset as the page and other assets reference it. */
export function assetUrl(a: PageAsset): string {
  return `/_app/${PAGE_PATH}/assets/${a.name}?v=${a.hash}`;
}

/** Relative module specifiers in `import ... from './x.js'` and `import('./x.js')`. */
const IMPORT_SPECIFIER = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])\.\/([a-z0-9-]+\.js)\2/g;

/** Asset references in the template: `{{asset:app.css}}`. */
const TEMPLATE_REF = /\{\{asset:([a-z0-9.-]+)\}\}/g;

/**
 * Builds the bundle from raw sources (name → text): JS imports are rewritten to hashed URLs,
 * leaves first, so a module's hash covers everything it imports. Throws on an unknown or cyclic
 * import, or a template reference to a missing asset: a broken page fails at load, not in a browser.
 */
export function buildBundle(sources: ReadonlyMap<string, string>): PageBundle {
  const done = new Map<string, PageAsset>();
  const visiting = new Set<string>();
  const resolve = (name: string): PageAsset => {
    const ready = done.get(name);
    if (ready !== undefined) return ready;
    const source = sources.get(name);
    const type = CONTENT_TYPES[extname(name)];
    if (source === undefined || type === undefined) throw new Error(`reference page: no asset '${name}'`);
    if (visiting.has(name)) throw new Error(`reference page: import cycle through '${name}'`);
    visiting.add(name);
    const body = name.endsWith('.js')
      ? source.replace(IMPORT_SPECIFIER, (_m, lead: string, quote: string, dep: string) => `${lead}${quote}${assetUrl(resolve(dep))}${quote}`)
      : source;
    visiting.delete(name);
    const built = asset(name, type, body);
    done.set(name, built);
    return built;
  };
  for (const name of sources.keys()) if (name !== TEMPLATE) resolve(name);
  const template = sources.get(TEMPLATE);
  if (template === undefined) throw new Error(`reference page: no ${TEMPLATE}`);
  const html = template.replace(TEMPLATE_REF, (_m, name: string) => assetUrl(resolve(name)));
  return { html: asset(TEMPLATE, 'text/html; charset=utf-8', html), assets: done };
}

/** Reads every file of the asset folder. */
function readSources(): Map<string, string> {
  const dir = fileURLToPath(ASSET_DIR);
  const sources = new Map<string, string>();
  for (const name of readdirSync(dir).sort()) {
    if (name === TEMPLATE || CONTENT_TYPES[extname(name)] !== undefined) sources.set(name, readFileSync(new URL(name, ASSET_DIR), 'utf8'));
  }
  return sources;
}

let cached: PageBundle | null = null;

/** The page bundle, read from disk on first use and kept in memory. */
export function pageBundle(): PageBundle {
  return (cached ??= buildBundle(readSources()));
}

/** Answers one file with the strict headers; 304 when the client already has this version. */
function serve(ctx: CallContext, file: PageAsset, cacheControl: string): Halt {
  for (const [name, value] of Object.entries(STRICT_HEADERS)) ctx.response.setHeader(name, value);
  return answerWithEtag(ctx, file.body, file.etag, file.contentType, cacheControl);
}

/** The `v` query parameter of the request, if any. */
function requestedVersion(ctx: CallContext): string | undefined {
  const v = ctx.request.query.v;
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Registers the page (`/_app/rest-api`) and one endpoint per asset (`/_app/rest-api/assets/<name>`).
 * Reads the assets at once, so a missing file is a plugin load error rather than a blank page.
 */
export function registerPage(rvm: PluginApi): void {
  const bundle = pageBundle();
  rvm.endpoint(PAGE_PATH, (ctx) => serve(ctx, bundle.html, REVALIDATE), {
    doc: 'The interactive API reference (HTML); it renders from rest-api/openapi.json.',
  });
  for (const file of bundle.assets.values()) {
    rvm.endpoint(
      `${PAGE_PATH}/assets/${file.name}`,
      // Only the current hash may be cached for good: an old or missing `v` revalidates.
      (ctx) => serve(ctx, file, requestedVersion(ctx) === file.hash ? IMMUTABLE : REVALIDATE),
      { doc: `Asset of the API reference page: ${file.name}.` },
    );
  }
}
