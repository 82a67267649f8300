import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolvePlugins } from '../../vm/host/loader.js';
import { PluginLoadError } from '../../vm/host/registry.js';

let dir: string;

function write(path: string, text: string): void {
  const file = join(dir, path);
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, text);
}

const definition = (name: string) => `export default { name: '${name}', version: '1.0.0', setup(rvm) {} };\n`;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'rvm-loader-'));
  write('plugins/local.mjs', definition('local'));
  write('plugins/named.mjs', `export const plugin = { name: 'named', version: '2.0.0', setup() {} };\n`);
  write('plugins/empty.mjs', 'export const nothing = 1;\n');
  write('plugins/half.mjs', `export default { name: 'half', setup() {} };\n`);
  write('plugins/broken.mjs', 'export default {;\n');
  write('plugins/throws.mjs', `throw new Error('cannot start');\n`);
  // An ESM package with an exports map, a CommonJS package with main, and a scoped one.
  write(
    'node_modules/rvm-plugin-esm/package.json',
    JSON.stringify({ name: 'rvm-plugin-esm', type: 'module', exports: { '.': { import: './lib/index.js', require: './lib/index.cjs' } } }),
  );
  write('node_modules/rvm-plugin-esm/lib/index.js', definition('esm'));
  write('node_modules/rvm-plugin-cjs/package.json', JSON.stringify({ name: 'rvm-plugin-cjs', main: 'main.js' }));
  write('node_modules/rvm-plugin-cjs/main.js', `module.exports = { name: 'cjs', version: '1.0.0', setup() {} };\n`);
  write('node_modules/@acme/rvm-tools/package.json', JSON.stringify({ name: '@acme/rvm-tools', type: 'module', exports: './index.js' }));
  write('node_modules/@acme/rvm-tools/index.js', definition('acme'));
  write('node_modules/rvm-plugin-hidden/package.json', JSON.stringify({ name: 'rvm-plugin-hidden', exports: { './other': './other.js' } }));
  write('app/rvm.config.json', '{}');
});

after(() => rmSync(dir, { recursive: true, force: true }));

async function rejectsWith(promise: Promise<unknown>, code: string, spec: string): Promise<void> {
  await assert.rejects(promise, (e: unknown) => {
    assert.ok(e instanceof PluginLoadError, String(e));
    assert.equal(e.code, code, e.message);
    assert.ok(e.message.includes(spec), `message names the spec: ${e.message}`);
    return true;
  });
}

describe('resolvePlugins', () => {
  test('loads a relative path plugin, default or named export, in order', async () => {
    const defs = await resolvePlugins(['./plugins/local.mjs', './plugins/named.mjs'], dir);
    assert.deepEqual(
      defs.map((d) => [d.name, d.version]),
      [
        ['local', '1.0.0'],
        ['named', '2.0.0'],
      ],
    );
    assert.equal(typeof defs[0].setup, 'function');
  });

  test('paths are relative to the app dir; absolute paths work', async () => {
    const [up] = await resolvePlugins(['../plugins/local.mjs'], join(dir, 'app'));
    assert.equal(up.name, 'local');
    const [abs] = await resolvePlugins([join(dir, 'plugins', 'local.mjs')], '/');
    assert.equal(abs.name, 'local');
  });

  test('resolves packages from the app dir: exports map, main, scoped, from a subfolder', async () => {
    const defs = await resolvePlugins(['rvm-plugin-esm', 'rvm-plugin-cjs', '@acme/rvm-tools'], dir);
    assert.deepEqual(
      defs.map((d) => d.name),
      ['esm', 'cjs', 'acme'],
    );
    const [nested] = await resolvePlugins(['rvm-plugin-esm'], join(dir, 'app'));
    assert.equal(nested.name, 'esm');
  });

  test('a missing path or package is E_PLUGIN_NOT_FOUND naming the spec', async () => {
    await rejectsWith(resolvePlugins(['./plugins/missing.mjs'], dir), 'E_PLUGIN_NOT_FOUND', './plugins/missing.mjs');
    await rejectsWith(resolvePlugins(['./plugins'], dir), 'E_PLUGIN_NOT_FOUND', './plugins');
    await rejectsWith(resolvePlugins(['rvm-plugin-nowhere'], dir), 'E_PLUGIN_NOT_FOUND', 'rvm-plugin-nowhere');
    await rejectsWith(resolvePlugins(['rvm-plugin-hidden'], dir), 'E_PLUGIN_NOT_FOUND', 'rvm-plugin-hidden');
  });

  test('a module without a definition, or failing to load, is E_PLUGIN_INVALID naming the spec', async () => {
    await rejectsWith(resolvePlugins(['./plugins/empty.mjs'], dir), 'E_PLUGIN_INVALID', './plugins/empty.mjs');
    await rejectsWith(resolvePlugins(['./plugins/half.mjs'], dir), 'E_PLUGIN_INVALID', './plugins/half.mjs');
    await rejectsWith(resolvePlugins(['./plugins/broken.mjs'], dir), 'E_PLUGIN_INVALID', './plugins/broken.mjs');
    await rejectsWith(resolvePlugins(['./plugins/throws.mjs'], dir), 'E_PLUGIN_INVALID', './plugins/throws.mjs');
  });

  test('an empty or non-text spec is E_PLUGIN_INVALID', async () => {
    await assert.rejects(resolvePlugins([''], dir), (e: unknown) => e instanceof PluginLoadError && e.code === 'E_PLUGIN_INVALID');
    await assert.rejects(resolvePlugins([42 as unknown as string], dir), (e: unknown) => e instanceof PluginLoadError && e.code === 'E_PLUGIN_INVALID');
  });
});
