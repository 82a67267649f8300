/**
 * The linker: joins the compiled modules of an app into one Program. Top-level names share one
 * app-wide namespace; every call site is bound to a chunk or a native once, here, with its arity
 * checked, so the interpreter never looks a name up per request.
 *
 * Binding is eager by default: every chunk is bound at load and every problem is a diagnostic.
 * An app already proven to link (the cache's link proof: the same sources, compiler and plugins
 * linked without an error before) is linked lazily instead, like V8 compiles functions: names
 * are declared at load, and a chunk — with every chunk it can call — is unpacked and bound when
 * it first runs. A problem found then (a plugin changed under the same name@version) fails that
 * request with 500; it never runs a half-bound chunk.
 */
import { Op, INSTRUCTION_SIZE } from '../bytecode/opcodes.js';
import { diagnostic, didYouMean, type Diagnostic } from '../diagnostics.js';
import { DIAG, HTTP } from '../errors.js';
import type { CallableMeta, CallRef, ChunkData, CompiledModule } from '../bytecode/module.js';
import type { LinkedChunk, Program } from './program.js';
import type { NativeFn } from '../host/natives.js';
import type { Value } from '../values.js';
import { arityMismatch, takesArguments } from '../arity.js';
import { RvmError } from '../values.js';
import type { PluginRegistry } from '../host/registry.js';
import { NO_TYPE_VALIDATION, RecordLinker, type TypeValidation } from './link-records.js';
import type { RecordType } from '../host/records.js';

/** What linking gives the host: the program, where each module's chunks and each callable landed, and the problems. */
export interface LinkResult {
  program: Program;
  /** Index in the program of each module's first chunk, in module order. */
  offsets: number[];
  /** The app-wide `fn`s and `guard_definition`s, by name, with their bound chunk. */
  callables: ReadonlyMap<string, LinkedCallable>;
  /** The compiled data of a program chunk, read without binding it (a lazily linked chunk may be unbound). */
  dataOf(chunk: number): ChunkData;
  /** The app's `type` declarations, as the record provider was told them. */
  types: ReadonlyMap<string, RecordType>;
  /** Errors make the program unusable. */
  diagnostics: Diagnostic[];
}

/** An app-wide `fn` or `guard_definition` and the program chunk it runs. */
export interface LinkedCallable {
  kind: 'fn' | 'guard';
  /** Index in the program's chunks. */
  chunk: number;
  arity: number;
  file: string;
  line: number;
  meta: CallableMeta;
}

/** Where a call reference stands in the source, for diagnostics. */
function at(chunk: LinkedChunk, ref: CallRef): { file: string; line: number; col: number } {
  return { file: chunk.file, line: ref.line, col: ref.col };
}

/** Stands in for the data of a chunk not bound yet (lazy linking). */
const UNBOUND: ChunkData = Object.freeze({
  name: '(unbound)',
  kind: 'fn',
  arity: 0,
  slots: 0,
  maxStack: 0,
  code: new Int32Array(0),
  consts: [],
  lines: new Int32Array(0),
  refs: [],
});

/**
 * Links `modules` against the plugins in `registry`; `lazy` only for an app proven to link (see
 * above). `unparsed` names fns and guard_definitions whose declarations have syntax errors (already
 * reported): a call to one is left unbound without a second diagnostic. `validation` builds each
 * record type's write validation (the runtime's validators).
 */
