import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { compileSource } from '../../../vm/compiler/compiler.js';
import type { RouteMeta } from '../../../vm/bytecode/module.js';
import { coerce, planValidation, unstorableText, validateFields, DEFAULT_MAX_FILE_BYTES } from '../../../vm/runtime/validate.js';
import { loadPlugins, type PluginRegistry } from '../../../vm/host/registry.js';
import { definePlugin, type Literal } from '../../../plugins/sdk.js';
import { loadSettings } from '../../../vm/runtime/config.js';
import { uploadedFromBytes } from '../../../vm/runtime/http/upload.js';

/** A few validators, registered the way any plugin does, so the engine is tested on its own. */
const testValidators = definePlugin({
  name: 'test-validators',
  version: '1.0.0',
  setup(rvm) {
    rvm.validator('required', {
      types: ['text', 'int', 'number', 'bool', 'list', 'object', 'date', 'datetime', 'file'],
      params: [],
      doc: 'Present.',
      message: () => 'is required',
      build: () => () => true,
    });
    rvm.validator('default', {
      types: ['text', 'int', 'number', 'bool', 'list', 'object', 'date', 'datetime'],
      params: [{ name: 'value', type: 'any' }],
      doc: 'Fallback.',
      message: () => '',
      build: () => () => true,
    });
    rvm.validator('min', {
      types: ['text', 'int', 'number'],
      params: [{ name: 'n', type: 'number' }],
      doc: 'Lower bound.',
      message: (args, type) => (type === 'text' ? `must be at least ${args[0]} characters` : `must be at least ${args[0]}`),
      build: (args, type) => (v) => (type === 'text' ? [...(v as string)].length : (v as number)) >= (args[0] as number),
      bounds: (args, type) => ({ [type === 'text' ? 'length' : 'value']: { min: args[0] as number } }),
    });
    rvm.validator('max', {
      types: ['text', 'int', 'number'],
      params: [{ name: 'n', type: 'number' }],
      doc: 'Upper bound.',
      message: (args) => `must be at most ${args[0]}`,
      build: (args, type) => (v) => (type === 'text' ? [...(v as string)].length : (v as number)) <= (args[0] as number),
      bounds: (args, type) => ({ [type === 'text' ? 'length' : 'value']: { max: args[0] as number } }),
    });
    rvm.validator('one_of', {
      types: ['text', 'int'],
      params: [{ name: 'values', type: 'any', rest: true }],
      aliases: ['oneOf'],
      doc: 'One of.',
      message: (args) => `must be one of ${args.join(', ')}`,
      build: (args) => (v) => (args as Literal[]).includes(v as Literal),
    });
    rvm.validator('max_size', {
      types: ['file'],
      params: [{ name: 'size', type: 'text' }],
      doc: 'Size.',
      checkArgs: (args) => (/^\d+$/.test(String(args[0])) ? null : `cannot read '${args[0]}' as a size`),
      message: (args) => `must be at most ${args[0]} bytes`,
      build: (args) => (v) => (v as { size: number }).size <= Number(args[0]),
      uploadLimit: (args) => Number(args[0]),
    });
    rvm.validator('same', {
      types: ['text'],
      params: [{ name: 'field', type: 'text' }],
      doc: 'Same as.',
      message: (args) => `must match ${args[0]}`,
      build: (args) => (v, input) => input[args[0] as string] === v,
    });
  },
});

let registry: PluginRegistry;

function route(source: string): RouteMeta {
  const { module, diagnostics } = compileSource('t.rvm', source, { compilerVersion: 't', pluginsFingerprint: 't' });
  assert.deepEqual(
    diagnostics.filter((d) => d.severity === 'error'),
    [],
  );
  return module!.routes[0]!;
}

function plan(source: string) {
  const meta = route(source);
  const { plans, diagnostics } = planValidation([{ meta, file: 't.rvm' }], registry);
  return { plan: plans.get(meta), diagnostics: diagnostics.map((d) => `${d.code}@${d.line}:${d.col}`), messages: diagnostics.map((d) => d.message) };
}

