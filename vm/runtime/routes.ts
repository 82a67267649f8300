/**
 * Route assembly: from the linked program to the routes the router stores. Each route gets its
 * middleware chain (the `_middleware.rvm` of every folder from the app root down to its own),
 * its guards resolved for the reference, and what it can answer; guard uses are checked against
 * the plugins here (arguments, setup).
 */
import type { ChunkData, CompiledModule, JsonSchema, MiddlewareMeta, ResponseMeta } from '../bytecode/module.js';
import { CALL_KEYWORD, mergeResponses } from '../compiler/infer.js';
import { RETURNS_TAG } from '../compiler/compile-meta.js';
import { RECORD_TYPE_KEYWORD, resultTypeSchema, walkSchema } from '../compiler/field-schema.js';
import { diagnostic, didYouMean, type Diagnostic } from '../diagnostics.js';
import { DIAG, HTTP } from '../errors.js';
import { arityMismatch } from '../arity.js';
import type { LinkedCallable, LinkResult } from '../interp/link.js';
import type { Literal } from '../lang.js';
import type { CalledNativeInfo, GuardInfo, MiddlewareInfo } from '../host/introspection.js';
import type { ErrorResponseSpec, NativeMeta, SecuritySchemeSpec } from '../host/natives.js';
import type { PluginRegistry } from '../host/registry.js';
import { defaultErrorCode } from './response.js';
import type { RouteTarget } from './types.js';

/**
 * The scheme of a middleware that answers 401 and reads Authorization: the auth plugin's name for
 * a bearer token, so a route behind both asks for one token, not two.
 */
const MIDDLEWARE_BEARER = 'bearerAuth';

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

/**
 * Every route of `modules`, in file order, and the problems of their guard uses and `@returns`
 * tags. `proven`: the same app linked cleanly before (the cache's link proof), so its tags named
 * types that exist then as now, and their responses need not be unpacked to check them again.
 */
export function assembleRoutes(
  modules: readonly CompiledModule[],
  linked: LinkResult,
  registry: PluginRegistry,
  proven = false,
): { routes: RouteTarget[]; rootMiddleware: number[]; diagnostics: Diagnostic[] } {
  const { offsets, callables, dataOf } = linked;
  const diagnostics: Diagnostic[] = [];
  // Middleware chains, outermost first.
  const middlewareOf = new Map<string, number>();
  // What the reference shows of each, worked out once for all the routes under it.
  const infoOf = new Map<string, () => MiddlewareInfo>();
  modules.forEach((m, i) => {
    const folder = middlewareFolder(m.file);
    if (folder === null || m.middleware === null) return;
    const chunk = offsets[i]! + m.middleware;
    middlewareOf.set(folder, chunk);
    let info: MiddlewareInfo | null = null;
    infoOf.set(folder, () => (info ??= middlewareInfo(m.file, m.middlewareMeta, chunk, callables, dataOf, registry)));
  });
  const routes: RouteTarget[] = [];
  // A `@returns` tag may name a type of another file: only now are all the app's types known.
  const typeNames = new Set(modules.flatMap((m) => m.types.map((t) => t.name)));
  // A guard the app has not configured is warned about once, at its first use.
  const setupChecked = new Set<string>();
  // What an app guard and everything it calls can answer, walked once per guard, not per use.
  const reaches = new Map<LinkedCallable, GuardReach>();
  const reachOf = (own: LinkedCallable): GuardReach => {
    let reach = reaches.get(own);
    if (reach === undefined) reaches.set(own, (reach = guardReach(own, callables, dataOf, registry)));
    return reach;
  };
  modules.forEach((m, i) => {
    const folders = folderChain(m.file).filter((f) => middlewareOf.has(f));
    const chain = folders.map((f) => middlewareOf.get(f)!);
    const middlewareInfos = (): MiddlewareInfo[] => folders.flatMap((f) => infoOf.get(f)?.() ?? []);
    for (const r of m.routes) {
      for (const use of r.guards) {
        const meta = registry.guards.get(use.name)?.meta;
        // Arguments of the wrong count are E_ARITY's alone, and arguments that are not constants
        // E_NOT_CONSTANT's: checking them too would report the use twice.
        const checkable = meta !== undefined && !use.unfolded && arityMismatch(meta.params, use.args.length) === null;
        const problem = checkable ? meta.checkArgs?.(use.args) : null;
        if (problem) diagnostics.push(diagnostic(DIAG.E_GUARD_ARGS, problem, { file: m.file, line: use.line, col: use.col }, { length: use.name.length }));
        if (meta?.checkSetup === undefined || setupChecked.has(use.name)) continue;
        setupChecked.add(use.name);
        const setup = meta.checkSetup(registry.app);
        if (setup)
          diagnostics.push(
            diagnostic(DIAG.W_NOT_CONFIGURED, setup, { file: m.file, line: use.line, col: use.col }, { length: use.name.length, severity: 'warning' }),
          );
      }
      for (const declared of proven ? [] : r.responses) {
        if (declared.source !== RETURNS_TAG) continue;
        for (const name of recordTypesIn(declared.schema)) {
          if (typeNames.has(name)) continue;
          const hint = didYouMean(name, [...typeNames]);
          diagnostics.push(
            diagnostic(
              DIAG.E_RETURNS_TAG,
              `'${name}' is no type of this app, nor a result type`,
              { file: m.file, line: declared.line, col: 1 },
              { hint: hint ?? `declare it with 'type ${name} { … }', or write a result type (text, int, object, …)` },
            ),
          );
        }
      }
      const guards = r.guards.map((use) => resolveGuard(use.name, use.args, use.mode, callables, registry, reachOf));
      const chunk = offsets[i]! + r.chunk;
      let responses: ResponseMeta[] | null = null;
      let natives: CalledNativeInfo[] | null = null;
      routes.push({
        meta: r,
        file: m.file,
        chunk,
        middleware: chain,
        guards,
        responses: () => (responses ??= routeResponses(r.responses, calledResponses(chunk, callables, dataOf), callables, registry)),
        natives: () => (natives ??= calledNatives(chunk, callables, dataOf, registry)),
        middlewareInfo: middlewareInfos,
      });
    }
  });
  const root = middlewareOf.get('');
  return { routes, rootMiddleware: root === undefined ? [] : [root], diagnostics };
}

