/** `rvm natives [DIR]` and spec/natives.md: one list of every native, plugins' included. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NATIVES_DOC_PATH, renderNativesDoc } from '../../tools/gen-natives-doc.js';
import { rvm } from '../support/rvm-command.js';

const SDK = fileURLToPath(new URL('../../plugins/sdk.js', import.meta.url));

test('rvm natives lists every native with its signature, plugin and doc, then the count', async () => {
  const r = await rvm(['natives']);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^len\(x: any\) -> int\s+\[core\]\n {4}Length of a text/m);
  assert.match(r.stdout, /^argon2_hash\(password: text\) -> text\s+\[auth\]$/m);
  assert.match(r.stdout, /^next\(\).*\(middleware only\)/m);
  const count = Number(/^(\d+) natives$/m.exec(r.stdout)?.[1]);
  assert.ok(count > 50, r.stdout.slice(-200));
});

test("rvm natives DIR adds the natives of the app's own plugins", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rvm-natives-'));
  try {
    writeFileSync(
      join(dir, 'greet.mjs'),
      `import { definePlugin } from ${JSON.stringify(SDK)};\n` +
        "export default definePlugin({ name: 'greet', version: '1.0.0', setup(rvm) { rvm.native('greet', (_c, who) => 'hi ' + who, { params: [{ name: 'who', type: 'text' }], returns: 'text', doc: 'A greeting.' }); } });\n",
    );
    writeFileSync(join(dir, 'rvm.config.json'), JSON.stringify({ plugins: ['./greet.mjs'] }));
    const r = await rvm(['natives', dir]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^greet\(who: text\) -> text\s+\[greet\]\n {4}A greeting\.$/m);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('spec/natives.md is up to date', async () => {
  let committed = '';
  try {
    committed = readFileSync(NATIVES_DOC_PATH, 'utf8');
  } catch {
    // An absent file fails the comparison below with the same advice.
  }
  assert.ok(committed === (await renderNativesDoc()), 'spec/natives.md is out of date: run `npx tsc -p . && node dist/tools/gen-natives-doc.js`');
});
