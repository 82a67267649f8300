/**
 * The plugin registry: runs each plugin's `setup` in dependency order and collects what it
 * registers (natives, guards, validators) into three separate namespaces, refusing clashes and
 * malformed definitions with a PluginLoadError that names the plugin at fault. Each native is
 * registered behind the checks of its declared parameters (plugins/checked-native.ts).
 */
import { createHash } from 'node:crypto';
import { FIELD_TYPES } from '../lang.js';
import { RECORD_RESULTS, RESULT_TYPES, recordResultSchema, resultTypeSchema } from '../compiler/field-schema.js';
import type { AppSettings } from './context.js';
import type { EndpointFn, EndpointMeta } from './introspection.js';
import type { ErrorResponseSpec, GuardFn, GuardMeta, NativeFn, NativeMeta, ParamSpec, SecuritySchemeSpec } from './natives.js';
import type { PluginApi, PluginDefinition } from './plugin.js';
import type { RecordProvider, RecordType } from './records.js';
import type { ValidatorSpec } from './validators.js';
import { checkedNative } from './checked-native.js';
import { PLUGIN, type PluginCode } from '../errors.js';

/** A plugin that could not be loaded; `code` is one of the `E_PLUGIN_*` codes in spec/errors.md. */
export class PluginLoadError extends Error {
  constructor(
    message: string,
    readonly code: PluginCode,
  ) {
    super(message);
    this.name = 'PluginLoadError';
  }
}

export interface RegisteredNative {
  name: string;
  fn: NativeFn;
  meta: NativeMeta;
  plugin: string;
}

export interface RegisteredGuard {
  name: string;
  fn: GuardFn;
  meta: GuardMeta;
  plugin: string;
}

/** A validator; an alias (`min_length`) shares the spec of the validator it spells (`aliasOf`). */
export interface RegisteredValidator {
  name: string;
  spec: ValidatorSpec;
  plugin: string;
  aliasOf?: string;
}

/** A record method as registered: its meta frozen, and the native that calls it for one type. */
export interface RegisteredRecordMethod {
  params: ParamSpec[];
  doc: string;
  returns?: string;
  responses?: ErrorResponseSpec[];
  /** The native `Type.method` binds to: arguments checked against `params`, then `fn(ctx, type, ...args)`. */
  bind(type: RecordType): NativeFn;
}

/** The record provider of an app and the plugin that registered it. */
export interface RegisteredRecords {
  provider: RecordProvider;
  /** Its methods by name. */
  methods: ReadonlyMap<string, RegisteredRecordMethod>;
  /** Its own decorators (`hidden`, `unique`, `index`). */
  decorators: ReadonlySet<string>;
  plugin: string;
  /** The app's types by name, as the provider was last told them (`declare`); read by `storedRecords`. */
  declared: ReadonlyMap<string, RecordType>;
}

/** Record methods are called `Type.method`: one lower-case word. */
const RECORD_METHOD_NAME = /^[a-z][a-z0-9_]*$/;
/** The steps of the record statements a provider must answer. */
const RECORD_STEPS = ['save', 'delete', 'begin', 'commit', 'rollback'] as const;

/** Natives and guards: lower-case words, dots separating a namespace (`response.ok`). */
const CALLABLE_NAME = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/;
/** Validators are written `@name`; camelCase is allowed because the seed spells `@minLength`. */
const VALIDATOR_NAME = /^[a-zA-Z][a-zA-Z0-9_]*$/;
/** Parameter names show up in the reference and in arity errors: identifiers only. */
const PARAM_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const PARAM_TYPES: ReadonlySet<string> = new Set(['text', 'int', 'number', 'bool', 'list', 'object', 'lambda', 'any']);
const FIELD_TYPE_SET: ReadonlySet<string> = new Set(FIELD_TYPES);

/** Everything the plugins registered, frozen once loading has finished. */
export interface RegisteredEndpoint {
  path: string;
  fn: EndpointFn;
  meta: EndpointMeta;
  plugin: string;
}

