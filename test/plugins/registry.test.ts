import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { definePlugin } from '../../plugins/sdk.js';
import type { NativeMeta, PluginApi, PluginDefinition, ValidatorSpec } from '../../plugins/sdk.js';
import { MAX_ANNOUNCE_TEXT, PluginLoadError, loadPlugins, pluginFingerprint } from '../../vm/host/registry.js';
import { TEST_APP } from '../../plugins/testing.js';

const META: NativeMeta = { params: [], doc: 'Does a thing.' };
const VALIDATOR: ValidatorSpec = {
  types: ['text'],
  params: [],
  doc: 'Checks a thing.',
  message: () => 'must be a thing',
  build: () => () => true,
};

function plugin(name: string, setup: (rvm: PluginApi) => void = () => {}, extra: Partial<PluginDefinition> = {}): PluginDefinition {
  return definePlugin({ name, version: '1.0.0', setup, ...extra });
}

async function rejectsWith(promise: Promise<unknown>, code: string, ...mentions: string[]): Promise<PluginLoadError> {
  let caught: unknown;
  await promise.then(
    () => assert.fail(`expected ${code}`),
    (e: unknown) => {
      caught = e;
    },
  );
  assert.ok(caught instanceof PluginLoadError, `a PluginLoadError, got ${String(caught)}`);
  assert.equal(caught.code, code, caught.message);
  for (const m of mentions) assert.ok(caught.message.includes(`'${m}'`), `message names '${m}': ${caught.message}`);
  return caught;
}

