/**
 * The reference page escapes HTML in one place: model.js's esc(), which every other browser
 * module imports (there used to be a second, DOM-based escaper in app.js).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';

const ASSETS = new URL('../../../stdlib/reference/assets/', import.meta.url);
const model = (await import(new URL('model.js', ASSETS).href)) as { esc(value: unknown): string };

test('esc escapes what would open markup or leave an attribute value', () => {
  assert.equal(model.esc(`<a href="x" title='y'>&</a>`), '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  assert.equal(model.esc(null), '');
  assert.equal(model.esc(42), '42');
});

test('no other asset escapes HTML by itself', () => {
  const escapers = readdirSync(ASSETS)
    .filter((name) => name.endsWith('.js'))
    .filter((name) => {
      const source = readFileSync(new URL(name, ASSETS), 'utf8');
      // Writing an entity by hand, or the DOM round trip (`textContent` in, `innerHTML` out).
      return source.includes("'&lt;'") || /\.textContent = \w+;\s*return \w+\.innerHTML/.test(source);
    });
  assert.deepEqual(escapers, ['model.js']);
});
