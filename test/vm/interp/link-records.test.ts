/**
 * Linking the records half of an app against a record provider: types declared to the provider,
 * `Type.method` calls bound to it with what the compiler knew of their arguments, the steps of
 * `save`/`delete`/`transaction` bound to its functions, and the diagnostics when no plugin
 * provides records.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compileSource } from '../../../vm/compiler/compiler.js';
import { link } from '../../../vm/interp/link.js';
import { loadPlugins } from '../../../vm/host/registry.js';
import { definePlugin, UNKNOWN, type KnownArg, type RecordProvider, type RecordType } from '../../../plugins/sdk.js';
import { TEST_APP, fakeContext } from '../../../plugins/testing.js';

const SOURCE = `type User {
  email: text @unique
  age?: int
}

route POST /users {
  u = User.where({ email: body.email, age: { gt: 17 } }, { limit: 5 })
  save u
  transaction { delete u }
}`;

function compiled(source = SOURCE) {
  const result = compileSource('users.rvm', source, { compilerVersion: 'test', pluginsFingerprint: 'test' });
  assert.deepEqual(result.diagnostics, []);
  return result.module!;
}

function recorder() {
  const seen: { declared: RecordType[][]; checks: KnownArg[][]; steps: string[] } = { declared: [], checks: [], steps: [] };
  const step = (name: string) => () => {
    seen.steps.push(name);
    return null;
  };
  const provider: RecordProvider = {
    methods: {
      where: {
        params: [
          { name: 'filter', type: 'object' },
          { name: 'options', type: 'object', optional: true },
        ],
        doc: 'Finds.',
        fn: (_ctx, type) => type.name,
      },
    },
    decorators: ['unique'],
    declare: (types) => void seen.declared.push([...types]),
    checkCall: (_type, _method, args) => {
      seen.checks.push([...args]);
      return null;
    },
    save: step('save'),
    delete: step('delete'),
    begin: step('begin'),
    commit: step('commit'),
    rollback: step('rollback'),
  };
  return { seen, plugin: definePlugin({ name: 'store', version: '1.0.0', setup: (rvm) => rvm.records(provider) }) };
}

describe('linking records', () => {
  test('the provider is told the types and checks what the compiler knew of each call', async () => {
    const { seen, plugin } = recorder();
    const result = link([compiled()], await loadPlugins([plugin], TEST_APP));
    assert.deepEqual(result.diagnostics, []);
    assert.equal(seen.declared.length, 1);
    const [user] = seen.declared[0]!;
    assert.equal(user!.name, 'User');
    assert.deepEqual(
      user!.fields.map((f) => [f.name, f.type, f.optional, f.decorators.map((d) => d.name)]),
      [
        ['email', 'text', false, ['unique']],
        ['age', 'int', true, []],
      ],
    );
    assert.deepEqual([user!.file, user!.line], ['users.rvm', 1]);
    assert.deepEqual(seen.checks, [[{ email: UNKNOWN, age: { gt: 17 } }, { limit: 5 }]]);
    assert.equal(result.types.get('User'), user);
  });

  test('record steps and methods are bound to the provider', async () => {
    const { seen, plugin } = recorder();
    const { program } = link([compiled()], await loadPlugins([plugin], TEST_APP));
    const byName = new Map(program.nativeNames.map((n, i) => [n, program.natives[i]!]));
    assert.deepEqual([...byName.keys()].sort(), [
      'User.where',
      'record delete',
      'record save',
      'record transaction.begin',
      'record transaction.commit',
      'record transaction.rollback',
    ]);
    const ctx = fakeContext();
    assert.equal(byName.get('User.where')!(ctx, {}), 'User');
    for (const name of ['record save', 'record transaction.begin', 'record delete', 'record transaction.commit']) byName.get(name)!(ctx, null);
    assert.deepEqual(seen.steps, ['save', 'begin', 'delete', 'commit']);
  });

  test('a problem from checkCall is E_RECORD_QUERY at the call, with its hint', async () => {
    const { plugin } = recorder();
    const registry = await loadPlugins([plugin], TEST_APP);
    registry.records!.provider.checkCall = () => ({ message: "'emial' is not a field", hint: "did you mean 'email'?" });
    const { diagnostics } = link([compiled()], registry);
    assert.deepEqual(
      diagnostics.map((d) => [d.code, d.line, d.col, d.hint]),
      [['E_RECORD_QUERY', 7, 7, "did you mean 'email'?"]],
    );
  });

  test('without a record provider, record calls and statements are E_UNKNOWN_FUNCTION, once per statement', async () => {
    const { diagnostics } = link([compiled()], await loadPlugins([], TEST_APP));
    assert.deepEqual(
      diagnostics.map((d) => [d.code, d.line]),
      [
        ['E_UNKNOWN_FUNCTION', 7],
        ['E_UNKNOWN_FUNCTION', 8],
        ['E_UNKNOWN_FUNCTION', 9],
        ['E_UNKNOWN_FUNCTION', 9],
      ],
    );
  });
});
