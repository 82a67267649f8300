import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { HALT, RvmError } from '../../plugins/sdk.js';
import type { Value } from '../../plugins/sdk.js';
import type { PluginRegistry } from '../../vm/host/registry.js';
import slugs, { MAX_SLUG_LENGTH } from '../../plugins/example-plugin/index.js';
import { core } from '../../stdlib/core/index.js';
import { fakeContext, loadForTest, type LoadedPlugins } from '../../plugins/testing.js';

let kit: LoadedPlugins;
let registry: PluginRegistry;

before(async () => {
  // Loaded beside the standard core plugin, as an app would load it.
  kit = await loadForTest([core, slugs]);
  registry = kit.registry;
});

function slugify(...args: Value[]): unknown {
  return kit.call('slugify', ...args);
}

describe('example plugin "slugs"', () => {
  test('registers one native, one guard and one validator with an alias', () => {
    assert.equal(registry.natives.get('slugify')?.plugin, 'slugs');
    assert.equal(registry.guards.get('require_header')?.plugin, 'slugs');
    assert.equal(registry.validators.get('slug_case')?.plugin, 'slugs');
    assert.equal(registry.validators.get('kebab_case')?.aliasOf, 'slug_case');
    assert.deepEqual(
      registry.plugins.map((p) => p.name),
      ['core', 'slugs'],
    );
  });

  test('slugify', () => {
    assert.equal(slugify('Crème Brûlée!'), 'creme-brulee');
    assert.equal(slugify('  Hello,   World  '), 'hello-world');
    assert.equal(slugify('Ünïcödé 2025', '_'), 'unicode_2025');
    assert.equal(slugify('a b', null), 'a-b');
    assert.equal(slugify('!!!'), '');
    const long = slugify('word '.repeat(40)) as string;
    assert.ok(long.length <= MAX_SLUG_LENGTH && !long.endsWith('-') && long.startsWith('word-word'));
    assert.equal((slugify('x'.repeat(200)) as string).length, MAX_SLUG_LENGTH);
    assert.throws(
      () => slugify(5),
      (e: unknown) => e instanceof RvmError && e.code === 'type_error',
    );
    assert.throws(
      () => slugify('a b', '/'),
      (e: unknown) => e instanceof RvmError && e.code === 'invalid_argument',
    );
  });

  test('require_header lets a request with the header through and rejects one without', async () => {
    const guard = registry.guards.get('require_header')!;
    const ok = fakeContext({ request: { headers: { 'x-tenant': 'acme' } } });
    assert.equal(await guard.fn(ok, ['X-Tenant'], { mode: 'required' }), undefined);
    assert.equal(ok.answers.length, 0);

    for (const headers of [{}, { 'x-tenant': '  ' }]) {
      const missing = fakeContext({ request: { headers } });
      assert.equal(await guard.fn(missing, ['X-Tenant'], { mode: 'required' }), HALT);
      assert.equal(missing.failures[0].status, 400);
      assert.equal(missing.failures[0].code, 'missing_header');
    }

    const optional = fakeContext();
    assert.equal(await guard.fn(optional, ['X-Tenant'], { mode: 'optional' }), undefined);
    assert.equal(optional.failures.length, 0);
    assert.deepEqual(
      guard.meta.responses?.map((r) => [r.status, r.code]),
      [[400, 'missing_header']],
    );
  });

  test('@slug_case accepts slugs and refuses everything else', () => {
    const { spec } = registry.validators.get('slug_case')!;
    for (const good of ['hello-world', 'a', 'post-2025', 'x'.repeat(MAX_SLUG_LENGTH)]) assert.equal(spec.build([], 'text')(good, {}), true, good);
    for (const bad of ['Hello', 'a--b', '-a', 'a-', '', 'a_b', 'crème', 'x'.repeat(MAX_SLUG_LENGTH + 1), 5]) {
      assert.equal(spec.build([], 'text')(bad as Value, {}), false, String(bad));
    }
    assert.match(spec.message([], 'text'), /slug/);
    assert.deepEqual(spec.schema?.([], 'text'), { pattern: '^[a-z0-9]+(?:-[a-z0-9]+)*$', maxLength: MAX_SLUG_LENGTH });
  });

  test('whatever slugify makes, @slug_case accepts (or it is empty)', () => {
    const { spec } = registry.validators.get('slug_case')!;
    fc.assert(
      fc.property(fc.string({ maxLength: 300, unit: 'grapheme' }), (text) => {
        const slug = slugify(text) as string;
        return slug === '' || (spec.build([], 'text')(slug, {}) && slugify(slug) === slug);
      }),
    );
  });
});
