/**
 * The stack VM: one dispatch loop over a linked program. Each execution is a Fiber (value stack,
 * call frames, catch handlers) spending its request's Budget; the VM suspends the fiber when a
 * native returns a Promise (resuming when it settles) and when its time slice is spent (resuming
 * at its turn, scheduler.ts, so other requests and I/O get the event loop).
 */
import { Op, OPCODES } from '../bytecode/opcodes.js';
import { nextTurn } from './scheduler.js';
import { HTTP, RUNTIME } from '../errors.js';
import { HALT, type Halt } from '../host/context.js';
import { typeError as argumentTypeError } from '../host/args.js';
import {
  HostObject,
  Lambda,
  MAX_LIST_LENGTH,
  MAX_TEXT_LENGTH,
  RvmError,
  SecretText,
  getField,
  power,
  revealText,
  isTruthy,
  sequenceIndex,
  setField,
  toText,
  typeName,
  valuesEqual,
  type Value,
  type ValueObject,
} from '../values.js';
import type { LinkedChunk, Program, VmHost } from './program.js';
import { Budget, CHECK_INTERVAL } from './budget.js';
import { thrownCodeProblem } from '../lang.js';

export { FUEL_BUDGET, CPU_BUDGET_MS, TIME_SLICE_MS } from './budget.js';
/** Nested calls of `fn`/guard chunks. Deep enough for honest recursion, shallow enough to stop runaway recursion early. */
export const MAX_CALL_DEPTH = 200;

const TRACE = process.env.RVM_TRACE === '1';

/**
 * Limits end the request: a `try` around an endless loop must not keep it alive. An aborted
 * request's reason (client gone, deadline) is uncatchable whatever its code.
 */
const UNCATCHABLE = new Set(['fuel_exhausted', 'cpu_budget_exceeded', 'call_depth_exceeded']);

/** A runtime error with the rvm source location where it happened. */
export class VmError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly file: string,
    readonly line: number,
    /** `file:line` of each active frame, innermost first. */
    readonly trace: string[],
  ) {
    super(message);
    this.name = 'VmError';
  }
  get at(): string {
    return `${this.file}:${this.line}`;
  }
}

interface Frame {
  chunk: LinkedChunk;
  ip: number;
  base: number;
}

interface Handler {
  frame: number;
  sp: number;
  target: number;
}

interface Iter {
  items: Value[];
  keys: Value[] | null;
  i: number;
}

class Fiber {
  stack: Value[] = [];
  sp = 0;
  frames: Frame[] = [];
  handlers: Handler[] = [];
  pendingError: unknown = undefined;
  constructor(
    readonly program: Program,
    readonly host: VmHost,
    readonly budget: Budget,
    /**
     * Call levels below this fiber: a lambda a native calls runs in a fiber of its own, on top of
     * its caller's frames, and cannot suspend (its native waits for its result synchronously).
     */
    public depth = 0,
  ) {}
  /** The fiber this one's natives run lambdas in, made once and reused call after call. */
  child: Fiber | null = null;
  get nested(): boolean {
    return this.depth > 0;
  }
}

/** The fiber whose native is running now, through which the native calls lambdas (`ctx.call`). */
let running: Fiber | null = null;

/** Thrown out of a native whose lambda answered the request (it called a fn that did `fail`): its caller ends the handler. */
const ANSWERED = Symbol('rvm.answered');

/**
 * Runs chunk `chunkIndex` with `args`, spending `host.budget` (a fresh Budget when the host has
 * none); returns its value, HALT when the request was answered, or a Promise of either.
 */
export function execute(program: Program, chunkIndex: number, args: readonly Value[], host: VmHost): Value | Halt | Promise<Value | Halt> {
  const chunk = program.chunks[chunkIndex]!;
  // Lazy linking binds a chunk and all it can call here, so CALL_FN always finds its callee bound.
  if (!chunk.bound) program.prepare(chunkIndex);
  const fiber = new Fiber(program, host, (host.budget as Budget | undefined) ?? new Budget());
  const stack = fiber.stack;
  for (let i = 0; i < args.length; i++) stack[i] = args[i]!;
  for (let i = args.length; i < chunk.data.slots; i++) stack[i] = null;
  fiber.sp = chunk.data.slots;
  fiber.frames.push({ chunk, ip: 0, base: 0 });
  return run(fiber);
}