/** What the reference shows of one guard use: a plugin's meta, or what a guard_definition's body can answer. */
/** What an app guard can answer, with the fns and natives it calls however deep, and the schemes they ask for. */
interface GuardReach {
  responses: ErrorResponseSpec[];
  security: SecuritySchemeSpec[];
}

function guardReach(
  own: LinkedCallable,
  callables: ReadonlyMap<string, LinkedCallable>,
  dataOf: (chunk: number) => ChunkData,
  registry: PluginRegistry,
): GuardReach {
  const responses: ErrorResponseSpec[] = (own.meta.responses ?? []).map((r) => ({
    status: r.status,
    code: defaultErrorCode(r.status),
    description: `${r.source} on line ${r.line}`,
  }));
  // So may the fns it calls, however deep,
  for (const r of calledResponses(own.chunk, callables, dataOf))
    responses.push({ status: r.status, code: defaultErrorCode(r.status), description: `${r.source} on line ${r.line}` });
  // and the natives it or they call: auth_user() answers 401, and makes the guard require its schemes.
  const security = new Map<string, SecuritySchemeSpec>();
  for (const native of calledNatives(own.chunk, callables, dataOf, registry)) {
    responses.push(...native.responses);
    for (const scheme of native.security) security.set(scheme.name, scheme);
  }
  return { responses: dedupe(responses), security: [...security.values()] };
}

function resolveGuard(
  name: string,
  args: Literal[],
  mode: 'required' | 'optional',
  callables: ReadonlyMap<string, LinkedCallable>,
  registry: PluginRegistry,
  reachOf: (own: LinkedCallable) => GuardReach,
): GuardInfo {
  const own = callables.get(name);
  if (own && own.kind === 'guard') {
    const reach = reachOf(own);
    const guard: GuardInfo = { name, args, mode, source: 'app', origin: `${own.file}:${own.line}`, doc: own.meta.doc, responses: [...reach.responses] };
    if (reach.security.length > 0) guard.security = [...reach.security];
    if (own.meta.state !== undefined) guard.state = [...own.meta.state];
    return guard;
  }
  const plugin = registry.guards.get(name);
  const guard: GuardInfo = {
    name,
    args,
    mode,
    source: 'plugin',
    origin: plugin?.plugin ?? '',
    doc: plugin?.meta.doc ?? null,
    responses: [...(plugin?.meta.responses ?? [])],
  };
  const security = plugin?.meta.security;
  if (security !== undefined) guard.security = Array.isArray(security) ? [...security] : [security];
  // An optional guard never rejects.
  if (mode === 'optional') guard.responses = [];
  return guard;
}