describe('loadPlugins', () => {
  test('collects natives, guards and validators with their plugin', async () => {
    const registry = await loadPlugins(
      [
        plugin('a', (rvm) => {
          rvm.native('slugify', () => null, META);
          rvm.guard('require_header', () => {}, { params: [{ name: 'name', type: 'text' }], doc: 'Needs a header.' });
          rvm.validator('slug_case', { ...VALIDATOR, aliases: ['kebab_case'] });
        }),
      ],
      TEST_APP,
    );
    assert.equal(registry.natives.get('slugify')?.plugin, 'a');
    assert.equal(registry.guards.get('require_header')?.meta.params[0].name, 'name');
    assert.equal(registry.validators.get('slug_case')?.aliasOf, undefined);
    assert.equal(registry.validators.get('kebab_case')?.aliasOf, 'slug_case');
    assert.equal(registry.validators.get('kebab_case')?.spec, registry.validators.get('slug_case')?.spec);
    assert.deepEqual(registry.plugins, [{ name: 'a', version: '1.0.0' }]);
  });

  test('setup sees the app settings and may be async', async () => {
    let seen: unknown;
    const registry = await loadPlugins(
      [
        plugin('a', async (rvm) => {
          seen = rvm.app;
          await new Promise((r) => setTimeout(r, 1));
          rvm.native('late', () => 1, META);
        }) as PluginDefinition,
      ],
      TEST_APP,
    );
    assert.equal(seen, TEST_APP);
    assert.ok(registry.natives.has('late'));
  });

  test('natives, guards and validators are separate namespaces', async () => {
    const registry = await loadPlugins(
      [
        plugin('ratelimit', (rvm) => {
          rvm.native('rate_limit', () => null, META);
          rvm.guard('rate_limit', () => {}, META);
          rvm.validator('rate_limit', VALIDATOR);
        }),
      ],
      TEST_APP,
    );
    assert.ok(registry.natives.has('rate_limit') && registry.guards.has('rate_limit') && registry.validators.has('rate_limit'));
  });

  test('a name registered by two plugins is a clash naming both', async () => {
    const a = plugin('a', (rvm) => rvm.native('slugify', () => null, META));
    const b = plugin('b', (rvm) => rvm.native('slugify', () => null, META));
    await rejectsWith(loadPlugins([a, b], TEST_APP), 'E_PLUGIN_CLASH', 'slugify', 'a', 'b');
    const g1 = plugin('g1', (rvm) => rvm.guard('auth', () => {}, META));
    const g2 = plugin('g2', (rvm) => rvm.guard('auth', () => {}, META));
    await rejectsWith(loadPlugins([g1, g2], TEST_APP), 'E_PLUGIN_CLASH', 'auth', 'g1', 'g2');
  });

  test('a validator alias clashing with another validator is a clash', async () => {
    const a = plugin('a', (rvm) => rvm.validator('minLength', { ...VALIDATOR, aliases: ['min_length'] }));
    const b = plugin('b', (rvm) => rvm.validator('min_length', VALIDATOR));
    await rejectsWith(loadPlugins([a, b], TEST_APP), 'E_PLUGIN_CLASH', 'min_length', 'a', 'b');
  });

  test('a plugin registering a name twice is a clash too', async () => {
    const a = plugin('a', (rvm) => {
      rvm.native('x', () => null, META);
      rvm.native('x', () => null, META);
    });
    await rejectsWith(loadPlugins([a], TEST_APP), 'E_PLUGIN_CLASH', 'x', 'a');
  });

  test('a clash swallowed inside setup still fails the load', async () => {
    const a = plugin('a', (rvm) => rvm.native('x', () => null, META));
    const b = plugin('b', (rvm) => {
      try {
        rvm.native('x', () => null, META);
      } catch {
        // ignored on purpose
      }
    });
    await rejectsWith(loadPlugins([a, b], TEST_APP), 'E_PLUGIN_CLASH', 'a', 'b');
  });

  test('two plugins with the same name are refused', async () => {
    await rejectsWith(loadPlugins([plugin('a'), plugin('a')], TEST_APP), 'E_PLUGIN_DUPLICATE', 'a');
  });

  test('a setup that throws fails with its message', async () => {
    const bad = plugin('broken', () => {
      throw new Error('no database');
    });
    const e = await rejectsWith(loadPlugins([bad], TEST_APP), 'E_PLUGIN_SETUP', 'broken');
    assert.match(e.message, /no database/);
    const rejected = definePlugin({ name: 'async_broken', version: '1', setup: async () => Promise.reject(new Error('boom')) });
    await rejectsWith(loadPlugins([rejected], TEST_APP), 'E_PLUGIN_SETUP', 'async_broken');
  });

  test('registering after setup has finished is refused', async () => {
    let api: PluginApi | null = null;
    await loadPlugins([plugin('a', (rvm) => void (api = rvm))], TEST_APP);
    assert.throws(
      () => api!.native('late', () => null, META),
      (e: unknown) => e instanceof PluginLoadError && e.code === 'E_PLUGIN_INVALID',
    );
  });

  test('registered meta is a private copy', async () => {
    const meta: NativeMeta = { params: [{ name: 'x', type: 'text' }], doc: 'Does a thing.' };
    const registry = await loadPlugins([plugin('a', (rvm) => rvm.native('f', () => null, meta))], TEST_APP);
    meta.params.push({ name: 'y' });
    meta.params[0].name = 'changed';
    assert.deepEqual(registry.natives.get('f')?.meta.params, [{ name: 'x', type: 'text' }]);
  });
});

