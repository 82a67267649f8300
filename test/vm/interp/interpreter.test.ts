import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Op } from '../../../vm/bytecode/opcodes.js';
import { execute, FUEL_BUDGET, MAX_CALL_DEPTH } from '../../../vm/interp/interpreter.js';
import type { VmHost } from '../../../vm/interp/program.js';
import { HALT, type NativeFn } from '../../../plugins/sdk.js';
import { SecretText, toText } from '../../../vm/values.js';
import { chunk, program, errorOf, rejection } from '../program-fixture.js';

const host = {
  respond: () => HALT,
  fail: () => HALT,
} as unknown as VmHost;

describe('interpreter', () => {
  test('arithmetic and return', () => {
    const c = chunk([Op.CONST, 0, Op.CONST, 1, Op.MUL, Op.CONST, 0, Op.ADD, Op.RETURN], { consts: [6, 7] });
    assert.equal(execute(program([c]), 0, [], host), 48);
  });

  test('runtime errors carry their file and line', () => {
    const c = chunk([Op.CONST, 0, Op.CONST, 1, Op.DIV, Op.RETURN], { consts: [1, 0] });
    const e = errorOf(() => execute(program([c]), 0, [], host));
    assert.equal(e.code, 'division_by_zero');
    assert.equal(e.at, 'test.rvm:5');
  });

  test('an endless loop runs out of fuel', async () => {
    const c = chunk([Op.LOOP, 0]);
    const started = Date.now();
    const e = await rejection(() => execute(program([c]), 0, [], host));
    assert.equal(e.code, 'fuel_exhausted');
    assert.ok(Date.now() - started < 3000, 'the budget is spent within about a second');
    assert.ok(FUEL_BUDGET > 1_000_000);
  });

  test('runaway recursion stops at MAX_CALL_DEPTH', () => {
    const recurse = chunk([Op.CALL_FN, 0, 0, Op.RETURN]);
    const e = errorOf(() => execute(program([recurse]), 0, [], host));
    assert.equal(e.code, 'call_depth_exceeded');
    assert.equal(e.trace.length, MAX_CALL_DEPTH);
  });

  test('recursion just under the limit works', () => {
    // f(n) = n == 0 ? 0 : 1 + f(n - 1)
    const f = chunk(
      [
        Op.LOAD_LOCAL,
        0,
        Op.CONST,
        0,
        Op.EQ,
        Op.JUMP_IF_FALSE,
        10,
        Op.CONST,
        0,
        Op.RETURN,
        Op.CONST,
        1,
        Op.LOAD_LOCAL,
        0,
        Op.CONST,
        1,
        Op.SUB,
        Op.CALL_FN,
        0,
        1,
        Op.ADD,
        Op.RETURN,
      ],
      { arity: 1, slots: 1, consts: [0, 1] },
    );
    assert.equal(execute(program([f]), 0, [MAX_CALL_DEPTH - 1], host), MAX_CALL_DEPTH - 1);
  });

  test('try/catch catches an error raised in a called chunk and restores the stack', () => {
    const thrower = chunk([Op.NULL, Op.GET_FIELD, 0, Op.RETURN], { consts: ['x'] });
    const main = chunk([Op.CONST, 1, Op.TRY, 10, Op.CALL_FN, 1, 0, Op.END_TRY, Op.JUMP, 14, Op.GET_FIELD, 2, Op.ADD, Op.RETURN, Op.RETURN], {
      consts: ['x', 'caught: ', 'code'],
    });
    assert.equal(execute(program([main, thrower]), 0, [], host), 'caught: null_field');
  });

  test('a HALT from a native ends the execution at once', () => {
    let after = false;
    const natives: NativeFn[] = [
      () => HALT,
      () => {
        after = true;
        return null;
      },
    ];
    const c = chunk([Op.CALL_NATIVE, 0, 0, Op.CALL_NATIVE, 1, 0, Op.RETURN]);
    assert.equal(execute(program([c], natives), 0, [], host), HALT);
    assert.equal(after, false);
  });

  test('async natives are awaited and their rejections are catchable', async () => {
    const natives: NativeFn[] = [async (_ctx, v) => (v as number) * 2, async () => Promise.reject(new Error('boom'))];
    const doubled = chunk([Op.CONST, 0, Op.CALL_NATIVE, 0, 1, Op.RETURN], { consts: [21] });
    const result = execute(program([doubled], natives), 0, [], host);
    assert.ok(result instanceof Promise);
    assert.equal(await result, 42);

    const caught = chunk([Op.TRY, 7, Op.CALL_NATIVE, 1, 0, Op.END_TRY, Op.RETURN, Op.GET_FIELD, 0, Op.RETURN], { consts: ['message'] });
    assert.equal(await execute(program([caught], natives), 0, [], host), 'boom');
  });

  test('sync natives never produce a Promise', () => {
    const natives: NativeFn[] = [(_ctx, a, b) => (a as number) + (b as number)];
    const c = chunk([Op.CONST, 0, Op.CONST, 0, Op.CALL_NATIVE, 0, 2, Op.RETURN], { consts: [2] });
    assert.equal(execute(program([c], natives), 0, [], host), 4);
  });

  test('iteration over lists, objects and text', () => {
    // total = ''; for k, v in {a: 1, b: 2} { total = total + k + v }
    const c = chunk(
      [
        Op.CONST,
        0,
        Op.STORE_LOCAL,
        0,
        Op.CONST,
        1,
        Op.CONST,
        2,
        Op.CONST,
        3,
        Op.CONST,
        4,
        Op.OBJECT,
        2,
        Op.ITER_INIT,
        Op.ITER_NEXT_PAIR,
        33,
        Op.STORE_LOCAL,
        2,
        Op.STORE_LOCAL,
        1,
        Op.LOAD_LOCAL,
        0,
        Op.LOAD_LOCAL,
        1,
        Op.ADD,
        Op.LOAD_LOCAL,
        2,
        Op.ADD,
        Op.STORE_LOCAL,
        0,
        Op.LOOP,
        15,
        Op.LOAD_LOCAL,
        0,
        Op.RETURN,
      ],
      { slots: 3, consts: ['', 'a', 1, 'b', 2] },
    );
    assert.equal(execute(program([c]), 0, [], host), 'a1b2');
    const notIterable = chunk([Op.CONST, 0, Op.ITER_INIT, Op.RETURN], { consts: [3] });
    assert.equal(errorOf(() => execute(program([notIterable]), 0, [], host)).code, 'not_iterable');
  });

  test('objects keep __proto__ as data', () => {
    const c = chunk([Op.CONST, 0, Op.CONST, 1, Op.OBJECT, 1, Op.RETURN], { consts: ['__proto__', 'x'] });
    const o = execute(program([c]), 0, [], host) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(o), Object.prototype);
    assert.equal(Object.getOwnPropertyDescriptor(o, '__proto__')?.value, 'x');
    assert.equal(({} as Record<string, unknown>).x, undefined);
  });

  test('text built from a secret stays secret', () => {
    const natives: NativeFn[] = [() => new SecretText('s3cr3t')];
    // 'Bearer ' + secret, then "${that}!" through TEMPLATE
    const c = chunk([Op.CONST, 0, Op.CALL_NATIVE, 0, 0, Op.ADD, Op.CONST, 1, Op.TEMPLATE, 2, Op.RETURN], { consts: ['Bearer ', '!'] });
    const result = execute(program([c], natives), 0, [], host);
    assert.ok(result instanceof SecretText);
    assert.equal(result.reveal(), 'Bearer s3cr3t!');
    assert.equal(toText(result), '[secret]');
  });

  test('type errors name the operand types', () => {
    const c = chunk([Op.CONST, 0, Op.CONST, 1, Op.SUB, Op.RETURN], { consts: [1, 'a'] });
    const e = errorOf(() => execute(program([c]), 0, [], host));
    assert.equal(e.code, 'type_error');
    assert.match(e.message, /int and text/);
  });
});
