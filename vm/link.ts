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
import { Op, INSTRUCTION_SIZE } from './opcodes.js';
import { diagnostic, didYouMean, type Diagnostic } from './diagnostics.js';
import type { CallableMeta, CallRef, ChunkData, CompiledModule, ResponseMeta, RouteMeta } from './module.js';
import { mergeResponses } from './infer.js';
import type { Literal } from './ast.js';
import { defaultErrorCode } from './runtime/response.js';
import type { LinkedChunk, Program, ValidateHook } from './program.js';
import type { ErrorResponseSpec, GuardInfo, NativeFn, Value } from '../plugins/sdk.js';
import { arityMismatch, takesArguments } from './arity.js';
import { RvmError } from './values.js';
import type { PluginRegistry } from '../plugins/registry.js';
import type { UploadSpec } from './runtime/types.js';

/** A route ready for the router: its metadata, file and linked chunk indices. */
export interface LinkedRoute {
  meta: RouteMeta;
  file: string;
  chunk: number;
  middleware: number[];
  /** Its guards in written order, resolved against the app and the plugins. */
  guards: GuardInfo[];
  /**
   * What it can answer: its own inferred responses and those of every `fn` it calls, however
   * deep. Worked out on first read (the reference's), so a start that binds lazily stays lazy.
   */
  responses(): ResponseMeta[];
  /** Filled by the validation engine when the route takes file uploads. */
  uploads?: UploadSpec;
}

export interface LinkResult {
  program: Program;
  routes: LinkedRoute[];
  /** Errors make the program unusable. */
  diagnostics: Diagnostic[];
}

interface Callable {
  kind: 'fn' | 'guard';
  /** Index in the program's chunks. */
  chunk: number;
  arity: number;
  file: string;
  line: number;
  meta: CallableMeta;
}

/** The folder of a `_middleware.rvm` (`''` for the app root), or null for other files. */
export function middlewareFolder(file: string): string | null {
  if (file === '_middleware.rvm') return '';
  return file.endsWith('/_middleware.rvm') ? file.slice(0, -'/_middleware.rvm'.length) : null;
}

/** Folders from the root down to the folder of `file`: `a/b/x.rvm` → ['', 'a', 'a/b']. */
function folderChain(file: string): string[] {
  const parts = file.split('/').slice(0, -1);
  const chain = [''];
  for (let i = 1; i <= parts.length; i++) chain.push(parts.slice(0, i).join('/'));
  return chain;
}

/** Where a call reference stands in the source, for diagnostics. */
function at(chunk: LinkedChunk, ref: CallRef): { file: string; line: number; col: number } {
  return { file: chunk.file, line: ref.line, col: ref.col };
}

/** Stands in for the data of a chunk not bound yet (lazy linking). */
const UNBOUND: ChunkData = Object.freeze({ name: '(unbound)', kind: 'fn', arity: 0, slots: 0, maxStack: 0, code: new Int32Array(0), consts: [], lines: new Int32Array(0), refs: [] });

/**
 * Links `modules` against the plugins in `registry`; `lazy` only for an app proven to link (see
 * above). `unparsed` names fns and guard_definitions whose declarations have syntax errors (already
 * reported): a call to one is left unbound without a second diagnostic.
 */