describe('validation engine', () => {
  before(async () => {
    registry = await loadPlugins([testValidators], loadSettings(null, { config: {} }));
  });

  test('compile errors: unknown validator, wrong type, arguments, bounds, defaults', () => {
    assert.deepEqual(plan(`route POST /x {\n  validate {\n    a: text @mni(3)\n  }\n}`).diagnostics, ['E_UNKNOWN_VALIDATOR@3:13']);
    assert.deepEqual(plan(`route POST /x {\n  validate {\n    a: bool @min(3)\n  }\n}`).diagnostics, ['E_VALIDATOR_TYPE@3:13']);
    assert.deepEqual(plan(`route POST /x {\n  validate {\n    a: text @min('3')\n    b: text @min()\n  }\n}`).diagnostics, [
      'E_VALIDATOR_ARGS@3:13',
      'E_VALIDATOR_ARGS@4:13',
    ]);
    assert.deepEqual(plan(`route POST /x {\n  validate {\n    a: int @min(10) @max(5)\n  }\n}`).diagnostics, ['E_CONTRADICTORY_BOUNDS@3:21']);
    assert.deepEqual(plan(`route POST /x {\n  validate {\n    a: text @min(10) @max(5)\n    b: int @min(10) @max(10)\n  }\n}`).diagnostics, [
      'E_CONTRADICTORY_BOUNDS@3:22',
    ]);
    assert.deepEqual(plan(`route POST /x {\n  validate {\n    a: text @one_of('x', 'y') @default('z')\n    b: int @default('7')\n  }\n}`).diagnostics, [
      'E_BAD_DEFAULT@3:31',
      'E_BAD_DEFAULT@4:12',
    ]);
    assert.deepEqual(plan(`route POST /x {\n  validate {\n    f: file @max_size('lots')\n  }\n}`).diagnostics, ['E_VALIDATOR_ARGS@3:13']);
    assert.match(plan(`route POST /x {\n  validate {\n    a: text @mni(3)\n  }\n}`).messages[0]!, /@mni/);
  });

  test('aliases resolve and report under the name written', () => {
    const { plan: p, diagnostics } = plan(`route POST /x {\n  validate {\n    role: text @oneOf('a', 'b')\n  }\n}`);
    assert.deepEqual(diagnostics, []);
    assert.deepEqual(validateFields(p!.body!, { role: 'c' }, false).errors, [{ field: 'role', rule: 'oneOf', message: 'must be one of a, b' }]);
  });

  test('body holds only the declared fields, after defaults', () => {
    const { plan: p } = plan(`route POST /x {\n  validate {\n    name: text\n    role?: text @default('user')\n    note?: text\n  }\n}`);
    assert.deepEqual(validateFields(p!.body!, { name: 'a', admin: true }, false), { value: { name: 'a', role: 'user' }, errors: null });
  });

  test('every failing field is listed, not only the first', () => {
    const { plan: p } = plan(`route POST /x {\n  validate {\n    email: text @required\n    password: text @min(8)\n    age: int @min(18)\n  }\n}`);
    const result = validateFields(p!.body!, { password: 'short', age: '20' }, false);
    assert.deepEqual(result.errors, [
      { field: 'email', rule: 'required', message: 'is required' },
      { field: 'password', rule: 'min', message: 'must be at least 8 characters' },
      { field: 'age', rule: 'type', message: 'must be an integer' },
    ]);
  });

  test('JSON is strict, text sources are coerced', () => {
    assert.equal(coerce('int', '18', false), undefined);
    assert.equal(coerce('int', '18', true), 18);
    assert.equal(coerce('int', 18.5, false), undefined);
    assert.equal(coerce('int', '18.5', true), undefined);
    assert.equal(coerce('number', ' 2.5 ', true), 2.5);
    assert.equal(coerce('bool', 'true', true), true);
    assert.equal(coerce('bool', 'true', false), undefined);
    assert.deepEqual(coerce('list', 'a', true), ['a']);
    assert.equal(coerce('date', '2024-02-30', false), undefined);
    assert.equal(coerce('date', '2024-02-29', false), '2024-02-29');
    assert.equal(coerce('datetime', '2024-02-29T10:00:00Z', false), '2024-02-29T10:00:00Z');
    assert.equal(coerce('datetime', '2024-02-29T10:00:00', false), undefined);
    assert.equal(coerce('file', 'not a file', true), undefined);
  });

  test('coercion round trips: a value written as text comes back as itself', () => {
    fc.assert(fc.property(fc.integer({ min: -(2 ** 53) + 1, max: 2 ** 53 - 1 }), (n) => coerce('int', String(n), true) === n));
    fc.assert(fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => coerce('number', String(x), true) === x));
    fc.assert(fc.property(fc.boolean(), (b) => coerce('bool', String(b), true) === b));
    fc.assert(
      fc.property(fc.date({ min: new Date('0001-01-01'), max: new Date('9999-12-31'), noInvalidDate: true }), (d) => {
        const text = d.toISOString().slice(0, 10);
        return coerce('date', text, true) === text && coerce('datetime', d.toISOString(), true) === d.toISOString();
      }),
    );
  });

  test('a text field refuses NUL (no_nul) and a lone surrogate (well_formed) before its decorators, from JSON and from text', () => {
    const { plan: p } = plan(`route POST /x {\n  validate {\n    name: text @max(3)\n  }\n}`);
    const NO_NUL = { field: 'name', rule: 'no_nul', message: 'must not contain NUL characters' };
    const WELL_FORMED = { field: 'name', rule: 'well_formed', message: 'must not contain a lone surrogate' };
    for (const fromText of [false, true]) {
      assert.deepEqual(validateFields(p!.body!, { name: 'a\u0000' }, fromText).errors, [NO_NUL]);
      assert.deepEqual(validateFields(p!.body!, { name: '\ud800' }, fromText).errors, [WELL_FORMED]);
      assert.deepEqual(validateFields(p!.body!, { name: 'b\udc00' }, fromText).errors, [WELL_FORMED]);
      assert.deepEqual(validateFields(p!.body!, { name: '\u0000\ud800xyz' }, fromText).errors, [
        NO_NUL,
        WELL_FORMED,
        { field: 'name', rule: 'max', message: 'must be at most 3' },
      ]);
      assert.deepEqual(validateFields(p!.body!, { name: '\ud83d\udc4d' }, fromText), { value: { name: '👍' }, errors: null });
    }
    assert.deepEqual(
      [unstorableText('ok'), unstorableText('\u0000'), unstorableText('\udfff')],
      [null, { rule: 'no_nul', message: 'must not contain NUL characters' }, { rule: 'well_formed', message: 'must not contain a lone surrogate' }],
    );
  });

  test('same() sees the other fields', () => {
    const { plan: p } = plan(`route POST /x {\n  validate {\n    password: text\n    confirm: text @same('password')\n  }\n}`);
    assert.equal(validateFields(p!.body!, { password: 'a', confirm: 'a' }, false).errors, null);
    assert.equal(validateFields(p!.body!, { password: 'a', confirm: 'b' }, false).errors?.[0]?.rule, 'same');
  });

  test('file fields take uploads and their limits', () => {
    const { plan: p } = plan(`route POST /x {\n  validate {\n    avatar: file @max_size('100')\n    cv?: file\n  }\n}`);
    assert.deepEqual(p!.uploads, { files: { avatar: 100, cv: DEFAULT_MAX_FILE_BYTES } });
    const small = uploadedFromBytes('a.png', new Uint8Array(50));
    const big = uploadedFromBytes('a.png', new Uint8Array(101));
    assert.equal(validateFields(p!.body!, { avatar: small }, true).errors, null);
    assert.equal(validateFields(p!.body!, { avatar: big }, true).errors?.[0]?.rule, 'max_size');
    assert.equal(validateFields(p!.body!, { avatar: 'text' }, true).errors?.[0]?.rule, 'type');
  });

  test('validation never throws on arbitrary input and never pollutes prototypes', () => {
    const { plan: p } = plan(
      `route POST /x {\n  validate {\n    __proto__?: object\n    constructor?: text\n    a?: int @min(1)\n    b: text @one_of('x')\n    c?: list\n    d?: object\n    e?: date\n  }\n}`,
    );
    const withKeys = fc.dictionary(fc.constantFrom('__proto__', 'constructor', 'prototype', 'a', 'b', 'c', 'd', 'e', 'toString'), fc.anything(), {
      maxKeys: 6,
    });
    fc.assert(
      fc.property(fc.oneof(fc.anything(), withKeys), fc.boolean(), (input, fromText) => {
        const result = validateFields(p!.body!, input, fromText);
        assert.ok(result.value !== null || result.errors!.length > 0);
        assert.equal(({} as Record<string, unknown>).polluted, undefined);
        assert.equal(Object.getPrototypeOf({}), Object.prototype);
        if (result.value) assert.equal(Object.getPrototypeOf(result.value), Object.prototype);
      }),
      { numRuns: 2000 },
    );
    const parsed = JSON.parse('{"__proto__": {"polluted": true}, "b": "x"}');
    const result = validateFields(p!.body!, parsed, false);
    assert.deepEqual(Object.keys(result.value!), ['__proto__', 'b']);
    assert.equal(Object.getPrototypeOf(result.value), Object.prototype);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });
});
