/**
 * The compiler: one parsed file (AST) to a CompiledModule — a chunk of bytecode per route, fn,
 * guard_definition and middleware, plus the route metadata the runtime and the reference read.
 */
import { createHash } from 'node:crypto';
import type { Decl, FileNode, Literal, Pos, RouteDecl } from '../front/ast.js';
import { ChunkCompiler, type TopLevelKind } from './chunk-compiler.js';
import {
  Reporter,
  credentialsRead,
  declaredResponses,
  stateFieldsSet,
  docWithoutTags,
  fieldMetas,
  guardMetas,
  openapiPath,
  pathParams,
} from './compile-meta.js';
import type { Diagnostic } from '../diagnostics.js';
import { inferCallable, inferResponses, mergeResponses, type RecordMethods } from './infer.js';
import type { CallableMeta, ChunkData, CompiledModule, ConstMeta, FieldMeta, RouteMeta, TypeMeta } from '../bytecode/module.js';
import { ARTEFACT_MAGIC, FORMAT_VERSION } from '../bytecode/module.js';
import { parse, type BrokenDecl } from '../front/parser.js';
import { DIAG } from '../errors.js';
import { fold } from './fold.js';
import { isConstName } from '../lang.js';

export { MAX_ARGS } from './chunk-compiler.js';
export { MAX_CONSTANTS } from './chunk-emitter.js';
export { MAX_LOCALS } from './scope.js';

/** What the header records about the compiling environment. */
export interface CompileOptions {
  compilerVersion: string;
  pluginsFingerprint: string;
  /**
   * The record provider's methods (what each declares it returns): how a `T.find(...)` result is
   * inferred. Without them, or for a method that declares nothing, the result is unknown (`{}`).
   */
  recordMethods?: RecordMethods;
}

const NO_RECORD_METHODS: RecordMethods = new Map();

/** The result of compiling: module is null when any error diagnostic was produced. */
export interface CompileResult {
  module: CompiledModule | null;
  diagnostics: Diagnostic[];
  /**
   * What did compile, even when something did not: the declarations free of syntax errors. It is
   * linked and its validation planned only to find more diagnostics in the same run; it never runs.
   */
  partial: CompiledModule;
  /** Names of fns and guard_definitions whose declaration has a syntax error: their uses are not unknown. */
  unparsed: string[];
}

/** sha256 (hex) of a source text, as recorded in the artefact header. */
export function sourceHash(source: string): string {
  return createHash('sha256').update(source, 'utf8').digest('hex');
}

/**
 * Compiles one parsed file; the `broken` declarations (with syntax errors) are left out, but the
 * names they declare count as declared. module is null when any error diagnostic was produced.
 */
