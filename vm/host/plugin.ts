/** A plugin: its definition and the API its `setup` registers natives, guards, validators, endpoints and records with. */
import type { AppSettings } from './context.js';
import type { CheckedNativeFn, GuardFn, GuardMeta, NativeMeta, ParamSpec } from './natives.js';
import type { ValidatorSpec } from './validators.js';
import type { EndpointFn, EndpointMeta } from './introspection.js';
import type { RecordProvider, StoredRecords } from './records.js';

/** What `setup` receives. */
export interface PluginApi {
  /** The settings of the app the plugin is loaded into. */
  readonly app: AppSettings;
  /**
   * A native: the registry checks each argument against its declared parameter (type,
   * optional, rest) before `fn` runs, so `fn` receives the types `params` names.
   */
  native<const P extends readonly ParamSpec[]>(name: string, fn: CheckedNativeFn<P>, meta: Omit<NativeMeta, 'params'> & { params: P }): void;
  guard(name: string, fn: GuardFn, meta: GuardMeta): void;
  validator(name: string, spec: ValidatorSpec): void;
  /**
   * A built-in endpoint at `/_app/<path>` (e.g. `rest-api/openapi.json`). Built-ins skip user
   * middleware and set their own headers.
   */
  endpoint(path: string, fn: EndpointFn, meta: EndpointMeta): void;
  /** The record provider of the app (one per app: a second is `E_PLUGIN_CLASH`). */
  records(provider: RecordProvider): void;
  /**
   * One line `rvm run` prints at start under the app's URL, aligned with its own
   * (`  Database:      PostgreSQL 127.0.0.1:5432/app, pool 5 per worker`): what the plugin
   * uses that an operator should see. `label` is a capitalised word or two (at most 13
   * characters), `text` one line; never a secret (a password, a token). Callable in `setup` and
   * until the app serves (a record provider's `start`); the same plugin announcing a label again
   * replaces its line, another plugin's label is `E_PLUGIN_CLASH`.
   */
  announce(label: string, text: string): void;
  /**
   * Reads the app's stored records from another plugin (auth_user() merges the stored `User`).
   * The loader always gives it; optional so that hand-made APIs (test doubles) may leave it out.
   */
  readonly storedRecords?: StoredRecords;
}

export interface PluginDefinition {
  name: string;
  version: string;
  /** Names of plugins that must be loaded first. */
  dependencies?: string[];
  setup(rvm: PluginApi): void | Promise<void>;
}