/**
 * What the reference shows of a `middleware { }` block: its answers and its fns', the natives it
 * calls, and the schemes it asks for. A block that answers 401 asks for what it reads: the
 * Authorization header is a bearer token, another header or a cookie a key of that name.
 */
function middlewareInfo(
  file: string,
  meta: MiddlewareMeta | undefined,
  chunk: number,
  callables: ReadonlyMap<string, LinkedCallable>,
  dataOf: (chunk: number) => ChunkData,
  registry: PluginRegistry,
): MiddlewareInfo {
  const responses = routeResponses(meta?.responses ?? [], calledResponses(chunk, callables, dataOf), callables, registry);
  const natives = calledNatives(chunk, callables, dataOf, registry);
  const security = new Map<string, SecuritySchemeSpec>();
  for (const native of natives) for (const scheme of native.security) security.set(scheme.name, scheme);
  if (meta !== undefined && responses.some((r) => r.status === HTTP.unauthorized.status)) {
    const where = `${file} answers 401 without it${meta.doc === null ? '.' : `: ${meta.doc}`}`;
    for (const header of meta.headers) {
      if (header === 'authorization')
        security.set(MIDDLEWARE_BEARER, {
          name: MIDDLEWARE_BEARER,
          scheme: { type: 'http', scheme: 'bearer', description: `A token sent as Authorization: Bearer <token>; ${where}` },
        });
      else
        security.set(header, { name: header, scheme: { type: 'apiKey', in: 'header', name: header, description: `Sent as the ${header} header; ${where}` } });
    }
    for (const cookie of meta.cookies)
      security.set(`cookie.${cookie}`, {
        name: `cookie.${cookie}`,
        scheme: { type: 'apiKey', in: 'cookie', name: cookie, description: `Sent as the ${cookie} cookie; ${where}` },
      });
  }
  return { file, line: meta?.line ?? 0, doc: meta?.doc ?? null, responses, natives, security: [...security.values()] };
}

/**
 * The refs of `chunk` and of every `fn` it calls, and those they call, each chunk once (so
 * recursion ends), with the `fn` each came from (null for `chunk` itself). One walk serves the
 * route's reference entries: the responses of the fns and the natives it reaches.
 */
function reachable(
  chunk: number,
  callables: ReadonlyMap<string, LinkedCallable>,
  dataOf: (chunk: number) => ChunkData,
  visit: (ref: ChunkData['refs'][number], fn: LinkedCallable | undefined) => void,
): void {
  const seen = new Set<number>([chunk]);
  const pending = [chunk];
  while (pending.length > 0) {
    for (const ref of dataOf(pending.pop()!).refs) {
      if (ref.kind !== 'call') continue;
      const callee = callables.get(ref.name);
      if (callee !== undefined && callee.kind === 'fn') {
        if (seen.has(callee.chunk)) continue;
        seen.add(callee.chunk);
        pending.push(callee.chunk);
      }
      visit(ref, callee);
    }
  }
}

/**
 * The natives `chunk` calls, itself or through its fns, that declare error responses, headers,
 * security schemes or credentials they issue (`auth_google_callback()`: its coded errors and
 * `Set-Cookie`), each once.
 */
function calledNatives(
  chunk: number,
  callables: ReadonlyMap<string, LinkedCallable>,
  dataOf: (chunk: number) => ChunkData,
  registry: PluginRegistry,
): CalledNativeInfo[] {
  const out = new Map<string, CalledNativeInfo>();
  reachable(chunk, callables, dataOf, (ref, callee) => {
    if (callee !== undefined) return;
    const meta = registry.natives.get(ref.name)?.meta ?? recordMethodOf(ref.name, registry);
    if (
      meta === undefined ||
      out.has(ref.name) ||
      (meta.responses === undefined && meta.headers === undefined && meta.security === undefined && meta.issues === undefined)
    )
      return;
    out.set(ref.name, {
      name: ref.name,
      responses: [...(meta.responses ?? [])],
      headers: [...(meta.headers ?? [])],
      security: [...(meta.security ?? [])],
      issues: [...(meta.issues ?? [])],
    });
  });
  return [...out.values()];
}

