/**
 * API reference page benchmark: the generated app of 500 varied routes (bench/reference.ts's
 * generator) served over HTTP, the page loaded in headless Chromium (Debian's, through
 * playwright-core) in a fresh context per run, so every run fetches the page, its modules and the
 * document anew. Measures the time from navigation to `body[data-ready]`, the page's own render
 * mark (`rvm-render`), the document fetch, one search keystroke and one route expansion.
 * Target: ready in under 1 s.
 *
 * Run: `node dist/bench/reference-render.js`. Env: BENCH_ROUTES (default 500), BENCH_RENDER_RUNS
 * (default 5). Needs /usr/bin/chromium (or RVM_CHROMIUM).
 */
import { rmSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { loadApp } from '../tools/host.js';
import { captureLogger } from '../vm/runtime/log.js';
import { startServer } from '../vm/runtime/http/server.js';
import { browserUnavailable, launchChromium, loopbackContext } from '../test/reference/browser-helpers.js';
import { generateApp } from './reference.js';
import { fmt, formatTable, machineDescription, median } from './util.js';

/** Routes of the generated app: the size the page must stay fast at (spec/plugins/reference.md). */
const ROUTES = Number(process.env.BENCH_ROUTES) > 0 ? Number(process.env.BENCH_ROUTES) : 500;
/** Page loads measured; the median is reported (each load takes well under a second, so 5 is cheap). */
const RUNS = Number(process.env.BENCH_RENDER_RUNS) > 0 ? Number(process.env.BENCH_RENDER_RUNS) : 5;
/** Untimed loads first: the server's JIT and Chromium's code caches warm up, as on a developer's machine. */
const WARMUP_RUNS = 1;
/** The target: the page ready (document fetched and rendered) within this many milliseconds. */
const TARGET_READY_MS = 1000;
/** A search that matches a handful of the generated routes. */
const SEARCH_TEXT = 'item42';
/** Longest a single page load may take before the run is abandoned. */
const LOAD_TIMEOUT_MS = 30_000;

/**
 * Injected before the page's own scripts (through the DevTools protocol, which the page's CSP does
 * not govern): notes when the body gets `data-ready`, in ms since navigation started.
 */
const READY_PROBE = `new MutationObserver((_, observer) => {
  if (document.body?.dataset.ready === 'true') {
    window.__readyAt = performance.now();
    observer.disconnect();
  }
}).observe(document, { subtree: true, attributes: true, attributeFilter: ['data-ready'] });`;

/** In-page timings of one load. */
interface LoadTimings {
  ready: number;
  render: number;
  spec: number;
  specKiB: number;
  domContentLoaded: number;
  search: number;
  expand: number;
  routes: number;
}

/** The figures gathered once the page is ready; a string, since the bench compiles without the DOM library. */
const COLLECT = `(() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const spec = performance.getEntriesByType('resource').find((e) => e.name.includes('/openapi.json'));
  const search = document.querySelector('[data-testid=search]');
  let t = performance.now();
  search.value = ${JSON.stringify(SEARCH_TEXT)};
  search.dispatchEvent(new Event('input', { bubbles: true }));
  const searchMs = performance.now() - t;
  search.value = '';
  search.dispatchEvent(new Event('input', { bubbles: true }));
  const toggles = document.querySelectorAll('li.route [data-testid=route-toggle]');
  t = performance.now();
  toggles[2].click();
  const expandMs = performance.now() - t;
  return {
    ready: window.__readyAt,
    render: performance.getEntriesByName('rvm-render')[0]?.duration ?? NaN,
    spec: spec ? spec.responseEnd - spec.startTime : NaN,
    specKiB: spec ? spec.encodedBodySize / 1024 : NaN,
    domContentLoaded: nav ? nav.domContentLoadedEventEnd : NaN,
    search: searchMs,
    expand: expandMs,
    routes: document.querySelectorAll('li.route').length,
  };
})()`;

async function loadOnce(browser: Browser, url: string): Promise<LoadTimings> {
  const { context, outside } = await loopbackContext(browser);
  try {
    const page = await context.newPage();
    await page.addInitScript(READY_PROBE);
    await page.goto(url, { timeout: LOAD_TIMEOUT_MS });
    await page.waitForSelector('body[data-ready="true"]', { timeout: LOAD_TIMEOUT_MS });
    const timings = (await page.evaluate(COLLECT)) as LoadTimings;
    if (outside.length > 0) throw new Error(`the page reached beyond the loopback: ${outside.map((o) => o.url).join(', ')}`);
    return timings;
  } finally {
    await context.close();
  }
}

/** Median of each figure over the runs, as table rows `[what, median, min, max]`. */
function rowsOf(runs: LoadTimings[]): string[][] {
  const row = (what: string, pick: (t: LoadTimings) => number, digits = 1): string[] => {
    const values = runs.map(pick);
    return [what, fmt(median(values), digits), fmt(Math.min(...values), digits), fmt(Math.max(...values), digits)];
  };
  return [
    row('navigation → data-ready (ms)', (t) => t.ready),
    row("render: performance mark 'rvm-render' (ms)", (t) => t.render),
    row('GET openapi.json, request to last byte (ms)', (t) => t.spec),
    row('DOMContentLoaded (ms)', (t) => t.domContentLoaded),
    row(`search keystroke "${SEARCH_TEXT}" (ms)`, (t) => t.search, 2),
    row('expand one route (details, Try It, snippets) (ms)', (t) => t.expand, 2),
  ];
}

async function main(): Promise<void> {
  const missing = browserUnavailable();
  if (missing) {
    console.log(`reference render benchmark skipped: ${missing}`);
    return;
  }
  const dir = generateApp(ROUTES);
  const app = await loadApp(dir, { cache: false, dev: true, logger: captureLogger() });
  const server = await startServer(app, { port: 0, host: '127.0.0.1' });
  const browser = await launchChromium();
  try {
    const url = `${server.url}/_app/rest-api`;
    console.log(`reference page render: ${ROUTES} routes, median of ${RUNS} loads in headless Chromium ${browser.version()} — ${machineDescription()}`);
    for (let i = 0; i < WARMUP_RUNS; i++) await loadOnce(browser, url);
    const runs: LoadTimings[] = [];
    for (let i = 0; i < RUNS; i++) runs.push(await loadOnce(browser, url));
    const shown = runs[0]!.routes;
    if (shown !== ROUTES) throw new Error(`the page shows ${shown} routes, expected ${ROUTES}`);
    console.log(`document: ${fmt(runs[0]!.specKiB)} KiB as sent, ${shown} routes shown`);
    console.log(formatTable(['reference page', 'median', 'min', 'max'], rowsOf(runs)));
    const ready = median(runs.map((t) => t.ready));
    console.log(
      ready < TARGET_READY_MS
        ? `target met: ready in ${fmt(ready)} ms < ${TARGET_READY_MS} ms`
        : `TARGET MISSED: ready in ${fmt(ready)} ms ≥ ${TARGET_READY_MS} ms`,
    );
  } finally {
    await browser.close();
    await server.close();
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
