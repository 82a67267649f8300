/**
 * The interpreter and the request's Budget: executions share it, the time slice makes a long run
 * yield, charged natives reach a check, the CPU budget ends a request, and an abort stops a
 * suspended fiber before its next instruction, uncatchably.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Op } from '../../../vm/bytecode/opcodes.js';
import { execute, VmError } from '../../../vm/interp/interpreter.js';
import { Budget, CHECK_INTERVAL, CPU_BUDGET_MS, FUEL_BUDGET, TIME_SLICE_MS } from '../../../vm/interp/budget.js';
import type { ChunkData } from '../../../vm/bytecode/module.js';
import type { VmHost } from '../../../vm/interp/program.js';
import { HALT, type CallContext, type NativeFn } from '../../../plugins/sdk.js';
import { RvmError, type Value } from '../../../vm/values.js';
import { chunk, program, rejection } from '../program-fixture.js';

function hostWith(budget: Budget): VmHost {
  return { budget, respond: () => HALT, fail: () => HALT } as unknown as VmHost;
}

/** `i = 0; while i < n { i = i + 1 }; return i` with n = consts[1]. */
function counter(n: number): ChunkData {
  return chunk(
    [
      Op.CONST,
      0,
      Op.STORE_LOCAL,
      0,
      Op.LOAD_LOCAL,
      0,
      Op.CONST,
      1,
      Op.LT,
      Op.JUMP_IF_FALSE,
      20,
      Op.LOAD_LOCAL,
      0,
      Op.CONST,
      2,
      Op.ADD,
      Op.STORE_LOCAL,
      0,
      Op.LOOP,
      4,
      Op.LOAD_LOCAL,
      0,
      Op.RETURN,
    ],
    { slots: 1, consts: [0, n, 1] },
  );
}

/** `while true { native 0() }` inside `try`, whose catch block returns 'caught'. */
const CAUGHT_LOOP = chunk([Op.TRY, 8, Op.CALL_NATIVE, 0, 0, Op.POP, Op.LOOP, 2, Op.CONST, 0, Op.RETURN], { consts: ['caught'] });

function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

