/**
 * API reference benchmark: an app of 500 varied routes (path params, wildcards, query and
 * validate blocks, file uploads, plugin and app guards), timing the OpenAPI document built cold
 * (introspection + document + JSON/YAML text, as the first request after a reload pays) and
 * served from the per-generation cache. Target: the cold 3.1 JSON under 50 ms.
 *
 * Run: `node dist/bench/reference.js`. Env: BENCH_ROUTES (default 500), BENCH_RUNS (default 20).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import type { App } from '../vm/runtime/app.js';
import { loadApp } from '../tools/host.js';
import { inject } from '../vm/runtime/http/inject.js';
import { captureLogger } from '../vm/runtime/log.js';
import { buildOpenApi } from '../stdlib/reference/openapi.js';
import { renderedSpec } from '../stdlib/reference/openapi-cache.js';
import { toYaml } from '../stdlib/reference/yaml.js';
import { fmt, formatTable, machineDescription, median } from './util.js';

/** Routes of the generated app: the size the reference must stay fast at (spec/plugins/reference.md). */
const ROUTES = Number(process.env.BENCH_ROUTES) > 0 ? Number(process.env.BENCH_ROUTES) : 500;
/** Timed repetitions per measurement; the median is reported. */
const RUNS = Number(process.env.BENCH_RUNS) > 0 ? Number(process.env.BENCH_RUNS) : 20;
/**
 * Untimed runs first: a server that has been serving has its code compiled by the JIT, so the
 * figure is what a request after a file change pays, not the process's first ever build.
 */
const WARMUP_RUNS = 3;
/** Routes per generated file, as a real app splits them. */
const ROUTES_PER_FILE = 20;
/** The target: the whole document, cold, in under this many milliseconds. */
const TARGET_COLD_MS = 50;
/** Calls averaged for the cached figure (each is a map lookup, far below timer resolution). */
const CACHED_CALLS = 10_000;

/** The i-th route: one of eight shapes, so every part of the document is exercised. */
function routeSource(i: number): string {
  const base = `/r${Math.floor(i / ROUTES_PER_FILE)}/item${i}`;
  switch (i % 8) {
    case 0:
      return `/// Lists things ${i}.\nroute GET ${base} {\n  query {\n    q?: text @minLength(1) @maxLength(50)\n    page?: int @min(1) @default(1)\n    tags?: list @max(5)\n  }\n  response.ok([{ id: 1, name: 'x' }])\n}\n`;
    case 1:
      return `/// Reads one ${i}.\nroute GET ${base}/:id {\n  guard auth\n  if params.id == '0' {\n    response.not_found('none')\n  }\n  response.ok({ id: params.id, n: ${i} })\n}\n`;
    case 2:
      return `/// Creates one ${i}.\n/// With a longer description.\nroute POST ${base} {\n  guards {\n    auth: required\n    role('admin', 'editor'): required\n    rate_limit(10, 60): required\n  }\n  validate {\n    /// The name.\n    name: text @minLength(2) @maxLength(80)\n    email: text @email\n    age?: int @range(18, 130)\n    role: text @one_of('user', 'admin') @default('user')\n    price?: number @min(0) @multiple_of(0.01)\n    when?: datetime\n  }\n  response.created(body)\n}\n`;
    case 3:
      return `route PUT ${base}/:id/photo {\n  guard api_key\n  validate {\n    photo: file @image @max_size('2mb')\n    caption?: text @maxLength(200)\n  }\n  response.no_content()\n}\n`;
    case 4:
      return `route DELETE ${base}/:id {\n  guard csrf\n  guard premium_user\n  response.no_content()\n}\n`;
    case 5:
      return `route GET ${base}/files/*path {\n  guards {\n    auth: optional\n  }\n  response.text("file \${params.path}")\n}\n`;
    case 6:
      return `route PATCH ${base}/:id {\n  validate {\n    name?: text @slug\n    active?: bool\n    meta?: object\n  }\n  if body.name == 'taken' {\n    response.conflict('taken')\n  }\n  response.ok({ id: params.id, name: body.name })\n}\n`;
    default:
      return `route GET ${base}/:a/:b {\n  guard ip('10.0.0.0/8')\n  response.ok({ a: params.a, b: params.b, ok: true, nothing: null })\n}\n`;
  }
}

