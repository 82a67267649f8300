/**
 * The host contract (vm/host/): the types plugins and the runtime agree on, split by concern. It
 * depends on no runtime code (its modules import nothing at load time), and the SDK hands plugins
 * the very values it defines (`HALT`, `UNKNOWN`…), so a plugin's answer is the runtime's own.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as context from '../../../vm/host/context.js';
import * as records from '../../../vm/host/records.js';
import * as stores from '../../../vm/host/stores.js';
import * as sdk from '../../../plugins/sdk.js';

/** The contract's modules: types, and the few values plugins and the runtime share. */
const CONTRACT = ['context', 'natives', 'validators', 'stores', 'records', 'introspection', 'plugin'];

test('the contract modules import nothing at load time: they depend on no runtime code', () => {
  for (const name of CONTRACT) {
    const compiled = readFileSync(new URL(`../../../vm/host/${name}.js`, import.meta.url), 'utf8');
    assert.doesNotMatch(compiled, /^\s*import\s/m, `vm/host/${name}.ts imports at load time`);
  }
});

test('the SDK re-exports the contract values themselves', () => {
  assert.equal(sdk.HALT, context.HALT);
  assert.equal(sdk.UNKNOWN, records.UNKNOWN);
  assert.equal(sdk.RawRequestArg, records.RawRequestArg);
  assert.equal(sdk.SECURITY_KEY_PREFIX, stores.SECURITY_KEY_PREFIX);
});

test("`await import('rvm-runtime/sdk')` gives the SDK: it exports no function named then, which would make the module a thenable", async () => {
  const imported = (await import('rvm-runtime/sdk')) as Record<string, unknown>;
  assert.equal(typeof imported.definePlugin, 'function');
  assert.equal(imported.definePlugin, sdk.definePlugin);
  assert.equal('then' in imported, false);
});
