/**
 * Hand-assembled programs for the interpreter's tests: chunks from raw code, a bound program
 * over them, and the runtime error an execution ends with.
 */
import assert from 'node:assert/strict';
import { VmError } from '../../vm/interp/interpreter.js';
import type { ChunkData } from '../../vm/bytecode/module.js';
import type { Program } from '../../vm/interp/program.js';
import type { NativeFn } from '../../plugins/sdk.js';
import type { Value } from '../../vm/values.js';

/** A hand-assembled chunk; every instruction is reported at line = its index + 1. */
export function chunk(code: number[], options: Partial<ChunkData> = {}): ChunkData {
  const lines: number[] = [];
  code.forEach((_, i) => lines.push(i, i + 1, 1));
  return {
    name: 'test',
    kind: 'fn',
    arity: 0,
    slots: 0,
    maxStack: 16,
    code: Int32Array.from(code),
    consts: [],
    lines: Int32Array.from(lines),
    refs: [],
    ...options,
  };
}

/** The chunks as one program, every chunk bound, natives by index. */
export function program(chunks: ChunkData[], natives: NativeFn[] = []): Program {
  return {
    chunks: chunks.map((data) => ({ data, file: 'test.rvm', code: data.code, consts: data.consts as Value[], route: null, bound: true })),
    natives,
    nativeNames: natives.map((_, i) => `n${i}`),
    prepare: () => assert.fail('every chunk is bound'),
  };
}

/** The VmError `fn` throws at once. */
export function errorOf(fn: () => unknown): VmError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof VmError, `expected a VmError, got ${String(e)}`);
    return e;
  }
  assert.fail('expected a runtime error');
}

/** The VmError an execution ends with, thrown at once or after it suspended. */
export async function rejection(run: () => unknown): Promise<VmError> {
  try {
    await run();
  } catch (e) {
    assert.ok(e instanceof VmError, `expected a VmError, got ${String(e)}`);
    return e;
  }
  assert.fail('expected a runtime error');
}