export function compileModule(ast: FileNode, source: string, options: CompileOptions, broken: readonly BrokenDecl[] = []): CompileResult {
  const reporter = new Reporter(ast.file, source);
  const skipped = new Set(broken.map((b) => b.decl));
  const { kinds: topLevel, duplicates } = collectTopLevel(
    ast.decls.filter((d) => !skipped.has(d)),
    reporter,
  );
  // A second declaration of a name is reported once, here: it is not compiled to clash again at link.
  const decls = ast.decls.filter((d) => !skipped.has(d) && !duplicates.has(d));
  // Broken ones are not compared for duplicates: their remains would only add noise.
  for (const b of broken) if (b.kind !== null && b.name !== null && !topLevel.has(b.name)) topLevel.set(b.name, b.kind);
  const consts = foldConsts(decls, reporter);
  const constValues: ReadonlyMap<string, Literal> = new Map(consts.map((c) => [c.name, c.value]));
  const types = new Map<string, FieldMeta[]>();
  const recordMethods = options.recordMethods ?? NO_RECORD_METHODS;
  const module: CompiledModule = {
    header: {
      magic: ARTEFACT_MAGIC,
      format: FORMAT_VERSION,
      compiler: options.compilerVersion,
      sourceHash: sourceHash(source),
      plugins: options.pluginsFingerprint,
    },
    file: ast.file,
    chunks: [],
    routes: [],
    functions: [],
    guards: [],
    types: [],
    middleware: null,
  };
  if (consts.length > 0) module.consts = consts;
  // Types first: routes infer record schemas from types declared anywhere in the file.
  for (const decl of decls) {
    if (decl.kind !== 'TypeDecl') continue;
    const fields = fieldMetas(decl.fields, reporter);
    types.set(decl.name, fields);
    const meta: TypeMeta = { name: decl.name, fields, doc: decl.doc, line: decl.line, col: decl.col };
    module.types.push(meta);
  }
  const chunk = (data: ChunkData): number => module.chunks.push(data) - 1;
  for (const decl of decls) {
    switch (decl.kind) {
      case 'Route': {
        module.routes.push(compileRoute(decl, reporter, topLevel, constValues, types, recordMethods, chunk));
        break;
      }
      case 'FnDecl':
      case 'GuardDef': {
        const kind = decl.kind === 'FnDecl' ? 'fn' : 'guard';
        const compiler = new ChunkCompiler(reporter, topLevel, kind, decl, chunk, constValues);
        compiler.params(decl.params);
        compiler.statements(decl.body.body);
        const index = chunk(compiler.finish(`${kind} ${decl.name}`, decl.params.length));
        const meta: CallableMeta = { name: decl.name, chunk: index, params: decl.params.map((p) => p.name), doc: decl.doc, line: decl.line, col: decl.col };
        // A fn's answers belong to every route and guard that calls it (link.ts follows the calls),
        // and what it returns to the responses that answer its result.
        const inferred = inferCallable(decl.body.body, { types, body: null, query: null, recordMethods });
        meta.responses = inferred.responses;
        if (kind === 'fn') meta.returns = inferred.returns;
        else {
          const handsOn = stateFieldsSet(decl.body.body);
          if (handsOn.length > 0) meta.state = handsOn;
        }
        (kind === 'fn' ? module.functions : module.guards).push(meta);
        break;
      }
      case 'Middleware': {
        const compiler = new ChunkCompiler(reporter, topLevel, 'middleware', decl, chunk, constValues);
        compiler.statements(decl.body.body);
        if (module.middleware === null) {
          module.middleware = chunk(compiler.finish('middleware', 0));
          const { responses } = inferCallable(decl.body.body, { types, body: null, query: null, recordMethods });
          module.middlewareMeta = { doc: decl.doc, line: decl.line, responses, ...credentialsRead(decl.body) };
        }
        break;
      }
      case 'TypeDecl':
      case 'Const':
        break;
    }
  }
  const unparsed = broken.flatMap((b) => (b.name !== null && (b.kind === 'fn' || b.kind === 'guard') ? [b.name] : []));
  const failed = reporter.hasErrors() || broken.length > 0;
  return { module: failed ? null : module, diagnostics: reporter.diagnostics, partial: module, unparsed };
}

/**
 * parse + compileModule; parse diagnostics come first. The declarations that parsed are compiled
 * even when others did not, so one run reports both kinds of error; module is then null.
 */
export function compileSource(file: string, source: string, options: CompileOptions): CompileResult {
  const parsed = parse(file, source);
  const compiled = compileModule(parsed.ast, source, options, parsed.broken);
  const failed = compiled.module === null || parsed.diagnostics.some((d) => d.severity === 'error');
  return { ...compiled, module: failed ? null : compiled.module, diagnostics: [...parsed.diagnostics, ...compiled.diagnostics] };
}

/** The names of fns, guard_definitions and types; a duplicate is reported naming both lines, and returned. */
function collectTopLevel(decls: readonly Decl[], reporter: Reporter): { kinds: Map<string, TopLevelKind>; duplicates: Set<Decl> } {
  const kinds = new Map<string, TopLevelKind>();
  const where = new Map<string, Pos>();
  const duplicates = new Set<Decl>();
  for (const decl of decls) {
    if (decl.kind !== 'FnDecl' && decl.kind !== 'GuardDef' && decl.kind !== 'TypeDecl') continue;
    const earlier = where.get(decl.name);
    if (earlier) {
      reporter.error(DIAG.E_DUPLICATE_DECL, `'${decl.name}' is declared on line ${earlier.line} and again on line ${decl.line}`, decl);
      duplicates.add(decl);
      continue;
    }
    where.set(decl.name, decl);
    kinds.set(decl.name, decl.kind === 'FnDecl' ? 'fn' : decl.kind === 'GuardDef' ? 'guard' : 'type');
  }
  return { kinds, duplicates };
}