describe('interpreter budget', () => {
  test('defaults: 1 s of CPU, 10 ms slices, 20 M fuel', () => {
    const b = new Budget();
    assert.equal(CPU_BUDGET_MS, 1000);
    assert.equal(TIME_SLICE_MS, 10);
    assert.deepEqual([b.cpuMs, b.sliceMs, b.fuel], [CPU_BUDGET_MS, TIME_SLICE_MS, FUEL_BUDGET]);
    assert.deepEqual([new Budget({ cpuMs: 5, sliceMs: 2 }).cpuMs, new Budget({ cpuMs: 5, sliceMs: 2 }).sliceMs], [5, 2]);
  });

  test('a short loop stays synchronous', () => {
    assert.equal(execute(program([counter(1000)]), 0, [], hostWith(new Budget())), 1000);
  });

  test('a long loop yields after its slice and finishes when resumed', async () => {
    const budget = new Budget({ sliceMs: 1 });
    const result = execute(program([counter(3_000_000)]), 0, [], hostWith(budget));
    assert.ok(result instanceof Promise, 'a run longer than its slice suspends');
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 0);
    assert.equal(await result, 3_000_000);
    clearInterval(ticker);
    assert.ok(ticks > 0, 'timers ran while the loop was suspended');
    assert.ok(budget.usedMs > 0, 'the slices were counted');
  });

  test('the fuel is shared by every execution of a request', async () => {
    const budget = new Budget({ fuel: 3 * (CHECK_INTERVAL + 1) });
    const host = hostWith(budget);
    assert.equal(await execute(program([counter(2 * CHECK_INTERVAL)]), 0, [], host), 2 * CHECK_INTERVAL);
    const e = await rejection(() => execute(program([counter(2 * CHECK_INTERVAL)]), 0, [], host));
    assert.equal(e.code, 'fuel_exhausted');
    // Exactly the budget passes; one more iteration does not.
    const fuel = 2 * (CHECK_INTERVAL + 1);
    assert.equal(await execute(program([counter(fuel)]), 0, [], hostWith(new Budget({ fuel }))), fuel);
    assert.equal((await rejection(() => execute(program([counter(fuel + 1)]), 0, [], hostWith(new Budget({ fuel }))))).code, 'fuel_exhausted');
  });

  test('time inside charged natives counts: the CPU budget ends the loop, and try cannot catch it', async () => {
    const budget = new Budget({ cpuMs: 100 });
    const natives: NativeFn[] = [
      (ctx) => {
        ctx.budget.chargeText(1_000_000);
        busy(5);
        return null;
      },
    ];
    const started = performance.now();
    const e = await rejection(() => execute(program([CAUGHT_LOOP], natives), 0, [], hostWith(budget)));
    assert.equal(e.code, 'cpu_budget_exceeded');
    const elapsed = performance.now() - started;
    assert.ok(elapsed < 1000, `ended after ${elapsed.toFixed(0)} ms, about the 100 ms budget`);
    assert.ok(budget.usedMs >= 100);
    assert.equal(budget.reason?.code, 'cpu_budget_exceeded', 'the request is aborted with it');
    assert.equal(budget.signal.aborted, true);
  });

  test('a native charging past the check point makes the VM check the clock and yield', async () => {
    const budget = new Budget({ sliceMs: 1 });
    const natives: NativeFn[] = [
      (ctx) => {
        ctx.budget.charge(CHECK_INTERVAL);
        busy(3);
        return 7;
      },
    ];
    const result = execute(program([chunk([Op.CALL_NATIVE, 0, 0, Op.RETURN])], natives), 0, [], hostWith(budget));
    assert.ok(result instanceof Promise, 'the native used more than the slice: the VM yields after it');
    assert.equal(await result, 7);
    assert.ok(budget.usedMs >= 3, `the native's time is counted (${budget.usedMs} ms)`);
  });

  test('an aborted request never runs its next instruction, and try cannot catch the reason', async () => {
    const budget = new Budget();
    let logged = false;
    let release!: () => void;
    const natives: NativeFn[] = [
      () => new Promise<Value>((resolve) => (release = () => resolve(null))),
      () => {
        logged = true;
        return null;
      },
    ];
    // try { slow(); log() } catch { return 'caught' }
    const c = chunk([Op.TRY, 10, Op.CALL_NATIVE, 0, 0, Op.POP, Op.CALL_NATIVE, 1, 0, Op.RETURN, Op.CONST, 0, Op.RETURN], { consts: ['caught'] });
    const result = execute(program([c], natives), 0, [], hostWith(budget));
    assert.ok(result instanceof Promise);
    const signal = budget.signal;
    budget.abort(new RvmError('the client went away', 'client_gone'));
    assert.equal(signal.aborted, true, 'natives waiting on the signal are told');
    release();
    const e = await rejection(() => result);
    assert.equal(e.code, 'client_gone');
    assert.equal(logged, false);
  });

  test('an abort reaches a running loop at its next check, and a new execution at once', async () => {
    const budget = new Budget();
    const natives: NativeFn[] = [
      () => {
        budget.abort(new RvmError('too late', 'deadline_exceeded'));
        return null;
      },
    ];
    const e = await rejection(() => execute(program([CAUGHT_LOOP], natives), 0, [], hostWith(budget)));
    assert.equal(e.code, 'deadline_exceeded');
    assert.throws(
      () => execute(program([counter(1)]), 0, [], hostWith(budget)),
      (err: unknown) => err instanceof VmError && err.code === 'deadline_exceeded',
    );
  });

  test('the first abort reason wins', () => {
    const budget = new Budget();
    budget.abort(new RvmError('a', 'client_gone'));
    budget.abort(new RvmError('b', 'request_timeout'));
    assert.equal(budget.reason?.code, 'client_gone');
    assert.equal(budget.signal.aborted, true);
  });

  test('a host without a budget gets a fresh one per execution', () => {
    const host = { respond: () => HALT, fail: () => HALT } as unknown as CallContext as VmHost;
    assert.equal(execute(program([counter(10)]), 0, [], host), 10);
  });
});
