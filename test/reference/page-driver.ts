/**
 * Driving the reference page through its DOM hooks (spec/plugins/reference.md, "Hooks for browser
 * tests"): routes by `data-route`, Try It by `data-testid`, with explicit waits and no sleeps.
 */
import assert from 'node:assert/strict';
import type { Browser, BrowserContextOptions, Locator, Page } from 'playwright-core';
import { loopbackContext, openReference } from './browser-helpers.js';

/** The `<li>` of a route, e.g. `route(page, 'GET /items/{id}')`. */
export function route(page: Page, key: string): Locator {
  return page.locator(`li[data-route="${key}"]`);
}

/** Expands a route by clicking its toggle (no-op when it is open) and waits for its details. */
export async function expand(page: Page, key: string): Promise<Locator> {
  const li = route(page, key);
  const toggle = li.getByTestId('route-toggle');
  if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click();
  await li.locator('[data-testid=route-toggle][aria-expanded="true"]').waitFor();
  await li.locator('.route-details:not([hidden])').waitFor();
  return li;
}

/** What a Send produced: the status shown and the body text. */
export interface Shown {
  status: number;
  body: string;
}

/**
 * Clicks Send in a route's Try It and waits for the new answer: the previous status element is
 * marked first, so an answer equal to the last one is not mistaken for it.
 */
export async function send(li: Locator): Promise<Shown> {
  await li.locator('[data-testid=response-status]').evaluateAll((els) => els.forEach((el) => el.setAttribute('data-stale', '')));
  await li.getByTestId('send').click();
  const status = li.locator('[data-testid=response-status]:not([data-stale])');
  await status.waitFor();
  return { status: Number(await status.getAttribute('data-status')), body: (await li.getByTestId('response-body').textContent()) ?? '' };
}

/** The text of a route's snippet, once its details are open. */
export async function snippet(li: Locator, lang: 'curl' | 'fetch' | 'dart'): Promise<string> {
  return (await li.getByTestId(`snippet-${lang}`).textContent()) ?? '';
}

/** The `data-route` of every route the list shows now (search applied). */
export async function shownRoutes(page: Page): Promise<string[]> {
  return page.locator('li.route:not([hidden])').evaluateAll((els) => els.map((el) => el.getAttribute('data-route') ?? ''));
}

/** A string-expression evaluation: the tests compile without the DOM library. */
export function inPage<T>(page: Page, expression: string): Promise<T> {
  return page.evaluate(expression) as Promise<T>;
}

/** Relative luminance (WCAG) of a CSS `rgb()`/`rgba()` colour. */
export function luminance(css: string): number {
  const [r, g, b] = (css.match(/[\d.]+/g) ?? ['0', '0', '0']).slice(0, 3).map((v) => {
    const c = Number(v) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}

/** Chromium logs a fetch answered 4xx/5xx as a console error; Try It gets those on purpose. */
const EXPECTED_CONSOLE = /Failed to load resource: the server responded with a status of (4|5)\d\d/;

/**
 * Runs `fn` with a page of a fresh context (own cookies and storage), then checks that nothing
 * went wrong in the page: no uncaught error, no console error (a CSP refusal is one), and no
 * request beyond the loopback.
 */
export async function withPage(browser: Browser, options: BrowserContextOptions, fn: (page: Page) => Promise<void>): Promise<void> {
  const { context, outside } = await loopbackContext(browser, options);
  const problems: string[] = [];
  try {
    const page = await context.newPage();
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error' && !EXPECTED_CONSOLE.test(m.text())) problems.push(`console error: ${m.text()}`);
    });
    await fn(page);
    assert.deepEqual(problems, [], 'the page ran without errors');
    assert.deepEqual(outside, [], 'the page reached nothing beyond the loopback');
  } finally {
    await context.close();
  }
}

export { openReference };