/** The record type names marked in `schema` (RECORD_TYPE_KEYWORD), each once. */
function recordTypesIn(schema: JsonSchema): string[] {
  const names = new Set<string>();
  walkSchema(schema, (node) => {
    const mark = node[RECORD_TYPE_KEYWORD];
    if (typeof mark === 'string') names.add(mark);
  });
  return [...names];
}

/** The record method a `Type.method` call names (`User.create`: the provider's `create`), if any. */
function recordMethodOf(name: string, registry: PluginRegistry): Pick<NativeMeta, 'responses' | 'headers' | 'security' | 'issues'> | undefined {
  const dot = name.indexOf('.');
  return dot > 0 ? registry.records?.methods.get(name.slice(dot + 1)) : undefined;
}

/** The responses of every `fn` the chunk calls, and of those they call. */
function calledResponses(chunk: number, callables: ReadonlyMap<string, LinkedCallable>, dataOf: (chunk: number) => ChunkData): ResponseMeta[] {
  const out: ResponseMeta[] = [];
  reachable(chunk, callables, dataOf, (_ref, callee) => {
    if (callee !== undefined && callee.kind === 'fn') out.push(...(callee.meta.responses ?? []));
  });
  return out;
}

/**
 * A route's responses: its own and its fns', each call's mark resolved (resolveCalls); a status
 * the route declares with `@returns` is that declaration alone.
 */
function routeResponses(
  own: readonly ResponseMeta[],
  called: readonly ResponseMeta[],
  callables: ReadonlyMap<string, LinkedCallable>,
  registry: PluginRegistry,
): ResponseMeta[] {
  const declared = new Set(own.filter((r) => r.source === RETURNS_TAG).map((r) => r.status));
  const kept = [...own, ...called].filter((r) => !declared.has(r.status) || r.source === RETURNS_TAG);
  return mergeResponses(kept.map((r) => ({ ...r, schema: resolveCalls(r.schema, callables, registry) })));
}

/**
 * `schema` with each call's mark (`{"x-rvm-call": name}`, left by inference) replaced: by what
 * the `fn` of that name returns, its own marks resolved in turn (a fn met again while resolving,
 * recursion, is `{}`), or by the schema of the type the native declares it returns (`int?`); `{}`
 * when neither says. A copy: the compiled schemas are shared.
 */
export function resolveCalls(
  schema: JsonSchema,
  callables: ReadonlyMap<string, LinkedCallable>,
  registry: PluginRegistry,
  resolving: ReadonlySet<string> = new Set(),
): JsonSchema {
  const resolve = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(resolve);
    if (value === null || typeof value !== 'object') return value;
    const node = value as JsonSchema;
    const name = node[CALL_KEYWORD];
    if (typeof name === 'string') return returnSchema(name);
    const copy: JsonSchema = {};
    for (const key of Object.keys(node)) copy[key] = resolve(node[key]);
    return copy;
  };
  const returnSchema = (name: string): JsonSchema => {
    const fn = callables.get(name);
    if (fn !== undefined) {
      if (fn.kind !== 'fn' || fn.meta.returns === undefined || resolving.has(name)) return {};
      return resolveCalls(fn.meta.returns, callables, registry, new Set([...resolving, name]));
    }
    const declared = registry.natives.get(name)?.meta.returns;
    return (declared !== undefined && resultTypeSchema(declared)) || {};
  };
  return resolve(schema) as JsonSchema;
}

function dedupe(responses: ErrorResponseSpec[]): ErrorResponseSpec[] {
  const seen = new Map<string, ErrorResponseSpec>();
  for (const r of responses) if (!seen.has(`${r.status} ${r.code}`)) seen.set(`${r.status} ${r.code}`, r);
  return [...seen.values()];
}
