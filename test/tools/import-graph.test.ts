/** The layering check: cycles and forbidden edges are found in a fixture graph, and there are none in rvm's own. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { findCycles, forbiddenEdges, readImportGraph, type ImportGraph } from '../../tools/import-graph.js';

/** The repository: this file runs as dist/test/tools/import-graph.test.js. */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

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
    'vm/interp/interpreter.ts': ['vm/runtime/response.ts', 'vm/values.ts'],
    'vm/front/parser.ts': ['vm/interp/link.ts'],
    'vm/runtime/context.ts': ['plugins/sdk.ts', 'vm/host/context.ts'],
    'plugins/sdk.ts': ['stdlib/core/index.ts', 'vm/host/context.ts'],
    'stdlib/crypto/natives.ts': ['stdlib/core/args.ts', 'plugins/sdk.ts', 'stdlib/crypto/hash.ts'],
    'stdlib/auth/index.ts': ['vm/values.ts'],
    'stdlib/index.ts': ['stdlib/auth/index.ts'],
    'vm/runtime/app.ts': ['vm/interp/link.ts', 'stdlib/index.ts'],
    'vm/interp/link.ts': ['vm/front/ast.ts', 'vm/lang.ts'],
  });
  assert.deepEqual(forbiddenEdges(graph), [
    'plugins/sdk.ts → stdlib/core/index.ts (the SDK does not depend on the plugins written with it)',
    'stdlib/auth/index.ts → vm/values.ts (a standard plugin uses only the SDK facade and its own folder)',
    'stdlib/crypto/natives.ts → stdlib/core/args.ts (a standard plugin uses only the SDK facade and its own folder)',
    'vm/front/parser.ts → vm/interp/link.ts (the front end does not run code)',
    'vm/interp/interpreter.ts → vm/runtime/response.ts (the machine knows no HTTP)',
    'vm/interp/link.ts → vm/front/ast.ts (the machine runs bytecode, not syntax)',
    'vm/runtime/app.ts → stdlib/index.ts (the composition root chooses the plugins, not the runtime)',
    'vm/runtime/context.ts → plugins/sdk.ts (the VM owns the host contract (vm/host/); plugins/ is the SDK built on it)',
  ]);
});

test('the source graph is read from import and export statements, `import type` included', () => {
  const graph = readImportGraph(ROOT);
  assert.ok(graph.size > 100, `only ${graph.size} files`);
  assert.ok(graph.get('tools/cli.ts')?.length, 'the CLI imports its commands');
  // natives.ts needs the call context only as a type: the edge is there all the same.
  assert.ok(graph.get('vm/host/natives.ts')?.includes('vm/host/context.ts'), 'a type-only import is an edge');
  for (const [from, targets] of graph) for (const to of targets) assert.ok(graph.has(to), `${from} imports a missing ${to}`);
});

test("rvm's own graph has no import cycle, type-only imports included, and no forbidden edge", () => {
  const graph = readImportGraph(ROOT);
  assert.deepEqual(findCycles(graph), []);
  assert.deepEqual(forbiddenEdges(graph), []);
});