describe('announce', () => {
  test('collects start lines by label in order; the same plugin replaces its line, also after setup (a provider opening its database)', async () => {
    let api: PluginApi | null = null;
    const registry = await loadPlugins(
      [
        plugin('db', (rvm) => {
          api = rvm;
          rvm.announce('Database', 'SQLite .rvm/data.sqlite');
        }),
        plugin('mail', (rvm) => rvm.announce('Mail', 'SMTP 127.0.0.1:25')),
      ],
      TEST_APP,
    );
    api!.announce('Database', 'PostgreSQL 127.0.0.1:5432/app, pool 10');
    assert.deepEqual(
      [...registry.announcements.values()],
      [
        { label: 'Database', text: 'PostgreSQL 127.0.0.1:5432/app, pool 10', plugin: 'db' },
        { label: 'Mail', text: 'SMTP 127.0.0.1:25', plugin: 'mail' },
      ],
    );
  });

  test("another plugin's label is a clash naming both", async () => {
    const a = plugin('a', (rvm) => rvm.announce('Database', 'one'));
    const b = plugin('b', (rvm) => rvm.announce('Database', 'two'));
    await rejectsWith(loadPlugins([a, b], TEST_APP), 'E_PLUGIN_CLASH', 'Database', 'a', 'b');
  });

  test(`a label that would not align, or a text that is not one line of 1 to ${MAX_ANNOUNCE_TEXT} characters, is invalid`, async () => {
    for (const label of ['', 'database', 'Database engine', 'Store:', 'Dat\nabase', 'Db ']) {
      await rejectsWith(loadPlugins([plugin('a', (rvm) => rvm.announce(label, 'x'))], TEST_APP), 'E_PLUGIN_INVALID', 'a');
    }
    for (const text of ['', 'two\nlines', 'bell\u0007', 'x'.repeat(MAX_ANNOUNCE_TEXT + 1)]) {
      await rejectsWith(loadPlugins([plugin('a', (rvm) => rvm.announce('Database', text))], TEST_APP), 'E_PLUGIN_INVALID', 'a');
    }
    const longest = await loadPlugins([plugin('a', (rvm) => rvm.announce('Message queue', 'x'.repeat(MAX_ANNOUNCE_TEXT)))], TEST_APP);
    assert.equal(longest.announcements.get('Message queue')?.text.length, MAX_ANNOUNCE_TEXT);
  });
});

describe('dependencies', () => {
  test('dependencies load first, otherwise the given order is kept', async () => {
    const order: string[] = [];
    const p = (name: string, dependencies?: string[]) => plugin(name, () => void order.push(name), dependencies ? { dependencies } : {});
    const registry = await loadPlugins([p('app', ['auth']), p('core'), p('auth', ['core', 'crypto']), p('crypto')], TEST_APP);
    assert.deepEqual(order, ['core', 'crypto', 'auth', 'app']);
    assert.deepEqual(
      registry.plugins.map((x) => x.name),
      order,
    );
  });

  test('a missing dependency names both plugins', async () => {
    const p = plugin('auth', () => {}, { dependencies: ['crypto'] });
    await rejectsWith(loadPlugins([p], TEST_APP), 'E_PLUGIN_MISSING_DEPENDENCY', 'auth', 'crypto');
  });

  test('a cycle is refused and shown', async () => {
    const a = plugin('a', () => {}, { dependencies: ['b'] });
    const b = plugin('b', () => {}, { dependencies: ['c'] });
    const c = plugin('c', () => {}, { dependencies: ['a'] });
    await rejectsWith(loadPlugins([a, b, c], TEST_APP), 'E_PLUGIN_CYCLE', 'a', 'b', 'c');
    const self = plugin('self', () => {}, { dependencies: ['self'] });
    await rejectsWith(loadPlugins([self], TEST_APP), 'E_PLUGIN_CYCLE', 'self');
  });
});