export function link(
  modules: readonly CompiledModule[],
  registry: PluginRegistry,
  validate: ValidateHook,
  lazy = false,
  unparsed: ReadonlySet<string> = new Set(),
): LinkResult {
  const diagnostics: Diagnostic[] = [];
  const chunks: LinkedChunk[] = [];
  /** Where each program chunk's data lives: the module and its index there (read on binding). */
  const origins: { module: CompiledModule; index: number }[] = [];
  const natives: NativeFn[] = [];
  const nativeNames: string[] = [];
  const nativeIndex = new Map<string, number>();
  const callables = new Map<string, Callable>();
  const typeNames = new Map<string, string>();
  const offsets: number[] = [];
  const dataOf = (chunk: number): ChunkData => origins[chunk]!.module.chunks[origins[chunk]!.index]!;

  const declare = (name: string, what: string, file: string, line: number, col: number): boolean => {
    const earlier = callables.get(name);
    const earlierType = typeNames.get(name);
    const clash = earlier ? `${earlier.file}:${earlier.line}` : earlierType;
    if (clash) {
      diagnostics.push(diagnostic('E_DUPLICATE_NAME', `${what} '${name}' is already declared at ${clash}`, { file, line, col }));
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
    for (const t of m.types) if (declare(t.name, 'type', m.file, t.line, t.col)) typeNames.set(t.name, `${m.file}:${t.line}`);
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
  for (const [name, c] of callables) {
    const native = registry.natives.get(name);
    if (c.kind === 'fn' && native) {
      diagnostics.push(diagnostic('E_DUPLICATE_NAME', `fn '${name}' clashes with the native of plugin '${native.plugin}'`, { file: c.file, line: c.line, col: 1 }));
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
        report.push(diagnostic('E_ARITY', `'${r.name}' ${takesArguments(String(own.arity))}, got ${r.argc}`, at(from, r), { length: r.name.length }));
        return null;
      }
      return { op: Op.CALL_FN, index: own.chunk };
    }
    const native = registry.natives.get(r.name);
    if (!native && !own && unparsed.has(r.name)) return null;
    if (!native) {
      const candidates = [...registry.natives.keys(), ...[...callables].filter(([, c]) => c.kind === 'fn').map(([n]) => n)];
      const what = own ? `'${r.name}' is a guard_definition; use it as 'guard ${r.name}'` : `unknown function '${r.name}'`;
      report.push(diagnostic('E_UNKNOWN_FUNCTION', what, at(from, r), { hint: own ? undefined : didYouMean(r.name, candidates), length: r.name.length }));
      return null;
    }
    const nativeArity = arityMismatch(native.meta.params, r.argc);
    if (nativeArity !== null) {
      report.push(diagnostic('E_ARITY', `'${r.name}' ${takesArguments(nativeArity)}, got ${r.argc}`, at(from, r), { length: r.name.length }));
      return null;
    }
    if (native.meta.scope === 'middleware' && from.data.kind !== 'middleware') {
      report.push(diagnostic('E_SCOPE', `'${r.name}()' can only be called inside a middleware block`, at(from, r), { length: r.name.length }));
      return null;
    }
    return { op: Op.CALL_NATIVE, index: bindNative(r.name, native.fn) };
  };

  const bindGuard = (r: CallRef, from: LinkedChunk, report: Diagnostic[]): { op: Op; index: number } | null => {
    const own = callables.get(r.name);
    if (own && own.kind === 'guard') {
      if (own.arity !== r.argc) {
        report.push(diagnostic('E_ARITY', `guard '${r.name}' ${takesArguments(String(own.arity))}, got ${r.argc}`, at(from, r), { length: r.name.length }));
        return null;
      }
      return { op: Op.CALL_FN, index: own.chunk };
    }
    const guard = registry.guards.get(r.name);
    if (!guard && !own && unparsed.has(r.name)) return null;
    if (!guard) {
      const candidates = [...registry.guards.keys(), ...[...callables].filter(([, c]) => c.kind === 'guard').map(([n]) => n)];
      report.push(diagnostic('E_UNKNOWN_GUARD', `unknown guard '${r.name}'`, at(from, r), { hint: didYouMean(r.name, candidates), length: r.name.length }));
      return null;
    }
    const guardArity = arityMismatch(guard.meta.params, r.argc);
    if (guardArity !== null) {
      report.push(diagnostic('E_ARITY', `guard '${r.name}' ${takesArguments(guardArity)}, got ${r.argc}`, at(from, r), { length: r.name.length }));
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

  /** Unpacks chunk `index` into its program slot and binds its calls on a private copy of its code. */
  const bindChunk = (index: number, report: Diagnostic[]): void => {
    const chunk = chunks[index]!;
    const data = dataOf(index);
    const code = data.code.slice();
    chunk.data = data;
    chunk.code = code;
    chunk.consts = data.consts as Value[];
    // A chunk without call references has no CALL to bind.
    if (data.refs.length > 0) {
      for (let ip = 0; ip < code.length; ip += INSTRUCTION_SIZE[code[ip]!]!) {
        if (code[ip] !== Op.CALL) continue;
        const ref = data.refs[code[ip + 1]!]!;
        const bound = ref.kind === 'guard' ? bindGuard(ref, chunk, report) : bindCall(ref, chunk, report);
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
        const error = new RvmError(`${d.file}:${d.line}:${d.col} does not link against the loaded plugins: ${d.message}`, 'internal_error');
        failed.set(index, error);
        throw error;
      }
      const code = chunks[reached[k]!]!.code;
      for (let ip = 0; ip < code.length; ip += INSTRUCTION_SIZE[code[ip]!]!) {
        const callee = code[ip + 1]!;
        if (code[ip] === Op.CALL_FN && !chunks[callee]!.bound && !seen.has(callee)) {
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

  // Routes with their middleware chains (outermost first).
  const middlewareOf = new Map<string, number>();
  modules.forEach((m, i) => {
    const folder = middlewareFolder(m.file);
    if (folder !== null && m.middleware !== null) middlewareOf.set(folder, offsets[i]! + m.middleware);
  });
  const routes: LinkedRoute[] = [];
  // A guard the app has not configured is warned about once, at its first use.
  const setupChecked = new Set<string>();
  modules.forEach((m, i) => {
    const chain = folderChain(m.file)
      .map((f) => middlewareOf.get(f))
      .filter((c): c is number => c !== undefined);
    for (const r of m.routes) {
      for (const use of r.guards) {
        const meta = registry.guards.get(use.name)?.meta;
        // Arguments of the wrong count are E_ARITY's alone, and arguments that are not constants
        // E_NOT_CONSTANT's: checking them too would report the use twice.
        const checkable = meta !== undefined && !use.unfolded && arityMismatch(meta.params, use.args.length) === null;
        const problem = checkable ? meta.checkArgs?.(use.args) : null;
        if (problem) diagnostics.push(diagnostic('E_GUARD_ARGS', problem, { file: m.file, line: use.line, col: use.col }, { length: use.name.length }));
        if (meta?.checkSetup === undefined || setupChecked.has(use.name)) continue;
        setupChecked.add(use.name);
        const setup = meta.checkSetup(registry.app);
        if (setup) diagnostics.push(diagnostic('W_NOT_CONFIGURED', setup, { file: m.file, line: use.line, col: use.col }, { length: use.name.length, severity: 'warning' }));
      }
      const guards = r.guards.map((use) => resolveGuard(use.name, use.args, use.mode, callables, dataOf, registry));
      const chunk = offsets[i]! + r.chunk;
      let responses: ResponseMeta[] | null = null;
      routes.push({
        meta: r,
        file: m.file,
        chunk,
        middleware: chain,
        guards,
        responses: () => (responses ??= mergeResponses([...r.responses, ...calledResponses(chunk, callables, dataOf)])),
      });
    }
  });

  return { program: { chunks, natives, nativeNames, validate, prepare }, routes, diagnostics };
}

/** What the reference shows of one guard use: a plugin's meta, or what a guard_definition's body can answer. */
function resolveGuard(
  name: string,
  args: Literal[],
  mode: 'required' | 'optional',
  callables: ReadonlyMap<string, Callable>,
  dataOf: (chunk: number) => ChunkData,
  registry: PluginRegistry,
): GuardInfo {
  const own = callables.get(name);
  if (own && own.kind === 'guard') {
    const responses: ErrorResponseSpec[] = (own.meta.responses ?? []).map((r) => ({
      status: r.status,
      code: defaultErrorCode(r.status),
      description: `${r.source} on line ${r.line}`,
    }));
    // So may the fns it calls, however deep,
    for (const r of calledResponses(own.chunk, callables, dataOf)) responses.push({ status: r.status, code: defaultErrorCode(r.status), description: `${r.source} on line ${r.line}` });
    // and natives it calls (auth_user() answers 401).
    for (const ref of dataOf(own.chunk).refs) {
      for (const spec of (ref.kind === 'call' && registry.natives.get(ref.name)?.meta.responses) || []) responses.push(spec);
    }
    return { name, args, mode, source: 'app', origin: `${own.file}:${own.line}`, doc: own.meta.doc, responses: dedupe(responses) };
  }
  const plugin = registry.guards.get(name);
  const guard: GuardInfo = { name, args, mode, source: 'plugin', origin: plugin?.plugin ?? '', doc: plugin?.meta.doc ?? null, responses: [...(plugin?.meta.responses ?? [])] };
  if (plugin?.meta.security) guard.security = plugin.meta.security;
  // An optional guard never rejects.
  if (mode === 'optional') guard.responses = [];
  return guard;
}

/**
 * The responses of every `fn` the chunk calls, and of those they call: a walk over the call
 * graph that visits each chunk once, so recursion ends (the fixed point of a union is reached
 * when nothing new is visited).
 */
function calledResponses(chunk: number, callables: ReadonlyMap<string, Callable>, dataOf: (chunk: number) => ChunkData): ResponseMeta[] {
  const out: ResponseMeta[] = [];
  const seen = new Set<number>([chunk]);
  const pending = [chunk];
  while (pending.length > 0) {
    for (const ref of dataOf(pending.pop()!).refs) {
      if (ref.kind !== 'call') continue;
      const callee = callables.get(ref.name);
      if (callee === undefined || callee.kind !== 'fn' || seen.has(callee.chunk)) continue;
      seen.add(callee.chunk);
      pending.push(callee.chunk);
      out.push(...(callee.meta.responses ?? []));
    }
  }
  return out;
}

function dedupe(responses: ErrorResponseSpec[]): ErrorResponseSpec[] {
  const seen = new Map<string, ErrorResponseSpec>();
  for (const r of responses) if (!seen.has(`${r.status} ${r.code}`)) seen.set(`${r.status} ${r.code}`, r);
  return [...seen.values()];
}