/** Line of the instruction at or before `offset`, from the chunk's (offset, line, col) triples. */
export function lineAt(chunk: LinkedChunk, offset: number): number {
  const lines = chunk.data.lines;
  let line = 0;
  for (let i = 0; i + 2 < lines.length && lines[i]! <= offset; i += 3) line = lines[i + 1]!;
  return line;
}

function locate(fiber: Fiber, ip: number, e: unknown): VmError {
  if (e instanceof VmError) return e;
  const frames = fiber.frames;
  const top = frames[frames.length - 1]!;
  const trace: string[] = [];
  for (let i = frames.length - 1; i >= 0; i--) {
    const f = frames[i]!;
    trace.push(`${f.chunk.file}:${lineAt(f.chunk, i === frames.length - 1 ? ip - 1 : f.ip - 1)}`);
  }
  const line = lineAt(top.chunk, ip - 1);
  if (e instanceof RvmError) return new VmError(e.message, e.code, top.chunk.file, line, trace);
  if (e instanceof RangeError && /call stack/i.test(e.message)) {
    return new VmError('native recursion too deep', RUNTIME.call_depth_exceeded, top.chunk.file, line, trace);
  }
  // A native threw something that is not an RvmError: a plugin bug, reported without its JS stack.
  const message = e instanceof Error ? e.message : String(e);
  return new VmError(message, RUNTIME.native_error, top.chunk.file, line, trace);
}

function errorValue(e: VmError): ValueObject {
  return { message: e.message, code: e.code };
}

function typeError(op: string, a: Value, b?: Value): RvmError {
  const operands = b === undefined ? typeName(a) : `${typeName(a)} and ${typeName(b)}`;
  return new RvmError(`cannot apply '${op}' to ${operands}`, RUNTIME.type_error);
}

/** `+` on anything but two numbers (the interpreter adds those inline). */
function add(budget: Budget, a: Value, b: Value): Value {
  // Text built from a secret is a secret.
  if (a instanceof SecretText || b instanceof SecretText) return new SecretText(checkedText(revealText(a) + revealText(b)));
  if (typeof a === 'string' || typeof b === 'string') return checkedText(toText(a) + toText(b));
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length + b.length > MAX_LIST_LENGTH) throw new RvmError(`a list of more than ${MAX_LIST_LENGTH} items`, RUNTIME.list_too_long);
    budget.chargeItems(a.length + b.length);
    return a.concat(b);
  }
  throw typeError('+', a, b);
}

/**
 * The error of `throw code, message`: the code a snake_case text (spec/language.md §6.2), the
 * message any value in its text form, the code itself when there is none.
 */
function thrown(code: Value, message: Value): RvmError {
  if (typeof code !== 'string') throw new RvmError(`'throw' needs a text code, not ${typeName(code)}`, RUNTIME.type_error);
  const problem = thrownCodeProblem(code);
  if (problem !== null) throw new RvmError(problem, RUNTIME.invalid_argument);
  return new RvmError(message === null ? code : checkedText(toText(message)), code);
}

function checkedText(text: string): string {
  if (text.length > MAX_TEXT_LENGTH) throw new RvmError(`a text of more than ${MAX_TEXT_LENGTH} characters`, RUNTIME.text_too_long);
  return text;
}

function arith(op: Op, a: Value, b: Value): number {
  if (typeof a !== 'number' || typeof b !== 'number') throw typeError(['-', '*', '/', '%'][op - Op.SUB]!, a, b);
  switch (op) {
    case Op.SUB:
      return a - b;
    case Op.MUL:
      return a * b;
    case Op.DIV:
      if (b === 0) throw new RvmError('division by zero', RUNTIME.division_by_zero);
      return a / b;
    default:
      if (b === 0) throw new RvmError('division by zero', RUNTIME.division_by_zero);
      return a % b;
  }
}

