/** The record provider in the registry: one per app, of a checked shape, its methods bound per type with their parameters checked. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { definePlugin, RvmError, type PluginDefinition, type RecordProvider, type RecordType } from '../../plugins/sdk.js';
import { PluginLoadError, loadPlugins } from '../../vm/host/registry.js';
import { TEST_APP, fakeContext } from '../../plugins/testing.js';

function provider(extra: Partial<RecordProvider> = {}): RecordProvider {
  const step = () => null;
  return {
    methods: { find: { params: [{ name: 'id', type: 'text' }], doc: 'Finds one.', fn: (_ctx, type, id) => `${type.name}:${String(id)}` } },
    decorators: ['hidden'],
    save: step,
    delete: step,
    begin: step,
    commit: step,
    rollback: step,
    ...extra,
  };
}

function plugin(name: string, p: RecordProvider): PluginDefinition {
  return definePlugin({ name, version: '1.0.0', setup: (rvm) => rvm.records(p) });
}

async function loadError(definitions: PluginDefinition[]): Promise<PluginLoadError> {
  const error = await loadPlugins(definitions, TEST_APP).then(
    () => assert.fail('expected a load error'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof PluginLoadError);
  return error;
}

const USER: RecordType = { name: 'User', fields: [], doc: null, file: 'a.rvm', line: 1, col: 1, validate: (input) => ({ value: input, errors: null }) };

describe('record provider registration', () => {
  test("a registered provider is the registry's, with its decorators", async () => {
    const registry = await loadPlugins([plugin('store', provider())], TEST_APP);
    assert.equal(registry.records?.plugin, 'store');
    assert.deepEqual([...registry.records!.decorators], ['hidden']);
    assert.deepEqual([...registry.records!.methods.keys()], ['find']);
  });

  test('a method declares what it returns: a record result or a result type', async () => {
    for (const returns of ['record', 'record?', 'records', 'page', 'int', 'bool?']) {
      const registry = await loadPlugins([plugin('store', provider({ methods: { find: { params: [], doc: 'x', returns, fn: () => null } } }))], TEST_APP);
      assert.equal(registry.records!.methods.get('find')!.returns, returns);
    }
  });

  test('a method bound to a type receives the type, its arguments checked against its parameters', async () => {
    const registry = await loadPlugins([plugin('store', provider())], TEST_APP);
    const find = registry.records!.methods.get('find')!.bind(USER);
    assert.equal(find(fakeContext(), 'abc'), 'User:abc');
    assert.throws(
      () => find(fakeContext(), 12),
      (e: unknown) => e instanceof RvmError && e.code === 'type_error' && e.message.includes('User.find()'),
    );
  });

  test('two providers clash, naming both plugins', async () => {
    const error = await loadError([plugin('one', provider()), plugin('two', provider())]);
    assert.equal(error.code, 'E_PLUGIN_CLASH');
    assert.match(error.message, /'one'.*'two'/);
  });

  test('a provider of the wrong shape is refused with the problem', async () => {
    const cases: [Partial<RecordProvider>, RegExp][] = [
      [{ methods: { Find: { params: [], doc: 'x', fn: () => null } } }, /one lower-case word/],
      [{ methods: { find: { params: [], doc: '', fn: () => null } } }, /doc is missing/],
      [{ methods: { find: { params: [{ name: 'a', optional: true }, { name: 'b' }], doc: 'x', fn: () => null } } }, /follows an optional/],
      [
        { methods: { find: { params: [], doc: 'x', returns: 'list of records', fn: () => null } } },
        /method 'find': returns must be record, record\?, records, page or a result type/,
      ],
      [{ decorators: ['no such'] }, /decorators/],
      [{ commit: undefined as unknown as RecordProvider['commit'] }, /commit\(\) is missing/],
    ];
    for (const [extra, message] of cases) {
      const error = await loadError([plugin('bad', provider(extra))]);
      assert.equal(error.code, 'E_PLUGIN_INVALID');
      assert.match(error.message, message);
    }
  });
});
