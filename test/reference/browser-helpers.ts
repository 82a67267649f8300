/**
 * Shared pieces of the browser tests and the render benchmark: Debian's Chromium driven by
 * playwright-core (no browser download), a temporary app served on an ephemeral loopback port in
 * dev mode with hot reload, a tiny real PNG, and the axe-core WCAG pass.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { deflateSync } from 'node:zlib';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';
import type { App } from '../../vm/runtime/app.js';
import { loadApp } from '../../tools/host.js';
import { captureLogger } from '../../vm/runtime/log.js';
import { startServer, type RunningServer } from '../../vm/runtime/http/server.js';
import { makeTempFolder, writeFiles } from '../support/temp-app.js';

/** Debian's `chromium` package; `.ci/run` installs it when missing. */
export const CHROMIUM_PATH = process.env.RVM_CHROMIUM ?? '/usr/bin/chromium';

/**
 * Flags for a quiet, offline headless run: no sandbox (CI runs as root), no GPU, and none of the
 * background services (updates, sync, QUIC probes) that would reach outside the loopback; the
 * resolver maps every host name to nothing, so even a stray URL cannot leave the machine.
 */
export const CHROMIUM_ARGS: readonly string[] = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
];

/** Longest wait for a page hook (a render, an answer, a live reload); generous for a loaded CI machine. */
export const HOOK_TIMEOUT_MS = 15_000;

/** WCAG 2.1 AA as axe-core tags it (2.0 A/AA are part of 2.1 AA). */
export const WCAG_21_AA_TAGS: readonly string[] = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

/** Why the browser tests cannot run here, or null when they can. */
export function browserUnavailable(): string | null {
  if (existsSync(CHROMIUM_PATH)) return null;
  return `no Chromium at ${CHROMIUM_PATH} (apt-get install chromium; .ci/run does)`;
}

/** Launches headless Chromium; playwright gives each launch a fresh temporary profile. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: [...CHROMIUM_ARGS], headless: true });
}

/** A request the page made to somewhere other than the loopback. */
export interface OutsideRequest {
  url: string;
}

/**
 * A fresh context (own cookies and storage) that records every request leaving the loopback,
 * so a test can assert that the page is self-contained.
 */
export async function loopbackContext(browser: Browser, options: BrowserContextOptions = {}): Promise<{ context: BrowserContext; outside: OutsideRequest[] }> {
  const context = await browser.newContext({ ...options });
  context.setDefaultTimeout(HOOK_TIMEOUT_MS);
  const outside: OutsideRequest[] = [];
  context.on('request', (req) => {
    const url = new URL(req.url());
    if (url.protocol === 'data:' || url.protocol === 'blob:' || url.protocol === 'about:') return;
    if (url.hostname !== '127.0.0.1' && url.hostname !== 'localhost' && url.hostname !== '[::1]') outside.push({ url: req.url() });
  });
  return { context, outside };
}

/** A running temporary app: its folder, its origin, and how to change its files. */
export interface TestApp {
  dir: string;
  origin: string;
  app: App;
  /** Writes (or rewrites) a file of the app, relative to its folder. */
  write(path: string, text: string): void;
  close(): Promise<void>;
}

/**
 * Writes `files` into a fresh folder, loads it in dev mode with `settings`, watches it and serves
 * it on 127.0.0.1 at an ephemeral port.
 */
export async function serveApp(files: Record<string, string | Buffer>, settings: Record<string, unknown> = {}): Promise<TestApp> {
  const dir = makeTempFolder(files);
  const write = (path: string, text: string | Buffer): void => writeFiles(dir, { [path]: text });
  let app: App | null = null;
  let server: RunningServer | null = null;
  try {
    app = await loadApp(dir, { cache: false, dev: true, logger: captureLogger(), settings });
    app.watch();
    server = await startServer(app, { port: 0, host: '127.0.0.1' });
  } catch (e) {
    await app?.close();
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  const running = server;
  const loaded = app;
  return {
    dir,
    origin: running.url,
    app: loaded,
    write,
    async close() {
      await running.close();
      await loaded.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Opens the reference page and waits for its first render. */
export async function openReference(page: Page, origin: string, hash = ''): Promise<void> {
  await page.goto(`${origin}/_app/rest-api${hash}`);
  await page.waitForSelector('body[data-ready="true"]');
}

/** The table CRC-32 of PNG chunks (ISO 3309), built once. */
const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Buffer): number {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function pngChunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** A valid `size`×`size` RGBA PNG in one colour: a real image for the `@image` upload. */
export function tinyPng(size = 2, rgba: [number, number, number, number] = [200, 40, 40, 255]): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header[8] = 8; // bit depth
  header[9] = 6; // colour type RGBA
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: size }, () => rgba).flat())]);
  const pixels = Buffer.concat(Array.from({ length: size }, () => row));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    pngChunk('IDAT', deflateSync(pixels)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** One axe-core finding, reduced to what a report needs: a violation, or a check axe leaves to a human. */
export interface AxeFinding {
  kind: 'violation' | 'review';
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

let axeSource: string | null = null;

/**
 * Runs axe-core's WCAG 2.1 AA rules on the page as it is now: its violations, and the checks it
 * could not decide ("needs review"). The source is evaluated through the DevTools protocol, which
 * the page's strict CSP (no inline script) does not govern.
 */
export async function axeScan(page: Page): Promise<AxeFinding[]> {
  axeSource ??= readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  if (!(await page.evaluate("typeof window.axe === 'object'"))) await page.evaluate(axeSource);
  // A string, not a function: the tests compile without the DOM library.
  const options = JSON.stringify({ runOnly: { type: 'tag', values: WCAG_21_AA_TAGS }, resultTypes: ['violations', 'incomplete'] });
  const brief = "(kind) => (v) => ({ kind, id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.map(String).join(' ')) })";
  return page.evaluate(
    `axe.run(document, ${options}).then((r) => { const f = ${brief}; return [...r.violations.map(f('violation')), ...r.incomplete.map(f('review'))]; })`,
  ) as Promise<AxeFinding[]>;
}