function compare(op: Op, a: Value, b: Value): boolean {
  if (!((typeof a === 'number' && typeof b === 'number') || (typeof a === 'string' && typeof b === 'string'))) {
    throw typeError(['<', '<=', '>', '>='][op - Op.LT]!, a, b);
  }
  switch (op) {
    case Op.LT:
      return a < b;
    case Op.LE:
      return a <= b;
    case Op.GT:
      return a > b;
    default:
      return a >= b;
  }
}

/** A negative index counts from the end (`xs[-1]` is the last item); outside the sequence is null. */
function getIndex(budget: Budget, obj: Value, index: Value): Value {
  if (Array.isArray(obj)) {
    if (typeof index !== 'number' || !Number.isInteger(index)) throw new RvmError(`list index must be an int, not ${typeName(index)}`, RUNTIME.type_error);
    const at = sequenceIndex(index, obj.length);
    return at === null ? null : obj[at]!;
  }
  if (typeof obj === 'string') {
    if (typeof index !== 'number' || !Number.isInteger(index)) throw new RvmError(`text index must be an int, not ${typeName(index)}`, RUNTIME.type_error);
    // Characters are code points, as for len() and for-in: never half of a surrogate pair.
    budget.chargeItems(obj.length);
    const chars = Array.from(obj);
    const at = sequenceIndex(index, chars.length);
    return at === null ? null : chars[at]!;
  }
  if (obj === null) throw new RvmError(`cannot index null`, RUNTIME.null_field);
  if (typeof obj === 'object') {
    if (typeof index !== 'string') throw new RvmError(`object key must be text, not ${typeName(index)}`, RUNTIME.type_error);
    return getField(obj, index);
  }
  throw new RvmError(`cannot index ${typeName(obj)}`, RUNTIME.type_error);
}

/** `xs[i] = v` for `i` from `-len(xs)` to `len(xs)`: negative from the end, `len(xs)` appends. */
function setIndex(obj: Value, index: Value, value: Value): void {
  if (Array.isArray(obj)) {
    if (typeof index !== 'number' || !Number.isInteger(index)) throw new RvmError(`list index must be an int, not ${typeName(index)}`, RUNTIME.type_error);
    const at = index === obj.length ? index : sequenceIndex(index, obj.length);
    if (at === null) throw new RvmError(`list index ${index} out of range -${obj.length}..${obj.length}`, RUNTIME.index_out_of_range);
    obj[at] = value;
    return;
  }
  if (typeof index !== 'string') throw new RvmError(`object key must be text, not ${typeName(index)}`, RUNTIME.type_error);
  setField(obj, index, value);
}

function iterate(budget: Budget, v: Value): Iter {
  if (Array.isArray(v)) {
    budget.chargeItems(v.length);
    return { items: v.slice(), keys: null, i: 0 };
  }
  if (typeof v === 'string') {
    // The characters become a list, which holds to the lists' limit (counted in UTF-16 units, an
    // upper bound of the characters, so nothing is built or scanned to decide).
    if (v.length > MAX_LIST_LENGTH) throw new RvmError(`for over a text of more than ${MAX_LIST_LENGTH} characters`, RUNTIME.list_too_long);
    budget.chargeItems(v.length);
    return { items: Array.from(v), keys: null, i: 0 };
  }
  if (v instanceof HostObject) {
    const keys = v.keys();
    budget.chargeItems(keys.length);
    return { items: keys.map((k) => v.get(k) ?? null), keys, i: 0 };
  }
  if (v !== null && typeof v === 'object') {
    const keys = Object.keys(v);
    budget.chargeItems(keys.length);
    return { items: keys.map((k) => v[k]!), keys, i: 0 };
  }
  throw new RvmError(`cannot iterate over ${typeName(v)}`, RUNTIME.not_iterable);
}

/** `==` on two lists or objects: the work grows with their size, so it is charged. */
function equalCharged(budget: Budget, a: Value, b: Value): boolean {
  if (Array.isArray(a)) {
    if (Array.isArray(b) && a.length === b.length) budget.chargeItems(a.length);
  } else if (a !== null && typeof a === 'object' && !(a instanceof HostObject)) {
    budget.chargeItems(Object.keys(a).length);
  }
  return valuesEqual(a, b);
}

