/**
 * The per-file bytecode cache in `app/.rvm/cache/`: one artefact per source file, at the
 * mirrored relative path plus `.rvmc`, and the app's link proof (`app.linked`). A cache may only
 * ever save work: a missing, stale, corrupt or foreign entry reads as null or false (the caller
 * recompiles or links eagerly), and a write that fails (read-only directory, full disk) is
 * reported by returning false, never by throwing. An entry that is not a regular file (a
 * directory, a FIFO, a symlink to a device) or is over its size cap is damaged: never read,
 * recompiled and written over.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, normalize, sep } from 'node:path';
import { decodeCachedModule, encodeModule } from './artefact.js';
import { FORMAT_VERSION, type CompiledModule } from './module.js';
import { readRegularFile } from '../regular-file.js';

/** The cache directory, relative to the app directory. */
export const CACHE_DIR = join('.rvm', 'cache');
/** Extension of a cached module artefact. */
export const CACHE_EXTENSION = '.rvmc';
/**
 * Largest cached artefact read: far above what one source file compiles to, and small enough
 * that a damaged or planted entry cannot make the process allocate without bound.
 */
export const MAX_ARTEFACT_BYTES = 64 * 1024 * 1024;
/** Largest link proof read: it holds one sha256 in hex. */
const MAX_LINK_PROOF_BYTES = 1024;

/** What a cached artefact must match to be used: any difference makes it stale. */
export interface CacheKey {
  /** sha256 (hex) of the current source text. */
  sourceHash: string;
  /** The running compiler version. */
  compiler: string;
  /** The current plugin set fingerprint. */
  plugins: string;
}

/**
 * Where the artefact of `relFile` (a path relative to the app, `/` or platform separators)
 * lives: `app/.rvm/cache/api/users.rvm.rvmc`. Throws RangeError for a path that would leave
 * the cache directory (absolute, or climbing with `..`).
 */
export function cachePath(appDir: string, relFile: string): string {
  const rel = normalize(relFile.split('/').join(sep));
  if (isAbsolute(rel) || rel === '..' || rel.startsWith(`..${sep}`) || rel === '.') {
    throw new RangeError(`cache: '${relFile}' is not a file inside the app`);
  }
  return join(appDir, CACHE_DIR, rel + CACHE_EXTENSION);
}

/** The cached module of `relFile` when it exists, decodes and matches `expect`; else null. */
export function readCached(appDir: string, relFile: string, expect: CacheKey): CompiledModule | null {
  try {
    const m = decodeCachedModule(readRegularFile(cachePath(appDir, relFile), MAX_ARTEFACT_BYTES), expect);
    return m !== null && m.file === relFile.split(sep).join('/') ? m : null;
  } catch {
    return null;
  }
}

/**
 * Stores `module` as the artefact of `relFile`: creates the directories, writes a temporary
 * file beside the target and renames it over, so a concurrent reader (another worker) sees
 * the old artefact or the new one, never half of one. Returns whether it was written.
 */
export function writeCached(appDir: string, relFile: string, module: CompiledModule): boolean {
  try {
    return writeAtomically(cachePath(appDir, relFile), encodeModule(module));
  } catch {
    return false;
  }
}

/** The link proof's file in the cache directory: not a module artefact's name (those end in `.rvm.rvmc`). */
const LINK_PROOF = 'app.linked';

/**
 * The key a link proof is for: the app's modules (each file with the sha256 of its source), the
 * artefact format, the compiler and the plugin set. Linking is a function of exactly these.
 */
export function linkKey(modules: readonly CompiledModule[], compiler: string, plugins: string): string {
  const hash = createHash('sha256').update(`${FORMAT_VERSION}\n${compiler}\n${plugins}\n`);
  for (const m of modules) hash.update(`${m.file}\0${m.header.sourceHash}\n`);
  return hash.digest('hex');
}

/** Whether the app with `key` linked without an error before (so it may link lazily). */
export function hasLinkProof(appDir: string, key: string): boolean {
  try {
    return readRegularFile(join(appDir, CACHE_DIR, LINK_PROOF), MAX_LINK_PROOF_BYTES).toString('utf8') === key;
  } catch {
    return false;
  }
}

/** Records that the app with `key` linked without an error; false when it could not be written. */
export function writeLinkProof(appDir: string, key: string): boolean {
  return writeAtomically(join(appDir, CACHE_DIR, LINK_PROOF), Buffer.from(key));
}

/** Writes `bytes` to a temporary file beside `target` and renames it over; never throws. */
function writeAtomically(target: string, bytes: Uint8Array): boolean {
  let temp: string | null = null;
  try {
    mkdirSync(dirname(target), { recursive: true });
    temp = `${target}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    writeFileSync(temp, bytes);
    renameSync(temp, target);
    return true;
  } catch {
    if (temp !== null) removeQuietly(temp);
    return false;
  }
}

function removeQuietly(file: string): void {
  try {
    rmSync(file, { force: true });
  } catch {
    // A leftover temporary file is harmless: it never has the cache extension.
  }
}