describe('invalid definitions', () => {
  const cases: [string, unknown][] = [
    ['no name', { version: '1', setup() {} }],
    ['empty name', { name: '', version: '1', setup() {} }],
    ['no version', { name: 'p', setup() {} }],
    ['no setup', { name: 'p', version: '1' }],
    ['dependencies not a list', { name: 'p', version: '1', setup() {}, dependencies: 'core' }],
    ['not an object', null],
  ];
  for (const [what, definition] of cases) {
    test(what, async () => {
      await rejectsWith(loadPlugins([definition as PluginDefinition], TEST_APP), 'E_PLUGIN_INVALID');
    });
  }

  const registrations: [string, (rvm: PluginApi) => void][] = [
    ['upper-case native name', (rvm) => rvm.native('Slugify', () => null, META)],
    ['native name with a dash', (rvm) => rvm.native('slug-ify', () => null, META)],
    ['native name starting with a digit', (rvm) => rvm.native('1x', () => null, META)],
    ['native name with an empty segment', (rvm) => rvm.native('response..ok', () => null, META)],
    ['native that is not a function', (rvm) => rvm.native('x', 'nope' as never, META)],
    ['meta without params', (rvm) => rvm.native('x', () => null, { doc: 'Doc.' } as NativeMeta)],
    ['meta without doc', (rvm) => rvm.native('x', () => null, { params: [] } as unknown as NativeMeta)],
    ['meta with a blank doc', (rvm) => rvm.native('x', () => null, { params: [], doc: '  ' })],
    ['no meta', (rvm) => rvm.native('x', () => null, undefined as unknown as NativeMeta)],
    ['rest param not last', (rvm) => rvm.native('x', () => null, { params: [{ name: 'a', rest: true }, { name: 'b' }], doc: 'Doc.' })],
    ['optional before required', (rvm) => rvm.native('x', () => null, { params: [{ name: 'a', optional: true }, { name: 'b' }], doc: 'Doc.' })],
    ['duplicate parameter', (rvm) => rvm.native('x', () => null, { params: [{ name: 'a' }, { name: 'a' }], doc: 'Doc.' })],
    ['unknown parameter type', (rvm) => rvm.native('x', () => null, { params: [{ name: 'a', type: 'string' as never }], doc: 'Doc.' })],
    ['bad scope', (rvm) => rvm.native('x', () => null, { params: [], doc: 'Doc.', scope: 'route' as never })],
    ['guard name with a space', (rvm) => rvm.guard('rate limit', () => {}, META)],
    ['guard response without a status', (rvm) => rvm.guard('g', () => {}, { ...META, responses: [{ code: 'x', description: 'y' } as never] })],
    ['validator name with a dot', (rvm) => rvm.validator('a.b', VALIDATOR)],
    ['validator without types', (rvm) => rvm.validator('v', { ...VALIDATOR, types: [] })],
    ['validator with an unknown type', (rvm) => rvm.validator('v', { ...VALIDATOR, types: ['string' as never] })],
    ['validator without build', (rvm) => rvm.validator('v', { ...VALIDATOR, build: undefined as never })],
    ['validator with a bad alias', (rvm) => rvm.validator('v', { ...VALIDATOR, aliases: ['min-length'] })],
    ['validator aliasing itself', (rvm) => rvm.validator('v', { ...VALIDATOR, aliases: ['v'] })],
  ];
  for (const [what, setup] of registrations) {
    test(what, async () => {
      await rejectsWith(loadPlugins([plugin('faulty', setup)], TEST_APP), 'E_PLUGIN_INVALID', 'faulty');
    });
  }

  test('valid names: dotted natives, camelCase validators, optional then rest', async () => {
    const registry = await loadPlugins(
      [
        plugin('fine', (rvm) => {
          rvm.native('response.ok', () => null, {
            params: [
              { name: 'v', optional: true },
              { name: 'more', rest: true },
            ],
            doc: 'Doc.',
          });
          rvm.validator('minLength', VALIDATOR);
        }),
      ],
      TEST_APP,
    );
    assert.ok(registry.natives.has('response.ok'));
    assert.ok(registry.validators.has('minLength'));
  });
});

describe('fingerprint', () => {
  test('is sha256 hex, stable and independent of order', async () => {
    const a = plugin('a');
    const b = plugin('b');
    const one = await loadPlugins([a, b], TEST_APP);
    const two = await loadPlugins([b, a], TEST_APP);
    assert.match(one.fingerprint, /^[0-9a-f]{64}$/);
    assert.equal(one.fingerprint, two.fingerprint);
    assert.equal(
      one.fingerprint,
      pluginFingerprint([
        { name: 'b', version: '1.0.0' },
        { name: 'a', version: '1.0.0' },
      ]),
    );
  });

  test('changes with a version or a plugin', async () => {
    const base = await loadPlugins([plugin('a'), plugin('b')], TEST_APP);
    const bumped = await loadPlugins([plugin('a'), definePlugin({ name: 'b', version: '1.0.1', setup() {} })], TEST_APP);
    const fewer = await loadPlugins([plugin('a')], TEST_APP);
    assert.notEqual(base.fingerprint, bumped.fingerprint);
    assert.notEqual(base.fingerprint, fewer.fingerprint);
  });
});