function buildObject(stack: Value[], from: number, pairs: number): ValueObject {
  const o: ValueObject = {};
  for (let i = 0; i < pairs; i++) {
    const key = stack[from + 2 * i] as string;
    const value = stack[from + 2 * i + 1]!;
    if (key === '__proto__') setField(o, key, value);
    else o[key] = value;
  }
  return o;
}

/** Runs the fiber until it returns, suspends or fails; its time on the event loop ends there. */
function run(fiber: Fiber): Value | Halt | Promise<Value | Halt> {
  // A native may run another execution to its end (middleware's next()): its caller runs on after.
  const caller = running;
  running = fiber;
  try {
    return dispatch(fiber);
  } finally {
    running = caller;
    fiber.budget.endSlice();
  }
}

/**
 * Calls lambda `f` with `args` for the native running now (`ctx.call`), synchronously, on the
 * request's budget: one unit of fuel and one call level, as a call of a fn. Its runtime errors
 * carry the lambda's line. It cannot suspend: a native inside it that waits is refused
 * (`lambda_cannot_wait`) and a slice spent does not yield until the native returns.
 */
export function callLambda(f: Value, args: readonly Value[]): Value {
  const caller = running;
  if (!(f instanceof Lambda)) throw new RvmError(`expected a lambda, not ${typeName(f)}`, RUNTIME.type_error);
  if (caller === null) throw new RvmError('a lambda can only be called while its request runs', RUNTIME.not_callable);
  const chunk = f.chunk as LinkedChunk;
  checkArity(f, args.length);
  const depth = caller.depth + caller.frames.length;
  if (depth >= MAX_CALL_DEPTH) throw callDepthExceeded();
  const budget = caller.budget;
  if ((budget.fuel-- & CHECK_INTERVAL) === 0) budget.checkpoint();
  // A fiber runs one lambda at a time, so its child is free whenever one of its natives calls.
  const fiber = (caller.child ??= new Fiber(caller.program, caller.host, budget, depth));
  fiber.depth = depth;
  fiber.frames.length = 0;
  fiber.handlers.length = 0;
  const stack = fiber.stack;
  for (let i = 0; i < args.length; i++) stack[i] = args[i]!;
  enterFrame(stack, 0, args.length, f);
  fiber.sp = chunk.data.slots;
  fiber.frames.push({ chunk, ip: 0, base: 0 });
  running = fiber;
  try {
    const result = dispatch(fiber);
    if (result === HALT) throw ANSWERED;
    return result as Value;
  } finally {
    running = caller;
  }
}

function checkArity(f: Lambda, argc: number): void {
  const arity = f.chunk.data.arity;
  if (argc !== arity) {
    const takes = arity === 1 ? '1 parameter' : `${arity} parameters`;
    throw new RvmError(`the ${f.chunk.data.name} takes ${takes}, called with ${argc}`, RUNTIME.wrong_arity);
  }
}

/** Lays out the slots of a call of lambda `f` whose `argc` arguments are at `base`: its captured locals after them, its other slots null. */
function enterFrame(stack: Value[], base: number, argc: number, f: Lambda): void {
  const captures = f.captures;
  for (let i = 0; i < captures.length; i++) stack[base + argc + i] = captures[i]!;
  const slots = (f.chunk as LinkedChunk).data.slots;
  for (let i = argc + captures.length; i < slots; i++) stack[base + i] = null;
}

/** A call past MAX_CALL_DEPTH, of a fn or a lambda, from bytecode or a native. */
function callDepthExceeded(): RvmError {
  return new RvmError(`call depth exceeded ${MAX_CALL_DEPTH} (runaway recursion?)`, RUNTIME.call_depth_exceeded);
}

/** A nested fiber (a lambda a native calls) cannot wait: the promise is left to settle unobserved. */
function cannotWait(pending: Promise<unknown>): RvmError {
  pending.catch(() => {});
  return new RvmError('a lambda called by a native cannot wait for I/O (a query, a fetch): use a for loop', RUNTIME.lambda_cannot_wait);
}