/** What an endpoint path under `/_app/` may look like: lower-case segments, no `..`. */
const ENDPOINT_PATH = /^[a-z0-9][a-z0-9._-]*(\/[a-z0-9][a-z0-9._-]*)*$/;

/** What an announce label may be: a capitalised word or two that, with its colon, fits `rvm run`'s 15-column label field. */
const ANNOUNCE_LABEL = /^[A-Z][A-Za-z ]{0,11}[A-Za-z]$|^[A-Z]$/;
/** The longest announce text: one terminal line after the label. */
export const MAX_ANNOUNCE_TEXT = 200;

/** A line `rvm run` prints at start (`PluginApi.announce`). */
export interface Announcement {
  readonly label: string;
  readonly text: string;
  readonly plugin: string;
}

export class PluginRegistry {
  readonly natives: ReadonlyMap<string, RegisteredNative>;
  readonly guards: ReadonlyMap<string, RegisteredGuard>;
  /** Validators and their aliases; aliases carry `aliasOf`. */
  readonly validators: ReadonlyMap<string, RegisteredValidator>;
  /** The loaded plugins, in the order their setup ran. */
  readonly plugins: readonly { name: string; version: string }[];
  /** sha256 hex of the sorted `name@version` list, joined by newlines: independent of load order. */
  readonly fingerprint: string;

  /** Built-in endpoints by path under `/_app/`. */
  readonly endpoints: ReadonlyMap<string, RegisteredEndpoint>;
  /** The record provider, when a plugin registered one. */
  readonly records: RegisteredRecords | null;
  /** The start lines the plugins announced, by label in the order first announced (it grows until the app serves). */
  readonly announcements: ReadonlyMap<string, Announcement>;

  constructor(
    /** The settings the plugins were set up with (guards check their setup against them). */
    readonly app: AppSettings,
    natives: Map<string, RegisteredNative>,
    guards: Map<string, RegisteredGuard>,
    validators: Map<string, RegisteredValidator>,
    plugins: { name: string; version: string }[],
    endpoints: Map<string, RegisteredEndpoint> = new Map(),
    records: RegisteredRecords | null = null,
    announcements: Map<string, Announcement> = new Map(),
  ) {
    this.announcements = announcements;
    this.endpoints = endpoints;
    this.records = records;
    this.natives = natives;
    this.guards = guards;
    this.validators = validators;
    this.plugins = Object.freeze(plugins.map((p) => Object.freeze({ name: p.name, version: p.version })));
    this.fingerprint = pluginFingerprint(plugins);
  }
}

/** The fingerprint of a plugin set: sha256 hex of the sorted `name@version` lines. */
export function pluginFingerprint(plugins: readonly { name: string; version: string }[]): string {
  const lines = plugins.map((p) => `${p.name}@${p.version}`).sort();
  return createHash('sha256').update(lines.join('\n')).digest('hex');
}

/**
 * Runs each plugin's setup, dependencies first (the given order is kept where dependencies allow),
 * and returns the registry of everything they registered.
 */
export async function loadPlugins(definitions: PluginDefinition[], app: AppSettings): Promise<PluginRegistry> {
  for (const definition of definitions) checkDefinition(definition);
  const ordered = orderByDependencies(definitions);
  const natives = new Map<string, RegisteredNative>();
  const guards = new Map<string, RegisteredGuard>();
  const validators = new Map<string, RegisteredValidator>();
  const endpoints = new Map<string, RegisteredEndpoint>();
  const tables: Tables = { natives, guards, validators, endpoints, records: null, announcements: new Map() };
  for (const plugin of ordered) {
    await runSetup(plugin, app, tables);
  }
  return new PluginRegistry(app, natives, guards, validators, ordered, endpoints, tables.records, tables.announcements);
}

interface Tables {
  natives: Map<string, RegisteredNative>;
  guards: Map<string, RegisteredGuard>;
  validators: Map<string, RegisteredValidator>;
  endpoints: Map<string, RegisteredEndpoint>;
  records: RegisteredRecords | null;
  announcements: Map<string, Announcement>;
}

