/**
 * Argument checks driven by ParamSpec: the registry wraps each native so its body receives
 * arguments of the declared types, with the type_error wording the natives used to write by hand.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { HostObject, RvmError, SecretText, definePlugin } from '../../plugins/sdk.js';
import type { NativeFn, ParamSpec, Value } from '../../plugins/sdk.js';
import { checkedNative } from '../../vm/host/checked-native.js';
import { PluginLoadError, loadPlugins } from '../../vm/host/registry.js';
import { fakeContext, loadForTest, TEST_APP } from '../../plugins/testing.js';

/** The arguments the body received, so a test sees what got through. */
const echo: NativeFn = (_ctx, ...args) => args;

function wrapped(params: ParamSpec[]): (...args: (Value | undefined)[]) => unknown {
  const fn = checkedNative('f', echo, params);
  return (...args) => fn(fakeContext(), ...(args as Value[]));
}

function refuses(call: () => unknown, message: string): void {
  assert.throws(call, (e: unknown) => e instanceof RvmError && e.code === 'type_error' && e.message === message);
}

class Headers extends HostObject {
  readonly typeName = 'headers';
  get(): Value | undefined {
    return undefined;
  }
  toJSON(): unknown {
    return {};
  }
}

describe('checkedNative', () => {
  test('each type lets its values through and refuses others with the native and parameter named', () => {
    const cases: [ParamSpec['type'], Value[], [Value, string][]][] = [
      [
        'text',
        ['', 'a'],
        [
          [1, 'int'],
          [null, 'null'],
          [new SecretText('k'), 'secret'],
        ],
      ],
      [
        'int',
        [0, -3, 2 ** 40],
        [
          [1.5, 'number'],
          ['1', 'text'],
        ],
      ],
      [
        'number',
        [1.5, 0, -2],
        [
          ['1', 'text'],
          [true, 'bool'],
        ],
      ],
      [
        'bool',
        [true, false],
        [
          [0, 'int'],
          [null, 'null'],
        ],
      ],
      [
        'list',
        [[], [1, 'a']],
        [
          [{}, 'object'],
          ['a', 'text'],
        ],
      ],
      [
        'object',
        [{}, { a: 1 }, new Headers()],
        [
          [[], 'list'],
          [null, 'null'],
          ['a', 'text'],
        ],
      ],
    ];
    const expected: Record<string, string> = { text: 'text', int: 'an int', number: 'a number', bool: 'a bool', list: 'a list', object: 'an object' };
    for (const [type, good, bad] of cases) {
      const f = wrapped([{ name: 'x', type }]);
      for (const v of good) assert.deepEqual(f(v), [v], `${type} takes ${JSON.stringify(v)}`);
      for (const [v, name] of bad) refuses(() => f(v), `f() expects x to be ${expected[type!]}, got ${name}`);
    }
  });

  test('a number must be finite', () => {
    const f = wrapped([{ name: 'x', type: 'number' }]);
    refuses(() => f(Number.NaN), 'f() expects x to be a number, got number');
    refuses(() => f(Number.POSITIVE_INFINITY), 'f() expects x to be a number, got number');
  });

  test('arguments are checked in order, so the first wrong one is named', () => {
    const f = wrapped([
      { name: 's', type: 'text' },
      { name: 'n', type: 'int' },
    ]);
    refuses(() => f(1, 'x'), 'f() expects s to be text, got int');
    refuses(() => f('a', 'x'), 'f() expects n to be an int, got text');
  });

  test('an optional parameter may be null or left out, but not of another type', () => {
    const f = wrapped([
      { name: 's', type: 'text' },
      { name: 'sep', type: 'text', optional: true },
    ]);
    assert.deepEqual(f('a'), ['a', undefined]);
    assert.deepEqual(f('a', null), ['a', null]);
    assert.deepEqual(f('a', ','), ['a', ',']);
    refuses(() => f('a', 1), 'f() expects sep to be text, got int');
  });

  test('every argument a rest parameter takes is checked; none is fine', () => {
    const f = wrapped([
      { name: 'first', type: 'text' },
      { name: 'more', type: 'int', rest: true },
    ]);
    assert.deepEqual(f('a'), ['a']);
    assert.deepEqual(f('a', 1, 2, 3), ['a', 1, 2, 3]);
    refuses(() => f('a', 1, 'x'), 'f() expects more to be an int, got text');
  });

  test('any, an untyped or a self-checked parameter passes whatever came', () => {
    const f = wrapped([{ name: 'a', type: 'any' }, { name: 'b' }, { name: 'c', type: 'int', selfChecked: true }, { name: 'd', type: 'text' }]);
    assert.deepEqual(f(null, [1], 'not an int', 'x'), [null, [1], 'not an int', 'x']);
    refuses(() => f(null, null, null, 5), 'f() expects d to be text, got int');
  });

  test('a native with nothing to check is registered as it is: no wrapper on its calls', () => {
    assert.equal(checkedNative('f', echo, []), echo);
    assert.equal(
      checkedNative('f', echo, [
        { name: 'x', type: 'any' },
        { name: 'y', type: 'text', selfChecked: true },
        { name: 'r', rest: true },
      ]),
      echo,
    );
    assert.notEqual(checkedNative('f', echo, [{ name: 'x', type: 'text' }]), echo);
  });

  test('names reach the message as data, never as code', () => {
    const fn = checkedNative("f'); throw 1; ('", echo, [{ name: 'x', type: 'text' }]);
    assert.throws(
      () => fn(fakeContext(), 1),
      (e: unknown) => e instanceof RvmError && e.message === "f'); throw 1; ('() expects x to be text, got int",
    );
  });
});