/** Runs the fiber on once a runtime step (VALIDATE, READ_BODY) settles; HALT (it answered) ends it. */
function afterStep(fiber: Fiber, step: Promise<void | Halt>): Promise<Value | Halt> {
  return step.then((v) => (v === HALT ? HALT : run(fiber)));
}

/** Suspends the fiber until the event loop has served what waits (I/O, other requests), then runs it on. */
function pause(fiber: Fiber): Promise<Value | Halt> {
  return nextTurn().then(() => {
    // A request that yielded is busy: its next slice is counted from the start, not from its first check.
    fiber.budget.sliceStart = performance.now();
    return run(fiber);
  });
}

/** The dispatch loop. Keeps ip, sp, code and constants in locals; writes them back around calls. */
function dispatch(fiber: Fiber): Value | Halt | Promise<Value | Halt> {
  const { program, host, stack, frames, handlers, budget } = fiber;
  const natives = program.natives;
  let frame = frames[frames.length - 1]!;
  let code = frame.chunk.code;
  let consts = frame.chunk.consts;
  let ip = frame.ip;
  let base = frame.base;
  let sp = fiber.sp;

  for (;;) {
    try {
      // An aborted request runs no further instruction, whatever resumed it.
      if (budget.aborted) throw budget.reason;
      if (fiber.pendingError !== undefined) {
        const e = fiber.pendingError;
        fiber.pendingError = undefined;
        throw e;
      }
      // Instructions whose work grows with their operands (natives, text and list builders)
      // charge the budget and leave this loop when the charges crossed the next check point.
      instructions: for (;;) {
        if (TRACE) trace(frame, ip, stack, sp);
        switch (code[ip++]) {
          case Op.CONST:
            stack[sp++] = consts[code[ip++]!]!;
            break;
          case Op.NULL:
            stack[sp++] = null;
            break;
          case Op.TRUE:
            stack[sp++] = true;
            break;
          case Op.FALSE:
            stack[sp++] = false;
            break;
          case Op.POP:
            sp--;
            break;
          case Op.DUP:
            stack[sp] = stack[sp - 1]!;
            sp++;
            break;
          case Op.LOAD_LOCAL:
            stack[sp++] = stack[base + code[ip++]!]!;
            break;
          case Op.STORE_LOCAL:
            stack[base + code[ip++]!] = stack[--sp]!;
            break;
          case Op.LOAD_AMBIENT:
            stack[sp++] = ambient(host, code[ip++]!);
            break;
          case Op.GET_FIELD:
            stack[sp - 1] = getField(stack[sp - 1], consts[code[ip++]!] as string);
            break;
          case Op.GET_INDEX: {
            const index = stack[--sp]!;
            stack[sp - 1] = getIndex(budget, stack[sp - 1]!, index);
            if (budget.charged >= budget.nextCheck) break instructions;
            break;
          }
          case Op.SET_FIELD: {
            const value = stack[--sp]!;
            setField(stack[--sp], consts[code[ip++]!] as string, value);
            break;
          }
          case Op.SET_INDEX: {
            const value = stack[--sp]!;
            const index = stack[--sp]!;
            setIndex(stack[--sp]!, index, value);
            break;
          }
          case Op.LIST: {
            const n = code[ip++]!;
            sp -= n;
            stack[sp] = stack.slice(sp, sp + n);
            sp++;
            break;
          }
          case Op.OBJECT: {
            const n = code[ip++]!;
            sp -= 2 * n;
            stack[sp] = buildObject(stack, sp, n);
            sp++;
            break;
          }
          case Op.TEMPLATE: {
            const n = code[ip++]!;
            sp -= n;
            let text = '';
            let secret = false;
            for (let i = 0; i < n; i++) {
              const part = stack[sp + i];
              if (part instanceof SecretText) secret = true;
              text += revealText(part);
            }
            budget.chargeText(text.length);
            stack[sp++] = secret ? new SecretText(checkedText(text)) : checkedText(text);
            if (budget.charged >= budget.nextCheck) break instructions;
            break;
          }
          case Op.ADD: {
            const b = stack[--sp]!;
            const a = stack[sp - 1]!;
            if (typeof a === 'number' && typeof b === 'number') {
              stack[sp - 1] = a + b;
              break;
            }
            stack[sp - 1] = add(budget, a, b);
            if (budget.charged >= budget.nextCheck) break instructions;
            break;
          }
          case Op.SUB:
          case Op.MUL:
          case Op.DIV:
          case Op.MOD: {
            const b = stack[--sp]!;
            stack[sp - 1] = arith(code[ip - 1]!, stack[sp - 1]!, b);
            break;
          }
          case Op.NEG: {
            const a = stack[sp - 1]!;
            if (typeof a !== 'number') throw typeError('-', a);
            stack[sp - 1] = -a;
            break;
          }
          case Op.NOT:
            stack[sp - 1] = !isTruthy(stack[sp - 1]);
            break;
          case Op.EQ:
          case Op.NE: {
            const b = stack[--sp]!;
            const a = stack[sp - 1]!;
            const ne = code[ip - 1] === Op.NE;
            if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
              stack[sp - 1] = valuesEqual(a, b) !== ne;
              break;
            }
            stack[sp - 1] = equalCharged(budget, a, b) !== ne;
            if (budget.charged >= budget.nextCheck) break instructions;
            break;
          }
          case Op.LT:
          case Op.LE:
          case Op.GT:
          case Op.GE: {
            const b = stack[--sp]!;
            stack[sp - 1] = compare(code[ip - 1]!, stack[sp - 1]!, b);
            break;
          }
          case Op.JUMP:
            ip = code[ip]!;
            break;
          case Op.JUMP_IF_FALSE:
            if (isTruthy(stack[--sp])) ip++;
            else ip = code[ip]!;
            break;
          case Op.JUMP_IF_FALSE_OR_POP:
            if (isTruthy(stack[sp - 1])) {
              sp--;
              ip++;
            } else ip = code[ip]!;
            break;
          case Op.JUMP_IF_TRUE_OR_POP:
            if (isTruthy(stack[sp - 1])) ip = code[ip]!;
            else {
              sp--;
              ip++;
            }
            break;
          case Op.JUMP_IF_NOT_NULL_OR_POP:
            if (stack[sp - 1] !== null) ip = code[ip]!;
            else {
              sp--;
              ip++;
            }
            break;
          case Op.LOOP:
            // Fuel first: an error raised here is located at this instruction, not its target.
            if ((budget.fuel-- & CHECK_INTERVAL) === 0 && budget.checkpoint() && !fiber.nested) {
              frame.ip = code[ip]!;
              fiber.sp = sp;
              return pause(fiber);
            }
            ip = code[ip]!;
            break;
          case Op.ITER_INIT:
            stack[sp - 1] = iterate(budget, stack[sp - 1]!) as unknown as Value;
            if (budget.charged >= budget.nextCheck) break instructions;
            break;
          case Op.ITER_LIST: {
            const xs = stack[sp - 1]!;
            if (!Array.isArray(xs)) throw argumentTypeError(consts[code[ip]!] as string, 'xs', 'a list', xs);
            ip++;
            stack[sp - 1] = iterate(budget, xs) as unknown as Value;
            if (budget.charged >= budget.nextCheck) break instructions;
            break;
          }
          case Op.ITER_NEXT: {
            const it = stack[sp - 1] as unknown as Iter;
            if (it.i >= it.items.length) {
              sp--;
              ip = code[ip]!;
            } else {
              ip++;
              const i = it.i++;
              stack[sp++] = it.keys === null ? it.items[i]! : it.keys[i]!;
            }
            break;
          }
          case Op.ITER_NEXT_PAIR: {
            const it = stack[sp - 1] as unknown as Iter;
            if (it.i >= it.items.length) {
              sp--;
              ip = code[ip]!;
            } else {
              ip++;
              const i = it.i++;
              stack[sp++] = it.keys === null ? i : it.keys[i]!;
              stack[sp++] = it.items[i]!;
            }
            break;
          }
          case Op.CALL_FN: {
            const callee = program.chunks[code[ip++]!]!;
            const argc = code[ip++]!;
            if (frames.length + fiber.depth >= MAX_CALL_DEPTH) {
              throw callDepthExceeded();
            }
            if ((budget.fuel-- & CHECK_INTERVAL) === 0 && budget.checkpoint() && !fiber.nested) {
              // Yield before the call: resumed, the whole instruction (opcode, chunk, argc) runs again.
              frame.ip = ip - 3;
              fiber.sp = sp;
              return pause(fiber);
            }
            frame.ip = ip;
            base = sp - argc;
            for (let i = argc; i < callee.data.slots; i++) stack[base + i] = null;
            sp = base + callee.data.slots;
            frame = { chunk: callee, ip: 0, base };
            frames.push(frame);
            code = callee.code;
            consts = callee.consts;
            ip = 0;
            break;
          }
          case Op.CALL_NATIVE: {
            const fn = natives[code[ip++]!]!;
            const argc = code[ip++]!;
            sp -= argc;
            let result: Value | Halt | Promise<Value | Halt>;
            switch (argc) {
              case 0:
                result = fn(host);
                break;
              case 1:
                result = fn(host, stack[sp]!);
                break;
              case 2:
                result = fn(host, stack[sp]!, stack[sp + 1]!);
                break;
              default:
                result = fn(host, ...stack.slice(sp, sp + argc));
            }
            if (result === HALT) return HALT;
            if (result instanceof Promise) {
              if (fiber.nested) throw cannotWait(result);
              frame.ip = ip;
              fiber.sp = sp;
              return result.then(
                (v) => (v === HALT ? HALT : resume(fiber, v)),
                (e) => {
                  fiber.pendingError = e ?? new RvmError('native failed', RUNTIME.native_error);
                  return run(fiber);
                },
              );
            }
            stack[sp++] = result === undefined ? null : result;
            if (budget.charged >= budget.nextCheck) break instructions;
            break;
          }
          case Op.MAKE_LAMBDA: {
            const n = code[ip++]!;
            const chunk = program.chunks[code[ip++]!]!;
            sp -= n;
            stack[sp] = new Lambda(chunk, stack.slice(sp, sp + n));
            sp++;
            break;
          }
          case Op.CALL_VALUE: {
            const argc = code[ip++]!;
            const f = stack[sp - argc - 1]!;
            if (!(f instanceof Lambda)) throw new RvmError(`cannot call ${typeName(f)}: only a lambda can be called through a name`, RUNTIME.not_callable);
            checkArity(f, argc);
            if (frames.length + fiber.depth >= MAX_CALL_DEPTH) {
              throw callDepthExceeded();
            }
            if ((budget.fuel-- & CHECK_INTERVAL) === 0 && budget.checkpoint() && !fiber.nested) {
              frame.ip = ip - 2;
              fiber.sp = sp;
              return pause(fiber);
            }
            frame.ip = ip;
            // The arguments move down over the lambda, so its frame starts where the lambda was.
            base = sp - argc - 1;
            for (let i = 0; i < argc; i++) stack[base + i] = stack[base + i + 1]!;
            enterFrame(stack, base, argc, f);
            const callee = f.chunk as LinkedChunk;
            sp = base + callee.data.slots;
            frame = { chunk: callee, ip: 0, base };
            frames.push(frame);
            code = callee.code;
            consts = callee.consts;
            ip = 0;
            break;
          }
          case Op.APPEND: {
            const value = stack[--sp]!;
            const list = stack[--sp] as Value[];
            if (list.length >= MAX_LIST_LENGTH) throw new RvmError(`a list of more than ${MAX_LIST_LENGTH} items`, RUNTIME.list_too_long);
            list.push(value);
            break;
          }
          case Op.RETURN: {
            const value = stack[--sp]!;
            const depth = frames.length - 1;
            while (handlers.length > 0 && handlers[handlers.length - 1]!.frame === depth) handlers.pop();
            frames.pop();
            if (depth === 0) return value;
            sp = frame.base;
            stack[sp++] = value;
            frame = frames[depth - 1]!;
            code = frame.chunk.code;
            consts = frame.chunk.consts;
            ip = frame.ip;
            base = frame.base;
            break;
          }
          case Op.TRY:
            handlers.push({ frame: frames.length - 1, sp, target: code[ip++]! });
            break;
          case Op.END_TRY:
            handlers.pop();
            break;
          case Op.FAIL: {
            const message = stack[--sp]!;
            return host.failStatement(stack[--sp]!, message);
          }
          case Op.RESPOND:
            return host.respondStatement(stack[--sp]!);
          case Op.VALIDATE: {
            const route = frame.chunk.route;
            if (route === null) throw new RvmError('VALIDATE outside a route', HTTP.internal_error.code);
            const result = host.validate(route, code[ip++]!);
            if (result === HALT) return HALT;
            if (result instanceof Promise) {
              if (fiber.nested) throw cannotWait(result);
              frame.ip = ip;
              fiber.sp = sp;
              return afterStep(fiber, result);
            }
            break;
          }
          case Op.READ_BODY: {
            const result = host.readBody();
            if (result === undefined) break;
            if (result === HALT) return HALT;
            if (fiber.nested) throw cannotWait(result);
            frame.ip = ip;
            fiber.sp = sp;
            return afterStep(fiber, result);
          }
          case Op.POW: {
            const b = stack[--sp]!;
            const a = stack[sp - 1]!;
            if (typeof a !== 'number' || typeof b !== 'number') throw typeError('**', a, b);
            stack[sp - 1] = power(a, b);
            break;
          }
          case Op.JUMP_IF_NULL:
            if (stack[sp - 1] === null) ip = code[ip]!;
            else ip++;
            break;
          case Op.DUP2:
            stack[sp] = stack[sp - 2]!;
            stack[sp + 1] = stack[sp - 1]!;
            sp += 2;
            break;
          case Op.THROW: {
            const message = stack[--sp]!;
            throw thrown(stack[--sp]!, message);
          }
          case Op.CALL:
            throw new RvmError(`unlinked call in ${frame.chunk.data.name}`, HTTP.internal_error.code);
          default:
            throw new RvmError(`bad opcode ${code[ip - 1]} in ${frame.chunk.data.name}`, HTTP.internal_error.code);
        }
      }
      // Charged work crossed a check point: throws when the budget is spent, yields when the slice is.
      if (budget.checkpoint() && !fiber.nested) {
        frame.ip = ip;
        fiber.sp = sp;
        return pause(fiber);
      }
    } catch (e) {
      if (e === ANSWERED) return HALT;
      const error = locate(fiber, ip, e);
      const handler = UNCATCHABLE.has(error.code) || budget.aborted ? undefined : handlers.pop();
      if (handler === undefined) throw error;
      // Unwind to the frame that installed the handler and continue at its catch block.
      frames.length = handler.frame + 1;
      frame = frames[handler.frame]!;
      code = frame.chunk.code;
      consts = frame.chunk.consts;
      base = frame.base;
      sp = handler.sp;
      stack[sp++] = errorValue(error);
      ip = handler.target;
    }
  }
}

function resume(fiber: Fiber, value: Value): Value | Halt | Promise<Value | Halt> {
  fiber.stack[fiber.sp++] = value === undefined ? null : value;
  return run(fiber);
}

function ambient(host: VmHost, index: number): Value {
  switch (index) {
    case 0:
      return host.requestValue();
    case 1:
      return host.body;
    case 2:
      return host.paramsValue();
    case 3:
      return host.queryValue();
    case 4:
      return host.responseValue();
    default:
      return host.stateValue();
  }
}

/** RVM_TRACE=1: one stderr line per instruction with the frame's stack. */
function trace(frame: Frame, ip: number, stack: Value[], sp: number): void {
  const op = frame.chunk.code[ip]!;
  const shown = stack.slice(frame.base, sp).map((v) => (typeof v === 'object' && v !== null && 'items' in (v as object) ? '<iter>' : toText(v)));
  process.stderr.write(`[trace] ${frame.chunk.data.name} ${String(ip).padStart(4, '0')} ${OPCODES[op]?.name ?? op} stack=[${shown.join(', ')}]\n`);
}
