/** The layering check: cycles and forbidden edges are found in a fixture graph, and there are none in rvm's own. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { findCycles, forbiddenEdges, readImportGraph, type ImportGraph } from '../../tools/import-graph.js';

const DIST = fileURLToPath(new URL('../../', import.meta.url));

const fixture = (edges: Record<string, string[]>): ImportGraph => new Map(Object.entries(edges));

test('a cycle is found as one component, however long; a self-import too', () => {
  const graph = fixture({
    'vm/a.js': ['vm/b.js'],
    'vm/b.js': ['vm/c.js'],
    'vm/c.js': ['vm/a.js', 'vm/d.js'],
    'vm/d.js': [],
    'vm/e.js': ['vm/e.js'],
  });
  assert.deepEqual(findCycles(graph), [['vm/a.js', 'vm/b.js', 'vm/c.js'], ['vm/e.js']]);
  assert.deepEqual(findCycles(fixture({ 'vm/a.js': ['vm/b.js'], 'vm/b.js': [] })), []);
});

test('each layering rule flags its edge and lets the allowed ones pass', () => {
  const graph = fixture({
    'vm/interp/interpreter.js': ['vm/runtime/response.js', 'vm/values.js'],
    'vm/front/parser.js': ['vm/interp/link.js'],
    'plugins/sdk.js': ['stdlib/core/index.js'],
    'stdlib/crypto/natives.js': ['stdlib/core/args.js', 'plugins/sdk.js', 'stdlib/crypto/hash.js'],
    'stdlib/auth/index.js': ['vm/values.js'],
    'stdlib/index.js': ['stdlib/auth/index.js'],
    'vm/runtime/app.js': ['vm/interp/link.js', 'stdlib/index.js'],
    'vm/interp/link.js': ['vm/front/ast.js', 'vm/lang.js'],
  });
  assert.deepEqual(forbiddenEdges(graph), [
    'plugins/sdk.js → stdlib/core/index.js (the SDK does not depend on the plugins written with it)',
    'stdlib/auth/index.js → vm/values.js (a standard plugin uses only the SDK facade and its own folder)',
    'stdlib/crypto/natives.js → stdlib/core/args.js (a standard plugin uses only the SDK facade and its own folder)',
    'vm/front/parser.js → vm/interp/link.js (the front end does not run code)',
    'vm/interp/interpreter.js → vm/runtime/response.js (the machine knows no HTTP)',
    'vm/interp/link.js → vm/front/ast.js (the machine runs bytecode, not syntax)',
    'vm/runtime/app.js → stdlib/index.js (the composition root chooses the plugins, not the runtime)',
  ]);
});

test('the compiled graph is read from import and export statements, type imports being erased', () => {
  const graph = readImportGraph(DIST);
  assert.ok(graph.size > 100, `only ${graph.size} files`);
  assert.ok(graph.get('tools/cli.js')?.length, 'the CLI imports its commands');
  for (const [from, targets] of graph) for (const to of targets) assert.ok(graph.has(to), `${from} imports a missing ${to}`);
});

test("rvm's own compiled graph has no import cycle and no forbidden edge", () => {
  const graph = readImportGraph(DIST);
  assert.deepEqual(findCycles(graph), []);
  assert.deepEqual(forbiddenEdges(graph), []);
});
