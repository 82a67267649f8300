/**
 * Try It sends an optional field only once it is filled in (spec/plugins/reference.md, "Try It"): in Chromium, a
 * PATCH route's optional fields of every kind start empty (their example as the placeholder,
 * "(not sent)" selected) and a Send without touching them sends an empty body; filling two sends
 * those two. A multipart route's optional file left empty is in neither the request nor the
 * snippets, while a required field keeps its prefilled value. Before, every optional field was
 * prefilled with an example and sent (`{}` for an object), and the snippets uploaded a
 * placeholder file for an optional file field.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { browserUnavailable, launchChromium, serveApp, type TestApp } from './browser-helpers.js';
import { expand, openReference, send, snippet, withPage } from './page-driver.js';

/** CI installs Chromium, so there a missing browser is a failure, not a skip. */
const unavailable = process.env.CI ? null : browserUnavailable();
const TEST_TIMEOUT_MS = 60_000;

const FILES = {
  'tasks.rvm': `/// Changes the fields sent, keeps the others.
route PATCH /tasks/:id {
  validate {
    title?: text @minLength(1)
    done?: bool
    state?: text @one_of('open', 'closed')
    priority?: int @min(1)
    tags?: list
    meta?: object
    due?: date
  }
  response.ok(request.body)
}

/// Uploads a caption and, if chosen, a picture.
route POST /posts {
  validate {
    caption: text @minLength(1)
    picture?: file
  }
  response.ok({ caption: body.caption, picture: body.picture })
}
`,
};

const OPTIONAL = ['title', 'done', 'state', 'priority', 'tags', 'meta', 'due'];

describe('Try It and optional fields, in Chromium', { skip: unavailable ?? false, timeout: 120_000 }, () => {
  let browser: Browser;
  let served: TestApp;

  before(async () => {
    browser = await launchChromium();
    served = await serveApp(FILES);
  });

  after(async () => {
    await browser?.close();
    await served?.close();
  });

  test('a PATCH sends nothing but what was filled in', { timeout: TEST_TIMEOUT_MS }, async () => {
    await withPage(browser, {}, async (page) => {
      await openReference(page, served.origin);
      const li = await expand(page, 'PATCH /tasks/{id}');
      for (const name of OPTIONAL) assert.equal(await li.getByTestId(`input-body-${name}`).inputValue(), '', `${name} starts empty`);
      assert.equal(await li.getByTestId('input-body-title').getAttribute('placeholder'), 'Hello world', 'the example shows as the placeholder');
      assert.notEqual(await li.getByTestId('input-path-id').inputValue(), '', 'a required field keeps its prefilled value');

      const untouched = await send(li);
      assert.equal(untouched.status, 200);
      assert.deepEqual(JSON.parse(untouched.body), {}, 'no optional field sent');
      assert.match(await snippet(li, 'curl'), /--data '\{\}'/);

      await li.getByTestId('input-body-title').fill('Renamed');
      await li.getByTestId('input-body-done').selectOption('false');
      const filled = await send(li);
      assert.equal(filled.status, 200);
      assert.deepEqual(JSON.parse(filled.body), { title: 'Renamed', done: false });
      assert.match(await snippet(li, 'curl'), /--data '\{"title":"Renamed","done":false\}'/);
    });
  });

  test('an optional file left empty is not uploaded, by Try It nor by the snippets', { timeout: TEST_TIMEOUT_MS }, async () => {
    await withPage(browser, {}, async (page) => {
      await openReference(page, served.origin);
      const li = await expand(page, 'POST /posts');
      const caption = await li.getByTestId('input-body-caption').inputValue();
      assert.notEqual(caption, '', 'the required caption is prefilled');
      const shown = await send(li);
      assert.equal(shown.status, 200);
      assert.deepEqual(JSON.parse(shown.body), { caption, picture: null });
      for (const lang of ['curl', 'fetch', 'dart'] as const) assert.doesNotMatch(await snippet(li, lang), /picture/, `${lang}: no picture`);
    });
  });
});
