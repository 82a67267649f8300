/**
 * One plugin contract: the machine and the runtime import plugins/contract.ts, never the SDK
 * facade; the standard plugins import only the facade and their own folder; the contract
 * depends on no runtime code, so no cycle runs through it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { findCycles, forbiddenEdges, readImportGraph } from '../../tools/import-graph.js';
import * as contract from '../../plugins/contract.js';
import * as sdk from '../../plugins/sdk.js';

const DIST = fileURLToPath(new URL('../../', import.meta.url));
const graph = readImportGraph(DIST);

/** What the runtime may import of plugins/: the contract, and the registry and loader it loads plugins with. */
const RUNTIME_SIDE = ['plugins/contract.js', 'plugins/registry.js', 'plugins/loader.js'];

test('nothing under vm/ imports the SDK facade, only the contract (and the registry and loader)', () => {
  const edges = [...graph].flatMap(([from, targets]) =>
    from.startsWith('vm/') ? targets.filter((t) => t.startsWith('plugins/')).map((t) => `${from} → ${t}`) : [],
  );
  assert.deepEqual(
    edges.filter((e) => !RUNTIME_SIDE.some((allowed) => e.endsWith(`→ ${allowed}`))),
    [],
  );
  assert.ok(
    edges.some((e) => e.startsWith('vm/runtime/context.js → plugins/contract.js')),
    'the runtime takes HALT from the contract',
  );
});

test('the contract imports nothing at run time, and no cycle passes through plugins/', () => {
  assert.deepEqual(graph.get('plugins/contract.js'), []);
  assert.deepEqual(
    findCycles(graph).filter((cycle) => cycle.some((file) => file.startsWith('plugins/'))),
    [],
  );
  // What the runtime imports of plugins/ reaches neither the facade nor the runtime again.
  const reached = new Set<string>();
  const walk = (file: string): void => {
    if (reached.has(file)) return;
    reached.add(file);
    for (const next of graph.get(file) ?? []) walk(next);
  };
  for (const file of RUNTIME_SIDE) walk(file);
  assert.deepEqual(
    [...reached].filter((f) => f.startsWith('vm/runtime/') || f === 'plugins/sdk.js'),
    [],
  );
});

test('the standard plugins import only the SDK facade and their own folder', () => {
  assert.deepEqual(
    forbiddenEdges(graph).filter((e) => e.startsWith('stdlib/') || e.startsWith('plugins/')),
    [],
  );
});

test('the facade re-exports the contract, HALT included', () => {
  assert.equal(sdk.HALT, contract.HALT);
  for (const name of Object.keys(contract)) assert.ok(name in sdk, `sdk.ts exports ${name}`);
});

test("`await import('rvm-runtime/sdk')` gives the SDK: it exports no function named then, which would make the module a thenable", async () => {
  const imported = (await import('rvm-runtime/sdk')) as Record<string, unknown>;
  assert.equal(typeof imported.definePlugin, 'function');
  assert.equal(imported.definePlugin, sdk.definePlugin);
  assert.equal('then' in imported, false);
});
