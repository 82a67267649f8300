/**
 * Deploy bundles (`rvm compile app/ -o app.rvmb`): every module of an app plus its config in
 * one file that `rvm run app.rvmb` serves without the sources. Same envelope as an artefact
 * (magic · format · digest · header · body) with BUNDLE_MAGIC; the body holds the config and
 * each module as a complete artefact, so every module is validated exactly as a cached one,
 * and a record of the plugins the app was compiled against, which the server loads again.
 * A bundle that doesn't read back is refused: there are no sources to recompile from.
 */
import { writeFileSync } from 'node:fs';
import { decodeEnvelope, decodeModule, encodeEnvelope, encodeModule } from './artefact.js';
import { ArtefactError } from './codec.js';
import { jsonData } from './verify.js';
import { BUNDLE_MAGIC, type CompiledModule } from './module.js';
import { UnreadableFileError, readRegularFile } from '../regular-file.js';
import { ARTEFACT } from '../errors.js';
import { COMPILER_VERSION } from '../lang.js';

/** Largest bundle read: every module of an app with room to spare, still safe to hold in memory at once. */
export const MAX_BUNDLE_BYTES = 256 * 1024 * 1024;

/**
 * One plugin of the app's `rvm.config.json` as a bundle records it: which plugin it must be
 * (name and version of the definition compiled against) and where the server loads it from.
 */
export interface BundlePlugin {
  /** The spec as `rvm.config.json` lists it (`./plugins/slugs.js`, `rvm-plugin-x`). */
  spec: string;
  name: string;
  version: string;
  /**
   * Where to load it: a path relative to the bundle's folder (`./…`, `../…`, `/` separators) or
   * absolute as the config wrote it, else a package name resolved from the bundle's folder.
   */
  from: string;
}

/** What a bundle holds. */
export interface Bundle {
  modules: CompiledModule[];
  /** The app's rvm.config.json as written, or null when it has none. */
  config: Record<string, unknown> | null;
  /** The plugins the config lists, in its order. */
  plugins: BundlePlugin[];
}

/** A bundle as read back, with its creation time (ISO-8601 UTC). */
export interface LoadedBundle extends Bundle {
  createdAt: string;
  /** Version of the compiler that wrote it. */
  compiler: string;
}

/** Encodes a bundle. `compiler` is the writing rvm's version, `createdAt` defaults to now. */
export function encodeBundle(bundle: Bundle, compiler: string, createdAt = new Date().toISOString()): Uint8Array {
  const header = { compiler, createdAt, modules: bundle.modules.length };
  const body = {
    config: bundle.config,
    plugins: bundle.plugins.map(({ spec, name, version, from }) => ({ spec, name, version, from })),
    modules: bundle.modules.map(encodeModule),
  };
  return encodeEnvelope(BUNDLE_MAGIC, header, body);
}

/** Decodes and validates a bundle; throws only ArtefactError (its message names `file`). */
export function decodeBundle(bytes: Uint8Array, file: string): LoadedBundle {
  const refuse = (message: string): never => {
    throw new ArtefactError(ARTEFACT.E_ARTEFACT_CORRUPT, `damaged bundle: ${message}; rebuild it with 'rvm compile'`, file);
  };
  let decoded: { header: unknown; body: unknown };
  try {
    decoded = decodeEnvelope(bytes, BUNDLE_MAGIC, 'bundle');
  } catch (e) {
    const code = e instanceof ArtefactError ? e.code : ARTEFACT.E_ARTEFACT_CORRUPT;
    const message = e instanceof Error ? e.message : String(e);
    throw new ArtefactError(code, code === ARTEFACT.E_ARTEFACT_FOREIGN ? message : `${message}; rebuild it with 'rvm compile'`, file);
  }
  const header = decoded.header as Record<string, unknown> | null;
  const body = decoded.body as Record<string, unknown> | null;
  if (!isMap(header) || typeof header.compiler !== 'string' || typeof header.createdAt !== 'string') return refuse('bad header');
  if (!isMap(body) || !Array.isArray(body.modules) || body.modules.length !== header.modules) return refuse('bad module list');
  let config: Record<string, unknown> | null = null;
  if (body.config !== null) {
    try {
      config = jsonData(body.config, 'config') as Record<string, unknown>;
    } catch {
      return refuse('bad config');
    }
    if (!isMap(config)) return refuse('bad config');
  }
  const plugins = readPluginRecord(body.plugins, config, header.compiler, file, refuse);
  const modules = body.modules.map((bytes: unknown, i: number) => {
    try {
      return decodeModule(bytes as Uint8Array);
    } catch (e) {
      return refuse(`module ${i + 1}: ${e instanceof Error ? e.message : String(e)}`);
    }
  });
  return { modules, config, plugins, createdAt: header.createdAt, compiler: header.compiler };
}

/**
 * The plugin record of a bundle body. A bundle written before bundles recorded their plugins has
 * none: it still serves when its config lists no plugins, and is refused (E_ARTEFACT_VERSION)
 * when it does, since nothing says which plugins its calls were compiled against.
 */
function readPluginRecord(
  record: unknown,
  config: Record<string, unknown> | null,
  compiler: string,
  file: string,
  refuse: (message: string) => never,
): BundlePlugin[] {
  if (record === undefined) {
    const listed = config?.plugins;
    if (!Array.isArray(listed) || listed.length === 0) return [];
    throw new ArtefactError(
      'E_ARTEFACT_VERSION',
      `bundle written by rvm ${compiler} lists plugins in its config but has no record of them (written before bundles carried their plugins); rebuild it with 'rvm compile'`,
      file,
    );
  }
  if (!Array.isArray(record)) return refuse('bad plugin list');
  return record.map((entry: unknown, i: number) => {
    if (!isMap(entry)) return refuse(`bad plugin ${i + 1}`);
    const { spec, name, version, from } = entry;
    if (typeof spec !== 'string' || typeof name !== 'string' || typeof version !== 'string' || typeof from !== 'string' || from === '') {
      return refuse(`bad plugin ${i + 1}`);
    }
    return { spec, name, version, from };
  });
}

/** Writes a bundle file; an I/O failure is an ArtefactError E_ARTEFACT_UNREADABLE naming it. */
export function writeBundle(file: string, bundle: Bundle, compiler = COMPILER_VERSION): void {
  const bytes = encodeBundle(bundle, compiler);
  try {
    writeFileSync(file, bytes);
  } catch (e) {
    throw new ArtefactError(ARTEFACT.E_ARTEFACT_UNREADABLE, `cannot write bundle: ${ioReason(e)}`, file);
  }
}

/** Reads and validates a bundle file; refuses a missing, damaged, foreign or other-format one, and one that is not a regular file or is over MAX_BUNDLE_BYTES. */
export function readBundle(file: string): LoadedBundle {
  let bytes: Uint8Array;
  try {
    bytes = readRegularFile(file, MAX_BUNDLE_BYTES);
  } catch (e) {
    throw new ArtefactError(ARTEFACT.E_ARTEFACT_UNREADABLE, `cannot read bundle: ${ioReason(e)}`, file);
  }
  return decodeBundle(bytes, file);
}

function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;
}

function ioReason(e: unknown): string {
  if (e instanceof UnreadableFileError) return e.message;
  const code = (e as NodeJS.ErrnoException | null)?.code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'is a directory';
  return e instanceof Error ? e.message : String(e);
}
