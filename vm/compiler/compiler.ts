/**
 * The compiler: one parsed file (AST) to a CompiledModule — a chunk of bytecode per route, fn,
 * guard_definition and middleware, plus the route metadata the runtime and the reference read.
 */
import { createHash } from 'node:crypto';
import type { Decl, FileNode, Pos, RouteDecl } from '../front/ast.js';
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
import type { CallableMeta, ChunkData, CompiledModule, FieldMeta, RouteMeta, TypeMeta } from '../bytecode/module.js';
import { ARTEFACT_MAGIC, FORMAT_VERSION } from '../bytecode/module.js';
import { parse, type BrokenDecl } from '../front/parser.js';
import { DIAG } from '../errors.js';

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
        module.routes.push(compileRoute(decl, reporter, topLevel, types, recordMethods, chunk));
        break;
      }
      case 'FnDecl':
      case 'GuardDef': {
        const kind = decl.kind === 'FnDecl' ? 'fn' : 'guard';
        const compiler = new ChunkCompiler(reporter, topLevel, kind, decl, chunk);
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
        const compiler = new ChunkCompiler(reporter, topLevel, 'middleware', decl, chunk);
        compiler.statements(decl.body.body);
        if (module.middleware === null) {
          module.middleware = chunk(compiler.finish('middleware', 0));
          const { responses } = inferCallable(decl.body.body, { types, body: null, query: null, recordMethods });
          module.middlewareMeta = { doc: decl.doc, line: decl.line, responses, ...credentialsRead(decl.body) };
        }
        break;
      }
      case 'TypeDecl':
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

/** One route: its chunk (guard calls, READ_BODY, VALIDATE, handler) and its metadata. */
function compileRoute(
  decl: RouteDecl,
  reporter: Reporter,
  topLevel: ReadonlyMap<string, TopLevelKind>,
  types: ReadonlyMap<string, FieldMeta[]>,
  recordMethods: RecordMethods,
  chunk: (data: ChunkData) => number,
): RouteMeta {
  const guards = guardMetas(decl.guards, reporter);
  const body = decl.validate ? fieldMetas(decl.validate.fields, reporter) : null;
  const query = decl.query ? fieldMetas(decl.query.fields, reporter) : null;
  const compiler = new ChunkCompiler(reporter, topLevel, 'route', decl, chunk);
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