async function runSetup(plugin: PluginDefinition, app: AppSettings, tables: Tables): Promise<void> {
  let open = true;
  // A plugin that catches our error inside setup must still fail to load: remember the first one.
  let failure: PluginLoadError | null = null;
  const refuse = (error: PluginLoadError): never => {
    failure ??= error;
    throw error;
  };
  const ensureOpen = (what: string): void => {
    if (!open) refuse(invalid(plugin.name, `${what} was registered after setup finished`));
  };
  const api: PluginApi = {
    app,
    // Looked up at each call: the provider may register after this plugin, and types change on reload.
    storedRecords: {
      find(ctx, type, id) {
        const records = tables.records;
        const declared = records?.declared.get(type);
        const find = records?.provider.methods.find;
        if (declared === undefined || find === undefined) return null;
        return find.fn(ctx, declared, id);
      },
      declares(type) {
        const records = tables.records;
        return records?.declared.has(type) === true && records.provider.methods.find !== undefined;
      },
    },
    native(name, fn, meta) {
      ensureOpen(`native '${name}'`);
      const problem = checkCallable('native', name, fn) ?? checkNativeMeta(meta);
      if (problem) refuse(invalid(plugin.name, `native '${String(name)}': ${problem}`));
      const previous = tables.natives.get(name);
      if (previous) refuse(clash('native', name, previous.plugin, plugin.name));
      const frozen = freezeMeta(meta);
      tables.natives.set(name, { name, fn: checkedNative(name, fn as NativeFn, frozen.params), meta: frozen, plugin: plugin.name });
    },
    guard(name, fn, meta) {
      ensureOpen(`guard '${name}'`);
      const problem = checkCallable('guard', name, fn) ?? checkGuardMeta(meta);
      if (problem) refuse(invalid(plugin.name, `guard '${String(name)}': ${problem}`));
      const previous = tables.guards.get(name);
      if (previous) refuse(clash('guard', name, previous.plugin, plugin.name));
      tables.guards.set(name, { name, fn, meta: freezeMeta(meta), plugin: plugin.name });
    },
    validator(name, spec) {
      ensureOpen(`validator '${name}'`);
      const problem = checkValidator(name, spec);
      if (problem) refuse(invalid(plugin.name, `validator '${String(name)}': ${problem}`));
      const names = [name, ...(spec.aliases ?? [])];
      if (new Set(names).size !== names.length) refuse(invalid(plugin.name, `validator '${name}' lists an alias twice or itself`));
      for (const each of names) {
        const previous = tables.validators.get(each);
        if (previous) refuse(clash('validator', each, previous.plugin, plugin.name));
      }
      tables.validators.set(name, { name, spec, plugin: plugin.name });
      for (const alias of spec.aliases ?? []) tables.validators.set(alias, { name: alias, spec, plugin: plugin.name, aliasOf: name });
    },
    endpoint(path, fn, meta) {
      ensureOpen(`endpoint '${path}'`);
      if (typeof path !== 'string' || !ENDPOINT_PATH.test(path) || path.split('/').some((s) => /^\.+$/.test(s))) {
        refuse(invalid(plugin.name, `endpoint '${String(path)}': the path must be lower-case segments under /_app/, like 'rest-api/openapi.json'`));
      }
      if (typeof fn !== 'function' || typeof meta?.doc !== 'string') refuse(invalid(plugin.name, `endpoint '${path}': needs a function and meta with a doc`));
      const previous = tables.endpoints.get(path);
      if (previous) refuse(clash('endpoint', path, previous.plugin, plugin.name));
      tables.endpoints.set(path, { path, fn, meta: Object.freeze({ ...meta }), plugin: plugin.name });
    },
    records(provider) {
      ensureOpen('the record provider');
      const problem = checkRecordProvider(provider);
      if (problem) refuse(invalid(plugin.name, `record provider: ${problem}`));
      if (tables.records) refuse(clash('record provider', 'records', tables.records.plugin, plugin.name));
      const methods = new Map<string, RegisteredRecordMethod>();
      for (const [name, method] of Object.entries(provider.methods)) {
        const meta = freezeMeta({ params: method.params, doc: method.doc, returns: method.returns, ...(method.responses && { responses: method.responses }) });
        const fn = method.fn;
        const bind = (type: RecordType): NativeFn => checkedNative(`${type.name}.${name}`, (ctx, ...args) => fn(ctx, type, ...args), meta.params);
        methods.set(name, Object.freeze({ params: meta.params, doc: meta.doc, returns: meta.returns, responses: meta.responses, bind }));
      }
      tables.records = { provider, methods, decorators: new Set(provider.decorators), plugin: plugin.name, declared: new Map() };
    },
    // Not closed with setup: a record provider announces its database when it opens it, at start.
    announce(label, text) {
      if (typeof label !== 'string' || !ANNOUNCE_LABEL.test(label)) {
        refuse(invalid(plugin.name, `announce label '${String(label)}': a capitalised word or two of letters, at most 13 characters`));
      }
      if (typeof text !== 'string' || text === '' || text.length > MAX_ANNOUNCE_TEXT || /[\u0000-\u001f\u007f]/.test(text)) {
        refuse(invalid(plugin.name, `announce '${label}': the text must be one line of 1 to ${MAX_ANNOUNCE_TEXT} characters`));
      }
      const previous = tables.announcements.get(label);
      if (previous && previous.plugin !== plugin.name) refuse(clash('announce label', label, previous.plugin, plugin.name));
      tables.announcements.set(label, Object.freeze({ label, text, plugin: plugin.name }));
    },
  };
  try {
    await plugin.setup(api);
  } catch (error) {
    if (error instanceof PluginLoadError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new PluginLoadError(`plugin '${plugin.name}' failed in setup: ${message}`, PLUGIN.E_PLUGIN_SETUP);
  } finally {
    open = false;
  }
  if (failure) throw failure;
}

function invalid(plugin: string, message: string): PluginLoadError {
  return new PluginLoadError(`plugin '${plugin}' is invalid: ${message}`, PLUGIN.E_PLUGIN_INVALID);
}

function clash(kind: string, name: string, first: string, second: string): PluginLoadError {
  const by = first === second ? `twice by '${first}'` : `by both '${first}' and '${second}'`;
  return new PluginLoadError(`${kind} '${name}' is registered ${by}`, PLUGIN.E_PLUGIN_CLASH);
}

/** Checks the shape of a definition (plain JS callers get no type checking). */
function checkDefinition(definition: PluginDefinition): void {
  if (definition === null || typeof definition !== 'object') {
    throw new PluginLoadError(`a plugin definition must be an object, got ${definition === null ? 'null' : typeof definition}`, PLUGIN.E_PLUGIN_INVALID);
  }
  const name: unknown = definition.name;
  if (typeof name !== 'string' || name.trim() === '') {
    throw new PluginLoadError('a plugin definition has no name', PLUGIN.E_PLUGIN_INVALID);
  }
  if (typeof definition.version !== 'string' || definition.version.trim() === '') throw invalid(name, 'no version');
  if (typeof definition.setup !== 'function') throw invalid(name, 'no setup function');
  const deps: unknown = definition.dependencies;
  if (deps !== undefined && (!Array.isArray(deps) || deps.some((d) => typeof d !== 'string'))) {
    throw invalid(name, 'dependencies must be a list of plugin names');
  }
}

/**
 * Orders plugins so that each comes after its dependencies, otherwise keeping the given order
 * (a depth-first walk in list order). A missing dependency or a cycle is a load error.
 */
function orderByDependencies(definitions: PluginDefinition[]): PluginDefinition[] {
  const byName = new Map<string, PluginDefinition>();
  for (const d of definitions) {
    if (byName.has(d.name)) throw new PluginLoadError(`plugin '${d.name}' is listed twice`, PLUGIN.E_PLUGIN_DUPLICATE);
    byName.set(d.name, d);
  }
  const done = new Set<string>();
  const visiting: string[] = [];
  const ordered: PluginDefinition[] = [];
  const visit = (plugin: PluginDefinition): void => {
    if (done.has(plugin.name)) return;
    const at = visiting.indexOf(plugin.name);
    if (at >= 0) {
      const cycle = [...visiting.slice(at), plugin.name].map((n) => `'${n}'`).join(' -> ');
      throw new PluginLoadError(`plugin dependencies form a cycle: ${cycle}`, PLUGIN.E_PLUGIN_CYCLE);
    }
    visiting.push(plugin.name);
    for (const dep of plugin.dependencies ?? []) {
      const target = byName.get(dep);
      if (!target) throw new PluginLoadError(`plugin '${plugin.name}' depends on '${dep}', which is not loaded`, PLUGIN.E_PLUGIN_MISSING_DEPENDENCY);
      visit(target);
    }
    visiting.pop();
    done.add(plugin.name);
    ordered.push(plugin);
  };
  for (const d of definitions) visit(d);
  return ordered;
}

function checkCallable(kind: string, name: unknown, fn: unknown): string | null {
  if (typeof name !== 'string' || !CALLABLE_NAME.test(name)) {
    return `a ${kind} name must be lower-case words separated by dots (${CALLABLE_NAME.source})`;
  }
  if (typeof fn !== 'function') return `the ${kind} is not a function`;
  return null;
}

function checkNativeMeta(meta: Omit<NativeMeta, 'params'> & { params: readonly ParamSpec[] }): string | null {
  if (meta === null || typeof meta !== 'object') return 'meta is missing';
  const problem = checkParams(meta.params) ?? checkDoc(meta.doc);
  if (problem) return problem;
  if (meta.returns !== undefined && (typeof meta.returns !== 'string' || resultTypeSchema(meta.returns) === null)) {
    return `meta.returns must be a result type (${RESULT_TYPES.join(', ')}), with a trailing ? when it may be null (int?)`;
  }
  if (meta.scope !== undefined && meta.scope !== 'middleware') return `meta.scope must be 'middleware' when given`;
  if (meta.issues !== undefined && (!Array.isArray(meta.issues) || meta.issues.some((n) => typeof n !== 'string')))
    return 'meta.issues must be a list of scheme names';
  return checkSecurity(meta.security);
}

function checkGuardMeta(meta: GuardMeta): string | null {
  if (meta === null || typeof meta !== 'object') return 'meta is missing';
  const problem = checkParams(meta.params) ?? checkDoc(meta.doc);
  if (problem) return problem;
  if (meta.responses !== undefined) {
    if (!Array.isArray(meta.responses)) return 'meta.responses must be a list';
    for (const r of meta.responses) {
      if (r === null || typeof r !== 'object' || !Number.isInteger(r.status) || r.status < 100 || r.status > 599) {
        return 'each of meta.responses needs an HTTP status';
      }
      if (typeof r.code !== 'string' || typeof r.description !== 'string') return 'each of meta.responses needs a code and a description';
    }
  }
  return checkSecurity(meta.security);
}

/** A guard's or native's `security`: one scheme or a list, each with a name and a scheme object. */
function checkSecurity(security: SecuritySchemeSpec | readonly SecuritySchemeSpec[] | undefined): string | null {
  if (security === undefined) return null;
  const schemes = Array.isArray(security) ? security : [security as SecuritySchemeSpec];
  const wellFormed = schemes.length > 0 && schemes.every((s) => typeof s?.name === 'string' && typeof s.scheme === 'object' && s.scheme !== null);
  return wellFormed ? null : 'meta.security needs a name and a scheme';
}

function checkValidator(name: unknown, spec: ValidatorSpec): string | null {
  if (typeof name !== 'string' || !VALIDATOR_NAME.test(name)) return `a validator name must match ${VALIDATOR_NAME.source}`;
  if (spec === null || typeof spec !== 'object') return 'spec is missing';
  if (!Array.isArray(spec.types) || spec.types.length === 0 || spec.types.some((t) => !FIELD_TYPE_SET.has(t))) {
    return `spec.types must list field types (${FIELD_TYPES.join(', ')})`;
  }
  const problem = checkParams(spec.params) ?? checkDoc(spec.doc);
  if (problem) return problem;
  if (typeof spec.message !== 'function' || typeof spec.build !== 'function') return 'spec needs message() and build()';
  if (spec.schema !== undefined && typeof spec.schema !== 'function') return 'spec.schema must be a function';
  if (spec.aliases !== undefined) {
    if (!Array.isArray(spec.aliases)) return 'spec.aliases must be a list';
    const bad = spec.aliases.find((a) => typeof a !== 'string' || !VALIDATOR_NAME.test(a));
    if (bad !== undefined) return `alias '${String(bad)}' is not a valid validator name`;
  }
  return null;
}

/** A provider's shape: named, documented methods with valid parameters, its decorators, and every statement step. */
function checkRecordProvider(provider: RecordProvider): string | null {
  if (provider === null || typeof provider !== 'object') return 'the provider is missing';
  if (provider.methods === null || typeof provider.methods !== 'object') return 'methods is missing';
  for (const [name, method] of Object.entries(provider.methods)) {
    if (!RECORD_METHOD_NAME.test(name)) return `method '${name}': a name must be one lower-case word (${RECORD_METHOD_NAME.source})`;
    if (method === null || typeof method !== 'object' || typeof method.fn !== 'function') return `method '${name}' has no fn`;
    const problem = checkParams(method.params) ?? checkDoc(method.doc) ?? checkRecordResult(method.returns);
    if (problem) return `method '${name}': ${problem}`;
  }
  if (!Array.isArray(provider.decorators) || provider.decorators.some((d) => typeof d !== 'string' || !VALIDATOR_NAME.test(d))) {
    return `decorators must be a list of names (${VALIDATOR_NAME.source})`;
  }
  const missing = RECORD_STEPS.find((step) => typeof provider[step] !== 'function');
  if (missing) return `${missing}() is missing`;
  if (provider.checkCall !== undefined && typeof provider.checkCall !== 'function') return 'checkCall must be a function';
  if (provider.declare !== undefined && typeof provider.declare !== 'function') return 'declare must be a function';
  return null;
}

/** A record method's `returns`, read by the compiler's inference: a record result or a result type. */
function checkRecordResult(returns: unknown): string | null {
  if (returns === undefined || (typeof returns === 'string' && recordResultSchema(returns, 'T', null) !== null)) return null;
  return `returns must be ${RECORD_RESULTS.join(', ')} or a result type (${RESULT_TYPES.join(', ')}, with a trailing ? when it may be null)`;
}

function checkDoc(doc: unknown): string | null {
  return typeof doc === 'string' && doc.trim() !== '' ? null : 'meta.doc is missing';
}

/** Parameters: named, typed when typed, optional ones after required ones, a rest one last. */
function checkParams(params: readonly ParamSpec[]): string | null {
  if (!Array.isArray(params)) return 'meta.params is missing (use [] for none)';
  const seen = new Set<string>();
  let optionalSeen = false;
  for (let i = 0; i < params.length; i++) {
    const p = params[i];
    if (p === null || typeof p !== 'object' || typeof p.name !== 'string' || !PARAM_NAME.test(p.name)) {
      return `parameter ${i + 1} has no valid name`;
    }
    if (seen.has(p.name)) return `parameter '${p.name}' is declared twice`;
    seen.add(p.name);
    if (p.type !== undefined && !PARAM_TYPES.has(p.type)) return `parameter '${p.name}' has unknown type '${String(p.type)}'`;
    if (p.selfChecked !== undefined && typeof p.selfChecked !== 'boolean') return `parameter '${p.name}': selfChecked must be true or false`;
    if (p.rest) {
      if (i !== params.length - 1) return `rest parameter '${p.name}' must be the last one`;
    } else if (p.optional) {
      optionalSeen = true;
    } else if (optionalSeen) {
      return `required parameter '${p.name}' follows an optional one`;
    }
  }
  return null;
}

/** A private copy of the meta, so a plugin cannot change a signature after it was checked. */
function freezeMeta<M extends { params: readonly ParamSpec[] }>(meta: M): M & { params: ParamSpec[] } {
  return Object.freeze({ ...meta, params: Object.freeze(meta.params.map((p) => Object.freeze({ ...p }))) as ParamSpec[] });
}
