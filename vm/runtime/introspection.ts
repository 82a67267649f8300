/**
 * What built-in endpoints (the API reference, the OpenAPI export) see of the running app: its
 * routes with their guards, fields and inferred responses, straight from the compiled metadata
 * and the plugins' validator and guard meta — the docs are what the server runs.
 */
import type { AppIntrospection, DecoratorInfo, DiagnosticInfo, FieldInfo, RouteInfo, TypeInfo } from '../host/introspection.js';
import type { AppSettings } from '../host/context.js';
import type { JsonSchema } from '../bytecode/module.js';
import { isLiteral } from '../lang.js';
import type { PluginRegistry } from '../host/registry.js';
import type { Diagnostic } from '../diagnostics.js';
import { fieldTypeSchema } from '../compiler/field-schema.js';
import type { RouteTarget } from './types.js';
import type { CompiledModule, FieldMeta } from '../bytecode/module.js';

/** Presence rules: they shape `required` and `default`, not a check with a message. */
const PRESENCE = new Set(['required', 'default']);

/** Merges decorator keywords into a field schema; a keyword set twice is kept both ways via allOf. */
function mergeSchema(base: JsonSchema, extra: JsonSchema): JsonSchema {
  const out: JsonSchema = { ...base };
  const clashes: JsonSchema = {};
  for (const [key, value] of Object.entries(extra)) {
    if (key in out && JSON.stringify(out[key]) !== JSON.stringify(value)) clashes[key] = value;
    else out[key] = value;
  }
  if (Object.keys(clashes).length > 0) out.allOf = [...((out.allOf as JsonSchema[] | undefined) ?? []), clashes];
  return out;
}

/** A field with its decorators explained: messages and JSON Schema keywords from the validators. */
export function fieldInfo(field: FieldMeta, registry: PluginRegistry): FieldInfo {
  let schema = fieldTypeSchema(field.type);
  const decorators: DecoratorInfo[] = field.decorators.map((d) => {
    const found = registry.validators.get(d.name);
    const name = found?.aliasOf ?? found?.name ?? d.name;
    const spec = found?.spec;
    // Validators take literals; only a @default may be a list or object, and it is its own keyword.
    const literals = d.args.every(isLiteral) ? d.args : null;
    let keywords: JsonSchema = (literals !== null ? spec?.schema?.(literals, field.type) : undefined) ?? {};
    if (name === 'default') keywords = { default: d.args[0] ?? null };
    schema = mergeSchema(schema, keywords);
    const message = spec && literals !== null && !PRESENCE.has(name) ? spec.message(literals, field.type) : null;
    return { name: d.name, args: d.args, message, schema: keywords };
  });
  if (field.doc !== null) schema = { ...schema, description: field.doc };
  return { name: field.name, type: field.type, optional: field.optional, required: field.required, doc: field.doc, line: field.line, decorators, schema };
}

/** The public view of one linked route. */
export function routeInfo(route: RouteTarget, registry: PluginRegistry): RouteInfo {
  const m = route.meta;
  return {
    method: m.method,
    path: m.path,
    openapiPath: m.openapiPath,
    params: m.params,
    file: route.file,
    line: m.line,
    doc: m.doc,
    guards: route.guards,
    body: m.body?.map((f) => fieldInfo(f, registry)) ?? null,
    query: m.query?.map((f) => fieldInfo(f, registry)) ?? null,
    responses: route.responses(),
    natives: route.natives(),
    middleware: route.middlewareInfo(),
  };
}

/** The public view of every `type` of the app's modules, sorted by name. */
export function typeInfos(modules: readonly CompiledModule[], registry: PluginRegistry): TypeInfo[] {
  const types = modules.flatMap((m) =>
    m.types.map((t): TypeInfo => ({ name: t.name, file: m.file, line: t.line, doc: t.doc, fields: t.fields.map((f) => fieldInfo(f, registry)) })),
  );
  return types.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** What the app hands introspection: its current routes, modules and registry, and its reload state. */
export interface IntrospectionSource {
  readonly settings: AppSettings;
  current(): { routes: readonly RouteTarget[]; registry: PluginRegistry; modules: readonly CompiledModule[] };
  lastErrors(): readonly Diagnostic[];
  /** Plugin files changed since the process loaded them, sorted. */
  restartNeeded(): readonly string[];
}

/** The app as built-in endpoints see it; route views are rebuilt once per reload. */
export class Introspection implements AppIntrospection {
  generation = 0;
  private cache: { generation: number; routes: RouteInfo[]; types: TypeInfo[] } | null = null;
  private readonly listeners = new Set<() => void>();

  constructor(private readonly source: IntrospectionSource) {}

  get settings(): AppSettings {
    return this.source.settings;
  }

  routes(): readonly RouteInfo[] {
    return this.views().routes;
  }

  types(): readonly TypeInfo[] {
    return this.views().types;
  }

  /** The route and type views of the current build, rebuilt once per reload. */
  private views(): { routes: RouteInfo[]; types: TypeInfo[] } {
    if (this.cache === null || this.cache.generation !== this.generation) {
      const { routes, registry, modules } = this.source.current();
      this.cache = { generation: this.generation, routes: routes.map((r) => routeInfo(r, registry)), types: typeInfos(modules, registry) };
    }
    return this.cache;
  }

  errors(): readonly DiagnosticInfo[] {
    return this.source.lastErrors();
  }

  restartNeeded(): readonly string[] {
    return this.source.restartNeeded();
  }

  onReload(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Called by the app after every reload attempt, good or failed, and when a restart becomes needed. */
  reloaded(): void {
    this.generation++;
    for (const listener of [...this.listeners]) listener();
  }
}