describe('the registry checks natives by their params', () => {
  test('a registered native refuses a wrong argument before its body runs', async () => {
    let ran = 0;
    const kit = await loadForTest([
      definePlugin({
        name: 'p',
        version: '1.0.0',
        setup(rvm) {
          rvm.native(
            'shout',
            (_ctx, s, times) => {
              ran++;
              return s.toUpperCase().repeat(times ?? 1);
            },
            {
              params: [
                { name: 's', type: 'text' },
                { name: 'times', type: 'int', optional: true },
              ],
              returns: 'text',
              doc: 'Shouts.',
            },
          );
        },
      }),
    ]);
    assert.equal(kit.call('shout', 'hi', 2), 'HIHI');
    assert.throws(
      () => kit.call('shout', 5),
      (e: unknown) => e instanceof RvmError && e.code === 'type_error' && e.message === 'shout() expects s to be text, got int',
    );
    assert.throws(
      () => kit.call('shout', 'hi', 1.5),
      (e: unknown) => e instanceof RvmError && e.message === 'shout() expects times to be an int, got number',
    );
    assert.equal(ran, 1);
  });

  test('selfChecked must be a bool', async () => {
    const bad = definePlugin({
      name: 'p',
      version: '1.0.0',
      setup(rvm) {
        rvm.native('f', () => null, { params: [{ name: 'x', type: 'text', selfChecked: 'yes' as never }], doc: 'F.' });
      },
    });
    await assert.rejects(
      loadPlugins([bad], TEST_APP),
      (e: unknown) => e instanceof PluginLoadError && e.code === 'E_PLUGIN_INVALID' && e.message.includes('selfChecked'),
    );
  });

  test('returns is a result type, with ? when it may be null; another word is refused', async () => {
    const plugin = (returns: string) =>
      definePlugin({
        name: 'p',
        version: '1.0.0',
        setup(rvm) {
          rvm.native('f', () => null, { params: [], returns, doc: 'F.' });
        },
      });
    assert.equal((await loadPlugins([plugin('int?')], TEST_APP)).natives.get('f')?.meta.returns, 'int?');
    await assert.rejects(
      loadPlugins([plugin('integer')], TEST_APP),
      (e: unknown) => e instanceof PluginLoadError && e.code === 'E_PLUGIN_INVALID' && /meta\.returns must be a result type/.test(e.message),
    );
  });
});
