/**
 * The core plugin's natives called directly, as the budget and collection tests of stdlib/core
 * call them: loaded once per test file (a `before` hook), each call on a fresh fake context
 * unless the test brings its own.
 */
import { before } from 'node:test';
import assert from 'node:assert/strict';
import { RvmError } from '../../plugins/sdk.js';
import type { Value } from '../../plugins/sdk.js';
import { core } from '../../stdlib/core/index.js';
import { fakeContext, type FakeContext, loadForTest, type LoadedPlugins } from '../../plugins/testing.js';

/** `call`, `callIn` and `throwsCode` for the core natives; call at the top of a test file. */
export function coreNatives(): {
  callIn: (ctx: FakeContext, name: string, ...args: Value[]) => unknown;
  call: (name: string, ...args: Value[]) => unknown;
  throwsCode: (fn: () => unknown, code: string) => void;
} {
  let kit: LoadedPlugins;
  before(async () => {
    kit = await loadForTest([core]);
  });
  const callIn = (ctx: FakeContext, name: string, ...args: Value[]): unknown => kit.callIn(ctx, name, ...args);
  return {
    callIn,
    call: (name, ...args) => callIn(fakeContext(), name, ...args),
    throwsCode: (fn, code) => assert.throws(fn, (e: unknown) => e instanceof RvmError && e.code === code),
  };
}