/** Writes the generated app of `routes` routes into a temporary folder and returns it. */
export function generateApp(routes: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'rvm-bench-reference-'));
  writeFileSync(
    join(dir, 'guards.rvm'),
    `/// Premium callers only.\nguard_definition premium_user {\n  if request.headers['x-plan'] != 'premium' {\n    fail 403 'Premium required'\n  }\n}\n`,
  );
  for (let file = 0; file * ROUTES_PER_FILE < routes; file++) {
    const count = Math.min(ROUTES_PER_FILE, routes - file * ROUTES_PER_FILE);
    const text = Array.from({ length: count }, (_, k) => routeSource(file * ROUTES_PER_FILE + k)).join('\n');
    writeFileSync(join(dir, `r${file}.rvm`), text);
  }
  return dir;
}

/** Median wall time of `fn` over RUNS runs, in milliseconds. */
async function timeMs(fn: () => unknown): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    await fn();
    samples.push(performance.now() - start);
  }
  return median(samples);
}

/** The spec timings of the reference benchmark, as table rows `[what, ms]`. */
export async function runReferenceSpecBench(app: App): Promise<string[][]> {
  const intro = app.introspection;
  const rows: string[][] = [];
  const cold = async (what: string, fn: () => unknown): Promise<number> => {
    const samples: number[] = [];
    for (let i = 0; i < WARMUP_RUNS + RUNS; i++) {
      // A reload bumps the generation: each run pays for introspection and the build again.
      await app.reload();
      const start = performance.now();
      fn();
      if (i >= WARMUP_RUNS) samples.push(performance.now() - start);
    }
    const ms = median(samples);
    rows.push([what, fmt(ms, 2)]);
    return ms;
  };
  const json31 = await cold('cold 3.1 JSON (reload, then first request)', () => renderedSpec(intro, '3.1', 'json'));
  await cold('cold 3.0 JSON', () => renderedSpec(intro, '3.0', 'json'));
  await cold('cold 3.1 YAML', () => renderedSpec(intro, '3.1', 'yaml'));
  rows.push(['build 3.1 document only (routes introspected)', fmt(await timeMs(() => buildOpenApi(intro, { version: '3.1' })), 2)]);
  const doc = buildOpenApi(intro, { version: '3.1' });
  rows.push(['JSON.stringify of the document', fmt(await timeMs(() => JSON.stringify(doc, null, 2)), 2)]);
  rows.push(['YAML emit of the document', fmt(await timeMs(() => toYaml(doc)), 2)]);
  renderedSpec(intro, '3.1', 'json');
  const start = performance.now();
  for (let i = 0; i < CACHED_CALLS; i++) renderedSpec(intro, '3.1', 'json');
  rows.push(['cached rendering (per call)', fmt((performance.now() - start) / CACHED_CALLS, 4)]);
  rows.push(['GET openapi.json, cached (inject)', fmt(await timeMs(() => inject(app, { url: '/_app/rest-api/openapi.json' })), 2)]);
  const etag = String((await inject(app, { url: '/_app/rest-api/openapi.json' })).headers.etag);
  rows.push([
    'GET openapi.json, 304 with If-None-Match',
    fmt(await timeMs(() => inject(app, { url: '/_app/rest-api/openapi.json', headers: { 'if-none-match': etag } })), 2),
  ]);
  const size = renderedSpec(intro, '3.1', 'json').text.length;
  console.log(`document: ${fmt(size / 1024)} KiB of JSON, ${Object.keys(doc.paths as object).length} paths`);
  console.log(
    json31 < TARGET_COLD_MS
      ? `target met: cold 3.1 JSON ${fmt(json31, 1)} ms < ${TARGET_COLD_MS} ms`
      : `TARGET MISSED: cold 3.1 JSON ${fmt(json31, 1)} ms ≥ ${TARGET_COLD_MS} ms`,
  );
  return rows;
}

async function main(): Promise<void> {
  const dir = generateApp(ROUTES);
  const app = await loadApp(dir, { cache: false, dev: true, logger: captureLogger() });
  try {
    console.log(`reference benchmark: ${ROUTES} routes, median of ${RUNS} runs — ${machineDescription()}`);
    const rows = await runReferenceSpecBench(app);
    console.log(formatTable(['OpenAPI spec', 'ms'], rows));
  } finally {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
