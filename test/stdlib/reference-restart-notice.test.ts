/**
 * Dev mode (spec/plugins/reference.md, "Endpoints"): a changed plugin file cannot be reloaded in process (node caches
 * ES modules), so until a restart the reference says so — in the document (`x-rvm-restart-needed`,
 * `info.description`) and on the page (a "Restart needed" box) — and a new process clears it.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadApp } from '../../tools/host.js';
import type { App } from '../../vm/runtime/app.js';
import { inject } from '../../vm/runtime/http/inject.js';
import { captureLogger } from '../../vm/runtime/log.js';
import { tempApp } from '../support/temp-app.js';

type Doc = Record<string, any>;

const PLUGIN =
  "export default { name: 'greeter', version: '1.0.0', setup(rvm) { rvm.native('greet', () => 'hi', { params: [], returns: 'text', doc: 'Says hi.' }) } }\n";
const ROUTE = 'route GET /a {\n  response.ok({ a: greet() })\n}\n';
const WITH_PLUGIN = { 'a.rvm': ROUTE, 'plugins/greeter.mjs': PLUGIN, 'rvm.config.json': JSON.stringify({ plugins: ['./plugins/greeter.mjs'] }) };
/** How long a watcher event may take to arrive. */
const WATCH_WAIT_MS = 3_000;

async function load(dir: string): Promise<App> {
  return loadApp(dir, { cache: false, dev: true, logger: captureLogger() });
}

async function spec(app: App): Promise<Doc> {
  return (await inject(app, { url: '/_app/rest-api/openapi.json' })).json() as Doc;
}

/** Polls the document until `done` holds or the wait is over; returns the last document. */
async function specWhen(app: App, done: (doc: Doc) => boolean): Promise<Doc> {
  let doc = await spec(app);
  for (let waited = 0; !done(doc) && waited < WATCH_WAIT_MS; waited += 20) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    doc = await spec(app);
  }
  return doc;
}

describe('reference: the restart notice after a plugin file changed', () => {
  test('the document lists the changed file and says "Restart needed" until a new process loads the app', async (t) => {
    const dir = tempApp(t, WITH_PLUGIN);
    const app = await load(dir);
    try {
      const before = await spec(app);
      assert.deepEqual(before['x-rvm-restart-needed'], []);
      assert.doesNotMatch(before.info.description, /Restart needed/);
      app.watch();
      writeFileSync(join(dir, 'plugins', 'greeter.mjs'), PLUGIN.replace("'hi'", "'hello'"));
      const after = await specWhen(app, (d) => d['x-rvm-restart-needed'].length > 0);
      assert.deepEqual(after['x-rvm-restart-needed'], ['plugins/greeter.mjs']);
      assert.match(after.info.description, /^\*\*Restart needed\*\*: plugins\/greeter\.mjs changed; .*restarts/);
      assert.ok(after['x-rvm-generation'] > before['x-rvm-generation'], 'open pages are told (the generation moved)');
      // The old code still runs: that is why the notice is there.
      assert.deepEqual((await inject(app, { url: '/a' })).json(), { a: 'hi' });
      // A route file's reload does not clear it: the plugin is still the old one.
      writeFileSync(join(dir, 'a.rvm'), `${ROUTE}route GET /b {\n  response.ok(1)\n}\n`);
      const reloaded = await specWhen(app, (d) => d.paths['/b'] !== undefined);
      assert.ok(reloaded.paths['/b']);
      assert.deepEqual(reloaded['x-rvm-restart-needed'], ['plugins/greeter.mjs']);
    } finally {
      await app.close();
    }
    const restarted = await load(dir);
    try {
      assert.deepEqual((await spec(restarted))['x-rvm-restart-needed'], [], 'a new process has no notice');
    } finally {
      await restarted.close();
    }
  });

  for (const lists of [false, true]) {
    test(`tests and scripts are no plugins: editing them never asks for a restart (an app that lists ${lists ? 'a plugin' : 'none'})`, async (t) => {
      const files = {
        'a.rvm': 'route GET /a {\n  response.ok(1)\n}\n',
        'test/app.test.mjs': '// a test\n',
        'scripts/seed.mjs': '// a script\n',
        'helper.js': '// a helper\n',
      };
      const dir = tempApp(t, lists ? { ...WITH_PLUGIN, ...files } : files);
      const log = captureLogger();
      const app = await loadApp(dir, { cache: false, dev: true, logger: log });
      try {
        app.watch();
        writeFileSync(join(dir, 'test', 'app.test.mjs'), '// edited\n');
        writeFileSync(join(dir, 'scripts', 'seed.mjs'), '// edited\n');
        writeFileSync(join(dir, 'helper.js'), '// edited\n');
        // A route edit after it: once that shows, the test file's event was seen too.
        writeFileSync(join(dir, 'a.rvm'), 'route GET /b {\n  response.ok(1)\n}\n');
        const doc = await specWhen(app, (d) => d.paths['/b'] !== undefined);
        assert.ok(doc.paths['/b']);
        assert.deepEqual(doc['x-rvm-restart-needed'], []);
        assert.equal(log.lines.filter((l) => l.includes('restart rvm run')).length, 0, log.lines.join('\n'));
      } finally {
        await app.close();
      }
    });
  }

  test("a module beside a listed plugin's file, in its own folder, is plugin code", async (t) => {
    const dir = tempApp(t, { ...WITH_PLUGIN, 'plugins/words.mjs': "export const HI = 'hi';\n" });
    const app = await load(dir);
    try {
      app.watch();
      writeFileSync(join(dir, 'plugins', 'words.mjs'), "export const HI = 'hello';\n");
      const doc = await specWhen(app, (d) => d['x-rvm-restart-needed'].length > 0);
      assert.deepEqual(doc['x-rvm-restart-needed'], ['plugins/words.mjs']);
    } finally {
      await app.close();
    }
  });
});

interface RenderModule {
  renderRestartNotice(files: unknown): string;
}

describe('reference page: the "Restart needed" box', () => {
  test('names every changed file, escaped; nothing when the list is empty or missing', async () => {
    const { renderRestartNotice } = (await import(new URL('../../../stdlib/reference/assets/render.js', import.meta.url).href)) as RenderModule;
    assert.equal(renderRestartNotice([]), '');
    assert.equal(renderRestartNotice(undefined), '');
    const box = renderRestartNotice(['plugins/greeter.mjs', '<img src=x>.js']);
    assert.match(box, /data-testid="restart-notice"/);
    assert.match(box, /<h2 id="restart-title">Restart needed<\/h2>/);
    assert.match(box, /<li><code>plugins\/greeter\.mjs<\/code><\/li>/);
    assert.match(box, /&lt;img src=x&gt;\.js/);
    assert.doesNotMatch(box, /<img/);
  });
});
