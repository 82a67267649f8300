/**
 * The throwaway copy of an app that `rvm fuzz` runs, so that fuzzing never writes the app's data:
 * the app's files, without its `.rvm/` folder (the SQLite database `.rvm/data.sqlite`, caches),
 * `node_modules` or `.git`, copied to a fresh folder under `<app>/.rvm/`, with neither an
 * environment nor a copied `rvm.config.json` that names a database (`DATABASE_URL`,
 * `SQLITE_PATH`, `database.url`, `database.sqlite`). The records plugin then opens a new SQLite file inside the copy, and
 * the copy is removed after the run. The copy lives inside the app folder so that its plugins
 * resolve packages as the originals do (from the `node_modules` of the app and its parents).
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SQLITE_PATH_ENV } from '../stdlib/records/database.js';
import { CONFIG_FILE } from '../vm/runtime/config.js';

/** The app's own data and build folder: never copied, and where the copy is made. */
export const DATA_FOLDER = '.rvm';
/** Prefix of the copy's folder name under `<app>/.rvm/`. */
export const SANDBOX_PREFIX = 'fuzz-';
/** The environment variable that points the records plugin at a PostgreSQL database. */
export const DATABASE_URL_ENV = 'DATABASE_URL';
/** Top-level entries the copy leaves out: the app's data, and installed packages (reached from the copy by resolution). */
const NOT_COPIED: ReadonlySet<string> = new Set([DATA_FOLDER, 'node_modules', '.git']);

/** A copy of an app to fuzz: its folder, the environment to run it with, and its removal. */
export interface FuzzSandbox {
  readonly dir: string;
  /** The given environment without DATABASE_URL or SQLITE_PATH. */
  readonly env: Record<string, string | undefined>;
  /** Removes the copy (and `<app>/.rvm/` when the copy made it and it is left empty). */
  remove(): void;
}

/** Copies the app in `appDir` into a new sandbox; `env` is the environment the app would have run with. */
export function makeSandbox(appDir: string, env: Readonly<Record<string, string | undefined>> = process.env): FuzzSandbox {
  const data = join(appDir, DATA_FOLDER);
  let madeData = false;
  try {
    readdirSync(data);
  } catch {
    mkdirSync(data, { recursive: true });
    madeData = true;
  }
  const dir = mkdtempSync(join(data, SANDBOX_PREFIX));
  // Entry by entry: the copy sits inside the app, and a folder cannot be copied into itself.
  for (const name of readdirSync(appDir)) {
    if (!NOT_COPIED.has(name)) cpSync(join(appDir, name), join(dir, name), { recursive: true });
  }
  forgetDatabase(join(dir, CONFIG_FILE));
  const sandboxEnv: Record<string, string | undefined> = { ...env };
  delete sandboxEnv[DATABASE_URL_ENV];
  delete sandboxEnv[SQLITE_PATH_ENV];
  return {
    dir,
    env: sandboxEnv,
    remove() {
      rmSync(dir, { recursive: true, force: true });
      if (madeData) {
        try {
          rmdirSync(data);
        } catch {
          // Something else wrote there meanwhile (a server started from the app): keep it.
        }
      }
    },
  };
}

/**
 * Drops `database.url` and `database.sqlite` from the copy's config, so its records go to the
 * copy's own file. A config that is not a JSON object is left as it is: the app fails to load
 * from the copy as it would from the original, touching no database.
 */
function forgetDatabase(file: string): void {
  if (!existsSync(file)) return;
  let config: unknown;
  try {
    config = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return;
  }
  const database = (config as { database?: unknown } | null)?.database;
  if (database === null || typeof database !== 'object' || Array.isArray(database)) return;
  delete (database as Record<string, unknown>).url;
  delete (database as Record<string, unknown>).sqlite;
  writeFileSync(file, JSON.stringify(config, null, 2));
}