/**
 * The file's constants, folded in source order (a value may use the constants above it); a name
 * not in capitals, a second declaration or a value that is not constant is reported.
 */
function foldConsts(decls: readonly Decl[], reporter: Reporter): ConstMeta[] {
  const known = new Map<string, ConstMeta>();
  const lookup = (name: string) => {
    const c = known.get(name);
    return c === undefined ? null : { value: c.value };
  };
  for (const decl of decls) {
    if (decl.kind !== 'Const') continue;
    const length = decl.name.length;
    if (!isConstName(decl.name)) {
      reporter.error(DIAG.E_CONST, `a constant is named in capitals, not '${decl.name}'`, decl, {
        length,
        hint: `write 'const ${decl.name.toUpperCase()} = …'`,
      });
      continue;
    }
    const earlier = known.get(decl.name);
    if (earlier) {
      reporter.error(DIAG.E_DUPLICATE_DECL, `'${decl.name}' is declared on line ${earlier.line} and again on line ${decl.line}`, decl, { length });
      continue;
    }
    const folded = fold(decl.value, lookup);
    if (folded === null) {
      reporter.error(DIAG.E_NOT_CONSTANT, `the value of '${decl.name}' is not a constant`, decl.value, {
        hint: 'a constant is a number, text, bool or null made of literals, operators and the constants above it; compute other values in a fn',
      });
    }
    // Declared even when its value is refused (the module then never runs), so its uses add no error.
    known.set(decl.name, { name: decl.name, value: folded?.value ?? null, line: decl.line, col: decl.col });
  }
  return [...known.values()];
}

/** One route: its chunk (guard calls, READ_BODY, VALIDATE, handler) and its metadata. */
function compileRoute(
  decl: RouteDecl,
  reporter: Reporter,
  topLevel: ReadonlyMap<string, TopLevelKind>,
  consts: ReadonlyMap<string, Literal>,
  types: ReadonlyMap<string, FieldMeta[]>,
  recordMethods: RecordMethods,
  chunk: (data: ChunkData) => number,
): RouteMeta {
  const guards = guardMetas(decl.guards, reporter);
  const body = decl.validate ? fieldMetas(decl.validate.fields, reporter) : null;
  const query = decl.query ? fieldMetas(decl.query.fields, reporter) : null;
  const compiler = new ChunkCompiler(reporter, topLevel, 'route', decl, chunk, consts);
  for (const guard of guards) {
    compiler.guardCall({ name: guard.name, line: guard.line, col: guard.col, mode: guard.mode }, guard.args, guard);
  }
  // spec/language.md §7.3: a body is read only for a request its guards let through.
  compiler.readBody(decl);
  if (decl.validate) compiler.validate(0, decl.validate);
  if (decl.query) compiler.validate(1, decl.query);
  compiler.statements(decl.body);
  const index = chunk(compiler.finish(`route ${decl.method} ${decl.path}`, 0));
  // A status declared with `@returns` is the declaration alone, whatever inference saw.
  const declared = declaredResponses(decl.docLines, types, reporter);
  const inferred = inferResponses(decl, { types, body, query, recordMethods }).filter((r) => !declared.some((d) => d.status === r.status));
  return {
    method: decl.method,
    path: decl.path,
    openapiPath: openapiPath(decl.segments),
    segments: decl.segments,
    params: pathParams(decl.segments),
    chunk: index,
    guards,
    body,
    query,
    responses: mergeResponses([...inferred, ...declared]),
    doc: docWithoutTags(decl.docLines),
    line: decl.line,
    col: decl.col,
  };
}