export function link(
  modules: readonly CompiledModule[],
  registry: PluginRegistry,
  lazy = false,
  unparsed: ReadonlySet<string> = new Set(),
  validation: TypeValidation = NO_TYPE_VALIDATION,
): LinkResult {
  const diagnostics: Diagnostic[] = [];
  const chunks: LinkedChunk[] = [];
  /** Where each program chunk's data lives: the module and its index there (read on binding). */
  const origins: { module: CompiledModule; index: number }[] = [];
  const natives: NativeFn[] = [];
  const nativeNames: string[] = [];
  const nativeIndex = new Map<string, number>();
  const callables = new Map<string, LinkedCallable>();
  const typeNames = new Map<string, string>();
  /** The app-wide constants by name, with where each is declared. */
  const consts = new Map<string, { value: Value; file: string; line: number }>();
  const records = new RecordLinker(registry, validation);
  const offsets: number[] = [];
  const dataOf = (chunk: number): ChunkData => origins[chunk]!.module.chunks[origins[chunk]!.index]!;

  const declare = (name: string, what: string, file: string, line: number, col: number): boolean => {
    const earlier = callables.get(name) ?? consts.get(name);
    const earlierType = typeNames.get(name);
    const clash = earlier ? `${earlier.file}:${earlier.line}` : earlierType;
    if (clash) {
      diagnostics.push(diagnostic(DIAG.E_DUPLICATE_NAME, `${what} '${name}' is already declared at ${clash}`, { file, line, col }));
      return false;
    }
    return true;
  };

  // Pass 1: lay out every chunk (unbound) and collect the app-wide names.
  for (const m of modules) {
    const offset = chunks.length;
    offsets.push(offset);
    const routeOfChunk = new Map(m.routes.map((r) => [r.chunk, r] as const));
    // Only the count is read here: a cached module unpacks a chunk when it is first read.
    for (let i = 0; i < m.chunks.length; i++) {
      chunks.push({ data: UNBOUND, file: m.file, code: UNBOUND.code, consts: UNBOUND.consts as Value[], route: routeOfChunk.get(i) ?? null, bound: false });
      origins.push({ module: m, index: i });
    }
    for (const c of m.consts ?? []) {
      if (declare(c.name, 'const', m.file, c.line, c.col)) consts.set(c.name, { value: c.value, file: m.file, line: c.line });
    }
    for (const t of m.types) {
      if (!declare(t.name, 'type', m.file, t.line, t.col)) continue;
      typeNames.set(t.name, `${m.file}:${t.line}`);
      records.add(t, m.file);
    }
    for (const f of m.functions) {
      if (declare(f.name, 'fn', m.file, f.line, f.col)) {
        callables.set(f.name, { kind: 'fn', chunk: offset + f.chunk, arity: f.params.length, file: m.file, line: f.line, meta: f });
      }
    }
    for (const g of m.guards) {
      if (declare(g.name, 'guard_definition', m.file, g.line, g.col)) {
        callables.set(g.name, { kind: 'guard', chunk: offset + g.chunk, arity: g.params.length, file: m.file, line: g.line, meta: g });
      }
    }
  }
  records.declare();
  for (const [name, c] of callables) {
    const native = registry.natives.get(name);
    if (c.kind === 'fn' && native) {
      diagnostics.push(
        diagnostic(DIAG.E_DUPLICATE_NAME, `fn '${name}' clashes with the native of plugin '${native.plugin}'`, { file: c.file, line: c.line, col: 1 }),
      );
    }
  }

  const bindNative = (key: string, fn: NativeFn): number => {
    let index = nativeIndex.get(key);
    if (index === undefined) {
      index = natives.length;
      natives.push(fn);
      nativeNames.push(key);
      nativeIndex.set(key, index);
    }
    return index;
  };

  // Pass 2: bind every CALL. The binders are made once, not per call site; problems go to `report`.
  const bindCall = (r: CallRef, from: LinkedChunk, report: Diagnostic[]): { op: Op; index: number } | null => {
    const own = callables.get(r.name);
    if (own && own.kind === 'fn') {
      if (own.arity !== r.argc) {
        report.push(diagnostic(DIAG.E_ARITY, `'${r.name}' ${takesArguments(String(own.arity))}, got ${r.argc}`, at(from, r), { length: r.name.length }));
        return null;
      }
      return { op: Op.CALL_FN, index: own.chunk };
    }
    if (records.owns(r.name)) {
      const method = records.bindMethod(r, at(from, r), report);
      return method === null ? null : { op: Op.CALL_NATIVE, index: bindNative(method.key, method.fn) };
    }
    const native = registry.natives.get(r.name);
    if (!native && !own && unparsed.has(r.name)) return null;
    if (!native) {
      const candidates = [...registry.natives.keys(), ...[...callables].filter(([, c]) => c.kind === 'fn').map(([n]) => n), ...records.candidates()];
      const what = own ? `'${r.name}' is a guard_definition; use it as 'guard ${r.name}'` : `unknown function '${r.name}'`;
      report.push(diagnostic(DIAG.E_UNKNOWN_FUNCTION, what, at(from, r), { hint: own ? undefined : didYouMean(r.name, candidates), length: r.name.length }));
      return null;
    }
    const nativeArity = arityMismatch(native.meta.params, r.argc);
    if (nativeArity !== null) {
      report.push(diagnostic(DIAG.E_ARITY, `'${r.name}' ${takesArguments(nativeArity)}, got ${r.argc}`, at(from, r), { length: r.name.length }));
      return null;
    }
    for (const [i, params] of r.lambdas ?? []) {
      const expected = native.meta.params[i]?.arity;
      if (expected !== undefined && expected !== params) {
        const passes = expected === 1 ? '1 argument' : `${expected} arguments`;
        report.push(diagnostic(DIAG.E_ARITY, `'${r.name}' calls its lambda with ${passes}, this one takes ${params}`, at(from, r), { length: r.name.length }));
        return null;
      }
    }
    if (native.meta.scope === 'middleware' && from.data.kind !== 'middleware') {
      report.push(diagnostic(DIAG.E_SCOPE, `'${r.name}()' can only be called inside a middleware block`, at(from, r), { length: r.name.length }));
      return null;
    }
    return { op: Op.CALL_NATIVE, index: bindNative(r.name, native.fn) };
  };

  const bindGuard = (r: CallRef, from: LinkedChunk, report: Diagnostic[]): { op: Op; index: number } | null => {
    const own = callables.get(r.name);
    if (own && own.kind === 'guard') {
      if (own.arity !== r.argc) {
        report.push(diagnostic(DIAG.E_ARITY, `guard '${r.name}' ${takesArguments(String(own.arity))}, got ${r.argc}`, at(from, r), { length: r.name.length }));
        return null;
      }
      return { op: Op.CALL_FN, index: own.chunk };
    }
    const guard = registry.guards.get(r.name);
    if (!guard && !own && unparsed.has(r.name)) return null;
    if (!guard) {
      const candidates = [...registry.guards.keys(), ...[...callables].filter(([, c]) => c.kind === 'guard').map(([n]) => n)];
      report.push(diagnostic(DIAG.E_UNKNOWN_GUARD, `unknown guard '${r.name}'`, at(from, r), { hint: didYouMean(r.name, candidates), length: r.name.length }));
      return null;
    }
    const guardArity = arityMismatch(guard.meta.params, r.argc);
    if (guardArity !== null) {
      report.push(diagnostic(DIAG.E_ARITY, `guard '${r.name}' ${takesArguments(guardArity)}, got ${r.argc}`, at(from, r), { length: r.name.length }));
      return null;
    }
    const mode = r.mode ?? 'required';
    const key = `guard ${r.name}:${mode}`;
    // One adapter per guard and mode, however many routes use it.
    if (nativeIndex.has(key)) return { op: Op.CALL_NATIVE, index: nativeIndex.get(key)! };
    const use = { mode } as const;
    const run = guard.fn;
    // Guards take their arguments as one list; the adapter makes a guard callable like a native.
    const adapter: NativeFn = (ctx, ...args) => {
      const result = run(ctx, args, use);
      if (result instanceof Promise) return result.then((r2) => (r2 === undefined ? null : r2));
      return result === undefined ? null : result;
    };
    return { op: Op.CALL_NATIVE, index: bindNative(key, adapter) };
  };

  /** Another file's constant: a native that gives its value, one per constant. */
  const bindConst = (r: CallRef, from: LinkedChunk, report: Diagnostic[]): { op: Op; index: number } | null => {
    const c = consts.get(r.name);
    if (c === undefined) {
      const hint = didYouMean(r.name, [...consts.keys()]) ?? `declare it at the top level of a file: const ${r.name} = …`;
      report.push(diagnostic(DIAG.E_UNDEFINED_NAME, `no file declares the constant '${r.name}'`, at(from, r), { hint, length: r.name.length }));
      return null;
    }
    const value = c.value;
    return { op: Op.CALL_NATIVE, index: bindNative(`const ${r.name}`, () => value) };
  };

  const bindStep = (r: CallRef, from: LinkedChunk, report: Diagnostic[]): { op: Op; index: number } | null => {
    const step = records.bindStep(r, at(from, r), report);
    return step === null ? null : { op: Op.CALL_NATIVE, index: bindNative(step.key, step.fn) };
  };

  /** Unpacks chunk `index` into its program slot and binds its calls on a private copy of its code. */
  const bindChunk = (index: number, report: Diagnostic[]): void => {
    const chunk = chunks[index]!;
    const data = dataOf(index);
    const code = data.code.slice();
    chunk.data = data;
    chunk.code = code;
    chunk.consts = data.consts as Value[];
    // A lambda's chunk is named by its index in the module, which starts this far into the program.
    const moduleStart = index - origins[index]!.index;
    for (let ip = 0; ip < code.length; ip += INSTRUCTION_SIZE[code[ip]!]!) {
      if (code[ip] === Op.MAKE_LAMBDA) code[ip + 2] += moduleStart;
      else if (code[ip] === Op.CALL) {
        const ref = data.refs[code[ip + 1]!]!;
        const bound =
          ref.kind === 'guard'
            ? bindGuard(ref, chunk, report)
            : ref.kind === 'record'
              ? bindStep(ref, chunk, report)
              : ref.kind === 'const'
                ? bindConst(ref, chunk, report)
                : bindCall(ref, chunk, report);
        if (bound === null) continue;
        code[ip] = bound.op;
        code[ip + 1] = bound.index;
      }
    }
  };

  /**
   * Lazy linking: binds chunk `index` and every unbound chunk it can reach through CALL_FN, or
   * throws. Chunks are marked bound only once all of them bound cleanly, so a bound chunk never
   * reaches an unbound one and CALL_FN never meets a callee with an unbound CALL in it.
   */
  const failed = new Map<number, RvmError>();
  const prepare = (index: number): void => {
    // A chunk that failed once fails the same way again: not bound anew on every request.
    const known = failed.get(index);
    if (known !== undefined) throw known;
    const reached = [index];
    const seen = new Set(reached);
    for (let k = 0; k < reached.length; k++) {
      const report: Diagnostic[] = [];
      bindChunk(reached[k]!, report);
      if (report.length > 0) {
        const d = report[0]!;
        const error = new RvmError(`${d.file}:${d.line}:${d.col} does not link against the loaded plugins: ${d.message}`, HTTP.internal_error.code);
        failed.set(index, error);
        throw error;
      }
      const code = chunks[reached[k]!]!.code;
      for (let ip = 0; ip < code.length; ip += INSTRUCTION_SIZE[code[ip]!]!) {
        const callee = code[ip] === Op.MAKE_LAMBDA ? code[ip + 2]! : code[ip + 1]!;
        if ((code[ip] === Op.CALL_FN || code[ip] === Op.MAKE_LAMBDA) && !chunks[callee]!.bound && !seen.has(callee)) {
          seen.add(callee);
          reached.push(callee);
        }
      }
    }
    for (const i of reached) chunks[i]!.bound = true;
  };

  if (!lazy) {
    for (let i = 0; i < chunks.length; i++) {
      bindChunk(i, diagnostics);
      chunks[i]!.bound = true;
    }
  }

  return { program: { chunks, natives, nativeNames, prepare }, offsets, callables, dataOf, types: records.types, diagnostics };
}
