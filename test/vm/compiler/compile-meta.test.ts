import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compileSource } from '../../../vm/compiler/compiler.js';
import { MAX_CONSTANT_DEPTH } from '../../../vm/compiler/compile-meta.js';
import { decodeModule, encodeModule } from '../../../vm/bytecode/artefact.js';
import { MAX_JSON_DEPTH } from '../../../vm/bytecode/verify.js';
import { FORMAT_VERSION } from '../../../vm/bytecode/module.js';

const OPTIONS = { compilerVersion: '1.0.0', pluginsFingerprint: 'core@1' };

/** The compile of a route whose one field carries `decorator`. */
function field(decorator: string, type = 'list') {
  return compileSource('t.rvm', `route POST /v {\n  validate {\n    f: ${type} ${decorator}\n  }\n}\n`, OPTIONS);
}

describe('decorator arguments: list and object literals of constants', () => {
  test('fold to data, nested, and a __proto__ key stays an ordinary key', () => {
    const { module, diagnostics } = field("@default([1, 'a', [true, null], {k: {__proto__: 2, 'x y': [-1]}}])");
    assert.deepEqual(diagnostics, []);
    const arg = module!.routes[0]!.body![0]!.decorators[0]!.args[0];
    assert.deepEqual(arg, [1, 'a', [true, null], { k: JSON.parse('{"__proto__": 2, "x y": [-1]}') }]);
    const inner = ((arg as unknown[])[3] as Record<string, Record<string, unknown>>).k!;
    assert.equal(Object.getPrototypeOf(inner), Object.prototype);
    assert.ok(Object.hasOwn(inner, '__proto__'));
  });

  test('an item that is not a constant is E_NOT_CONSTANT at that item, once', () => {
    const { module, diagnostics } = field('@default([1, [request.ip]])');
    assert.equal(module, null);
    assert.deepEqual(
      diagnostics.map((d) => `${d.code}@${d.line}:${d.col}`),
      ['E_NOT_CONSTANT@3:27'],
    );
  });

  test('round trip through the artefact, and the format was bumped for it', () => {
    assert.ok(FORMAT_VERSION >= 7);
    const { module } = field("@default({a: [1, {b: 'c'}], e: {}})", 'object');
    const back = decodeModule(encodeModule(module!));
    assert.deepEqual(back.routes[0]!.body![0]!.decorators, module!.routes[0]!.body![0]!.decorators);
  });

  test(`nesting up to MAX_CONSTANT_DEPTH (${MAX_CONSTANT_DEPTH}) compiles and reads back; one more is E_TOO_DEEP`, () => {
    // Every module that compiles must be one the artefact reader accepts.
    assert.ok(MAX_CONSTANT_DEPTH < MAX_JSON_DEPTH);
    const nested = (n: number) => '['.repeat(n) + '1' + ']'.repeat(n);
    const atLimit = field(`@default(${nested(MAX_CONSTANT_DEPTH)})`);
    assert.deepEqual(atLimit.diagnostics, []);
    const back = decodeModule(encodeModule(atLimit.module!));
    assert.deepEqual(back.routes[0]!.body![0]!.decorators[0]!.args, atLimit.module!.routes[0]!.body![0]!.decorators[0]!.args);
    const over = field(`@default(${nested(MAX_CONSTANT_DEPTH + 1)})`);
    assert.equal(over.module, null);
    assert.deepEqual(
      over.diagnostics.map((d) => `${d.code}@${d.line}:${d.col}`),
      ['E_TOO_DEEP@3:22'],
    );
  });
});
